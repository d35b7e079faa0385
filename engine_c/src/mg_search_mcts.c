/* mg_search_mcts.c: Monte Carlo tree search over single actions for multi-action games
 * (Justesen et al. 2017): UCB1 on edges, the multi-action negamax backup (an edge's value
 * is kept from the view of the player who made it), transpositions, rollouts depth-limited
 * in turns, and the non-exploring (C = 0, greedy rollouts), bridge-burning (one budget
 * phase per action of the turn) and collapsing (thesis, K end-of-turn nodes) variants. */
#define _POSIX_C_SOURCE 200809L /* pthread_once */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "mg_search_internal.h"

#define MC_MAX_DEPTH 128 /* deepest selection path (a cycle guard; turns are finite) */
#define MC_CLOCK 8       /* iterations between readings of the clock (a power of two) */
#define MC_B0 2          /* edges of a node's first edge block (a power of two) */
#define MC_CLASSES 32    /* free lists of edge blocks, by log2 of their size */
#define MC_TAB 1024      /* visit counts below this take sqrt and log from tables */
#define MC_TOP 8 /* actions of a new list put in order at once (ms_actions_top); on heroes 8
                  * costs fewer instructions than 2, 4 or 16 (nodes do expand a few edges) */

#if defined(__GNUC__)
#define MC_PREFETCH(p) __builtin_prefetch(p)
#else
#define MC_PREFETCH(p) ((void)(p))
#endif

/* Node flags. */
#define MC_TERMINAL 1 /* the node's state is terminal */
#define MC_SEEN 2     /* collapse: visited */
#define MC_LEADS 4    /* collapse: reaches an end-of-turn node */
#define MC_UNSORTED 8 /* the list is in order up to MC_TOP only (ms_actions_top) */
#define MC_PWIN 16    /* solver: proven won for the node's mover */
#define MC_PLOSS 32   /* solver: proven lost for the node's mover */
#define MC_PROVEN (MC_PWIN | MC_PLOSS)

typedef struct mc_edge {
    mg_action a;     /* the action */
    int32_t child;   /* node reached, -1 until expanded */
    uint32_t visits; /* times the edge was traversed */
    uint8_t mover;   /* player who makes the action */
    uint8_t auto_end; /* 1: END_TURN follows at once (nothing else was legal), as one edge */
    double mean;     /* mean reward in [0, 1] from the mover's view */
    double isq;      /* 1 / sqrt(visits), kept so that selection needs no sqrt per child */
} mc_edge;

/* A node's action list is generated (into the action arena) when the node is reached a
 * second time, put in rating order only for its first MC_TOP actions (the rest keep their
 * ratings beside them in the rating arena and are sorted when edge MC_TOP is expanded, the
 * same order as a whole sort); its edges are made one at a time as they are expanded, in the list's order,
 * into a block of the edge arena that grows by doubling: MC_B0 edges (or n if fewer), then
 * 2j when the j-th edge (j a power of two >= MC_B0) does not fit. A block left behind goes
 * to a free list by size and serves a later request. Most listed actions are never
 * expanded, so the tree touches a fraction of the memory a whole list of edges took. */
typedef struct mc_node {
    uint32_t visits; /* times the node was reached (all parents) */
    int32_t edges;   /* its edge block, -1 until the first edge is expanded */
    int32_t list;    /* first of its actions in the action arena, -1 until generated */
    mg_action next;  /* the action of edge nexp (the next to expand), kept here so that an
                      * expansion does not wait for the action list to come from memory */
    int16_t n;       /* actions in its list */
    int16_t nexp;    /* edges expanded so far, in the list's (rating) order */
    uint8_t mover;   /* player to act in the node's state */
    uint8_t flags;   /* MC_* */
} mc_node;

typedef struct mc_tree {
    const mg_game_vt *vt;
    const mg_search_params *p;
    mg_rng *rng;
    mc_node *nodes;
    long nn, ncap;
    mc_edge *edges;
    long ne, ecap;
    mg_action *acts; /* the action lists */
    int *rates;      /* beside acts: the ratings of the unsorted rest of a list */
    long na, acap;
    int32_t freeb[MC_CLASSES]; /* free edge blocks of 2^i edges (linked by .child), or -1 */
    ms_slot *tt;     /* the nodes by state hash */
    unsigned long tmask, tcount, tlimit;
    int root_player;
    int grouped;     /* ms_grouped: rollouts step by groups */
    double k;        /* 2c: the exploration factor */
    long ends;       /* end-of-turn nodes created below the root's turn */
    mg_action end;   /* the END_TURN action, once seen */
    long evals;
} mc_tree;

/* ---- Arena -------------------------------------------------------------------------------- */

/* The node cap of the tree (max_nodes, else 4M), and the nodes one search with parameters
 * p may add: at most one node per iteration; no kernel does 2M iterations per second. */
static long mc_cap(const mg_search_params *p)
{
    return p->max_nodes > 0 ? p->max_nodes : 1L << 22;
}

static long mc_nodes_wanted(const mg_search_params *p)
{
    long n = mc_cap(p);
    if (p->iterations > 0 && p->iterations + 2 < n)
        n = p->iterations + 2;
    if (p->budget_ms > 0 && (long)(p->budget_ms * 2000) + 4096 < n)
        n = (long)(p->budget_ms * 2000) + 4096;
    return n;
}

