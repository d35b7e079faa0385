/* mg_heroes.h: Hero Academy (Council team) rules, per ../shared/spec/heroes.md. */
#ifndef MG_HEROES_H
#define MG_HEROES_H

#include <stdint.h>

#include "mg_game.h"

/* ---- Sizes -------------------------------------------------------------------------- */
#define HR_MAX_W 9
#define HR_MAX_H 5
#define HR_MAX_SQ (HR_MAX_W * HR_MAX_H)
#define HR_NCARDS 11   /* card kinds 0..10 (the reference's CRYSTAL card never exists) */
#define HR_HAND_SIZE 6
#define HR_MAX_ACTIONS 1024 /* 13 units x 44 targets + cards + end_turn < 1024 */
#define HR_WIN_VALUE 60000.0 /* evaluate() of a won game (the reference's winVal) */

/* ---- Cards, in the reference's index order (spec §3.1) ------------------------------- */
enum {
    HR_KNIGHT = 0, HR_ARCHER, HR_CLERIC, HR_WIZARD, HR_NINJA,
    HR_INFERNO, HR_POTION, HR_RUNEMETAL, HR_SCROLL, HR_DRAGONSCALE, HR_SHINING_HELM
};
/* Unit kinds on the board: the unit card index, or HR_CRYSTAL. */
#define HR_CRYSTAL 11
#define HR_IS_UNIT_CARD(c) ((c) <= HR_NINJA)
#define HR_IS_ITEM_CARD(c) ((c) >= HR_POTION)

/* Equipment bits (a unit holds at most one of each; a potion is never kept). */
#define HR_EQ_DRAGONSCALE 1
#define HR_EQ_RUNEMETAL 2
#define HR_EQ_SHINING_HELM 4
#define HR_EQ_SCROLL 8

/* Square types (spec §2.1). */
enum { HR_SQ_NONE = 0, HR_SQ_DEPLOY1, HR_SQ_DEPLOY2, HR_SQ_DEFENSE, HR_SQ_ASSAULT, HR_SQ_POWER };

/* Maps and deck compositions. */
enum { HR_MAP_A = 0, HR_MAP_A_SMALL, HR_MAP_A_TINY, HR_NMAPS };
enum { HR_DECK_STANDARD = 0, HR_DECK_SMALL, HR_DECK_TINY, HR_NDECKS };
/* Draw modes: the reference's seeded deterministic rule, or true random draws. */
enum { HR_DRAW_SEEDED = 0, HR_DRAW_RANDOM = 1 };

/* ---- Actions ---------------------------------------------------------------------------
 * bits 0-3 type, 4-7 card, 8-11 from x, 12-15 from y, 16-19 to x, 20-23 to y. */
enum {
    HR_A_END_TURN = 0, HR_A_DEPLOY, HR_A_EQUIP, HR_A_SPELL, HR_A_MOVE, HR_A_ATTACK,
    HR_A_HEAL, HR_A_TELEPORT, HR_A_SWAP_CARD, HR_A_NTYPES
};
#define HR_ACTION(type, card, fx, fy, tx, ty)                                              \
    ((mg_action)(type) | ((mg_action)(card) << 4) | ((mg_action)(fx) << 8) |              \
     ((mg_action)(fy) << 12) | ((mg_action)(tx) << 16) | ((mg_action)(ty) << 20))
#define HR_A_TYPE(a) ((int)((a)&0xf))
#define HR_A_CARD(a) ((int)(((a) >> 4) & 0xf))
#define HR_A_FX(a) ((int)(((a) >> 8) & 0xf))
#define HR_A_FY(a) ((int)(((a) >> 12) & 0xf))
#define HR_A_TX(a) ((int)(((a) >> 16) & 0xf))
#define HR_A_TY(a) ((int)(((a) >> 20) & 0xf))

/* ---- Configuration ------------------------------------------------------------------- */
typedef struct hr_config {
    int map;        /* HR_MAP_* */
    int deck;       /* HR_DECK_* */
    int ap;         /* action points per turn, 1..25 (default 5) */
    int start_ap;   /* AP of player 1's first turn (default 3 for ap 5, else max(1, ap-1)) */
    int turn_limit; /* end_turn at turn >= limit ends the game as a draw (default 100) */
    int draws;      /* HR_DRAW_SEEDED or HR_DRAW_RANDOM */
} hr_config;

/* ---- State -------------------------------------------------------------------------------
 * Fixed-size and pointer-free; clone with memcpy. Squares are indexed s = x*h + y so that
 * index order is the reference's scan order (x outer, y inner). */
typedef struct hr_unit {
    int16_t hp;    /* hit points; 0 = knocked out (crystals are removed instead) */
    uint8_t kind;  /* HR_KNIGHT..HR_NINJA or HR_CRYSTAL; meaningless when owner == 0 */
    uint8_t owner; /* 0 = empty square, 1 = player 1, 2 = player 2 */
    uint8_t items; /* HR_EQ_* bits */
    uint8_t pad;   /* always 0, so equal states are byte-equal */
} hr_unit;

