/* mg_search_ismcts.c: single-observer information-set MCTS for multi-action games: one tree
 * over the observer's information sets, a new determinization per iteration, availability
 * counts at the opponent's nodes, the multi-action negamax backup (mg_hidden.h).
 *
 * A node is an information set of the observer: states reached in different
 * determinizations share a node when the observer's observation of them is the same (the
 * transposition table is keyed by the hash of that observation). At the observer's own
 * nodes the action list depends only on what the observer sees, so it is generated once
 * and expanded in rating order, as in the MCTS kernel. At the opponent's nodes the legal
 * actions depend on the sampled hand: each iteration expands the best-rated legal action
 * that has no edge yet (the first in legal order on ties), else selects among the legal ones
 * by UCB1 with availability counts: mean + 2c sqrt(2 ln avail / visits). The opponent's
 * edges are found through one hash table keyed by (node, action). As in the MCTS kernel, an
 * action after which only END_TURN is legal takes the END_TURN along. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mg_hidden.h"
#include "mg_search_internal.h"

#define IS_MAX_DEPTH 128  /* deepest selection path */

/* Node flags. */
#define IS_TERMINAL 1 /* the information set is terminal */
#define IS_FIXED 2    /* the observer moves: one action list for every determinization */

typedef struct is_edge {
    mg_action a;     /* the action */
    uint32_t visits; /* times the edge was traversed */
    uint32_t avail;  /* opponent nodes: times the edge was legal when its node was selected from */
    uint8_t mover;   /* player who makes the action */
    uint8_t auto_end; /* 1: END_TURN follows at once (nothing else was legal), as one edge */
    double mean;     /* mean reward in [0, 1] from the mover's view */
} is_edge;

typedef struct is_node {
    uint32_t visits; /* times the node was on an iteration's path */
    int32_t edges;   /* fixed nodes: first of n contiguous edges, -1 until generated */
    int16_t n;       /* edges (opponent nodes: those created so far, at most INT16_MAX) */
    int16_t nexp;    /* fixed nodes: edges expanded so far, in rating order */
    uint8_t mover;   /* player to act */
    uint8_t flags;   /* IS_* */
} is_node;

typedef struct is_eslot {
    uint64_t key;    /* (node + 1) << 32 | action of an opponent edge, 0 = empty */
    int32_t edge;
} is_eslot;

typedef struct is_tree {
    const mg_game_vt *vt;
    const mg_search_params *p;
    mg_rng *rng;
    int observer;
    double k;        /* 2c */
    is_node *nodes;
    long nn, ncap;
    is_edge *edges;
    long ne, ecap;
    ms_slot *tt;     /* the nodes by information-set hash */
    unsigned long tmask, tcount, tlimit;
    mg_action end;   /* the END_TURN action (auto_end edges) */
    is_eslot *et;    /* the opponent's edges by (node, action) */
    unsigned long emask, ecount, elimit;
    long evals;
} is_tree;

static int is_alloc(is_tree *t, const mg_search_params *p, int max_actions)
{
    long cap = p->max_nodes > 0 ? p->max_nodes : 1L << 22;
    long n = cap;
    if (p->iterations > 0 && 16 * p->iterations + 64 < n)
        n = 16 * p->iterations + 64; /* new information sets per iteration: a few at most */
    t->ncap = n;
    long e = 8 * n + 256L * max_actions;
    if (e > n * (long)max_actions + max_actions)
        e = n * (long)max_actions + max_actions;
    t->ecap = e;
    /* ISMCTS makes a few tens of thousands of iterations per second (heroes), each adding
     * at most a few nodes. */
    unsigned long slots = ms_table_slots(p, n, 200);
    t->tmask = slots - 1;
    t->tlimit = slots / 10 * 7;
    t->nodes = malloc((size_t)t->ncap * sizeof *t->nodes);
    t->edges = malloc((size_t)t->ecap * sizeof *t->edges);
    t->tt = calloc(slots, sizeof *t->tt);
    t->emask = slots - 1; /* at most one opponent edge per iteration, so the node table's size */
    t->elimit = slots / 10 * 7;
    t->et = calloc(slots, sizeof *t->et);
    return t->nodes && t->edges && t->tt && t->et;
}

