/* mg_search_reply.c: greedy reply, a two-ply search on top of greedy turn. A greedy turn
 * values a turn at its end and never looks at what the opponent does next; so its best
 * turn is often one that leaves a unit where the opponent's next turn kills it. This
 * kernel keeps greedy turn's k best turns, answers each with the opponent's own greedy
 * turn (on the sampled hand of the determinization it is given), and plays the turn that
 * is worth most to the mover after that answer.
 *
 * - Phase 1: greedy turn over the mover's turn with half the time budget (or the whole
 *   iteration budget), keeping the k best distinct end-of-turn states (p->arms).
 * - Phase 2: the time left is shared evenly by the candidates not yet answered (with an
 *   iteration budget, each answer gets iterations / n outcomes for n candidates, so the
 *   search evaluates up to twice the budget's outcomes). Each candidate is played
 *   on a copy of the state, then the opponent's greedy turn, then the mover's heuristic.
 *   Every candidate sees the same random stream (its own copy of the generator), so two
 *   candidates differ by what they do, not by the cards they happen to draw.
 * - The plan is the candidate with the highest value after the answer, the earlier (the
 *   better by its own turn's end) on ties; a candidate that ends the game is valued there.
 * An iteration is an end-of-turn outcome evaluated, the mover's or the opponent's. */
#include <float.h>
#include <stdlib.h>

#include "mg_search_internal.h"

#define RP_MAX 64 /* candidates at most (mg_search_check refuses more) */

/* The mover's value (root's heuristic) after candidate c and the opponent's greedy answer
 * with budget q, on a copy of st with the random stream r. */
static int rp_answer(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                     const mg_search_params *q, mg_rng r, const ms_turn *c, int me,
                     double *value, mg_search_stats *acc)
{
    ms_state s;
    memcpy(s.b, st, vt->state_size);
    for (int i = 0; i < c->len; i++)
        vt->apply(s.b, c->plan[i], &r);
    if (!vt->terminal(s.b, NULL)) {
        mg_action reply[MG_SEARCH_MAX_PLAN];
        int len = 0;
        mg_search_stats st2;
        memset(&st2, 0, sizeof st2);
        int rc = mg_search_greedy_turn(vt, s.b, q, &r, reply, &len, &st2);
        if (rc != MG_OK)
            return rc;
        for (int i = 0; i < len; i++)
            vt->apply(s.b, reply[i], &r);
        acc->iterations += st2.iterations;
        acc->evaluations += st2.evaluations;
    }
    *value = ms_evaluate(vt, p, s.b, me);
    acc->evaluations++;
    return MG_OK;
}

int mg_search_reply(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                    mg_rng *rng, mg_action *plan, int *plan_len, mg_search_stats *stats)
{
    ms_turn *cand = malloc(RP_MAX * sizeof *cand);
    if (!cand)
        return MG_ERR_NOMEM;
    int k = p->arms < RP_MAX ? p->arms : RP_MAX, me = vt->current(st);
    double t0 = ms_now();
    mg_search_params q = *p;
    if (p->budget_ms > 0)
        q.budget_ms = p->budget_ms / 2;
    int n = ms_greedy_turn_top(vt, st, &q, rng, cand, k, stats);
    if (n < 0) {
        free(cand);
        return -n;
    }
    int best = 0, answered = 0;
    double best_v = -DBL_MAX;
    mg_rng common = *rng;
    for (int i = 0; i < n; i++) {
        q = *p;
        if (p->budget_ms > 0) {
            double left = p->budget_ms - (ms_now() - t0);
            if (left <= 0)
                break;
            q.budget_ms = left / (n - i);
        }
        if (p->iterations > 0)
            q.iterations = p->iterations / n > 0 ? p->iterations / n : 1;
        double v;
        int rc = rp_answer(vt, st, p, &q, common, &cand[i], me, &v, stats);
        if (rc != MG_OK) {
            free(cand);
            return rc;
        }
        answered++;
        if (v > best_v) {
            best_v = v;
            best = i;
        }
    }
    memcpy(plan, cand[best].plan, (size_t)cand[best].len * sizeof *plan);
    *plan_len = cand[best].len;
    stats->value = answered ? best_v : cand[0].value;
    if (answered < n)
        stats->stop = MG_STOP_TIME;
    free(cand);
    return MG_OK;
}
