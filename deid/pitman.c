/*
 * deid/pitman.c — Pitman (Hoshino 2001) population uniques by maximum
 * likelihood (Hoshino 2001).  The likelihood equations F1 = F2 = 0 and
 * their Jacobian are evaluated two ways: closed forms costing
 * O(distinct class sizes) per step, and the explicit sums, O(u + n),
 * used to verify the closed-form root and as the fallback solver.  The
 * solver is a damped Newton ascent on the log-likelihood over
 * 0 <= alpha < 1, theta > -alpha, bounded by iteration counts only; the
 * alpha = 0 (Ewens) boundary is checked first.
 * Trusted library code: no logging, no exits, no allocation, every GSL
 * status checked.
 */
#include "config.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf_gamma.h>
#include <gsl/gsl_sf_psi.h>

#include "deid/error.h"
#include "deid/risk.h"

#define PIT_TOL		1e-6	/* |F1|, |F2| at a root (docs/deid.md) */
#define PIT_MAXIT	100	/* Newton steps per start point */
#define PIT_MAXHALF	60	/* step halvings per line search */
#define PIT_POLISH	2	/* extra Newton steps once within PIT_TOL */
#define EWENS_MAXIT	200	/* safeguarded Newton steps for theta_E */
#define EM_R0		12.0	/* Euler-Maclaurin from r >= EM_R0 on */
#define ALPHA_LIMIT	1e100	/* theta/alpha beyond this: alpha -> 0 limit */
#define SUM_BLOCK	256	/* explicit sums: plain within a block */

/* ---- sums over i = 1..m as closed forms ---- */

/*
 * For r > -1 and m >= 0: t0 = sum 1/(r+i), t1 = sum 1/(r+i)^2,
 * q1 = sum i/(r+i), q2 = sum i/(r+i)^2, q3 = sum i^2/(r+i)^2.
 * These are the digamma/trigamma closed forms of the equations (e.g. t0 =
 * psi(r+m+1) - psi(r+1), q1 = m - r t0, q3 = m - 2 r t0 + r^2 t1), but
 * written that way they cancel catastrophically once r = theta/alpha
 * is large against m (q3 loses (r/m)^2).  So they are computed from
 * the asymptotic series of psi instead, i.e. Euler-Maclaurin with every
 * leading term differenced analytically.
 */
struct isums {
	double	t0, t1, q1, q2, q3;
};

/* B_2k, k = 1..8: Euler-Maclaurin remainder < 1e-19 for r >= EM_R0. */
static const double bernoulli[] = {
	1.0 / 6.0, -1.0 / 30.0, 1.0 / 42.0, -1.0 / 30.0, 5.0 / 66.0,
	-691.0 / 2730.0, 7.0 / 6.0, -3617.0 / 510.0,
};
#define NBERNOULLI	(sizeof(bernoulli) / sizeof(bernoulli[0]))

/* sum_{k>=k0} (-1)^k w(k) e^k for 0 <= e <= 0.5: the Taylor series of
 * the three log1p combinations below, which cancel for small e. */
static double
alt_series(double e, int k0, int kind)
{
	double pw = pow(e, k0), s = 0, t, w;
	int k;

	for (k = k0; k < k0 + 80; k++) {
		w = kind == 1 ? 1.0 / k : kind == 2 ? (k - 1.0) / k :
		    -(k - 2.0) / k;
		t = w * pw;
		s += (k & 1) ? -t : t;
		if (fabs(t) <= 1e-18 * fabs(s))
			break;
		pw *= e;
	}
	return s;
}

/* e - log1p(e), log1p(e) - e/(1+e), e - 2 log1p(e) + e/(1+e): the
 * integrals of i/(r+i), i/(r+i)^2, i^2/(r+i)^2 over [0, m], e = m/r. */
static double
lcomb(double e, int kind)
{
	if (e <= 0.5)
		return alt_series(e, kind == 3 ? 3 : 2, kind);
	if (kind == 1)
		return e - log1p(e);
	if (kind == 2)
		return log1p(e) - e / (1 + e);
	return e - 2 * log1p(e) + e / (1 + e);
}