static void is_free(is_tree *t)
{
    free(t->nodes);
    free(t->edges);
    free(t->tt);
    free(t->et);
}

/* Hash of the observer's information set containing st. */
static uint64_t is_key(const is_tree *t, const void *st, unsigned char *scratch)
{
    t->vt->observe(st, t->observer, scratch);
    uint64_t h = t->vt->hash(scratch);
    return h ? h : 1;
}

/* The node of st's information set, created if new (-1 if the arena is full). */
static int is_node_for(is_tree *t, const void *st, unsigned char *scratch)
{
    uint64_t h = is_key(t, st, scratch);
    unsigned long i = ms_slot_probe(t->tt, t->tmask, h);
    if (t->tt[i].key)
        return t->tt[i].node;
    if (t->nn >= t->ncap)
        return -1;
    int nd = (int)t->nn++;
    is_node *N = &t->nodes[nd];
    N->visits = 0;
    N->edges = -1;
    N->n = N->nexp = 0;
    N->mover = (uint8_t)t->vt->current(st);
    N->flags = t->vt->terminal(st, NULL) ? IS_TERMINAL : 0;
    if (N->mover == t->observer)
        N->flags |= IS_FIXED;
    if (t->tcount < t->tlimit) {
        t->tt[i].key = h;
        t->tt[i].node = nd;
        t->tcount++;
    }
    return nd;
}

static void is_edge_init(is_edge *e, mg_action a, int mover)
{
    e->a = a;
    e->visits = e->avail = 0;
    e->mover = (uint8_t)mover;
    e->auto_end = 0;
    e->mean = 0;
}

/* A fixed node's action list as unexpanded edges. 0 if the arena is full. */
static int is_generate(is_tree *t, int nd, const void *st)
{
    mg_action acts[MG_MAX_ACTIONS];
    int n = ms_actions(t->vt, st, t->p, MS_PRUNE | MS_SORT, acts);
    if (t->ne + n > t->ecap)
        return 0;
    is_node *N = &t->nodes[nd];
    N->edges = (int32_t)t->ne;
    N->n = (int16_t)n;
    N->nexp = 0;
    for (int i = 0; i < n; i++)
        is_edge_init(&t->edges[t->ne++], acts[i], N->mover);
    return 1;
}

/* Progressive widening (for p->widen_k > 0, as the MCTS kernel's): 1 if node N, reached
 * N->visits times before, may have another edge than its `has`: while it has fewer than
 * max(1, floor(widen_k visits^widen_alpha)). */
static int is_widens(const is_tree *t, const is_node *N, int has)
{
    double w = t->p->widen_k * pow((double)N->visits, t->p->widen_alpha);
    return has < 1 || (double)has < floor(w);
}

/* Fixed node: the next unexpanded edge when `expand` (is_iterate decides: some are left
 * and progressive widening, if on, allows another), else the best by UCB1 over the expanded
 * ones (node visits): all of them unless widening holds some back.
 * With c = 0 (the heroes default) UCB1 is the mean: the loop then skips the square root and
 * division per edge, most of the kernel's own time in a profile (the same edge is chosen). */
static long is_select_fixed(is_tree *t, is_node *N, int expand)
{
    if (expand)
        return N->edges + N->nexp++;
    const is_edge *e = t->edges + N->edges;
    int m = N->nexp;
    if (t->k == 0) {
        long best = N->edges;
        double bv = -DBL_MAX;
        for (int i = 0; i < m; i++) {
            if (e[i].visits == 0)
                return N->edges + i;
            if (e[i].mean > bv) {
                bv = e[i].mean;
                best = N->edges + i;
            }
        }
        return best;
    }
    double x = t->k * sqrt(2.0 * log((double)(N->visits > 0 ? N->visits : 1)));
    long best = N->edges;
    double bv = -DBL_MAX;
    for (int i = 0; i < m; i++) {
        if (e[i].visits == 0)
            return N->edges + i;
        double v = e[i].mean + x / sqrt((double)e[i].visits);
        if (v > bv) {
            bv = v;
            best = N->edges + i;
        }
    }
    return best;
}

/* The slot of opponent edge (nd, a) in the edge table: its slot, or the empty one where it
 * would go (NULL if absent and the table is full). */
