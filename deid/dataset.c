/*
 * deid/dataset.c — load a CSV dataset into dictionary-encoded columns and
 * bind quasi-identifiers to their hierarchies.
 *
 * Parses untrusted input (through deid/csv.c); checks the header (no
 * empty or duplicate names), row lengths and that there is at least one
 * record.  Library code: returns status codes with file:line detail.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "deid/dataset.h"

/* ---- dictionary: open addressing over codes, strings owned ---- */

struct deid_dict {
	char		**str;		/* [n] */
	uint64_t	 *hash;		/* [n] */
	size_t		  n, cap;	/* entries */
	uint32_t	 *slot;		/* [nslot] code+1, 0 = empty */
	size_t		  nslot;	/* power of two */
};

/* FNV-1a, then a final mix so low bits are usable as a slot index. */
static uint64_t
dict_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s != '\0'; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ULL;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

struct deid_dict *
deid_dict_alloc(size_t hint)
{
	struct deid_dict *d;

	if ((d = calloc(1, sizeof(*d))) == NULL)
		return NULL;
	d->nslot = 16;
	while (d->nslot < hint * 2)
		d->nslot *= 2;
	if ((d->slot = calloc(d->nslot, sizeof(*d->slot))) == NULL) {
		free(d);
		return NULL;
	}
	return d;
}

void
deid_dict_free(struct deid_dict *d)
{
	size_t i;

	if (d == NULL)
		return;
	for (i = 0; i < d->n; i++)
		free(d->str[i]);
	free(d->str);
	free(d->hash);
	free(d->slot);
	free(d);
}

size_t
deid_dict_size(const struct deid_dict *d)
{
	return d->n;
}

const char *
deid_dict_string(const struct deid_dict *d, uint32_t code)
{
	return code < d->n ? d->str[code] : NULL;
}

/* Slot where s lives or would be inserted. */
static size_t
dict_probe(const struct deid_dict *d, const char *s, uint64_t h)
{
	size_t i = h & (d->nslot - 1);
	uint32_t c;

	while ((c = d->slot[i]) != 0) {
		if (d->hash[c - 1] == h && strcmp(d->str[c - 1], s) == 0)
			break;
		i = (i + 1) & (d->nslot - 1);
	}
	return i;
}

/* Double the slot table once it is half full. */
static int
dict_grow(struct deid_dict *d)
{
	uint32_t *ns;
	size_t i, j, nn = d->nslot * 2;

	if ((ns = calloc(nn, sizeof(*ns))) == NULL)
		return DEID_ENOMEM;
	for (i = 0; i < d->n; i++) {
		j = d->hash[i] & (nn - 1);
		while (ns[j] != 0)
			j = (j + 1) & (nn - 1);
		ns[j] = (uint32_t)(i + 1);
	}
	free(d->slot);
	d->slot = ns;
	d->nslot = nn;
	return DEID_OK;
}

int
deid_dict_find(const struct deid_dict *d, const char *s, uint32_t *code)
{
	size_t i = dict_probe(d, s, dict_hash(s));

	if (d->slot[i] == 0)
		return DEID_EINPUT;
	*code = d->slot[i] - 1;
	return DEID_OK;
}

int
deid_dict_intern(struct deid_dict *d, const char *s, uint32_t *code,
    int *isnew)
{
	uint64_t h = dict_hash(s);
	size_t i = dict_probe(d, s, h), ncap;
	void *p;

	*isnew = 0;
	if (d->slot[i] != 0) {
		*code = d->slot[i] - 1;
		return DEID_OK;
	}
	if (d->n >= UINT32_MAX - 1)
		return DEID_ELIMIT;
	if (d->n == d->cap) {
		ncap = d->cap ? d->cap * 2 : 64;
		if ((p = realloc(d->str, ncap * sizeof(*d->str))) == NULL)
			return DEID_ENOMEM;
		d->str = p;
		if ((p = realloc(d->hash, ncap * sizeof(*d->hash))) == NULL)
			return DEID_ENOMEM;
		d->hash = p;
		d->cap = ncap;
	}
	if ((d->str[d->n] = strdup(s)) == NULL)
		return DEID_ENOMEM;
	d->hash[d->n] = h;
	d->slot[i] = (uint32_t)(d->n + 1);
	*code = (uint32_t)d->n++;
	*isnew = 1;
	if (d->n * 2 > d->nslot)
		return dict_grow(d);
	return DEID_OK;
}