/* Euler-Maclaurin for r >= EM_R0, m > 0: sum = integral + half the
 * end-point difference + Bernoulli corrections; each f is
 * c0 + c1/z + c2/z^2 (z = r+t), so the corrections only need
 * pd(p) = r^-p - (r+m)^-p, taken via expm1 to keep its digits. */
static void
isums_em(double r, double m, struct isums *s)
{
	double e = m / r, l = log1p(e), b = r + m, ir = 1 / r, pw, pd2, pd3;
	double B;
	size_t k;

	s->t0 = l - m / (2 * r * b);
	s->t1 = m / (r * b) - m * (r + b) / (2 * r * r * b * b);
	s->q1 = r * lcomb(e, 1) + m / (2 * b);
	s->q2 = lcomb(e, 2) + m / (2 * b * b);
	s->q3 = r * lcomb(e, 3) + m * m / (2 * b * b);
	pw = ir * ir;				/* r^-2k */
	for (k = 1; k <= NBERNOULLI; k++) {
		B = bernoulli[k - 1];
		pd2 = -pw * expm1(-(double)(2 * k) * l);
		pd3 = -pw * ir * expm1(-(double)(2 * k + 1) * l);
		s->t0 += B * pd2 / (2 * k);
		s->t1 += B * pd3;
		s->q1 += B * (-r) * pd2 / (2 * k);
		s->q2 += B * (pd2 / (2 * k) - r * pd3);
		s->q3 += B * (-2 * r * pd2 / (2 * k) + r * r * pd3);
		pw *= ir * ir;
	}
}

/* All five sums for any r > -1: the first few terms (where r + i is
 * small) directly, O(EM_R0) of them, then Euler-Maclaurin on the
 * shifted rest, i = sh + j: (sh+j)^p splits into sums we have. */
static void
isums(double r, double m, struct isums *s)
{
	double sh = 0, i, z;
	struct isums t;

	memset(s, 0, sizeof(*s));
	if (r < EM_R0)
		sh = ceil(EM_R0 - r);
	if (sh > m)
		sh = m;
	for (i = 1; i <= sh; i++) {
		z = r + i;
		s->t0 += 1 / z;
		s->t1 += 1 / (z * z);
		s->q1 += i / z;
		s->q2 += i / (z * z);
		s->q3 += (i / z) * (i / z);
	}
	if (m <= sh)
		return;
	isums_em(r + sh, m - sh, &t);
	s->t0 += t.t0;
	s->t1 += t.t1;
	s->q1 += t.q1 + sh * t.t0;
	s->q2 += t.q2 + sh * t.t1;
	s->q3 += t.q3 + 2 * sh * t.q2 + sh * sh * t.t1;
}

/* ---- the likelihood equations ---- */

/* F, Jacobian (= Hessian of the log-likelihood) and, per equation, the
 * magnitude of the sums it is the difference of (for tolerances). */
struct pit_eval {
	double	F[2];
	double	J[2][2];
	double	scale[2];
};

/* The parts over classes: sum_i 1/(theta+i alpha) etc., i = 1..u-1. */
struct usum {
	double	s0, s1, d1, d5, d3;
};

/* Is (theta, alpha) inside the parameter space? */
static int
pit_domain(double theta, double alpha)
{
	return isfinite(theta) && alpha >= 0 && alpha < 1 &&
	    theta + alpha > 0;
}

/* Closed-form class sums: theta + i alpha = alpha (r + i), r =
 * theta/alpha; alpha -> 0 (r beyond ALPHA_LIMIT) is the exact limit. */
