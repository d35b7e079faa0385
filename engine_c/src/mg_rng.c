/* mg_rng.c: xoshiro256** (Blackman and Vigna) with splitmix64 seeding. */
#include "mg_rng.h"

uint64_t mg_mix64(uint64_t x)
{
    return mg_mix64_inline(x);
}

void mg_rng_seed(mg_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) {
        seed += 0x9e3779b97f4a7c15ULL;
        r->s[i] = mg_mix64(seed);
    }
}

uint64_t mg_rng_next(mg_rng *r)
{
    return mg_rng_next_inline(r);
}

uint32_t mg_rng_below(mg_rng *r, uint32_t n)
{
    return mg_rng_below_inline(r, n);
}

double mg_rng_double(mg_rng *r)
{
    return mg_rng_double_inline(r);
}
