/* mg_search_emcts.c: Evolutionary MCTS (EMCTS; Baier and Cowling, IEEE CIG 2018) and its
 * flexible-horizon extension (FH-EMCTS; Baier and Cowling, AIIDE 2018).
 *
 * A tree whose nodes are genomes (action sequences) and whose edges are mutations: the root
 * is a random genome, a child is its parent mutated once (one gene replaced by another
 * action, the genes after it repaired), a node's value is the heuristic of the state its
 * genome reaches, and UCB decides which genome to mutate next. No random playouts: as in
 * both papers' abstracts, the evaluation is the heuristic of the sequence's end state.
 *
 * EMCTS (p->horizon 0): a genome is the mover's whole turn, evaluated after its END_TURN.
 * FH-EMCTS (p->horizon > 0): a genome is the mover's next `horizon` actions, across turn
 * ends: between its turns the opponent plays by a model, and where the genome runs out in
 * the middle of a turn the mover's own model finishes it (the AIIDE paper's "simple models
 * of its own and the opponent's behavior"). Both models are greedy: at each step the best,
 * by the heuristic for the player acting, of the p->model_k best-rated actions (the
 * opponent model capped at the ten best-ordered actions, as summarised from the AIIDE
 * paper; the own model is the same, the paper text was not available to say otherwise).
 * The genome is evaluated after the END_TURN of the last own turn it touches.
 *
 * What the papers' full texts say could not be read here (the search tool holds their
 * abstracts only); every choice below that is not in the abstracts is ours and says so:
 * - selection: UCB1 over a node's children, with maag's MCTS form mean + 2c sqrt(2 ln N /
 *   n) so that c means the same as for mcts; the means are rescaled to [0, 1] by the
 *   lowest and highest genome values seen in this search (ours: heuristic values of
 *   neighbouring genomes differ by a sliver of the game's value_scale, so the fixed
 *   normalisation of MCTS would leave UCB nothing but exploration);
 * - expansion: a node gets up to p->branching children (mutations) before UCB descends
 *   below it (ours: a mutation space has no natural "fully expanded");
 * - depth: with p->tree_depth > 0 the tree stops at that many mutations from the root and
 *   each iteration continues from the new leaf with random mutations to that depth, the
 *   last one's value backed up (the "rollout" of the mutation tree; ours);
 * - backup: the mean of the values below a node (MCTS's); with p->backup_max the best of
 *   them (ours: the heuristic is deterministic, and most mutations of a good genome are
 *   worse, so its mean sinks as it is explored, as with non-exploring MCTS);
 * - final choice: the genome with the highest value evaluated anywhere in the search
 *   (ours; the heuristic is deterministic, so the best genome seen is a sure lower bound).
 *
 * Budgets: an iteration is one genome built and evaluated (a tree node or a rollout
 * mutation), so an iteration budget compares with OEP's genomes (mg_search_stats.nodes).
 * Memory: one arena of nodes and genes reserved before the first iteration. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "mg_search_internal.h"

/* Steps a genome's walk takes at most (own genes, model actions, opponent turns). */
#define EC_MAX_STEPS 1024

typedef struct ec_node {
    int parent;   /* -1 at the root */
    int first;    /* first child, -1 none */
    int next;     /* next sibling, -1 none */
    int nchild;
    int depth;    /* mutations from the root */
    int len;      /* genes */
    long visits;
    double sum;   /* backed-up values */
    double max;   /* the best value backed up (p->backup_max) */
    double value; /* raw heuristic value of this genome's end state, for the mover */
} ec_node;

typedef struct ec_ctx {
    const mg_game_vt *vt;
    const mg_search_params *p;
    mg_rng *rng;
    const void *root_st;
    int me;                /* the player to act at the root */
    int horizon;           /* genes at most */
    ec_node *nodes;
    mg_action *genes;      /* cap x MG_SEARCH_MAX_PLAN */
    int cap, count;
    double vmin, vmax;     /* lowest and highest value seen (UCB's rescaling) */
    double best, best_raw; /* best value seen (and its heuristic), and the first turn it plays */
    mg_action best_plan[MG_SEARCH_MAX_PLAN];
    int best_len;
    long genomes, evals;
} ec_ctx;

