/*
 * deid/poptable.c — the population table's rows as leaves of the
 * engine's hierarchies, counted per class of a node (poptable.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "deid/hierarchy.h"
#include "deid/poptable.h"

/* Leaves of pop's column for engine QI j: each distinct value looked up
 * once, then every row. */
static int
poptable_qi(const struct deid_dataset *pop, const struct deid_engine *e,
    size_t j, uint32_t *leaf, struct deid_error *err)
{
	const char *name = e->ds->cols[e->qi[j].col].name;
	const struct deid_hierarchy *h = e->qi[j].h;
	const struct deid_column *c;
	uint32_t *tr;
	long col;
	size_t i;

	if ((col = deid_dataset_column(pop, name)) < 0)
		return deid_error_set(err, DEID_EINPUT, pop->path, 1, 0,
		    "the population table has no column \"%s\"", name);
	c = &pop->cols[col];
	if ((tr = calloc(c->ndict ? c->ndict : 1, sizeof(*tr))) == NULL)
		return DEID_ENOMEM;
	for (i = 0; i < c->ndict; i++)
		if (deid_hierarchy_lookup(h, c->dict[i], &tr[i]) != DEID_OK) {
			free(tr);
			return deid_error_set(err, DEID_EINPUT, pop->path,
			    c->first_line[i], (unsigned long)col + 1,
			    "population value \"%.200s\" of column \"%s\" is "
			    "not in its hierarchy%s%s", c->dict[i], name,
			    h->name != NULL ? " " : "",
			    h->name != NULL ? h->name : "");
		}
	for (i = 0; i < pop->nrows; i++)
		leaf[i] = tr[c->codes[i]];
	free(tr);
	return DEID_OK;
}

int
deid_poptable_alloc(const struct deid_dataset *pop,
    const struct deid_engine *e, struct deid_poptable **out,
    struct deid_error *err)
{
	struct deid_poptable *p;
	size_t j;
	int r = DEID_OK;

	*out = NULL;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return DEID_ENOMEM;
	p->name = pop->path;
	p->rows = pop->nrows;
	p->nqi = e->nqi;
	for (j = 0; j < e->nqi && r == DEID_OK; j++)
		if ((p->leaf[j] = calloc(pop->nrows ? pop->nrows : 1,
		    sizeof(uint32_t))) == NULL)
			r = DEID_ENOMEM;
		else
			r = poptable_qi(pop, e, j, p->leaf[j], err);
	if (r != DEID_OK) {
		deid_poptable_free(p);
		return r;
	}
	*out = p;
	return DEID_OK;
}

void
deid_poptable_free(struct deid_poptable *p)
{
	size_t j;

	if (p == NULL)
		return;
	for (j = 0; j < p->nqi; j++)
		free(p->leaf[j]);
	free(p);
}

void
deid_poptable_count(const struct deid_poptable *p,
    const struct deid_engine *e, const struct deid_classes *c,
    uint64_t *popsize)
{
	uint64_t k[DEID_MAX_KEY_WORDS];
	const struct deid_qi *q;
	size_t i, j;
	long ci;

	memset(popsize, 0, c->n * sizeof(*popsize));
	for (i = 0; i < p->rows; i++) {
		memset(k, 0, e->W * 8);
		for (j = 0; j < e->nqi; j++) {
			q = &e->qi[j];
			k[q->shift / 64] |= (uint64_t)q->h->map[c->levels[j]]
			    [p->leaf[j][i]] << (q->shift % 64);
		}
		if ((ci = deid_classes_find(c, k)) >= 0)
			popsize[ci]++;
	}
}
