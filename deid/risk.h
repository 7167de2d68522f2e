/*
 * deid/risk.h — population-uniqueness risk models (docs/deid.md).
 *
 * Every model works on the histogram of equivalence-class sizes only
 * (c_k = number of classes of size k), so a solver step costs
 * O(distinct sizes), never O(records).  Library code: no logging, no
 * exits, GSL's error handler must be off (deid_risk_init()).
 */
#ifndef DEID_RISK_H
#define DEID_RISK_H

#include <stddef.h>
#include <stdint.h>

/* Histogram of class sizes: nsizes entries, size[] strictly ascending,
 * count[i] > 0 classes of size size[i].  Totals are cached. */
struct deid_hist {
	size_t		 nsizes;
	size_t		 cap;
	uint64_t	*size;
	uint64_t	*count;
	uint64_t	 n;	/* records  = sum size*count */
	uint64_t	 u;	/* classes  = sum count */
	uint64_t	 c1;	/* sample uniques */
	uint64_t	 c2;
};

struct deid_hist	*deid_hist_alloc(size_t cap);
void			 deid_hist_free(struct deid_hist *h);
void			 deid_hist_clear(struct deid_hist *h);
/* Add count classes of the given size; sizes may come in any order. */
int			 deid_hist_add(struct deid_hist *h, uint64_t size,
			    uint64_t count);
uint64_t		 deid_hist_get(const struct deid_hist *h, uint64_t size);

/* Which way a model got its answer. */
enum deid_path {
	DEID_PATH_NONE = 0,
	DEID_PATH_CLOSED,	/* Pitman: closed forms, verified by sums */
	DEID_PATH_SUMS,		/* Pitman: explicit-sum fallback solver */
	DEID_PATH_BOUNDARY,	/* Pitman: alpha = 0 (Ewens) MLE */
	DEID_PATH_TRIVIAL,	/* c1 = 0, or f = 1: answer without solving */
	DEID_PATH_DIRECT	/* closed formula (Zayatz, SNB) */
};
const char	*deid_path_name(enum deid_path p);

enum deid_model {
	DEID_MODEL_PITMAN = 0,
	DEID_MODEL_ZAYATZ,
	DEID_MODEL_SNB,
	DEID_MODEL_DANKAR
};
const char	*deid_model_name(enum deid_model m);
int		 deid_model_parse(const char *s, enum deid_model *m);

/* Result of one estimate.  status != DEID_OK means the model failed:
 * pu and fraction are then NaN and error says why (never report 0). */
struct deid_estimate {
	int		 status;
	enum deid_model	 model;	/* for Dankar: the model actually used */
	enum deid_path	 path;
	double		 pu;		/* estimated population uniques */
	double		 fraction;	/* pu / N */
	double		 theta, alpha;	/* Pitman parameters */
	double		 snb_alpha, snb_beta, snb_k;	/* SNB parameters */
	unsigned	 iterations;
	char		 error[160];
	char		 note[160];	/* e.g. Dankar: why Pitman fell back */
};

/* Turn GSL's abort-on-error handler off; call once before any model. */
void	deid_risk_init(void);

/* Population size N >= n.  All return e->status. */
int	deid_pitman_estimate(const struct deid_hist *h, double N,
	    struct deid_estimate *e);
int	deid_zayatz_estimate(const struct deid_hist *h, double N,
	    struct deid_estimate *e);
int	deid_snb_estimate(const struct deid_hist *h, double N,
	    struct deid_estimate *e);
int	deid_dankar_estimate(const struct deid_hist *h, double N,
	    struct deid_estimate *e);
int	deid_model_estimate(enum deid_model m, const struct deid_hist *h,
	    double N, struct deid_estimate *e);

/* ---- lower-level pieces, exported for the unit tests ---- */

/* Pitman likelihood equations at (theta, alpha): closed forms
 * (digamma/trigamma) or explicit sums.  F[2], J[2][2] may be NULL. */
int	deid_pitman_equations_closed(const struct deid_hist *h, double theta,
	    double alpha, double F[2], double J[2][2]);
int	deid_pitman_equations_sums(const struct deid_hist *h, double theta,
	    double alpha, double F[2], double J[2][2]);
/* Moment start point (theta0, alpha0). */
void	deid_pitman_start(const struct deid_hist *h, double *theta0,
	    double *alpha0);
/* The explicit-sum solver alone (the fallback path; O(u + n) a step),
 * from the same starts: interior maximum only, no boundary check. */
int	deid_pitman_solve_sums(const struct deid_hist *h, double *theta,
	    double *alpha, unsigned *iterations);
/* PU = Gamma(theta+1)/Gamma(theta+alpha) * N^alpha, in log space. */
double	deid_pitman_pu(double theta, double alpha, double N);

/* Zayatz h_k = P(X = 1), X ~ Hypergeometric(N, k, n). */
double	deid_zayatz_h(double N, uint64_t k, uint64_t n);

/* Modified Shlosser estimate of non-empty population cells, q = n/N.
 * A, B, C, D may be NULL. */
double	deid_shlosser_k(const struct deid_hist *h, double q, double *A,
	    double *B, double *C, double *D);
/* SNB solve from (K, pi, c1, c2): fills snb_alpha/beta/k and pu. */
int	deid_snb_solve(double K, double pi, double c1, double c2,
	    struct deid_estimate *e);

/* ---- shared by the model files (hist.c, zayatz.c) ---- */

/* Reset *e for model m: status OK, every number NaN, strings empty. */
void	deid_estimate_begin(struct deid_estimate *e, enum deid_model m);
/* Mark *e failed (pu, fraction NaN) with a message; returns status. */
int	deid_estimate_fail(struct deid_estimate *e, int status,
	    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* No sample unique: a population unique is always a sample unique, so
 * every model's answer is exactly 0.  Fills *e so and returns 1 then. */
int	deid_estimate_no_uniques(const struct deid_hist *h,
	    struct deid_estimate *e);
/* Check N against the histogram (finite, N >= n); fails *e if not. */
int	deid_estimate_check(const struct deid_hist *h, double N,
	    struct deid_estimate *e);
/* lnGamma(a + x) - lnGamma(a) for a > 0, x >= 0, without the
 * cancellation of subtracting two large lnGammas; NaN on failure. */
double	deid_lngamma_diff(double a, double x);

#endif