static void
usum_closed(double theta, double alpha, double m, struct usum *u)
{
	struct isums s;
	double a2;

	if (alpha == 0 || theta > ALPHA_LIMIT * alpha) {
		u->s0 = m / theta;
		u->s1 = m * (m + 1) / (2 * theta);
		u->d1 = m / (theta * theta);
		u->d5 = u->s1 / theta;
		u->d3 = m * (m + 1) * (2 * m + 1) / (6 * theta * theta);
		return;
	}
	isums(theta / alpha, m, &s);
	a2 = alpha * alpha;
	u->s0 = s.t0 / alpha;
	u->s1 = s.q1 / alpha;
	u->d1 = s.t1 / a2;
	u->d5 = s.q2 / a2;
	u->d3 = s.q3 / a2;
}

/* sum_k c_k [psi(k-alpha) - psi(1-alpha)] and the trigamma analogue:
 * one digamma and one trigamma per distinct class size. */
static int
ksum_closed(const struct deid_hist *h, double alpha, double *g, double *d4)
{
	gsl_sf_result p0, p1, q0, q1;
	double c;
	size_t i;

	*g = *d4 = 0;
	if (gsl_sf_psi_e(1 - alpha, &p0) != GSL_SUCCESS ||
	    gsl_sf_psi_1_e(1 - alpha, &q0) != GSL_SUCCESS)
		return DEID_ENOCONV;
	for (i = 0; i < h->nsizes; i++) {
		if (h->size[i] < 2)
			continue;
		c = (double)h->count[i];
		if (gsl_sf_psi_e((double)h->size[i] - alpha, &p1) !=
		    GSL_SUCCESS || gsl_sf_psi_1_e((double)h->size[i] - alpha,
		    &q1) != GSL_SUCCESS)
			return DEID_ENOCONV;
		*g += c * (p1.val - p0.val);
		*d4 += c * (q0.val - q1.val);
	}
	return DEID_OK;
}

/* Assemble F and J from the three groups of sums. */
static int
pit_assemble(const struct usum *us, double hn, double d2, double g,
    double d4, struct pit_eval *ev)
{
	ev->F[0] = us->s0 - hn;
	ev->F[1] = us->s1 - g;
	ev->J[0][0] = d2 - us->d1;
	ev->J[0][1] = ev->J[1][0] = -us->d5;
	ev->J[1][1] = -(us->d3 + d4);
	ev->scale[0] = us->s0 + hn;
	ev->scale[1] = us->s1 + g;
	if (!isfinite(ev->F[0]) || !isfinite(ev->F[1]) ||
	    !isfinite(ev->J[0][0]) || !isfinite(ev->J[0][1]) ||
	    !isfinite(ev->J[1][1]))
		return DEID_ENOCONV;
	return DEID_OK;
}

/* F and J by closed forms: O(distinct sizes) per call. */
static int
eval_closed(const struct deid_hist *h, double theta, double alpha,
    struct pit_eval *ev)
{
	struct usum us;
	struct isums ns;
	double g, d4;

	if (!pit_domain(theta, alpha) || h->u < 2 || h->n <= h->u)
		return DEID_EINPUT;
	usum_closed(theta, alpha, (double)(h->u - 1), &us);
	isums(theta, (double)(h->n - 1), &ns);
	if (ksum_closed(h, alpha, &g, &d4) != DEID_OK)
		return DEID_ENOCONV;
	return pit_assemble(&us, ns.t0, ns.t1, g, d4, ev);
}

/* Compensated (Neumaier) sum: the explicit sums run over up to n
 * terms and must stay exact to ~1e-16 to serve as the reference. */
struct csum {
	double	s, c;
};

static void
csum_add(struct csum *a, double x)
{
	double t = a->s + x;

	if (fabs(a->s) >= fabs(x))
		a->c += (a->s - t) + x;
	else
		a->c += (x - t) + a->s;
	a->s = t;
}

static double
csum_get(const struct csum *a)
{
	return a->s + a->c;
}

/* Explicit class sums sum_{i<u} 1/(theta + i alpha) etc.: O(u), in
 * blocks summed plainly (error ~ SUM_BLOCK eps of a block), the block
 * totals compensated: as exact as Neumaier throughout, twice as fast. */
