/* mg_search_common.c: what every search kernel shares: parameters and their defaults,
 * budgets, the node tables' rehash (MCTS's and ISMCTS's), action lists, the rollout
 * policies, rollouts, and the mg_search dispatcher. */
#define _POSIX_C_SOURCE 199309L
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "mg_search_internal.h"

/* ---- Budgets ------------------------------------------------------------------------------ */

double ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

void ms_budget_start(ms_budget *b, const mg_search_params *p)
{
    b->t0 = ms_now();
    b->deadline = p->budget_ms > 0 ? b->t0 + p->budget_ms : 0;
    b->max_iter = p->iterations > 0 ? p->iterations : 0;
}

int ms_budget_spent(const ms_budget *b, long iter)
{
    if (b->max_iter && iter >= b->max_iter)
        return MG_STOP_ITERATIONS;
    if (b->deadline > 0 && ms_now() >= b->deadline)
        return MG_STOP_TIME;
    return -1;
}

double ms_budget_progress(const ms_budget *b, long iter)
{
    double f = 0;
    if (b->max_iter)
        f = (double)iter / (double)b->max_iter;
    if (b->deadline > 0) {
        double t = (ms_now() - b->t0) / (b->deadline - b->t0);
        if (t > f)
            f = t;
    }
    return f > 1 ? 1 : f;
}

void ms_huge_pages(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1), hi = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (p && hi > lo)
        (void)madvise((void *)lo, (size_t)(hi - lo), MADV_HUGEPAGE); /* advice only */
#else
    (void)p;
    (void)bytes;
#endif
}

unsigned long ms_pow2(unsigned long n)
{
    unsigned long k = 1;
    while (k < n)
        k <<= 1;
    return k;
}

unsigned long ms_table_slots(const mg_search_params *p, long nodes, long per_ms)
{
    long want = nodes;
    if (p->budget_ms > 0 && (long)(p->budget_ms * per_ms) < want)
        want = (long)(p->budget_ms * per_ms);
    return ms_pow2((unsigned long)(want < 1024 ? 2048 : 2 * want));
}

ms_slot *ms_slots_rehash(const ms_slot *old, unsigned long old_mask, unsigned long slots)
{
    ms_slot *tt = calloc(slots, sizeof *tt);
    if (!tt)
        return NULL;
    for (unsigned long j = 0; j <= old_mask; j++)
        if (old[j].key)
            tt[ms_slot_probe(tt, slots - 1, old[j].key)] = old[j];
    return tt;
}

/* ---- Action lists ------------------------------------------------------------------------- */

int ms_filter_end(const mg_game_vt *vt, mg_action *acts, int n, int early_end)
{
    if (n <= 1 || early_end)
        return n;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!vt->is_end_turn(acts[i]))
            acts[k++] = acts[i];
    return k;
}

/* Sort keys[0..n) ascending (bottom-up merge sort; tmp holds n keys). */
static void sort_keys(uint64_t *keys, uint64_t *tmp, int n)
{
    for (int i = 1; i < n; i++) { /* insertion sort of runs of 8 */
        uint64_t k = keys[i];
        int j = i;
        if ((i & 7) == 0)
            continue;
        while ((j & 7) && keys[j - 1] > k) {
            keys[j] = keys[j - 1];
            j--;
        }
        keys[j] = k;
    }
    uint64_t *a = keys, *b = tmp;
    for (int w = 8; w < n; w *= 2) {
        for (int lo = 0; lo < n; lo += 2 * w) {
            int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                b[k++] = a[j] < a[i] ? a[j++] : a[i++];
            while (i < mid)
                b[k++] = a[i++];
            while (j < hi)
                b[k++] = a[j++];
        }
        uint64_t *t = a;
        a = b;
        b = t;
    }
    if (a != keys)
        memcpy(keys, a, (size_t)n * sizeof *keys);
}

