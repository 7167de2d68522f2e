/*
 * deid/lattice.c — node numbering and the bound-ordered visit list.
 * Trusted input; O(nodes log nodes) once per search.
 */
#include "config.h"

#include <stdlib.h>

#include "deid/lattice.h"

int
deid_lattice_alloc(const struct deid_engine *e, struct deid_lattice **out,
    struct deid_error *err)
{
	struct deid_lattice *l;
	size_t j;

	*out = NULL;
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return DEID_ENOMEM;
	l->nqi = e->nqi;
	l->nnodes = 1;
	for (j = 0; j < e->nqi; j++) {
		l->height[j] = (unsigned)e->qi[j].h->nlevels;
		l->stride[j] = l->nnodes;
		if (l->nnodes > DEID_MAX_NODES / l->height[j]) {
			free(l);
			return deid_error_set(err, DEID_ELIMIT, NULL, 0, 0,
			    "the generalization lattice has more than %llu "
			    "nodes", (unsigned long long)DEID_MAX_NODES);
		}
		l->nnodes *= l->height[j];
	}
	l->bound = calloc(l->nnodes, sizeof(*l->bound));
	l->order = calloc(l->nnodes, sizeof(*l->order));
	if (l->bound == NULL || l->order == NULL) {
		deid_lattice_free(l);
		return DEID_ENOMEM;
	}
	*out = l;
	return DEID_OK;
}

void
deid_lattice_free(struct deid_lattice *l)
{
	if (l == NULL)
		return;
	free(l->bound);
	free(l->order);
	free(l);
}

void
deid_lattice_levels(const struct deid_lattice *l, uint64_t node,
    unsigned *levels)
{
	size_t j;

	for (j = 0; j < l->nqi; j++) {
		levels[j] = (unsigned)(node % l->height[j]);
		node /= l->height[j];
	}
}

uint64_t
deid_lattice_node(const struct deid_lattice *l, const unsigned *levels)
{
	uint64_t node = 0;
	size_t j;

	for (j = 0; j < l->nqi; j++)
		node += levels[j] * l->stride[j];
	return node;
}

unsigned
deid_lattice_sum(const struct deid_lattice *l, uint64_t node)
{
	unsigned s = 0;
	size_t j;

	for (j = 0; j < l->nqi; j++) {
		s += (unsigned)(node % l->height[j]);
		node /= l->height[j];
	}
	return s;
}

/* Visit order: bound, then fewer levels, then index. */
static int
order_cmp(const void *a, const void *b, void *ctx)
{
	const struct deid_lattice *sort_lattice = ctx;
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	double bx = sort_lattice->bound[x], by = sort_lattice->bound[y];
	unsigned sx, sy;

	if (bx != by)
		return bx < by ? -1 : 1;
	sx = deid_lattice_sum(sort_lattice, x);
	sy = deid_lattice_sum(sort_lattice, y);
	if (sx != sy)
		return sx < sy ? -1 : 1;
	return x < y ? -1 : x > y;
}

void
deid_lattice_order(struct deid_lattice *l, double *const *term,
    deid_bound_combine combine)
{
	unsigned levels[DEID_MAX_QI];
	double t[DEID_MAX_QI];
	uint64_t i;
	size_t j;

	for (i = 0; i < l->nnodes; i++) {
		deid_lattice_levels(l, i, levels);
		for (j = 0; j < l->nqi; j++)
			t[j] = term[j][levels[j]];
		l->bound[i] = combine(t, l->nqi);
		l->order[i] = i;
	}
	qsort_r(l->order, l->nnodes, sizeof(*l->order), order_cmp, l);
}