static void
usum_explicit(double theta, double alpha, uint64_t u, struct usum *us)
{
	struct csum s0 = { 0, 0 }, s1 = s0, d1 = s0, d5 = s0, d3 = s0;
	double b[5], t, it;
	uint64_t i, k, end;

	for (i = 1; i < u; i = end) {
		end = u - i > SUM_BLOCK ? i + SUM_BLOCK : u;
		b[0] = b[1] = b[2] = b[3] = b[4] = 0;
		for (k = i; k < end; k++) {
			t = 1 / (theta + (double)k * alpha);
			it = (double)k * t;
			b[0] += t;
			b[1] += it;
			b[2] += t * t;
			b[3] += it * t;
			b[4] += it * it;
		}
		csum_add(&s0, b[0]);
		csum_add(&s1, b[1]);
		csum_add(&d1, b[2]);
		csum_add(&d5, b[3]);
		csum_add(&d3, b[4]);
	}
	us->s0 = csum_get(&s0);
	us->s1 = csum_get(&s1);
	us->d1 = csum_get(&d1);
	us->d5 = csum_get(&d5);
	us->d3 = csum_get(&d3);
}

/* Explicit record sums sum_{i<n} 1/(theta+i), 1/(theta+i)^2: O(n). */
static void
nsum_explicit(double theta, uint64_t n, double *hn, double *d2)
{
	struct csum a = { 0, 0 }, b = a;
	double ba, bb, t;
	uint64_t i, k, end;

	for (i = 1; i < n; i = end) {
		end = n - i > SUM_BLOCK ? i + SUM_BLOCK : n;
		ba = bb = 0;
		for (k = i; k < end; k++) {
			t = 1 / (theta + (double)k);
			ba += t;
			bb += t * t;
		}
		csum_add(&a, ba);
		csum_add(&b, bb);
	}
	*hn = csum_get(&a);
	*d2 = csum_get(&b);
}

/* F and J by the explicit sums, O(u + n + largest class): the
 * reference the closed forms are verified against, and the fallback. */
static int
eval_sums(const struct deid_hist *h, double theta, double alpha,
    struct pit_eval *ev)
{
	struct csum pg = { 0, 0 }, pd = pg, g = pg, d4 = pg;
	struct usum us;
	double t, hn, d2;
	uint64_t j = 1;
	size_t k;

	if (!pit_domain(theta, alpha) || h->u < 2 || h->n <= h->u)
		return DEID_EINPUT;
	usum_explicit(theta, alpha, h->u, &us);
	nsum_explicit(theta, h->n, &hn, &d2);
	for (k = 0; k < h->nsizes; k++) {
		for (; j < h->size[k]; j++) {	/* pg = sum 1/(j-alpha) */
			t = 1 / ((double)j - alpha);
			csum_add(&pg, t);
			csum_add(&pd, t * t);
		}
		csum_add(&g, (double)h->count[k] * csum_get(&pg));
		csum_add(&d4, (double)h->count[k] * csum_get(&pd));
	}
	return pit_assemble(&us, hn, d2, csum_get(&g), csum_get(&d4), ev);
}

/* Public views of the two evaluators (the tests compare them). */
int
deid_pitman_equations_closed(const struct deid_hist *h, double theta,
    double alpha, double F[2], double J[2][2])
{
	struct pit_eval ev;
	int rc;

	if ((rc = eval_closed(h, theta, alpha, &ev)) != DEID_OK)
		return rc;
	if (F != NULL)
		memcpy(F, ev.F, sizeof(ev.F));
	if (J != NULL)
		memcpy(J, ev.J, sizeof(ev.J));
	return DEID_OK;
}

int
deid_pitman_equations_sums(const struct deid_hist *h, double theta,
    double alpha, double F[2], double J[2][2])
{
	struct pit_eval ev;
	int rc;

	if ((rc = eval_sums(h, theta, alpha, &ev)) != DEID_OK)
		return rc;
	if (F != NULL)
		memcpy(F, ev.F, sizeof(ev.F));
	if (J != NULL)
		memcpy(J, ev.J, sizeof(ev.J));
	return DEID_OK;
}