static int mc_alloc(mc_tree *t, const mg_search_params *p, int max_actions)
{
    long n = mc_nodes_wanted(p);
    t->ncap = n;
    /* Action lists: a list is generated when a node is reached a second time, so the count
     * tracks nodes times a factor (up to about 10 on heroes' mid-game states). The arenas
     * are virtual memory until used. */
    long e = 12 * n + 256L * max_actions;
    if (e > n * (long)max_actions + max_actions)
        e = n * (long)max_actions + max_actions;
    t->acap = e;
    /* Edges: at most one expanded per iteration (one node), and a node's blocks, the
     * abandoned ones included, add up to less than MC_B0 + 4 times its expanded edges. */
    t->ecap = (MC_B0 + 4) * n + 2L * max_actions;
    for (int i = 0; i < MC_CLASSES; i++)
        t->freeb[i] = -1;
    /* The kernel creates up to about 500 nodes per ms on heroes; a table twice too large
     * costs 10% of the iterations in cache misses. A full table stops recording
     * transpositions (the tree goes on without them), it does not fail. */
    unsigned long slots = ms_table_slots(p, n, 800);
    t->tmask = slots - 1;
    t->tlimit = slots / 10 * 7;
    t->nodes = malloc((size_t)t->ncap * sizeof *t->nodes);
    t->edges = malloc((size_t)t->ecap * sizeof *t->edges);
    t->acts = malloc((size_t)t->acap * sizeof *t->acts);
    t->rates = malloc((size_t)t->acap * sizeof *t->rates);
    t->tt = p->transpositions ? calloc(slots, sizeof *t->tt) : NULL;
    ms_huge_pages(t->nodes, (size_t)t->ncap * sizeof *t->nodes);
    ms_huge_pages(t->edges, (size_t)t->ecap * sizeof *t->edges);
    ms_huge_pages(t->acts, (size_t)t->acap * sizeof *t->acts);
    ms_huge_pages(t->rates, (size_t)t->acap * sizeof *t->rates);
    ms_huge_pages(t->tt, t->tt ? slots * sizeof *t->tt : 0);
    return t->nodes && t->edges && t->acts && t->rates && (t->tt || !p->transpositions);
}

static void mc_free(mc_tree *t)
{
    free(t->nodes);
    free(t->edges);
    free(t->acts);
    free(t->rates);
    free(t->tt);
}

/* A new node for state st (capacity checked by the caller). */
static int mc_new_node(mc_tree *t, int mover, int terminal)
{
    int i = (int)t->nn++;
    mc_node *nd = &t->nodes[i];
    nd->visits = 0;
    nd->edges = -1;
    nd->list = -1;
    nd->n = nd->nexp = 0;
    nd->mover = (uint8_t)mover;
    nd->flags = terminal ? MC_TERMINAL : 0;
    return i;
}

/* What identifies a child before its node is looked up: the state's hash (0 without a
 * table), the player to act and whether the game is over. */
typedef struct mc_key {
    uint64_t h;
    int mover, terminal;
} mc_key;

/* The key of state st; its table slot is prefetched, so that the lookup after the
 * rollout finds it in cache. */
static mc_key mc_key_of(const mc_tree *t, const void *st)
{
    mc_key k;
    k.h = 0;
    k.mover = t->vt->current(st);
    k.terminal = t->vt->terminal(st, NULL);
    if (t->tt) {
        k.h = t->vt->hash(st);
        if (!k.h)
            k.h = 1;
        MC_PREFETCH(&t->tt[ms_slot_home(k.h, t->tmask)]);
    }
    return k;
}

/* The node for key k: the one already in the table, or a new one (*created set). */
static int mc_node_for(mc_tree *t, mc_key k, int *created)
{
    *created = 1;
    if (!t->tt)
        return mc_new_node(t, k.mover, k.terminal);
    unsigned long i = ms_slot_probe(t->tt, t->tmask, k.h);
    if (t->tt[i].key) {
        *created = 0;
        return t->tt[i].node;
    }
    int nd = mc_new_node(t, k.mover, k.terminal);
    if (t->tcount < t->tlimit) {
        t->tt[i].key = k.h;
        t->tt[i].node = nd;
        t->tcount++;
    }
    return nd;
}

/* Generate node nd's action list (pruned, rating-sorted up to MC_TOP) into the action arena
 * (the caller checked its room). */
static void mc_generate(mc_tree *t, int nd, const void *st)
{
    mg_action *acts = t->acts + t->na;
    int sorted;
    int n = ms_actions_top(t->vt, st, t->p, MC_TOP, acts, t->rates + t->na, &sorted);
    mc_node *N = &t->nodes[nd];
    if (sorted < n)
        N->flags |= MC_UNSORTED;
    N->list = (int32_t)t->na;
    N->n = (int16_t)n;
    N->nexp = 0;
    N->next = n > 0 ? acts[0] : 0;
    t->na += n;
}

/* log2 of a power of two. */
static int mc_log2(unsigned long x)
{
    int i = 0;
    while (x > 1) {
        x >>= 1;
        i++;
    }
    return i;
}

/* A block of at least sz edges: a free one of the size class, or new from the arena (the
 * caller checked its room). */
static long mc_block(mc_tree *t, int sz)
{
    int c = mc_log2(ms_pow2((unsigned long)(sz < MC_B0 ? MC_B0 : sz)));
    long b = t->freeb[c];
    if (b >= 0) {
        t->freeb[c] = t->edges[b].child;
        return b;
    }
    b = t->ne;
    t->ne += sz;
    return b;
}

/* The index of edge j of node N, the next to expand (j = N->nexp < N->n): its block is
 * made, or moved to one twice as large, when the edge does not fit. */
static long mc_edge_slot(mc_tree *t, mc_node *N, int j)
{
    if (j == 0 || (j >= MC_B0 && (j & (j - 1)) == 0)) {
        int sz = j == 0 ? MC_B0 : 2 * j;
        if (sz > N->n)
            sz = N->n;
        long b = mc_block(t, sz);
        if (j > 0) {
            memcpy(&t->edges[b], &t->edges[N->edges], (size_t)j * sizeof *t->edges);
            int c = mc_log2((unsigned long)j);
            t->edges[N->edges].child = t->freeb[c];
            t->freeb[c] = N->edges;
        }
        N->edges = (int32_t)b;
    }
    return N->edges + j;
}

/* ---- Selection, evaluation, backup -------------------------------------------------------- */

/* 1 / sqrt(v) and sqrt(2 ln v) for 1 <= v < MC_TAB, the same expressions as computed in
 * place (so every value is the same double): a backup and a selection near the leaves
 * mostly see small counts, and a division, a square root and a log call are long waits. */
static double mc_isq_tab[MC_TAB], mc_lx_tab[MC_TAB];
static pthread_once_t mc_tab_once = PTHREAD_ONCE_INIT;

static void mc_tab_init(void)
{
    for (int v = 1; v < MC_TAB; v++) {
        mc_isq_tab[v] = 1.0 / sqrt((double)v);
        mc_lx_tab[v] = sqrt(2.0 * log((double)v));
    }
}

