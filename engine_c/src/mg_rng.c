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

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t mg_rng_next(mg_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint32_t mg_rng_below(mg_rng *r, uint32_t n)
{
    uint64_t m = (uint64_t)(uint32_t)(mg_rng_next(r) >> 32) * n;
    uint32_t low = (uint32_t)m;
    if (low < n) {
        uint32_t threshold = (uint32_t)(-n) % n;
        while (low < threshold) {
            m = (uint64_t)(uint32_t)(mg_rng_next(r) >> 32) * n;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

double mg_rng_double(mg_rng *r)
{
    return (double)(mg_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}