/* A genome under construction: its genes, the first turn it plays (the plan), its value. */
typedef struct ec_genome {
    mg_action g[MG_SEARCH_MAX_PLAN];
    int len;
    mg_action plan[MG_SEARCH_MAX_PLAN];
    int plan_len;
    double value; /* what the search ranks by: the heuristic, a finished game's sooner */
    double raw;   /* the heuristic of the end state */
} ec_genome;

/* The model's action at st (not terminal): the best for the player acting, by the
 * heuristic, of the p->model_k best-rated pruned actions; the first on ties, so the model
 * is deterministic and a genome's value does not depend on the stream. */
static mg_action ec_model_step(ec_ctx *c, const void *st)
{
    const mg_game_vt *vt = c->vt;
    mg_action acts[MG_MAX_ACTIONS];
    ms_state nx;
    int n = ms_actions(vt, st, c->p, MS_PRUNE | MS_SORT, acts);
    if (n > c->p->model_k)
        n = c->p->model_k;
    if (n <= 1)
        return acts[0];
    int who = vt->current(st);
    double best = -DBL_MAX;
    mg_action choice = acts[0];
    for (int i = 0; i < n; i++) {
        memcpy(nx.b, st, vt->state_size);
        if (vt->apply(nx.b, acts[i], c->rng) != MG_OK)
            continue;
        double v = ms_evaluate(vt, c->p, nx.b, who);
        c->evals++;
        if (v > best) {
            best = v;
            choice = acts[i];
        }
    }
    return choice;
}

/* Play the model at st until the player now acting has ended its turn (or the game ended);
 * the actions are appended to out->plan while `record` is set. A turn the model does not
 * end within the plan's room is ended. */
static void ec_model_turn(ec_ctx *c, void *st, ec_genome *out, int record)
{
    const mg_game_vt *vt = c->vt;
    for (int steps = 0; !vt->terminal(st, NULL); steps++) {
        if (steps >= MG_SEARCH_MAX_PLAN - 1 || (record && out->plan_len >= MG_SEARCH_MAX_PLAN - 1)) {
            mg_action e = ms_end_action(vt, st);
            vt->apply(st, e, c->rng);
            if (record)
                out->plan[out->plan_len++] = e;
            return;
        }
        mg_action a = ec_model_step(c, st);
        if (vt->apply(st, a, c->rng) != MG_OK)
            return;
        if (record)
            out->plan[out->plan_len++] = a;
        if (vt->is_end_turn(a))
            return;
    }
}

/* A random pruned action at st, different from `not` when there is another (mutation). */
static mg_action ec_random(ec_ctx *c, const void *st, int avoid, mg_action not)
{
    mg_action acts[MG_MAX_ACTIONS];
    int n = ms_actions(c->vt, st, c->p, MS_PRUNE, acts);
    if (avoid && n > 1) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (acts[i] != not)
                acts[k++] = acts[i];
        n = k;
    }
    return acts[mg_rng_below(c->rng, (uint32_t)n)];
}

/* Build a genome by walking from the root: gene i is src[i] if it may still be taken there
 * (the repair keeps what it can), else a random pruned action; at mut_at (>= 0) a different
 * random action (the mutation). Where src runs out inside the turn the genome goes on at
 * random, as OEP's genomes are made. With a horizon the opponent's turns are played by the
 * model, and the own model finishes the turn in which the genome runs out. */