static inline double mc_isq(uint32_t v)
{
    return v < MC_TAB && v > 0 ? mc_isq_tab[v] : 1.0 / sqrt((double)v);
}

static inline double mc_lx(uint32_t v)
{
    return v < MC_TAB && v > 0 ? mc_lx_tab[v] : sqrt(2.0 * log((double)v));
}

/* ---- Solver (p->solve) ------------------------------------------------------------------- */

/* Edge e proven: 1 won for its mover, -1 lost, 0 not proven (or not expanded). */
static inline int mc_proof(const mc_tree *t, const mc_edge *e)
{
    if (e->child < 0)
        return 0;
    const mc_node *C = &t->nodes[e->child];
    int s = (C->flags & MC_PWIN) ? 1 : (C->flags & MC_PLOSS) ? -1 : 0;
    return C->mover == e->mover ? s : -s;
}

/* Mark node nd proven from its edges: won when one is a proven win for its mover, lost when
 * every legal action is expanded and proven lost. Returns 1 if nd is (now) proven. */
static int mc_prove(mc_tree *t, int nd)
{
    mc_node *N = &t->nodes[nd];
    if (N->flags & MC_PROVEN)
        return 1;
    if (N->edges < 0)
        return 0;
    const mc_edge *e = t->edges + N->edges;
    int lost = N->nexp == N->n && N->n > 0;
    for (int i = 0; i < N->nexp; i++) {
        int s = mc_proof(t, &e[i]);
        if (s > 0) {
            N->flags |= MC_PWIN;
            return 1;
        }
        if (s == 0)
            lost = 0;
    }
    if (lost)
        N->flags |= MC_PLOSS;
    return lost;
}

/* mc_final and mc_select with the solver: a proven-won edge at once; proven-lost edges only
 * when nothing else is left (then the plain choice among all). -1: no edge to prefer. */
static long mc_solved_choice(const mc_tree *t, const mc_node *N, int final)
{
    const mc_edge *e = t->edges + N->edges;
    long best = -1;
    double bv = -DBL_MAX;
    double x = final ? 0 : t->k * mc_lx(N->visits);
    for (int i = 0; i < N->nexp; i++) {
        int s = mc_proof(t, &e[i]);
        if (s > 0)
            return N->edges + i;
        if (s < 0 || (final && e[i].visits == 0))
            continue;
        if (final) {
            if (best < 0 || ms_final_better(t->p->robust, e[i].visits, e[i].mean,
                                            t->edges[best].visits, t->edges[best].mean))
                best = N->edges + i;
        } else {
            double v = e[i].mean + x * e[i].isq;
            if (v > bv) {
                bv = v;
                best = N->edges + i;
            }
        }
    }
    return best;
}

/* The final choice among the expanded edges of N: the highest mean, or with p->robust the
 * most visits (then the highest mean). The first wins ties; -1 if none was visited. */
static long mc_final(const mc_tree *t, const mc_node *N)
{
    const mc_edge *e = t->edges + N->edges;
    long best = -1;
    if (t->p->solve && (best = mc_solved_choice(t, N, 1)) >= 0)
        return best;
    for (int i = 0; i < N->nexp; i++) {
        if (e[i].visits == 0)
            continue;
        if (best < 0) {
            best = N->edges + i;
            continue;
        }
        const mc_edge *b = &t->edges[best];
        if (ms_final_better(t->p->robust, e[i].visits, e[i].mean, b->visits, b->mean))
            best = N->edges + i;
    }
    return best;
}

/* The edge to descend from a fully expanded node (each of its edges was visited): the
 * highest mean + 2c sqrt(2 ln N / n) = mean + 2c sqrt(2 ln N) isq, or with c = 0 the
 * highest mean. The first wins ties. */
static long mc_select(const mc_tree *t, const mc_node *N)
{
    const mc_edge *e = t->edges + N->edges;
    int best = 0, m = N->nexp; /* all of N->n, unless progressive widening holds some back */
    double bv = -DBL_MAX;
    if (t->p->solve) {
        long s = mc_solved_choice(t, N, 0);
        if (s >= 0)
            return s;
    }
    if (t->k > 0) {
        double x = t->k * mc_lx(N->visits);
        for (int i = 0; i < m; i++) {
            double v = e[i].mean + x * e[i].isq;
            if (v > bv) {
                bv = v;
                best = i;
            }
        }
    } else {
        for (int i = 0; i < m; i++)
            if (e[i].mean > bv) {
                bv = e[i].mean;
                best = i;
            }
    }
    return N->edges + best;
}

/* Progressive widening (p->widen_k > 0): 1 if node N, reached N->visits times before,
 * may expand another edge: while it has fewer than max(1, widen_k visits^widen_alpha). */
static int mc_widens(const mc_tree *t, const mc_node *N)
{
    double w = t->p->widen_k * pow((double)N->visits, t->p->widen_alpha);
    return N->nexp < 1 || (double)N->nexp < floor(w);
}

/* 1 if every expanded edge of N is proven lost for its mover (the solver under progressive
 * widening: then the next action is expanded, whatever the visits). */
static int mc_all_lost(const mc_tree *t, const mc_node *N)
{
    for (int i = 0; i < N->nexp; i++)
        if (mc_proof(t, &t->edges[N->edges + i]) >= 0)
            return 0;
    return 1;
}

/* Apply edge e's action to st, and END_TURN after it for an auto_end edge. */
static void mc_step(mc_tree *t, const mc_edge *e, void *st)
{
    t->vt->apply(st, e->a, t->rng);
    if (e->auto_end)
        t->vt->apply(st, t->end, t->rng);
}

/* One iteration from node `top` at state `top_st`: select, expand one edge, roll out,
 * back up. Returns -1, or MG_STOP_MEMORY if the arena is full (nothing changed then).
 * As in the reference, an action after which only END_TURN is legal takes the END_TURN
 * along (one edge), so the new node and its rollout start at the next player's turn. */
