/* mg_search_reply.c: greedy reply, a two-ply search on top of greedy turn. A greedy turn
 * values a turn at its end and never looks at what the opponent does next; so its best
 * turn is often one that leaves a unit where the opponent's next turn kills it. This
 * kernel keeps greedy turn's k best turns, answers each with the opponent's own greedy
 * turn, and plays the turn that is worth most to the mover after that answer.
 *
 * - Phase 1: greedy turn over the mover's turn with half the time budget (or the whole
 *   iteration budget), keeping the k best distinct end-of-turn states (p->arms).
 * - Phase 2: each candidate is played on a copy of each of the D states it is given (one
 *   for a full state; from an observation, D sampled hands of the opponent,
 *   MG_HIDDEN_REPLY), then the opponent's greedy turn (with p->rollout_turns = 2 also the
 *   mover's next greedy turn, and so on, alternating), then the mover's heuristic; a
 *   candidate's value is the mean over the D answers. The time left is shared evenly by
 *   the answers not yet played, each of an answer's greedy turns an even share (with an
 *   iteration budget, each greedy turn gets iterations / (k D turns) outcomes, so the
 *   search evaluates up to twice the budget's). With p->reply_quick the mover's own turns
 *   among them are greedy action turns (one ply at a time: a few hundred evaluations, no
 *   share of the budget), so the opponent's answers, the costly and uncertain part, get
 *   the time. Phase 1 may use p->reply_share of the time budget (0.5 by default).
 *   With p->turn_widen the answers' greedy turns, and with p->reply_widen phase 1's, search
 *   by iterative widening (mg_search_greedy.c): an answer cut short by its few
 *   milliseconds has still looked at the opponent's best-rated actions at every step,
 *   where one depth-first pass stays in its first action's subtree and misses most strong
 *   answers (issue 58).
 *   Every answer to hand j runs on the same random stream, so candidates differ by what
 *   they do, not by the cards they happen to draw. With p->threads > 1 the answers are
 *   searched on that many threads at once (the time budget is the wall clock's, so each
 *   answer gets about p->threads times the time).
 * - The plan is the candidate with the highest value, the earlier (the better by its own
 *   turn's end) on ties; a candidate that ends the game is valued there.
 * An iteration is an end-of-turn outcome evaluated, the mover's or the opponent's. The
 * mover's own turn does not depend on what is hidden, so phase 1 runs on the first state. */
#define _POSIX_C_SOURCE 200809L /* pthreads */
#include <float.h>
#include <pthread.h>
#include <stdlib.h>

#include "mg_search_internal.h"

#define RP_MAX 64    /* candidates at most (mg_search_check refuses more) */
#define RP_HANDS 64  /* sampled hands at most (mg_det_check allows more: the rest are unused) */

/* The mover's value (the heuristic for `me`) after candidate c and p->rollout_turns greedy
 * turns after it (1: the opponent's answer; 2: then the mover's own next turn, which sees
 * the threats the answer left; ...), each with budget q (the mover's a greedy action turn
 * with p->reply_quick), on a copy of st with the random stream r. */
