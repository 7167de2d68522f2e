/*
 * deid/zayatz.c — Zayatz (1991) population uniques (docs/deid.md):
 * PU = c1^2 / sum_k c_k h_k with h_k = P(X = 1), X ~ Hypergeometric
 * (population N, k successes, n draws), all in log space with doubles
 * (ARX clamps N and n to 32-bit ints; we don't).  Also home of the
 * log-gamma difference that Pitman's PU formula shares.
 * Trusted library code: no logging, no exits, GSL status checked.
 */
#include "config.h"

#include <math.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf_gamma.h>

#include "deid/error.h"
#include "deid/risk.h"

/* Stirling's series is used from here on; below it GSL's lnpoch is
 * accurate (it only subtracts lnGammas for large arguments). */
#define LGD_STIRLING_MIN	20.0

/* B_2k / (2k (2k-1)), k = 1..7: Stirling's series coefficients. */
static const double stirling_coef[] = {
	1.0 / 12.0, -1.0 / 360.0, 1.0 / 1260.0, -1.0 / 1680.0,
	1.0 / 1188.0, -691.0 / 360360.0, 1.0 / 156.0,
};
#define NSTIRLING	(sizeof(stirling_coef) / sizeof(stirling_coef[0]))

/* lnGamma(a+x) - lnGamma(a) for large a by Stirling's series,
 * differenced term by term (log1p, expm1) so nothing cancels: GSL's
 * lnpoch subtracts two huge lnGammas here and loses ~log10(a) digits. */
static double
lngamma_diff_stirling(double a, double x)
{
	double l = log1p(x / a), ia = 1.0 / a, ia2 = ia * ia, pw = ia;
	double v, pd;
	size_t k;

	v = x * (log(a) - 1.0) + (a + x - 0.5) * l;
	for (k = 0; k < NSTIRLING; k++) {
		/* a^-(2k+1) - (a+x)^-(2k+1) */
		pd = -pw * expm1(-(double)(2 * k + 1) * l);
		v -= stirling_coef[k] * pd;
		pw *= ia2;
	}
	return v;
}

/* Small a: GSL's lnpoch is exact enough; large a: our Stirling form. */
double
deid_lngamma_diff(double a, double x)
{
	gsl_sf_result r;

	if (!(a > 0) || !(x >= 0) || !isfinite(a) || !isfinite(x))
		return NAN;
	if (x == 0)
		return 0;
	if (a >= LGD_STIRLING_MIN)
		return lngamma_diff_stirling(a, x);
	if (gsl_sf_lnpoch_e(a, x, &r) != GSL_SUCCESS || !isfinite(r.val))
		return NAN;
	return r.val;
}

/*
 * h_k = k C(N-k, n-1) / C(N, n) = (k n / N) prod_{j=0}^{k-2}
 * (N-n-j)/(N-1-j); the product is a ratio of two Pochhammer symbols,
 * evaluated as a difference of log-gamma differences.  Zero when fewer
 * than k-1 unsampled units remain.
 */
double
deid_zayatz_h(double N, uint64_t k, uint64_t n)
{
	double dk = (double)k, dn = (double)n, x, l1, l2;

	if (k == 0 || n == 0 || !(N >= dn) || !(N >= dk) || !isfinite(N))
		return NAN;
	if (k == 1)
		return dn / N;
	x = dk - 1;
	if (N - dn - dk + 2 <= 0)
		return 0;
	l1 = deid_lngamma_diff(N - dn - dk + 2, x);
	l2 = deid_lngamma_diff(N - dk + 1, x);
	if (isnan(l1) || isnan(l2))
		return NAN;
	return exp(log(dk) + log(dn) - log(N) + l1 - l2);
}

/* c1 = 0 needs no sum (and avoids 0/0 at f = 1). */
int
deid_zayatz_estimate(const struct deid_hist *h, double N,
    struct deid_estimate *e)
{
	double den = 0, hk, c1 = (double)h->c1;
	size_t i;

	deid_estimate_begin(e, DEID_MODEL_ZAYATZ);
	if (deid_estimate_check(h, N, e) != DEID_OK)
		return e->status;
	if (deid_estimate_no_uniques(h, e))
		return DEID_OK;
	e->path = DEID_PATH_DIRECT;
	for (i = 0; i < h->nsizes; i++) {
		hk = deid_zayatz_h(N, h->size[i], h->n);
		if (!isfinite(hk))
			return deid_estimate_fail(e, DEID_EINTERNAL,
			    "Zayatz: h_%llu not finite",
			    (unsigned long long)h->size[i]);
		den += (double)h->count[i] * hk;
	}
	e->pu = c1 / den * c1;
	if (!isfinite(e->pu) || e->pu < 0 || e->pu > N)
		return deid_estimate_fail(e, DEID_ENOSOLUTION,
		    "Zayatz: PU %g outside [0, N]", e->pu);
	e->fraction = e->pu / N;
	return DEID_OK;
}
