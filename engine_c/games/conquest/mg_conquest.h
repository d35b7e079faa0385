/* mg_conquest.h: the TripleA-like grand strategy game of spec/conquest.md (README.md beside
 * this file). Two players move whole armies over a map of land territories; battles are
 * fought with dice. Nothing is hidden: an observation is the state. The map travels inside
 * the state (adjacency masks, unit types, who owns which unit), so every entry of the
 * interface reads one flat struct and a clone stays a memcpy. */
#ifndef MG_CONQUEST_H
#define MG_CONQUEST_H

#include <stdint.h>

#include "mg_game.h"

#define CQ_MAX_T 32      /* territories: one bit each in a uint32_t mask */
#define CQ_MAX_UNITS 128 /* unit ids 0..127 (7 bits of an action code) */
#define CQ_MAX_TYPES 8
#define CQ_MAX_DEGREE 8  /* neighbours of one territory (bounds the legal list) */
#define CQ_NONE 255      /* no territory; a dead unit's location */
#define CQ_MAX_ACTIONS MG_MAX_ACTIONS
#define CQ_WIN_VALUE 1.0 /* evaluate() of a won game */
#define CQ_MAX_BATTLE_ROUNDS 10000 /* only units with no attack and no defense could reach it */

/* Phases (cq_state.phase) and how a game ended (cq_state.by). */
enum { CQ_COMBAT = 0, CQ_NONCOMBAT = 1, CQ_OVER = 2 };
enum { CQ_BY_NONE = 0, CQ_BY_CAPITAL = 1, CQ_BY_ANNIHILATION = 2, CQ_BY_ROUND_LIMIT = 3 };
enum { CQ_VICTORY_CAPITAL = 0, CQ_VICTORY_CAPITAL_ANNIHILATION = 1 };

/* Unit type flags (cq_type.flags). */
#define CQ_SUPPORTABLE 1 /* +1 attack when paired with a supporting unit */
#define CQ_BLITZ 2       /* may cross an empty enemy territory, conquering it */

/* Action codes. END_PHASE is 0. A MOVE takes one unit along a path of 1 or 2 steps:
 *   bit 0 = 1, bits 1-7 unit id, bits 8-15 the start, bits 16-23 the middle territory of a
 *   2-step path (0: none), bits 24-31 the end.
 * Territories are written by their name number (cq_state.tname: names are interned by the
 * Python side, so a code means the same territory whatever the map's order). A JOIN is the
 * same with bit 0 = 0 (and never 0 as a whole): a unit following the move just made into the
 * empty territory it took, with the same path. That is how several units move together
 * (spec §4.1: a move is a unit set and a path) when moves are one unit each: the first takes
 * the territory, the others join it; a separate move into it later is refused, since it
 * would end in own territory (conformance/conquest-README.md, "A multi-unit MOVE"). */
#define CQ_END_PHASE ((mg_action)0)
#define CQ_PATH(unit, src, mid, dst) \
    ((mg_action)((uint32_t)(unit) << 1 | (uint32_t)(src) << 8 | (uint32_t)(mid) << 16 | (uint32_t)(dst) << 24))
#define CQ_MOVE(unit, src, mid, dst) (CQ_PATH(unit, src, mid, dst) | 1u)
#define CQ_JOIN(unit, src, mid, dst) CQ_PATH(unit, src, mid, dst)
#define CQ_A_IS_MOVE(a) ((a) & 1u)
#define CQ_A_UNIT(a) ((int)(((a) >> 1) & 0x7F))
#define CQ_A_SRC(a) ((int)(((a) >> 8) & 0xFF))
#define CQ_A_MID(a) ((int)(((a) >> 16) & 0xFF))
#define CQ_A_DST(a) ((int)(((a) >> 24) & 0xFF))

/* Detail codes of refused actions (mg_game_vt.errstr gives their text). */
#define CQ_ERR_TERRITORY (MG_ERR_ILLEGAL | 1 << 8)  /* a name not on this map */
#define CQ_ERR_UNIT (MG_ERR_ILLEGAL | 2 << 8)       /* no such living unit */
#define CQ_ERR_NOT_OWN (MG_ERR_ILLEGAL | 3 << 8)    /* a unit of the opponent */
#define CQ_ERR_NOT_THERE (MG_ERR_ILLEGAL | 4 << 8)  /* the unit is not where the path starts */
#define CQ_ERR_MOVED (MG_ERR_ILLEGAL | 5 << 8)      /* the unit moved this turn already */
#define CQ_ERR_ADJACENT (MG_ERR_ILLEGAL | 6 << 8)   /* two path territories are not neighbours */
#define CQ_ERR_STEPS (MG_ERR_ILLEGAL | 7 << 8)      /* more steps than the unit's move */
#define CQ_ERR_THROUGH (MG_ERR_ILLEGAL | 8 << 8)    /* the path crosses enemy units or territory */
#define CQ_ERR_ENDS_OWN (MG_ERR_ILLEGAL | 9 << 8)   /* a combat move must end in enemy territory */
#define CQ_ERR_ENTERS_ENEMY (MG_ERR_ILLEGAL | 10 << 8) /* a non-combat move enters the enemy */
#define CQ_ERR_DICE (MG_ERR_ILLEGAL | 11 << 8)      /* a recorded dice sequence ran out */
#define CQ_ERR_JOIN (MG_ERR_ILLEGAL | 12 << 8)      /* no move with this path to join */