static int mc_iterate(mc_tree *t, int top, const void *top_st, unsigned char *clone)
{
    const mg_game_vt *vt = t->vt;
    mg_action acts[MG_MAX_ACTIONS];
    int groups[MG_MAX_ACTIONS];
    long path[MC_MAX_DEPTH];
    int from[MC_MAX_DEPTH]; /* solver: the node each path edge leaves */
    int depth = 0, node = top, nacts = -1, ngroups = -1;
    int proven = 0, winner = -1; /* solver: the leaf's exact value, a terminal child's winner */
    long expanded = -1; /* the edge expanded in this iteration, of node `parent` */
    int parent = -1, expanded_end = 0;
    mg_action expanded_a = 0;
    mc_key key = {0, 0, 0};
    if (t->nn + 1 > t->ncap || t->ne + vt->max_actions > t->ecap ||
        t->na + vt->max_actions > t->acap)
        return MG_STOP_MEMORY;
    memcpy(clone, top_st, vt->state_size);
    while (depth < MC_MAX_DEPTH) {
        mc_node *N = &t->nodes[node];
        if (N->flags & MC_TERMINAL)
            break;
        if (t->p->solve && (N->flags & MC_PROVEN)) {
            proven = 1; /* its value is known: no rollout, no expansion below it */
            break;
        }
        if (N->list < 0)
            mc_generate(t, node, clone);
        if (N->n == 0)
            break;
        long ei;
        if (N->nexp < N->n && (t->p->widen_k <= 0 || mc_widens(t, N) ||
                               (t->p->solve && mc_all_lost(t, N)))) {
            /* expansion: the next action in rating order */
            ei = mc_edge_slot(t, N, N->nexp++);
            expanded_a = N->next;
            /* the edge is written, and the next action read, after the rollout */
            MC_PREFETCH(&t->edges[ei]);
            if (N->nexp < N->n)
                MC_PREFETCH(&t->acts[N->list + N->nexp]);
            vt->apply(clone, expanded_a, t->rng);
            if (!vt->terminal(clone, NULL)) {
                /* is END_TURN all that is legal? The answer serves the rollout's first step */
                int only_end;
                if (t->grouped) {
                    ngroups = vt->legal_groups(clone, groups);
                    only_end = ngroups == 0 && vt->group_legal(clone, 0, acts) == 1;
                } else {
                    nacts = vt->legal(clone, acts);
                    only_end = nacts == 1 && vt->is_end_turn(acts[0]);
                }
                if (only_end && !vt->is_end_turn(expanded_a)) {
                    t->end = acts[0];
                    expanded_end = 1;
                    vt->apply(clone, t->end, t->rng);
                    nacts = ngroups = -1;
                }
            }
            key = mc_key_of(t, clone); /* the node is looked up after the rollout */
            if (key.terminal && t->p->solve)
                vt->terminal(clone, &winner);
            expanded = ei;
            parent = node;
            from[depth] = node;
            path[depth++] = ei;
            break;
        }
        ei = mc_select(t, N);
        mc_edge *e = &t->edges[ei];
        MC_PREFETCH(&t->nodes[e->child]); /* read right after the (slower) apply */
        mc_step(t, e, clone);
        from[depth] = node;
        path[depth++] = ei;
        node = e->child;
    }
    int turns = t->p->rollout_turns;
    if (t->p->horizon_root) { /* the turns the path already played count against the depth */
        for (int i = 0; i < depth; i++) {
            const mc_edge *e = &t->edges[path[i]];
            if (path[i] == expanded)
                turns -= expanded_end || vt->is_end_turn(expanded_a);
            else
                turns -= e->auto_end || vt->is_end_turn(e->a);
        }
        if (turns < 0)
            turns = 0;
    }
    double r;
    if (proven) {
        const mc_node *L = &t->nodes[node];
        r = ((L->flags & MC_PWIN) != 0) == (L->mover == t->root_player) ? 1.0 : 0.0;
    } else {
        r = ms_rollout_from(vt, clone, t->p, t->root_player, t->rng, acts, nacts, groups,
                            ngroups, turns);
        t->evals++;
    }
    if (expanded >= 0) {
        mc_edge *e = &t->edges[expanded];
        mc_node *P = &t->nodes[parent];
        int created;
        e->a = expanded_a;
        e->visits = 0;
        e->mover = P->mover;
        e->auto_end = (uint8_t)expanded_end;
        e->mean = 0;
        e->isq = 0;
        if (P->nexp < P->n) {
            if ((P->flags & MC_UNSORTED) && P->nexp == MC_TOP) { /* the rest, in order */
                ms_sort_rated(t->acts + P->list + MC_TOP, t->rates + P->list + MC_TOP,
                              P->n - MC_TOP);
                P->flags &= (uint8_t)~MC_UNSORTED;
            }
            P->next = t->acts[P->list + P->nexp];
        }
        e->child = mc_node_for(t, key, &created);
        if (created && winner >= 0) /* a won game proves its node (a draw proves nothing) */
            t->nodes[e->child].flags |=
                winner == t->nodes[e->child].mover ? MC_PWIN : MC_PLOSS;
        if (created && e->mover == t->root_player &&
            (key.mover != t->root_player || key.terminal))
            t->ends++;
    }
    t->nodes[top].visits++;
    for (int i = 0; i < depth; i++) {
        mc_edge *e = &t->edges[path[i]];
        double v = e->mover == t->root_player ? r : 1.0 - r;
        e->visits++;
        e->mean += (v - e->mean) / (double)e->visits;
        e->isq = mc_isq(e->visits);
        t->nodes[e->child].visits++;
    }
    if (t->p->solve) /* proofs go up the path as far as they reach */
        for (int i = depth - 1; i >= 0 && mc_prove(t, from[i]); i--)
            ;
    return -1;
}

/* ---- Collapse ----------------------------------------------------------------------------- */

/* Keep, in the root player's turn below nd, only edges that reach an end-of-turn node (a
 * node of the other player, or a terminal one); nodes become fully expanded with what is
 * left. Returns 1 if nd reaches one. */
static int mc_collapse(mc_tree *t, int nd)
{
    mc_node *N = &t->nodes[nd];
    if (N->flags & MC_SEEN)
        return (N->flags & MC_LEADS) != 0;
    N->flags |= MC_SEEN;
    int leads = 0;
    if (N->mover != t->root_player || (N->flags & MC_TERMINAL)) {
        leads = 1;
    } else if (N->edges >= 0) {
        mc_edge *e = t->edges + N->edges;
        int k = 0;
        for (int i = 0; i < N->nexp; i++)
            if (mc_collapse(t, e[i].child))
                e[k++] = e[i];
        N = &t->nodes[nd];
        N->n = N->nexp = (int16_t)k;
        leads = k > 0;
    }
    if (leads)
        N->flags |= MC_LEADS;
    return leads;
}

