/* mg_search_hidden.c: what every determinized search shares (mg_hidden.h): the generic
 * determinization entry (mg_determinize), the checks of the determinization parameters, one
 * determinization drawn for a kernel (ms_det_sample: PIMC, ISMCTS, hidden OEP and MCTS,
 * greedy reply) and the mg_search_hidden dispatcher. */
#include <stdio.h>
#include <stdlib.h>

#include "mg_hidden.h"
#include "mg_search_internal.h"

int mg_determinize(const mg_game_vt *vt, const void *obs, int mode, mg_rng *rng, void *out)
{
    if (vt->version >= 3 && vt->determinize_mode)
        return vt->determinize_mode(obs, mode, rng, out);
    if (mode != MG_DET_UNIFORM)
        return MG_ERR_CONFIG;
    vt->determinize(obs, rng, out);
    return MG_OK;
}

int ms_det_error(char *err, const char *msg)
{
    if (err)
        snprintf(err, MG_ERR_LEN, "%s", msg);
    return MG_ERR_CONFIG;
}

int mg_det_check(const mg_det_params *d, char *err)
{
    if (d->k < 1 || d->k > MG_PIMC_MAX_K)
        return ms_det_error(err, "the number of determinizations must be in 1..1024");
    if (d->mode < 0 || d->mode >= MG_DET_COUNT)
        return ms_det_error(err, "unknown determinization strategy");
    if (d->combine < 0 || d->combine >= MG_COMBINE_COUNT)
        return ms_det_error(err, "unknown combine mode");
    return MG_OK;
}

int ms_det_begin(const mg_game_vt *vt, const void *obs, mg_search_params *q,
                 const mg_det_params *d, mg_search_stats *stats, int *plan_len, char *err)
{
    memset(stats, 0, sizeof *stats);
    *plan_len = 0;
    int rc = mg_search_check(q, err);
    if (rc == MG_OK)
        rc = mg_det_check(d, err);
    if (rc == MG_OK && q->eval_net)
        rc = mg_net_check(q->eval_net, vt, err);
    if (rc != MG_OK)
        return rc;
    if (vt->state_size > MG_MAX_STATE_SIZE)
        return ms_det_error(err, "the game's state is larger than MG_MAX_STATE_SIZE");
    if (vt->terminal(obs, NULL)) {
        if (err)
            snprintf(err, MG_ERR_LEN, "%s", mg_errstr(MG_ERR_TERMINAL));
        return MG_ERR_TERMINAL;
    }
    *q = ms_game_params(vt, q);
    return MG_OK;
}

int ms_det_sample(const mg_game_vt *vt, const void *obs, int mode, mg_rng *rng, void *out,
                  char *err)
{
    int rc = mg_determinize(vt, obs, mode, rng, out);
    if (rc != MG_OK)
        ms_det_error(err, "the game does not offer this determinization strategy");
    return rc;
}

/* The start of mg_search_hidden and mg_search_ismcts_reuse: *q is p under the budget rule of
 * `algo` (-1: p's own), checked and completed (ms_det_begin), and a forced turn (`forced`)
 * planned at once. MG_OK with *done set when that plan is the answer (nothing searched),
 * MG_OK to search, or the error code; `stats` is not NULL. */
static int det_start(const mg_game_vt *vt, const void *obs, const mg_search_params *p, int algo,
                     const mg_det_params *d, mg_rng *rng, mg_search_params *q, mg_action *plan,
                     int *plan_len, mg_search_stats *stats, char *err, int *done)
{
    *done = 0;
    *q = *p;
    if (algo >= 0)
        q->algo = algo;
    int rc = ms_det_begin(vt, obs, q, d, stats, plan_len, err);
    if (rc == MG_OK && q->forced && ms_forced(vt, obs, rng, plan, plan_len)) {
        stats->value = 0.5; /* no choice: nothing searched */
        *done = 1;
    }
    return rc;
}

typedef int (*det_kernel)(const mg_game_vt *vt, const void *obs, const mg_search_params *p,
                          const mg_det_params *d, mg_rng *rng, mg_action *plan, int *plan_len,
                          mg_search_stats *stats, char *err);

int mg_search_hidden(int kind, const mg_game_vt *vt, const void *obs, const mg_search_params *p,
                     const mg_det_params *d, mg_rng *rng, mg_action *plan, int *plan_len,
                     mg_search_stats *stats, char *err)
{
    static const det_kernel kernels[MG_HIDDEN_COUNT] = {ms_pimc, ms_ismcts, ms_oep_hidden,
                                                        ms_mcts_hidden, ms_reply_hidden};
    /* Whose budget rule applies: PIMC's inner kernel's (p->algo), else the kernel's own. */
    static const int algo[MG_HIDDEN_COUNT] = {-1, MG_ALGO_MCTS, MG_ALGO_OEP, MG_ALGO_MCTS,
                                              MG_ALGO_REPLY};
    mg_search_stats local;
    if (!stats)
        stats = &local;
    *plan_len = 0;
    if (kind < 0 || kind >= MG_HIDDEN_COUNT) {
        memset(stats, 0, sizeof *stats);
        return ms_det_error(err, "unknown determinized search");
    }
    mg_search_params q;
    int done, rc = det_start(vt, obs, p, algo[kind], d, rng, &q, plan, plan_len, stats, err, &done);
    if (rc != MG_OK || done)
        return rc;
    return kernels[kind](vt, obs, &q, d, rng, plan, plan_len, stats, err);
}

int mg_search_ismcts_reuse(const mg_game_vt *vt, const void *obs, const mg_search_params *p,
                           const mg_det_params *d, mg_ismcts_tree *tree, mg_rng *rng,
                           mg_action *plan, int *plan_len, mg_search_stats *stats, char *err)
{
    if (!tree)
        return mg_search_hidden(MG_HIDDEN_ISMCTS, vt, obs, p, d, rng, plan, plan_len, stats, err);
    mg_search_stats local;
    if (!stats)
        stats = &local;
    mg_search_params q;
    int done, rc = det_start(vt, obs, p, MG_ALGO_MCTS, d, rng, &q, plan, plan_len, stats, err, &done);
    if (rc != MG_OK || done)
        return rc;
    return ms_ismcts_reuse(vt, obs, &q, d, tree, rng, plan, plan_len, stats, err);
}