static is_eslot *is_eslot_for(is_tree *t, int nd, mg_action a)
{
    uint64_t key = ((uint64_t)(nd + 1) << 32) | a;
    unsigned long i = (unsigned long)mg_mix64(key) & t->emask;
    while (t->et[i].key) {
        if (t->et[i].key == key)
            return &t->et[i];
        i = (i + 1) & t->emask;
    }
    return t->ecount < t->elimit ? &t->et[i] : NULL;
}

/* Opponent node at st: expand the best-rated legal action without an edge, else select
 * among the legal ones by UCB1 with availability. Under progressive widening a new edge is
 * made only while the node has fewer than widening allows, or when none of its edges is
 * legal in this determinization. Returns the edge, -1 if none (no legal action, or nothing
 * new can be stored), or -2 if the edge arena is full. */
static long is_select_open(is_tree *t, int nd, const void *st)
{
    const mg_game_vt *vt = t->vt;
    mg_action acts[MG_MAX_ACTIONS];
    long found[MG_MAX_ACTIONS];
    int n = ms_actions(vt, st, t->p, MS_PRUNE, acts);
    if (n <= 0)
        return -1;
    is_node *N = &t->nodes[nd];
    int fresh = -1, fresh_rate = 0;
    for (int j = 0; j < n; j++) {
        is_eslot *slot = is_eslot_for(t, nd, acts[j]);
        found[j] = slot && slot->key ? slot->edge : -1;
        if (found[j] < 0 && slot && N->n < INT16_MAX) {
            int r = vt->rate ? vt->rate(st, acts[j]) : 0;
            if (fresh < 0 || r > fresh_rate) {
                fresh = j;
                fresh_rate = r;
            }
        }
    }
    if (fresh >= 0 && t->p->widen_k > 0 && !is_widens(t, N, N->n)) {
        /* widening holds the node back, unless none of its edges is legal here */
        int known = 0;
        for (int j = 0; j < n && !known; j++)
            known = found[j] >= 0;
        if (known)
            fresh = -1;
    }
    if (fresh >= 0) { /* expansion */
        if (t->ne >= t->ecap)
            return -2;
        is_eslot *slot = is_eslot_for(t, nd, acts[fresh]);
        long ei = t->ne++;
        is_edge_init(&t->edges[ei], acts[fresh], N->mover);
        slot->key = ((uint64_t)(nd + 1) << 32) | acts[fresh];
        slot->edge = (int32_t)ei;
        t->ecount++;
        N->n++;
        return ei;
    }
    long best = -1;
    double bv = -DBL_MAX;
    for (int j = 0; j < n; j++) {
        if (found[j] < 0)
            continue;
        is_edge *e = &t->edges[found[j]];
        e->avail++;
        double v = e->visits == 0 ? DBL_MAX
                   : t->k == 0    ? e->mean /* UCB1 with c = 0, without the log and root */
                                  : e->mean + t->k * sqrt(2.0 * log((double)e->avail) /
                                                          (double)e->visits);
        if (v > bv) {
            bv = v;
            best = found[j];
        }
    }
    return best;
}

/* Apply edge e to st; an edge being expanded learns whether only END_TURN follows its
 * action (then, as in the MCTS kernel, the END_TURN is taken along: the edge's node and
 * rollouts start at the next player's turn). */
static void is_step(is_tree *t, is_edge *e, void *st, int expanding)
{
    const mg_game_vt *vt = t->vt;
    vt->apply(st, e->a, t->rng);
    if (expanding && !vt->is_end_turn(e->a) && !vt->terminal(st, NULL)) {
        mg_action acts[MG_MAX_ACTIONS];
        int n = vt->legal(st, acts);
        if (n == 1 && vt->is_end_turn(acts[0])) {
            t->end = acts[0];
            e->auto_end = 1;
        }
    }
    if (e->auto_end && !vt->terminal(st, NULL))
        vt->apply(st, t->end, t->rng);
}

/* One iteration on determinization `det` (advanced in place). Returns -1, or
 * MG_STOP_MEMORY if the arena is full. */
