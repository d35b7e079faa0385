/* mg_search_oep.c: Online Evolutionary Planning (Justesen et al. 2017): a population of
 * genomes, each the action sequence of one whole turn, evolved by truncation selection,
 * uniform crossover with the if-allowed rule and repair, and mutation; fitness is the
 * heuristic value of the turn's outcome, or the minimum over rollouts from it; a history
 * table keyed by the outcome's hash shares fitness between genomes with the same outcome.
 * From an observation (mg_search_oep_hidden, mg_hidden.h) each rollout starts from a fresh
 * determinization and the fitness is the mean of the rollouts.
 *
 * Islands (p->islands > 1): that many populations evolve at once, one thread each, every
 * one with its own random stream and history table; every p->migration_interval
 * generations they stop together and each island's p->migrants best genomes replace the
 * worst of the next island in a ring. The plan is the best genome of all islands. The
 * islands run in lockstep (same generation count), so with an iteration budget and a seed
 * the result does not depend on thread timing. */
#define _POSIX_C_SOURCE 200809L /* pthreads, sched_yield */
#include <float.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "mg_hidden.h"
#include "mg_search_internal.h"

typedef struct oe_slot {
    uint64_t key;   /* outcome hash, 0 = empty */
    double value;   /* fitness of that outcome (the minimum seen, with rollouts; their mean
                     * from an observation) */
    long n;         /* rollouts behind value (from an observation) */
} oe_slot;

typedef struct oe_rank {
    double fit;
    int idx;
} oe_rank;

typedef struct oe_ctx {
    const mg_game_vt *vt;
    const mg_search_params *p;
    mg_rng *rng;
    const void *root_st;
    const void *obs;     /* the observation searched from, or NULL (mg_search_oep_hidden) */
    int det_mode;        /* MG_DET_* of the rollouts' determinizations */
    int root;            /* player to act at the root */
    int pop;
    mg_action *genes;    /* pop x MG_SEARCH_MAX_PLAN */
    int *len;
    double *fit;
    int *rolls;          /* rollouts behind fit (rollout fitness) */
    unsigned char *ends; /* outcome states (rollout fitness only) */
    oe_rank *order;
    oe_slot *hist;
    unsigned long hmask, hcount, hlimit;
    long evals, genomes;
} oe_ctx;

/* The history slot for hash h (found, or the empty slot where it would go); NULL if the
 * table is full and h is absent. */
static oe_slot *oe_hist(oe_ctx *c, uint64_t h, int *found)
{
    if (!h)
        h = 1;
    unsigned long i = (unsigned long)(h ^ (h >> 29)) & c->hmask;
    while (c->hist[i].key) {
        if (c->hist[i].key == h) {
            *found = 1;
            return &c->hist[i];
        }
        i = (i + 1) & c->hmask;
    }
    *found = 0;
    if (c->hcount >= c->hlimit)
        return NULL;
    c->hist[i].key = h;
    c->hcount++;
    return &c->hist[i];
}

/* From an observation: one more rollout of genome g, from a fresh determinization with the
 * genome's turn replayed on it (st, the outcome on the build's determinization, if the turn
 * does not replay); the fitness is the mean of the rollouts, pooled over the genomes with
 * the same outcome when the history table holds it. */
static void oe_evaluate_hidden(oe_ctx *c, int g, const void *st, oe_slot *slot)
{
    const mg_game_vt *vt = c->vt;
    const mg_action *gene = c->genes + (size_t)g * MG_SEARCH_MAX_PLAN;
    ms_state r;
    int ok = mg_determinize(vt, c->obs, c->det_mode, c->rng, r.b) == MG_OK;
    for (int i = 0; i < c->len[g] && ok; i++)
        ok = vt->apply(r.b, gene[i], c->rng) == MG_OK;
    if (!ok)
        memcpy(r.b, st, vt->state_size);
    double v = mg_rollout(vt, r.b, c->p, c->root, c->rng);
    c->evals++;
    if (slot) {
        slot->value = slot->n > 0 ? slot->value + (v - slot->value) / (double)(slot->n + 1) : v;
        slot->n++;
        c->fit[g] = slot->value;
    } else {
        c->fit[g] = c->rolls[g] > 0 ? c->fit[g] + (v - c->fit[g]) / (double)(c->rolls[g] + 1) : v;
    }
    c->rolls[g]++;
}

