/* Drives the kernels that run on threads from C, for the sanitizer builds of
 * tests/search/test_search_threads.py: OEP with islands (several island counts, migration
 * settings, fitness kinds and budgets), MCTS with several trees (threads; exploring and
 * non-exploring) and greedy reply's answers on threads. Exits 1 if a search fails or a seeded iteration-budget search does not
 * repeat its plan; a sanitizer report aborts the run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mg_game.h"
#include "mg_hidden.h"
#include "mg_kernels.h"
#include "mg_search.h"

/* One search with a fresh rng seeded `seed`: mg_search from st, or with d the determinized
 * search MG_HIDDEN_MCTS from st as an observation. 1 if it returned a plan. */
static int run(const mg_game_vt *vt, const void *st, const mg_search_params *p,
               const mg_det_params *d, uint64_t seed, mg_action *plan, int *n,
               mg_search_stats *stats)
{
    char err[MG_ERR_LEN] = "";
    mg_rng rng;
    mg_rng_seed(&rng, seed);
    int rc = d ? mg_search_hidden(MG_HIDDEN_MCTS, vt, st, p, d, &rng, plan, n, stats, err)
               : mg_search(vt, st, p, &rng, plan, n, stats, err);
    if (rc != MG_OK || *n < 1)
        fprintf(stderr, "search failed: %d %s\n", rc, err);
    return rc == MG_OK && *n >= 1;
}

/* The checks of one threaded setting p: a 30 ms search stops on the clock (threads stop on
 * it, not in lockstep), and two searches with the same seed and an iteration budget return
 * the same plan, their stats adding up `copies` (islands or trees) times the budget. */
static int check(const mg_game_vt *vt, const void *st, mg_search_params p,
                 const mg_det_params *d, long iterations, int copies)
{
    mg_action a[MG_SEARCH_MAX_PLAN], b[MG_SEARCH_MAX_PLAN];
    int na = 0, nb = 0;
    mg_search_stats s;
    p.budget_ms = 30;
    p.iterations = 0;
    int ok = run(vt, st, &p, d, 1, a, &na, &s) && s.stop == MG_STOP_TIME;
    p.budget_ms = 0;
    p.iterations = iterations;
    return ok && run(vt, st, &p, d, 2, a, &na, &s) && run(vt, st, &p, d, 2, b, &nb, &s) &&
           na == nb && memcmp(a, b, (size_t)na * sizeof *a) == 0 &&
           s.iterations == iterations * copies;
}

int main(void)
{
    const mg_game_vt *vt = mg_game_find("heroes");
    void *cfg = malloc(vt->config_size);
    void *st = malloc(MG_MAX_STATE_SIZE);
    char err[MG_ERR_LEN];
    vt->default_config(cfg);
    if (!cfg || !st || vt->init(st, cfg, 7, err) != MG_OK)
        return 2;
    static const int copies[] = {2, 3, 8};
    int ok = 1;
    for (int i = 0; i < 3 && ok; i++)
        for (int rollouts = 0; rollouts <= 2 && ok; rollouts += 2) {
            mg_search_params p;
            mg_search_defaults(MG_ALGO_OEP, &p);
            p.value_scale = 60000;
            p.islands = copies[i];
            p.migration_interval = 1 + i;
            p.migrants = 10 * i;
            p.fitness_rollouts = rollouts;
            ok = check(vt, st, p, NULL, 5, copies[i]);
            printf("islands %d rollouts %d: %s\n", copies[i], rollouts, ok ? "ok" : "FAILED");
        }
    for (int i = 0; i < 3 && ok; i++)
        for (int ne = 0; ne <= 1 && ok; ne++) {
            mg_search_params p;
            mg_search_defaults(MG_ALGO_MCTS, &p);
            p.value_scale = 60000;
            p.threads = copies[i];
            if (ne) {
                p.c = 0;
                p.policy = MG_POLICY_GREEDY;
                p.robust = 1;
            }
            ok = check(vt, st, p, NULL, 2000, copies[i]);
            printf("mcts threads %d non-exploring %d: %s\n", copies[i], ne, ok ? "ok" : "FAILED");
        }
    /* MCTS's trees each on a determinization of their own, from the observation of the
     * player to act */
    void *obs = malloc(MG_MAX_STATE_SIZE);
    ok = ok && obs;
    if (ok)
        vt->observe(st, vt->current(st), obs);
    for (int i = 0; i < 3 && ok; i++) {
        mg_search_params p;
        mg_search_defaults(MG_ALGO_MCTS, &p);
        p.threads = copies[i];
        p.c = 0;
        p.policy = MG_POLICY_GREEDY;
        mg_det_params d = {1, MG_DET_UNIFORM, MG_COMBINE_VOTE};
        ok = check(vt, obs, p, &d, 2000, copies[i]);
        printf("mcts threads %d on determinizations: %s\n", copies[i], ok ? "ok" : "FAILED");
    }
    /* greedy reply's answers on threads: the plan, its value and the work counted at an
     * iteration budget are the one thread's (each answer has its own stream and share) */
    for (int i = 0; i < 3 && ok; i++) {
        mg_search_params p;
        mg_search_defaults(MG_ALGO_REPLY, &p);
        p.value_scale = 60000;
        p.rollout_turns = 2;
        p.iterations = 20000;
        mg_action a[MG_SEARCH_MAX_PLAN], b[MG_SEARCH_MAX_PLAN];
        int na = 0, nb = 0;
        mg_search_stats sa, sb;
        ok = run(vt, st, &p, NULL, 3, a, &na, &sa);
        p.threads = copies[i];
        ok = ok && run(vt, st, &p, NULL, 3, b, &nb, &sb) && na == nb &&
             memcmp(a, b, (size_t)na * sizeof *a) == 0 && sa.value == sb.value &&
             sa.iterations == sb.iterations;
        p.iterations = 0;
        p.budget_ms = 30;
        ok = ok && run(vt, st, &p, NULL, 4, b, &nb, &sb);
        printf("reply threads %d: %s\n", copies[i], ok ? "ok" : "FAILED");
    }
    free(obs);
    free(cfg);
    free(st);
    return ok ? 0 : 1;
}