static int is_iterate(is_tree *t, int root, unsigned char *det, unsigned char *scratch)
{
    const mg_game_vt *vt = t->vt;
    long path[IS_MAX_DEPTH];
    int nodes[IS_MAX_DEPTH + 1];
    int depth = 0, node = root;
    nodes[0] = root;
    if (t->ne + vt->max_actions > t->ecap || t->nn + 2 > t->ncap)
        return MG_STOP_MEMORY;
    while (depth < IS_MAX_DEPTH) {
        is_node *N = &t->nodes[node];
        if (N->flags & IS_TERMINAL)
            break;
        long ei;
        int expanded;
        if (N->flags & IS_FIXED) {
            if (N->edges < 0 && !is_generate(t, node, det))
                return MG_STOP_MEMORY;
            N = &t->nodes[node];
            if (N->n == 0)
                break;
            expanded = N->nexp < N->n && (t->p->widen_k <= 0 || is_widens(t, N, N->nexp));
            ei = is_select_fixed(t, N, expanded);
        } else {
            int before = N->n;
            ei = is_select_open(t, node, det);
            if (ei == -2)
                return MG_STOP_MEMORY;
            if (ei < 0)
                break;
            expanded = t->nodes[node].n > before;
        }
        is_step(t, &t->edges[ei], det, expanded);
        int child = is_node_for(t, det, scratch);
        if (child < 0)
            return MG_STOP_MEMORY;
        path[depth++] = ei;
        nodes[depth] = child;
        if (expanded)
            break;
        node = child;
    }
    int turns = t->p->rollout_turns;
    if (t->p->horizon_root) { /* the turns the path already played count against the depth */
        for (int i = 0; i < depth; i++)
            turns -= t->edges[path[i]].auto_end || vt->is_end_turn(t->edges[path[i]].a);
        if (turns < 0)
            turns = 0;
    }
    mg_action acts[MG_MAX_ACTIONS];
    int groups[MG_MAX_ACTIONS];
    double r = ms_rollout_from(vt, det, t->p, t->observer, t->rng, acts, -1, groups, -1, turns);
    t->evals++;
    t->nodes[root].visits++;
    for (int i = 0; i < depth; i++) {
        is_edge *e = &t->edges[path[i]];
        double v = e->mover == t->observer ? r : 1.0 - r;
        e->visits++;
        e->mean += (v - e->mean) / (double)e->visits;
        t->nodes[nodes[i + 1]].visits++;
    }
    return -1;
}

/* The final choice among the visited edges of a fixed node N: the highest mean, or with
 * p->robust the most visits (then the highest mean), as the MCTS kernel; the first wins
 * ties; -1 if none was visited. */
static long is_final(const is_tree *t, const is_node *N)
{
    long best = -1;
    if (!(N->flags & IS_FIXED))
        return -1;
    for (int i = 0; i < N->nexp; i++) {
        const is_edge *e = &t->edges[N->edges + i];
        if (!e->visits)
            continue;
        if (best < 0) {
            best = N->edges + i;
            continue;
        }
        const is_edge *b = &t->edges[best];
        if (ms_final_better(t->p->robust, e->visits, e->mean, b->visits, b->mean))
            best = N->edges + i;
    }
    return best;
}

/* The plan: the best path (is_final) from the root while the observer moves, on the
 * determinization st (advanced), then completion as the MCTS kernel. */
static int is_plan(is_tree *t, int root, unsigned char *st, unsigned char *scratch,
                   mg_action *plan)
{
    const mg_game_vt *vt = t->vt;
    int len = 0, nd = root;
    while (nd >= 0 && len < MG_SEARCH_MAX_PLAN - 1) {
        const is_node *N = &t->nodes[nd];
        if (!(N->flags & IS_FIXED) || (N->flags & IS_TERMINAL))
            break;
        long ei = is_final(t, N);
        if (ei < 0)
            break;
        const is_edge *e = &t->edges[ei];
        if (vt->apply(st, e->a, t->rng) != MG_OK)
            break;
        plan[len++] = e->a;
        if (ms_turn_over(vt, st, e->a))
            return len;
        if (e->auto_end) {
            vt->apply(st, t->end, t->rng);
            plan[len++] = t->end;
            return len;
        }
        nd = ms_slot_find(t->tt, t->tmask, is_key(t, st, scratch));
    }
    return ms_complete_plan(vt, st, t->p, t->rng, plan, len, &t->evals);
}

