/*
 * deid/quality.c — Loss and non-uniform entropy of transformations, and
 * the per-QI per-level terms of the search's lower bound.
 * Trusted input; no allocation in deid_quality_node().
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "deid/quality.h"

const char *
deid_quality_name(enum deid_quality_model q)
{
	switch (q) {
	case DEID_QUALITY_ENTROPY:	return "entropy";
	case DEID_QUALITY_PAYOUT:	return "payout";
	default:			return "loss";
	}
}

int
deid_quality_parse(const char *s, enum deid_quality_model *q)
{
	if (strcmp(s, "loss") == 0)
		*q = DEID_QUALITY_LOSS;
	else if (strcmp(s, "entropy") == 0)
		*q = DEID_QUALITY_ENTROPY;
	else if (strcmp(s, "payout") == 0)
		*q = DEID_QUALITY_PAYOUT;
	else
		return DEID_EINPUT;
	return DEID_OK;
}

/* Normalize a QI's share sum into 0..1 (leaf = 0, root = 1). */
static double
loss_normalize(double sum, double R, double D)
{
	double lo = R / D;

	if (R - lo <= 0)
		return 0;
	return (sum - lo) / (R - lo);
}

double
deid_loss_combine_geometric(const double *terms, size_t nqi)
{
	double p = 1;
	size_t j;

	if (nqi == 0)
		return 0;
	for (j = 0; j < nqi; j++)
		p *= terms[j] + 1;	/* each factor in [1, 2]: no overflow */
	return pow(p, 1.0 / (double)nqi) - 1;
}

double
deid_loss_combine_mean(const double *terms, size_t nqi)
{
	double s = 0;
	size_t j;

	if (nqi == 0)
		return 0;
	for (j = 0; j < nqi; j++)
		s += terms[j];
	return s / (double)nqi;
}

/* -sum a log2(a / b) for one cell, 0 for empty cells. */
static inline double
xlog(double a, double b)
{
	return a > 0 ? -a * log2(a / b) : 0;
}

/* Leaf frequencies of QI j over all records. */
static void
tables_freq(const struct deid_engine *e, size_t j, uint64_t *f)
{
	size_t b;

	for (b = 0; b < e->nbottom; b++)
		f[e->bleaf[j][b]] += e->bcount[b];
}

/* Generalization-only Loss and entropy of QI j at every level. */
static int
tables_qi(const struct deid_engine *e, struct deid_quality_tables *t,
    size_t j)
{
	const struct deid_hierarchy *h = e->qi[j].h;
	double R = (double)e->ds->nrows, sum, ent, *b;
	size_t l, x;

	if ((b = calloc(h->nleaves, sizeof(*b))) == NULL)
		return DEID_ENOMEM;
	t->entropy_max[j] = 0;
	for (x = 0; x < h->nleaves; x++)
		t->entropy_max[j] += xlog((double)t->freq[j][x], R);
	for (l = 0; l < h->nlevels; l++) {
		memset(b, 0, h->nleaves * sizeof(*b));
		sum = ent = 0;
		for (x = 0; x < h->nleaves; x++) {
			sum += (double)t->freq[j][x] * deid_share(e, j,
			    (unsigned)l, h->map[l][x]);
			b[h->map[l][x]] += (double)t->freq[j][x];
		}
		for (x = 0; x < h->nleaves; x++)
			ent += xlog((double)t->freq[j][x], b[h->map[l][x]]);
		t->loss[j][l] = loss_normalize(sum, R, (double)h->nleaves);
		t->entropy[j][l] = t->entropy_max[j] > 0 ?
		    ent / t->entropy_max[j] : 0;
	}
	free(b);
	return DEID_OK;
}

int
deid_quality_tables_alloc(const struct deid_engine *e,
    struct deid_quality_tables **out)
{
	struct deid_quality_tables *t;
	size_t j, nl;

	*out = NULL;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return DEID_ENOMEM;
	t->nqi = e->nqi;
	for (j = 0; j < e->nqi; j++) {
		nl = e->qi[j].h->nlevels;
		t->loss[j] = calloc(nl, sizeof(double));
		t->entropy[j] = calloc(nl, sizeof(double));
		t->freq[j] = calloc(e->qi[j].h->nleaves, sizeof(uint64_t));
		if (t->loss[j] == NULL || t->entropy[j] == NULL ||
		    t->freq[j] == NULL)
			goto nomem;
		tables_freq(e, j, t->freq[j]);
		if (tables_qi(e, t, j) != DEID_OK)
			goto nomem;
	}
	if (deid_game_tables_alloc(e, t->freq, &t->game) != DEID_OK)
		goto nomem;
	*out = t;
	return DEID_OK;
nomem:
	deid_quality_tables_free(t);
	return DEID_ENOMEM;
}