/* ---- log-likelihood (what the solver climbs) ---- */

/* sum_k c_k [lnGamma(k - alpha) - lnGamma(1 - alpha)]: one lnGamma per
 * size (arguments are small, nothing large cancels); *mag its size. */
static int
ksum_loglik(const struct deid_hist *h, double alpha, double *lk,
    double *mag)
{
	gsl_sf_result g0, g;
	double c;
	size_t i;

	*lk = *mag = 0;
	if (gsl_sf_lngamma_e(1 - alpha, &g0) != GSL_SUCCESS)
		return DEID_ENOCONV;
	for (i = 0; i < h->nsizes; i++) {
		if (h->size[i] < 2)
			continue;
		if (gsl_sf_lngamma_e((double)h->size[i] - alpha, &g) !=
		    GSL_SUCCESS)
			return DEID_ENOCONV;
		c = (double)h->count[i];
		*lk += c * (g.val - g0.val);
		*mag += c * (fabs(g.val) + fabs(g0.val));
	}
	return DEID_OK;
}

/*
 * ln L = sum_{i<u} ln(theta + i alpha) - sum_{i<n} ln(theta + i)
 *      + sum_k c_k sum_{j<k} ln(j - alpha), up to a constant, via
 * log-gamma differences; *noise is its rounding level, below which
 * two values are not told apart.
 */
static int
pit_loglik(const struct deid_hist *h, double theta, double alpha,
    double *ll, double *noise)
{
	double m = (double)(h->u - 1), lu, ln, lk, t, mag;

	if (ksum_loglik(h, alpha, &lk, &mag) != DEID_OK)
		return DEID_ENOCONV;
	if (alpha == 0 || theta > ALPHA_LIMIT * alpha) {
		lu = m * log(theta);
		mag += fabs(lu);
	} else {
		t = deid_lngamma_diff(theta / alpha + 1, m);
		lu = m * log(alpha) + t;
		mag += fabs(m * log(alpha)) + fabs(t);
	}
	ln = deid_lngamma_diff(theta + 1, (double)(h->n - 1));
	*ll = lu - ln + lk;
	*noise = 64 * DBL_EPSILON * (mag + fabs(ln));
	return isfinite(*ll) ? DEID_OK : DEID_ENOCONV;
}

/* ---- the solver ---- */

typedef int (*pit_evalfn)(const struct deid_hist *, double, double,
    struct pit_eval *);

/* Solver state: the current point and what we know there. */
struct pit_state {
	double		 theta, alpha;
	struct pit_eval	 ev;
	double		 ll, noise;
	unsigned	 iterations;
};

/* Within tolerance: |F| <= 1e-6, or at the rounding level of the sums
 * when they are so large that 1e-6 is below it. */
static int
pit_converged(const struct pit_eval *ev)
{
	int i;

	for (i = 0; i < 2; i++)
		if (!(fabs(ev->F[i]) <= fmax(PIT_TOL,
		    1e-13 * ev->scale[i])))
			return 0;
	return 1;
}

/* A local maximum needs a negative definite Hessian. */
static int
pit_negdef(const double J[2][2])
{
	return J[0][0] < 0 && J[0][0] * J[1][1] - J[0][1] * J[1][0] > 0;
}

/* Ascent direction: the Newton step where the Hessian is negative
 * definite, else gradient ascent scaled by the Hessian's diagonal
 * (never uphill in -ln L, unlike a bare root-finder's step). */
