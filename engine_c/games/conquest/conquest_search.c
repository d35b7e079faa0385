/* conquest_search.c: the thesis agents of spec §11 (NE-MCTS, BB-MCTS, OEP) and the entry
 * point of every conquest agent. The generic kernels (engine_c/src) search single actions
 * with the real dice; the thesis agents need the territory decisions of §8 and the
 * deterministic battles of §7.3 inside the search, so they live here, beside the game.
 *
 * A tree node stores only its decision (territory, unit set) and its statistics: each
 * iteration replays the decisions from the root on a copy of the forward model, which costs
 * less than the 40-phase playout that follows and keeps the tree small. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conquest_ai.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

typedef struct budget {
    double t0, deadline;
    long max_iter;
} budget;

static void budget_start(budget *b, const cq_agent_params *p)
{
    b->t0 = now_ms();
    double ms = p->budget_ms > 0 || p->iterations > 0 ? p->budget_ms : 1000.0;
    b->deadline = ms > 0 ? b->t0 + ms : 0;
    b->max_iter = p->iterations;
}

static int budget_spent(const budget *b, long iter)
{
    return (b->max_iter > 0 && iter >= b->max_iter) || (b->deadline > 0 && now_ms() >= b->deadline);
}

/* How far into the budget we are, in [0, 1] (the larger of time and iterations). */
static double budget_progress(const budget *b, long iter)
{
    double x = 0;
    if (b->max_iter > 0)
        x = (double)iter / (double)b->max_iter;
    if (b->deadline > 0) {
        double y = (now_ms() - b->t0) / (b->deadline - b->t0);
        x = y > x ? y : x;
    }
    return x;
}

static cqa_reward reward_of(const cq_agent_params *p)
{
    return (cqa_reward){p->max_phases, p->win_base, p->win_bonus, p->unit_div};
}

/* ---- The tree (NE-MCTS, BB-MCTS) ---------------------------------------------------------- */

typedef struct node {
    cq_set act;      /* the units this node's decision moves into its parent's territory */
    double q;        /* sum of rewards */
    long n;
    int parent;
    int first;       /* first child (children are contiguous) */
    int16_t nopt;    /* children: -1 not generated yet, 0 the end of the phase */
    int16_t tried;   /* children visited so far (they are tried in generation order) */
    uint8_t terr;    /* the territory decided by this node's children */
    uint8_t pos;     /* index in the decision list after this node's decision */
} node;

typedef struct tree {
    node *nodes;
    long n, cap, max;
    uint8_t list[CQ_MAX_T];
    int nlist;
} tree;

static int tree_grow(tree *t, int extra)
{
    if (t->n + extra <= t->cap)
        return 1;
    long cap = t->cap * 2;
    while (cap < t->n + extra)
        cap *= 2;
    if (cap > t->max)
        cap = t->max;
    if (t->n + extra > cap)
        return 0;
    node *more = realloc(t->nodes, (size_t)cap * sizeof *more);
    if (!more)
        return 0;
    t->nodes = more;
    t->cap = cap;
    return 1;
}

/* Give node v its children: the options of the next territory of the list (from v->pos) that
 * has a decision. 0 if the tree is full. */
static int generate(tree *tr, int v, const cq_fm *f)
{
    cq_set opts[CQA_MAX_OPTIONS];
    node *nv = &tr->nodes[v];
    nv->nopt = 0;
    for (int i = nv->pos; i < tr->nlist; i++) {
        int k = cqa_options(f, tr->list[i], CQA_GEN_TREE, NULL, opts);
        if (k == 0)
            continue;
        if (!tree_grow(tr, k))
            return 0;
        nv = &tr->nodes[v];
        nv->terr = tr->list[i];
        nv->first = (int)tr->n;
        nv->nopt = (int16_t)k;
        for (int j = 0; j < k; j++)
            tr->nodes[tr->n++] = (node){opts[j], 0, 0, v, -1, -1, 0, 0, (uint8_t)(i + 1)};
        break;
    }
    return 1;
}

static double uct(const node *c, long parent_n, double cexp)
{
    return c->q / c->n + cexp * sqrt(log((double)parent_n) / c->n);
}

