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

#endif