static void ec_build(ec_ctx *c, const mg_action *src, int srclen, int mut_at, ec_genome *out)
{
    const mg_game_vt *vt = c->vt;
    ms_state s;
    int first = 1; /* still in the root's turn: actions go to the plan */
    int ends = 0;  /* END_TURNs the walk applied (a finished game's rank) */
    memcpy(s.b, c->root_st, vt->state_size);
    out->len = out->plan_len = 0;
    for (int steps = 0; steps < EC_MAX_STEPS && !vt->terminal(s.b, NULL); steps++) {
        if (vt->current(s.b) != c->me) { /* the opponent's turn: its model */
            ec_model_turn(c, s.b, out, 0);
            first = 0;
            ends++;
            continue;
        }
        if (out->len >= c->horizon) { /* the genome is spent: the own model ends the turn */
            ec_model_turn(c, s.b, out, first);
            break;
        }
        int i = out->len;
        mg_action a;
        if (i < srclen && i != mut_at && ms_gene_allowed(vt, s.b, src[i], c->p->early_end))
            a = src[i];
        else
            a = ec_random(c, s.b, i == mut_at && i < srclen, i < srclen ? src[i] : 0);
        if (vt->apply(s.b, a, c->rng) != MG_OK)
            break;
        out->g[out->len++] = a;
        if (first)
            out->plan[out->plan_len++] = a;
        if (vt->is_end_turn(a)) {
            first = 0;
            ends++;
            if (out->len >= c->horizon || !c->p->horizon) /* EMCTS: the genome is one turn */
                break;
        }
    }
    if (first && !vt->terminal(s.b, NULL)) { /* the plan cap inside the first turn */
        mg_action e = ms_end_action(vt, s.b);
        vt->apply(s.b, e, c->rng);
        out->plan[out->plan_len++] = e;
        if (out->len < MG_SEARCH_MAX_PLAN)
            out->g[out->len++] = e;
    }
    out->raw = out->value = ms_evaluate(vt, c->p, s.b, c->me);
    c->evals++;
    int winner;
    if (vt->terminal(s.b, &winner) && winner >= 0) {
        /* A won game is worth more the sooner it is won, a lost one the later it is lost:
         * without this a horizon past the turn plays a win two turns away as gladly as one
         * now, and the opponent gets those turns (ours; the papers' texts were unreadable). */
        double bonus = c->p->value_scale * 1e-3 * (double)(EC_MAX_STEPS - ends);
        out->value += winner == c->me ? bonus : -bonus;
    }
    c->genomes++;
    if (out->value < c->vmin)
        c->vmin = out->value;
    if (out->value > c->vmax)
        c->vmax = out->value;
    if (out->value > c->best) {
        c->best = out->value;
        c->best_raw = out->raw;
        c->best_len = out->plan_len;
        memcpy(c->best_plan, out->plan, (size_t)out->plan_len * sizeof *out->plan);
    }
}

/* Mutate genome src (len genes) into out: one gene chosen uniformly. */
static void ec_mutate(ec_ctx *c, const mg_action *src, int len, ec_genome *out)
{
    int at = len > 0 ? (int)mg_rng_below(c->rng, (uint32_t)len) : -1;
    ec_build(c, src, len, at, out);
}

/* A new node under `parent` (-1: the root) holding genome g. */
static int ec_add(ec_ctx *c, int parent, const ec_genome *g)
{
    int i = c->count++;
    ec_node *n = &c->nodes[i];
    n->parent = parent;
    n->first = n->next = -1;
    n->nchild = 0;
    n->depth = parent >= 0 ? c->nodes[parent].depth + 1 : 0;
    n->len = g->len;
    n->visits = 0;
    n->sum = 0;
    n->max = -DBL_MAX;
    n->value = g->value;
    memcpy(c->genes + (size_t)i * MG_SEARCH_MAX_PLAN, g->g, (size_t)g->len * sizeof *g->g);
    if (parent >= 0) { /* prepend: the order of siblings does not matter to UCB */
        n->next = c->nodes[parent].first;
        c->nodes[parent].first = i;
        c->nodes[parent].nchild++;
    }
    return i;
}

/* The child of node v with the highest UCB value; unvisited children first. */
static int ec_select(const ec_ctx *c, int v)
{
    const ec_node *pn = &c->nodes[v];
    double range = c->vmax - c->vmin;
    double k = 2.0 * c->p->c * sqrt(2.0 * log((double)(pn->visits > 1 ? pn->visits : 1)));
    int best = pn->first;
    double bv = -DBL_MAX;
    for (int i = pn->first; i >= 0; i = c->nodes[i].next) {
        const ec_node *n = &c->nodes[i];
        if (n->visits == 0)
            return i;
        double mean = c->p->backup_max ? n->max : n->sum / (double)n->visits;
        double u = (range > 0 ? (mean - c->vmin) / range : 0.5) + k / sqrt((double)n->visits);
        if (u > bv) {
            bv = u;
            best = i;
        }
    }
    return best;
}

