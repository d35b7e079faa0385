/* mg_rng.h: the explicit random number generator (xoshiro256**) carried beside a state. */
#ifndef MG_RNG_H
#define MG_RNG_H

#include <stdint.h>

/* Generator state; 32 bytes, plain data, copy to fork a stream. */
typedef struct mg_rng {
    uint64_t s[4];
} mg_rng;

/* Seed the generator from one 64-bit value (expanded with splitmix64). */
void mg_rng_seed(mg_rng *r, uint64_t seed);

/* Next 64 random bits. */
uint64_t mg_rng_next(mg_rng *r);

/* Uniform integer in [0, n), n > 0, without modulo bias (Lemire's method). */
uint32_t mg_rng_below(mg_rng *r, uint32_t n);

/* Uniform double in [0, 1). */
double mg_rng_double(mg_rng *r);

/* splitmix64 finaliser: a strong 64-bit mix, also used for Zobrist keys. */
uint64_t mg_mix64(uint64_t x);

/* mg_mix64 for the hot paths (incremental Zobrist keys), inlined. */
static inline uint64_t mg_mix64_inline(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* mg_rng_next, mg_rng_below and mg_rng_double for the hot paths (every rollout step draws
 * two or three), inlined; the functions are these, for the API and the other callers. */
static inline uint64_t mg_rng_next_inline(mg_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = ((s[1] * 5) << 7 | (s[1] * 5) >> 57) * 9; /* rotl(s[1] * 5, 7) * 9 */
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = s[3] << 45 | s[3] >> 19; /* rotl(s[3], 45) */
    return result;
}

static inline uint32_t mg_rng_below_inline(mg_rng *r, uint32_t n)
{
    uint64_t m = (uint64_t)(uint32_t)(mg_rng_next_inline(r) >> 32) * n;
    uint32_t low = (uint32_t)m;
    if (low < n) {
        uint32_t threshold = (uint32_t)(-n) % n;
        while (low < threshold) {
            m = (uint64_t)(uint32_t)(mg_rng_next_inline(r) >> 32) * n;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

static inline double mg_rng_double_inline(mg_rng *r)
{
    return (double)(mg_rng_next_inline(r) >> 11) * (1.0 / 9007199254740992.0);
}

#endif