/* Stable sort by rating, highest first: keys pack (INT32_MAX - rate, index). */
static void sort_by_rate(const mg_game_vt *vt, const void *st, mg_action *acts, int n)
{
    uint64_t keys[MG_MAX_ACTIONS], tmp[MG_MAX_ACTIONS];
    mg_action orig[MG_MAX_ACTIONS];
    for (int i = 0; i < n; i++) {
        int64_t k = (int64_t)0x7fffffff - (int64_t)vt->rate(st, acts[i]);
        keys[i] = ((uint64_t)(uint32_t)k << 32) | (uint32_t)i;
        orig[i] = acts[i];
    }
    sort_keys(keys, tmp, n);
    for (int i = 0; i < n; i++)
        acts[i] = orig[keys[i] & 0xffffffffu];
}

/* ms_actions without MS_SORT. */
static int actions_unsorted(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                            int flags, mg_action *out)
{
    int n = vt->legal(st, out);
    n = ms_filter_end(vt, out, n, p->early_end);
    if ((flags & MS_PRUNE) && p->prune && vt->prune && n > 1) {
        mg_action keep[MG_MAX_ACTIONS];
        memcpy(keep, out, (size_t)n * sizeof *out);
        int k = vt->prune(st, out, n);
        if (k > 0)
            n = k;
        else /* everything pruned: search the unpruned list rather than nothing */
            memcpy(out, keep, (size_t)n * sizeof *out);
    }
    return n;
}

int ms_actions(const mg_game_vt *vt, const void *st, const mg_search_params *p, int flags,
               mg_action *out)
{
    int n = actions_unsorted(vt, st, p, flags, out);
    if ((flags & MS_SORT) && !p->legal_order && vt->rate && n > 1)
        sort_by_rate(vt, st, out, n);
    return n;
}

int ms_actions_top(const mg_game_vt *vt, const void *st, const mg_search_params *p, int k,
                   mg_action *out, int *rates, int *sorted)
{
    int n = actions_unsorted(vt, st, p, MS_PRUNE, out);
    if (p->legal_order || !vt->rate || n <= 1 || k <= 0) {
        *sorted = n;
        return n;
    }
    if (k > MS_TOP_MAX)
        k = MS_TOP_MAX;
    /* One pass keeps the k best in sort_by_rate's order (the highest rating, the first
     * on ties: a later action enters only with a strictly higher rating). */
    int r[MG_MAX_ACTIONS], top[MS_TOP_MAX], nt = 0;
    for (int i = 0; i < n; i++) {
        int v = r[i] = vt->rate(st, out[i]);
        if (nt < k || v > r[top[nt - 1]]) {
            int j = nt < k ? nt++ : k - 1;
            while (j > 0 && v > r[top[j - 1]]) {
                top[j] = top[j - 1];
                j--;
            }
            top[j] = i;
        }
    }
    if (nt >= n) { /* all of them: the list is in order */
        mg_action orig[MS_TOP_MAX];
        for (int j = 0; j < nt; j++)
            orig[j] = out[top[j]];
        memcpy(out, orig, (size_t)nt * sizeof *out);
        *sorted = n;
        return n;
    }
    /* the k best first, then the others in list order with their ratings */
    mg_action orig[MG_MAX_ACTIONS];
    uint8_t chosen[MG_MAX_ACTIONS];
    memcpy(orig, out, (size_t)n * sizeof *out);
    memset(chosen, 0, (size_t)n);
    for (int j = 0; j < nt; j++) {
        out[j] = orig[top[j]];
        chosen[top[j]] = 1;
    }
    int m = nt;
    for (int i = 0; i < n; i++)
        if (!chosen[i]) {
            out[m] = orig[i];
            rates[m++] = r[i];
        }
    *sorted = nt;
    return n;
}

