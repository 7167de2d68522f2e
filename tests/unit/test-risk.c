/*
 * tests/unit/test-risk.c — population-uniqueness models (docs/deid.md):
 * histogram, closed forms against explicit sums, the published golden
 * values (Pitman, ADULT, Zayatz, Shlosser, SNB), the Dankar rule, the
 * failure contract, and a simulation against known Pitman populations.
 * Every random case comes from a fixed-seed generator.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_randist.h>

#include "deid/error.h"
#include "deid/risk.h"
#include "tests/tap.h"

/* ---- helpers ---- */

static uint64_t rng_state;

/* splitmix64: small, fixed-seed, good enough for test cases. */
static uint64_t
rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double
rng_unif(void)
{
	return (double)(rng_next() >> 11) * 0x1.0p-53;
}

static struct deid_hist *
hist_of(const uint64_t (*pairs)[2], size_t npairs)
{
	struct deid_hist *h = deid_hist_alloc(0);
	size_t i;

	if (h == NULL)
		abort();
	for (i = 0; i < npairs; i++)
		if (deid_hist_add(h, pairs[i][0], pairs[i][1]) != DEID_OK)
			abort();
	return h;
}

#define HIST(a)	hist_of((a), sizeof(a) / sizeof((a)[0]))

/* Chinese restaurant with discount al, concentration th: table of
 * each of m customers into tab[], table sizes into sz[]. */