void
deid_quality_tables_free(struct deid_quality_tables *t)
{
	size_t j;

	if (t == NULL)
		return;
	for (j = 0; j < t->nqi; j++) {
		free(t->loss[j]);
		free(t->entropy[j]);
		free(t->freq[j]);
	}
	deid_game_tables_free(t->game);
	free(t);
}

size_t
deid_quality_scratch_size(const struct deid_engine *e)
{
	size_t j, m = 1;

	for (j = 0; j < e->nqi; j++)
		if (e->qi[j].h->nleaves > m)
			m = e->qi[j].h->nleaves;
	return 3 * m;
}

/* Per-QI Loss terms of a grouped node with suppression: one pass per QI
 * summing count x leaves-under-value, divided by |D| once at the end. */
static void
node_loss(const struct deid_engine *e, const struct deid_classes *c,
    const uint8_t *suppressed, double *terms)
{
	double R = (double)e->ds->nrows, sum, supp = 0, D;
	size_t j, k;

	for (k = 0; k < c->n; k++)
		if (suppressed[k])
			supp += (double)c->count[k];
	for (j = 0; j < e->nqi; j++) {
		const struct deid_qi *q = &e->qi[j];
		const uint64_t *leaves = q->h->leaves[c->levels[j]];
		const uint64_t *kw = c->key + q->shift / 64;
		unsigned sh = q->shift % 64, W = c->W;
		uint64_t mask = (1ULL << q->bits) - 1;

		sum = 0;
		for (k = 0; k < c->n; k++)
			if (!suppressed[k])
				sum += (double)c->count[k] *
				    (double)leaves[(kw[k * W] >> sh) & mask];
		D = (double)q->h->nleaves;
		terms[j] = loss_normalize(sum / D + supp, R, D);
	}
}

/* Normalized non-uniform entropy of QI j of a grouped node. */
static double
node_entropy_qi(const struct deid_engine *e,
    const struct deid_quality_tables *t, const struct deid_classes *c,
    const uint8_t *suppressed, size_t j, uint64_t *scratch)
{
	const struct deid_hierarchy *h = e->qi[j].h;
	const uint32_t *map = h->map[c->levels[j]];
	uint64_t *an = scratch, *as = scratch + h->nleaves;
	uint64_t *bn = scratch + 2 * h->nleaves, S = 0;
	double ent = 0;
	size_t b, x;

	memset(scratch, 0, 3 * h->nleaves * sizeof(*scratch));
	for (b = 0; b < e->nbottom; b++) {
		uint32_t leaf = e->bleaf[j][b];

		if (suppressed[c->of_bottom[b]]) {
			as[leaf] += e->bcount[b];
			S += e->bcount[b];
		} else {
			an[leaf] += e->bcount[b];
			bn[map[leaf]] += e->bcount[b];
		}
	}
	for (x = 0; x < h->nleaves; x++)
		ent += xlog((double)an[x], (double)bn[map[x]]) +
		    xlog((double)as[x], (double)S);
	return t->entropy_max[j] > 0 ? ent / t->entropy_max[j] : 0;
}

void
deid_quality_node_terms(const struct deid_engine *e,
    const struct deid_quality_tables *t, const struct deid_classes *c,
    const uint8_t *suppressed, uint64_t *scratch, double *loss,
    double *entropy)
{
	size_t j;

	if (loss != NULL)
		node_loss(e, c, suppressed, loss);
	for (j = 0; entropy != NULL && j < e->nqi; j++)
		entropy[j] = node_entropy_qi(e, t, c, suppressed, j, scratch);
}

void
deid_quality_node(const struct deid_engine *e,
    const struct deid_quality_tables *t, const struct deid_classes *c,
    const uint8_t *suppressed, int want, uint64_t *scratch,
    struct deid_loss *out)
{
	double loss[DEID_MAX_QI], entropy[DEID_MAX_QI];

	out->geometric = out->arithmetic = out->entropy = NAN;
	deid_quality_node_terms(e, t, c, suppressed, scratch,
	    (want & DEID_WANT_LOSS) ? loss : NULL,
	    (want & DEID_WANT_ENTROPY) ? entropy : NULL);
	if (want & DEID_WANT_LOSS) {
		out->geometric = deid_loss_combine_geometric(loss, e->nqi);
		out->arithmetic = deid_loss_combine_mean(loss, e->nqi);
	}
	if (want & DEID_WANT_ENTROPY)
		out->entropy = deid_loss_combine_mean(entropy, e->nqi);
}