/* ---- dataset ---- */

struct load_ctx {
	struct deid_dataset	*ds;
	const char		*name;
	size_t			 rowcap;
	unsigned long		 header_line;
};

/* Header record: names must be non-empty and distinct. */
static int
load_header(struct load_ctx *lc, const char *const *f, size_t nf,
    unsigned long line, struct deid_error *err)
{
	struct deid_dataset *ds = lc->ds;
	size_t i, j;

	if ((ds->cols = calloc(nf, sizeof(*ds->cols))) == NULL)
		return DEID_ENOMEM;
	ds->ncols = nf;
	for (i = 0; i < nf; i++) {
		if (f[i][0] == '\0')
			return deid_error_set(err, DEID_EINPUT, lc->name, line,
			    0, "header: column %zu has an empty name", i + 1);
		for (j = 0; j < i; j++)
			if (strcmp(f[i], f[j]) == 0)
				return deid_error_set(err, DEID_EINPUT,
				    lc->name, line, 0, "header: duplicate "
				    "column name \"%s\" (columns %zu and %zu)",
				    f[i], j + 1, i + 1);
		if ((ds->cols[i].name = strdup(f[i])) == NULL ||
		    (ds->cols[i].index = deid_dict_alloc(64)) == NULL)
			return DEID_ENOMEM;
	}
	lc->header_line = line;
	return DEID_OK;
}

/* Make room for one more row in every column. */
static int
load_grow(struct load_ctx *lc)
{
	struct deid_dataset *ds = lc->ds;
	size_t i, ncap = lc->rowcap ? lc->rowcap * 2 : 1024;
	void *p;

	for (i = 0; i < ds->ncols; i++) {
		if ((p = realloc(ds->cols[i].codes, ncap * sizeof(uint32_t)))
		    == NULL)
			return DEID_ENOMEM;
		ds->cols[i].codes = p;
	}
	lc->rowcap = ncap;
	return DEID_OK;
}

/* Remember the first line a new dictionary value was seen on. */
static int
load_note_line(struct deid_column *c, uint32_t code, unsigned long line)
{
	void *p;

	if ((code & (code - 1)) == 0 || code == 0) {
		/* capacity doubles at powers of two */
		size_t ncap = code == 0 ? 1 : (size_t)code * 2;
		if ((p = realloc(c->first_line, ncap * sizeof(*c->first_line)))
		    == NULL)
			return DEID_ENOMEM;
		c->first_line = p;
	}
	c->first_line[code] = line;
	return DEID_OK;
}

/* CSV callback: the header first, then one record per call. */
static int
load_record(void *ctx, const char *const *f, size_t nf, unsigned long line,
    struct deid_error *err)
{
	struct load_ctx *lc = ctx;
	struct deid_dataset *ds = lc->ds;
	uint32_t code;
	size_t i;
	int r, isnew;

	if (ds->cols == NULL)
		return load_header(lc, f, nf, line, err);
	if (nf < ds->ncols)	/* at the first column it lacks */
		return deid_error_set(err, DEID_EINPUT, lc->name, line, nf + 1,
		    "record has %zu fields, the header has %zu: no value for "
		    "column %zu \"%s\"", nf, ds->ncols, nf + 1,
		    ds->cols[nf].name);
	if (nf > ds->ncols)	/* at the first field too many */
		return deid_error_set(err, DEID_EINPUT, lc->name, line,
		    ds->ncols + 1, "record has %zu fields, the header has %zu "
		    "(the last is column %zu \"%s\")", nf, ds->ncols,
		    ds->ncols, ds->cols[ds->ncols - 1].name);
	if (ds->nrows == lc->rowcap && (r = load_grow(lc)) != DEID_OK)
		return r;
	for (i = 0; i < nf; i++) {
		struct deid_column *c = &ds->cols[i];

		if ((r = deid_dict_intern(c->index, f[i], &code, &isnew))
		    != DEID_OK)
			return r;
		if (isnew && (r = load_note_line(c, code, line)) != DEID_OK)
			return r;
		c->codes[ds->nrows] = code;
	}
	ds->nrows++;
	return DEID_OK;
}

/* Expose each column's dictionary as a plain array after loading. */
static void
load_finish(struct deid_dataset *ds)
{
	size_t i;

	for (i = 0; i < ds->ncols; i++) {
		struct deid_column *c = &ds->cols[i];

		c->ndict = deid_dict_size(c->index);
		c->dict = c->index->str;
	}
}