static size_t
crp(double th, double al, size_t m, uint32_t *tab, uint32_t *sz)
{
	size_t i, j, K = 0;
	uint32_t k;

	for (i = 0; i < m; i++) {
		if (i == 0 || rng_unif() * (th + (double)i) < th + K * al) {
			sz[K] = 1;
			tab[i] = (uint32_t)K++;
			continue;
		}
		for (;;) {	/* join k with prob. prop. to sz[k] - al */
			j = (size_t)(rng_unif() * (double)i);
			k = tab[j];
			if (rng_unif() * sz[k] < sz[k] - al)
				break;
		}
		sz[k]++;
		tab[i] = k;
	}
	return K;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A failed estimate must carry NaN, not 0, and say why. */
static int
failed_properly(const struct deid_estimate *e, int status)
{
	return e->status == status && isnan(e->pu) && isnan(e->fraction) &&
	    e->error[0] != '\0';
}

/*
 * ADULT, all 9 columns ungeneralized, as class-size histogram (size,
 * classes).  Made from shared/data/adult/adult.csv with
 *   tail -n +2 adult.csv | tr -d '\r' | sort | uniq -c |
 *     awk '{print $1}' | sort -n | uniq -c
 * (n = 30162, u = 19502, c1 = 15512, c2 = 2098).
 */
static const uint64_t adult_hist[][2] = {
	{ 1, 15512 }, { 2, 2098 }, { 3, 754 }, { 4, 375 }, { 5, 189 },
	{ 6, 155 }, { 7, 97 }, { 8, 73 }, { 9, 39 }, { 10, 37 }, { 11, 29 },
	{ 12, 18 }, { 13, 23 }, { 14, 14 }, { 15, 15 }, { 16, 9 },
	{ 17, 11 }, { 18, 10 }, { 19, 10 }, { 20, 5 }, { 21, 3 }, { 22, 4 },
	{ 23, 3 }, { 24, 2 }, { 25, 1 }, { 26, 3 }, { 27, 5 }, { 29, 1 },
	{ 30, 2 }, { 32, 1 }, { 34, 1 }, { 35, 1 }, { 36, 1 }, { 45, 1 },
};
#define ADULT_N	318.9e6

static const uint64_t golden_hist[][2] = {	/* Pitman's golden values */
	{ 1, 1500 }, { 2, 300 }, { 3, 120 }, { 4, 60 }, { 5, 30 },
	{ 10, 10 }, { 50, 2 },
};
static const uint64_t boundary_hist[][2] = {	/* alpha-hat = 0 */
	{ 1, 10 }, { 2, 500 }, { 3, 200 }, { 5, 50 }, { 10, 5 },
};
static const uint64_t no_uniques_hist[][2] = {	/* c1 = 0, n = 1900 */
	{ 2, 500 }, { 3, 200 }, { 5, 50 }, { 10, 5 },
};
static const uint64_t small_hist[][2] = {	/* Zayatz, Shlosser */
	{ 1, 30 }, { 2, 10 }, { 3, 5 }, { 5, 2 },
};

/* ---- histogram and names ---- */

static void
test_hist(void)
{
	struct deid_hist *h = deid_hist_alloc(1);
	int ok = 1;

	ok &= deid_hist_add(h, 5, 2) == DEID_OK;
	ok &= deid_hist_add(h, 1, 30) == DEID_OK;
	ok &= deid_hist_add(h, 3, 5) == DEID_OK;
	ok &= deid_hist_add(h, 2, 10) == DEID_OK;
	ok &= deid_hist_add(h, 1, 0) == DEID_OK;
	tap_ok(ok && h->nsizes == 4 && h->size[0] == 1 && h->size[1] == 2 &&
	    h->size[2] == 3 && h->size[3] == 5, "hist: sizes kept ascending");
	tap_ok(h->n == 75 && h->u == 47 && h->c1 == 30 && h->c2 == 10,
	    "hist: cached totals n = 75, u = 47, c1 = 30, c2 = 10");
	deid_hist_add(h, 3, 1);
	tap_ok(deid_hist_get(h, 3) == 6 && deid_hist_get(h, 4) == 0 &&
	    h->nsizes == 4 && h->n == 78, "hist: add merges, get finds");
	tap_ok(deid_hist_add(h, 0, 1) == DEID_EINPUT, "hist: size 0 refused");
	tap_ok(deid_hist_add(h, UINT64_MAX / 2, 3) == DEID_ELIMIT &&
	    h->n == 78, "hist: overflowing n refused, totals untouched");
	deid_hist_clear(h);
	tap_ok(h->nsizes == 0 && h->n == 0 && h->u == 0 && h->c1 == 0,
	    "hist: clear");
	deid_hist_free(h);
	deid_hist_free(NULL);
}

static void
test_names(void)
{
	enum deid_model m, all[] = { DEID_MODEL_PITMAN, DEID_MODEL_ZAYATZ,
	    DEID_MODEL_SNB, DEID_MODEL_DANKAR };
	size_t i;
	int ok = 1;

	for (i = 0; i < 4; i++)
		ok &= deid_model_parse(deid_model_name(all[i]), &m) ==
		    DEID_OK && m == all[i];
	tap_ok(ok, "model names round-trip");
	tap_ok(deid_model_parse("Pitman", &m) == DEID_OK &&
	    m == DEID_MODEL_PITMAN && deid_model_parse("arx", &m) ==
	    DEID_EINPUT, "model parse: case-insensitive, unknown refused");
	tap_ok(strcmp(deid_path_name(DEID_PATH_CLOSED), "closed") == 0 &&
	    strcmp(deid_path_name(DEID_PATH_SUMS), "sums") == 0 &&
	    strcmp(deid_path_name(DEID_PATH_BOUNDARY), "boundary") == 0 &&
	    strcmp(deid_path_name((enum deid_path)99), "unknown") == 0,
	    "path names");
}

/* ---- closed forms against explicit sums ---- */

/* Independent reference: every sum of Pitman's equations spelled out in long
 * double, with the magnitudes each difference is measured against. */
struct ref {
	long double	F[2], J[2][2], scale[2], jscale[3];
};

static void
ref_eval(const struct deid_hist *h, double th, double al, struct ref *r)
{
	long double s0 = 0, s1 = 0, d1 = 0, d5 = 0, d3 = 0, hn = 0, d2 = 0;
	long double g = 0, d4 = 0, t;
	uint64_t i, j;
	size_t k;

	for (i = 1; i < h->u; i++) {
		t = 1.0L / (th + (long double)i * al);
		s0 += t, s1 += i * t, d1 += t * t, d5 += i * t * t;
		d3 += (i * t) * (i * t);
	}
	for (i = 1; i < h->n; i++) {
		t = 1.0L / (th + (long double)i);
		hn += t, d2 += t * t;
	}
	for (k = 0; k < h->nsizes; k++)
		for (j = 1; j < h->size[k]; j++) {
			t = 1.0L / ((long double)j - al);
			g += h->count[k] * t, d4 += h->count[k] * t * t;
		}
	r->F[0] = s0 - hn, r->F[1] = s1 - g;
	r->J[0][0] = d2 - d1, r->J[0][1] = r->J[1][0] = -d5;
	r->J[1][1] = -(d3 + d4);
	r->scale[0] = s0 + hn, r->scale[1] = s1 + g;
	r->jscale[0] = d1 + d2, r->jscale[1] = d5, r->jscale[2] = d3 + d4;
}

/* Largest error of (F, J) against the reference, each relative to the
 * magnitude of the sums it is made of. */
static double
ref_err(const struct ref *r, const double F[2], const double J[2][2])
{
	double e = 0;

	e = fmax(e, (double)(fabsl(F[0] - r->F[0]) / r->scale[0]));
	e = fmax(e, (double)(fabsl(F[1] - r->F[1]) / r->scale[1]));
	e = fmax(e, (double)(fabsl(J[0][0] - r->J[0][0]) / r->jscale[0]));
	e = fmax(e, (double)(fabsl(J[0][1] - r->J[0][1]) / r->jscale[1]));
	e = fmax(e, (double)(fabsl(J[1][1] - r->J[1][1]) / r->jscale[2]));
	return e;
}

static struct deid_hist *
random_hist(void)
{
	struct deid_hist *h = deid_hist_alloc(0);
	int d, i;

	do {
		deid_hist_clear(h);
		d = 1 + (int)(rng_next() % 12);
		for (i = 0; i < d; i++)
			deid_hist_add(h, 1 + (uint64_t)exp(rng_unif() *
			    rng_unif() * 6), 1 + (uint64_t)exp(rng_unif() * 8));
	} while (h->u < 2 || h->n <= h->u);
	return h;
}

/* alpha: 0, tiny (theta/alpha >> u) or anything; theta: negative down
 * to -alpha, or log-uniform over 1e-3..1e6. */
static void
random_point(double *th, double *al)
{
	double v = rng_unif();

	*al = v < 0.1 ? 0 : v < 0.4 ? exp(log(1e-9) + rng_unif() *
	    log(1e7)) : 0.999 * rng_unif();
	if (*al > 0 && rng_unif() < 0.15)
		*th = -*al * 0.999 * rng_unif();
	else
		*th = exp(log(1e-3) + rng_unif() * log(1e9));
}

static void
test_closed_vs_sums(void)
{
	double th, al, Fc[2], Jc[2][2], Fs[2], Js[2][2], ec = 0, es = 0;
	double erel = 0, e;
	struct deid_hist *h;
	struct ref r;
	int i, bad = 0, cases = 600;

	rng_state = 20250101;
	for (i = 0; i < cases; i++) {
		h = random_hist();
		random_point(&th, &al);
		if (deid_pitman_equations_closed(h, th, al, Fc, Jc) !=
		    DEID_OK || deid_pitman_equations_sums(h, th, al, Fs,
		    Js) != DEID_OK)
			bad++;
		ref_eval(h, th, al, &r);
		ec = fmax(ec, ref_err(&r, Fc, Jc));
		es = fmax(es, ref_err(&r, Fs, Js));
		e = fabs(Fc[0] - Fs[0]) / fmax(fabs(Fs[0]), 1e-300);
		if (fabs(Fs[0]) > 1e-3 * (double)r.scale[0])
			erel = fmax(erel, e);
		deid_hist_free(h);
	}
	tap_ok(bad == 0, "closed/sums: %d random cases evaluate", cases);
	tap_diag("max error, relative to the sums' magnitude: closed %.3g, "
	    "sums %.3g; plain relative F1 (|F1| > 1e-3 scale) %.3g", ec, es,
	    erel);
	tap_ok(ec <= 1e-10, "closed forms (F, J) = explicit sums to 1e-10");
	tap_ok(es <= 1e-10, "explicit sums (F, J) = long-double ref to 1e-10");
	tap_ok(erel <= 1e-10, "closed F1 = sums F1 to 1e-10 plain relative");
}

/* ---- Pitman ---- */

static void
test_adult(void)
{
	struct deid_hist *h = HIST(adult_hist);
	struct deid_estimate e;
	double th0, al0, t0;
	int i, reps = 200;

	tap_ok(h->n == 30162 && h->u == 19502 && h->c1 == 15512 &&
	    h->c2 == 2098, "ADULT histogram: n, u, c1, c2");
	deid_pitman_start(h, &th0, &al0);
	tap_close(th0, 4134.3146, 1e-7, "ADULT start theta0 = 4134.3146");
	tap_close(al0, 0.6924113, 1e-6, "ADULT start alpha0 = 0.6924113");
	deid_pitman_estimate(h, ADULT_N, &e);
	tap_ok(e.status == DEID_OK && e.path == DEID_PATH_CLOSED,
	    "ADULT Pitman: ok by closed forms (path %s)",
	    deid_path_name(e.path));
	tap_close(e.theta, 3176.23352, 1e-6, "ADULT theta = 3176.23352");
	tap_close(e.alpha, 0.717948948, 1e-6, "ADULT alpha = 0.717948948");
	tap_close(e.pu, 12385733.9, 1e-8, "ADULT PU = 12,385,733.9");
	tap_close(e.fraction, 0.0388389, 1e-6, "ADULT fraction = 0.0388389");
	t0 = now();
	for (i = 0; i < reps; i++)
		deid_pitman_estimate(h, ADULT_N, &e);
	tap_diag("ADULT Pitman: %u solver iterations (Ewens + Newton), "
	    "%.1f us per estimate", e.iterations, (now() - t0) / reps * 1e6);
	deid_hist_free(h);
}

static void
test_pitman_golden(void)
{
	struct deid_hist *h = HIST(golden_hist);
	struct deid_estimate e;
	double th, al;
	unsigned its;
	int rc;

	tap_ok(h->n == 3050 && h->u == 2022, "golden: n = 3050, u = 2022");
	deid_pitman_estimate(h, 1e5, &e);
	tap_ok(e.status == DEID_OK && e.path == DEID_PATH_CLOSED,
	    "golden: Pitman ok, path closed");
	tap_close(e.theta, 1011.7667824288766, 1e-10, "golden theta");
	tap_close(e.alpha, 0.494181797185725, 1e-10, "golden alpha");
	tap_close(e.pu, 9794.6068873, 1e-10, "golden PU(N = 1e5)");
	deid_pitman_estimate(h, 1e6, &e);
	tap_close(e.pu, 30561.0877018, 1e-10, "golden PU(N = 1e6)");
	tap_close(deid_pitman_pu(e.theta, e.alpha, 1e6), e.pu, 1e-15,
	    "deid_pitman_pu agrees with the estimate");
	rc = deid_pitman_solve_sums(h, &th, &al, &its);
	tap_ok(rc == DEID_OK, "golden: explicit-sum solver converges "
	    "(%u steps)", its);
	tap_close(th, 1011.7667824288766, 1e-10, "golden theta by sums");
	tap_close(al, 0.494181797185725, 1e-10, "golden alpha by sums");
	deid_hist_free(h);
}

static void
test_pitman_boundary(void)
{
	struct deid_hist *h = HIST(boundary_hist);
	struct deid_estimate e;

	deid_pitman_estimate(h, 1e6, &e);
	tap_ok(e.status == DEID_OK && e.path == DEID_PATH_BOUNDARY &&
	    e.alpha == 0, "boundary: alpha-hat = 0, path boundary");
	/* sum_{i<n} theta/(theta+i) = u by bisection with fsum in Python */
	tap_close(e.theta, 472.6917093631477, 1e-12, "boundary theta_E");
	tap_close(e.pu, e.theta, 1e-15, "boundary: Pitman PU = theta_E");
	deid_hist_free(h);
}

/* No sample unique, no population unique: every model says exactly 0,
 * at a small sampling fraction, a large one, a census and on nothing. */
static void
test_no_uniques(void)
{
	static const double pops[] = { 1e6, 2500, 1900 };
	struct deid_hist *h = HIST(no_uniques_hist), *empty;
	struct deid_estimate e;
	enum deid_model m;
	size_t i;
	int ok;

	empty = deid_hist_alloc(0);
	for (m = DEID_MODEL_PITMAN; m <= DEID_MODEL_DANKAR; m++) {
		for (i = 0, ok = 1; i < sizeof(pops) / sizeof(pops[0]); i++) {
			deid_model_estimate(m, h, pops[i], &e);
			ok &= e.status == DEID_OK && e.pu == 0 &&
			    e.fraction == 0 && e.path == DEID_PATH_TRIVIAL;
		}
		deid_model_estimate(m, empty, 1e6, &e);
		ok &= e.status == DEID_OK && e.pu == 0 && e.fraction == 0;
		tap_ok(ok, "c1 = 0: %s PU exactly 0 at N = 1e6, 2500, n and on "
		    "an empty table", deid_model_name(m));
	}
	deid_hist_free(empty);
	deid_hist_free(h);
}

static void
test_pitman_unavailable(void)
{
	static const uint64_t unique[][2] = { { 1, 500 } };
	static const uint64_t one[][2] = { { 1, 1 } };
	static const uint64_t one_big[][2] = { { 40, 1 } };
	struct deid_hist *h = HIST(unique), *g = HIST(one);
	struct deid_estimate e;

	deid_pitman_estimate(h, 1e6, &e);
	tap_ok(failed_properly(&e, DEID_EUNAVAILABLE),
	    "u = n: Pitman unavailable, PU NaN (%s)", e.error);
	deid_pitman_estimate(g, 1e6, &e);
	tap_ok(failed_properly(&e, DEID_EUNAVAILABLE),
	    "u = 1, a unique: Pitman unavailable, PU NaN (%s)", e.error);
	deid_hist_free(g);
	g = HIST(one_big);
	deid_pitman_estimate(g, 1e6, &e);
	tap_ok(e.status == DEID_OK && e.pu == 0,
	    "u = 1 of 40 records: no unique, Pitman PU 0 without solving");
	deid_hist_free(h);
	deid_hist_free(g);
}

/* Log-likelihood straight from its definition (test reference). */
static double
ref_loglik(const struct deid_hist *h, double th, double al)
{
	long double l = 0;
	uint64_t i, j;
	size_t k;

	for (i = 1; i < h->u; i++)
		l += logl(th + (long double)i * al);
	for (i = 1; i < h->n; i++)
		l -= logl(th + (long double)i);
	for (k = 0; k < h->nsizes; k++)
		for (j = 1; j < h->size[k]; j++)
			l += h->count[k] * logl((long double)j - al);
	return (double)l;
}

/* "Maximise, don't just root-find": on small Pitman samples (random
 * theta, alpha; some fall on the alpha = 0 boundary) the answer must
 * beat a 30 x 30 grid over the parameter space. */
static void
test_pitman_maximum(void)
{
	uint32_t tab[600], sz[600];
	struct deid_estimate e;
	struct deid_hist *h = deid_hist_alloc(0);
	double best, l, th, al;
	int c, i, j, bad = 0, nb = 0, ni = 0, cases = 20;
	size_t K, k;

	rng_state = 7;
	for (c = 0; c < cases; c++) {
		deid_hist_clear(h);
		K = crp(1 + 100 * rng_unif(), c % 4 == 0 ? 0 : rng_unif() *
		    0.9, 200 + rng_next() % 400, tab, sz);
		for (k = 0; k < K; k++)
			deid_hist_add(h, sz[k], 1);
		if (deid_pitman_estimate(h, 1e9, &e) != DEID_OK) {
			bad++;
			continue;
		}
		nb += e.path == DEID_PATH_BOUNDARY;
		ni += e.path == DEID_PATH_CLOSED;
		best = ref_loglik(h, e.theta, e.alpha);
		for (i = 0; i < 30; i++)
			for (j = 0; j < 30; j++) {
				th = e.theta * exp(-4 + 8 * i / 29.0);
				al = 0.99 * j / 29.0;
				l = ref_loglik(h, th, al);
				if (l > best + 1e-9 * fabs(best))
					bad++;
			}
	}
	deid_hist_free(h);
	tap_ok(bad == 0 && nb > 0 && ni > 0,
	    "Pitman MLE beats a 30x30 grid on %d Pitman samples "
	    "(%d interior, %d boundary)", cases, ni, nb);
}

/* ---- Zayatz ---- */

static void
test_zayatz(void)
{
	struct deid_hist *h = HIST(small_hist);
	struct deid_estimate e;
	double emax = 0, hk, want;
	unsigned Ni, k, n, i;

	deid_zayatz_estimate(h, 1000, &e);
	tap_ok(e.status == DEID_OK, "Zayatz ok");
	tap_close(e.pu, 174.61065338027305, 1e-12, "Zayatz golden PU");
	rng_state = 99;
	for (i = 0; i < 500; i++) {
		Ni = 2 + (unsigned)(rng_next() % 3000);
		n = 1 + (unsigned)(rng_next() % Ni);
		k = 1 + (unsigned)(rng_next() % n);
		want = gsl_ran_hypergeometric_pdf(1, k, Ni - k, n);
		hk = deid_zayatz_h(Ni, k, n);
		if (want > 1e-280)
			emax = fmax(emax, fabs(hk - want) / want);
		else if (hk > 1e-270)
			emax = 1;
	}
	tap_ok(emax <= 1e-11, "h_k = hypergeometric pmf (GSL), 500 cases, "
	    "max rel %.3g", emax);
	tap_ok(deid_zayatz_h(100, 60, 50) == 0,
	    "h_k = 0 when fewer than k-1 units are unsampled");
	deid_hist_free(h);
}

/* h_k = (k n/N) prod_{j<k-1} (N-n-j)/(N-1-j), spelled out. */
static long double
zayatz_h_product(double N, uint64_t k, uint64_t n)
{
	long double p = (long double)k * n / N;
	uint64_t j;

	for (j = 0; j + 2 <= k; j++)
		p *= (N - n - j) / (N - 1 - j);
	return p;
}

/* Zayatz at ADULT's population size, where ARX's 32-bit clamps bite. */
static void
test_zayatz_large(void)
{
	struct deid_hist *a = HIST(adult_hist);
	struct deid_estimate e;
	long double p, den = 0;
	double emax = 0;
	uint64_t k;
	size_t s;

	for (k = 1; k <= 2000; k += 1 + k / 3) {
		p = zayatz_h_product(ADULT_N, k, 30162);
		emax = fmax(emax, fabs(deid_zayatz_h(ADULT_N, k, 30162) -
		    (double)p) / (double)p);
	}
	tap_ok(emax <= 1e-11, "h_k at N = 318.9e6 = explicit product, "
	    "max rel %.3g", emax);
	for (s = 0; s < a->nsizes; s++)
		den += a->count[s] * zayatz_h_product(ADULT_N, a->size[s],
		    a->n);
	deid_zayatz_estimate(a, ADULT_N, &e);
	tap_close(e.pu, (double)(15512.0L * 15512 / den), 1e-12,
	    "Zayatz ADULT = explicit-product formula");
	deid_hist_free(a);
}

/* ---- Shlosser and SNB ---- */

static void
test_shlosser(void)
{
	struct deid_hist *h = HIST(small_hist);
	double A, B, C, D, K;

	K = deid_shlosser_k(h, 0.075, &A, &B, &C, &D);
	tap_close(A, 0.4190406521498194, 1e-12, "Shlosser A");
	tap_close(B, 4.961654603505888, 1e-12, "Shlosser B");
	tap_close(C, 41.61788978515625, 1e-12, "Shlosser C");
	tap_close(D, 5.14914873046875, 1e-12, "Shlosser D");
	tap_close(K, 212.51605327724556, 1e-12, "Shlosser K-hat");
	deid_hist_free(h);
}

static void
test_snb(void)
{
	static const uint64_t census[][2] = { { 1, 7 }, { 3, 2 } };
	struct deid_hist *h = HIST(small_hist), *c = HIST(census);
	struct deid_estimate e;
	double K = deid_shlosser_k(h, 0.075, NULL, NULL, NULL, NULL);

	deid_snb_solve(10000, 0.2, 2702.3656053101577, 513.5177065646199, &e);
	tap_ok(e.status == DEID_OK, "SNB round trip 1 solves");
	tap_close(e.snb_alpha, 0.5, 1e-9, "SNB round trip 1: alpha = 0.5");
	tap_close(e.snb_beta, 0.3, 1e-9, "SNB round trip 1: beta = 0.3");
	tap_close(e.pu, 5477.2255750, 1e-10, "SNB round trip 1: PU");
	deid_snb_solve(K, 0.075, 30, 10, &e);
	tap_ok(e.status == DEID_OK, "SNB from data solves");
	tap_close(e.snb_alpha, 0.137744796, 5e-9, "SNB from data: alpha");
	tap_close(e.snb_beta, 0.0131169246, 5e-9, "SNB from data: beta");
	tap_close(e.pu, 116.98573, 5e-8, "SNB from data: PU");
	/* the same to 30 digits (mpmath root of the Pitman equations) */
	tap_close(e.snb_alpha, 0.13774479617663333, 1e-10,
	    "SNB from data: alpha, 10 digits");
	tap_close(e.pu, 116.98573207855758, 1e-10,
	    "SNB from data: PU, 10 digits");
	deid_snb_solve(60, 0.075, 30, 10, &e);
	tap_ok(failed_properly(&e, DEID_ENOSOLUTION),
	    "SNB K = 60: no solution, PU NaN (%s)", e.error);
	deid_snb_estimate(h, 1000, &e);
	tap_close(e.pu, 116.98573207855758, 1e-10,
	    "SNB estimate on the histogram (N = 1000)");
	deid_snb_estimate(c, 13, &e);
	tap_ok(e.status == DEID_OK && e.pu == 7 && e.path ==
	    DEID_PATH_TRIVIAL, "SNB f = 1: PU = c1");
	deid_hist_free(h);
	deid_hist_free(c);
}

/* ---- Dankar ---- */

static void
test_dankar(void)
{
	static const uint64_t unique[][2] = { { 1, 1000 } };
	static const uint64_t noc2[][2] = { { 1, 30 }, { 3, 5 } };
	struct deid_hist *a = HIST(adult_hist), *u = HIST(unique);
	struct deid_hist *q = HIST(noc2);
	struct deid_estimate e, p, z;
	enum deid_model m;

	deid_dankar_estimate(a, ADULT_N, &e);
	deid_pitman_estimate(a, ADULT_N, &p);
	tap_ok(e.status == DEID_OK && e.model == DEID_MODEL_PITMAN &&
	    e.pu == p.pu, "Dankar f <= 0.1: Pitman");
	deid_dankar_estimate(u, 1e6, &e);
	deid_zayatz_estimate(u, 1e6, &z);
	tap_ok(e.status == DEID_OK && e.model == DEID_MODEL_ZAYATZ &&
	    e.pu == z.pu && strstr(e.note, "Pitman") != NULL,
	    "Dankar: Pitman unavailable -> Zayatz, noted (%s)", e.note);
	deid_dankar_estimate(q, 200, &e);
	deid_zayatz_estimate(q, 200, &z);
	tap_ok(e.status == DEID_OK && e.model == DEID_MODEL_ZAYATZ &&
	    e.pu == z.pu && e.note[0] != '\0',
	    "Dankar f > 0.1, SNB invalid (c2 = 0): Zayatz");
	tap_ok(deid_model_parse("dankar", &m) == DEID_OK &&
	    deid_model_estimate(m, a, ADULT_N, &e) == DEID_OK &&
	    e.pu == p.pu, "deid_model_estimate dispatches by name");
	deid_hist_free(a);
	deid_hist_free(u);
	deid_hist_free(q);
}

/* f > 0.1 on histograms and sampling fractions where either model
 * may be the smaller: Dankar must take min(Zayatz, SNB). */
static void
test_dankar_min(void)
{
	static const uint64_t big[][4][2] = {
		{ { 1, 30 }, { 2, 10 }, { 3, 5 }, { 5, 2 } },
		{ { 1, 300 }, { 2, 40 }, { 3, 10 }, { 8, 5 } },
		{ { 1, 50 }, { 2, 30 }, { 3, 20 }, { 4, 10 } },
		{ { 1, 400 }, { 2, 3 }, { 3, 1 }, { 4, 1 } },
	};
	static const double mult[] = { 1.05, 1.5, 3, 9.9 };
	struct deid_estimate e, z, s;
	struct deid_hist *h;
	int i, j, ok = 1, nsnb = 0;
	double N;

	for (i = 0; i < 4; i++) {
		h = hist_of(big[i], 4);
		for (j = 0; j < 4; j++) {
			N = floor((double)h->n * mult[j]);
			deid_dankar_estimate(h, N, &e);
			deid_zayatz_estimate(h, N, &z);
			deid_snb_estimate(h, N, &s);
			if (s.status == DEID_OK && s.pu < z.pu) {
				nsnb++;
				ok &= e.model == DEID_MODEL_SNB && e.pu == s.pu;
			} else
				ok &= e.model == DEID_MODEL_ZAYATZ &&
				    e.pu == z.pu;
			ok &= e.status == DEID_OK;
		}
		deid_hist_free(h);
	}
	tap_ok(ok && nsnb > 0 && nsnb < 16,
	    "Dankar f > 0.1: min(Zayatz, SNB) in 16 cases (SNB in %d)", nsnb);
}

/* ---- the failure contract ---- */

static void
test_failures(void)
{
	struct deid_hist *h = HIST(small_hist);
	struct deid_estimate e;
	enum deid_model m;
	int ok = 1;

	for (m = DEID_MODEL_PITMAN; m <= DEID_MODEL_DANKAR; m++) {
		deid_model_estimate(m, h, 10, &e);	/* N < n */
		ok &= failed_properly(&e, DEID_EINPUT);
		deid_model_estimate(m, h, NAN, &e);
		ok &= failed_properly(&e, DEID_EINPUT);
	}
	tap_ok(ok, "every model: N < n or N = NaN -> EINPUT, PU NaN");
	deid_model_estimate((enum deid_model)42, h, 1000, &e);
	tap_ok(failed_properly(&e, DEID_EINPUT), "unknown model refused");
	tap_ok(isnan(deid_pitman_pu(1, 1.5, 100)) &&
	    isnan(deid_zayatz_h(10, 3, 20)) &&
	    deid_pitman_equations_closed(h, -1, 0.5, NULL, NULL) ==
	    DEID_EINPUT, "helpers refuse points outside their domain");
	deid_hist_free(h);
}

static void
test_lngamma_diff(void)
{
	double a = 1e8, v;

	v = deid_lngamma_diff(a, 3);
	tap_close(v, log(a * (a + 1) * (a + 2)), 1e-14,
	    "lnGamma(a+3) - lnGamma(a) at a = 1e8");
	tap_close(deid_lngamma_diff(3176.9, 0.28), lgamma(3177.18) -
	    lgamma(3176.9), 1e-9, "lnGamma difference at theta-size a");
	tap_close(deid_lngamma_diff(0.5, 3), log(0.5 * 1.5 * 2.5), 1e-14,
	    "lnGamma difference at small a (GSL lnpoch)");
}

/* ---- simulation: known Pitman populations ---- */

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* One replicate: population of N, sample n without replacement
 * (partial Fisher-Yates), relative error of Pitman's PU. */
static double
sim_once(double th, double al, size_t N, size_t n, uint32_t *tab,
    uint32_t *sz, uint32_t *idx, uint32_t *cnt)
{
	struct deid_hist *h = deid_hist_alloc(64);
	struct deid_estimate e;
	size_t K, i, j, truth = 0;
	uint32_t t;

	K = crp(th, al, N, tab, sz);
	for (i = 0; i < K; i++)
		truth += sz[i] == 1;
	for (i = 0; i < N; i++)
		idx[i] = (uint32_t)i;
	memset(cnt, 0, K * sizeof(*cnt));
	for (i = 0; i < n; i++) {
		j = i + (size_t)(rng_unif() * (double)(N - i));
		t = idx[i], idx[i] = idx[j], idx[j] = t;
		cnt[tab[idx[i]]]++;
	}
	for (i = 0; i < K; i++)
		if (cnt[i] > 0)
			deid_hist_add(h, cnt[i], 1);
	deid_pitman_estimate(h, (double)N, &e);
	deid_hist_free(h);
	return e.status == DEID_OK ? e.pu / (double)truth - 1 : NAN;
}

static void
test_simulation(void)
{
	enum { REPS = 21 };
	static const double par[][2] = { { 1000, 0.5 }, { 200, 0.7 } };
	size_t N = 1000000, n = 20000;
	uint32_t *tab = malloc(N * 4), *sz = malloc(N * 4);
	uint32_t *idx = malloc(N * 4), *cnt = malloc(N * 4);
	double err[REPS];
	int p, r, nan;

	if (tab == NULL || sz == NULL || idx == NULL || cnt == NULL)
		abort();
	rng_state = 424242;
	for (p = 0; p < 2; p++) {
		for (r = nan = 0; r < REPS; r++) {
			err[r] = sim_once(par[p][0], par[p][1], N, n, tab, sz,
			    idx, cnt);
			nan += isnan(err[r]);
		}
		qsort(err, REPS, sizeof(err[0]), cmp_double);
		tap_diag("Pitman(%g, %g), N = %zu, n = %zu: median rel error "
		    "%.4f, IQR %.4f", par[p][0], par[p][1], N, n,
		    err[REPS / 2], err[3 * REPS / 4] - err[REPS / 4]);
		tap_ok(nan == 0 && fabs(err[REPS / 2]) <= 0.05 &&
		    err[3 * REPS / 4] - err[REPS / 4] <= 0.15,
		    "simulation Pitman(%g, %g): |median| <= 5%%, IQR <= 15%%",
		    par[p][0], par[p][1]);
	}
	free(tab);
	free(sz);
	free(idx);
	free(cnt);
}

int
main(void)
{
	deid_risk_init();
	test_hist();
	test_names();
	test_closed_vs_sums();
	test_adult();
	test_pitman_golden();
	test_pitman_boundary();
	test_no_uniques();
	test_pitman_unavailable();
	test_pitman_maximum();
	test_zayatz();
	test_zayatz_large();
	test_shlosser();
	test_snb();
	test_dankar();
	test_dankar_min();
	test_failures();
	test_lngamma_diff();
	test_simulation();
	return tap_done();
}