typedef struct cq_type {
    uint8_t attack, defense, move, cost, hp;
    uint8_t support; /* supportable units this one lifts by +1 in attack (artillery: 1) */
    uint8_t flags;   /* CQ_SUPPORTABLE, CQ_BLITZ */
    uint8_t name;    /* interned name number */
} cq_type;

/* The map and the starting units, as the Python side reads them from a map file. */
typedef struct cq_config {
    int nterr, nunits, ntypes;
    int rounds;  /* a draw after this many complete rounds */
    int victory; /* CQ_VICTORY_* */
    uint32_t adj[CQ_MAX_T];
    uint8_t tname[CQ_MAX_T];
    uint8_t start_owner[CQ_MAX_T]; /* 0 or 1 */
    uint8_t capital[2];            /* each player's capital territory */
    uint8_t pname[2];
    cq_type types[CQ_MAX_TYPES];
    uint8_t utype[CQ_MAX_UNITS];
    uint8_t uowner[CQ_MAX_UNITS];
    uint8_t uloc[CQ_MAX_UNITS];
} cq_config;

typedef struct cq_state {
    /* The map: constant during a game. */
    uint32_t adj[CQ_MAX_T];
    uint8_t tname[CQ_MAX_T];
    cq_type types[CQ_MAX_TYPES];
    uint8_t ukind[CQ_MAX_UNITS]; /* type in bits 0-2, owner in bit 7 */
    uint8_t nterr, nunits, ntypes, victory;
    uint8_t capital[2], pname[2];
    uint16_t rounds;
    /* The game. */
    uint16_t round;               /* from 1 */
    uint8_t player;               /* to move, 0 (first listed) or 1 */
    uint8_t phase;                /* CQ_COMBAT, CQ_NONCOMBAT, CQ_OVER */
    int8_t winner;                /* 0, 1, -1 for a draw (or while the game goes on) */
    uint8_t by;                   /* CQ_BY_*: how it ended */
    int8_t observer;              /* -1 for a full state */
    uint8_t join_mid, join_dst;   /* the path of the last move if it took an empty territory */
    uint8_t join_src;             /* (local indices, CQ_NONE: no move to join) */
    uint8_t join_blitz;           /* that move crossed an enemy middle: joiners must blitz */
    uint8_t pad[3];
    uint32_t owner1;              /* bit t: territory t belongs to player 1 */
    uint32_t conquered;           /* territories the player to move took this turn */
    uint64_t moved[2];            /* bit u: unit u moved this turn */
    uint8_t loc[CQ_MAX_UNITS];    /* each unit's territory, CQ_NONE once dead */
} cq_state;

/* A source of dice: the RNG, or a recorded sequence (conformance traces, tests). */
typedef struct cq_dice {
    mg_rng *rng;          /* used when seq is NULL */
    const uint8_t *seq;
    int n, used;
} cq_dice;

extern const mg_game_vt mg_conquest_vt;

/* Check, then apply, with the dice of any battle taken from `dice`: a recorded sequence
 * replaces the RNG (spec §5). Returns MG_OK or an error code; the state is unchanged on a
 * refused action, and CQ_ERR_DICE says a recorded sequence was too short (state then
 * unspecified). */
int cq_apply_dice(cq_state *st, mg_action a, cq_dice *dice);
/* Fight one battle in territory t with the dice source (spec §5); the player to move attacks.
 * Returns 1 if the attacker took t. */
int cq_battle(cq_state *st, int t, cq_dice *dice);
/* The local index of a name number on this map, or -1. */
int cq_territory(const cq_state *st, int name);
/* Quick strength of spec §7.1 of the units of `seat` in territory t, times 2 (an integer). */
int cq_strength2(const cq_state *st, int t, int seat, int attacking);
/* The state's JSON form as msgpack (mg_game_vt.write_msgpack, conquest_wire.c); `names` is
 * the codec's table of interned names, by name number. */
struct mg_wire;
void cq_write_msgpack(const void *st, const char *const *names, struct mg_wire *w);