/* The child of v with the best mean (first on ties), or -1 if none was visited. */
static int best_child(const tree *tr, int v)
{
    const node *nv = &tr->nodes[v];
    int best = -1;
    for (int j = 0; j < nv->tried; j++) {
        const node *c = &tr->nodes[nv->first + j];
        if (c->n > 0 && (best < 0 || c->q / c->n > tr->nodes[best].q / tr->nodes[best].n))
            best = nv->first + j;
    }
    return best;
}

/* The plan: from the root along the best means, SKIPs dropped, then END_PHASE. */
static void tree_plan(const tree *tr, const cq_state *root, mg_action *plan, int *len, double *value)
{
    cq_fm f;
    cqa_init(&f, root);
    int n = 0;
    *value = tr->nodes[0].n ? tr->nodes[0].q / tr->nodes[0].n : 0;
    for (int v = 0, c; tr->nodes[v].nopt > 0 && (c = best_child(tr, v)) >= 0; v = c) {
        cqa_apply_option(&f, tr->nodes[v].terr, tr->nodes[c].act, plan, &n);
        *value = tr->nodes[c].q / tr->nodes[c].n;
    }
    plan[n++] = CQ_END_PHASE;
    *len = n;
}

/* Replay the decisions from the root to v on f (a copy of the root). */
static void replay(const tree *tr, int v, cq_fm *f)
{
    int path[CQ_MAX_T + 1], k = 0;
    for (; v > 0; v = tr->nodes[v].parent)
        path[k++] = v;
    while (k-- > 0) {
        const node *c = &tr->nodes[path[k]];
        cqa_apply_option(f, tr->nodes[c->parent].terr, c->act, NULL, NULL);
    }
}

/* NE-MCTS (c < 0: the best mean, no exploration) and BB-MCTS (c >= 0: UCT, and the root of the
 * search moves down by burning bridges). */
static int mcts(const cq_state *st, const cq_agent_params *p, int bb, mg_rng *rng, mg_action *plan,
                int *len, cq_agent_stats *stats)
{
    tree tr = {NULL, 0, 0, p->max_nodes > 0 ? p->max_nodes : 1 << 21, {0}, 0};
    cq_fm root;
    cqa_init(&root, st);
    tr.nlist = cqa_decision_list(&root, tr.list);
    tr.cap = 1024 < tr.max ? 1024 : tr.max;
    tr.nodes = malloc((size_t)tr.cap * sizeof *tr.nodes);
    if (!tr.nodes)
        return MG_ERR_NOMEM;
    tr.nodes[tr.n++] = (node){{{0, 0}}, 0, 0, -1, -1, -1, 0, 0, 0};
    cqa_reward rw = reward_of(p);
    int me = st->player, r0 = 0, decisions = bb ? cqa_root_decisions(&root) : 1;
    budget b;
    budget_start(&b, p);
    long it = 0, burns = 0;
    while (!budget_spent(&b, it)) {
        cq_fm f = root;
        if (r0)
            replay(&tr, r0, &f);
        int v = r0, full = 0;
        for (;;) {
            if (tr.nodes[v].nopt < 0 && !generate(&tr, v, &f)) {
                full = 1;
                break;
            }
            node *nv = &tr.nodes[v];
            if (nv->nopt == 0)
                break; /* the end of the phase */
            int c;
            if (nv->tried < nv->nopt) {
                c = nv->first + nv->tried++;
            } else if (!bb) {
                c = best_child(&tr, v);
            } else {
                c = nv->first;
                for (int j = 1; j < nv->nopt; j++)
                    if (uct(&tr.nodes[nv->first + j], nv->n, p->c) > uct(&tr.nodes[c], nv->n, p->c))
                        c = nv->first + j;
            }
            cqa_apply_option(&f, nv->terr, tr.nodes[c].act, NULL, NULL);
            v = c;
            if (tr.nodes[c].n == 0)
                break; /* a new node: evaluate it */
        }
        if (full)
            break;
        cqa_end_phase(&f); /* the remaining decisions are SKIPs */
        double r = cqa_playout(&f, me, &rw, bb ? p->epsilon : 0.0, rng, &stats->playout_phases);
        for (; v >= 0; v = tr.nodes[v].parent) {
            tr.nodes[v].q += r;
            tr.nodes[v].n++;
        }
        it++;
        /* burn the bridge: after each 1/decisions of the budget, the best child of r0 (UCT
         * value, exploration included) becomes the root of the search (§11.2) */
        if (bb && decisions > 0 && burns < decisions - 1 && budget_progress(&b, it) * decisions >= burns + 1) {
            const node *nr = &tr.nodes[r0];
            if (nr->nopt > 0 && nr->tried > 0) { /* among the children visited so far */
                int c = nr->first;
                for (int j = 1; j < nr->tried; j++)
                    if (uct(&tr.nodes[nr->first + j], nr->n, p->c) > uct(&tr.nodes[c], nr->n, p->c))
                        c = nr->first + j;
                r0 = c;
            }
            burns++;
        }
    }
    tree_plan(&tr, st, plan, len, &stats->value);
    stats->iterations = it;
    stats->playouts = it;
    stats->nodes = tr.n;
    free(tr.nodes);
    return MG_OK;
}