void ms_sort_rated(mg_action *acts, const int *rates, int n)
{
    uint64_t keys[MG_MAX_ACTIONS], tmp[MG_MAX_ACTIONS];
    mg_action orig[MG_MAX_ACTIONS];
    for (int i = 0; i < n; i++) { /* the keys of sort_by_rate */
        int64_t k = (int64_t)0x7fffffff - (int64_t)rates[i];
        keys[i] = ((uint64_t)(uint32_t)k << 32) | (uint32_t)i;
        orig[i] = acts[i];
    }
    sort_keys(keys, tmp, n);
    for (int i = 0; i < n; i++)
        acts[i] = orig[keys[i] & 0xffffffffu];
}

/* ---- Policies ----------------------------------------------------------------------------- */

static int has_groups(const mg_game_vt *vt)
{
    return vt->version >= 2 && vt->action_groups != NULL;
}

/* Index in acts[] of the best-rated action among idx[0..k) (among acts[0..k) when idx is
 * NULL), the first on ties. */
static int best_rated(const mg_game_vt *vt, const void *st, const mg_action *acts,
                      const int *idx, int k)
{
    int best = idx ? idx[0] : 0;
    if (!vt->rate)
        return best;
    int bv = vt->rate(st, acts[best]);
    for (int i = 1; i < k; i++) {
        int at = idx ? idx[i] : i, v = vt->rate(st, acts[at]);
        if (v > bv) {
            bv = v;
            best = at;
        }
    }
    return best;
}

/* META / EGREEDY: choose unit or card actions first (card first with probability p_card),
 * then one group of that class uniformly, then within the group the best-rated action
 * with probability 1 - eps (EGREEDY) or a uniform one. This is the reference's
 * RandomHeuristicAI, which picks one unit's or one hand card's actions at random. */
static mg_action choose_meta(const mg_game_vt *vt, const void *st, const mg_action *acts,
                             int n, const mg_search_params *p, int greedy_ok, mg_rng *rng)
{
    /* runs of one group; distinct groups per class (unit 0, card 1): value, runs, first run */
    int rstart[MG_MAX_ACTIONS + 1], rgroup[MG_MAX_ACTIONS], idx[MG_MAX_ACTIONS];
    int gval[2][MG_MAX_ACTIONS], gruns[2][MG_MAX_ACTIONS];
    int grun[2][MG_MAX_ACTIONS], ng[2] = {0, 0}, runs = 0;
    if (has_groups(vt)) {
        runs = vt->action_groups(st, acts, n, rstart, rgroup);
    } else { /* one group of everything but END_TURN */
        for (int i = 0; i < n; i++) {
            int g = vt->is_end_turn(acts[i]) ? 0 : MG_GROUP_UNIT;
            if (runs == 0 || rgroup[runs - 1] != g) {
                rstart[runs] = i;
                rgroup[runs++] = g;
            }
        }
        rstart[runs] = n;
    }
    for (int r = 0; r < runs; r++) {
        int g = rgroup[r];
        if (!g)
            continue;
        int c = MG_GROUP_IS_CARD(g), j = 0;
        while (j < ng[c] && gval[c][j] != g)
            j++;
        if (j == ng[c]) {
            gval[c][j] = g;
            gruns[c][j] = 0;
            grun[c][j] = r;
            ng[c]++;
        }
        gruns[c][j]++;
    }
    if (ng[0] + ng[1] == 0) {
        for (int i = 0; i < n; i++)
            if (vt->is_end_turn(acts[i]))
                return acts[i];
        return acts[0];
    }
    int cards_first = mg_rng_double_inline(rng) < p->p_card;
    int c = (cards_first && ng[1]) || !ng[0];
    int j = (int)mg_rng_below_inline(rng, (uint32_t)ng[c]);
    int k = 0;
    if (gruns[c][j] == 1) { /* one run: its members are consecutive */
        for (int i = rstart[grun[c][j]]; i < rstart[grun[c][j] + 1]; i++)
            idx[k++] = i;
    } else {
        for (int r = grun[c][j]; r < runs; r++)
            if (rgroup[r] == gval[c][j])
                for (int i = rstart[r]; i < rstart[r + 1]; i++)
                    idx[k++] = i;
    }
    if (greedy_ok && mg_rng_double_inline(rng) >= p->epsilon)
        return acts[best_rated(vt, st, acts, idx, k)];
    return acts[idx[mg_rng_below_inline(rng, (uint32_t)k)]];
}

