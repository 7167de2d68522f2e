/*
 * deid/groupify.c — collapse records into bottom classes and group them
 * under a transformation.  Trusted input (already validated); hot path
 * of the search, so no allocation happens after the _alloc calls.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "deid/groupify.h"

/* Bits needed to hold codes 0..n-1 (at least 1). */
static unsigned
bits_for(size_t n)
{
	unsigned b = 1;

	while (b < 32 && ((size_t)1 << b) < n)
		b++;
	return b;
}

/* Lay the QI fields out in 64-bit words; a field never straddles two. */
static int
engine_layout(struct deid_engine *e, struct deid_error *err)
{
	unsigned pos = 0, j;

	for (j = 0; j < e->nqi; j++) {
		unsigned b = bits_for(e->qi[j].h->nleaves);

		if (pos % 64 + b > 64)
			pos = (pos / 64 + 1) * 64;
		e->qi[j].shift = pos;
		e->qi[j].bits = b;
		pos += b;
	}
	e->W = (pos + 63) / 64;
	if (e->W == 0)
		e->W = 1;
	if (e->W > DEID_MAX_KEY_WORDS)
		return deid_error_set(err, DEID_ELIMIT, NULL, 0, 0,
		    "quasi-identifiers need %u key bits; at most %u are "
		    "supported", pos, DEID_MAX_KEY_WORDS * 64);
	return DEID_OK;
}

static inline uint64_t
key_hash(const uint64_t *k, unsigned W)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL;
	unsigned i;

	for (i = 0; i < W; i++) {
		h ^= k[i];
		h *= 0xbf58476d1ce4e5b9ULL;
		h ^= h >> 31;
	}
	return h;
}

