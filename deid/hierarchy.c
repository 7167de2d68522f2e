/*
 * deid/hierarchy.c — load, validate and materialize ARX-format
 * generalization hierarchies (docs/deid.md).
 *
 * Trust level: parses untrusted bytes (hierarchy files come from the
 * custodian but are read in the deid worker like any input); every byte
 * goes through deid/csv.c first.  Loading is two passes: the CSV
 * callback only checks the shape (equal row lengths, no empty value) and
 * copies each field into one string pool; then, with the pool no longer
 * moving, rows are interned level by level into open-addressing tables,
 * which checks unique leaves and one parent per value per level and
 * assigns codes in first-appearance order.  Levels are separate
 * namespaces: "[80,99]" may be a value at level 3 and at level 4.
 *
 * The hash (FNV-1a 64 with a murmur3 finalizer) is not flood-resistant;
 * a hostile hierarchy can make loading quadratic, not unsafe.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "deid/hierarchy.h"

/* Open-addressing (linear probing) table: string -> code.  The strings
 * live elsewhere (values[level][code]); the table stores codes and
 * their hashes only. */
struct htab {
	uint32_t	*slot;		/* code + 1; 0 = empty */
	uint32_t	*hash;		/* hash of the code's string */
	size_t		 cap;		/* power of two */
	size_t		 n;
};

/* Private part of a loaded hierarchy: string storage and leaf index. */
struct deid_hierarchy_table {
	char		*pool;		/* values[][] point into it */
	struct htab	 leaf;
};

/* Pass one: the rows as offsets into a pool of NUL-terminated fields. */
struct hload {
	const char	*name;
	struct wbuf	 pool;
	size_t		*off;		/* [row * nlevels + level] */
	size_t		 offcap;
	unsigned long	*line;		/* [row] source line (or value #) */
	size_t		 linecap;
	size_t		 nrows;
	size_t		 nlevels;
	unsigned long	 first_line;
};

/* Pass two: interning state. */
struct hbuild {
	struct deid_hierarchy	*h;
	const struct hload	*hl;
	int			 strict;	/* any repeated leaf fails */
	struct deid_error	*err;
	struct htab		*tab;		/* [nlevels] */
	unsigned long		**pline;	/* [level][code] first line */
	uint32_t		*code;		/* [nlevels] this row's codes */
	uint8_t			*isnew;		/* [nlevels] first sighting */
};

#define MSGV	"%.80s"		/* values quoted in messages, bounded */

/* Well-mixed 32 bits even in the low bits used as the slot index. */
static uint32_t
hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s != '\0'; s++) {
		h ^= (uint8_t)*s;
		h *= 0x100000001b3ULL;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (uint32_t)h;
}

/* Doubling growth with overflow checks, for the pass-one arrays. */
static int
grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap ? *cap : 64;
	void *np;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / size)
			return -1;
		ncap *= 2;
	}
	if ((np = reallocarray(*p, ncap, size)) == NULL)
		return -1;
	*p = np;
	*cap = ncap;
	return 0;
}

static void
htab_free(struct htab *t)
{
	free(t->slot);
	free(t->hash);
	memset(t, 0, sizeof(*t));
}

/* Slot holding s, or the empty slot where it belongs. */
static size_t
htab_probe(const struct htab *t, const char *s, uint32_t hv,
    char *const *strs)
{
	size_t i = hv & (t->cap - 1);

	while (t->slot[i] != 0 && (t->hash[i] != hv ||
	    strcmp(strs[t->slot[i] - 1], s) != 0))
		i = (i + 1) & (t->cap - 1);
	return i;
}

