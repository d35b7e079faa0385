/* conquest_ai.h: the forward model and building blocks shared by conquest's agents (spec
 * §7-§10), private to the conquest sources. The agents search whole move phases, one
 * decision per territory (§8), on a forward model whose battles are the deterministic
 * estimate of §7.3; the real game then fights them with dice.
 *
 * Units are sets of ids (cq_set, one bit a unit). cq_fm is a state plus, for each territory,
 * the set of living units in it, so that "my units in t" is two ANDs instead of a scan of
 * every unit; cqa_move and cqa_end_phase keep the two in step. */
#ifndef CONQUEST_AI_H
#define CONQUEST_AI_H

#include "conquest_internal.h"

typedef struct cq_set {
    uint64_t w[2];
} cq_set;

static inline void set_add(cq_set *s, int u) { s->w[u >> 6] |= 1ull << (u & 63); }
static inline void set_del(cq_set *s, int u) { s->w[u >> 6] &= ~(1ull << (u & 63)); }
static inline int set_has(const cq_set *s, int u) { return (int)(s->w[u >> 6] >> (u & 63) & 1); }
static inline int set_empty(cq_set s) { return (s.w[0] | s.w[1]) == 0; }
static inline int set_count(cq_set s) { return __builtin_popcountll(s.w[0]) + __builtin_popcountll(s.w[1]); }
static inline cq_set set_and(cq_set a, cq_set b) { return (cq_set){{a.w[0] & b.w[0], a.w[1] & b.w[1]}}; }
static inline cq_set set_or(cq_set a, cq_set b) { return (cq_set){{a.w[0] | b.w[0], a.w[1] | b.w[1]}}; }
static inline cq_set set_minus(cq_set a, cq_set b) { return (cq_set){{a.w[0] & ~b.w[0], a.w[1] & ~b.w[1]}}; }
/* The lowest id in s above `after` (-1: from the start), or -1. */
static inline int set_next(cq_set s, int after)
{
    int i = after + 1;
    if (i < 64) {
        uint64_t w = s.w[0] & (~0ull << i);
        if (w)
            return __builtin_ctzll(w);
        i = 64;
    }
    if (i >= 128)
        return -1;
    uint64_t w = s.w[1] & (~0ull << (i - 64));
    return w ? 64 + __builtin_ctzll(w) : -1;
}
#define SET_FOR(u, s) for (int u = set_next((s), -1); u >= 0; u = set_next((s), u))

typedef struct cq_fm {
    cq_state s;
    cq_set at[CQ_MAX_T]; /* living units in each territory */
    cq_set side[2];      /* every unit of each seat, living or not (constant) */
} cq_fm;

/* The reward of spec §10 (thesis form by default; the code's variants by constants). */
typedef struct cqa_reward {
    int max_phases;   /* move phases a playout simulates: 40 (10 rounds) */
    double win_base;  /* a won playout: win_base + win_bonus * (rounds left) / rounds */
    double win_bonus;
    double unit_div;  /* not finished: (own - enemy) / (unit_div * (own + enemy)) */
} cqa_reward;

/* ---- conquest_model.c: the forward model and §7 ----------------------------------------- */
void cqa_init(cq_fm *f, const cq_state *st);
static inline cq_set cqa_units(const cq_fm *f, int t, int seat) { return set_and(f->at[t], f->side[seat]); }
static inline int cqa_moved(const cq_fm *f, int u) { return (int)(f->s.moved[u >> 6] >> (u & 63) & 1); }
/* The units of `seat` that have not moved this turn. */
cq_set cqa_unmoved(const cq_fm *f, int seat);
/* Quick strength of §7.1, times 2 (an integer). */
int cqa_strength2(const cq_fm *f, cq_set units, int attacking);
/* The units of x cheapest first (cost, then id), written to ids; returns their number. */
int cqa_cheapest_first(const cq_fm *f, cq_set x, uint8_t *ids);
/* §7.2: strength(U, attacking) > 1.1 strength(defenders of t); any non-empty U takes an
 * empty t. */
int cqa_can_attack(const cq_fm *f, cq_set units, int t);
/* §7.4, times 2: the attacking strength of the enemies of t's owner in t's neighbours. */
int cqa_threat2(const cq_fm *f, int t);
/* A path for unit u (of the player to move, unmoved) to t in the current phase: 1 if there is
 * one, with *mid the middle of a 2-step path or CQ_NONE (§8.3: 1 step if adjacent; else an
 * own middle first, then a blitz through an empty enemy one, canonical order). */