/* ---- OEP (§11.3) ------------------------------------------------------------------------- */

typedef struct genome {
    uint8_t terr[CQ_MAX_T];
    cq_set act[CQ_MAX_T];
    int len;
    double value;
} genome;

static cq_set random_option(const cq_fm *f, int t, mg_rng *rng)
{
    cq_set opts[CQA_MAX_OPTIONS];
    int k = cqa_options(f, t, CQA_GEN_OEP, rng, opts);
    return k ? opts[mg_rng_below(rng, (uint32_t)k)] : (cq_set){{0, 0}};
}

/* x can still move into t as a whole: every unit unmoved and with a path. */
static int still_valid(const cq_fm *f, int t, cq_set x)
{
    int mid;
    SET_FOR(u, x)
        if (f->s.loc[u] == CQ_NONE || cqa_moved(f, u) || !cqa_path(f, u, t, &mid))
            return 0;
    return 1;
}

static const cq_set *gene_of(const genome *g, int t)
{
    for (int i = 0; i < g->len; i++)
        if (g->terr[i] == t)
            return &g->act[i];
    return NULL;
}

/* Build a genome (parents NULL: at random) on a copy of the root, then evaluate it: end the
 * phase on the forward model, play out, reward (§11.3). */
static void breed(genome *child, const genome *a, const genome *b, const cq_fm *root, const uint8_t *list,
                  int n, const cq_agent_params *p, mg_rng *rng, long *phases)
{
    cq_fm f = *root;
    child->len = n;
    memcpy(child->terr, list, (size_t)n);
    for (int i = n - 1; i > 0; i--) { /* territories in random order */
        int j = (int)mg_rng_below(rng, (uint32_t)(i + 1));
        uint8_t x = child->terr[i];
        child->terr[i] = child->terr[j];
        child->terr[j] = x;
    }
    int mutate = a && mg_rng_double(rng) < p->mutation ? (int)mg_rng_below(rng, (uint32_t)n) : -1;
    for (int i = 0; i < n; i++) {
        int t = child->terr[i];
        cq_set x;
        const cq_set *from = a ? gene_of(mg_rng_below(rng, 2) ? b : a, t) : NULL;
        if (from && i != mutate && (set_empty(*from) || still_valid(&f, t, *from)))
            x = *from;
        else
            x = random_option(&f, t, rng); /* creation, mutation, or repair */
        child->act[i] = x;
        cqa_apply_option(&f, t, x, NULL, NULL);
    }
    cqa_end_phase(&f);
    cqa_reward rw = reward_of(p);
    child->value = cqa_playout(&f, root->s.player, &rw, 0.0, rng, phases);
}

static int by_value(const void *x, const void *y)
{
    double a = ((const genome *)x)->value, b = ((const genome *)y)->value;
    return (a < b) - (a > b);
}

