/* mg_search_pimc.c: perfect-information Monte Carlo: any search kernel run on K
 * determinizations of an observation, the plans combined by a vote on the plan or by summed
 * scores (mg_hidden.h). What the determinized searches share is mg_search_hidden.c. */
#include <stdio.h>
#include <stdlib.h>

#include "mg_hidden.h"
#include "mg_search_internal.h"

/* The K searches of one call: their plans, values and determinized states. */
typedef struct pm_runs {
    int k;               /* searches that ran */
    int max_roots;       /* VISITS: room for root edges per search (0: not kept) */
    ms_root_edge *roots; /* VISITS: k x max_roots */
    int *nroots;
    mg_action *plans;    /* k x MG_SEARCH_MAX_PLAN */
    int *len;
    double *value;
    unsigned char *dets; /* k x state_size */
} pm_runs;

static const mg_action *pm_plan(const pm_runs *r, int i)
{
    return r->plans + (size_t)i * MG_SEARCH_MAX_PLAN;
}

/* Majority vote, one action at a time, among the plans that share the chosen prefix.
 * Returns the index of a plan equal to the result (all survivors are equal at the end). */
static int pm_vote(const pm_runs *r, double *share)
{
    int alive[MG_PIMC_MAX_K], na = r->k;
    for (int i = 0; i < na; i++)
        alive[i] = i;
    for (int depth = 0; depth < MG_SEARCH_MAX_PLAN; depth++) {
        int best = -1, best_n = 0;
        double best_v = 0;
        for (int i = 0; i < na; i++) { /* candidates in order of first appearance */
            int pi = alive[i];
            if (r->len[pi] <= depth)
                continue;
            mg_action a = pm_plan(r, pi)[depth];
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                seen = r->len[alive[j]] > depth && pm_plan(r, alive[j])[depth] == a;
            if (seen)
                continue;
            int n = 0;
            double v = 0;
            for (int j = i; j < na; j++)
                if (r->len[alive[j]] > depth && pm_plan(r, alive[j])[depth] == a) {
                    n++;
                    v += r->value[alive[j]];
                }
            if (n > best_n || (n == best_n && v > best_v)) {
                best = pi;
                best_n = n;
                best_v = v;
            }
        }
        if (best < 0)
            break; /* every survivor ends here */
        mg_action a = pm_plan(r, best)[depth];
        int k = 0;
        for (int i = 0; i < na; i++)
            if (r->len[alive[i]] > depth && pm_plan(r, alive[i])[depth] == a)
                alive[k++] = alive[i];
        na = k;
    }
    *share = (double)na / (double)r->k;
    return alive[0];
}

static int pm_same(const pm_runs *r, int a, int b)
{
    return r->len[a] == r->len[b] &&
           memcmp(pm_plan(r, a), pm_plan(r, b), (size_t)r->len[a] * sizeof(mg_action)) == 0;
}

/* Summed scores: every distinct plan is played in every determinization, followed by one
 * rollout (the kernel's leaf value). Returns the index of the best plan. */
static int pm_sum(const mg_game_vt *vt, const pm_runs *r, const mg_search_params *p, int root,
                  mg_rng *rng, double *mean, long *evals)
{
    ms_state s;
    int best = 0;
    double best_total = -1;
    for (int c = 0; c < r->k; c++) {
        int dup = 0;
        for (int e = 0; e < c && !dup; e++)
            dup = pm_same(r, c, e);
        if (dup)
            continue;
        double total = 0;
        for (int j = 0; j < r->k; j++) {
            memcpy(s.b, r->dets + (size_t)j * vt->state_size, vt->state_size);
            int ok = 1;
            for (int i = 0; i < r->len[c] && ok; i++)
                ok = vt->apply(s.b, pm_plan(r, c)[i], rng) == MG_OK;
            if (ok) /* an illegal plan (only in games whose own turn hides chance) scores 0 */
                total += mg_rollout(vt, s.b, p, root, rng);
            (*evals)++;
        }
        if (total > best_total) {
            best_total = total;
            best = c;
        }
    }
    *mean = best_total / (double)r->k;
    return best;
}

/* VISITS: the first action with the most visits summed over the trees (ties: the higher
 * visit-weighted mean). Writes its plan into plan (see MG_COMBINE_VISITS) and returns its
 * length; *mean is that weighted mean. */