static inline int
key_equal(const uint64_t *a, const uint64_t *b, unsigned W)
{
	unsigned i;

	for (i = 0; i < W; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/* Find or add the class with key k; returns its index. */
static inline uint32_t
classes_intern(struct deid_classes *c, const uint64_t *k, uint32_t first)
{
	unsigned W = c->W;
	size_t i = key_hash(k, W) & (c->nslot - 1);
	uint32_t s;

	while ((s = c->slot[i]) != 0) {
		if (key_equal(c->key + (size_t)(s - 1) * W, k, W))
			return s - 1;
		i = (i + 1) & (c->nslot - 1);
	}
	memcpy(c->key + c->n * W, k, W * 8);
	c->count[c->n] = 0;
	c->first[c->n] = first;
	c->slot[i] = (uint32_t)(c->n + 1);
	return (uint32_t)c->n++;
}

long
deid_classes_find(const struct deid_classes *c, const uint64_t *k)
{
	unsigned W = c->W;
	size_t i = key_hash(k, W) & (c->nslot - 1);
	uint32_t s;

	while ((s = c->slot[i]) != 0) {
		if (key_equal(c->key + (size_t)(s - 1) * W, k, W))
			return (long)s - 1;
		i = (i + 1) & (c->nslot - 1);
	}
	return -1;
}

static struct deid_classes *
classes_alloc_cap(unsigned W, size_t cap, size_t nbottom)
{
	struct deid_classes *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->W = W;
	c->cap = cap ? cap : 1;
	c->nslot = 16;
	while (c->nslot < c->cap * 2)
		c->nslot *= 2;
	c->key = calloc(c->cap * W, sizeof(*c->key));
	c->count = calloc(c->cap, sizeof(*c->count));
	c->first = calloc(c->cap, sizeof(*c->first));
	c->of_bottom = calloc(nbottom ? nbottom : 1, sizeof(*c->of_bottom));
	c->slot = calloc(c->nslot, sizeof(*c->slot));
	c->scratch = calloc((nbottom ? nbottom : 1) * W, sizeof(*c->scratch));
	if (c->key == NULL || c->count == NULL || c->first == NULL ||
	    c->of_bottom == NULL || c->slot == NULL || c->scratch == NULL) {
		deid_classes_free(c);
		return NULL;
	}
	return c;
}

struct deid_classes *
deid_classes_alloc(const struct deid_engine *e)
{
	return classes_alloc_cap(e->W, e->nbottom, e->nbottom);
}

void
deid_classes_free(struct deid_classes *c)
{
	if (c == NULL)
		return;
	free(c->key);
	free(c->count);
	free(c->first);
	free(c->of_bottom);
	free(c->slot);
	free(c->scratch);
	free(c);
}

/* Put the code of every QI of one row (or bottom class) into key k. */
static inline void
pack_key(const struct deid_engine *e, const unsigned *levels,
    uint32_t *const *leafv, size_t idx, uint64_t *k)
{
	size_t j;

	memset(k, 0, e->W * 8);
	for (j = 0; j < e->nqi; j++) {
		const struct deid_qi *q = &e->qi[j];
		uint64_t code = q->h->map[levels[j]][leafv[j][idx]];

		k[q->shift / 64] |= code << (q->shift % 64);
	}
}

/* Keys of all bottom classes, built column by column: one sequential
 * pass per QI with its level's map hoisted out of the loop. */
static void
bottom_keys(const struct deid_engine *e, const unsigned *levels,
    uint64_t *keys)
{
	unsigned W = e->W;
	size_t j, b;

	memset(keys, 0, e->nbottom * W * sizeof(*keys));
	for (j = 0; j < e->nqi; j++) {
		const struct deid_qi *q = &e->qi[j];
		const uint32_t *map = q->h->map[levels[j]];
		const uint32_t *leaf = e->bleaf[j];
		uint64_t *kw = keys + q->shift / 64;
		unsigned sh = q->shift % 64;

		for (b = 0; b < e->nbottom; b++)
			kw[b * W] |= (uint64_t)map[leaf[b]] << sh;
	}
}

void
deid_groupify(const struct deid_engine *e, const unsigned *levels,
    struct deid_classes *c)
{
	unsigned W = e->W;
	size_t b;
	uint32_t ci;

	memset(c->slot, 0, c->nslot * sizeof(*c->slot));
	c->n = 0;
	memcpy(c->levels, levels, e->nqi * sizeof(*levels));
	bottom_keys(e, levels, c->scratch);
	for (b = 0; b < e->nbottom; b++) {
		ci = classes_intern(c, c->scratch + b * W, e->bfirst[b]);
		c->count[ci] += e->bcount[b];
		c->of_bottom[b] = ci;
	}
	c->has_of_bottom = 1;
}

struct deid_snapshot *
deid_snapshot_take(const struct deid_classes *c)
{
	struct deid_snapshot *s;
	size_t n = c->n ? c->n : 1;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->n = c->n;
	s->key = malloc(n * c->W * sizeof(*s->key));
	s->count = malloc(n * sizeof(*s->count));
	s->first = malloc(n * sizeof(*s->first));
	if (s->key == NULL || s->count == NULL || s->first == NULL) {
		deid_snapshot_free(s);
		return NULL;
	}
	memcpy(s->key, c->key, c->n * c->W * sizeof(*s->key));
	memcpy(s->count, c->count, c->n * sizeof(*s->count));
	memcpy(s->first, c->first, c->n * sizeof(*s->first));
	s->bytes = sizeof(*s) + n * (c->W * 8 + 8 + 4);
	return s;
}

void
deid_snapshot_free(struct deid_snapshot *s)
{
	if (s == NULL)
		return;
	free(s->key);
	free(s->count);
	free(s->first);
	free(s);
}

void
deid_rollup(const struct deid_engine *e, const struct deid_snapshot *p,
    size_t j, const unsigned *levels, struct deid_classes *c)
{
	const struct deid_qi *q = &e->qi[j];
	const uint32_t *up = q->h->up[levels[j] - 1];
	uint64_t k[DEID_MAX_KEY_WORDS], mask, code;
	unsigned W = e->W, w = q->shift / 64, sh = q->shift % 64;
	size_t i;
	uint32_t ci;

	mask = (q->bits == 64 ? ~0ULL : (1ULL << q->bits) - 1) << sh;
	memset(c->slot, 0, c->nslot * sizeof(*c->slot));
	c->n = 0;
	c->has_of_bottom = 0;
	memcpy(c->levels, levels, e->nqi * sizeof(*levels));
	for (i = 0; i < p->n; i++) {
		memcpy(k, p->key + i * W, W * 8);
		code = up[(k[w] & mask) >> sh];
		k[w] = (k[w] & ~mask) | code << sh;
		ci = classes_intern(c, k, p->first[i]);
		c->count[ci] += p->count[i];
		if (p->first[i] < c->first[ci])
			c->first[ci] = p->first[i];
	}
}

/* Collect the QI columns (those bound to a hierarchy). */
static int
engine_collect_qis(struct deid_engine *e, struct deid_error *err)
{
	const struct deid_dataset *ds = e->ds;
	size_t i;

	for (i = 0; i < ds->ncols; i++)
		if (ds->cols[i].type == DEID_ATTR_QUASI && ds->cols[i].h)
			e->nqi++;
	if (e->nqi > DEID_MAX_QI)
		return deid_error_set(err, DEID_ELIMIT, NULL, 0, 0,
		    "%zu quasi-identifiers; at most %d are supported", e->nqi,
		    DEID_MAX_QI);
	if ((e->qi = calloc(e->nqi ? e->nqi : 1, sizeof(*e->qi))) == NULL)
		return DEID_ENOMEM;
	e->nqi = 0;
	for (i = 0; i < ds->ncols; i++)
		if (ds->cols[i].type == DEID_ATTR_QUASI && ds->cols[i].h) {
			e->qi[e->nqi].col = i;
			e->qi[e->nqi++].h = ds->cols[i].h;
		}
	return DEID_OK;
}

/* Group the rows at the bottom node and keep the result as bottom classes. */
static int
engine_bottom(struct deid_engine *e)
{
	const struct deid_dataset *ds = e->ds;
	unsigned zero[DEID_MAX_QI] = { 0 };
	uint64_t k[DEID_MAX_KEY_WORDS];
	uint32_t *rowleaf[DEID_MAX_QI];
	struct deid_classes *c;
	size_t r, j;

	for (j = 0; j < e->nqi; j++)
		rowleaf[j] = ds->cols[e->qi[j].col].leaf;
	if ((c = classes_alloc_cap(e->W, ds->nrows, 1)) == NULL ||
	    (e->row_bottom = calloc(ds->nrows, sizeof(uint32_t))) == NULL) {
		deid_classes_free(c);
		return DEID_ENOMEM;
	}
	for (r = 0; r < ds->nrows; r++) {
		pack_key(e, zero, rowleaf, r, k);
		e->row_bottom[r] = classes_intern(c, k, (uint32_t)r);
		c->count[e->row_bottom[r]]++;
	}
	e->nbottom = c->n;
	e->bcount = c->count;
	e->bfirst = c->first;
	c->count = NULL;	/* transferred */
	c->first = NULL;
	if ((e->bleaf = calloc(e->nqi ? e->nqi : 1, sizeof(*e->bleaf)))
	    == NULL)
		goto nomem;
	for (j = 0; j < e->nqi; j++) {
		if ((e->bleaf[j] = malloc((e->nbottom ? e->nbottom : 1) *
		    sizeof(uint32_t))) == NULL)
			goto nomem;
		for (r = 0; r < e->nbottom; r++)
			e->bleaf[j][r] = rowleaf[j][e->bfirst[r]];
	}
	deid_classes_free(c);
	return DEID_OK;
nomem:
	deid_classes_free(c);
	return DEID_ENOMEM;
}

int
deid_engine_alloc(const struct deid_dataset *ds, struct deid_engine **out,
    struct deid_error *err)
{
	struct deid_engine *e;
	int r;

	*out = NULL;
	if (ds->nrows > UINT32_MAX - 1)
		return deid_error_set(err, DEID_ELIMIT, ds->path, 0, 0,
		    "more than %u records", UINT32_MAX - 1);
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return DEID_ENOMEM;
	e->ds = ds;
	if ((r = engine_collect_qis(e, err)) != DEID_OK ||
	    (r = engine_layout(e, err)) != DEID_OK ||
	    (r = engine_bottom(e)) != DEID_OK) {
		deid_engine_free(e);
		return r;
	}
	*out = e;
	return DEID_OK;
}

void
deid_engine_free(struct deid_engine *e)
{
	size_t j;

	if (e == NULL)
		return;
	if (e->bleaf != NULL)
		for (j = 0; j < e->nqi; j++)
			free(e->bleaf[j]);
	free(e->bleaf);
	free(e->qi);
	free(e->bcount);
	free(e->bfirst);
	free(e->row_bottom);
	free(e);
}