/* Fitness of genome g whose outcome is st: the heuristic, or one more rollout (the
 * minimum is kept); shared through the history table when enabled. */
static void oe_evaluate(oe_ctx *c, int g, const void *st)
{
    const mg_game_vt *vt = c->vt;
    const mg_search_params *p = c->p;
    oe_slot *slot = NULL;
    int found = 0;
    if (p->history)
        slot = oe_hist(c, vt->hash(st), &found);
    if (p->fitness_rollouts == 0) {
        if (found) {
            c->fit[g] = slot->value;
            return;
        }
        c->fit[g] = ms_evaluate(vt, p, st, c->root);
        c->evals++;
    } else if (c->obs) {
        oe_evaluate_hidden(c, g, st, slot);
        return;
    } else {
        ms_state r;
        memcpy(r.b, st, vt->state_size);
        double v = mg_rollout(vt, r.b, p, c->root, c->rng);
        c->evals++;
        if (c->rolls[g] > 0 && c->fit[g] < v)
            v = c->fit[g];
        if (found && slot->value < v)
            v = slot->value;
        c->fit[g] = v;
        c->rolls[g]++;
    }
    if (slot)
        slot->value = c->fit[g];
}

/* Build genome g by walking the turn from the root. With parents pa, pb (>= 0): at step i
 * take a[i] or b[i] (fair coin for which is tried first) if allowed, else a[i+1] or
 * b[i+1], else a random pruned action (repair). Without parents every gene is random. At
 * step mut_at (>= 0) the gene is replaced by a different random action (mutation). */
static void oe_build(oe_ctx *c, int g, int pa, int pb, int mut_at)
{
    const mg_game_vt *vt = c->vt;
    mg_action acts[MG_MAX_ACTIONS];
    mg_action *gene = c->genes + (size_t)g * MG_SEARCH_MAX_PLAN;
    ms_state s;
    int len = 0;
    memcpy(s.b, c->root_st, vt->state_size);
    while (len < MG_SEARCH_MAX_PLAN - 1 && !vt->terminal(s.b, NULL)) {
        mg_action choice = 0;
        int have = 0;
        if (pa >= 0) {
            const mg_action *ga = c->genes + (size_t)pa * MG_SEARCH_MAX_PLAN;
            const mg_action *gb = c->genes + (size_t)pb * MG_SEARCH_MAX_PLAN;
            int first_a = mg_rng_below(c->rng, 2) == 0;
            for (int k = 0; k < 4 && !have; k++) {
                int use_a = (k & 1) ? !first_a : first_a;
                int at = len + (k >> 1);
                if (k >= 2)
                    use_a = !(k & 1); /* i+1: a first, then b */
                const mg_action *src = use_a ? ga : gb;
                int srclen = use_a ? c->len[pa] : c->len[pb];
                if (at < srclen && ms_gene_allowed(vt, s.b, src[at], c->p->early_end)) {
                    choice = src[at];
                    have = 1;
                }
            }
        }
        if (!have || len == mut_at) {
            int n = ms_actions(vt, s.b, c->p, MS_PRUNE, acts);
            if (n <= 0)
                break;
            if (have && n > 1) { /* mutation: a different action */
                int k = 0;
                for (int i = 0; i < n; i++)
                    if (acts[i] != choice)
                        acts[k++] = acts[i];
                n = k;
            }
            choice = acts[mg_rng_below(c->rng, (uint32_t)n)];
        }
        if (vt->apply(s.b, choice, c->rng) != MG_OK)
            break;
        gene[len++] = choice;
        if (vt->is_end_turn(choice))
            break;
    }
    if (len == 0 || (!vt->is_end_turn(gene[len - 1]) && !vt->terminal(s.b, NULL))) {
        int n = vt->legal(s.b, acts); /* the plan cap was reached: end the turn */
        for (int i = 0; i < n; i++)
            if (vt->is_end_turn(acts[i])) {
                vt->apply(s.b, acts[i], c->rng);
                gene[len++] = acts[i];
                break;
            }
    }
    c->len[g] = len;
    c->rolls[g] = 0;
    if (c->ends)
        memcpy(c->ends + (size_t)g * vt->state_size, s.b, vt->state_size);
    c->genomes++;
    oe_evaluate(c, g, s.b);
}