int
deid_dataset_parse(const void *data, size_t len, const char *name,
    const struct deid_csv_opts *opts, struct deid_dataset **out,
    struct deid_error *err)
{
	struct load_ctx lc;
	struct deid_dataset *ds;
	int r;

	*out = NULL;
	if ((ds = calloc(1, sizeof(*ds))) == NULL ||
	    (ds->path = strdup(name)) == NULL) {
		free(ds);
		return DEID_ENOMEM;
	}
	memset(&lc, 0, sizeof(lc));
	lc.ds = ds;
	lc.name = name;
	r = deid_csv_parse(data, len, name, opts, load_record, &lc,
	    &ds->separator, err);
	if (r != DEID_OK)
		goto out;
	if (ds->cols == NULL) {
		r = deid_error_set(err, DEID_EINPUT, name, 0, 0, "empty file");
		goto out;
	}
	if (ds->nrows == 0) {
		r = deid_error_set(err, DEID_EINPUT, name, lc.header_line, 0,
		    "no records after the header");
		goto out;
	}
	load_finish(ds);
	*out = ds;
	ds = NULL;	/* transferred */
out:
	deid_dataset_free(ds);
	return r;
}

int
deid_dataset_read(const char *path, const struct deid_csv_opts *opts,
    struct deid_dataset **out, struct deid_error *err)
{
	char *data = NULL;
	size_t len;
	int r;

	*out = NULL;
	if ((r = deid_file_read(path, &data, &len, err)) != DEID_OK)
		return r;
	r = deid_dataset_parse(data, len, path, opts, out, err);
	free(data);
	return r;
}

void
deid_dataset_free(struct deid_dataset *ds)
{
	size_t i;

	if (ds == NULL)
		return;
	for (i = 0; i < ds->ncols; i++) {
		struct deid_column *c = &ds->cols[i];

		free(c->name);
		free(c->codes);
		free(c->first_line);
		free(c->leaf);
		deid_hierarchy_free(c->h);
		deid_dict_free(c->index);	/* owns c->dict */
	}
	free(ds->cols);
	free(ds->path);
	free(ds);
}

long
deid_dataset_column(const struct deid_dataset *ds, const char *name)
{
	size_t i;

	for (i = 0; i < ds->ncols; i++)
		if (strcmp(ds->cols[i].name, name) == 0)
			return (long)i;
	return -1;
}

int
deid_dataset_bind(struct deid_dataset *ds, size_t col,
    struct deid_hierarchy *h, struct deid_error *err)
{
	struct deid_column *c = &ds->cols[col];
	uint32_t *tr = NULL, leaf;
	size_t i;
	int r = DEID_ENOMEM;

	deid_hierarchy_free(c->h);
	free(c->leaf);
	c->leaf = NULL;
	c->h = h;
	c->type = DEID_ATTR_QUASI;
	if ((tr = calloc(c->ndict ? c->ndict : 1, sizeof(*tr))) == NULL ||
	    (c->leaf = calloc(ds->nrows, sizeof(*c->leaf))) == NULL)
		goto out;
	for (i = 0; i < c->ndict; i++) {
		if (deid_hierarchy_lookup(h, c->dict[i], &leaf) != DEID_OK) {
			r = deid_error_set(err, DEID_EINPUT, ds->path,
			    c->first_line[i], col + 1, "value \"%.200s\" of "
			    "column %zu \"%s\" is not in its hierarchy%s%s",
			    c->dict[i], col + 1, c->name, h->name != NULL ?
			    " " : "", h->name != NULL ? h->name : "");
			goto out;
		}
		tr[i] = leaf;
	}
	for (i = 0; i < ds->nrows; i++)
		c->leaf[i] = tr[c->codes[i]];
	r = DEID_OK;
out:
	free(tr);
	return r;
}

int
deid_dataset_bind_flat(struct deid_dataset *ds, size_t col,
    struct deid_error *err)
{
	struct deid_column *c = &ds->cols[col];
	struct deid_hierarchy *h;
	int r;

	r = deid_hierarchy_flat((const char *const *)c->dict, c->ndict, &h,
	    err);
	if (r != DEID_OK)
		return r;
	return deid_dataset_bind(ds, col, h, err);
}