/* Rehash into twice the space; keeps the load factor at most 1/2. */
static int
htab_grow(struct htab *t)
{
	struct htab nt;
	size_t i, j;

	nt.cap = t->cap ? t->cap * 2 : 16;
	nt.n = t->n;
	nt.slot = calloc(nt.cap, sizeof(*nt.slot));
	nt.hash = calloc(nt.cap, sizeof(*nt.hash));
	if (nt.slot == NULL || nt.hash == NULL) {
		htab_free(&nt);
		return -1;
	}
	for (i = 0; i < t->cap; i++) {
		if (t->slot[i] == 0)
			continue;
		for (j = t->hash[i] & (nt.cap - 1); nt.slot[j] != 0;
		    j = (j + 1) & (nt.cap - 1))
			;
		nt.slot[j] = t->slot[i];
		nt.hash[j] = t->hash[i];
	}
	htab_free(t);
	*t = nt;
	return 0;
}

/* Pass one, per record: check the shape and copy the fields. */
static int
hload_row(void *ctx, const char *const *fields, size_t nfields,
    unsigned long line, struct deid_error *err)
{
	struct hload *hl = ctx;
	size_t i, base;

	if (hl->nrows == 0) {
		hl->nlevels = nfields;
		hl->first_line = line;
	}
	if (nfields != hl->nlevels)
		return deid_error_set(err, DEID_EINPUT, hl->name, line, 0,
		    "row has %zu columns, expected %zu (as on line %lu)",
		    nfields, hl->nlevels, hl->first_line);
	if (hl->nrows >= UINT32_MAX - 1)
		return deid_error_set(err, DEID_ELIMIT, hl->name, line, 0,
		    "too many rows");
	base = hl->nrows * nfields;
	if (grow((void **)&hl->off, &hl->offcap, base + nfields,
	    sizeof(*hl->off)) != 0 || grow((void **)&hl->line, &hl->linecap,
	    hl->nrows + 1, sizeof(*hl->line)) != 0)
		return deid_error_set(err, DEID_ENOMEM, hl->name, line, 0,
		    "out of memory");
	for (i = 0; i < nfields; i++) {
		if (fields[i][0] == '\0')
			return deid_error_set(err, DEID_EINPUT, hl->name, line,
			    0, "empty value at level %zu", i);
		hl->off[base + i] = hl->pool.len;
		if (wbuf_put(&hl->pool, fields[i], strlen(fields[i]) + 1) !=
		    BUF_OK)
			return deid_error_set(err, DEID_ENOMEM, hl->name, line,
			    0, "out of memory");
	}
	hl->line[hl->nrows++] = line;
	return DEID_OK;
}

static void
hload_free(struct hload *hl)
{
	wbuf_free(&hl->pool);
	free(hl->off);
	free(hl->line);
}

/* Find s at level l or give it the next code (first-appearance order). */
static int
hbuild_intern(struct hbuild *b, size_t l, const char *s)
{
	struct deid_hierarchy *h = b->h;
	struct htab *t = &b->tab[l];
	uint32_t hv = hash_str(s);
	size_t i;

	if ((t->n + 1) * 2 > t->cap && htab_grow(t) != 0)
		return DEID_ENOMEM;
	i = htab_probe(t, s, hv, h->values[l]);
	b->isnew[l] = t->slot[i] == 0;
	if (b->isnew[l]) {
		b->code[l] = (uint32_t)h->ndomain[l]++;
		h->values[l][b->code[l]] = (char *)s;
		t->slot[i] = b->code[l] + 1;
		t->hash[i] = hv;
		t->n++;
	} else
		b->code[l] = t->slot[i] - 1;
	return DEID_OK;
}

/* A verbatim repeat is merged, and said so: it is where cdsgate's |D|
 * (and so every Loss share) differs from ARX's, which counts the row. */