/* RAP_GREEDY (spec/cards.md §8.6): an action that wins the game at once (tried on a clone:
 * the game's own rules say what lethal is), else with probability 0.9 a uniform action
 * other than END_TURN, else END_TURN. */
static mg_action choose_rap_greedy(const mg_game_vt *vt, const void *st, const mg_action *acts,
                                   int n, mg_rng *rng)
{
    int me = vt->current(st), end = -1, others = 0, winner;
    ms_state x;
    for (int i = 0; i < n; i++) {
        if (vt->is_end_turn(acts[i])) {
            end = i;
            continue;
        }
        others++;
        memcpy(x.b, st, vt->state_size);
        if (vt->apply(x.b, acts[i], rng) == MG_OK && vt->terminal(x.b, &winner) && winner == me)
            return acts[i];
    }
    if (end >= 0 && (!others || mg_rng_double_inline(rng) >= 0.9))
        return acts[end];
    for (;;) {
        int i = (int)mg_rng_below_inline(rng, (uint32_t)n);
        if (i != end)
            return acts[i];
    }
}

int ms_grouped(const mg_game_vt *vt, int policy)
{
    return (policy == MG_POLICY_META || policy == MG_POLICY_EGREEDY) && vt->version >= 4 &&
           vt->legal_groups != NULL && vt->group_legal != NULL;
}

/* choose_meta from the groups g[0..ng) of st (vt->legal_groups) instead of the legal list:
 * the same classes, the same group order and the same draws, so the same choice; only the
 * chosen group's actions are enumerated (into buf). */
static mg_action choose_grouped(const mg_game_vt *vt, const void *st, const int *g, int ng,
                                const mg_search_params *p, int greedy_ok, mg_rng *rng,
                                mg_action *buf)
{
    if (ng == 0) /* only END_TURN: mg_policy_choose's n == 1 */
        return vt->group_legal(st, 0, buf) > 0 ? buf[0] : 0;
    int ngc[2] = {0, 0}; /* groups per class: unit 0, card 1 */
    for (int i = 0; i < ng; i++)
        ngc[1] += MG_GROUP_IS_CARD(g[i]);
    ngc[0] = ng - ngc[1];
    int cards_first = mg_rng_double_inline(rng) < p->p_card;
    int c = (cards_first && ngc[1]) || !ngc[0];
    int j = (int)mg_rng_below_inline(rng, (uint32_t)ngc[c]), i = 0;
    for (;; i++) /* the j-th group of class c */
        if (MG_GROUP_IS_CARD(g[i]) == c && j-- == 0)
            break;
    int k = vt->group_legal(st, g[i], buf);
    if (greedy_ok && mg_rng_double_inline(rng) >= p->epsilon)
        return buf[best_rated(vt, st, buf, NULL, k)];
    return buf[mg_rng_below_inline(rng, (uint32_t)k)];
}

mg_action mg_policy_choose(const mg_game_vt *vt, const void *st, const mg_action *acts, int n,
                           const mg_search_params *p, int policy, mg_rng *rng)
{
    if (n == 1)
        return acts[0];
    switch (policy) {
    case MG_POLICY_META: return choose_meta(vt, st, acts, n, p, 0, rng);
    case MG_POLICY_EGREEDY: return choose_meta(vt, st, acts, n, p, 1, rng);
    case MG_POLICY_GREEDY: {
        int idx[MG_MAX_ACTIONS], k = 0;
        for (int i = 0; i < n; i++)
            if (!vt->is_end_turn(acts[i]))
                idx[k++] = i;
        return k ? acts[best_rated(vt, st, acts, idx, k)] : acts[0];
    }
    case MG_POLICY_RAP: return acts[mg_rng_below_inline(rng, (uint32_t)n)];
    case MG_POLICY_RAP_GREEDY: return choose_rap_greedy(vt, st, acts, n, rng);
    default: { /* uniform; END_TURN appears at most once, so rejection is uniform */
        int others = 0;
        for (int i = 0; i < n && !others; i++)
            others = !vt->is_end_turn(acts[i]);
        if (!others)
            return acts[0];
        for (;;) {
            mg_action a = acts[mg_rng_below_inline(rng, (uint32_t)n)];
            if (!vt->is_end_turn(a))
                return a;
        }
    }
    }
}

