/*
 * deid/hist.c — the histogram of equivalence-class sizes that every
 * population-uniqueness model reads, plus the small shared pieces of the
 * risk API: model and path names, estimate bookkeeping, GSL setup.
 * Trusted library code: no logging, no exits; counts come from our own
 * grouping, but totals are still checked for overflow.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <gsl/gsl_errno.h>

#include "deid/error.h"
#include "deid/risk.h"

static const char *const model_names[] = {
	[DEID_MODEL_PITMAN] = "pitman",
	[DEID_MODEL_ZAYATZ] = "zayatz",
	[DEID_MODEL_SNB] = "snb",
	[DEID_MODEL_DANKAR] = "dankar",
};
#define NMODELS	(sizeof(model_names) / sizeof(model_names[0]))

static const char *const path_names[] = {
	[DEID_PATH_NONE] = "none",
	[DEID_PATH_CLOSED] = "closed",
	[DEID_PATH_SUMS] = "sums",
	[DEID_PATH_BOUNDARY] = "boundary",
	[DEID_PATH_TRIVIAL] = "trivial",
	[DEID_PATH_DIRECT] = "direct",
};
#define NPATHS	(sizeof(path_names) / sizeof(path_names[0]))

struct deid_hist *
deid_hist_alloc(size_t cap)
{
	struct deid_hist *h;

	if ((h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	if (cap > 0) {
		h->size = calloc(cap, sizeof(*h->size));
		h->count = calloc(cap, sizeof(*h->count));
		if (h->size == NULL || h->count == NULL) {
			deid_hist_free(h);
			return NULL;
		}
		h->cap = cap;
	}
	return h;
}

void
deid_hist_free(struct deid_hist *h)
{
	if (h == NULL)
		return;
	free(h->size);
	free(h->count);
	free(h);
}

void
deid_hist_clear(struct deid_hist *h)
{
	h->nsizes = 0;
	h->n = h->u = h->c1 = h->c2 = 0;
}

/* Index of the first entry with size >= s (binary search: sizes are
 * kept sorted so lookups and ascending appends stay cheap). */
static size_t
hist_lower_bound(const struct deid_hist *h, uint64_t s)
{
	size_t lo = 0, hi = h->nsizes, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (h->size[mid] < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Make room for one more entry; both arrays grow together. */
static int
hist_grow(struct deid_hist *h)
{
	uint64_t *p;
	size_t ncap;

	if (h->nsizes < h->cap)
		return DEID_OK;
	ncap = h->cap < 16 ? 16 : h->cap * 2;
	if (ncap > SIZE_MAX / sizeof(uint64_t))
		return DEID_ENOMEM;
	if ((p = realloc(h->size, ncap * sizeof(*p))) == NULL)
		return DEID_ENOMEM;
	h->size = p;
	if ((p = realloc(h->count, ncap * sizeof(*p))) == NULL)
		return DEID_ENOMEM;	/* size[] is bigger, still valid */
	h->count = p;
	h->cap = ncap;
	return DEID_OK;
}

/* Merge or insert in sorted place, refusing totals that would wrap. */
int
deid_hist_add(struct deid_hist *h, uint64_t size, uint64_t count)
{
	size_t i;
	int rc;

	if (size == 0)
		return DEID_EINPUT;
	if (count == 0)
		return DEID_OK;
	if (count > (UINT64_MAX - h->n) / size || count > UINT64_MAX - h->u)
		return DEID_ELIMIT;
	i = hist_lower_bound(h, size);
	if (i == h->nsizes || h->size[i] != size) {
		if ((rc = hist_grow(h)) != DEID_OK)
			return rc;
		memmove(h->size + i + 1, h->size + i,
		    (h->nsizes - i) * sizeof(*h->size));
		memmove(h->count + i + 1, h->count + i,
		    (h->nsizes - i) * sizeof(*h->count));
		h->size[i] = size;
		h->count[i] = 0;
		h->nsizes++;
	}
	h->count[i] += count;
	h->n += size * count;
	h->u += count;
	if (size == 1)
		h->c1 += count;
	else if (size == 2)
		h->c2 += count;
	return DEID_OK;
}

uint64_t
deid_hist_get(const struct deid_hist *h, uint64_t size)
{
	size_t i = hist_lower_bound(h, size);

	return i < h->nsizes && h->size[i] == size ? h->count[i] : 0;
}

const char *
deid_path_name(enum deid_path p)
{
	if ((size_t)p >= NPATHS || path_names[p] == NULL)
		return "unknown";
	return path_names[p];
}

const char *
deid_model_name(enum deid_model m)
{
	if ((size_t)m >= NMODELS || model_names[m] == NULL)
		return "unknown";
	return model_names[m];
}

int
deid_model_parse(const char *s, enum deid_model *m)
{
	size_t i;

	for (i = 0; i < NMODELS; i++) {
		if (strcasecmp(s, model_names[i]) == 0) {
			*m = (enum deid_model)i;
			return DEID_OK;
		}
	}
	return DEID_EINPUT;
}

void
deid_risk_init(void)
{
	gsl_set_error_handler_off();
}

void
deid_estimate_begin(struct deid_estimate *e, enum deid_model m)
{
	memset(e, 0, sizeof(*e));
	e->status = DEID_OK;
	e->model = m;
	e->path = DEID_PATH_NONE;
	e->pu = e->fraction = NAN;
	e->theta = e->alpha = NAN;
	e->snb_alpha = e->snb_beta = e->snb_k = NAN;
}

int
deid_estimate_fail(struct deid_estimate *e, int status, const char *fmt, ...)
{
	va_list ap;

	e->status = status;
	e->pu = e->fraction = NAN;
	va_start(ap, fmt);
	vsnprintf(e->error, sizeof(e->error), fmt, ap);
	va_end(ap);
	return status;
}

int
deid_estimate_no_uniques(const struct deid_hist *h, struct deid_estimate *e)
{
	if (h->c1 != 0)
		return 0;
	e->path = DEID_PATH_TRIVIAL;
	e->pu = e->fraction = 0;
	return 1;
}

/* Every model needs a finite population at least as large as the
 * sample; catching it here keeps NaN and nonsense out of the solvers. */
int
deid_estimate_check(const struct deid_hist *h, double N,
    struct deid_estimate *e)
{
	if (!isfinite(N) || N <= 0)
		return deid_estimate_fail(e, DEID_EINPUT,
		    "population size %g is not a positive number", N);
	if (N < (double)h->n)
		return deid_estimate_fail(e, DEID_EINPUT,
		    "population size %.17g is smaller than the sample (%llu)",
		    N, (unsigned long long)h->n);
	return DEID_OK;
}
