/* mg_search_ucb.c: flat UCB over whole moves, the card-game thesis's bandit player
 * (spec/cards.md §8.3). The arms are the first moves of the move tree (depth first, the
 * thesis's gen_moves) or distinct sampled turns (the first by the greedy rating policy, the
 * rest by the rollout policy; better where a turn has many actions, as in heroes), in random
 * order. Each pull
 * replays one arm's move on a fresh determinization (the state itself when the search is
 * given a full state), ends the turn where the move stops being legal (a draw or a random
 * target came out otherwise), and plays a rollout. The arm pulled is the one with the
 * highest xbar + c sqrt(2 ln N / n), rewards in [-1, 1]; the final arm is the one with the
 * most wins, the most pulls or the highest mean, ties to more pulls, then the first arm. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "mg_search_internal.h"

typedef struct ub_ctx {
    const mg_game_vt *vt;
    const mg_search_params *p;
    mg_rng *rng;
    int root;
    int narms;
    mg_action *genes;    /* arms x MG_SEARCH_MAX_PLAN */
    int *len;
    uint64_t *hash;      /* sampled arms: the outcome's hash, to keep them distinct */
    long *pulls, *wins;
    double *sum;         /* rewards in [-1, 1] */
    unsigned char *base; /* the determinization the arms are made on */
} ub_ctx;

/* gen_moves' visitor: each move an arm. */
static void ub_add_move(void *vctx, const mg_action *move, int len)
{
    ub_ctx *c = vctx;
    memcpy(c->genes + (size_t)c->narms * MG_SEARCH_MAX_PLAN, move, (size_t)len * sizeof *move);
    c->len[c->narms++] = len;
}

/* Sample one turn with `policy` into arm slot k; returns 1 if its outcome is new. */
static int ub_sample(ub_ctx *c, int k, int policy)
{
    const mg_game_vt *vt = c->vt;
    mg_action acts[MG_MAX_ACTIONS];
    mg_action *gene = c->genes + (size_t)k * MG_SEARCH_MAX_PLAN;
    ms_state s;
    int len = 0;
    memcpy(s.b, c->base, vt->state_size);
    while (len < MG_SEARCH_MAX_PLAN - 1) {
        int n = vt->legal(s.b, acts);
        if (n <= 0)
            break;
        int forced = len == MG_SEARCH_MAX_PLAN - 2;
        mg_action a = acts[0];
        if (forced) {
            for (int i = 0; i < n; i++)
                if (vt->is_end_turn(acts[i]))
                    a = acts[i];
        } else {
            a = mg_policy_choose(vt, s.b, acts, n, c->p, policy, c->rng);
        }
        if (vt->apply(s.b, a, c->rng) != MG_OK)
            break;
        gene[len++] = a;
        if (ms_turn_over(vt, s.b, a))
            break;
    }
    c->len[k] = len;
    c->hash[k] = vt->hash(s.b);
    for (int i = 0; i < k; i++)
        if (c->hash[i] == c->hash[k])
            return 0;
    return 1;
}

/* Put the arms in random order, so that unpulled arms are tried in random order rather
 * than depth first. The thesis's figures need it: with 1 simulation its UCB beats UCT 99.6%
 * of the time and plays moves of 3.5 to 4 actions (spec/cards.md §9.3), which is a random
 * move; the first move depth first is END_TURN alone (docs/results-cards.md). */
static void ub_shuffle(ub_ctx *c)
{
    mg_action tmp[MG_SEARCH_MAX_PLAN];
    for (int i = c->narms - 1; i > 0; i--) {
        int j = (int)mg_rng_below(c->rng, (uint32_t)(i + 1));
        mg_action *gi = c->genes + (size_t)i * MG_SEARCH_MAX_PLAN;
        mg_action *gj = c->genes + (size_t)j * MG_SEARCH_MAX_PLAN;
        memcpy(tmp, gi, (size_t)c->len[i] * sizeof *tmp);
        memcpy(gi, gj, (size_t)c->len[j] * sizeof *tmp);
        memcpy(gj, tmp, (size_t)c->len[i] * sizeof *tmp);
        int l = c->len[i];
        c->len[i] = c->len[j];
        c->len[j] = l;
    }
}

/* The arm to pull at pull number i (from 1): an unpulled one first, else the highest
 * xbar + c sqrt(2 ln i / n); the first arm wins ties. */
static int ub_select(const ub_ctx *c, long i)
{
    int best = 0;
    double bv = -DBL_MAX, l = 2.0 * log((double)i);
    for (int k = 0; k < c->narms; k++) {
        if (c->pulls[k] == 0)
            return k;
        double inv = 1.0 / (double)c->pulls[k];
        double v = c->sum[k] * inv + c->p->c * sqrt(l * inv);
        if (v > bv) {
            bv = v;
            best = k;
        }
    }
    return best;
}

