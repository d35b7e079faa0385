/* mg_search_greedy.c: the policy agents (random, random meta, epsilon-greedy, greedy
 * rating), greedy action (one ply on the heuristic) and greedy turn (depth-first over the
 * whole turn with a transposition table). */
#include <float.h>
#include <limits.h>
#include <stdlib.h>

#include "mg_search_internal.h"

/* Append END_TURN (from the legal list) if the plan is full without one. */
int ms_force_end(const mg_game_vt *vt, void *st, mg_rng *rng, mg_action *plan, int len)
{
    mg_action acts[MG_MAX_ACTIONS];
    if (len > 0 && ms_turn_over(vt, st, plan[len - 1]))
        return len;
    int n = vt->legal(st, acts);
    for (int i = 0; i < n; i++)
        if (vt->is_end_turn(acts[i])) {
            vt->apply(st, acts[i], rng);
            plan[len++] = acts[i];
            break;
        }
    return len;
}

int mg_search_policy(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                     mg_rng *rng, mg_action *plan, int *plan_len, mg_search_stats *stats)
{
    mg_action acts[MG_MAX_ACTIONS];
    ms_state s;
    int len = 0;
    memcpy(s.b, st, vt->state_size);
    while (len < MG_SEARCH_MAX_PLAN - 1) {
        int n = vt->legal(s.b, acts);
        if (n <= 0)
            break;
        mg_action a = mg_policy_choose(vt, s.b, acts, n, p, p->policy, rng);
        if (vt->apply(s.b, a, rng) != MG_OK)
            break;
        plan[len++] = a;
        if (ms_turn_over(vt, s.b, a))
            break;
    }
    len = ms_force_end(vt, s.b, rng, plan, len);
    *plan_len = len;
    stats->iterations = len;
    stats->stop = MG_STOP_DONE;
    return MG_OK;
}

/* One greedy-action step at st: the pruned action whose result evaluates best for the
 * mover, ties broken uniformly (reservoir sampling). */
static mg_action greedy_step(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                             mg_rng *rng, long *evals, double *value)
{
    mg_action acts[MG_MAX_ACTIONS];
    ms_state nx;
    int n = ms_actions(vt, st, p, MS_PRUNE, acts);
    if (n == 1)
        return acts[0];
    int me = vt->current(st), ties = 0;
    double best = -DBL_MAX;
    mg_action choice = acts[0];
    for (int i = 0; i < n; i++) {
        memcpy(nx.b, st, vt->state_size);
        if (vt->apply(nx.b, acts[i], rng) != MG_OK)
            continue;
        double v = ms_evaluate(vt, p, nx.b, me);
        (*evals)++;
        if (v > best) {
            best = v;
            choice = acts[i];
            ties = 1;
        } else if (v == best && mg_rng_below(rng, (uint32_t)++ties) == 0) {
            choice = acts[i];
        }
    }
    if (value)
        *value = best;
    return choice;
}

int ms_complete_greedy(const mg_game_vt *vt, void *st, const mg_search_params *p, mg_rng *rng,
                       mg_action *plan, int len, long *evals)
{
    while (len < MG_SEARCH_MAX_PLAN - 1 && !vt->terminal(st, NULL)) {
        mg_action a = greedy_step(vt, st, p, rng, evals, NULL);
        if (vt->apply(st, a, rng) != MG_OK)
            break;
        plan[len++] = a;
        if (vt->is_end_turn(a))
            break;
    }
    return ms_force_end(vt, st, rng, plan, len);
}

int ms_complete_plan(const mg_game_vt *vt, void *st, const mg_search_params *p, mg_rng *rng,
                     mg_action *plan, int len, long *evals)
{
    if (vt->terminal(st, NULL))
        return len;
    if (p->complete)
        return ms_complete_greedy(vt, st, p, rng, plan, len, evals);
    mg_action acts[MG_MAX_ACTIONS];
    int n = vt->legal(st, acts);
    for (int i = 0; i < n; i++)
        if (vt->is_end_turn(acts[i])) {
            plan[len++] = acts[i];
            break;
        }
    return len;
}