static int oe_cmp(const void *a, const void *b)
{
    const oe_rank *x = a, *y = b;
    if (x->fit != y->fit)
        return x->fit > y->fit ? -1 : 1;
    return x->idx - y->idx;
}

static void oe_sort(oe_ctx *c)
{
    for (int i = 0; i < c->pop; i++) {
        c->order[i].fit = c->fit[i];
        c->order[i].idx = i;
    }
    qsort(c->order, (size_t)c->pop, sizeof *c->order, oe_cmp);
}

/* One generation: replace all but the best `keep` by mutated crossovers of survivors;
 * with rollout fitness, survivors get one more rollout. */
static void oe_generation(oe_ctx *c, int keep)
{
    const mg_search_params *p = c->p;
    for (int j = keep; j < c->pop; j++) {
        int pa = c->order[mg_rng_below(c->rng, (uint32_t)keep)].idx, pb = pa;
        while (keep > 1 && pb == pa)
            pb = c->order[mg_rng_below(c->rng, (uint32_t)keep)].idx;
        int mut_at = -1;
        if (mg_rng_double(c->rng) < p->mutation) {
            int la = c->len[pa], lb = c->len[pb], l = (la > lb ? la : lb) - 1;
            if (l > 0)
                mut_at = (int)mg_rng_below(c->rng, (uint32_t)l);
        }
        oe_build(c, c->order[j].idx, pa, pb, mut_at);
    }
    if (p->fitness_rollouts > 0)
        for (int j = 0; j < keep; j++) {
            int g = c->order[j].idx;
            if (c->rolls[g] < p->fitness_rollouts)
                oe_evaluate(c, g, c->ends + (size_t)g * c->vt->state_size);
        }
    oe_sort(c);
}

/* Allocate c's arrays for searching from st (obs: see oe_ctx); MG_OK or MG_ERR_NOMEM (what
 * was allocated is freed by oe_release either way). */
static int oe_alloc(oe_ctx *c, const mg_game_vt *vt, const void *st, const void *obs, int det_mode,
                    const mg_search_params *p, mg_rng *rng)
{
    memset(c, 0, sizeof *c);
    c->vt = vt;
    c->p = p;
    c->rng = rng;
    c->root_st = st;
    c->obs = obs;
    c->det_mode = det_mode;
    c->root = vt->current(st);
    c->pop = p->population;
    size_t n = (size_t)c->pop;
    unsigned long slots = p->history ? ms_pow2(p->max_nodes > 0 ? (unsigned long)p->max_nodes
                                                                : 1ul << 16)
                                     : 1;
    c->hmask = slots - 1;
    c->hlimit = slots / 10 * 7;
    c->genes = malloc(n * MG_SEARCH_MAX_PLAN * sizeof *c->genes);
    c->len = malloc(n * sizeof *c->len);
    c->fit = malloc(n * sizeof *c->fit);
    c->rolls = malloc(n * sizeof *c->rolls);
    c->order = malloc(n * sizeof *c->order);
    c->hist = calloc(slots, sizeof *c->hist);
    c->ends = p->fitness_rollouts > 0 ? malloc(n * vt->state_size) : NULL;
    if (!c->genes || !c->len || !c->fit || !c->rolls || !c->order || !c->hist ||
        (p->fitness_rollouts > 0 && !c->ends))
        return MG_ERR_NOMEM;
    return MG_OK;
}