/* ---- The plan ----------------------------------------------------------------------------- */

/* Append to plan the best path (highest mean) from node nd while the root player moves;
 * st is advanced along it. Returns the new length. */
static int mc_best_path(mc_tree *t, int nd, void *st, mg_action *plan, int len)
{
    const mg_game_vt *vt = t->vt;
    while (len < MG_SEARCH_MAX_PLAN - 1) {
        const mc_node *N = &t->nodes[nd];
        if (N->mover != t->root_player || (N->flags & MC_TERMINAL) || N->edges < 0 ||
            N->nexp == 0)
            break;
        long ei = mc_final(t, N);
        if (ei < 0)
            break;
        const mc_edge *e = &t->edges[ei];
        mc_step(t, e, st);
        plan[len++] = e->a;
        if (e->auto_end)
            plan[len++] = t->end;
        if (vt->is_end_turn(e->a) || e->auto_end)
            break;
        nd = e->child;
    }
    return len;
}

/* Copy the visited edges of the search's first root (its action, visits and mean) into
 * roots[0..max); returns how many. Bridge burning moves the root: the first root's edges
 * still hold what the search learnt of the first action. */
static int mc_roots(const mc_tree *t, int root, ms_root_edge *roots, int max)
{
    const mc_node *N = &t->nodes[root];
    int n = 0;
    if (N->edges < 0 || N->mover != t->root_player)
        return 0;
    for (int i = 0; i < N->nexp && n < max; i++) {
        const mc_edge *e = &t->edges[N->edges + i];
        if (e->visits == 0)
            continue;
        roots[n].a = e->a;
        roots[n].visits = e->visits;
        roots[n].mean = e->mean;
        n++;
    }
    return n;
}

/* The end of a plan: unless its tree path already ended the turn, ms_complete_plan. */
static int mc_complete_plan(const mg_game_vt *vt, void *st, const mg_search_params *p,
                            mg_rng *rng, mg_action *plan, int len, long *evals)
{
    if (len > 0 && ms_turn_over(vt, st, plan[len - 1]))
        return len;
    return ms_complete_plan(vt, st, p, rng, plan, len, evals);
}

/* ---- Root parallelism (p->threads > 1) ---------------------------------------------------- */

/* That many trees grow at once from the same root, one thread each, each with a seed of its
 * own and the whole budget (so with an iteration budget a seeded search repeats its plan).
 * They share nothing while they grow: no locks, and each keeps its cache lines. The plan
 * then walks the trees together: at each step the action with the most visits summed over
 * the trees (or the highest mean over their summed visits, as mc_final), and each tree
 * follows that action as far as it has it. On two cores a turn gets twice the iterations. */
typedef struct mc_job {
    mc_tree t;
    mg_rng rng;
    const ms_budget *budget;
    const void *st;  /* the root state: the caller's, or det */
    ms_state det;    /* this tree's determinization of the caller's observation */
    int top;   /* root node; during the walk, this tree's node on the plan, -1 once left */
    long it;
    int stop;  /* MG_STOP_*, or -1: the root was terminal */
} mc_job;

static void *mc_job_run(void *arg)
{
    mc_job *j = arg;
    ms_state clone;
    long it = 0;
    int stop;
    while ((stop = (it & (MC_CLOCK - 1)) ? ms_budget_iterations(j->budget, it)
                                         : ms_budget_spent(j->budget, it)) < 0) {
        int rc = mc_iterate(&j->t, j->top, j->st, clone.b);
        if (rc >= 0) {
            stop = rc;
            break;
        }
        it++;
        if (j->t.nodes[j->top].flags & MC_TERMINAL)
            break;
        if (j->t.p->solve && (j->t.nodes[j->top].flags & MC_PROVEN)) {
            stop = MG_STOP_DONE; /* the root is solved */
            break;
        }
    }
    j->it = it;
    j->stop = stop;
    return NULL;
}

/* The visited edge of action a at job j's current node, or NULL. */
static const mc_edge *mc_job_edge(const mc_job *j, mg_action a)
{
    if (j->top < 0)
        return NULL;
    const mc_node *N = &j->t.nodes[j->top];
    for (int i = 0; N->edges >= 0 && i < N->nexp; i++) {
        const mc_edge *e = &j->t.edges[N->edges + i];
        if (e->a == a && e->visits > 0)
            return e;
    }
    return NULL;
}

/* Action a's visits and mean summed over the jobs' current nodes. */
static void mc_total(const mc_job *jobs, int n, mg_action a, uint32_t *visits, double *mean)
{
    uint32_t v = 0;
    double sum = 0;
    for (int j = 0; j < n; j++) {
        const mc_edge *e = mc_job_edge(&jobs[j], a);
        if (e) {
            v += e->visits;
            sum += e->mean * e->visits;
        }
    }
    *visits = v;
    *mean = v ? sum / v : 0;
}

/* The best action over the jobs' current nodes (the first met wins ties: job 0's edges in
 * order, then actions new in job 1, ...); its edge in the first job that has it, or NULL
 * when no job's node is the root player's with a visited edge. */
static const mc_edge *mc_merged_final(mc_job *jobs, int n, int robust, const mc_tree **owner,
                                      uint32_t *bv, double *bm)
{
    const mc_edge *best = NULL;
    for (int j = 0; j < n; j++) {
        mc_job *J = &jobs[j];
        if (J->top < 0)
            continue;
        const mc_node *N = &J->t.nodes[J->top];
        if (N->mover != J->t.root_player || (N->flags & MC_TERMINAL) || N->edges < 0) {
            J->top = -1;
            continue;
        }
        for (int i = 0; i < N->nexp; i++) {
            const mc_edge *e = &J->t.edges[N->edges + i];
            if (J->t.p->solve && e->visits > 0 && mc_proof(&J->t, e) > 0) {
                *owner = &J->t; /* a win proven in any tree is played (mc_final's rule) */
                mc_total(jobs, n, e->a, bv, bm);
                return e;
            }
            int counted = e->visits == 0;
            for (int k = 0; k < j && !counted; k++)
                counted = mc_job_edge(&jobs[k], e->a) != NULL;
            if (counted)
                continue;
            uint32_t v;
            double m;
            mc_total(jobs, n, e->a, &v, &m);
            if (!best || ms_final_better(robust, v, m, *bv, *bm)) {
                best = e;
                *owner = &J->t;
                *bv = v;
                *bm = m;
            }
        }
    }
    return best;
}

