/* mg_search_internal.h: helpers shared by the search kernels (not part of the API). */
#ifndef MG_SEARCH_INTERNAL_H
#define MG_SEARCH_INTERNAL_H

#include <string.h>

#include "mg_eval_net.h"
#include "mg_hidden.h"
#include "mg_kernels.h"
#include "mg_search.h"

/* A stack buffer that holds any state, aligned for the state structs. */
typedef union ms_state {
    unsigned char b[MG_MAX_STATE_SIZE];
    uint64_t align;
} ms_state;

/* The budget of one call: start time, deadline and iteration cap. */
typedef struct ms_budget {
    double t0;       /* start, ms on the monotonic clock */
    double deadline; /* t0 + budget_ms, or 0 for none */
    long max_iter;   /* iteration cap, or 0 for none */
} ms_budget;

/* Milliseconds on the monotonic clock. */
double ms_now(void);

/* Start the budget of a call. */
void ms_budget_start(ms_budget *b, const mg_search_params *p);

/* MG_STOP_TIME or MG_STOP_ITERATIONS when the budget is spent after `iter` iterations,
 * else -1. Reads the clock. */
int ms_budget_spent(const ms_budget *b, long iter);

/* ms_budget_spent without the clock: MG_STOP_ITERATIONS or -1. */
static inline int ms_budget_iterations(const ms_budget *b, long iter)
{
    return b->max_iter && iter >= b->max_iter ? MG_STOP_ITERATIONS : -1;
}

/* Fraction of the budget used, in [0, 1] (the larger of time and iterations). */
double ms_budget_progress(const ms_budget *b, long iter);

/* `p` with what it leaves to the game filled in from `vt` (value_scale 0: the game's). */
mg_search_params ms_game_params(const mg_game_vt *vt, const mg_search_params *p);

/* The entry of every determinized kernel (PIMC, ISMCTS, OEP on determinizations; mg_hidden.h):
 * clear *stats and *plan_len, check the search parameters `q` and the determinization
 * parameters `d`, refuse a state larger than the kernels' buffers or a finished game, and
 * fill in what `q` leaves to the game (ms_game_params). Returns MG_OK or the error code,
 * always with a text in err. */
int ms_det_begin(const mg_game_vt *vt, const void *obs, mg_search_params *q,
                 const mg_det_params *d, mg_search_stats *stats, int *plan_len, char *err);

/* The determinized kernels behind mg_search_hidden, which checks and resolves everything
 * first (ms_det_begin): `p` is complete and `stats` is not NULL. */
int ms_pimc(const mg_game_vt *vt, const void *obs, const mg_search_params *p, const mg_det_params *d,
            mg_rng *rng, mg_action *plan, int *plan_len, mg_search_stats *stats, char *err);
int ms_ismcts(const mg_game_vt *vt, const void *obs, const mg_search_params *p,
              const mg_det_params *d, mg_rng *rng, mg_action *plan, int *plan_len,
              mg_search_stats *stats, char *err);
int ms_oep_hidden(const mg_game_vt *vt, const void *obs, const mg_search_params *p,
                  const mg_det_params *d, mg_rng *rng, mg_action *plan, int *plan_len,
                  mg_search_stats *stats, char *err);
int ms_mcts_hidden(const mg_game_vt *vt, const void *obs, const mg_search_params *p,
                   const mg_det_params *d, mg_rng *rng, mg_action *plan, int *plan_len,
                   mg_search_stats *stats, char *err);
int ms_reply_hidden(const mg_game_vt *vt, const void *obs, const mg_search_params *p,
                    const mg_det_params *d, mg_rng *rng, mg_action *plan, int *plan_len,
                    mg_search_stats *stats, char *err);