static void oe_release(oe_ctx *c)
{
    free(c->genes);
    free(c->len);
    free(c->fit);
    free(c->rolls);
    free(c->order);
    free(c->hist);
    free(c->ends);
}

/* Survivors per generation: population x survival, at least one, and at least one child. */
static int oe_keep(const mg_search_params *p)
{
    int keep = (int)((double)p->population * p->survival);
    if (keep < 1)
        keep = 1;
    if (keep > p->population - 1)
        keep = p->population - 1;
    return keep;
}

/* A random first population, ranked. */
static void oe_seed(oe_ctx *c)
{
    for (int i = 0; i < c->pop; i++)
        oe_build(c, i, -1, -1, -1);
    oe_sort(c);
}

/* Copy genome g of island `from` over genome h of island `to`. */
static void oe_copy(oe_ctx *to, int h, const oe_ctx *from, int g)
{
    memcpy(to->genes + (size_t)h * MG_SEARCH_MAX_PLAN, from->genes + (size_t)g * MG_SEARCH_MAX_PLAN,
           (size_t)from->len[g] * sizeof *to->genes);
    to->len[h] = from->len[g];
    to->fit[h] = from->fit[g];
    to->rolls[h] = from->rolls[g];
    if (to->ends) {
        size_t sz = to->vt->state_size;
        memcpy(to->ends + (size_t)h * sz, from->ends + (size_t)g * sz, sz);
    }
}

/* ---- Islands ------------------------------------------------------------------------------ */

/* Fitness of the best genome of a ranked population. */
static double oe_best_fit(const oe_ctx *c)
{
    return c->fit[c->order[0].idx];
}

/* A sense-reversing barrier that spins, then yields. The islands meet twice per epoch,
 * and pthread_barrier_wait sleeps in the kernel: waking a sleeper took long enough here
 * (tens of microseconds) that two islands with a 20-generation epoch did no more
 * generations per second than one. */
typedef struct oe_barrier {
    int n;     /* threads that meet */
    int count; /* arrived in this round */
    int sense; /* flips when the last one arrives */
} oe_barrier;

static void oe_barrier_wait(oe_barrier *b, int *local_sense)
{
    int s = !*local_sense;
    *local_sense = s;
    if (__atomic_add_fetch(&b->count, 1, __ATOMIC_ACQ_REL) == b->n) {
        __atomic_store_n(&b->count, 0, __ATOMIC_RELAXED); /* nobody is in the next round yet */
        __atomic_store_n(&b->sense, s, __ATOMIC_RELEASE);
        return;
    }
    for (long spins = 0; __atomic_load_n(&b->sense, __ATOMIC_ACQUIRE) != s; spins++)
        if (spins >= 2000) /* more islands than cores: let the late ones run */
            sched_yield();
}

typedef struct oe_arch oe_arch;

typedef struct oe_island {
    oe_ctx c;
    mg_rng rng;
    oe_arch *arch;
    long gen;      /* generations so far */
    int stop;      /* MG_STOP_* once its budget ran out, else -1 */
    int sense;     /* this thread's barrier sense */
} oe_island;

struct oe_arch {
    oe_island *isl;
    int n;                     /* islands that run (threads that could be started, + 1) */
    int keep, interval, migrants;
    ms_budget budget;
    oe_barrier barrier;        /* all islands between epochs */
    pthread_mutex_t gate;      /* threads wait here until the barrier is set up for n */
    pthread_cond_t opened;
    int open;                  /* 1: n is known, go */
    int done;                  /* set by island 0 between the epoch's two barriers */
};