static int
hbuild_warn_dup(struct hbuild *b, unsigned long line, unsigned long first)
{
	struct deid_hierarchy *h = b->h;
	struct deid_warning *w;

	if (h->nwarnings == DEID_HIERARCHY_MAX_WARNINGS)
		return DEID_OK;		/* counted in ndup; said by finish */
	if (h->warnings == NULL && (h->warnings = calloc(
	    DEID_HIERARCHY_MAX_WARNINGS, sizeof(*h->warnings))) == NULL)
		return deid_error_set(b->err, DEID_ENOMEM, b->hl->name, line,
		    0, "out of memory");
	w = &h->warnings[h->nwarnings++];
	snprintf(w->file, sizeof(w->file), "%s", b->hl->name ? b->hl->name :
	    "");
	w->line = line;
	w->column = 1;
	snprintf(w->msg, sizeof(w->msg), "leaf \"" MSGV "\" repeats line %lu; "
	    "merged, counted once", h->values[0][b->code[0]], first);
	return DEID_OK;
}

/* The last warning says how many repeats were not listed. */
static void
hbuild_warn_more(struct deid_hierarchy *h)
{
	struct deid_warning *w;
	size_t len;

	if (h->ndup <= h->nwarnings || h->nwarnings == 0)
		return;
	w = &h->warnings[h->nwarnings - 1];
	len = strlen(w->msg);
	snprintf(w->msg + len, sizeof(w->msg) - len, " (and %zu more repeated "
	    "rows not listed)", h->ndup - h->nwarnings);
}

/* A leaf seen before: a verbatim repeat of its row is collapsed (real
 * data has one), anything else is an error naming both lines. */
static int
hbuild_dup(struct hbuild *b, unsigned long line)
{
	struct deid_hierarchy *h = b->h;
	uint32_t leaf = b->code[0];
	unsigned long first = b->pline[0][leaf];
	size_t l;

	if (b->strict)
		return deid_error_set(b->err, DEID_EINPUT, b->hl->name, 0, 0,
		    "duplicate value \"" MSGV "\" (values %lu and %lu)",
		    h->values[0][leaf], first, line);
	for (l = 1; l < h->nlevels; l++)
		if (h->map[l][leaf] != b->code[l])
			return deid_error_set(b->err, DEID_EINPUT,
			    b->hl->name, line, 0, "duplicate leaf \"" MSGV
			    "\" with a different generalization than on "
			    "line %lu", h->values[0][leaf], first);
	h->ndup++;
	return hbuild_warn_dup(b, line, first);
}

/* The consistency rule: a value has exactly one parent at level l+1. */
static int
hbuild_parent(struct hbuild *b, size_t l, unsigned long line)
{
	struct deid_hierarchy *h = b->h;
	uint32_t c = b->code[l], p = b->code[l + 1], q;

	if (b->isnew[l]) {
		h->up[l][c] = p;
		return DEID_OK;
	}
	if ((q = h->up[l][c]) == p)
		return DEID_OK;
	return deid_error_set(b->err, DEID_EINPUT, b->hl->name, line, 0,
	    "inconsistent hierarchy: level %zu value \"" MSGV "\" has parent \""
	    MSGV "\" here but \"" MSGV "\" on line %lu", l, h->values[l][c],
	    h->values[l + 1][p], h->values[l + 1][q], b->pline[l][c]);
}

/* Intern one row on every level, then check it against earlier rows. */
static int
hbuild_row(struct hbuild *b, size_t r)
{
	const struct hload *hl = b->hl;
	struct deid_hierarchy *h = b->h;
	size_t l, nl = h->nlevels;
	unsigned long line = hl->line[r];
	int rc;

	for (l = 0; l < nl; l++) {
		if (hbuild_intern(b, l, (const char *)hl->pool.d +
		    hl->off[r * nl + l]) != DEID_OK)
			return deid_error_set(b->err, DEID_ENOMEM, hl->name,
			    line, 0, "out of memory");
		if (b->isnew[l])
			b->pline[l][b->code[l]] = line;
	}
	if (!b->isnew[0])
		return hbuild_dup(b, line);
	for (l = 0; l < nl; l++) {
		h->map[l][b->code[0]] = b->code[l];
		if (l + 1 < nl && (rc = hbuild_parent(b, l, line)) != DEID_OK)
			return rc;
	}
	return DEID_OK;
}