static int pm_visits(const mg_game_vt *vt, const pm_runs *r, const mg_search_params *p,
                     mg_rng *rng, mg_action *plan, double *mean, long *evals)
{
    /* the distinct first actions, in order of first appearance, with summed visits and
     * visit-weighted reward sums (every list holds distinct actions of one state, so at
     * most vt->max_actions of them) */
    ms_root_edge sum[MG_MAX_ACTIONS];
    int ns = 0;
    for (int i = 0; i < r->k; i++)
        for (int j = 0; j < r->nroots[i]; j++) {
            const ms_root_edge *e = &r->roots[(size_t)i * r->max_roots + j];
            int s = 0;
            while (s < ns && sum[s].a != e->a)
                s++;
            if (s == ns) {
                if (ns == MG_MAX_ACTIONS)
                    continue;
                sum[ns].a = e->a;
                sum[ns].visits = 0;
                sum[ns].mean = 0;
                ns++;
            }
            sum[s].visits += e->visits;
            sum[s].mean += e->mean * (double)e->visits;
        }
    mg_action best_a = 0;
    long best_n = -1;
    double best_q = 0;
    for (int s = 0; s < ns; s++) {
        double q = sum[s].mean / (double)sum[s].visits;
        if (sum[s].visits > best_n || (sum[s].visits == best_n && q > best_q)) {
            best_a = sum[s].a;
            best_n = sum[s].visits;
            best_q = q;
        }
    }
    if (best_n < 0) { /* no tree visited anything: the first search's plan */
        *mean = r->value[0];
        memcpy(plan, pm_plan(r, 0), (size_t)r->len[0] * sizeof *plan);
        return r->len[0];
    }
    *mean = best_q;
    int who = -1; /* the tree that visited best_a most */
    long who_n = -1;
    for (int i = 0; i < r->k; i++)
        for (int j = 0; j < r->nroots[i]; j++) {
            const ms_root_edge *e = &r->roots[(size_t)i * r->max_roots + j];
            if (e->a == best_a && e->visits > who_n) {
                who = i;
                who_n = e->visits;
            }
        }
    if (r->len[who] > 0 && pm_plan(r, who)[0] == best_a) {
        memcpy(plan, pm_plan(r, who), (size_t)r->len[who] * sizeof *plan);
        return r->len[who];
    }
    ms_state s;
    memcpy(s.b, r->dets + (size_t)who * vt->state_size, vt->state_size);
    plan[0] = best_a;
    vt->apply(s.b, best_a, rng); /* legal: the tree expanded it from this state */
    if (ms_turn_over(vt, s.b, best_a))
        return 1;
    return ms_complete_greedy(vt, s.b, p, rng, plan, 1, evals);
}

int ms_pimc(const mg_game_vt *vt, const void *obs, const mg_search_params *p, const mg_det_params *d,
            mg_rng *rng, mg_action *plan, int *plan_len, mg_search_stats *stats, char *err)
{
    int rc = MG_OK;
    double t0 = ms_now();
    pm_runs r;
    size_t k = (size_t)d->k;
    int visits = d->combine == MG_COMBINE_VISITS;
    r.k = 0;
    r.max_roots = visits ? vt->max_actions : 0;
    r.plans = malloc(k * MG_SEARCH_MAX_PLAN * sizeof *r.plans);
    r.len = malloc(k * sizeof *r.len);
    r.value = malloc(k * sizeof *r.value);
    r.dets = malloc(k * vt->state_size);
    r.roots = visits ? malloc(k * (size_t)r.max_roots * sizeof *r.roots) : NULL;
    r.nroots = visits ? calloc(k, sizeof *r.nroots) : NULL;
    if (!r.plans || !r.len || !r.value || !r.dets || (visits && (!r.roots || !r.nroots))) {
        rc = MG_ERR_NOMEM;
        goto done;
    }
    if (visits && p->algo != MG_ALGO_MCTS) {
        rc = ms_det_error(err, "combine=visits adds up MCTS trees: it needs an MCTS inner search");
        goto done;
    }
    int root = vt->current(obs);
    int stop = MG_STOP_DONE;
    for (int i = 0; i < d->k; i++) {
        mg_search_params sub = *p;
        if (p->budget_ms > 0) {
            double left = p->budget_ms - (ms_now() - t0);
            if (i > 0 && left <= 0) {
                stop = MG_STOP_TIME;
                break;
            }
            sub.budget_ms = left > 0 ? left / (double)(d->k - i) : 1e-3;
        }
        if (p->iterations > 0) {
            sub.iterations = p->iterations / d->k + (i < p->iterations % d->k);
            if (sub.iterations < 1)
                sub.iterations = 1;
        }
        unsigned char *det = r.dets + (size_t)i * vt->state_size;
        rc = ms_det_sample(vt, obs, d->mode, rng, det, err);
        if (rc != MG_OK)
            goto done;
        mg_search_stats s;
        mg_action *pl = r.plans + (size_t)i * MG_SEARCH_MAX_PLAN;
        if (visits) { /* the inner MCTS directly, for its root; mg_search's checks ran */
            memset(&s, 0, sizeof s);
            if (vt->terminal(det, NULL)) {
                rc = MG_ERR_TERMINAL;
                ms_det_error(err, mg_errstr(rc));
                goto done;
            }
            rc = ms_mcts_roots(vt, det, &sub, rng, pl, &r.len[i], &s,
                               r.roots + (size_t)i * r.max_roots, r.max_roots, &r.nroots[i]);
            if (rc != MG_OK)
                ms_det_error(err, mg_errstr(rc));
        } else {
            rc = mg_search(vt, det, &sub, rng, pl, &r.len[i], &s, err);
        }
        if (rc != MG_OK)
            goto done;
        r.value[i] = s.value;
        r.k++;
        stats->iterations += s.iterations;
        stats->evaluations += s.evaluations;
        stats->nodes += s.nodes;
        if (s.stop != MG_STOP_DONE)
            stop = s.stop;
    }
    if (visits) {
        *plan_len = pm_visits(vt, &r, p, rng, plan, &stats->value, &stats->evaluations);
    } else {
        int chosen;
        if (d->combine == MG_COMBINE_SUM)
            chosen = pm_sum(vt, &r, p, root, rng, &stats->value, &stats->evaluations);
        else
            chosen = pm_vote(&r, &stats->value);
        *plan_len = r.len[chosen];
        memcpy(plan, pm_plan(&r, chosen), (size_t)r.len[chosen] * sizeof *plan);
    }
    stats->stop = stop;
done:
    stats->elapsed_ms = ms_now() - t0;
    free(r.plans);
    free(r.len);
    free(r.value);
    free(r.dets);
    free(r.roots);
    free(r.nroots);
    if (rc != MG_OK)
        *plan_len = 0;
    return rc;
}