static void
pit_direction(const struct pit_state *s, double d[2])
{
	const double (*J)[2] = s->ev.J;
	const double *F = s->ev.F;
	double det = J[0][0] * J[1][1] - J[0][1] * J[1][0];
	int i;

	if (pit_negdef(J)) {
		d[0] = -(J[1][1] * F[0] - J[0][1] * F[1]) / det;
		d[1] = -(J[0][0] * F[1] - J[1][0] * F[0]) / det;
	} else {
		for (i = 0; i < 2; i++)
			d[i] = F[i] / fmax(fabs(J[i][i]), 1e-8);
	}
	if (s->alpha == 0 && d[1] < 0) {	/* slide along alpha = 0 */
		d[1] = 0;
		d[0] = J[0][0] < 0 ? -F[0] / J[0][0] :
		    F[0] / fmax(fabs(J[0][0]), 1e-8);
	}
}

/* Largest step <= 1 along d that stays in the parameter space: alpha
 * may land on 0 exactly (the boundary is feasible), the open edges
 * (alpha = 1, theta = -alpha) are kept at a distance. */
static double
pit_maxstep(const struct pit_state *s, const double d[2])
{
	double t = 1, v;

	if (d[1] < 0 && s->alpha + d[1] < 0)
		t = s->alpha / -d[1];
	if (d[1] > 0 && s->alpha + d[1] >= 1)
		t = fmin(t, 0.9 * (1 - s->alpha) / d[1]);
	v = d[0] + d[1];
	if (v < 0 && s->theta + s->alpha + v <= 0)
		t = fmin(t, 0.9 * (s->theta + s->alpha) / -v);
	return t;
}

/* Evaluate everything at (theta, alpha) into s. */
static int
pit_visit(const struct deid_hist *h, pit_evalfn fn, double theta,
    double alpha, struct pit_state *s)
{
	struct pit_eval ev;
	double ll, noise;

	if (!pit_domain(theta, alpha) || fn(h, theta, alpha, &ev) != DEID_OK ||
	    pit_loglik(h, theta, alpha, &ll, &noise) != DEID_OK)
		return DEID_ENOCONV;
	s->theta = theta;
	s->alpha = alpha;
	s->ev = ev;
	s->ll = ll;
	s->noise = noise;
	return DEID_OK;
}

/* One damped step: backtrack until ln L rises (Armijo), or, once the
 * change is within rounding, until |F| does not grow. */
static int
pit_step(const struct deid_hist *h, pit_evalfn fn, struct pit_state *s)
{
	struct pit_state n = *s;
	double d[2], t, slope, th, al;
	int k;

	pit_direction(s, d);
	t = pit_maxstep(s, d);
	slope = s->ev.F[0] * d[0] + s->ev.F[1] * d[1];
	for (k = 0; k < PIT_MAXHALF && t > 0; k++, t /= 2) {
		th = s->theta + t * d[0];
		al = t * d[1] == -s->alpha ? 0 : fmax(s->alpha + t * d[1], 0);
		if (pit_visit(h, fn, th, al, &n) != DEID_OK)
			continue;
		if (n.ll >= s->ll + 1e-4 * t * slope ||
		    (fabs(n.ll - s->ll) <= s->noise + n.noise &&
		    fabs(n.ev.F[0]) + fabs(n.ev.F[1]) <=
		    fabs(s->ev.F[0]) + fabs(s->ev.F[1]))) {
			n.iterations = s->iterations + 1;
			*s = n;
			return DEID_OK;
		}
	}
	return DEID_ENOCONV;
}

/* Newton ascent from one start; DEID_OK at a local maximum. */
static int
pit_newton(const struct deid_hist *h, pit_evalfn fn, double theta0,
    double alpha0, struct pit_state *s)
{
	unsigned it, polish = 0;

	if (pit_visit(h, fn, theta0, alpha0, s) != DEID_OK)
		return DEID_ENOCONV;
	for (it = 0; it < PIT_MAXIT; it++) {
		if (pit_converged(&s->ev) && (polish++ == PIT_POLISH ||
		    !pit_negdef(s->ev.J)))
			break;
		if (pit_step(h, fn, s) != DEID_OK)
			break;
	}
	if (!pit_converged(&s->ev) || !pit_negdef(s->ev.J) || s->alpha == 0)
		return DEID_ENOCONV;
	return DEID_OK;
}