/* Everything sized for the worst case (every row a new value on every
 * level), so pass two never reallocates; finish() trims. */
static int
hbuild_alloc(struct hbuild *b)
{
	struct deid_hierarchy *h;
	size_t l, nl = b->hl->nlevels, n = b->hl->nrows;
	int bad;

	if ((h = b->h = calloc(1, sizeof(*h))) == NULL)
		return DEID_ENOMEM;
	h->nlevels = nl;
	h->ndomain = calloc(nl, sizeof(*h->ndomain));
	h->values = calloc(nl, sizeof(*h->values));
	h->map = calloc(nl, sizeof(*h->map));
	h->up = calloc(nl, sizeof(*h->up));
	h->leaves = calloc(nl, sizeof(*h->leaves));
	h->index = calloc(1, sizeof(*h->index));
	b->tab = calloc(nl, sizeof(*b->tab));
	b->pline = calloc(nl, sizeof(*b->pline));
	b->code = calloc(nl, sizeof(*b->code));
	b->isnew = calloc(nl, sizeof(*b->isnew));
	bad = !h->ndomain || !h->values || !h->map || !h->up ||
	    !h->leaves || !h->index || !b->tab || !b->pline || !b->code ||
	    !b->isnew;
	for (l = 0; l < nl && !bad; l++) {
		h->values[l] = calloc(n, sizeof(*h->values[l]));
		h->map[l] = calloc(n, sizeof(*h->map[l]));
		b->pline[l] = calloc(n, sizeof(*b->pline[l]));
		if (l + 1 < nl)
			h->up[l] = calloc(n, sizeof(*h->up[l]));
		bad = !h->values[l] || !h->map[l] || !b->pline[l] ||
		    (l + 1 < nl && !h->up[l]);
	}
	return bad ? DEID_ENOMEM : DEID_OK;
}

/* Code of s at level l, or DEID_NO_CODE. */
static uint32_t
hbuild_find(const struct hbuild *b, size_t l, const char *s)
{
	const struct htab *t = &b->tab[l];
	size_t i;

	if (t->cap == 0)
		return DEID_NO_CODE;
	i = htab_probe(t, s, hash_str(s), b->h->values[l]);
	return t->slot[i] != 0 ? t->slot[i] - 1 : DEID_NO_CODE;
}

/* Shrink an array to n elements; keeping the larger block is harmless. */
static void *
trim(void *p, size_t n, size_t size)
{
	void *np = reallocarray(p, n ? n : 1, size);

	/* cppcheck takes the failure branch for a leak of np (NULL there) */
	/* cppcheck-suppress memleak */
	return np != NULL ? np : p;
}

/* Leaf counts per value (the Loss metric's shares), trimming, and the
 * leaf index handed over to the hierarchy. */
static int
hbuild_finish(struct hbuild *b)
{
	struct deid_hierarchy *h = b->h;
	size_t l, leaf;

	h->nleaves = h->ndomain[0];
	for (l = 0; l < h->nlevels; l++) {
		h->leaves[l] = calloc(h->ndomain[l], sizeof(*h->leaves[l]));
		if (h->leaves[l] == NULL)
			return DEID_ENOMEM;
		for (leaf = 0; leaf < h->nleaves; leaf++)
			h->leaves[l][h->map[l][leaf]]++;
		h->values[l] = trim(h->values[l], h->ndomain[l],
		    sizeof(*h->values[l]));
		h->map[l] = trim(h->map[l], h->nleaves, sizeof(*h->map[l]));
		if (h->up[l] != NULL)
			h->up[l] = trim(h->up[l], h->ndomain[l],
			    sizeof(*h->up[l]));
	}
	if ((h->star = calloc(h->nlevels, sizeof(*h->star))) == NULL)
		return DEID_ENOMEM;
	for (l = 0; l < h->nlevels; l++)
		h->star[l] = hbuild_find(b, l, DEID_SUPPRESSED);
	hbuild_warn_more(h);
	h->index->leaf = b->tab[0];
	memset(&b->tab[0], 0, sizeof(b->tab[0]));	/* transferred */
	return DEID_OK;
}

