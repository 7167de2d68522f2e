/*
 * common/rng.c — a small deterministic PRNG (xoshiro256** seeded by
 * splitmix64) for generated data: the same seed gives the same bytes on
 * every platform.  Not for secrets: keys, passwords and tokens come from
 * OpenSSL's CSPRNG.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "common/rng.h"

/* Spread one 64-bit seed over the four state words. */
static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t z;

	z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void
rng_seed(struct rng *r, uint64_t seed)
{
	size_t i;

	for (i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t
rng_next(struct rng *r)
{
	uint64_t *s = r->s, result, t;

	result = rotl(s[1] * 5, 7) * 9;
	t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/* Uniform in [0, n) without modulo bias (Lemire's multiply and reject). */
uint32_t
rng_below(struct rng *r, uint32_t n)
{
	uint64_t m;
	uint32_t threshold;

	m = (rng_next(r) >> 32) * n;
	if ((uint32_t)m < n) {
		threshold = (uint32_t)(0u - n) % n;
		while ((uint32_t)m < threshold)
			m = (rng_next(r) >> 32) * n;
	}
	return (uint32_t)(m >> 32);
}

/* Uniform in [0, 1) with 53 random bits. */
double
rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* Index drawn in proportion to weights given as a cumulative array. */
size_t
rng_cdf_pick(struct rng *r, const uint32_t *cum, size_t n)
{
	uint32_t u;
	size_t lo = 0, hi = n - 1, mid;

	u = rng_below(r, cum[n - 1]);
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (cum[mid] > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}