/* mg_search_ismcts_reuse's kernel (mg_search_ismcts.c), after mg_search_hidden's checks. */
int ms_ismcts_reuse(const mg_game_vt *vt, const void *obs, const mg_search_params *p,
                    const mg_det_params *d, mg_ismcts_tree *tree, mg_rng *rng, mg_action *plan,
                    int *plan_len, mg_search_stats *stats, char *err);

/* mg_search_reuse's kernel (mg_search_mcts.c), after mg_search's checks: `p` is complete,
 * `stats` is not NULL and cleared. */
int ms_mcts_reuse(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                  mg_search_tree *tree, mg_rng *rng, mg_action *plan, int *plan_len,
                  mg_search_stats *stats);

/* One edge of an MCTS root: the action, its visits and its mean reward in [0, 1] from the
 * view of the player to act at the root. */
typedef struct ms_root_edge {
    mg_action a;
    long visits;
    double mean;
} ms_root_edge;

/* mg_search_mcts (p complete, as the dispatcher passes it) that also reports the root's
 * visited edges, up to max_roots of them, into roots and their count into *nroots (when
 * nroots is not NULL): what PIMC's VISITS combine adds up over its trees. */
int ms_mcts_roots(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                  mg_rng *rng, mg_action *plan, int *plan_len, mg_search_stats *stats,
                  ms_root_edge *roots, int max_roots, int *nroots);

/* mg_determinize with a text in err when the game does not offer strategy `mode`
 * (mg_search_hidden.c, with the rest the determinized searches share). */
int ms_det_sample(const mg_game_vt *vt, const void *obs, int mode, mg_rng *rng, void *out,
                  char *err);

/* msg into err (when err is not NULL); returns MG_ERR_CONFIG. */
int ms_det_error(char *err, const char *msg);

/* Flags of ms_actions. */
#define MS_PRUNE 1 /* apply vt->prune (if the game has one) */
#define MS_SORT 2  /* stable sort by vt->rate, highest first (unless p->legal_order) */

/* The search's action list at st: the legal actions without END_TURN unless it is the only
 * one or p->early_end is set, then pruned (MS_PRUNE and p->prune) and sorted (MS_SORT).
 * Returns the count (0 only in a terminal state). */
int ms_actions(const mg_game_vt *vt, const void *st, const mg_search_params *p, int flags,
               mg_action *out);

/* ms_actions(MS_PRUNE | MS_SORT) ordered only as far as a tree needs it at first: the k
 * best (k <= MS_TOP_MAX) in the sorted list's order, then the others in list order, with
 * rates[i] the rating of out[i] for i in [*sorted, n). *sorted is the length of the ordered
 * prefix (n when the list is all in order: unrated, legal_order, or no more than k).
 * ms_sort_rated(out + *sorted, rates + *sorted, n - *sorted) then completes the order of
 * ms_actions(MS_PRUNE | MS_SORT): the same actions in the same order, ties included. A
 * tree node generates its list when first revisited but most expand one or two edges, so
 * most lists are never sorted past their first few. */
#define MS_TOP_MAX 16
int ms_actions_top(const mg_game_vt *vt, const void *st, const mg_search_params *p, int k,
                   mg_action *out, int *rates, int *sorted);
void ms_sort_rated(mg_action *acts, const int *rates, int n);

/* 1 if action a may be taken at st as a genome's gene (OEP, EMCTS): legal, and END_TURN
 * only when nothing else is legal (unless early_end). */
static inline int ms_gene_allowed(const mg_game_vt *vt, const void *st, mg_action a, int early_end)
{
    if (vt->is_end_turn(a) && !early_end) {
        mg_action acts[MG_MAX_ACTIONS];
        return vt->legal(st, acts) == 1;
    }
    return vt->check(st, a) == MG_OK;
}

/* Drop END_TURN from a legal list unless it is the only action (or early_end); returns the
 * new count. */
int ms_filter_end(const mg_game_vt *vt, mg_action *acts, int n, int early_end);

/* The evaluation every kernel uses: the game's, or the network p->eval_net's
 * (mg_eval_net.h; checked against the game by mg_search and mg_search_hidden). */