int mg_search_greedy_action(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                            mg_rng *rng, mg_action *plan, int *plan_len,
                            mg_search_stats *stats)
{
    ms_state s;
    memcpy(s.b, st, vt->state_size);
    *plan_len = ms_complete_greedy(vt, s.b, p, rng, plan, 0, &stats->evaluations);
    stats->iterations = *plan_len;
    stats->value = ms_evaluate(vt, p, s.b, vt->current(st));
    stats->stop = MG_STOP_DONE;
    return MG_OK;
}

int ms_turn_length(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                   mg_rng *rng)
{
    mg_action acts[MG_MAX_ACTIONS];
    ms_state s;
    mg_rng r = *rng; /* a copy: measuring the turn must not shift the caller's stream */
    int k = 0;
    memcpy(s.b, st, vt->state_size);
    for (int steps = 0; steps < MG_SEARCH_MAX_PLAN; steps++) {
        int n = vt->legal(s.b, acts);
        if (n <= 0)
            break;
        mg_action a = mg_policy_choose(vt, s.b, acts, n, p, MG_POLICY_GREEDY, &r);
        if (vt->is_end_turn(a) || vt->apply(s.b, a, &r) != MG_OK)
            break;
        k++;
        if (vt->terminal(s.b, NULL))
            break;
    }
    return k;
}

/* ---- Greedy turn -------------------------------------------------------------------------- */

/* Children are made in batches; the table slots of a batch are prefetched before the
 * first lookup, which hides most of the table's cache misses. */
#define GT_BATCH 8
#if defined(__GNUC__)
#define GT_PREFETCH(p) __builtin_prefetch(p)
#define GT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define GT_UNLIKELY(x) (x)
#define GT_PREFETCH(p) ((void)(p))
#endif

typedef struct gt_ctx {
    const mg_game_vt *vt;
    const mg_search_params *p;
    mg_rng *rng;
    ms_budget budget;
    int root;                     /* the player to act at the root */
    uint32_t *tt;                 /* tags (high hash bits | 1) of states seen; 0 = empty */
    unsigned long tmask, tcount, tlimit;
    unsigned char *batches;       /* GT_BATCH child states per depth */
    mg_action *lists;             /* one action list per depth */
    mg_action path[MG_SEARCH_MAX_PLAN];
    mg_action best[MG_SEARCH_MAX_PLAN];
    int best_len;
    double best_v;
    long outcomes, evals, visits;
    int stop;                     /* MG_STOP_* once the budget is spent, else -1 */
    ms_turn *top;                 /* ms_greedy_turn_top: the k best turns so far, or NULL */
    int k, ntop, worst;           /* its room, its count, the index of its lowest value */
    int width;                    /* this pass's actions per step (INT_MAX: all, no widening) */
    long dropped;                 /* the actions this pass left out (width) */
} gt_ctx;

static unsigned long gt_slot(const gt_ctx *c, uint64_t h)
{
    return (unsigned long)(h ^ (h >> 29)) & c->tmask;
}

/* 1 if a state with hash h was seen; else record it (unless the table is full) and
 * return 0. The slot comes from the low bits, the tag from the high ones. */
static int gt_seen(gt_ctx *c, uint64_t h)
{
    uint32_t tag = (uint32_t)(h >> 32) | 1u;
    unsigned long i = gt_slot(c, h);
    while (c->tt[i]) {
        if (c->tt[i] == tag)
            return 1;
        i = (i + 1) & c->tmask;
    }
    if (c->tcount < c->tlimit) {
        c->tt[i] = tag;
        c->tcount++;
    }
    return 0;
}

/* Keep path[0..len), valued v, among the k best turns: the caller checked that there is
 * room or that v beats the lowest kept, which it then replaces. */
static void gt_keep(gt_ctx *c, double v, int len)
{
    int i = c->ntop < c->k ? c->ntop++ : c->worst;
    c->top[i].value = v;
    c->top[i].len = len;
    memcpy(c->top[i].plan, c->path, (size_t)len * sizeof *c->path);
    if (c->ntop == c->k) {
        c->worst = 0;
        for (int j = 1; j < c->k; j++)
            if (c->top[j].value < c->top[c->worst].value)
                c->worst = j;
    }
}