static void
hbuild_free(struct hbuild *b)
{
	size_t l;

	for (l = 0; b->hl != NULL && l < b->hl->nlevels; l++) {
		if (b->tab != NULL)
			htab_free(&b->tab[l]);
		if (b->pline != NULL)
			free(b->pline[l]);
	}
	free(b->tab);
	free(b->pline);
	free(b->code);
	free(b->isnew);
}

/* Pass two over the rows of hl; takes hl's pool on success. */
static int
hier_build(struct hload *hl, int strict, struct deid_hierarchy **out,
    struct deid_error *err)
{
	struct hbuild b;
	size_t i;
	int r;

	memset(&b, 0, sizeof(b));
	b.hl = hl;
	b.strict = strict;
	b.err = err;
	if (hl->nrows == 0) {
		r = deid_error_set(err, DEID_EINPUT, hl->name, 0, 0,
		    "empty file");
		goto out;
	}
	if (hbuild_alloc(&b) != DEID_OK) {
		r = deid_error_set(err, DEID_ENOMEM, hl->name, 0, 0,
		    "out of memory");
		goto out;
	}
	for (i = 0; i < hl->nrows; i++)
		if ((r = hbuild_row(&b, i)) != DEID_OK)
			goto out;
	if (hbuild_finish(&b) != DEID_OK) {
		r = deid_error_set(err, DEID_ENOMEM, hl->name, 0, 0,
		    "out of memory");
		goto out;
	}
	b.h->index->pool = (char *)hl->pool.d;
	wbuf_init(&hl->pool, 0);	/* transferred */
	*out = b.h;
	b.h = NULL;
	r = DEID_OK;
out:
	hbuild_free(&b);
	deid_hierarchy_free(b.h);
	return r;
}

/* Pool bytes never exceed the input plus one NUL per field. */
static void
hload_init(struct hload *hl, const char *name, size_t len)
{
	memset(hl, 0, sizeof(*hl));
	hl->name = name;
	wbuf_init(&hl->pool, len <= (SIZE_MAX - 2) / 2 ? 2 * len + 2 :
	    SIZE_MAX);
}

/* ARX writes ';' and labels often hold commas ("[0,4]", "Korea,
 * South", "Master's degree (MA, MS, ...)"), so a ';' anywhere in the
 * first row outvotes any number of commas. */
static char
hier_detect(const void *data, size_t len)
{
	size_t semicolons, commas;

	deid_csv_sep_counts(data, len, &semicolons, &commas);
	return semicolons > 0 ? ';' : ',';
}

int
deid_hierarchy_parse(const void *data, size_t len, const char *name,
    const struct deid_csv_opts *opts, struct deid_hierarchy **out,
    struct deid_error *err)
{
	struct deid_csv_opts o = { 0, 0 };
	struct hload hl;
	int r;

	*out = NULL;
	hload_init(&hl, name, len);
	if (opts != NULL)
		o = *opts;
	if (o.separator == 0)
		o.separator = hier_detect(data, len);
	r = deid_csv_parse(data, len, name, &o, hload_row, &hl, NULL, err);
	if (r == DEID_OK)
		r = hier_build(&hl, 0, out, err);
	if (r == DEID_OK && name != NULL &&
	    ((*out)->name = strdup(name)) == NULL) {
		deid_hierarchy_free(*out);
		*out = NULL;
		r = deid_error_set(err, DEID_ENOMEM, name, 0, 0,
		    "out of memory");
	}
	hload_free(&hl);
	return r;
}

int
deid_hierarchy_read(const char *path, const struct deid_csv_opts *opts,
    struct deid_hierarchy **out, struct deid_error *err)
{
	char *data = NULL;
	size_t len;
	int r;