static inline double ms_evaluate(const mg_game_vt *vt, const mg_search_params *p, const void *st,
                                 int player)
{
    return p->eval_net ? mg_net_evaluate(p->eval_net, vt, st, player) : vt->evaluate(st, player);
}

/* Reward in [0, 1] for a raw evaluation. */
static inline double ms_norm(const mg_search_params *p, double v)
{
    return (v + p->value_scale) / (2.0 * p->value_scale);
}

/* 1 if the plan is over after applying `a` to reach st (END_TURN applied or game over). */
static inline int ms_turn_over(const mg_game_vt *vt, const void *st, mg_action a)
{
    return vt->is_end_turn(a) || vt->terminal(st, NULL);
}

/* Append END_TURN (from the legal list at st, the state after plan[0..len)) unless the
 * plan already ended the turn or the game. Returns the new length; st is advanced. */
int ms_force_end(const mg_game_vt *vt, void *st, mg_rng *rng, mg_action *plan, int len);

/* A whole turn and its value (the mover's heuristic at its end). */
typedef struct ms_turn {
    double value;
    int len;
    mg_action plan[MG_SEARCH_MAX_PLAN];
} ms_turn;

/* Greedy turn's search (mg_search_greedy_turn, the same budget and stats), keeping the k
 * best turns it evaluated in top[0..k), the highest value first, each ending with END_TURN
 * unless the game ends. Returns how many (at least 1), or minus an MG_ERR_* code. */
int ms_greedy_turn_top(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                       mg_rng *rng, ms_turn *top, int k, mg_search_stats *stats);

/* Complete plan[0..len) from st (the state after it) with greedy action until END_TURN or
 * the end of the game. Returns the new length. st is advanced. */
int ms_complete_greedy(const mg_game_vt *vt, void *st, const mg_search_params *p, mg_rng *rng,
                       mg_action *plan, int len, long *evals);

/* The end of a tree search's plan whose path stopped before the end of the turn (st, the
 * state after plan[0..len), not terminal checked here): greedy completion (p->complete), or
 * END_TURN at once as the reference. Returns the new length. st is advanced. */
int ms_complete_plan(const mg_game_vt *vt, void *st, const mg_search_params *p, mg_rng *rng,
                     mg_action *plan, int len, long *evals);

/* p->forced (mg_search.h): 1 with the plan written when st leaves its mover no choice for
 * the rest of the turn, else 0. */
int ms_forced(const mg_game_vt *vt, const void *st, mg_rng *rng, mg_action *plan,
              int *plan_len);

/* Number of actions a greedy (rating) playout makes before END_TURN, from st (unchanged):
 * the number of actions in the rest of the turn. */
int ms_turn_length(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                   mg_rng *rng);

/* 1 if the rollout policy `policy` steps by groups (vt->legal_groups, vt->group_legal)
 * rather than by whole legal lists: META and EGREEDY on a game that has them. */
int ms_grouped(const mg_game_vt *vt, int policy);

/* mg_rollout for `depth` turns whose first step uses the legal list acts[0..n) of st when
 * n >= 0, else, when ms_grouped, its groups groups[0..ng) (vt->legal_groups) when ng >= 0.
 * acts and groups have room for MG_MAX_ACTIONS and are overwritten. */
double ms_rollout_from(const mg_game_vt *vt, void *st, const mg_search_params *p, int player,
                       mg_rng *rng, mg_action *acts, int n, int *groups, int ng, int depth);

/* The END_TURN action among the legal actions at st (a state that is not terminal). */
mg_action ms_end_action(const mg_game_vt *vt, const void *st);

/* The thesis's gen_moves (spec/cards.md §8.2): the moves of the move tree of st, depth first
 * on clones: each prefix followed by END_TURN first, then its children in legal order; a
 * move that wins the game ends with the winning action. At most `max` moves, each at most
 * `room` actions; with `prune`, a child whose state was already reached is skipped.
 * visit(ctx, move, len) is called for each; returns their number, or -1 (MG_ERR_NOMEM). */