/* mc_best_path over all the jobs' trees at once; *value: the first step's merged mean. */
static int mc_merged_path(mc_job *jobs, int n, void *st, mg_action *plan, double *value)
{
    int len = 0;
    *value = 0.5;
    while (len < MG_SEARCH_MAX_PLAN - 1) {
        const mc_tree *t = NULL;
        uint32_t v = 0;
        double m = 0;
        const mc_edge *e = mc_merged_final(jobs, n, jobs[0].t.p->robust, &t, &v, &m);
        if (!e)
            break;
        if (len == 0)
            *value = m;
        mg_action a = e->a;
        int end = e->auto_end || t->vt->is_end_turn(a);
        plan[len++] = a;
        if (e->auto_end)
            plan[len++] = t->end;
        mc_step((mc_tree *)t, e, st);
        for (int j = 0; j < n; j++) {
            const mc_edge *f = mc_job_edge(&jobs[j], a);
            jobs[j].top = f ? f->child : -1;
        }
        if (end)
            break;
    }
    return len;
}

/* Root edges summed over the trees, for ms_mcts_roots's callers (mc_roots's contract). */
static int mc_merged_roots(mc_job *jobs, int n, ms_root_edge *roots, int max)
{
    int count = 0;
    for (int j = 0; j < n; j++) {
        const mc_tree *t = &jobs[j].t;
        const mc_node *N = &t->nodes[jobs[j].top];
        if (N->edges < 0 || N->mover != t->root_player)
            continue;
        for (int i = 0; i < N->nexp; i++) {
            const mc_edge *e = &t->edges[N->edges + i];
            int seen = e->visits == 0;
            for (int k = 0; k < count && !seen; k++)
                seen = roots[k].a == e->a;
            if (seen || count >= max)
                continue;
            uint32_t v;
            roots[count].a = e->a;
            mc_total(jobs, n, e->a, &v, &roots[count].mean);
            roots[count].visits = v;
            count++;
        }
    }
    return count;
}

/* The trees of p->threads (at least one) from st, or with obs (st NULL) each from its own
 * determinization of obs (strategy det_mode): ms_mcts_hidden. */
static int mc_parallel(const mg_game_vt *vt, const void *st, const void *obs, int det_mode,
                       const mg_search_params *p, mg_rng *rng, mg_action *plan, int *plan_len,
                       mg_search_stats *stats, ms_root_edge *roots, int max_roots, int *nroots,
                       char *err)
{
    int n = p->threads;
    mc_job *jobs = calloc((size_t)n, sizeof *jobs);
    pthread_t *th = malloc((size_t)n * sizeof *th);
    int rc = jobs && th ? MG_OK : MG_ERR_NOMEM;
    ms_budget budget;
    ms_budget_start(&budget, p);
    int made = 0;
    for (; made < n && rc == MG_OK; made++) {
        mc_job *j = &jobs[made];
        mc_tree *t = &j->t;
        mg_rng_seed(&j->rng, mg_rng_next(rng));
        t->vt = vt;
        t->p = p;
        t->rng = &j->rng;
        t->root_player = vt->current(obs ? obs : st);
        t->k = 2.0 * p->c;
        t->grouped = ms_grouped(vt, p->policy);
        j->budget = &budget;
        j->st = st;
        if (obs) {
            rc = ms_det_sample(vt, obs, det_mode, &j->rng, j->det.b, err);
            j->st = j->det.b;
        }
        if (rc == MG_OK && !mc_alloc(t, p, vt->max_actions))
            rc = MG_ERR_NOMEM;
        if (rc != MG_OK) {
            made++; /* freed below */
            break;
        }
        int created;
        j->top = mc_node_for(t, mc_key_of(t, j->st), &created);
    }
    int started = 0;
    if (rc == MG_OK) {
        /* jobs 1..n-1 on threads of their own, job 0 on the caller's; fewer trees if some
         * threads cannot be started */
        while (started + 1 < n && pthread_create(&th[started + 1], NULL, mc_job_run,
                                                 &jobs[started + 1]) == 0)
            started++;
        mc_job_run(&jobs[0]);
        for (int j = 1; j <= started; j++)
            pthread_join(th[j], NULL);
        int trees = started + 1;
        long evals = 0;
        stats->stop = MG_STOP_DONE;
        for (int j = 0; j < trees; j++) {
            stats->iterations += jobs[j].it;
            evals += jobs[j].t.evals;
            stats->nodes += jobs[j].t.nn;
            if (jobs[j].stop >= 0 && stats->stop == MG_STOP_DONE)
                stats->stop = jobs[j].stop;
        }
        if (nroots)
            *nroots = mc_merged_roots(jobs, trees, roots, max_roots);
        ms_state top_st; /* the own turn's actions are the same in every determinization */
        memcpy(top_st.b, jobs[0].st, vt->state_size);
        int len = mc_merged_path(jobs, trees, top_st.b, plan, &stats->value);
        *plan_len = mc_complete_plan(vt, top_st.b, p, rng, plan, len, &evals);
        stats->evaluations = evals;
    }
    for (int j = 0; j < made; j++)
        mc_free(&jobs[j].t);
    free(jobs);
    free(th);
    return rc;
}

/* ---- A tree kept between searches (mg_search_reuse) -------------------------------------- */

struct mg_search_tree {
    mc_tree t;
    int live;            /* t holds a tree (its arenas are allocated) */
    int root;            /* the previous search's root node */
    int transpositions;  /* the setting the tree was grown with (a table or none) */
    ms_state root_st;    /* the previous search's root state */
};

mg_search_tree *mg_search_tree_new(void)
{
    return calloc(1, sizeof(mg_search_tree));
}

