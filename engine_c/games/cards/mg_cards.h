/* mg_cards.h: the Hearthstone-like card game of spec/cards.md (README.md beside this file).
 * Two heroes (Mage, Paladin), 64 cards and 10 tokens, hidden hands, random draws and
 * random targets. The state is one flat struct without pointers: cloning is memcpy. */
#ifndef MG_CARDS_H
#define MG_CARDS_H

#include <stdint.h>

#include "mg_game.h"

#define CD_HERO_HP 30
#define CD_DECK_SIZE 30
#define CD_HAND_MAX 10
#define CD_BOARD_MAX 7
#define CD_MANA_MAX 10
#define CD_SECRETS_MAX 5
#define CD_ENCH_MAX 6       /* enchantments kept per minion; more are merged into the last */
#define CD_PLY_LIMIT 89     /* spec §1 TURN_LIMIT: a tie after this ply */
#define CD_MAX_ACTIONS 256  /* PLAY 10 x 16 targets + ATTACK 8 x 8 + POWER 16 + END_TURN */
#define CD_WIN_VALUE 1.0    /* evaluate() of a won game */
#define CD_UNKNOWN 255      /* a card the observer may not see */
#define CD_CARD_SLOTS 80    /* room for card numbers 0..CD_NCARDS-1 in per-card arrays */

/* Heroes (cd_player.hero_class) and deck modes (cd_config.deck[]). */
enum { CD_MAGE = 0, CD_PALADIN = 1 };
enum { CD_DECK_M = 0, CD_DECK_P = 1, CD_DECK_X = 2, CD_DECK_RANDOM = 3 };

/* ---- Actions ----------------------------------------------------------------------------
 * type in bits 0-1; bits 2-5: the hand slot (PLAY) or the attacker (ATTACK: a board slot
 * 0..6, or 7 for the hero); bits 6-10: the target, 0 for none, else 1 + 8*seat + slot with
 * slot 7 for the hero (seats are absolute, 0 and 1); bits 11-17: the card played (PLAY), so
 * a code names the card it expects. Other bits are 0. */
enum { CD_A_END_TURN = 0, CD_A_PLAY = 1, CD_A_ATTACK = 2, CD_A_POWER = 3 };
#define CD_HERO_SLOT 7
#define CD_TARGET(seat, slot) (1 + 8 * (seat) + (slot))
#define CD_ACTION(type, src, target, card) \
    ((mg_action)((type) | (src) << 2 | (target) << 6 | (uint32_t)(card) << 11))
#define CD_A_TYPE(a) ((int)((a) & 3))
#define CD_A_SRC(a) ((int)(((a) >> 2) & 15))
#define CD_A_TARGET(a) ((int)(((a) >> 6) & 31))
#define CD_A_CARD(a) ((int)(((a) >> 11) & 127))

/* Detail codes of refused actions (mg_game_vt.errstr gives their text). */
#define CD_ERR_NO_CARD (MG_ERR_ILLEGAL | 1 << 8)
#define CD_ERR_MANA (MG_ERR_ILLEGAL | 2 << 8)
#define CD_ERR_TARGET (MG_ERR_ILLEGAL | 3 << 8)
#define CD_ERR_BOARD_FULL (MG_ERR_ILLEGAL | 4 << 8)
#define CD_ERR_ATTACKER (MG_ERR_ILLEGAL | 5 << 8)
#define CD_ERR_POWER_USED (MG_ERR_ILLEGAL | 6 << 8)
#define CD_ERR_SECRET (MG_ERR_ILLEGAL | 7 << 8)
#define CD_ERR_NO_RNG (MG_ERR_CONFIG | 8 << 8)

/* ---- The card table --------------------------------------------------------------------- */
/* The card table (generated: cards_tables.h) describes every card with these two structs. */
typedef struct cd_op {
    uint8_t trig;   /* CD_TR_*: when it fires */
    uint8_t eff;    /* CD_E_*: what it does */
    uint8_t sel;    /* CD_S_*: on whom */
    uint8_t n;      /* amount: damage, health, cards, hits, copies */
    uint8_t arg;    /* second argument: health of a BUFF, a token's card, a keyword's bit index */
    uint8_t secret; /* CD_SEC_*: a secret's event */
} cd_op;

typedef struct cd_card {
    const char *id;   /* the spec's id: "N01", "T_COIN" */
    const char *name;
    uint8_t cls;      /* index in "NMPRST" */
    uint8_t cost;
    uint8_t type;     /* CD_TYPE_MI, _SP, _SE, _WE */
    uint8_t atk;
    uint8_t hp;       /* health, or durability */
    uint8_t kw;       /* printed keywords, CD_KW_* bits */
    uint8_t legendary;
    uint8_t first_op; /* its ops are CD_OPS[first_op .. first_op + nops) */
    uint8_t nops;
    /* Summaries of the ops, compiled with them, for the hot paths (auras and enrage are
     * recomputed after every event): */
    int8_t aura_atk;   /* what its aura gives each other friendly minion */
    int8_t aura_hp;
    int8_t enrage_atk; /* what an active enrage gives it */
    int8_t enrage_hp;
    uint8_t enrage_kw; /* keywords an active enrage gives it (CD_KW_* bits) */
    uint16_t triggers; /* bit t set if some op has trigger CD_TR_t */
} cd_card;