static void gt_leaf(gt_ctx *c, const void *s, int len)
{
    double v = ms_evaluate(c->vt, c->p, s, c->root);
    c->outcomes++;
    c->evals++;
    if (v > c->best_v) {
        c->best_v = v;
        c->best_len = len;
        memcpy(c->best, c->path, (size_t)len * sizeof *c->path);
    }
    if (c->top && (c->ntop < c->k || v > c->top[c->worst].value)) {
        if (c->width < INT_MAX) /* widening: a later pass finds the earlier ones' turns again */
            for (int i = 0; i < c->ntop; i++)
                if (c->top[i].len == len &&
                    !memcmp(c->top[i].plan, c->path, (size_t)len * sizeof *c->path))
                    return;
        gt_keep(c, v, len);
    }
}

/* Search below state s, reached by path[0..depth) (a widening pass: at most c->width
 * actions a step). */
static void gt_dfs(gt_ctx *c, int depth, const void *s)
{
    const mg_game_vt *vt = c->vt;
    size_t ss = vt->state_size;
    unsigned char *batch = c->batches + (size_t)depth * GT_BATCH * ss;
    mg_action *acts = c->lists + (size_t)depth * (size_t)vt->max_actions;
    int n = ms_actions(vt, s, c->p, MS_PRUNE | MS_SORT, acts);
    if (GT_UNLIKELY(n > c->width)) {
        c->dropped += n - c->width;
        n = c->width;
    }
    for (int b0 = 0; b0 < n && c->stop < 0; b0 += GT_BATCH) {
        int m = n - b0 < GT_BATCH ? n - b0 : GT_BATCH;
        uint64_t hs[GT_BATCH];
        int kind[GT_BATCH]; /* 0 illegal, 1 end of turn (leaf), 2 inner */
        for (int j = 0; j < m; j++) {
            unsigned char *nx = batch + (size_t)j * ss;
            mg_action a = acts[b0 + j];
            memcpy(nx, s, ss);
            if (vt->apply(nx, a, c->rng) != MG_OK) {
                kind[j] = 0;
            } else if (ms_turn_over(vt, nx, a) || depth + 2 >= MG_SEARCH_MAX_PLAN) {
                kind[j] = 1;
            } else {
                kind[j] = 2;
                hs[j] = vt->hash(nx);
                GT_PREFETCH(&c->tt[gt_slot(c, hs[j])]);
            }
        }
        for (int j = 0; j < m && c->stop < 0; j++) {
            const unsigned char *nx = batch + (size_t)j * ss;
            c->path[depth] = acts[b0 + j];
            if (kind[j] == 1) {
                gt_leaf(c, nx, depth + 1);
            } else if (kind[j] == 2) {
                c->visits++;
                if (gt_seen(c, hs[j]))
                    continue;
                gt_dfs(c, depth + 1, nx);
            }
            if (c->budget.max_iter || ((c->outcomes + c->visits) & 31) == 0)
                c->stop = ms_budget_spent(&c->budget, c->outcomes);
        }
    }
}

/* plan[0..len) from st as a whole turn: unless its last action is END_TURN (a plan cut by
 * the plan cap, or by the game's end), it is replayed on a copy of st and ms_force_end
 * appends END_TURN if the game goes on. Returns the new length. */
static int gt_end_turn(const mg_game_vt *vt, const void *st, mg_rng *rng, mg_action *plan,
                       int len)
{
    if (vt->is_end_turn(plan[len - 1]))
        return len;
    ms_state s;
    memcpy(s.b, st, vt->state_size);
    for (int i = 0; i < len; i++)
        vt->apply(s.b, plan[i], rng);
    return ms_force_end(vt, s.b, rng, plan, len);
}

/* The greedy-turn search into c (its top/k set or not by the caller): the best plan in
 * c->best, the stats written. */