typedef struct hr_state {
    uint64_t zob;                  /* Zobrist hash of board and card sets (kept incrementally) */
    uint64_t occ[2];               /* bit s set: a unit of player 1 / 2 on square s (kept incrementally) */
    uint64_t alive;                /* bit s set: the unit on square s has hp > 0 */
    uint64_t crystals;             /* bit s set: a crystal stands on square s */
    int32_t deck_seed[2];          /* per-deck seed of the seeded draw rule (0 in observations) */
    hr_unit board[HR_MAX_SQ];      /* by square index x*h + y */
    uint8_t hand[2][HR_NCARDS];    /* card counts in each hand */
    uint8_t deck[2][HR_NCARDS];    /* card counts in each deck (an unordered multiset) */
    uint8_t hand_n[2];             /* hand sizes */
    uint8_t deck_n[2];             /* deck sizes */
    int16_t turn;                  /* player-turn counter from 1; P1 plays odd turns */
    int16_t turn_limit;            /* from the config */
    int8_t ap;                     /* action points left */
    int8_t ap_per_turn;            /* from the config */
    uint8_t current;               /* player to act: 0 or 1 */
    uint8_t terminal;              /* 1 once the game is over */
    int8_t winner;                 /* when terminal: 0 or 1, or -1 for a draw */
    uint8_t map;                   /* HR_MAP_* */
    uint8_t w, h;                  /* board size of the map */
    uint8_t draws;                 /* HR_DRAW_* */
    uint8_t deck_kind;             /* HR_DECK_*: the composition both decks started with */
    int8_t observer;               /* -1 for a full state; else the seat of an observation */
} hr_state;

/* Static description of a map (spec §2). */
typedef struct hr_map {
    const char *name;
    int w, h;
    uint8_t sq[HR_MAX_SQ];   /* square type by index */
    int ndeploy[2];
    uint8_t deploy[2][4];    /* deploy squares per player, scan order */
    int ncrystal[2];
    uint8_t crystal[2][4];   /* crystal squares per player, file order */
    int nassault;
    uint8_t assault[4];
} hr_map;

extern const hr_map hr_maps[HR_NMAPS];
extern const uint8_t hr_decks[HR_NDECKS][HR_NCARDS];
extern const mg_game_vt mg_heroes_vt;

/* Base max hp by unit kind (index HR_KNIGHT..HR_CRYSTAL; 0 for spell/item indices). */
int hr_base_hp(int kind);
/* Max hp of a unit including dragonscale/helm bonuses. */
int hr_max_hp(const hr_unit *u);

/* Recompute the Zobrist hash of board and cards from scratch (for imports and tests). */
uint64_t hr_zobrist_full(const hr_state *st);

/* Validate a state filled field by field (e.g. from JSON) and finish it (hash). Returns
 * MG_OK or MG_ERR_STATE with a message in err; the state is not used if it fails. */
int hr_finish_import(hr_state *st, char *err);

/* The reference's legal-action count (n_legal of the conformance traces). */
int hr_reference_legal_count(const hr_state *st);

/* ---- Features (mg_game_vt.features, heroes_features.c) -------------------------------
 * HR_NFEATURES numbers from `player`'s view: HR_FEAT_SIDE for the player ("me"), the same
 * HR_FEAT_SIDE for the opponent, then 3 about the turn. Within a side, with "/5" a count
 * divided by 5 so that a usual value lies in [0, 1]:
 *    0-4   living units on the board by kind (knight, archer, cleric, wizard, ninja), /5
 *    5-9   their health: the sum over those units of hp / max hp (items included)
 *    10    knocked-out units on the board, /5
 *    11    crystals standing (count)
 *    12    the crystals' health: the sum of hp / 4500
 *    13    items held by living units, /5
 *    14-16 living units on power, assault and defense squares, /5 each
 *    17-21 unit cards left in hand and deck together by kind (knight..ninja), /5
 *    22    infernos in hand and deck, /5
 *    23    item cards in hand and deck (potion, runemetal, scroll, dragonscale, helm), /5
 *    24    hand size / 6
 *    25    deck size / 30
 * Then: 52 = 1 if it is the player's turn, 53 = action points left / AP per turn,
 * 54 = turn / turn limit. Only what the player sees: the opponent's hand and deck enter
 * as their sum per kind, which card counting gives (an observation has the same). */
#define HR_FEAT_SIDE 26
#define HR_NFEATURES (2 * HR_FEAT_SIDE + 3)
void hr_features(const void *st, int player, double *out);

/* The state's JSON form as msgpack (mg_game_vt.write_msgpack, heroes_wire.c). */
struct mg_wire;
void hr_write_msgpack(const void *st, const char *const *names, struct mg_wire *w);

/* Detail codes of MG_ERR_ILLEGAL, naming the rule broken (see mg_errstr). */
#define HR_ILL(n) (MG_ERR_ILLEGAL | ((n) << 8))

#endif