double ms_rollout_from(const mg_game_vt *vt, void *st, const mg_search_params *p, int player,
                       mg_rng *rng, mg_action *acts, int n, int *groups, int ng, int depth)
{
    int turns = 0;
    if (ms_grouped(vt, p->policy)) { /* one group enumerated per step */
        int greedy_ok = p->policy == MG_POLICY_EGREEDY;
        int (*apply)(void *, mg_action, mg_rng *) = vt->apply_legal ? vt->apply_legal : vt->apply;
        for (int steps = 0; turns < depth && steps < 4096; steps++) {
            mg_action a;
            if (steps == 0 && n >= 0) {
                if (n == 0)
                    break;
                a = mg_policy_choose(vt, st, acts, n, p, p->policy, rng);
            } else {
                if (steps > 0 || ng < 0) {
                    if (vt->terminal(st, NULL))
                        break;
                    ng = vt->legal_groups(st, groups);
                }
                a = choose_grouped(vt, st, groups, ng, p, greedy_ok, rng, acts);
            }
            if (apply(st, a, rng) != MG_OK)
                break;
            if (vt->is_end_turn(a))
                turns++;
        }
        return ms_norm(p, ms_evaluate(vt, p, st, player));
    }
    for (int steps = 0; turns < depth && steps < 4096; steps++) {
        if (steps > 0 || n < 0)
            n = vt->legal(st, acts);
        if (n <= 0)
            break;
        mg_action a = mg_policy_choose(vt, st, acts, n, p, p->policy, rng);
        if (vt->apply(st, a, rng) != MG_OK)
            break;
        if (vt->is_end_turn(a))
            turns++;
    }
    return ms_norm(p, ms_evaluate(vt, p, st, player));
}

mg_search_params ms_game_params(const mg_game_vt *vt, const mg_search_params *p)
{
    mg_search_params q = *p;
    if (q.value_scale == 0)
        q.value_scale = vt->value_scale;
    return q;
}

double mg_rollout(const mg_game_vt *vt, void *st, const mg_search_params *p, int player,
                  mg_rng *rng)
{
    mg_action acts[MG_MAX_ACTIONS];
    int groups[MG_MAX_ACTIONS];
    mg_search_params q = ms_game_params(vt, p);
    return ms_rollout_from(vt, st, &q, player, rng, acts, -1, groups, -1, q.rollout_turns);
}

/* ---- Parameters --------------------------------------------------------------------------- */