/* Ring migration: each island's best `migrants` genomes replace the worst of the next
 * island. Reads every source's ranking before any island is ranked again (sources keep
 * their best slots, which receivers never overwrite: migrants <= pop / 2). */
static void oe_migrate(oe_arch *a)
{
    for (int j = 0; j < a->n; j++) {
        oe_ctx *to = &a->isl[j].c;
        const oe_ctx *from = &a->isl[(j + a->n - 1) % a->n].c;
        for (int k = 0; k < a->migrants; k++)
            oe_copy(to, to->order[to->pop - 1 - k].idx, from, from->order[k].idx);
    }
    for (int j = 0; j < a->n; j++)
        oe_sort(&a->isl[j].c);
}

static void *oe_island_run(void *arg)
{
    oe_island *i = arg;
    oe_arch *a = i->arch;
    pthread_mutex_lock(&a->gate);
    while (!a->open)
        pthread_cond_wait(&a->opened, &a->gate);
    pthread_mutex_unlock(&a->gate);
    oe_seed(&i->c);
    for (;;) {
        for (int k = 0; k < a->interval; k++) {
            if ((i->stop = ms_budget_spent(&a->budget, i->gen)) >= 0)
                break;
            oe_generation(&i->c, a->keep);
            i->gen++;
        }
        oe_barrier_wait(&a->barrier, &i->sense);
        if (i == a->isl) { /* island 0 decides for all, while the others wait */
            for (int j = 0; j < a->n && !a->done; j++)
                a->done = a->isl[j].stop >= 0;
            if (!a->done)
                oe_migrate(a);
        }
        oe_barrier_wait(&a->barrier, &i->sense);
        if (a->done)
            return NULL;
    }
}

/* Release the started threads waiting at the gate (a->n and the barrier are set). */
static void oe_open_gate(oe_arch *a)
{
    pthread_mutex_lock(&a->gate);
    a->open = 1;
    pthread_cond_broadcast(&a->opened);
    pthread_mutex_unlock(&a->gate);
}

/* Islands 1..n-1 on threads of their own, island 0 on the caller's; fewer islands if some
 * threads cannot be started. Returns the best island's index, or -1 (no memory). */
static int oe_run_islands(oe_arch *a, int want)
{
    pthread_t *t = malloc((size_t)want * sizeof *t);
    if (!t)
        return -1;
    int started = 0;
    for (int j = 1; j < want; j++) {
        if (pthread_create(&t[j], NULL, oe_island_run, &a->isl[j]) != 0)
            break;
        started++;
    }
    a->n = started + 1;
    a->barrier.n = a->n;
    oe_open_gate(a);
    oe_island_run(&a->isl[0]);
    for (int j = 1; j <= started; j++)
        pthread_join(t[j], NULL);
    free(t);
    int best = 0;
    for (int j = 1; j < a->n; j++)
        if (oe_best_fit(&a->isl[j].c) > oe_best_fit(&a->isl[best].c))
            best = j;
    return best;
}