/* Moment estimates (docs/deid.md), clamped to theta >= 0 as the paper says;
 * pit_clamp_start pulls alpha into the parameter space later. */
void
deid_pitman_start(const struct deid_hist *h, double *theta0, double *alpha0)
{
	double n = (double)h->n, u = (double)h->u, c1 = (double)h->c1;
	double c2 = h->c2 > 0 ? (double)h->c2 : 1, C, t;

	C = c1 * (c1 - 1) / c2;
	t = (n * u * C - c1 * (n - 1) * (2 * u + C)) /
	    (2 * c1 * u + c1 * C - n * C);
	if (t < 0)
		t = 0;		/* "keep theta >= 0" */
	*theta0 = t;
	*alpha0 = (t * (c1 - n) + (n - 1) * c1) / (n * u);
}

/* Pull a start point into the open parameter space. */
static void
pit_clamp_start(double *theta, double *alpha)
{
	if (!isfinite(*alpha) || *alpha < 0)
		*alpha = 0;
	if (*alpha > 0.99)
		*alpha = 0.99;
	if (!isfinite(*theta) || *theta + *alpha <= 0)
		*theta = 1e-3 + fmax(0, -*alpha);
}

/* Moment start, then ARX's grid {0,.33,.66,.99}^2; the first local
 * maximum that beats the boundary's likelihood wins. */
static int
pit_solve(const struct deid_hist *h, pit_evalfn fn, double ll_boundary,
    struct pit_state *best, unsigned *iterations)
{
	static const double grid[] = { 0, 0.33, 0.66, 0.99 };
	struct pit_state s;
	double th, al;
	int g;

	for (g = -1; g < 16; g++) {
		if (g < 0)
			deid_pitman_start(h, &th, &al);
		else {
			th = grid[g / 4];
			al = grid[g % 4];
			if (th + al <= 0)
				continue;
		}
		pit_clamp_start(&th, &al);
		memset(&s, 0, sizeof(s));
		if (pit_newton(h, fn, th, al, &s) == DEID_OK &&
		    s.ll >= ll_boundary - s.noise) {
			*iterations += s.iterations;
			*best = s;
			return DEID_OK;
		}
		*iterations += s.iterations;
	}
	return DEID_ENOCONV;
}

/* The fallback solver alone, so the tests can exercise that path. */
int
deid_pitman_solve_sums(const struct deid_hist *h, double *theta,
    double *alpha, unsigned *iterations)
{
	struct pit_state s;

	*iterations = 0;
	*theta = *alpha = NAN;
	if (h->u < 2 || h->u == h->n)
		return DEID_EUNAVAILABLE;
	if (pit_solve(h, eval_sums, -INFINITY, &s, iterations) != DEID_OK)
		return DEID_ENOCONV;
	*theta = s.theta;
	*alpha = s.alpha;
	return DEID_OK;
}

/* ---- the alpha = 0 (Ewens) boundary ---- */

/*
 * theta_E solves sum_{i<n} theta/(theta+i) = u-1, whose left side rises
 * monotonically from 0 to n-1: safeguarded Newton inside the bracket
 * [(u-1)/H_{n-1}, (u-1)(n-1)/(n-u)] (each term lies between
 * theta/(theta+n-1) and theta/i).
 */
static int
pit_ewens_theta(const struct deid_hist *h, double *theta, unsigned *its)
{
	double m = (double)(h->n - 1), target = (double)(h->u - 1);
	double lo, hi, t, phi, nt;
	struct isums s;
	unsigned it;

	isums(0, m, &s);
	lo = target / s.t0;
	hi = target * m / (m - target);
	t = lo;
	for (it = 0; it < EWENS_MAXIT; it++) {
		isums(t, m, &s);
		phi = t * s.t0 - target;
		if (fabs(phi) <= 4 * DBL_EPSILON * target)
			break;
		if (phi < 0)
			lo = t;
		else
			hi = t;
		nt = t - phi / s.q2;
		if (!(nt > lo && nt < hi))
			nt = 0.5 * (lo + hi);
		if (nt == t || hi - lo <= 4 * DBL_EPSILON * hi)
			break;
		t = nt;
	}
	*its += it;
	*theta = t;
	return isfinite(t) && t > 0 ? DEID_OK : DEID_ENOCONV;
}