	*out = NULL;
	if ((r = deid_file_read(path, &data, &len, err)) != DEID_OK)
		return r;
	r = deid_hierarchy_parse(data, len, path, opts, out, err);
	free(data);
	return r;
}

void
deid_hierarchy_free(struct deid_hierarchy *h)
{
	size_t l;

	if (h == NULL)
		return;
	for (l = 0; l < h->nlevels; l++) {
		if (h->values != NULL)
			free(h->values[l]);
		if (h->map != NULL)
			free(h->map[l]);
		if (h->up != NULL)
			free(h->up[l]);
		if (h->leaves != NULL)
			free(h->leaves[l]);
	}
	if (h->index != NULL) {
		htab_free(&h->index->leaf);
		free(h->index->pool);
		free(h->index);
	}
	free(h->values);
	free(h->map);
	free(h->up);
	free(h->leaves);
	free(h->star);
	free(h->warnings);
	free(h->ndomain);
	free(h->attribute);
	free(h->name);
	free(h);
}

size_t
deid_hierarchy_nwarnings(const struct deid_hierarchy *h)
{
	return h != NULL ? h->nwarnings : 0;
}

const struct deid_warning *
deid_hierarchy_warning(const struct deid_hierarchy *h, size_t i)
{
	return h != NULL && i < h->nwarnings ? &h->warnings[i] : NULL;
}

int
deid_hierarchy_lookup(const struct deid_hierarchy *h, const char *value,
    uint32_t *leaf)
{
	const struct htab *t;
	size_t i;

	if (h == NULL || value == NULL || h->index == NULL ||
	    h->index->leaf.cap == 0)
		return DEID_EINPUT;
	t = &h->index->leaf;
	i = htab_probe(t, value, hash_str(value), h->values[0]);
	if (t->slot[i] == 0)
		return DEID_EINPUT;
	*leaf = t->slot[i] - 1;
	return DEID_OK;
}

/* Lay the values out as the rows "value;*" of a two-level hierarchy. */
static int
flat_rows(struct hload *hl, const char *const *values, size_t n,
    struct deid_error *err)
{
	size_t i;

	hl->nlevels = 2;
	hl->off = reallocarray(NULL, n, 2 * sizeof(*hl->off));
	hl->line = reallocarray(NULL, n, sizeof(*hl->line));
	if (hl->off == NULL || hl->line == NULL ||
	    wbuf_put(&hl->pool, "*", 2) != BUF_OK)
		return deid_error_set(err, DEID_ENOMEM, NULL, 0, 0,
		    "out of memory");
	for (i = 0; i < n; i++) {
		if (values[i] == NULL)
			return deid_error_set(err, DEID_EINPUT, NULL, 0, 0,
			    "value %zu is NULL", i + 1);
		hl->off[2 * i] = hl->pool.len;
		hl->off[2 * i + 1] = 0;		/* the "*" */
		hl->line[i] = i + 1;
		if (wbuf_put(&hl->pool, values[i], strlen(values[i]) + 1) !=
		    BUF_OK)
			return deid_error_set(err, DEID_ENOMEM, NULL, 0, 0,
			    "out of memory");
	}
	hl->nrows = n;
	return DEID_OK;
}

/* Values come from data, so an empty string is a legitimate value here
 * (unlike in hierarchy files); repeats are an error. */
int
deid_hierarchy_flat(const char *const *values, size_t n,
    struct deid_hierarchy **out, struct deid_error *err)
{
	struct hload hl;
	int r;

	*out = NULL;
	if (values == NULL || n == 0)
		return deid_error_set(err, DEID_EINPUT, NULL, 0, 0,
		    "flat hierarchy without values");
	if (n >= UINT32_MAX - 1)
		return deid_error_set(err, DEID_ELIMIT, NULL, 0, 0,
		    "too many values");
	hload_init(&hl, NULL, SIZE_MAX / 2);
	if ((r = flat_rows(&hl, values, n, err)) == DEID_OK)
		r = hier_build(&hl, 1, out, err);
	hload_free(&hl);
	return r;
}
