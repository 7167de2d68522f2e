/*
 * common/rng.h — deterministic PRNG for generated (never secret) data.
 */
#ifndef COMMON_RNG_H
#define COMMON_RNG_H

#include <stddef.h>
#include <stdint.h>

struct rng {
	uint64_t	s[4];
};

void		rng_seed(struct rng *r, uint64_t seed);
uint64_t	rng_next(struct rng *r);
/* Uniform in [0, n), no modulo bias. */
uint32_t	rng_below(struct rng *r, uint32_t n);
/* Uniform in [0, 1) with 53 random bits. */
double		rng_unit(struct rng *r);
/* Index drawn in proportion to weights given as a cumulative array. */
size_t		rng_cdf_pick(struct rng *r, const uint32_t *cum, size_t n);

#endif