void mg_search_tree_free(mg_search_tree *tree)
{
    if (!tree)
        return;
    if (tree->live)
        mc_free(&tree->t);
    free(tree);
}

/* realloc *p to n elements of sz bytes when it holds fewer (cap); 0 if out of memory. */
static int mc_grow(void **p, long *cap, long n, size_t sz)
{
    if (n <= *cap)
        return 1;
    void *q = realloc(*p, (size_t)n * sz);
    if (!q)
        return 0;
    *p = q;
    *cap = n;
    return 1;
}

/* Room in a kept tree for one more search with parameters p: the arenas grown by what
 * mc_alloc gives a new tree, the transposition table rebuilt larger if the tree outgrew it.
 * 0 when that passes the node cap (max_nodes) or memory runs out: the caller starts anew. */
static int mc_reserve(mc_tree *t, const mg_search_params *p, int max_actions)
{
    long cap = mc_cap(p);
    long n = mc_nodes_wanted(p);
    if (t->nn + n > cap)
        return 0;
    long nodes = t->nn + n, acap = t->acap, ecap = t->ecap, ncap = t->ncap;
    long rcap = t->acap;
    int ok = mc_grow((void **)&t->nodes, &ncap, nodes, sizeof *t->nodes) &&
             mc_grow((void **)&t->edges, &ecap, t->ne + (MC_B0 + 4) * n + 2L * max_actions,
                     sizeof *t->edges) &&
             mc_grow((void **)&t->acts, &acap, t->na + 12 * n + 256L * max_actions,
                     sizeof *t->acts) &&
             mc_grow((void **)&t->rates, &rcap, acap, sizeof *t->rates);
    t->ncap = ncap;
    t->ecap = ecap;
    t->acap = acap < rcap ? acap : rcap;
    if (!ok)
        return 0;
    if (!t->tt)
        return 1;
    unsigned long slots = ms_table_slots(p, nodes, 800);
    if (slots <= t->tmask + 1)
        return 1;
    ms_slot *tt = ms_slots_rehash(t->tt, t->tmask, slots);
    if (!tt)
        return 1; /* the old table goes on (a full table records no more transpositions) */
    free(t->tt);
    t->tt = tt;
    t->tmask = slots - 1;
    t->tlimit = slots / 10 * 7;
    return 1;
}

/* The node of the kept tree to search on from st: the previous root if st is its state
 * (same hash), or the child of one of its root player's edges whose action leads there
 * without chance within the turn (mg_search_reuse); -1 for none. */
static int mc_reroot(mg_search_tree *tree, const void *st)
{
    mc_tree *t = &tree->t;
    const mg_game_vt *vt = t->vt;
    uint64_t h = vt->hash(st);
    if (vt->hash(tree->root_st.b) == h)
        return tree->root;
    const mc_node *N = &t->nodes[tree->root];
    if (N->mover != t->root_player || (N->flags & MC_TERMINAL) || N->edges < 0)
        return -1;
    for (int i = 0; i < N->nexp; i++) {
        const mc_edge *e = &t->edges[N->edges + i];
        if (e->child < 0 || e->visits == 0 || e->auto_end || vt->is_end_turn(e->a))
            continue;
        const mc_node *C = &t->nodes[e->child];
        if (C->mover != t->root_player || (C->flags & MC_TERMINAL))
            continue;
        /* An action with chance draws from the stream it is given: one that leaves the
         * stream untouched and reaches st's hash is the action that was played, without
         * chance. (A chance outcome that equals the tree's sample is not trusted either: the
         * child's statistics mix every outcome the iterations drew.) */
        ms_state s;
        mg_rng r, r0;
        mg_rng_seed(&r, 0x5eedu);
        r0 = r;
        memcpy(s.b, tree->root_st.b, vt->state_size);
        if (vt->apply(s.b, e->a, &r) == MG_OK && memcmp(&r, &r0, sizeof r) == 0 &&
            vt->hash(s.b) == h)
            return e->child;
    }
    return -1;
}

int ms_mcts_reuse(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                  mg_search_tree *tree, mg_rng *rng, mg_action *plan, int *plan_len,
                  mg_search_stats *stats)
{
    pthread_once(&mc_tab_once, mc_tab_init);
    /* the budget counts from here: growing a kept tree's arenas is part of the search's time */
    ms_budget budget;
    ms_budget_start(&budget, p);
    mc_tree *t = &tree->t;
    int top = -1;
    if (tree->live && t->vt == vt && tree->transpositions == p->transpositions &&
        t->root_player == vt->current(st)) {
        t->rng = rng;
        top = mc_reroot(tree, st);
        if (top >= 0 && !mc_reserve(t, p, vt->max_actions))
            top = -1;
    }
    if (top < 0) { /* a new tree */
        if (tree->live)
            mc_free(t);
        tree->live = 0;
        memset(t, 0, sizeof *t);
        t->vt = vt;
        t->p = p;
        t->rng = rng;
        t->root_player = vt->current(st);
        if (!mc_alloc(t, p, vt->max_actions)) {
            mc_free(t);
            memset(t, 0, sizeof *t);
            return MG_ERR_NOMEM;
        }
        tree->live = 1;
        tree->transpositions = p->transpositions;
        int created;
        top = mc_node_for(t, mc_key_of(t, st), &created);
    }
    t->p = p;
    t->rng = rng;
    t->k = 2.0 * p->c;
    t->grouped = ms_grouped(vt, p->policy);
    t->evals = 0;
    t->ends = 0;
    stats->reused = t->nodes[top].visits;
    ms_state top_st, clone;
    memcpy(top_st.b, st, vt->state_size);
    long it = 0;
    int stop = -1;
    while ((stop = (it & (MC_CLOCK - 1)) ? ms_budget_iterations(&budget, it)
                                         : ms_budget_spent(&budget, it)) < 0) {
        int rc = mc_iterate(t, top, top_st.b, clone.b);
        if (rc >= 0) {
            stop = rc;
            break;
        }
        it++;
        if (p->solve && (t->nodes[top].flags & MC_PROVEN)) {
            stop = MG_STOP_DONE;
            break;
        }
    }
    int len = mc_best_path(t, top, top_st.b, plan, 0);
    long evals = t->evals;
    *plan_len = mc_complete_plan(vt, top_st.b, p, rng, plan, len, &evals);
    const mc_node *R = &t->nodes[top];
    long bi = R->edges >= 0 ? mc_final(t, R) : -1;
    stats->iterations = it;
    stats->evaluations = evals;
    stats->nodes = t->nn;
    stats->value = bi >= 0 ? t->edges[bi].mean : 0.5;
    if (p->solve && bi >= 0 && mc_proof(t, &t->edges[bi]))
        stats->value = mc_proof(t, &t->edges[bi]) > 0 ? 1.0 : 0.0;
    stats->stop = stop < 0 ? MG_STOP_DONE : stop;
    tree->root = top;
    memcpy(tree->root_st.b, st, vt->state_size);
    t->p = NULL; /* the caller's parameters and stream are not kept */
    t->rng = NULL;
    return MG_OK;
}

