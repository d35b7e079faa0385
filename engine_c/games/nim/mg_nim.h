/* mg_nim.h: multi-action Nim, the registry's smallest game (README.md beside this file).
 * A quick game for bot authors and for the generic tests: several actions a turn, no
 * chance, nothing hidden. */
#ifndef MG_NIM_H
#define MG_NIM_H

#include <stdint.h>

#include "mg_game.h"

#define NM_MAX_PILES 8
#define NM_MAX_PILE 15
#define NM_MAX_AP 8
#define NM_MAX_ACTIONS (NM_MAX_PILES * NM_MAX_PILE + 1)
#define NM_WIN_VALUE 1.0 /* evaluate() of a won game */

/* Action codes: type in bits 0-3, pile in bits 4-7, count in bits 8-11. */
enum { NM_END_TURN = 0, NM_TAKE = 1 };
#define NM_ACTION(type, pile, count) ((mg_action)((type) | (pile) << 4 | (count) << 8))
#define NM_TYPE(a) ((int)((a) & 0xF))
#define NM_PILE(a) ((int)(((a) >> 4) & 0xF))
#define NM_COUNT(a) ((int)(((a) >> 8) & 0xF))

/* Detail codes of refused actions (mg_game_vt.errstr gives their text). */
#define NM_ERR_NO_PILE (MG_ERR_ILLEGAL | 1 << 8)
#define NM_ERR_TOO_MANY (MG_ERR_ILLEGAL | 2 << 8)
#define NM_ERR_PILE_USED (MG_ERR_ILLEGAL | 3 << 8)
#define NM_ERR_NO_AP (MG_ERR_ILLEGAL | 4 << 8)

typedef struct nm_config {
    int npiles;
    int piles[NM_MAX_PILES];
    int ap;         /* actions per turn, 1..NM_MAX_AP */
    int misere;     /* 1: taking the last object loses */
    int turn_limit; /* a draw when turn `turn_limit` ends */
} nm_config;

/* A state, and an observation (observer >= 0): nothing is hidden, so they are the same. */
typedef struct nm_state {
    uint8_t pile[NM_MAX_PILES];
    uint8_t npiles;
    uint8_t taken;       /* piles taken from this turn, one bit each */
    uint8_t ap;          /* actions left this turn */
    uint8_t ap_per_turn;
    uint8_t current;     /* player to act, 0 or 1 */
    uint8_t terminal;
    int8_t winner;       /* 0, 1, -1 for a draw; -1 while the game goes on */
    int8_t observer;     /* -1 for a full state */
    uint8_t misere;
    uint8_t pad;
    int16_t turn;        /* from 1 */
    int16_t turn_limit;
} nm_state;

extern const mg_game_vt mg_nim_vt;

#endif