int mg_search_defaults(int algo, mg_search_params *p)
{
    memset(p, 0, sizeof *p);
    p->algo = algo;
    p->budget_ms = 1000;
    p->iterations = 0;
    p->value_scale = 0; /* the game's (mg_game_vt.value_scale) */
    p->prune = 1;
    p->early_end = 0;
    p->policy = algo == MG_ALGO_POLICY ? MG_POLICY_RANDOM : MG_POLICY_EGREEDY;
    p->epsilon = 0.5;
    p->p_card = 0.25;
    p->rollout_turns = 1;
    p->c = 1.0 / sqrt(2.0);
    p->transpositions = 1;
    p->bridge_burning = 0;
    p->collapse_k = 0;
    p->complete = 1;
    p->max_nodes = 0;
    p->threads = 1;
    p->population = 100;
    p->survival = 0.5;
    p->mutation = 0.1;
    p->history = 1;
    p->fitness_rollouts = 0;
    p->islands = 1;
    p->migration_interval = 20;
    p->migrants = 5;
    p->arms = 100;
    p->select = MG_SELECT_MAX;
    p->moves = MG_MOVES_SAMPLE;
    p->max_moves = 10000;
    p->longest = 0;
    p->post = MG_POST_NONE;
    p->branching = 10;
    p->tree_depth = 0;
    p->horizon = 0;
    p->model_k = 10;
    p->backup_max = 0;
    p->forced = 0;
    p->solve = 0;
    p->widen_k = 0;
    p->widen_alpha = 0.5;
    p->reply_share = 0.5;
    p->reply_quick = 0;
    p->turn_widen = 0;
    p->reply_widen = 0;
    if (algo == MG_ALGO_UCB || algo == MG_ALGO_UCT) { /* the thesis's scale and setting */
        p->c = sqrt(2.0);
        p->policy = MG_POLICY_RAP;
        p->rollout_turns = 1000;
    }
    if (algo == MG_ALGO_RMP || algo == MG_ALGO_UCT)
        p->transpositions = 0;
    if (algo == MG_ALGO_EMCTS) /* bots/agents.py documents each setting's source */
        p->c = 0.1;
    if (algo == MG_ALGO_REPLY)
        p->arms = 16;
    if (algo < 0 || algo >= MG_ALGO_COUNT) {
        p->algo = MG_ALGO_MCTS;
        return MG_ERR_CONFIG;
    }
    return MG_OK;
}

static int config_error(char *err, const char *msg)
{
    if (err)
        snprintf(err, MG_ERR_LEN, "%s", msg);
    return MG_ERR_CONFIG;
}

static int unit_interval(double v) { return v >= 0 && v <= 1; }