/* ---- Configuration ---------------------------------------------------------------------- */
typedef struct cd_config {
    int deck[2];     /* CD_DECK_M, _P, _X or _RANDOM, by seat */
    int hero[2];     /* CD_MAGE or CD_PALADIN, by seat; -1: the deck's own hero */
    int first;       /* the seat that plays ply 1, or -1: drawn at random (spec §5.1) */
    int ply_limit;   /* a tie after this ply (spec default 89) */
} cd_config;

/* ---- State -------------------------------------------------------------------------------- */
typedef struct cd_ench {
    uint8_t src;  /* the card that gave it */
    uint8_t kind; /* 1 a buff (Blessing of Kings...), 2 enrage while it is active */
    int8_t atk;
    int8_t hp;
} cd_ench;

typedef struct cd_minion {
    uint16_t eid;         /* entity id: play order, for trigger order (spec §5.6) */
    uint8_t card;
    uint8_t kw;           /* keywords now: printed and given, none after a silence */
    int16_t hp;           /* current health; <= 0: dead, removed in the death phase */
    int16_t max_hp;       /* derived: printed + enchantments + aura */
    int16_t atk;          /* derived: printed + enchantments + aura (never below 0) */
    uint8_t frozen;
    uint8_t silenced;
    uint8_t fresh;        /* entered play since its controller's turn began */
    uint8_t attacks_used;
    uint8_t ekw;          /* derived: keywords given by an active enrage (Raging Worgen) */
    uint8_t nench;
    int8_t aura_atk;      /* derived: from friendly auras */
    int8_t aura_hp;
    cd_ench ench[CD_ENCH_MAX];
} cd_minion;

typedef struct cd_player {
    int16_t hp;           /* hero health */
    int16_t armor;
    uint8_t hero_class;   /* CD_MAGE or CD_PALADIN */
    uint8_t frozen;
    uint8_t immune;       /* until the end of the current turn (Ice Block) */
    uint8_t attacks_used; /* by the hero this turn */
    uint8_t weapon;       /* the weapon's card, 0 for none */
    int8_t weapon_atk;
    int8_t weapon_dur;
    uint8_t pad0;
    uint16_t weapon_eid;
    uint8_t mana, max_mana, overload_locked, overload_pending;
    uint8_t power_used, cards_played, fatigue, deck_mode;
    uint8_t nhand, ndeck, nsecrets, nboard;
    uint8_t hand[CD_HAND_MAX];
    uint8_t deck[CD_DECK_SIZE];   /* top first */
    uint8_t secrets[CD_SECRETS_MAX];
    uint8_t pad1;
    uint16_t secret_eid[CD_SECRETS_MAX];
    cd_minion board[CD_BOARD_MAX];
    uint8_t revealed[CD_CARD_SLOTS]; /* per card: copies shown to both from hand or deck
                                        (played face up, burned, secrets once triggered) */
} cd_player;

typedef struct cd_state {
    cd_player p[2];
    uint16_t ply;         /* from 1 */
    uint16_t ply_limit;
    uint16_t next_eid;    /* heroes are 1 and 2 */
    uint8_t current;      /* the seat to act */
    uint8_t first;        /* the seat that played ply 1 */
    uint8_t terminal;
    int8_t winner;        /* 0, 1, or -1 for a tie; -1 while the game goes on */
    int8_t observer;      /* -1 for a full state */
    uint8_t capped;       /* ended by the ply limit */
} cd_state;

extern const mg_game_vt mg_cards_vt;

/* The card table, for the Python side (name, cost, ...) and the tests. */
const cd_card *cd_card_info(int card);
int cd_card_count(void);
/* Recompute the derived fields (attack, maximum health, auras, enrage) of a state built
 * by hand, e.g. loaded from JSON, whose minions' health already counts their auras. */
void cd_refresh(cd_state *st);
/* Whether a character can attack now (spec §6.2, and at least one legal target): slot
 * 0..6 for a minion of `seat`, CD_HERO_SLOT for its hero. */
int cd_can_attack(const cd_state *st, int seat, int slot);
/* The state's JSON form as msgpack (mg_game_vt.write_msgpack, cards_wire.c). */
struct mg_wire;
void cd_write_msgpack(const void *st, const char *const *names, struct mg_wire *w);

#endif
