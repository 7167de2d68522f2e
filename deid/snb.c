/*
 * deid/snb.c — the shifted negative binomial model (Chen & Keller-McNulty
 * 1998) in its correct form (docs/deid.md): K population cells of size
 * 1 + NegBin(alpha, beta), each unit sampled with probability pi = n/N;
 * K from the modified Shlosser estimator; (alpha, beta) from
 * K p1 = c1 and K p2 = c2 by nested bisection (outer on ln alpha, inner
 * on beta for the ratio p2/p1).  ARX raises W to the wrong power in p2
 * and subtracts 1 per distinct size in Shlosser's B; we don't.
 * Trusted library code: no logging, no exits, no allocation.
 */
#include "config.h"

#include <math.h>

#include "deid/error.h"
#include "deid/risk.h"

#define SNB_MAXBISECT	200	/* bisection steps; exhaustion comes first */
#define SNB_V_LO	-690.0	/* v = ln(-ln beta): 1 - beta ~ 1e-300 */
#define SNB_V_HI	6.6	/* beta ~ e^-735, as good as 0 */
#define SNB_X_MAX	512.0	/* |ln alpha| searched for a bracket */

/* Modified Shlosser; (1-q^2)^k - (1-q)^k is taken as (1-q)^k
 * expm1(k log1p(q)) so small q does not cancel it away. */
double
deid_shlosser_k(const struct deid_hist *h, double q, double *A, double *B,
    double *C, double *D)
{
	double a = 0, b = 0, c = 0, d = 0, l1, l2, k, ck, pk;
	size_t i;

	if (!(q > 0 && q < 1))
		return NAN;
	l1 = log1p(-q);
	l2 = log1p(-q * q);
	for (i = 0; i < h->nsizes; i++) {
		k = (double)h->size[i];
		ck = (double)h->count[i];
		pk = exp(k * l1);			/* (1-q)^k */
		a += k * q * q * exp((k - 1) * l2) * ck;
		/* (1-q^2)^k - (1-q)^k = (1-q)^k ((1+q)^k - 1) */
		b += pk * expm1(k * log1p(q)) * ck;
		c += pk * ck;
		d += k * q * exp((k - 1) * l1) * ck;
	}
	if (A != NULL)
		*A = a;
	if (B != NULL)
		*B = b;
	if (C != NULL)
		*C = c;
	if (D != NULL)
		*D = d;
	return (double)h->u + (double)h->c1 * (a / b) * (c / d) * (c / d);
}

/* Where the model stands at one beta, given as ln beta: 1 - beta and
 * W = 1 - d taken without cancellation, also for beta near 1. */
struct snb_pt {
	double	lb, d, w, lnw, lomb;
};

static void
snb_point(double pi, double lb, struct snb_pt *p)
{
	double omb = -expm1(lb);

	p->lb = lb;
	p->d = (1 - pi) * omb;
	p->w = 1 - p->d;
	p->lnw = log1p(-p->d);
	p->lomb = log(omb);
}

/* ln(p2/p1) = ln(pi/2 alpha (1-beta)/W (1+W+alpha d)/(W+alpha d)),
 * using alpha + (1-alpha)W = W + alpha d (positive for any alpha). */
static double
snb_lnratio(double pi, double a, const struct snb_pt *p)
{
	return log(pi / 2) + log(a) + p->lomb - p->lnw +
	    log(1 + p->w + a * p->d) - log(p->w + a * p->d);
}

/* ln p1 = ln(pi beta^alpha W^-(alpha+1) (W + alpha d)). */
static double
snb_lnp1(double pi, double a, const struct snb_pt *p)
{
	return log(pi) + a * p->lb - (a + 1) * p->lnw + log(p->w + a * p->d);
}

/* Inner solve: beta with p2/p1 = rho at this alpha.  The ratio falls
 * strictly in beta, so bisect on v = ln(-ln beta) (geometric in ln beta,
 * which keeps relative precision in 1 - beta near 1).  No root: the
 * ratio cannot reach rho even as beta -> 0, where p1 -> 0. */
static int
snb_beta(double pi, double a, double lnrho, struct snb_pt *p,
    unsigned *its)
{
	double lo = SNB_V_LO, hi = SNB_V_HI, mid;
	int k;

	snb_point(pi, -exp(hi), p);
	if (snb_lnratio(pi, a, p) < lnrho)
		return DEID_ENOSOLUTION;
	for (k = 0; k < SNB_MAXBISECT; k++) {
		mid = 0.5 * (lo + hi);
		if (mid <= lo || mid >= hi)
			break;
		snb_point(pi, -exp(mid), p);
		if (snb_lnratio(pi, a, p) < lnrho)
			lo = mid;
		else
			hi = mid;
	}
	*its += k;
	snb_point(pi, -exp(hi), p);
	return DEID_OK;
}

/* Outer function: ln p1 along the curve p2/p1 = rho, minus its target;
 * rises with alpha.  -inf where no beta fits (p1 -> 0 there). */
static double
snb_outer(double pi, double x, double lnrho, double lntarget,
    struct snb_pt *p, unsigned *its)
{
	double a = exp(x);