int cqa_path(const cq_fm *f, int u, int t, int *mid);
/* Move u along (mid, t) as the rules do (blitz, conquest at move time, joins); 0 if the rules
 * refuse it (a second path into a territory taken this phase). *code, if not NULL, gets the
 * action code (MOVE or JOIN). */
int cqa_move(cq_fm *f, int u, int mid, int t, mg_action *code);
/* §7.3: the most likely outcome of a battle in t, applied (units removed, owner set). */
void cqa_estimate_battle(cq_fm *f, int t);
/* §7.3 win% of attackers A against defenders D (A attacking). */
double cqa_estimate_win(const cq_fm *f, cq_set a, cq_set d);
/* END_PHASE on the forward model: after a combat move the battles are estimated (§7.3). */
void cqa_end_phase(cq_fm *f);
/* The reward of §10 for `player` after `phases` simulated move phases. */
double cqa_reward_of(const cq_fm *f, int player, int phases, const cqa_reward *rw);
/* Land distance (steps, any owner) from each territory to the nearest one in `targets`;
 * 255 where none is reachable. */
void cqa_distance(const cq_fm *f, uint32_t targets, uint8_t *dist);
static inline uint32_t cqa_owned(const cq_fm *f, int seat)
{
    return seat ? f->s.owner1 : ~f->s.owner1 & cq_all(&f->s);
}

/* ---- conquest_heuristic.c: §9 and the Easy AI of §12.1 ----------------------------------- */
typedef struct cqa_heur {
    int capital_blitz;    /* step 1 of §9 (0 for Easy) */
    int empty_capital;    /* step 3 also attacks an empty enemy capital (0 for Easy) */
    double attack_factor; /* step 3: attack when A > factor * D: 1.1 (§9), 1.37 (Easy) */
    mg_rng *shuffle;      /* Easy: enemy territories shuffled before the capital-first sort */
} cqa_heur;
extern const cqa_heur CQA_PLAYOUT_HEUR;
/* One move phase of the player to move by the heuristic (END_PHASE not applied). Moves are
 * written to codes[] (room for CQ_MAX_UNITS) when it is not NULL; returns their number. */
int cqa_heuristic_phase(cq_fm *f, const cqa_heur *h, mg_action *codes);
/* Playout: up to rw->max_phases move phases by the heuristic for both players (each then
 * ended on the forward model), or `random_eps` of them played at random (BB-MCTS), until the
 * game ends; returns the reward of §10 for `player` and adds the phases played to *phases. */
double cqa_playout(cq_fm *f, int player, const cqa_reward *rw, double random_eps, mg_rng *rng, long *phases);

/* ---- conquest_decisions.c: the per-territory abstraction of §8 --------------------------- */
#define CQA_MAX_OPTIONS 128
/* Combat option generators (§8.1): the tree's, BB's random phases', OEP's. */
enum { CQA_GEN_TREE = 0, CQA_GEN_RANDOM = 1, CQA_GEN_OEP = 2 };
/* The territories that get a decision this phase, in order (§8.1 combat list, §8.2 order). */
int cqa_decision_list(const cq_fm *f, uint8_t *terr);
/* The options for territory t (SKIP, the empty set, last); 0 when t gets no decision (a
 * combat target that fails the can-attack test with every reachable unit). */
int cqa_options(const cq_fm *f, int t, int gen, mg_rng *rng, cq_set *out);
/* MOVE(t, X) on the forward model (§8.3): each unit of X along its path; units the rules
 * refuse stay. Codes as cqa_move, appended at codes[*n] when codes is not NULL. */
void cqa_apply_option(cq_fm *f, int t, cq_set x, mg_action *codes, int *n);
/* Number of decisions at the root as BB-MCTS counts them (§11.2). */
int cqa_root_decisions(const cq_fm *f);
/* Units of the player to move that can reach t now (unmoved, with a path). */
cq_set cqa_reachers(const cq_fm *f, int t);


/* ---- conquest_pro.c: the Fast and Hard AIs of §12.2 -------------------------------------- */
/* One move phase of the ProAI simplification; `hard` picks the Monte-Carlo calculator (runs
 * as in the spec, at most max_runs) over the §7.3 estimate. Returns the number of codes. */
int cqa_pro_phase(cq_fm *f, int hard, int max_runs, mg_rng *rng, mg_action *codes);

#endif
