/* mg_search_uct.c: UCT over atomic actions, as the card-game thesis runs it (spec/cards.md
 * §8.4): the tree is the mover's move tree, each node keeps the state made when it was
 * expanded (closed loop), END_TURN is the only edge into a leaf, and the hidden cards are
 * sampled again for every simulation from the leaf's state. Rewards are in [-1, 1] for the
 * root player at every depth (one player's tree: no sign flips). The final path follows the
 * most visited children; a path that stops before END_TURN is completed by the
 * post-Monte-Carlo strategy (§8.5). */
#include <math.h>
#include <stdlib.h>

#include "mg_search_internal.h"

#define UT_DEFAULT_NODES 65536

typedef struct ut_node {
    int32_t child, sibling; /* first child and next sibling, -1 for none */
    mg_action action;       /* the edge into this node */
    uint32_t n;             /* simulations through the node */
    double sum;             /* their rewards, each in [-1, 1] */
    int16_t nlegal, nchild; /* the node's legal actions (0 at a leaf) and children made */
    uint8_t leaf;           /* END_TURN taken or the game over */
} ut_node;

typedef struct ut_tree {
    const mg_game_vt *vt;
    const mg_search_params *p;
    mg_rng *rng;
    ut_node *nodes;
    unsigned char *states; /* cap x state_size: each node's state */
    long count, cap;
    int mover, det;
} ut_tree;

static unsigned char *ut_state(const ut_tree *t, int32_t v)
{
    return t->states + (size_t)v * t->vt->state_size;
}

/* Make node `v` from the state already in its slot. */
static void ut_init(ut_tree *t, int32_t v, mg_action a, int leaf)
{
    mg_action acts[MG_MAX_ACTIONS];
    ut_node *u = &t->nodes[v];
    memset(u, 0, sizeof *u);
    u->child = u->sibling = -1;
    u->action = a;
    u->leaf = (uint8_t)leaf;
    u->nlegal = (int16_t)(leaf ? 0 : t->vt->legal(ut_state(t, v), acts));
}

/* The child with the highest xbar + c sqrt(2 ln n / n_j) (all children visited). */
static int32_t ut_select(const ut_tree *t, int32_t v)
{
    double l = 2.0 * log((double)t->nodes[v].n), bv = -HUGE_VAL;
    int32_t best = t->nodes[v].child;
    for (int32_t j = best; j >= 0; j = t->nodes[j].sibling) {
        const ut_node *u = &t->nodes[j];
        double x = u->sum / u->n + t->p->c * sqrt(l / u->n);
        if (x > bv) {
            bv = x;
            best = j;
        }
    }
    return best;
}

/* Expand a random untried action of v; returns the new node. */
static int32_t ut_expand(ut_tree *t, int32_t v)
{
    const mg_game_vt *vt = t->vt;
    mg_action acts[MG_MAX_ACTIONS];
    ut_node *pv = &t->nodes[v];
    int n = vt->legal(ut_state(t, v), acts);
    int k = (int)mg_rng_below(t->rng, (uint32_t)(n - pv->nchild));
    mg_action a = acts[0];
    for (int i = 0; i < n; i++) { /* the k-th action that has no child yet */
        int tried = 0;
        for (int32_t j = pv->child; j >= 0 && !tried; j = t->nodes[j].sibling)
            tried = t->nodes[j].action == acts[i];
        if (!tried && k-- == 0) {
            a = acts[i];
            break;
        }
    }
    int32_t u = (int32_t)t->count;
    unsigned char *s = ut_state(t, u);
    memcpy(s, ut_state(t, v), vt->state_size);
    if (vt->apply(s, a, t->rng) != MG_OK)
        return v; /* cannot happen: a is legal; simulate from v */
    t->count++;
    ut_init(t, u, a, ms_turn_over(vt, s, a) || vt->current(s) != t->mover);
    pv = &t->nodes[v];
    t->nodes[u].sibling = pv->child;
    pv->child = u;
    pv->nchild++;
    return u;
}

/* One simulation: select, expand, a rollout from a fresh determinization, backup. */
static void ut_iterate(ut_tree *t)
{
    int32_t path[MG_SEARCH_MAX_PLAN + 1];
    int depth = 0;
    int32_t v = 0;
    path[0] = 0;
    while (!t->nodes[v].leaf && t->nodes[v].nchild == t->nodes[v].nlegal &&
           depth < MG_SEARCH_MAX_PLAN - 1) {
        v = ut_select(t, v);
        path[++depth] = v;
    }
    if (!t->nodes[v].leaf && t->nodes[v].nchild < t->nodes[v].nlegal && t->count < t->cap &&
        depth < MG_SEARCH_MAX_PLAN - 1) {
        int32_t u = ut_expand(t, v);
        if (u != v)
            path[++depth] = v = u;
    }
    ms_state d;
    ms_resample(t->vt, ut_state(t, v), t->mover, t->det, t->rng, d.b);
    double r = 2.0 * mg_rollout(t->vt, d.b, t->p, t->mover, t->rng) - 1.0;
    for (int i = 0; i <= depth; i++) {
        t->nodes[path[i]].n++;
        t->nodes[path[i]].sum += r;
    }
}

