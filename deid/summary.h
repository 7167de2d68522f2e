/*
 * deid/summary.h — risk figures of a released table: sample uniques,
 * population uniqueness per model, the PU/SU residual check (docs/deid.md)
 * and the prosecutor / journalist / marketer summary (Xia 2021, for an
 * attacker who knows every quasi-identifier).
 */
#ifndef DEID_SUMMARY_H
#define DEID_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "deid/groupify.h"
#include "deid/risk.h"

/* Histogram of class sizes of the classes not suppressed (all when
 * suppressed is NULL). */
int	deid_summary_hist(const struct deid_classes *c,
	    const uint8_t *suppressed, struct deid_hist *h);

/* Histogram of the engine's bottom classes: the table as it is. */
int	deid_summary_bottom_hist(const struct deid_engine *e,
	    struct deid_hist *h);

struct deid_residual {
	double			population;
	double			bound;
	double			pu_fraction;	/* PU / N (NaN: model failed) */
	double			su_fraction;	/* c1 / n */
	double			ratio;		/* PU/SU, NaN when failed */
	int			passed;
	struct deid_estimate	est;
};

/* The residual checks to run: the n given (population, bound) pairs,
 * or none given: each of the npop populations at bound 0.25.  *out is
 * malloc'd with population and bound set (free it). */
#define DEID_DEFAULT_RESIDUAL_BOUND	0.25
int	deid_residual_list(const double *pop, size_t npop,
	    const double *population, const double *bound, size_t n,
	    struct deid_residual **out, size_t *nout);

/* PU/SU = (PU/N)/(c1/n): the share of sample uniques expected to be
 * population uniques.  c1 = 0 passes with ratio 0; a failed model fails
 * the check (fail closed). */
void	deid_residual_check(const struct deid_hist *h, enum deid_model m,
	    double population, double bound, struct deid_residual *out);
/* The same from pu, model m's estimate on h at this population
 * already made (the PU criterion's): the model is not run again. */
void	deid_residual_with(const struct deid_hist *h, enum deid_model m,
	    double population, double bound, const struct deid_estimate *pu,
	    struct deid_residual *out);

/* Classes and records by class size, in the bins a report shows: 1
 * (sample uniques), 2-4, 5-9 and 10 or more. */
#define DEID_SIZE_BINS	4
extern const uint64_t deid_size_bin_min[DEID_SIZE_BINS];
void	deid_summary_bins(const struct deid_hist *h,
	    uint64_t classes[DEID_SIZE_BINS], uint64_t records[DEID_SIZE_BINS]);

struct deid_attack_risk {
	double	prosecutor;	/* share of records unique in the sample */
	double	prosecutor_max;	/* 1 / smallest class */
	double	journalist;	/* PU / N by Pitman; NaN when it failed */
	double	marketer;	/* classes / records */
};

void	deid_attack_risk(const struct deid_hist *h, double population,
	    struct deid_attack_risk *out);

#endif