/* 1 if the tree may grow below node v. */
static int ec_open(const ec_ctx *c, int v)
{
    const ec_node *n = &c->nodes[v];
    return c->count < c->cap && n->nchild < c->p->branching &&
           (c->p->tree_depth <= 0 || n->depth < c->p->tree_depth);
}

/* One iteration: descend by UCB, add one mutation, mutate on to the depth limit (at most
 * `room` genomes in all), back up. Returns the genomes it built (1 for a full tree, which
 * still spends the budget). */
static long ec_iterate(ec_ctx *c, ec_genome *tmp, ec_genome *roll, long room)
{
    int v = 0;
    while (!ec_open(c, v) && c->nodes[v].nchild > 0)
        v = ec_select(c, v);
    long built = 0;
    double value = c->nodes[v].value;
    if (ec_open(c, v)) {
        ec_mutate(c, c->genes + (size_t)v * MG_SEARCH_MAX_PLAN, c->nodes[v].len, tmp);
        v = ec_add(c, v, tmp);
        value = tmp->value;
        built++;
        const ec_genome *g = tmp;
        for (int d = c->nodes[v].depth; d < c->p->tree_depth && built < room; d++) { /* rollout */
            ec_genome *next = g == roll ? tmp : roll;
            ec_mutate(c, g->g, g->len, next);
            g = next;
            value = g->value;
            built++;
        }
    }
    for (; v >= 0; v = c->nodes[v].parent) {
        c->nodes[v].visits++;
        c->nodes[v].sum += value;
        if (value > c->nodes[v].max)
            c->nodes[v].max = value;
    }
    return built > 0 ? built : 1;
}

int mg_search_emcts(const mg_game_vt *vt, const void *st, const mg_search_params *p, mg_rng *rng,
                    mg_action *plan, int *plan_len, mg_search_stats *stats)
{
    ec_ctx c;
    memset(&c, 0, sizeof c);
    c.vt = vt;
    c.p = p;
    c.rng = rng;
    c.root_st = st;
    c.me = vt->current(st);
    c.horizon = p->horizon > 0 && p->horizon < MG_SEARCH_MAX_PLAN - 1 ? p->horizon : MG_SEARCH_MAX_PLAN - 1;
    long cap = p->max_nodes > 0 ? p->max_nodes : 1L << 16;
    if (p->iterations > 0 && p->iterations + 1 < cap) /* no more nodes than genomes */
        cap = p->iterations + 1;
    c.cap = (int)cap;
    c.vmin = DBL_MAX;
    c.vmax = c.best = -DBL_MAX;
    c.nodes = malloc((size_t)cap * sizeof *c.nodes);
    c.genes = malloc((size_t)cap * MG_SEARCH_MAX_PLAN * sizeof *c.genes);
    ec_genome *tmp = malloc(2 * sizeof *tmp); /* two genomes: too large for the stack */
    if (!c.nodes || !c.genes || !tmp) {
        free(c.nodes);
        free(c.genes);
        free(tmp);
        return MG_ERR_NOMEM;
    }
    ms_budget budget;
    ms_budget_start(&budget, p);
    ec_build(&c, NULL, 0, -1, &tmp[0]); /* the root: a random genome */
    ec_add(&c, -1, &tmp[0]);
    long iter = 1;
    int stop;
    while ((stop = ms_budget_spent(&budget, iter)) < 0)
        iter += ec_iterate(&c, &tmp[0], &tmp[1], budget.max_iter ? budget.max_iter - iter : LONG_MAX);
    *plan_len = c.best_len;
    memcpy(plan, c.best_plan, (size_t)c.best_len * sizeof *plan);
    stats->iterations = iter;
    stats->evaluations = c.evals;
    stats->nodes = c.genomes;
    stats->value = c.best_raw;
    stats->stop = stop;
    free(c.nodes);
    free(c.genes);
    free(tmp);
    return MG_OK;
}