	if (snb_beta(pi, a, lnrho, p, its) != DEID_OK)
		return -INFINITY;
	return snb_lnp1(pi, a, p) - lntarget;
}

/* Existence (docs/deid.md): c1/K below the alpha -> infinity limit of p1,
 * pi e^(-pi mu) (1 + (1-pi) mu), mu > 0 the root of the quadratic. */
static int
snb_exists(double K, double pi, double c1, double c2)
{
	double rho = c2 / c1, qa = pi * (1 - pi) / 2, qb = pi - rho *
	    (1 - pi), disc, mu;

	disc = sqrt(qb * qb + 4 * qa * rho);
	mu = qb >= 0 ? 2 * rho / (qb + disc) : (disc - qb) / (2 * qa);
	return c1 / K < pi * exp(-pi * mu) * (1 + (1 - pi) * mu);
}

/* Bracket the outer root in x = ln alpha by doubling steps from 0. */
static int
snb_bracket(double pi, double lnrho, double lnt, double *lo, double *hi,
    struct snb_pt *p, unsigned *its)
{
	double s;

	*lo = *hi = 0;
	if (snb_outer(pi, 0, lnrho, lnt, p, its) < 0) {
		for (s = 1; s <= SNB_X_MAX; s *= 2) {
			*lo = *hi;
			*hi = s;
			if (snb_outer(pi, s, lnrho, lnt, p, its) >= 0)
				return DEID_OK;
		}
	} else {
		for (s = 1; s <= SNB_X_MAX; s *= 2) {
			*hi = *lo;
			*lo = -s;
			if (snb_outer(pi, -s, lnrho, lnt, p, its) < 0)
				return DEID_OK;
		}
	}
	return DEID_ENOSOLUTION;
}

/* Existence check, then nested bisection; fraction is left NaN (the
 * caller knows N). */
int
deid_snb_solve(double K, double pi, double c1, double c2,
    struct deid_estimate *e)
{
	double lnrho, lnt, lo, hi, mid;
	struct snb_pt p;
	int k;

	deid_estimate_begin(e, DEID_MODEL_SNB);
	if (!(K > 0) || !isfinite(K) || !(pi > 0 && pi < 1))
		return deid_estimate_fail(e, DEID_EINPUT,
		    "SNB: needs K > 0 and 0 < pi < 1");
	if (!(c1 > 0 && c2 > 0) || !snb_exists(K, pi, c1, c2))
		return deid_estimate_fail(e, DEID_ENOSOLUTION,
		    "SNB: no solution (c1 %g, c2 %g, K %g, pi %g)",
		    c1, c2, K, pi);
	lnrho = log(c2 / c1);
	lnt = log(c1 / K);
	if (snb_bracket(pi, lnrho, lnt, &lo, &hi, &p, &e->iterations) !=
	    DEID_OK)
		return deid_estimate_fail(e, DEID_ENOSOLUTION,
		    "SNB: no root bracketed for alpha in [e^-%g, e^%g]",
		    SNB_X_MAX, SNB_X_MAX);
	for (k = 0; k < SNB_MAXBISECT; k++) {
		mid = 0.5 * (lo + hi);
		if (mid <= lo || mid >= hi)
			break;
		if (snb_outer(pi, mid, lnrho, lnt, &p, &e->iterations) < 0)
			lo = mid;
		else
			hi = mid;
	}
	if (snb_outer(pi, hi, lnrho, lnt, &p, &e->iterations) == -INFINITY)
		return deid_estimate_fail(e, DEID_ENOSOLUTION,
		    "SNB: inner solve lost its root");
	e->path = DEID_PATH_DIRECT;
	e->snb_alpha = exp(hi);
	e->snb_beta = exp(p.lb);
	e->snb_k = K;
	e->pu = K * exp(e->snb_alpha * p.lb);
	return DEID_OK;
}

/* f = 1 is a census: every sample unique is a population unique. */
int
deid_snb_estimate(const struct deid_hist *h, double N,
    struct deid_estimate *e)
{
	double pi, K;

	deid_estimate_begin(e, DEID_MODEL_SNB);
	if (deid_estimate_check(h, N, e) != DEID_OK)
		return e->status;
	if (deid_estimate_no_uniques(h, e))
		return DEID_OK;
	if ((double)h->n == N) {		/* f = 1: census */
		e->path = DEID_PATH_TRIVIAL;
		e->pu = (double)h->c1;
		e->fraction = e->pu / N;
		return DEID_OK;
	}
	if (h->c2 == 0)
		return deid_estimate_fail(e, DEID_ENOSOLUTION,
		    "SNB: no solution (needs c2 > 0)");
	pi = (double)h->n / N;
	K = deid_shlosser_k(h, pi, NULL, NULL, NULL, NULL);
	if (deid_snb_solve(K, pi, (double)h->c1, (double)h->c2, e) != DEID_OK)
		return e->status;
	if (!isfinite(e->pu) || e->pu < 0 || e->pu > N)
		return deid_estimate_fail(e, DEID_ENOSOLUTION,
		    "SNB: PU %g outside [0, N]", e->pu);
	e->fraction = e->pu / N;
	return DEID_OK;
}