static int gt_search(gt_ctx *c, const mg_game_vt *vt, const void *st, const mg_search_params *p,
                     mg_rng *rng, mg_search_stats *stats)
{
    c->vt = vt;
    c->p = p;
    c->rng = rng;
    c->root = vt->current(st);
    c->best_v = -DBL_MAX;
    c->stop = -1;
    c->width = INT_MAX;
    ms_budget_start(&c->budget, p);
    /* Table size: what the budget can visit (about 3M states/s), within max_nodes. */
    unsigned long cap = p->max_nodes > 0 ? (unsigned long)p->max_nodes : 1ul << 22;
    unsigned long want = cap;
    if (p->iterations > 0)
        want = (unsigned long)p->iterations * 2;
    if (p->budget_ms > 0 && (unsigned long)(p->budget_ms * 3000) < want)
        want = (unsigned long)(p->budget_ms * 3000);
    if (want > cap)
        want = cap;
    unsigned long slots = ms_pow2(want < 1024 ? 2048 : want * 2);
    c->tmask = slots - 1;
    c->tlimit = slots / 10 * 7;
    c->tt = calloc(slots, sizeof *c->tt);
    c->batches = malloc((size_t)MG_SEARCH_MAX_PLAN * GT_BATCH * vt->state_size);
    c->lists = malloc((size_t)MG_SEARCH_MAX_PLAN * (size_t)vt->max_actions * sizeof(mg_action));
    if (!c->tt || !c->batches || !c->lists) {
        free(c->tt);
        free(c->batches);
        free(c->lists);
        return MG_ERR_NOMEM;
    }
    if (p->turn_widen) {
        /* iterative widening: each pass from an empty table (a state cut short in the last
         * pass is searched wider in this one); the widths grow by half, so a pass costs
         * several times the ones before it (a turn of five steps). After width 9, or a pass
         * that left out fewer actions than half the children it made, the whole turn
         * follows at once (depth first in rating order, as without widening): the passes in
         * between would cost nearly as much each, so a search that would have exhausted the
         * turn costs little more, and one cut short has every step's best actions first */
        for (int w = 1; c->stop < 0;) {
            long made = c->outcomes + c->visits;
            memset(c->tt, 0, slots * sizeof *c->tt);
            c->tcount = 0;
            c->width = w;
            c->dropped = 0;
            gt_dfs(c, 0, st);
            if (!c->dropped)
                break;
            made = c->outcomes + c->visits - made;
            w = c->dropped * 2 < made || w >= 9 ? INT_MAX : w < 4 ? w + 1 : w + w / 2;
        }
    } else {
        gt_dfs(c, 0, st);
    }
    if (c->best_len == 0) { /* nothing evaluated (budget spent at once): complete greedily */
        ms_state s;
        memcpy(s.b, st, vt->state_size);
        c->best_len = ms_complete_greedy(vt, s.b, p, rng, c->best, 0, &c->evals);
        c->best_v = ms_evaluate(vt, p, s.b, c->root);
    }
    c->best_len = gt_end_turn(vt, st, rng, c->best, c->best_len);
    stats->iterations = c->outcomes;
    stats->evaluations = c->evals;
    stats->nodes = (long)c->tcount;
    stats->value = c->best_v;
    stats->stop = c->stop < 0 ? MG_STOP_DONE : c->stop;
    free(c->tt);
    free(c->batches);
    free(c->lists);
    c->tt = NULL;
    c->batches = NULL;
    c->lists = NULL;
    return MG_OK;
}

int mg_search_greedy_turn(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                          mg_rng *rng, mg_action *plan, int *plan_len, mg_search_stats *stats)
{
    gt_ctx c;
    memset(&c, 0, sizeof c);
    int rc = gt_search(&c, vt, st, p, rng, stats);
    if (rc == MG_OK) {
        memcpy(plan, c.best, (size_t)c.best_len * sizeof *plan);
        *plan_len = c.best_len;
    }
    return rc;
}

/* Insertion sort of the kept turns, the highest value first (ties keep their places in
 * top[], which a replacement makes other than the order found). */
static void gt_sort_top(ms_turn *top, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && top[j].value > top[j - 1].value; j--) {
            ms_turn t = top[j];
            top[j] = top[j - 1];
            top[j - 1] = t;
        }
}

int ms_greedy_turn_top(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                       mg_rng *rng, ms_turn *top, int k, mg_search_stats *stats)
{
    gt_ctx c;
    memset(&c, 0, sizeof c);
    c.top = top;
    c.k = k;
    int rc = gt_search(&c, vt, st, p, rng, stats);
    int n = c.ntop;
    if (rc == MG_OK && n == 0) { /* nothing evaluated: the completed plan is the one turn */
        top[0].value = c.best_v;
        top[0].len = c.best_len;
        memcpy(top[0].plan, c.best, (size_t)c.best_len * sizeof *c.best);
        n = 1;
    }
    for (int i = 0; i < n; i++)
        top[i].len = gt_end_turn(vt, st, rng, top[i].plan, top[i].len);
    gt_sort_top(top, n);
    return rc == MG_OK ? n : -rc;
}
