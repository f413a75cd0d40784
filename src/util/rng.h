/* rng.h - a small seeded pseudo-random generator (xoshiro256**, seeded
 * through splitmix64) so that every run is reproducible from its seed. */
#ifndef GP_UTIL_RNG_H
#define GP_UTIL_RNG_H

#include <stdint.h>

struct gp_rng {
    uint64_t s[4];
};

void gp_rng_seed(struct gp_rng *r, uint64_t seed);
uint64_t gp_rng_next(struct gp_rng *r);
/* Uniform in [0, n), n > 0, without modulo bias. */
uint64_t gp_rng_below(struct gp_rng *r, uint64_t n);
/* Uniform in [0, 1). */
double gp_rng_unit(struct gp_rng *r);
/* Exponentially distributed with the given mean. */
double gp_rng_exp(struct gp_rng *r, double mean);
/* Standard normal (Box-Muller). */
double gp_rng_normal(struct gp_rng *r);

#endif