/* Complete plan[0..len) from st (after it, the mover still to act) by p->post. */
static int ut_post(const ut_tree *t, unsigned char *st, mg_action *plan, int len)
{
    const mg_game_vt *vt = t->vt;
    const mg_search_params *p = t->p;
    if (p->post == MG_POST_RMP || p->post == MG_POST_RMPMAX) {
        int k = ms_random_move(vt, st, p, p->post == MG_POST_RMPMAX, MG_SEARCH_MAX_PLAN - len,
                               t->rng, plan + len, NULL);
        if (k > 0)
            return len + k;
    } else if (p->post == MG_POST_RAP) { /* RAP without gen_end_ply */
        mg_action acts[MG_MAX_ACTIONS];
        while (len < MG_SEARCH_MAX_PLAN - 1) {
            int n = vt->legal(st, acts);
            if (n <= 0)
                return len;
            mg_action a = mg_policy_choose(vt, st, acts, n, p, MG_POLICY_RANDOM, t->rng);
            if (vt->apply(st, a, t->rng) != MG_OK)
                break;
            plan[len++] = a;
            if (ms_turn_over(vt, st, a) || vt->current(st) != t->mover)
                return len;
        }
    }
    if (!vt->terminal(st, NULL))
        plan[len++] = ms_end_action(vt, st);
    return len;
}

int mg_search_uct(const mg_game_vt *vt, const void *st, const mg_search_params *p, mg_rng *rng,
                  mg_action *plan, int *plan_len, mg_search_stats *stats)
{
    ut_tree t;
    memset(&t, 0, sizeof t);
    t.vt = vt;
    t.p = p;
    t.rng = rng;
    t.mover = vt->current(st);
    t.det = vt->observer(st) >= 0;
    t.cap = p->max_nodes > 0 ? p->max_nodes : UT_DEFAULT_NODES;
    if (p->iterations > 0 && p->iterations + 1 < t.cap)
        t.cap = p->iterations + 1;
    t.nodes = malloc((size_t)t.cap * sizeof *t.nodes);
    t.states = malloc((size_t)t.cap * vt->state_size);
    if (!t.nodes || !t.states) {
        free(t.nodes);
        free(t.states);
        return MG_ERR_NOMEM;
    }
    /* the root: one determinization (a full state is copied), from which the expanded
     * states descend */
    (void)mg_determinize(vt, st, MG_DET_UNIFORM, rng, ut_state(&t, 0));
    t.count = 1;
    ut_init(&t, 0, 0, 0);
    ms_budget budget;
    ms_budget_start(&budget, p);
    long iter = 0;
    int stop;
    while ((stop = ms_budget_spent(&budget, iter)) < 0) {
        ut_iterate(&t);
        iter++;
    }
    /* the most visited path (ties: the higher mean, then the child found first) */
    int len = 0;
    int32_t v = 0;
    int ended = 0;
    double value = 0;
    while (t.nodes[v].child >= 0 && len < MG_SEARCH_MAX_PLAN - 1) {
        int32_t best = t.nodes[v].child;
        for (int32_t j = best; j >= 0; j = t.nodes[j].sibling)
            if (ms_final_better(1, t.nodes[j].n, t.nodes[j].sum / t.nodes[j].n, t.nodes[best].n,
                                t.nodes[best].sum / t.nodes[best].n))
                best = j;
        if (len == 0)
            value = (t.nodes[best].sum / t.nodes[best].n + 1.0) / 2.0;
        plan[len++] = t.nodes[best].action;
        v = best;
        if (t.nodes[v].leaf) {
            ended = 1;
            break;
        }
    }
    if (!ended) {
        ms_state s;
        memcpy(s.b, ut_state(&t, v), vt->state_size);
        len = ut_post(&t, s.b, plan, len);
    }
    *plan_len = len;
    stats->iterations = iter;
    stats->evaluations = iter;
    stats->nodes = t.count;
    stats->value = value;
    stats->stop = stop;
    free(t.nodes);
    free(t.states);
    return MG_OK;
}