int mg_search_check(const mg_search_params *p, char *err)
{
    if (p->algo < 0 || p->algo >= MG_ALGO_COUNT)
        return config_error(err, "unknown search algorithm");
    if (!(p->budget_ms >= 0) || p->iterations < 0)
        return config_error(err, "budget_ms and iterations must be >= 0");
    if ((p->algo == MG_ALGO_MCTS || p->algo == MG_ALGO_OEP || p->algo == MG_ALGO_UCB ||
         p->algo == MG_ALGO_UCT || p->algo == MG_ALGO_EMCTS) &&
        p->budget_ms <= 0 && p->iterations <= 0)
        return config_error(err, "this search needs a time or an iteration budget");
    if (!(p->value_scale >= 0))
        return config_error(err, "value_scale must be >= 0 (0: the game's)");
    if (p->policy < 0 || p->policy >= MG_POLICY_COUNT)
        return config_error(err, "unknown policy");
    if (!unit_interval(p->epsilon) || !unit_interval(p->p_card))
        return config_error(err, "epsilon and p_card must be in [0, 1]");
    if (p->rollout_turns < 0 || p->rollout_turns > 1000)
        return config_error(err, "rollout_turns must be in 0..1000");
    if (!(p->c >= 0))
        return config_error(err, "c must be >= 0");
    if (p->collapse_k < -1 || p->max_nodes < 0)
        return config_error(err, "collapse_k must be >= -1 and max_nodes >= 0");
    if (p->threads < 1 || p->threads > MG_SEARCH_MAX_THREADS)
        return config_error(err, "threads must be in 1..64");
    if (p->threads > 1 && (p->bridge_burning || p->collapse_k != 0))
        return config_error(err, "threads > 1 needs bridge_burning and collapse_k off");
    if (p->population < 2 || p->population > 100000)
        return config_error(err, "population must be in 2..100000");
    if (!unit_interval(p->survival) || !unit_interval(p->mutation))
        return config_error(err, "survival and mutation must be in [0, 1]");
    if (p->fitness_rollouts < 0)
        return config_error(err, "fitness_rollouts must be >= 0");
    if (p->islands < 1 || p->islands > 64)
        return config_error(err, "islands must be in 1..64");
    if (p->migration_interval < 1 || p->migrants < 0)
        return config_error(err, "migration_interval must be >= 1 and migrants >= 0");
    if (p->arms < 1 || p->arms > 100000)
        return config_error(err, "arms must be in 1..100000");
    if (p->algo == MG_ALGO_REPLY && p->arms > 64)
        return config_error(err, "greedy reply's candidates (arms) must be in 1..64");
    if (p->select < 0 || p->select >= MG_SELECT_COUNT)
        return config_error(err, "unknown UCB selection");
    if (p->moves < 0 || p->moves >= MG_MOVES_COUNT)
        return config_error(err, "unknown way of making UCB's arms (moves)");
    if (p->post < 0 || p->post >= MG_POST_COUNT)
        return config_error(err, "unknown post-Monte-Carlo completion");
    if (p->max_moves < 1 || p->max_moves > 10000000)
        return config_error(err, "max_moves must be in 1..10000000");
    if (p->longest != 0 && p->longest != 1)
        return config_error(err, "longest must be 0 or 1");
    if (p->branching < 1 || p->branching > 100000)
        return config_error(err, "branching must be in 1..100000");
    if (p->tree_depth < 0 || p->tree_depth > 10000)
        return config_error(err, "tree_depth must be in 0..10000 (0: no limit)");
    if (p->horizon < 0 || p->horizon > MG_SEARCH_MAX_PLAN - 2)
        return config_error(err, "horizon must be in 0..62 (0: the current turn)");
    if (p->model_k < 1 || p->model_k > MG_MAX_ACTIONS)
        return config_error(err, "model_k must be in 1..1024");
    if (p->backup_max != 0 && p->backup_max != 1)
        return config_error(err, "backup_max must be 0 or 1");
    if (p->forced != 0 && p->forced != 1)
        return config_error(err, "forced must be 0 or 1");
    if (p->solve != 0 && p->solve != 1)
        return config_error(err, "solve must be 0 or 1");
    if (!(p->widen_k >= 0) || !unit_interval(p->widen_alpha))
        return config_error(err, "widen_k must be >= 0 and widen_alpha in [0, 1]");
    if (!(p->reply_share >= 0.05 && p->reply_share <= 0.95))
        return config_error(err, "reply_share must be in [0.05, 0.95]");
    if (p->reply_quick != 0 && p->reply_quick != 1)
        return config_error(err, "reply_quick must be 0 or 1");
    if (p->turn_widen != 0 && p->turn_widen != 1)
        return config_error(err, "turn_widen must be 0 or 1");
    if (p->reply_widen != 0 && p->reply_widen != 1)
        return config_error(err, "reply_widen must be 0 or 1");
    return MG_OK;
}

/* p->forced: the plan when st (a full state, or an observation whose only action ends the
 * turn) leaves no choice: the actions that are alone legal, one after the other, up to and
 * including END_TURN or the end of the game. Returns 1 with the plan written, 0 (nothing
 * written) when a choice comes first, so the kernel searches as without the parameter. */
int ms_forced(const mg_game_vt *vt, const void *st, mg_rng *rng, mg_action *plan,
              int *plan_len)
{
    mg_action acts[MG_MAX_ACTIONS];
    ms_state s;
    int len = 0, full = vt->observer(st) < 0;
    memcpy(s.b, st, vt->state_size);
    while (len < MG_SEARCH_MAX_PLAN) {
        if (vt->legal(s.b, acts) != 1)
            return 0;
        plan[len++] = acts[0];
        if (vt->is_end_turn(acts[0])) {
            *plan_len = len;
            return 1;
        }
        if (!full) /* an observation: only a lone END_TURN is taken without search */
            return 0;
        vt->apply(s.b, acts[0], rng);
        if (vt->terminal(s.b, NULL) || vt->current(s.b) != vt->current(st)) {
            *plan_len = len;
            return 1;
        }
    }
    return 0;
}

/* ---- Dispatcher --------------------------------------------------------------------------- */

