/*
 * deid/summary.c — risk figures for reports.  Trusted input.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "deid/summary.h"

int
deid_summary_hist(const struct deid_classes *c, const uint8_t *suppressed,
    struct deid_hist *h)
{
	size_t k;
	int r;

	deid_hist_clear(h);
	for (k = 0; k < c->n; k++) {
		if (suppressed != NULL && suppressed[k])
			continue;
		if ((r = deid_hist_add(h, c->count[k], 1)) != DEID_OK)
			return r;
	}
	return DEID_OK;
}

int
deid_summary_bottom_hist(const struct deid_engine *e, struct deid_hist *h)
{
	size_t b;
	int r;

	deid_hist_clear(h);
	for (b = 0; b < e->nbottom; b++)
		if ((r = deid_hist_add(h, e->bcount[b], 1)) != DEID_OK)
			return r;
	return DEID_OK;
}

int
deid_residual_list(const double *pop, size_t npop, const double *population,
    const double *bound, size_t n, struct deid_residual **out, size_t *nout)
{
	size_t i, m = n ? n : npop;

	if ((*out = calloc(m + 1, sizeof(**out))) == NULL)
		return DEID_ENOMEM;
	for (i = 0; i < m; i++) {
		(*out)[i].population = n ? population[i] : pop[i];
		(*out)[i].bound = n ? bound[i] : DEID_DEFAULT_RESIDUAL_BOUND;
	}
	*nout = m;
	return DEID_OK;
}

void
deid_residual_check(const struct deid_hist *h, enum deid_model m,
    double population, double bound, struct deid_residual *out)
{
	deid_residual_with(h, m, population, bound, NULL, out);
}

void
deid_residual_with(const struct deid_hist *h, enum deid_model m,
    double population, double bound, const struct deid_estimate *pu,
    struct deid_residual *out)
{
	memset(out, 0, sizeof(*out));
	out->population = population;
	out->bound = bound;
	if (h->n == 0 || h->c1 == 0) {
		out->passed = 1;
		out->est.path = DEID_PATH_TRIVIAL;
		out->est.model = m;
		return;
	}
	out->su_fraction = (double)h->c1 / (double)h->n;
	if (pu != NULL)
		out->est = *pu;
	if ((pu != NULL ? pu->status : deid_model_estimate(m, h, population,
	    &out->est)) != DEID_OK) {
		out->pu_fraction = out->ratio = NAN;
		out->passed = 0;
		return;
	}
	out->pu_fraction = out->est.fraction;
	out->ratio = out->pu_fraction / out->su_fraction;
	out->passed = out->ratio <= bound;
}

const uint64_t deid_size_bin_min[DEID_SIZE_BINS] = { 1, 2, 5, 10 };

void
deid_summary_bins(const struct deid_hist *h, uint64_t classes[DEID_SIZE_BINS],
    uint64_t records[DEID_SIZE_BINS])
{
	size_t i, b;

	memset(classes, 0, DEID_SIZE_BINS * sizeof(*classes));
	memset(records, 0, DEID_SIZE_BINS * sizeof(*records));
	for (i = 0; i < h->nsizes; i++) {
		for (b = DEID_SIZE_BINS - 1; b > 0 &&
		    h->size[i] < deid_size_bin_min[b]; b--)
			;
		classes[b] += h->count[i];
		records[b] += h->count[i] * h->size[i];
	}
}

void
deid_attack_risk(const struct deid_hist *h, double population,
    struct deid_attack_risk *out)
{
	struct deid_estimate est;

	memset(out, 0, sizeof(*out));
	if (h->n == 0)
		return;
	out->prosecutor = (double)h->c1 / (double)h->n;
	out->prosecutor_max = 1.0 / (double)h->size[0];
	out->marketer = (double)h->u / (double)h->n;
	if (h->c1 == 0)
		out->journalist = 0;
	else if (deid_pitman_estimate(h, population, &est) == DEID_OK)
		out->journalist = est.fraction;
	else
		out->journalist = NAN;
}
