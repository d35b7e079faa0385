/* mg_search_ucb.c: flat UCB1 over whole turns (the card-game thesis's bandit player): a
 * set of distinct turns is sampled (the first by the greedy rating policy, the rest by the
 * rollout policy), then each pull plays a rollout from one turn's outcome; the final turn
 * is the one with the highest mean, the most pulls, or the most winning pulls. */
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
    unsigned char *ends; /* outcome state of each arm */
    uint64_t *hash;      /* outcome hash of each arm */
    long *pulls, *wins;
    double *sum;
} ub_ctx;

/* Sample one turn with `policy` into arm slot k; returns 1 if its outcome is new. */
static int ub_sample(ub_ctx *c, int k, int policy)
{
    const mg_game_vt *vt = c->vt;
    mg_action acts[MG_MAX_ACTIONS];
    mg_action *gene = c->genes + (size_t)k * MG_SEARCH_MAX_PLAN;
    unsigned char *s = c->ends + (size_t)k * vt->state_size;
    int len = 0;
    memcpy(s, c->ends + (size_t)c->p->arms * vt->state_size, vt->state_size); /* the root */
    while (len < MG_SEARCH_MAX_PLAN - 1) {
        int n = vt->legal(s, acts);
        if (n <= 0)
            break;
        int forced = len == MG_SEARCH_MAX_PLAN - 2;
        mg_action a = acts[0];
        if (forced) {
            for (int i = 0; i < n; i++)
                if (vt->is_end_turn(acts[i]))
                    a = acts[i];
        } else {
            a = mg_policy_choose(vt, s, acts, n, c->p, policy, c->rng);
        }
        if (vt->apply(s, a, c->rng) != MG_OK)
            break;
        gene[len++] = a;
        if (ms_turn_over(vt, s, a))
            break;
    }
    c->len[k] = len;
    c->hash[k] = vt->hash(s);
    for (int i = 0; i < k; i++)
        if (c->hash[i] == c->hash[k])
            return 0;
    return 1;
}

/* The arm to pull: an unpulled one first, else the highest mean + 2c sqrt(2 ln N / n). */
static int ub_select(const ub_ctx *c, long total)
{
    int best = 0;
    double bv = -DBL_MAX, l = 2.0 * log((double)(total > 0 ? total : 1));
    for (int i = 0; i < c->narms; i++) {
        if (c->pulls[i] == 0)
            return i;
        double inv = 1.0 / (double)c->pulls[i];
        double v = c->sum[i] * inv + 2.0 * c->p->c * sqrt(l * inv);
        if (v > bv) {
            bv = v;
            best = i;
        }
    }
    return best;
}

/* The final choice by p->select; the first arm wins ties. */
static int ub_final(const ub_ctx *c)
{
    int best = 0;
    double bv = -DBL_MAX;
    for (int i = 0; i < c->narms; i++) {
        double v;
        if (c->p->select == MG_SELECT_ROBUST)
            v = (double)c->pulls[i];
        else if (c->p->select == MG_SELECT_MAXWINS)
            v = (double)c->wins[i];
        else
            v = c->pulls[i] ? c->sum[i] / (double)c->pulls[i] : -1.0;
        if (v > bv) {
            bv = v;
            best = i;
        }
    }
    return best;
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
    c.ends = malloc((a + 1) * vt->state_size); /* slot `arms` holds the root */
    c.hash = malloc(a * sizeof *c.hash);
    c.pulls = calloc(a, sizeof *c.pulls);
    c.wins = calloc(a, sizeof *c.wins);
    c.sum = calloc(a, sizeof *c.sum);
    int rc = MG_OK;
    if (!c.genes || !c.len || !c.ends || !c.hash || !c.pulls || !c.wins || !c.sum) {
        rc = MG_ERR_NOMEM;
        goto done;
    }
    memcpy(c.ends + a * vt->state_size, st, vt->state_size);
    ms_budget budget;
    ms_budget_start(&budget, p);
    /* Arms: distinct outcomes, at most 10 tries per arm wanted. */
    for (long tries = 0; c.narms < p->arms && tries < 10L * p->arms; tries++) {
        if (ub_sample(&c, c.narms, tries == 0 ? MG_POLICY_GREEDY : p->policy))
            c.narms++;
        if (c.narms > 0 && budget.deadline > 0 && (tries & 15) == 15 && ms_now() >= budget.deadline)
            break;
    }
    long total = 0;
    int stop;
    ms_state r;
    while ((stop = ms_budget_spent(&budget, total)) < 0) {
        int k = ub_select(&c, total);
        memcpy(r.b, c.ends + (size_t)k * vt->state_size, vt->state_size);
        double v = mg_rollout(vt, r.b, p, c.root, rng);
        c.pulls[k]++;
        c.sum[k] += v;
        c.wins[k] += v > 0.5;
        total++;
    }
    int best = ub_final(&c);
    *plan_len = c.len[best];
    memcpy(plan, c.genes + (size_t)best * MG_SEARCH_MAX_PLAN, (size_t)c.len[best] * sizeof *plan);
    stats->iterations = total;
    stats->evaluations = total;
    stats->nodes = c.narms;
    stats->value = c.pulls[best] ? c.sum[best] / (double)c.pulls[best] : 0.0;
    stats->stop = stop;
done:
    free(c.genes);
    free(c.len);
    free(c.ends);
    free(c.hash);
    free(c.pulls);
    free(c.wins);
    free(c.sum);
    return rc;
}