typedef void (*ms_move_visit)(void *ctx, const mg_action *move, int len);
long ms_gen_moves(const mg_game_vt *vt, const void *st, long max, int room, int prune,
                  mg_rng *rng, ms_move_visit visit, void *ctx);

/* A random move of the move tree of st (the first p->max_moves, p->transpositions prunes),
 * or a longest one when `longest`: written to move[0..), at most `room` actions; returns
 * its length, or -1 (MG_ERR_NOMEM). *generated: the moves generated (may be NULL). */
int ms_random_move(const mg_game_vt *vt, const void *st, const mg_search_params *p, int longest,
                   int room, mg_rng *rng, mg_action *move, long *generated);

/* The simulation state of a thesis player: a fresh determinization of `st` for `observer`
 * (when `det` is set: st is a full state reached from a determinization, observed again
 * and sampled anew), else a copy of st. */
void ms_resample(const mg_game_vt *vt, const void *st, int observer, int det, mg_rng *rng,
                 void *out);

/* Ask for transparent huge pages over the 2 MB-aligned part of a large arena just
 * allocated (p may be NULL; no effect where the system has none). A tree or table that
 * grows to tens of MB is touched at random: with 4 KB pages nearly every access misses
 * the TLB and every new page faults. */
void ms_huge_pages(void *p, size_t bytes);

/* Smallest power of two >= n (n >= 1). */
unsigned long ms_pow2(unsigned long n);

/* A node table's slot (MCTS's states, ISMCTS's information sets, by their hash): open
 * addressing with linear probing in a power-of-two table (mask = slots - 1), key 0 an empty
 * slot. Its users stop adding at 70% full, so a probe always ends. */
typedef struct ms_slot {
    uint64_t key;
    int32_t node;
} ms_slot;

/* The first slot a probe for key h looks at. */
static inline unsigned long ms_slot_home(uint64_t h, unsigned long mask)
{
    return (unsigned long)(h ^ (h >> 29)) & mask;
}

/* The slot holding key h, or else the empty slot where h goes. */
static inline unsigned long ms_slot_probe(const ms_slot *tt, unsigned long mask, uint64_t h)
{
    unsigned long i = ms_slot_home(h, mask);
    while (tt[i].key && tt[i].key != h)
        i = (i + 1) & mask;
    return i;
}

/* The node stored under key h, -1 for none. */
static inline int ms_slot_find(const ms_slot *tt, unsigned long mask, uint64_t h)
{
    unsigned long i = ms_slot_probe(tt, mask, h);
    return tt[i].key ? tt[i].node : -1;
}

/* A table of `slots` slots (a power of two, larger than old's) holding every entry of the
 * table `old` (mask old_mask); NULL if out of memory (old is unchanged either way). */
ms_slot *ms_slots_rehash(const ms_slot *old, unsigned long old_mask, unsigned long slots);

/* Slots of a transposition table for a tree of at most `nodes` nodes that a search with
 * time budget p->budget_ms fills at about `per_ms` nodes per millisecond: twice what it can
 * fill, a power of two, at least 2048. Tables are touched at random, so an oversized one
 * costs page faults and cache misses on every lookup. */
unsigned long ms_table_slots(const mg_search_params *p, long nodes, long per_ms);

/* The final choice among a node's visited edges (MCTS and ISMCTS): does an edge with
 * (visits, mean) beat the best so far (bvisits, bmean)? The highest mean, or with robust
 * the most visits and then the highest mean; strict, so the first wins ties. */
static inline int ms_final_better(int robust, uint32_t visits, double mean, uint32_t bvisits,
                                  double bmean)
{
    return robust ? visits > bvisits || (visits == bvisits && mean > bmean) : mean > bmean;
}

#endif