/* ---- PU and the estimate ---- */

/* Gamma(theta+1)/Gamma(theta+alpha) N^alpha via a cancellation-free
 * lnGamma difference (theta can be large). */
double
deid_pitman_pu(double theta, double alpha, double N)
{
	double l;

	if (!pit_domain(theta, alpha) || !(N > 0))
		return NAN;
	l = deid_lngamma_diff(theta + alpha, 1 - alpha);
	if (isnan(l))
		return NAN;
	return exp(l + alpha * log(N));
}

/* Interior MLE: closed forms, verified by the sums; else the sums. */
static int
pit_interior(const struct deid_hist *h, double ll_boundary,
    struct deid_estimate *e)
{
	struct pit_state s;
	struct pit_eval ev;

	if (pit_solve(h, eval_closed, ll_boundary, &s, &e->iterations) ==
	    DEID_OK && eval_sums(h, s.theta, s.alpha, &ev) == DEID_OK &&
	    pit_converged(&ev))
		e->path = DEID_PATH_CLOSED;
	else if (pit_solve(h, eval_sums, ll_boundary, &s, &e->iterations) ==
	    DEID_OK)
		e->path = DEID_PATH_SUMS;
	else
		return deid_estimate_fail(e, DEID_ENOCONV,
		    "Pitman: no likelihood maximum found from %d starts "
		    "(%u Newton steps)", 16, e->iterations);
	e->theta = s.theta;
	e->alpha = s.alpha;
	return DEID_OK;
}

/* Boundary first (cheap, 1-D): if the likelihood falls as alpha leaves
 * 0, alpha-hat = 0 and PU = theta_E; otherwise the maximum is inside. */
int
deid_pitman_estimate(const struct deid_hist *h, double N,
    struct deid_estimate *e)
{
	struct pit_eval ev;
	double theta_e, ll_b, noise;

	deid_estimate_begin(e, DEID_MODEL_PITMAN);
	if (deid_estimate_check(h, N, e) != DEID_OK)
		return e->status;
	if (deid_estimate_no_uniques(h, e))
		return DEID_OK;
	if (h->u < 2 || h->u == h->n)
		return deid_estimate_fail(e, DEID_EUNAVAILABLE,
		    "Pitman: no MLE when %s", h->u < 2 ?
		    "there is at most one class" : "every record is unique");
	if (pit_ewens_theta(h, &theta_e, &e->iterations) != DEID_OK ||
	    eval_closed(h, theta_e, 0, &ev) != DEID_OK ||
	    pit_loglik(h, theta_e, 0, &ll_b, &noise) != DEID_OK)
		return deid_estimate_fail(e, DEID_ENOCONV,
		    "Pitman: Ewens boundary (alpha = 0) not solvable");
	if (ev.F[1] <= 0) {		/* d lnL/d alpha <= 0 at alpha = 0 */
		e->path = DEID_PATH_BOUNDARY;
		e->theta = theta_e;
		e->alpha = 0;
		e->pu = theta_e;
	} else {
		if (pit_interior(h, ll_b, e) != DEID_OK)
			return e->status;
		e->pu = deid_pitman_pu(e->theta, e->alpha, N);
	}
	if (!isfinite(e->pu) || e->pu < 0 || e->pu > N)
		return deid_estimate_fail(e, DEID_ENOSOLUTION,
		    "Pitman: PU %g outside [0, N] (theta %g, alpha %g)",
		    e->pu, e->theta, e->alpha);
	e->fraction = e->pu / N;
	return DEID_OK;
}
