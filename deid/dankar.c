/*
 * deid/dankar.c — Dankar et al. (2012) choice between the models
 * (docs/deid.md), and the one entry point that runs a model by name.
 * c1 = 0: no sample unique can be a population unique, PU = 0.
 * f <= 10%: Pitman, falling back to Zayatz when Pitman has no answer.
 * f > 10%: min(Zayatz, SNB), or Zayatz when SNB has no solution.
 * The estimate says which model answered and, in note, why.
 * Trusted library code: no logging, no exits.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "deid/error.h"
#include "deid/risk.h"

#define DANKAR_SMALL_F	0.1

typedef int (*model_fn)(const struct deid_hist *, double,
    struct deid_estimate *);

static const model_fn model_table[] = {
	[DEID_MODEL_PITMAN] = deid_pitman_estimate,
	[DEID_MODEL_ZAYATZ] = deid_zayatz_estimate,
	[DEID_MODEL_SNB] = deid_snb_estimate,
	[DEID_MODEL_DANKAR] = deid_dankar_estimate,
};

/* Dispatch through the table; an unknown model is an input error. */
int
deid_model_estimate(enum deid_model m, const struct deid_hist *h, double N,
    struct deid_estimate *e)
{
	if ((size_t)m >= sizeof(model_table) / sizeof(model_table[0])) {
		deid_estimate_begin(e, DEID_MODEL_DANKAR);
		return deid_estimate_fail(e, DEID_EINPUT, "unknown model %d",
		    (int)m);
	}
	return model_table[m](h, N, e);
}

/* Small sampling fraction: Pitman, else Zayatz with a note saying why
 * (ARX treats the alpha = 0 boundary as a failure here; we don't). */
static int
dankar_small(const struct deid_hist *h, double N, struct deid_estimate *e)
{
	struct deid_estimate p;
	unsigned its;

	if (deid_pitman_estimate(h, N, &p) == DEID_OK) {
		*e = p;
		return DEID_OK;
	}
	its = p.iterations;
	deid_zayatz_estimate(h, N, e);
	e->iterations += its;
	snprintf(e->note, sizeof(e->note), "Pitman fell back to Zayatz: %.128s",
	    p.error);
	return e->status;
}

/* Large sampling fraction: the smaller of Zayatz and a valid SNB. */
static int
dankar_large(const struct deid_hist *h, double N, struct deid_estimate *e)
{
	struct deid_estimate z, s;

	if (deid_zayatz_estimate(h, N, &z) != DEID_OK) {
		*e = z;
		return e->status;
	}
	if (deid_snb_estimate(h, N, &s) != DEID_OK) {
		*e = z;
		snprintf(e->note, sizeof(e->note), "SNB not used: %.140s",
		    s.error);
		return DEID_OK;
	}
	*e = s.pu < z.pu ? s : z;
	e->iterations = s.iterations + z.iterations;
	snprintf(e->note, sizeof(e->note), "min of Zayatz %.6g and SNB %.6g",
	    z.pu, s.pu);
	return DEID_OK;
}

/* The rule itself; e->model names the model that answered. */
int
deid_dankar_estimate(const struct deid_hist *h, double N,
    struct deid_estimate *e)
{
	deid_estimate_begin(e, DEID_MODEL_DANKAR);
	if (deid_estimate_check(h, N, e) != DEID_OK)
		return e->status;
	if (deid_estimate_no_uniques(h, e))
		return DEID_OK;
	if ((double)h->n / N <= DANKAR_SMALL_F)
		return dankar_small(h, N, e);
	return dankar_large(h, N, e);
}