/* The search from node `root` on tree t (ms_ismcts's loop after the root's determinization
 * det was drawn): iterations within p's budget, then the plan and the stats. */
static void is_run(is_tree *t, int root, const void *obs, const mg_det_params *d,
                   unsigned char *det, unsigned char *scratch, mg_action *plan, int *plan_len,
                   mg_search_stats *stats, double t0)
{
    const mg_game_vt *vt = t->vt;
    ms_budget budget;
    ms_budget_start(&budget, t->p);
    long it = 0;
    int stop;
    while ((stop = ms_budget_spent(&budget, it)) < 0) {
        mg_determinize(vt, obs, d->mode, t->rng, det);
        int s = is_iterate(t, root, det, scratch);
        if (s >= 0) {
            stop = s;
            break;
        }
        it++;
    }
    mg_determinize(vt, obs, d->mode, t->rng, det);
    int len = is_plan(t, root, det, scratch, plan);
    *plan_len = len;
    long bi = is_final(t, &t->nodes[root]);
    stats->iterations = it;
    stats->evaluations = t->evals;
    stats->nodes = t->nn;
    stats->value = bi >= 0 ? t->edges[bi].mean : 0.5;
    stats->stop = stop < 0 ? MG_STOP_DONE : stop;
    stats->elapsed_ms = ms_now() - t0;
}

static void is_start(is_tree *t, const mg_game_vt *vt, const mg_search_params *p, mg_rng *rng,
                     const void *obs)
{
    t->vt = vt;
    t->p = p;
    t->rng = rng;
    t->observer = vt->current(obs);
    t->k = 2.0 * p->c;
    t->evals = 0;
}

int ms_ismcts(const mg_game_vt *vt, const void *obs, const mg_search_params *p,
              const mg_det_params *d, mg_rng *rng, mg_action *plan, int *plan_len,
              mg_search_stats *stats, char *err)
{
    int rc;
    double t0 = ms_now();
    is_tree t;
    memset(&t, 0, sizeof t);
    is_start(&t, vt, p, rng, obs);
    ms_state det, scratch;
    if (!is_alloc(&t, p, vt->max_actions)) {
        is_free(&t);
        return MG_ERR_NOMEM;
    }
    rc = ms_det_sample(vt, obs, d->mode, rng, det.b, err);
    if (rc != MG_OK) {
        is_free(&t);
        return rc;
    }
    int root = is_node_for(&t, det.b, scratch.b);
    is_run(&t, root, obs, d, det.b, scratch.b, plan, plan_len, stats, t0);
    is_free(&t);
    return MG_OK;
}

/* ---- A tree kept between searches (mg_ismcts_tree) ------------------------------------- */

/* A kept tree (mg_ismcts_tree): make room for `need` more nodes (and their edges and table
 * entries) next to the ones it holds, within p->max_nodes: the arenas grow, and the two hash
 * tables are rebuilt twice as large as they then need. 0 if that is past max_nodes or out of
 * memory (the tree is unchanged then). */
static int is_grow(is_tree *t, long need, int max_actions)
{
    long cap = t->p->max_nodes > 0 ? t->p->max_nodes : 1L << 22;
    long n = t->nn + need;
    if (n > cap)
        return 0;
    long e = t->ne + 8 * need + 256L * max_actions;
    if (n > t->ncap) {
        is_node *nodes = realloc(t->nodes, (size_t)n * sizeof *nodes);
        if (!nodes)
            return 0;
        t->nodes = nodes;
        t->ncap = n;
    }
    if (e > t->ecap) {
        is_edge *edges = realloc(t->edges, (size_t)e * sizeof *edges);
        if (!edges)
            return 0;
        t->edges = edges;
        t->ecap = e;
    }
    unsigned long want = (unsigned long)(t->tcount > t->ecount ? t->tcount : t->ecount) + (unsigned long)need;
    if (want <= t->tlimit && want <= t->elimit)
        return 1;
    unsigned long slots = ms_pow2(2 * want < 2048 ? 2048 : 2 * want);
    ms_slot *tt = ms_slots_rehash(t->tt, t->tmask, slots);
    is_eslot *et = calloc(slots, sizeof *et);
    if (!tt || !et) {
        free(tt);
        free(et);
        return 0;
    }
    unsigned long mask = slots - 1;
    for (unsigned long j = 0; j <= t->emask; j++) {
        uint64_t key = t->et[j].key;
        if (!key)
            continue;
        unsigned long i = (unsigned long)mg_mix64(key) & mask;
        while (et[i].key)
            i = (i + 1) & mask;
        et[i] = t->et[j];
    }
    free(t->tt);
    free(t->et);
    t->tt = tt;
    t->et = et;
    t->tmask = t->emask = mask;
    t->tlimit = t->elimit = slots / 10 * 7;
    return 1;
}