/* The final choice by p->select; ties go to more pulls, then to the first arm. */
static int ub_final(const ub_ctx *c)
{
    int best = 0;
    double bv = -DBL_MAX;
    for (int k = 0; k < c->narms; k++) {
        double v;
        if (c->p->select == MG_SELECT_ROBUST)
            v = (double)c->pulls[k];
        else if (c->p->select == MG_SELECT_MAXWINS)
            v = (double)c->wins[k];
        else
            v = c->pulls[k] ? c->sum[k] / (double)c->pulls[k] : -DBL_MAX;
        if (v > bv || (v == bv && c->pulls[k] > c->pulls[best])) {
            bv = v;
            best = k;
        }
    }
    return best;
}

/* One pull of arm k from st: replay its move on a fresh sample, then a rollout. Returns the
 * reward in [0, 1]. */
static double ub_pull(const ub_ctx *c, const void *st, int k)
{
    const mg_game_vt *vt = c->vt;
    const mg_action *gene = c->genes + (size_t)k * MG_SEARCH_MAX_PLAN;
    ms_state d;
    (void)mg_determinize(vt, st, MG_DET_UNIFORM, c->rng, d.b); /* a full state: copied */
    int over = 0;
    for (int i = 0; i < c->len[k] && !over; i++) {
        if (vt->apply(d.b, gene[i], c->rng) != MG_OK)
            break; /* no longer legal here: end the turn */
        over = ms_turn_over(vt, d.b, gene[i]) || vt->current(d.b) != c->root;
    }
    if (!over && !vt->terminal(d.b, NULL) && vt->current(d.b) == c->root)
        (void)vt->apply(d.b, ms_end_action(vt, d.b), c->rng);
    return mg_rollout(vt, d.b, c->p, c->root, c->rng);
}

int mg_search_ucb(const mg_game_vt *vt, const void *st, const mg_search_params *p, mg_rng *rng,
                  mg_action *plan, int *plan_len, mg_search_stats *stats)
{
    ub_ctx c;
    memset(&c, 0, sizeof c);
    c.vt = vt;
    c.p = p;
    c.rng = rng;
    c.root = vt->current(st);
    size_t a = (size_t)p->arms;
    c.genes = malloc(a * MG_SEARCH_MAX_PLAN * sizeof *c.genes);
    c.len = malloc(a * sizeof *c.len);
    c.hash = malloc(a * sizeof *c.hash);
    c.pulls = calloc(a, sizeof *c.pulls);
    c.wins = calloc(a, sizeof *c.wins);
    c.sum = calloc(a, sizeof *c.sum);
    c.base = malloc(vt->state_size);
    int rc = MG_OK;
    if (!c.genes || !c.len || !c.hash || !c.pulls || !c.wins || !c.sum || !c.base) {
        rc = MG_ERR_NOMEM;
        goto done;
    }
    (void)mg_determinize(vt, st, MG_DET_UNIFORM, rng, c.base); /* a full state: copied */
    ms_budget budget;
    ms_budget_start(&budget, p);
    if (p->moves == MG_MOVES_DFS) {
        if (ms_gen_moves(vt, c.base, p->arms, MG_SEARCH_MAX_PLAN, p->transpositions, rng,
                         ub_add_move, &c) < 0) {
            rc = MG_ERR_NOMEM;
            goto done;
        }
        ub_shuffle(&c);
    } else { /* distinct outcomes, at most 10 tries per arm wanted */
        for (long tries = 0; c.narms < p->arms && tries < 10L * p->arms; tries++) {
            if (ub_sample(&c, c.narms, tries == 0 ? MG_POLICY_GREEDY : p->policy))
                c.narms++;
            if (c.narms > 0 && budget.deadline > 0 && (tries & 15) == 15 && ms_now() >= budget.deadline)
                break;
        }
    }
    long total = 0;
    int stop;
    while ((stop = ms_budget_spent(&budget, total)) < 0) {
        int k = ub_select(&c, total + 1);
        double v = ub_pull(&c, st, k);
        c.pulls[k]++;
        c.sum[k] += 2.0 * v - 1.0;
        c.wins[k] += v > 0.5;
        total++;
    }
    int best = ub_final(&c);
    *plan_len = c.len[best];
    memcpy(plan, c.genes + (size_t)best * MG_SEARCH_MAX_PLAN, (size_t)c.len[best] * sizeof *plan);
    stats->iterations = total;
    stats->evaluations = total;
    stats->nodes = c.narms;
    stats->value = c.pulls[best] ? (c.sum[best] / (double)c.pulls[best] + 1.0) / 2.0 : 0.0;
    stats->stop = stop;
done:
    free(c.genes);
    free(c.len);
    free(c.hash);
    free(c.pulls);
    free(c.wins);
    free(c.sum);
    free(c.base);
    return rc;
}