/* ---- The action abstraction of spec §8 as grouped legal actions ---------------------------
 * A group is one decision of the thesis's abstraction: a territory, and the sets of units that
 * may move into it (§8.1 combat targets with the prefixes that pass the strength test, the
 * cheapest unit for an empty one; §8.2 own territories with none, half or all of each
 * source's units). Computed from st alone: the combat list leaves out the territories taken
 * this phase, units that moved are not offered, SKIP (the empty set) is never listed, and a
 * territory already chosen may appear again with the units still free.
 * cq_groups writes, per option, its territory (local index) in terr_of[i] and its units (two
 * 64-bit words, bit u = unit u) in units[2i], units[2i+1], in §8's order; room for
 * CQ_MAX_GROUP_OPTIONS. Returns the number of options (0 in a finished game).
 * cq_group_actions writes the legal actions that carry out one option at st, in order (the
 * first unit of a source MOVEs, the others of its path JOIN); room for CQ_MAX_UNITS. */
#define CQ_MAX_GROUP_OPTIONS (CQ_MAX_T * 128)
int cq_groups(const cq_state *st, uint8_t *terr_of, uint64_t *units);
int cq_group_actions(const cq_state *st, int t, const uint64_t *units, mg_action *codes);

/* ---- Agents (spec §7-§12; conquest_search.c, conquest_pro.c) ------------------------------
 * The thesis agents search one move phase at a time on a forward model whose battles are the
 * deterministic estimate of §7.3, one decision per territory (§8), with playouts by the
 * heuristic of §9 scored by the reward of §10. The baselines play one phase without search.
 * Every agent returns the phase's moves (single-unit MOVE and JOIN codes) then END_PHASE. */
enum {
    CQ_AGENT_NE = 0,    /* non-exploring MCTS (§11.1) */
    CQ_AGENT_BB,        /* bridge-burning MCTS (§11.2) */
    CQ_AGENT_OEP,       /* online evolutionary planning (§11.3) */
    CQ_AGENT_HEURISTIC, /* the playout heuristic of §9 as a player */
    CQ_AGENT_EASY,      /* TripleA's Weak AI (§12.1) */
    CQ_AGENT_FAST,      /* ProAI steps with the §7.3 estimate (§12.2) */
    CQ_AGENT_HARD,      /* ProAI steps with a Monte-Carlo battle calculator (§12.2) */
    CQ_AGENT_COUNT
};
#define CQ_MAX_PLAN (CQ_MAX_UNITS + 1)

typedef struct cq_agent_params {
    int agent;          /* CQ_AGENT_* */
    double budget_ms;   /* wall clock per move phase; 0 = none */
    long iterations;    /* MCTS iterations or OEP generations per phase; 0 = none. With
                         * neither budget the search agents take 1000 ms (the thesis) */
    int max_phases;     /* playout length in move phases: 40 = 10 rounds (§10) */
    double win_base;    /* reward of a won playout: win_base + win_bonus * rounds left / 10 */
    double win_bonus;
    double unit_div;    /* unfinished: (own - enemy) / (unit_div * (own + enemy)) */
    double c;           /* BB: exploration constant of UCT (1/sqrt 2) */
    double epsilon;     /* BB: probability that a simulated phase is played at random (0.5) */
    int population;     /* OEP: genomes (50) */
    double survival;    /* OEP: fraction kept each generation (0.5) */
    double mutation;    /* OEP: probability that a child gets one random gene (0.1) */
    int hard_runs;      /* Hard: dice simulations per battle, max(16, hard_runs - min(|A|,|D|)) */
    long max_nodes;     /* NE/BB: tree size cap */
} cq_agent_params;

typedef struct cq_agent_stats {
    long iterations;    /* MCTS iterations, OEP generations, 0 for the baselines */
    long playouts;
    long nodes;         /* tree nodes or genomes created */
    long playout_phases; /* move phases played in all playouts (a playout stops at the game's end) */
    double elapsed_ms;
    double value;       /* the chosen line's mean reward (search agents) */
} cq_agent_stats;

/* The thesis's settings of an agent (spec §11-§12): MG_OK or MG_ERR_CONFIG. */
int cq_agent_defaults(int agent, cq_agent_params *p);
/* Plan the current move phase of st for the player to move: plan[0..*plan_len) (room for
 * CQ_MAX_PLAN), ending with END_PHASE. Every code is legal when played in order on st. All
 * randomness comes from rng. MG_OK, MG_ERR_TERMINAL, MG_ERR_CONFIG (bad parameters) or
 * MG_ERR_NOMEM. */
int cq_agent_plan(const cq_state *st, const cq_agent_params *p, mg_rng *rng, mg_action *plan,
                  int *plan_len, cq_agent_stats *stats);

#endif