struct mg_ismcts_tree {
    is_tree t;
    int live;                /* t holds a tree (its arenas are allocated) */
    const mg_game_vt *vt;    /* the game, observer and settings it was grown with */
    int observer;
    int prune;
    long max_nodes;
};

mg_ismcts_tree *mg_ismcts_tree_new(void)
{
    return calloc(1, sizeof(mg_ismcts_tree));
}

void mg_ismcts_tree_free(mg_ismcts_tree *tree)
{
    if (!tree)
        return;
    if (tree->live)
        is_free(&tree->t);
    free(tree);
}

/* The nodes a search may add: 16 an iteration (as is_alloc), or under a time budget as
 * many as ISMCTS's speed allows (ms_table_slots' rate), or the cap. */
static long is_need(const mg_search_params *p)
{
    long cap = p->max_nodes > 0 ? p->max_nodes : 1L << 22;
    long n = cap;
    if (p->iterations > 0 && 16 * p->iterations + 64 < n)
        n = 16 * p->iterations + 64;
    if (p->budget_ms > 0 && (long)(p->budget_ms * 200) + 1024 < n)
        n = (long)(p->budget_ms * 200) + 1024;
    return n;
}

int ms_ismcts_reuse(const mg_game_vt *vt, const void *obs, const mg_search_params *p,
                    const mg_det_params *d, mg_ismcts_tree *tree, mg_rng *rng, mg_action *plan,
                    int *plan_len, mg_search_stats *stats, char *err)
{
    double t0 = ms_now();
    is_tree *t = &tree->t;
    ms_state det, scratch;
    int rc = ms_det_sample(vt, obs, d->mode, rng, det.b, err);
    if (rc != MG_OK)
        return rc;
    int root = -1;
    long reused = 0;
    if (tree->live && tree->vt == vt && tree->observer == vt->current(obs) &&
        tree->prune == p->prune && tree->max_nodes == p->max_nodes) {
        is_start(t, vt, p, rng, obs);
        int nd = ms_slot_find(t->tt, t->tmask, is_key(t, det.b, scratch.b)); /* none made */
        /* the observer's information set, searched before: its statistics are those of
         * the iterations whose determinization reached it, which is what ISMCTS from it
         * would gather (a chance outcome the observer saw has a node of its own) */
        if (nd >= 0 && (t->nodes[nd].flags & (IS_FIXED | IS_TERMINAL)) == IS_FIXED &&
            t->nodes[nd].visits > 0 && is_grow(t, is_need(p), vt->max_actions)) {
            root = nd;
            reused = t->nodes[nd].visits;
        }
    }
    if (root < 0) {
        if (tree->live)
            is_free(t);
        memset(t, 0, sizeof *t);
        tree->live = 0;
        is_start(t, vt, p, rng, obs);
        if (!is_alloc(t, p, vt->max_actions)) {
            is_free(t);
            memset(t, 0, sizeof *t);
            return MG_ERR_NOMEM;
        }
        tree->live = 1;
        tree->vt = vt;
        tree->observer = t->observer;
        tree->prune = p->prune;
        tree->max_nodes = p->max_nodes;
        root = is_node_for(t, det.b, scratch.b);
    }
    is_run(t, root, obs, d, det.b, scratch.b, plan, plan_len, stats, t0);
    stats->reused = reused;
    t->p = NULL; /* the caller's parameters and stream are not kept */
    t->rng = NULL;
    return MG_OK;
}
