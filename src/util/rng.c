/* rng.c - xoshiro256** (Blackman and Vigna's published algorithm) with
 * splitmix64 seeding. */
#include "util/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void gp_rng_seed(struct gp_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

uint64_t gp_rng_next(struct gp_rng *r)
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

uint64_t gp_rng_below(struct gp_rng *r, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = gp_rng_next(r);
    while (x >= limit);
    return x % n;
}

double gp_rng_unit(struct gp_rng *r)
{
    return (double)(gp_rng_next(r) >> 11) * 0x1.0p-53;
}

double gp_rng_exp(struct gp_rng *r, double mean)
{
    return -mean * log1p(-gp_rng_unit(r));
}

double gp_rng_normal(struct gp_rng *r)
{
    double u1 = gp_rng_unit(r), u2 = gp_rng_unit(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