static int oep(const cq_state *st, const cq_agent_params *p, mg_rng *rng, mg_action *plan, int *len,
               cq_agent_stats *stats)
{
    cq_fm root;
    cqa_init(&root, st);
    uint8_t list[CQ_MAX_T];
    int n = cqa_decision_list(&root, list), pop = p->population;
    genome *g = malloc((size_t)pop * sizeof *g);
    if (!g)
        return MG_ERR_NOMEM;
    budget b;
    budget_start(&b, p);
    for (int i = 0; i < pop; i++)
        breed(&g[i], NULL, NULL, &root, list, n, p, rng, &stats->playout_phases);
    long gens = 0, made = pop;
    int keep = (int)(pop * p->survival);
    keep = keep < 1 ? 1 : keep > pop ? pop : keep;
    qsort(g, (size_t)pop, sizeof *g, by_value);
    while (keep < pop && !budget_spent(&b, gens)) {
        for (int i = keep; i < pop; i++) {
            const genome *a = &g[(i - keep) % keep], *c = &g[mg_rng_below(rng, (uint32_t)keep)];
            breed(&g[i], a, c, &root, list, n, p, rng, &stats->playout_phases);
            made++;
        }
        qsort(g, (size_t)pop, sizeof *g, by_value); /* survivors keep their value */
        gens++;
    }
    cq_fm f = root;
    int k = 0;
    for (int i = 0; i < g[0].len; i++)
        cqa_apply_option(&f, g[0].terr[i], g[0].act[i], plan, &k);
    plan[k++] = CQ_END_PHASE;
    *len = k;
    stats->iterations = gens;
    stats->playouts = made;
    stats->nodes = made;
    stats->value = g[0].value;
    free(g);
    return MG_OK;
}

/* ---- The entry point ---------------------------------------------------------------------- */

int cq_agent_defaults(int agent, cq_agent_params *p)
{
    *p = (cq_agent_params){agent, 0, 0, 40, 0.6, 0.4, 2.0, 1 / sqrt(2.0), 0.5, 50, 0.5, 0.1, 100, 1 << 21};
    return agent >= 0 && agent < CQ_AGENT_COUNT ? MG_OK : MG_ERR_CONFIG;
}

static int params_ok(const cq_agent_params *p)
{
    return p->agent >= 0 && p->agent < CQ_AGENT_COUNT && p->budget_ms >= 0 && p->iterations >= 0 &&
           p->max_phases >= 1 && p->unit_div > 0 && p->c >= 0 && p->epsilon >= 0 && p->epsilon <= 1 &&
           p->population >= 2 && p->survival > 0 && p->survival <= 1 && p->mutation >= 0 &&
           p->mutation <= 1 && p->hard_runs >= 1 && p->max_nodes >= 1;
}

int cq_agent_plan(const cq_state *st, const cq_agent_params *p, mg_rng *rng, mg_action *plan, int *plan_len,
                  cq_agent_stats *stats)
{
    cq_agent_stats local;
    if (!stats)
        stats = &local;
    memset(stats, 0, sizeof *stats);
    *plan_len = 0;
    if (st->phase == CQ_OVER)
        return MG_ERR_TERMINAL;
    if (!params_ok(p))
        return MG_ERR_CONFIG;
    double t0 = now_ms();
    int rc = MG_OK;
    if (p->agent == CQ_AGENT_NE || p->agent == CQ_AGENT_BB) {
        rc = mcts(st, p, p->agent == CQ_AGENT_BB, rng, plan, plan_len, stats);
    } else if (p->agent == CQ_AGENT_OEP) {
        rc = oep(st, p, rng, plan, plan_len, stats);
    } else {
        cq_fm f;
        cqa_init(&f, st);
        cqa_heur easy = {0, 0, 1.37, rng};
        if (p->agent == CQ_AGENT_HEURISTIC)
            *plan_len = cqa_heuristic_phase(&f, &CQA_PLAYOUT_HEUR, plan);
        else if (p->agent == CQ_AGENT_EASY)
            *plan_len = cqa_heuristic_phase(&f, &easy, plan);
        else
            *plan_len = cqa_pro_phase(&f, p->agent == CQ_AGENT_HARD, p->hard_runs, rng, plan);
        plan[(*plan_len)++] = CQ_END_PHASE;
    }
    stats->elapsed_ms = now_ms() - t0;
    return rc;
}