static int rp_answer(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                     const mg_search_params *q, mg_rng r, const ms_turn *c, int me,
                     double *value, mg_search_stats *acc)
{
    ms_state s;
    memcpy(s.b, st, vt->state_size);
    for (int i = 0; i < c->len; i++)
        vt->apply(s.b, c->plan[i], &r);
    for (int t = 0; t < p->rollout_turns && !vt->terminal(s.b, NULL); t++) {
        mg_action reply[MG_SEARCH_MAX_PLAN];
        int len = 0;
        if (p->reply_quick && t % 2 == 1) { /* the mover's turn: greedy action, applied */
            ms_complete_greedy(vt, s.b, p, &r, reply, 0, &acc->evaluations);
            acc->iterations++;
            continue;
        }
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

/* One thread's share of phase 2: the answers a = i nd + j (candidate i, hand j) with
 * a % nth == tid, in order, each with an even share of the time this thread has left. */
typedef struct rp_job {
    const mg_game_vt *vt;
    const unsigned char *dets;
    const mg_search_params *p;
    const ms_turn *cand;
    const mg_rng *streams;
    int nd, total, turns, me, tid, nth;
    double t0;
    double *vals;        /* vals[a]: the answer's value */
    unsigned char *done; /* done[a]: 1 once vals[a] is in */
    mg_search_stats st;  /* this job's iterations and evaluations */
    int rc;
} rp_job;

static void *rp_job_run(void *arg)
{
    rp_job *jb = arg;
    const mg_search_params *p = jb->p;
    jb->rc = MG_OK;
    for (int a = jb->tid; a < jb->total; a += jb->nth) {
        int i = a / jb->nd, j = a % jb->nd;
        mg_search_params q = *p;
        int left_answers = (jb->total - a + jb->nth - 1) / jb->nth; /* this one and its later */
        if (p->budget_ms > 0) {
            double left = p->budget_ms - (ms_now() - jb->t0);
            if (left <= 0)
                break;
            q.budget_ms = left / left_answers / jb->turns;
        }
        if (p->iterations > 0) {
            long per = p->iterations / jb->total / jb->turns;
            q.iterations = per > 0 ? per : 1;
        }
        jb->rc = rp_answer(jb->vt, jb->dets + (size_t)j * jb->vt->state_size, p, &q,
                           jb->streams[j], &jb->cand[i], jb->me, &jb->vals[a], &jb->st);
        if (jb->rc != MG_OK)
            break;
        jb->done[a] = 1;
    }
    return NULL;
}

/* The search over the nd full states at dets (each vt->state_size bytes apart). Phase 2
 * runs on p->threads threads (the answers dealt out in turn; with one thread, in the order
 * candidate by candidate); every answer has its own random stream and budget share, so the
 * plan at an iteration budget is the same on any number of threads. */
static int rp_search(const mg_game_vt *vt, const unsigned char *dets, int nd,
                     const mg_search_params *p, mg_rng *rng, mg_action *plan, int *plan_len,
                     mg_search_stats *stats)
{
    ms_turn *cand = malloc(RP_MAX * sizeof *cand);
    if (!cand)
        return MG_ERR_NOMEM;
    int k = p->arms < RP_MAX ? p->arms : RP_MAX, me = vt->current(dets);
    double t0 = ms_now();
    mg_search_params q = *p;
    if (p->budget_ms > 0)
        q.budget_ms = p->budget_ms * p->reply_share;
    q.turn_widen = p->reply_widen; /* p->turn_widen is the answers' */
    int n = ms_greedy_turn_top(vt, dets, &q, rng, cand, k, stats);
    if (n < 0) {
        free(cand);
        return -n;
    }
    mg_rng streams[RP_HANDS];
    for (int j = 0; j < nd; j++) {
        streams[j] = *rng;
        mg_rng_below(rng, 2); /* the next hand's stream starts one draw later */
    }
    int best = 0, answered = 0, total = n * nd, rc = MG_OK;
    int turns = p->rollout_turns > 0 ? p->rollout_turns : 1; /* greedy turns per answer */
    if (p->reply_quick)
        turns = (turns + 1) / 2; /* the opponent's turns only: the mover's cost no budget */
    int nth = p->threads > 1 ? (p->threads < total ? p->threads : total) : 1;
    double *vals = malloc((size_t)total * sizeof *vals);
    unsigned char *done = calloc((size_t)total, 1);
    rp_job *jobs = calloc((size_t)nth, sizeof *jobs);
    pthread_t *th = malloc((size_t)nth * sizeof *th);
    unsigned char *started = calloc((size_t)nth, 1);
    if (!vals || !done || !jobs || !th || !started) {
        free(vals);
        free(done);
        free(jobs);
        free(th);
        free(started);
        free(cand);
        return MG_ERR_NOMEM;
    }
    for (int t = 0; t < nth; t++)
        jobs[t] = (rp_job){vt, dets, p, cand, streams, nd, total, turns, me, t, nth, t0, vals, done,
                           {0}, MG_OK};
    /* jobs 1.. on threads of their own, job 0 on the caller's; a job whose thread cannot be
     * started runs on the caller's after job 0 */
    for (int t = 1; t < nth; t++)
        started[t] = pthread_create(&th[t], NULL, rp_job_run, &jobs[t]) == 0;
    rp_job_run(&jobs[0]);
    for (int t = 1; t < nth; t++) {
        if (started[t])
            pthread_join(th[t], NULL);
        else
            rp_job_run(&jobs[t]);
    }
    for (int t = 0; t < nth; t++) {
        stats->iterations += jobs[t].st.iterations;
        stats->evaluations += jobs[t].st.evaluations;
        if (jobs[t].rc != MG_OK && rc == MG_OK)
            rc = jobs[t].rc;
    }
    double best_v = -DBL_MAX;
    for (int i = 0; i < n && rc == MG_OK; i++) {
        double sum = 0;
        int j;
        for (j = 0; j < nd && done[i * nd + j]; j++)
            sum += vals[i * nd + j];
        if (j < nd) /* out of time: this candidate's answers are incomplete (and the later's) */
            break;
        answered++;
        if (sum / nd > best_v) {
            best_v = sum / nd;
            best = i;
        }
    }
    free(vals);
    free(done);
    free(jobs);
    free(th);
    free(started);
    if (rc == MG_OK) {
        memcpy(plan, cand[best].plan, (size_t)cand[best].len * sizeof *plan);
        *plan_len = cand[best].len;
        stats->value = answered ? best_v : cand[0].value;
        if (answered < n)
            stats->stop = MG_STOP_TIME;
    }
    free(cand);
    return rc;
}

int mg_search_reply(const mg_game_vt *vt, const void *st, const mg_search_params *p,
                    mg_rng *rng, mg_action *plan, int *plan_len, mg_search_stats *stats)
{
    return rp_search(vt, st, 1, p, rng, plan, plan_len, stats);
}

int ms_reply_hidden(const mg_game_vt *vt, const void *obs, const mg_search_params *p,
                    const mg_det_params *d, mg_rng *rng, mg_action *plan, int *plan_len,
                    mg_search_stats *stats, char *err)
{
    double t0 = ms_now();
    int nd = d->k < RP_HANDS ? d->k : RP_HANDS;
    unsigned char *dets = malloc((size_t)nd * vt->state_size);
    if (!dets)
        return MG_ERR_NOMEM;
    int rc = MG_OK;
    for (int j = 0; j < nd && rc == MG_OK; j++)
        rc = ms_det_sample(vt, obs, d->mode, rng, dets + (size_t)j * vt->state_size, err);
    if (rc == MG_OK)
        rc = rp_search(vt, dets, nd, p, rng, plan, plan_len, stats);
    free(dets);
    stats->elapsed_ms = ms_now() - t0;
    return rc;
}