typedef int (*kernel_fn)(const mg_game_vt *, const void *, const mg_search_params *, mg_rng *,
                         mg_action *, int *, mg_search_stats *);

/* What mg_search and mg_search_reuse check before a search: clears *stats and *plan_len;
 * MG_OK, or the error (message in err). */
static int search_begin(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                        mg_search_stats *stats, int *plan_len, char *err)
{
    memset(stats, 0, sizeof *stats);
    *plan_len = 0;
    int rc = mg_search_check(p, err);
    if (rc == MG_OK && p->eval_net)
        rc = mg_net_check(p->eval_net, vt, err);
    if (rc != MG_OK)
        return rc;
    if (vt->state_size > MG_MAX_STATE_SIZE)
        return config_error(err, "the game's state is larger than MG_MAX_STATE_SIZE");
    if (vt->terminal(st, NULL))
        return MG_ERR_TERMINAL;
    if (vt->observer(st) >= 0 && p->algo != MG_ALGO_UCB && p->algo != MG_ALGO_UCT)
        return config_error(err, "this search needs a full state: determinize the observation "
                                 "(only ucb and uct sample one per simulation)");
    return MG_OK;
}

/* The end of a search, kept or not: its time, the value of a forced plan, and on failure
   no plan and the reason in `err`. */
static int search_end(int rc, double t0, double value, mg_search_stats *stats, int *plan_len,
                      char *err)
{
    stats->elapsed_ms = ms_now() - t0;
    stats->value = value;
    if (rc != MG_OK) {
        *plan_len = 0;
        if (err)
            snprintf(err, MG_ERR_LEN, "%s", mg_errstr(rc));
    }
    return rc;
}

int mg_search_reuse(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                    mg_search_tree *tree, mg_rng *rng, mg_action *plan, int *plan_len,
                    mg_search_stats *stats, char *err)
{
    if (!tree)
        return mg_search(vt, st, p, rng, plan, plan_len, stats, err);
    mg_search_stats local;
    if (!stats)
        stats = &local;
    int rc = search_begin(vt, st, p, stats, plan_len, err);
    if (rc != MG_OK)
        return rc;
    if (p->algo != MG_ALGO_MCTS || p->threads != 1 || p->bridge_burning || p->collapse_k != 0)
        return config_error(err, "a kept tree is for MCTS on one thread, without bridge burning "
                                 "or collapse");
    mg_search_params q = ms_game_params(vt, p);
    double t0 = ms_now();
    if (p->forced && ms_forced(vt, st, rng, plan, plan_len))
        return search_end(MG_OK, t0, 0.5, stats, plan_len, err);
    rc = ms_mcts_reuse(vt, st, &q, tree, rng, plan, plan_len, stats);
    return search_end(rc, t0, stats->value, stats, plan_len, err);
}

int mg_search(const mg_game_vt *vt, const void *st, const mg_search_params *p, mg_rng *rng,
              mg_action *plan, int *plan_len, mg_search_stats *stats, char *err)
{
    static const kernel_fn kernels[MG_ALGO_COUNT] = {
        mg_search_policy, mg_search_greedy_action, mg_search_greedy_turn,
        mg_search_mcts,   mg_search_oep,           mg_search_ucb,
        mg_search_rmp,    mg_search_uct,           mg_search_emcts,
        mg_search_reply,
    };
    mg_search_stats local;
    if (!stats)
        stats = &local;
    int rc = search_begin(vt, st, p, stats, plan_len, err);
    if (rc != MG_OK)
        return rc;
    mg_search_params q = ms_game_params(vt, p);
    double t0 = ms_now();
    if (p->forced && ms_forced(vt, st, rng, plan, plan_len))
        return search_end(MG_OK, t0, 0.5, stats, plan_len, err);
    rc = kernels[p->algo](vt, st, &q, rng, plan, plan_len, stats);
    return search_end(rc, t0, stats->value, stats, plan_len, err);
}
