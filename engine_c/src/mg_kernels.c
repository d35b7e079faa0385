/* mg_kernels.c: random playouts and benchmark loops, generic over mg_game_vt. */
#define _POSIX_C_SOURCE 199309L
#include <string.h>
#include <time.h>

#include "mg_kernels.h"

typedef union {
    unsigned char bytes[MG_MAX_STATE_SIZE];
    uint64_t align;
} state_buf;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A uniformly random non-END_TURN action, or END_TURN if there is none. A legal list
 * holds END_TURN at most once, so rejection sampling is uniform over the others. */
static mg_action random_action(const mg_game_vt *vt, const mg_action *acts, int n, mg_rng *rng)
{
    if (n == 1)
        return acts[0];
    for (;;) {
        mg_action a = acts[mg_rng_below(rng, (uint32_t)n)];
        if (!vt->is_end_turn(a))
            return a;
    }
}

long mg_random_playout(const mg_game_vt *vt, void *st, mg_rng *rng, long max_actions)
{
    mg_action acts[MG_MAX_ACTIONS];
    long applied = 0;
    while (applied < max_actions && !vt->terminal(st, NULL)) {
        int n = vt->legal(st, acts);
        if (n <= 0)
            break;
        if (vt->apply(st, random_action(vt, acts, n, rng), rng) != MG_OK)
            break;
        applied++;
    }
    return applied;
}

int mg_bench_playouts(const mg_game_vt *vt, const void *start, double seconds, uint64_t seed,
                      long *games, long *actions, double *elapsed)
{
    state_buf buf;
    mg_rng rng;
    mg_rng_seed(&rng, seed);
    long g = 0, a = 0;
    double t0 = now_s(), t = t0;
    while (t - t0 < seconds) {
        memcpy(buf.bytes, start, vt->state_size);
        a += mg_random_playout(vt, buf.bytes, &rng, 1000000);
        g++;
        t = now_s();
    }
    *games = g;
    *actions = a;
    *elapsed = t - t0;
    return MG_OK;
}

int mg_bench_legal(const mg_game_vt *vt, const void *states, int n, double seconds, long *calls,
                   double *elapsed)
{
    mg_action acts[MG_MAX_ACTIONS];
    const unsigned char *base = states;
    long c = 0;
    volatile int sink = 0;
    double t0 = now_s(), t = t0;
    while (t - t0 < seconds) {
        for (int k = 0; k < 1000; k++, c++)
            sink += vt->legal(base + (size_t)(c % n) * vt->state_size, acts);
        t = now_s();
    }
    (void)sink;
    *calls = c;
    *elapsed = t - t0;
    return MG_OK;
}

int mg_bench_clone_apply(const mg_game_vt *vt, const void *states, int n, double seconds,
                         uint64_t seed, long *count, double *elapsed)
{
    /* Legal lists are computed once per state, outside the timed loop. */
    static mg_action lists[64][MG_MAX_ACTIONS];
    int counts[64];
    const unsigned char *base = states;
    if (n > 64)
        n = 64;
    for (int i = 0; i < n; i++)
        counts[i] = vt->legal(base + (size_t)i * vt->state_size, lists[i]);
    state_buf buf;
    mg_rng rng;
    mg_rng_seed(&rng, seed);
    long c = 0;
    double t0 = now_s(), t = t0;
    while (t - t0 < seconds) {
        for (int k = 0; k < 1000; k++, c++) {
            int i = (int)(c % n);
            memcpy(buf.bytes, base + (size_t)i * vt->state_size, vt->state_size);
            vt->apply(buf.bytes, lists[i][mg_rng_below(&rng, (uint32_t)counts[i])], &rng);
        }
        t = now_s();
    }
    *count = c;
    *elapsed = t - t0;
    return MG_OK;
}