/* ---- Entry points ------------------------------------------------------------------------- */

int mg_search_mcts(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                   mg_rng *rng, mg_action *plan, int *plan_len, mg_search_stats *stats)
{
    return ms_mcts_roots(vt, st, p, rng, plan, plan_len, stats, NULL, 0, NULL);
}

int ms_mcts_roots(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                  mg_rng *rng, mg_action *plan, int *plan_len, mg_search_stats *stats,
                  ms_root_edge *roots, int max_roots, int *nroots)
{
    pthread_once(&mc_tab_once, mc_tab_init);
    if (p->threads > 1)
        return mc_parallel(vt, st, NULL, 0, p, rng, plan, plan_len, stats, roots, max_roots, nroots,
                           NULL);
    mc_tree t;
    memset(&t, 0, sizeof t);
    t.vt = vt;
    t.p = p;
    t.rng = rng;
    t.root_player = vt->current(st);
    t.k = 2.0 * p->c;
    t.grouped = ms_grouped(vt, p->policy);
    if (!mc_alloc(&t, p, vt->max_actions)) {
        mc_free(&t);
        return MG_ERR_NOMEM;
    }
    ms_budget budget;
    ms_budget_start(&budget, p);
    ms_state top_st, clone;
    memcpy(top_st.b, st, vt->state_size);
    int created, top = mc_node_for(&t, mc_key_of(&t, st), &created);
    const int root0 = top;
    mg_action committed[MG_SEARCH_MAX_PLAN];
    int ncommit = 0;

    /* Bridge burning: one phase per action of the turn; cut k happens at k/phases. */
    int phases = p->bridge_burning ? ms_turn_length(vt, st, p, rng) : 0;
    int cuts = 0;
    long collapse_k = p->collapse_k;
    if (collapse_k < 0)
        collapse_k = p->budget_ms > 0 ? (long)(20.0 * p->budget_ms / 1000.0 + 0.5) : 20;
    if (collapse_k < 0)
        collapse_k = 1;
    int collapsed = 0;

    long it = 0;
    int stop = -1;
    /* the clock is read every MC_CLOCK iterations (an iteration takes about 1.5 us) */
    while ((stop = (it & (MC_CLOCK - 1)) ? ms_budget_iterations(&budget, it)
                                         : ms_budget_spent(&budget, it)) < 0) {
        if (phases > 1 && cuts < phases - 1 &&
            ms_budget_progress(&budget, it) >= (double)(cuts + 1) / phases) {
            cuts++;
            const mc_node *N = &t.nodes[top];
            long ei = N->edges >= 0 && N->mover == t.root_player ? mc_final(&t, N) : -1;
            if (ei >= 0) {
                const mc_edge *e = &t.edges[ei];
                mc_step(&t, e, top_st.b);
                committed[ncommit++] = e->a;
                if (e->auto_end)
                    committed[ncommit++] = t.end;
                top = e->child;
                const mc_node *C = &t.nodes[top];
                if (vt->is_end_turn(e->a) || e->auto_end || C->mover != t.root_player ||
                    (C->flags & MC_TERMINAL))
                    phases = 0; /* the turn is decided */
            }
        }
        if (collapse_k > 0 && !collapsed && t.ends >= collapse_k) {
            mc_collapse(&t, top);
            collapsed = 1;
        }
        int rc = mc_iterate(&t, top, top_st.b, clone.b);
        if (rc >= 0) {
            stop = rc;
            break;
        }
        it++;
        if (t.nodes[top].flags & MC_TERMINAL)
            break; /* nothing to search: the committed actions ended the game */
        if (p->solve && (t.nodes[top].flags & MC_PROVEN) && phases <= 1) {
            stop = MG_STOP_DONE; /* the root is solved: more iterations change nothing */
            break;
        }
    }

    /* The plan: committed actions, the best path below, then completion. */
    int len = ncommit;
    memcpy(plan, committed, (size_t)ncommit * sizeof *plan);
    len = mc_best_path(&t, top, top_st.b, plan, len);
    long evals = t.evals;
    *plan_len = mc_complete_plan(vt, top_st.b, p, rng, plan, len, &evals);
    const mc_node *R = &t.nodes[top];
    long bi = R->edges >= 0 ? mc_final(&t, R) : -1;
    stats->iterations = it;
    stats->evaluations = evals;
    stats->nodes = t.nn;
    stats->value = bi >= 0 ? t.edges[bi].mean : 0.5;
    if (p->solve && bi >= 0 && mc_proof(&t, &t.edges[bi])) /* the proven value, not the mean */
        stats->value = mc_proof(&t, &t.edges[bi]) > 0 ? 1.0 : 0.0;
    stats->stop = stop < 0 ? MG_STOP_DONE : stop;
    if (nroots)
        *nroots = mc_roots(&t, root0, roots, max_roots);
    mc_free(&t);
    return MG_OK;
}

int ms_mcts_hidden(const mg_game_vt *vt, const void *obs, const mg_search_params *p,
                   const mg_det_params *d, mg_rng *rng, mg_action *plan, int *plan_len,
                   mg_search_stats *stats, char *err)
{
    pthread_once(&mc_tab_once, mc_tab_init);
    double t0 = ms_now();
    int rc = mc_parallel(vt, NULL, obs, d->mode, p, rng, plan, plan_len, stats, NULL, 0, NULL, err);
    stats->elapsed_ms = ms_now() - t0;
    return rc;
}