static int oep_islands(const mg_game_vt *vt, const void *st, const void *obs, int det_mode,
                       const mg_search_params *p, mg_rng *rng, mg_action *plan, int *plan_len,
                       mg_search_stats *stats)
{
    int want = p->islands;
    oe_arch a;
    memset(&a, 0, sizeof a);
    a.keep = oe_keep(p);
    a.interval = p->migration_interval;
    /* a source's best and a receiver's worst slots never overlap */
    a.migrants = p->migrants < a.keep ? p->migrants : a.keep;
    if (a.migrants > p->population / 2)
        a.migrants = p->population / 2;
    a.isl = calloc((size_t)want, sizeof *a.isl);
    int rc = a.isl ? MG_OK : MG_ERR_NOMEM;
    int made = 0;
    for (; made < want && rc == MG_OK; made++) {
        oe_island *i = &a.isl[made];
        mg_rng_seed(&i->rng, mg_rng_next(rng));
        i->arch = &a;
        i->stop = -1;
        rc = oe_alloc(&i->c, vt, st, obs, det_mode, p, &i->rng);
    }
    int best = -1;
    if (rc == MG_OK && pthread_mutex_init(&a.gate, NULL) == 0) {
        if (pthread_cond_init(&a.opened, NULL) == 0) {
            ms_budget_start(&a.budget, p);
            best = oe_run_islands(&a, want);
            pthread_cond_destroy(&a.opened);
        }
        pthread_mutex_destroy(&a.gate);
    }
    if (rc == MG_OK && best < 0)
        rc = MG_ERR_NOMEM;
    if (rc == MG_OK) {
        const oe_ctx *b = &a.isl[best].c;
        int g = b->order[0].idx;
        *plan_len = b->len[g];
        memcpy(plan, b->genes + (size_t)g * MG_SEARCH_MAX_PLAN, (size_t)b->len[g] * sizeof *plan);
        stats->value = b->fit[g];
        stats->stop = MG_STOP_DONE;
        for (int j = 0; j < a.n; j++) {
            stats->iterations += a.isl[j].gen;
            stats->evaluations += a.isl[j].c.evals;
            stats->nodes += a.isl[j].c.genomes;
            if (a.isl[j].stop >= 0 && stats->stop == MG_STOP_DONE)
                stats->stop = a.isl[j].stop;
        }
    }
    for (int j = 0; j < made; j++)
        oe_release(&a.isl[j].c);
    free(a.isl);
    return rc;
}

/* ---- One population ----------------------------------------------------------------------- */

static int oep_run(const mg_game_vt *vt, const void *st, const void *obs, int det_mode,
                   const mg_search_params *p, mg_rng *rng, mg_action *plan, int *plan_len,
                   mg_search_stats *stats)
{
    if (p->islands > 1)
        return oep_islands(vt, st, obs, det_mode, p, rng, plan, plan_len, stats);
    oe_ctx c;
    int rc = oe_alloc(&c, vt, st, obs, det_mode, p, rng);
    if (rc != MG_OK)
        goto done;
    ms_budget budget;
    ms_budget_start(&budget, p);
    oe_seed(&c);
    int keep = oe_keep(p);
    long gen = 0;
    int stop;
    while ((stop = ms_budget_spent(&budget, gen)) < 0) {
        oe_generation(&c, keep);
        gen++;
    }
    int best = c.order[0].idx;
    *plan_len = c.len[best];
    memcpy(plan, c.genes + (size_t)best * MG_SEARCH_MAX_PLAN, (size_t)c.len[best] * sizeof *plan);
    stats->iterations = gen;
    stats->evaluations = c.evals;
    stats->nodes = c.genomes;
    stats->value = c.fit[best];
    stats->stop = stop;
done:
    oe_release(&c);
    return rc;
}

int mg_search_oep(const mg_game_vt *vt, const void *st, const mg_search_params *p, mg_rng *rng,
                  mg_action *plan, int *plan_len, mg_search_stats *stats)
{
    return oep_run(vt, st, NULL, 0, p, rng, plan, plan_len, stats);
}

int ms_oep_hidden(const mg_game_vt *vt, const void *obs, const mg_search_params *p,
                  const mg_det_params *d, mg_rng *rng, mg_action *plan, int *plan_len,
                  mg_search_stats *stats, char *err)
{
    double t0 = ms_now();
    ms_state det;
    int rc = ms_det_sample(vt, obs, d->mode, rng, det.b, err);
    if (rc == MG_OK)
        rc = oep_run(vt, det.b, obs, d->mode, p, rng, plan, plan_len, stats);
    stats->elapsed_ms = ms_now() - t0;
    if (rc != MG_OK)
        *plan_len = 0;
    return rc;
}
