/* no_alloc.c: the rules of every game named on the command line allocate nothing. Linked
 * with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc, so every allocation of the core
 * passes through the counters below; they count only between arm() and disarm(), around
 * init, legal, check, apply, clone, hash, evaluate, rate, prune, action groups, observe,
 * determinize and whole random playouts, from 200 games of each game. Prints
 * "<game>: ok <actions>" or the calls that allocated, and exits 1 on any. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mg_game.h"
#include "mg_kernels.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);

static volatile int armed; /* volatile: the compiler assumes malloc reads no globals */
static volatile long allocations;

void *__wrap_malloc(size_t n)
{
    allocations += armed;
    return __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n)
{
    allocations += armed;
    return __real_calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n)
{
    allocations += armed;
    return __real_realloc(p, n);
}

static void arm(void) { armed = 1; }
static void disarm(void) { armed = 0; }

static union { unsigned char b[MG_MAX_STATE_SIZE]; uint64_t align; } st, obs, det, tmp;
static unsigned char cfg[4096];

static long play(const mg_game_vt *vt, uint64_t seed)
{
    mg_action acts[MG_MAX_ACTIONS];
    int start[MG_MAX_ACTIONS + 1], group[MG_MAX_ACTIONS];
    char err[MG_ERR_LEN];
    mg_rng rng;
    mg_rng_seed(&rng, seed);
    long steps = 0;
    int winner;
    vt->default_config(cfg);
    arm();
    if (vt->init(st.b, cfg, seed, err) != MG_OK)
        return -1;
    while (!vt->terminal(st.b, &winner) && steps < 5000) {
        int n = vt->legal(st.b, acts);
        for (int i = 0; i < n; i++) {
            (void)vt->check(st.b, acts[i]);
            if (vt->rate)
                (void)vt->rate(st.b, acts[i]);
        }
        (void)vt->check(st.b, 0xFFFFFFu);
        if (vt->action_groups)
            (void)vt->action_groups(st.b, acts, n, start, group);
        memcpy(tmp.b, st.b, vt->state_size);
        if (vt->prune)
            (void)vt->prune(tmp.b, acts, n);
        (void)vt->hash(st.b);
        (void)vt->evaluate(st.b, 0);
        int seat = vt->current(st.b);
        vt->observe(st.b, seat, obs.b);
        (void)vt->observer(obs.b);
        vt->determinize(obs.b, &rng, det.b);
        n = vt->legal(st.b, acts);
        if (vt->apply(st.b, acts[mg_rng_below(&rng, (uint32_t)n)], &rng) != MG_OK)
            return -1;
        steps++;
    }
    memcpy(tmp.b, st.b, vt->state_size);
    vt->init(tmp.b, cfg, seed + 1, err);
    steps += mg_random_playout(vt, tmp.b, &rng, 100000);
    disarm();
    return steps;
}

int main(int argc, char **argv)
{
    int failed = 0;
    arm(); /* the counter must see an allocation, or it proves nothing */
    void *volatile probe = malloc(16);
    free(probe);
    disarm();
    if (allocations != 1) {
        printf("the allocation counter does not work (%ld)\n", allocations);
        return 1;
    }
    for (int g = 1; g < argc; g++) {
        const mg_game_vt *vt = mg_game_find(argv[g]);
        if (!vt) {
            printf("%s: not registered\n", argv[g]);
            return 1;
        }
        long total = 0;
        allocations = 0;
        for (uint64_t seed = 1; seed <= 200; seed++) {
            long n = play(vt, seed);
            if (n < 0) {
                printf("%s: a rules call failed (seed %llu)\n", argv[g], (unsigned long long)seed);
                return 1;
            }
            total += n;
        }
        if (allocations) {
            printf("%s: %ld allocations in the rules\n", argv[g], allocations);
            failed = 1;
        } else {
            printf("%s: ok %ld\n", argv[g], total);
        }
    }
    return failed;
}
