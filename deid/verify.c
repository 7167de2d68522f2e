/*
 * deid/verify.c — re-derive a release's figures from its bytes
 * (deid/verify.h).  Parses the released CSV (untrusted when a custodian
 * or auditor verifies a file from elsewhere; runs in the deid worker).
 *
 * Classes are built here, independently of the search, from the written
 * strings: the file is streamed (deid_csv_scan_fd) and each row's QI
 * cells are read where they lie.  Each QI's distinct strings are
 * numbered in this file's own tables, keyed by length and first, last
 * and second eight bytes (all of a string of 24 bytes or fewer; a
 * longer one is also compared byte for byte) and placed by the top bits
 * of a multiplicative hash of the length and first and last eight; a
 * row's class is the tuple of its numbers, packed exactly into 128 bits
 * while their widths allow (else hashed, and the tuple compared), and
 * counted in an open-addressing table whose slot is fetched a few rows
 * ahead.  When the caller gives the levels, each QI's width starts at
 * its level's size and the table at the size the caller expects (a
 * hint: more grows them), so a release that keeps to its hierarchy is
 * hashed once.  Everything after the reading works on class sizes and
 * the distinct values alone.
 */
#include "config.h"

#include <sys/mman.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deid/game.h"
#include "deid/quality.h"
#include "deid/verify.h"

/* One level's values of a hierarchy with their leaf counts, behind an
 * open-addressing hash of the strings (slot: code + 1, 0 empty). */
struct v_level {
	char		**value;	/* the hierarchy's, not copied */
	uint64_t	 *leaves;
	uint32_t	 *slot;
	size_t		  nslot;
};

/* A released string's cheap key: its length and its first, last and
 * second eight bytes (overlapping), which hold every byte of a string
 * of 24 bytes or fewer; a longer one is also compared byte for byte.
 * w[1] is never 0 (1 below eight bytes; a release holds no NUL), so an
 * empty slot (all 0) is no string's. */
struct v_word {
	uint64_t	 w[3];
	uint32_t	 len;
	uint32_t	 id;		/* in a slot: the value's number + 1 */
};

/* One QI's distinct released values (copied into the arena), numbered
 * in reading order behind an open-addressing table of their keys, and
 * the leaves under each at the QI's level. */
struct v_values {
	size_t		*off;		/* [n] arena offset of the length */
	uint64_t	*leaves;	/* [n] */
	size_t		 n, cap;
	struct v_word	*slot;		/* id 0: empty */
	size_t		 nslot;		/* a power of two, 64 at least */
	unsigned	 shift;		/* 64 - log2(nslot) */
	size_t		 far;		/* values found past their slot */
	unsigned	 width;		/* bits of the largest number */
};

/* A class while the release is read: its key is the tuple of its QI
 * values' numbers, packed exactly into key[] while their widths add up
 * to 128 bits at most; beyond, key[] is a hash of the tuple and the
 * tuple itself (vid) is compared.  32 bytes: no slot straddles two
 * cache lines. */
struct v_slot {
	uint64_t	 key[2];
	uint64_t	 count;		/* records; 0: empty */
	size_t		 cls;		/* the class's number, in reading order */
};

/* Rows between reading and counting: a row's slot is fetched from
 * memory while the next rows are read (the table outgrows the caches). */
#define V_PIPE	8

struct v_pending {
	uint32_t	 id[DEID_MAX_QI];	/* its values' numbers */
	uint64_t	 key[2];
	uint64_t	 h;			/* v_key_hash(key) */
	unsigned	 gen;			/* packed at this x->wgen */
};

struct v_ctx {
	const struct deid_verify_opts	*o;
	const char			*name;
	size_t				 ncols;
	size_t				 col[DEID_MAX_QI];	/* field of QI j */
	char				*arena;		/* distinct values */
	size_t				 used, cap;
	struct v_values			 val[DEID_MAX_QI];
	unsigned			 bits;		/* sum of widths */
	unsigned			 pos[DEID_MAX_QI];	/* QI j's bit */
	size_t				 low;	/* QIs wholly in key[0] */
	unsigned			 wgen;		/* times a width grew */
	unsigned			 tgen;		/* the table's keys' */
	struct v_pending		 pend[V_PIPE];	/* a ring */
	size_t				 head, npend;
	struct v_slot			*slot;
	struct v_slot			*spare;	/* nslot slots, or NULL */
	size_t				 nslot, ncls;
	uint32_t			*vid;		/* [ncls][nqi] values */
	size_t				 vidcap;
	uint64_t			*ccount;	/* [ncls] records */
	uint64_t			 records, suppressed;
};

/* ---- reading the release ------------------------------------------ */

/* A hash of len bytes, eight at a time (multiply and fold). */
static uint64_t
v_hash(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ len, w;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
		h ^= h >> 31;
	}
	w = 0;
	if (i + 4 <= len) {
		memcpy(&w, s + i, 4);
		i += 4;
	}
	for (; i < len; i++)
		w = w << 8 | (uint8_t)s[i];
	h = (h ^ w) * 0x94d049bb133111ebULL;
	return h ^ (h >> 29);
}

/* Does span f hold the string s? */
static int
v_is(const struct deid_csv_span *f, const char *s)
{
	size_t n = strlen(s);

	return f->len == n && memcmp(f->p, s, n) == 0;
}

/* Grow *p (of *cap elements of size sz) to hold at least n. */
static int
v_reserve(void **p, size_t *cap, size_t n, size_t sz)
{
	size_t c;
	void *q;

	if (n <= *cap)
		return DEID_OK;
	for (c = *cap ? *cap : 4096; c < n; c *= 2)
		;
	if ((q = realloc(*p, c * sz)) == NULL)
		return DEID_ENOMEM;
	*p = q;
	*cap = c;
	return DEID_OK;
}

/* Called for every cell: inline wherever used. */
#define V_HOT	static inline __attribute__((always_inline))

/* The cheap key of span f. */
V_HOT void
v_word(const struct deid_csv_span *f, struct v_word *w)
{
	const char *s = f->p;
	size_t n = f->len;
	uint32_t a, b;

	w->len = (uint32_t)n;
	w->w[1] = 1;
	w->w[2] = 0;
	if (n >= 8) {
		memcpy(&w->w[0], s, 8);
		memcpy(&w->w[1], s + n - 8, 8);
		memcpy(&w->w[2], s + (n > 16 ? 8 : 0), 8);
	} else if (n >= 4) {
		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		w->w[0] = (uint64_t)a << 32 | b;
	} else	/* 0 to 3 bytes: the first, the middle and the last */
		w->w[0] = n == 0 ? 0 : (uint64_t)(uint8_t)s[0] |
		    (uint64_t)(uint8_t)s[n / 2] << 8 |
		    (uint64_t)(uint8_t)s[n - 1] << 16;
}

/* A slot for key w in a table of 2^(64 - shift): the product's top
 * bits, which every bit of the key reaches (values that differ in one
 * byte only, "Quarter 1" and "Quarter 2", land apart). */
V_HOT size_t
v_word_slot(const struct v_word *w, unsigned shift)
{
	uint64_t h = (w->w[0] ^ w->len) * 0x9e3779b97f4a7c15ULL ^
	    w->w[1] * 0xc2b2ae3d27d4eb4fULL;

	return (size_t)(h >> shift);
}

#define V_FAR_MAX	(1u << 14)	/* slots, grown for probes alone */

/* Twice the slots for a QI's values (or the first 64). */
static int
v_values_grow(struct v_values *vs)
{
	size_t i, k, n = vs->nslot ? 2 * vs->nslot : 64;
	unsigned shift = vs->nslot ? vs->shift - 1 : 58;
	struct v_word *slot = calloc(n, sizeof(*slot));

	if (slot == NULL)
		return DEID_ENOMEM;
	for (i = 0; i < vs->nslot; i++) {
		if (vs->slot[i].id == 0)
			continue;
		for (k = v_word_slot(&vs->slot[i], shift); slot[k].id != 0;
		    k = (k + 1) & (n - 1))
			;
		slot[k] = vs->slot[i];
	}
	free(vs->slot);
	vs->slot = slot;
	vs->nslot = n;
	vs->shift = shift;
	return DEID_OK;
}

/* Every QI's place in the key, from their widths. */
static void
v_layout(struct v_ctx *x)
{
	size_t j;

	for (x->bits = 0, x->low = 0, j = 0; j < x->o->nqi; j++) {
		x->pos[j] = x->bits;
		x->bits += x->val[j].width;
		if (x->bits <= 64 && x->pos[j] < 64)
			x->low = j + 1;
	}
}

/* Room for vs's largest number: its width doubles (few repacks), and
 * every QI's place in the key moves. */
static void
v_widen(struct v_ctx *x, struct v_values *vs)
{
	while ((vs->n - 1) >> vs->width != 0)
		vs->width = vs->width ? 2 * vs->width : 1;
	x->wgen++;
	v_layout(x);
}

/* A new value (key w) for QI j, numbered n, in slot k: its bytes to
 * the arena as a uint32_t length and the string. */
static int
v_new_value(struct v_ctx *x, size_t j, size_t k, const struct v_word *w,
    const struct deid_csv_span *f)
{
	struct v_values *vs = &x->val[j];
	uint32_t len = (uint32_t)f->len;

	if (vs->n >= UINT32_MAX / 2 || f->len > UINT32_MAX ||
	    v_reserve((void **)&x->arena, &x->cap, x->used + sizeof(len) +
	    f->len, 1) != DEID_OK ||
	    v_reserve((void **)&vs->off, &vs->cap, vs->n + 1,
	    sizeof(*vs->off)) != DEID_OK)
		return DEID_ENOMEM;
	memcpy(x->arena + x->used, &len, sizeof(len));
	memcpy(x->arena + x->used + sizeof(len), f->p, len);
	vs->off[vs->n] = x->used;
	x->used += sizeof(len) + len;
	vs->slot[k] = *w;
	vs->slot[k].id = (uint32_t)++vs->n;
	if ((vs->n - 1) >> vs->width != 0)
		v_widen(x, vs);
	return 4 * vs->n > vs->nslot ? v_values_grow(vs) : DEID_OK;
}

/* Do a and b, of len > 24 bytes whose first sixteen and last eight
 * agree, agree in between?  Eight bytes a test, the last overlapping. */
static int
v_same_middle(const char *a, const char *b, size_t len)
{
	uint64_t u, v;
	size_t i, at;

	for (i = 16; i < len - 8; i += 8) {
		at = i + 16 <= len ? i : len - 16;
		memcpy(&u, a + at, 8);
		memcpy(&v, b + at, 8);
		if (u != v)
			return 0;
	}
	return 1;
}

/* Is slot sl the value f of key w? */
V_HOT int
v_is_value(const struct v_ctx *x, const struct v_values *vs,
    const struct v_word *sl, const struct v_word *w,
    const struct deid_csv_span *f)
{
	return sl->w[0] == w->w[0] && sl->w[1] == w->w[1] &&
	    sl->w[2] == w->w[2] && sl->len == w->len && (w->len <= 24 ||
	    v_same_middle(x->arena + vs->off[sl->id - 1] + sizeof(w->len),
	    f->p, w->len));
}

/* The number of the value f (key w) in vs, or -1 with *k its free
 * slot. */
static long
v_probe(const struct v_ctx *x, const struct v_values *vs,
    const struct v_word *w, const struct deid_csv_span *f, size_t *k)
{
	const struct v_word *sl;

	for (*k = v_word_slot(w, vs->shift); (sl = &vs->slot[*k])->id != 0;
	    *k = (*k + 1) & (vs->nslot - 1))
		if (v_is_value(x, vs, sl, w, f))
			return (long)sl->id - 1;
	return -1;
}

/* The number of QI j's value f (a new one if new): the few cells not
 * found in their first slot, kept out of the per-cell loop.  Values
 * that share a first slot cost a probe at every cell: after four
 * probes a slot the table doubles (one more bit of the hash parts
 * them, half the time), up to V_FAR_MAX slots. */
static __attribute__((noinline)) int
v_intern(struct v_ctx *x, size_t j, const struct deid_csv_span *f,
    uint32_t *id)
{
	struct v_values *vs = &x->val[j];
	struct v_word w;
	size_t k;
	long n;

	v_word(f, &w);
	if ((n = v_probe(x, vs, &w, f, &k)) >= 0) {
		*id = (uint32_t)n;
		if (++vs->far < 4 * vs->nslot || vs->nslot >= V_FAR_MAX)
			return DEID_OK;
		vs->far = 0;
		return v_values_grow(vs);
	}
	*id = (uint32_t)vs->n;
	return v_new_value(x, j, k, &w, f);
}

/* The key of the tuple id[]: its numbers side by side in 128 bits when
 * they fit (exact), else a hash of the tuple. */
static void
v_pack(const struct v_ctx *x, const uint32_t *id, uint64_t key[2])
{
	uint64_t k0 = 0, k1 = 0, v;
	unsigned p;
	size_t j;

	if (x->bits > 128) {
		key[0] = v_hash((const char *)id, x->o->nqi * sizeof(*id));
		key[1] = 0;
		return;
	}
	for (j = 0; j < x->low; j++)	/* wholly in the first word */
		k0 |= (uint64_t)id[j] << x->pos[j];
	for (; j < x->o->nqi; j++) {
		v = id[j];
		if ((p = x->pos[j]) >= 64)
			k1 |= v << (p - 64);
		else {
			k0 |= v << p;
			k1 |= p > 0 ? v >> (64 - p) : 0;  /* bits past k0 */
		}
	}
	key[0] = k0;
	key[1] = k1;
}

/* A class key's hash: its low bits are the first slot to probe. */
static uint64_t
v_key_hash(const uint64_t key[2])
{
	uint64_t h = (key[0] ^ (key[1] * 0xc2b2ae3d27d4eb4fULL)) *
	    0xff51afd7ed558ccdULL;

	return h ^ (h >> 32);
}

/* The first slot to probe for a key. */
static size_t
v_slot_of(const struct v_ctx *x, const uint64_t key[2])
{
	return (size_t)v_key_hash(key) & (x->nslot - 1);
}

#define V_HUGE	(2u << 20)	/* a table this large asks for huge pages */

/* n empty slots, mapped and faulted in for writing at once: a slot is
 * read before it is written, and a page read first faults twice (the
 * shared zero page, then its copy); one call for all pages also costs
 * less than a fault each.  A table of V_HUGE or more asks for huge
 * pages (one TLB entry for what would take 512: every row's lookup
 * lands in a random place in it).  Both are hints: without them pages
 * fault in as touched. */
static struct v_slot *
v_slots_alloc(size_t n)
{
	size_t len = n * sizeof(struct v_slot);
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (len >= V_HUGE)
		(void)madvise(p, len, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
	(void)madvise(p, len, MADV_POPULATE_WRITE);
#endif
	return p;
}

/* Free a table of n slots from v_slots_alloc. */
static void
v_slots_free(struct v_slot *slot, size_t n)
{
	if (slot != NULL)
		(void)munmap(slot, n * sizeof(struct v_slot));
}

/* n empty slots for a rehash: a repack (the same size; early in a
 * release, every time a QI's width grows) empties the table the last
 * one left, rather than take fresh pages from the kernel each time. */
static struct v_slot *
v_slots_take(struct v_ctx *x, size_t n)
{
	struct v_slot *slot = x->spare;

	x->spare = NULL;
	if (slot != NULL && n == x->nslot) {
		memset(slot, 0, n * sizeof(*slot));
		return slot;
	}
	v_slots_free(slot, x->nslot);
	return v_slots_alloc(n);
}

/* A table of n slots with every class placed by its key (again, when a
 * width grew or the table filled up). */
static int
v_rehash(struct v_ctx *x, size_t n)
{
	struct v_slot *slot, *old = x->slot;
	size_t i, k, oldn = x->nslot;
	int repack = x->tgen != x->wgen;	/* else the keys hold */

	if ((slot = v_slots_take(x, n)) == NULL)
		return DEID_ENOMEM;
	x->slot = slot;
	x->nslot = n;
	for (i = 0; i < oldn; i++) {
		if (old[i].count == 0)
			continue;
		if (repack)
			v_pack(x, x->vid + old[i].cls * x->o->nqi, old[i].key);
		for (k = v_slot_of(x, old[i].key); slot[k].count != 0;
		    k = (k + 1) & (n - 1))
			;
		slot[k] = old[i];
	}
	if (n == oldn)		/* the next repack's */
		x->spare = old;
	else
		v_slots_free(old, oldn);
	x->tgen = x->wgen;
	return DEID_OK;
}

#define V_HINT_MAX	((size_t)1 << 22)	/* slots sized from a hint */

/* The class table's first size: 4096 slots, or room for the classes
 * hinted at (kept at most half full, as it grows) when the levels are
 * given too (else a width that grows would rehash the whole of it). */
static size_t
v_first_slots(const struct v_ctx *x)
{
	size_t n = 1 << 12;

	while (x->o->levels != NULL && n < V_HINT_MAX &&
	    n < 2 * (x->o->classes_hint + 1))
		n *= 2;
	return n;
}

/* Count the pending row p into its class (a new one if new). */
static int
v_count(struct v_ctx *x, struct v_pending *p)
{
	size_t k, nqi = x->o->nqi;
	const uint32_t *id = p->id;
	uint64_t *key = p->key;
	struct v_slot *sl;
	int r;

	if ((x->tgen != x->wgen || 2 * (x->ncls + 1) > x->nslot) &&
	    (r = v_rehash(x, 2 * (x->ncls + 1) > x->nslot ? (x->nslot ?
	    2 * x->nslot : v_first_slots(x)) : x->nslot)) != DEID_OK)
		return r;
	if (p->gen != x->wgen) {	/* a width grew since it was packed */
		v_pack(x, id, key);
		p->h = v_key_hash(key);
	}
	for (k = p->h & (x->nslot - 1); (sl = &x->slot[k])->count != 0;
	    k = (k + 1) & (x->nslot - 1))
		if (sl->key[0] == key[0] && sl->key[1] == key[1] &&
		    (x->bits <= 128 || memcmp(x->vid + sl->cls * nqi, id,
		    nqi * sizeof(*id)) == 0)) {
			sl->count++;
			return DEID_OK;
		}
	if ((r = v_reserve((void **)&x->vid, &x->vidcap, (x->ncls + 1) * nqi,
	    sizeof(*x->vid))) != DEID_OK)
		return r;
	memcpy(x->vid + x->ncls * nqi, id, nqi * sizeof(*id));
	*sl = (struct v_slot){ .key = { key[0], key[1] }, .count = 1,
	    .cls = x->ncls++ };
	return DEID_OK;
}

/* Count the oldest pending rows, up to n. */
static int
v_drain(struct v_ctx *x, size_t n)
{
	int r;

	for (; n > 0 && x->npend > 0; n--, x->npend--) {
		if ((r = v_count(x, &x->pend[x->head])) != DEID_OK)
			return r;
		x->head = (x->head + 1) % V_PIPE;
	}
	return DEID_OK;
}

/* The number of QI j's value f: a value seen before, in the slot its
 * key lands on, is found here, inline (most cells); the rest through
 * v_intern. */
V_HOT int
v_cell(struct v_ctx *x, size_t j, const struct deid_csv_span *f,
    uint32_t *id)
{
	const struct v_values *vs = &x->val[j];
	const struct v_word *sl;
	struct v_word w;

	v_word(f, &w);
	sl = &vs->slot[v_word_slot(&w, vs->shift)];
	if (v_is_value(x, vs, sl, &w, f)) {
		*id = sl->id - 1;
		return DEID_OK;
	}
	return v_intern(x, j, f, id);
}

/* The row's values numbered, its slot fetched; counted V_PIPE rows
 * later (or at the end). */
static int
v_key(struct v_ctx *x, const struct deid_csv_span *f)
{
	const size_t nqi = x->o->nqi, low = x->low;
	const unsigned gen = x->wgen;
	struct v_pending *p;
	uint64_t k0 = 0;
	uint32_t *id;
	size_t j;
	int r;

	if (x->npend == V_PIPE && (r = v_drain(x, 1)) != DEID_OK)
		return r;
	p = &x->pend[(x->head + x->npend) % V_PIPE];
	id = p->id;
	for (j = 0; j < nqi; j++) {	/* packed as read: exact if low */
		if ((r = v_cell(x, j, &f[x->col[j]], &id[j])) != DEID_OK)
			return r;
		k0 |= (uint64_t)id[j] << (x->pos[j] & 63);
	}
	x->npend++;
	p->gen = x->wgen;
	if (gen != x->wgen || low < nqi)	/* a width grew: repack */
		v_pack(x, id, p->key);
	else {				/* every number in the first word */
		p->key[0] = k0;
		p->key[1] = 0;
	}
	p->h = v_key_hash(p->key);
	if (x->nslot > 0)
		__builtin_prefetch(&x->slot[p->h & (x->nslot - 1)]);
	return DEID_OK;
}

/* Each class's count, in reading order, once every row is counted. */
static int
v_class_list(struct v_ctx *x)
{
	size_t i;

	v_slots_free(x->spare, x->nslot);
	x->spare = NULL;
	if (x->ncls == 0)
		return DEID_OK;
	if ((x->ccount = malloc(x->ncls * sizeof(*x->ccount))) == NULL)
		return DEID_ENOMEM;
	for (i = 0; i < x->nslot; i++)
		if (x->slot[i].count != 0)
			x->ccount[x->slot[i].cls] = x->slot[i].count;
	if (x->o->population_table == NULL) {	/* else v_pop_count's */
		v_slots_free(x->slot, x->nslot);
		x->slot = NULL;
	}
	return DEID_OK;
}

/* Bits for QI j's numbers at its given level: enough for the level's
 * values and the suppressed "*" (0: no level or no hierarchy given).
 * Widths start there, exactly, so a release that keeps to its
 * hierarchy is never repacked. */
static unsigned
v_domain_bits(const struct v_ctx *x, size_t j)
{
	const struct deid_hierarchy *h = x->o->h ? x->o->h[j] : NULL;
	size_t n;
	unsigned b = 0;

	if (h == NULL || x->o->levels == NULL ||
	    x->o->levels[j] >= h->nlevels)
		return 0;
	for (n = h->ndomain[x->o->levels[j]]; n >> b != 0; b++)
		;		/* numbers 0 .. n: the level's and "*" */
	return b;
}

/* Header: where each QI is; its values' first table. */
static int
v_header(struct v_ctx *x, const struct deid_csv_span *f, size_t nf,
    struct deid_error *err)
{
	size_t i, j;
	int r;

	x->ncols = nf;
	for (j = 0; j < x->o->nqi; j++) {
		for (i = 0; i < nf && !v_is(&f[i], x->o->qi[j]); i++)
			;
		if (i == nf)
			return deid_error_set(err, DEID_EINPUT, x->name, 1, 0,
			    "no column named \"%s\" in the header",
			    x->o->qi[j]);
		x->col[j] = i;
		while (++i < nf)
			if (v_is(&f[i], x->o->qi[j]))
				return deid_error_set(err, DEID_EINPUT, x->name,
				    1, i + 1, "column \"%s\" appears twice in "
				    "the header", x->o->qi[j]);
		if ((r = v_values_grow(&x->val[j])) != DEID_OK)
			return r;
		x->val[j].width = v_domain_bits(x, j);
	}
	v_layout(x);
	return DEID_OK;
}

static int
v_record(void *ctx, const struct deid_csv_span *f, size_t nf,
    unsigned long line, struct deid_error *err)
{
	struct v_ctx *x = ctx;
	const struct deid_csv_span *s;
	size_t j;

	if (line == 1 && x->ncols == 0)
		return v_header(x, f, nf, err);
	if (nf != x->ncols)
		return deid_error_set(err, DEID_EINPUT, x->name, line, 0,
		    "record has %zu fields, the header has %zu", nf, x->ncols);
	x->records++;
	for (j = 0; j < x->o->nqi; j++) {
		s = &f[x->col[j]];
		if (s->len != sizeof(DEID_SUPPRESSED) - 1 ||
		    memcmp(s->p, DEID_SUPPRESSED, s->len) != 0)
			return v_key(x, f);
	}
	x->suppressed++;
	return DEID_OK;
}

/* Value i of QI j (not NUL-terminated). */
static const char *
v_value(const struct v_ctx *x, size_t j, size_t i, uint32_t *len)
{
	const char *p = x->arena + x->val[j].off[i];

	memcpy(len, p, sizeof(*len));
	return p + sizeof(*len);
}

/* ---- hierarchies: leaves under a released value ------------------- */

/* Level l's values of h, hashed, with the leaves under each. */
static int
v_level_build(const struct deid_hierarchy *h, size_t l, struct v_level *lv)
{
	size_t i, n = h->ndomain[l], k;

	for (lv->nslot = 16; lv->nslot < 2 * n; lv->nslot *= 2)
		;
	if ((lv->slot = calloc(lv->nslot, sizeof(*lv->slot))) == NULL)
		return DEID_ENOMEM;
	lv->value = h->values[l];
	lv->leaves = h->leaves[l];
	for (i = 0; i < n; i++) {
		k = v_hash(lv->value[i], strlen(lv->value[i])) &
		    (lv->nslot - 1);
		while (lv->slot[k] != 0)
			k = (k + 1) & (lv->nslot - 1);
		lv->slot[k] = (uint32_t)i + 1;
	}
	return DEID_OK;
}

static void
v_level_free(struct v_level *lv)
{
	free(lv->slot);
	memset(lv, 0, sizeof(*lv));
}

/* Leaves under value s[len] at this level, 0 when it is not there. */
static uint64_t
v_leaves(const struct v_level *lv, const char *s, uint32_t len)
{
	size_t k = v_hash(s, len) & (lv->nslot - 1);
	const char *v;

	for (; lv->slot[k] != 0; k = (k + 1) & (lv->nslot - 1)) {
		v = lv->value[lv->slot[k] - 1];
		if (strncmp(v, s, len) == 0 && v[len] == '\0')
			return lv->leaves[lv->slot[k] - 1];
	}
	return 0;
}

/* Does every released value of QI j sit at level lv?  The leaves
 * under each, when they do. */
static int
v_level_holds(struct v_ctx *x, size_t j, const struct v_level *lv,
    const char **bad, uint32_t *badlen)
{
	struct v_values *vs = &x->val[j];
	size_t i;

	for (i = 0; i < vs->n; i++) {
		*bad = v_value(x, j, i, badlen);
		if ((vs->leaves[i] = v_leaves(lv, *bad, *badlen)) == 0)
			return 0;
	}
	return 1;
}

/* Leaves under class c's value of QI j. */
static uint64_t
v_class_leaves(const struct v_ctx *x, size_t c, size_t j)
{
	return x->val[j].leaves[x->vid[c * x->o->nqi + j]];
}

/* The lowest level in lo..hi-1 that holds every value of QI j: DEID_OK
 * with *found set, or an error. */
static int
v_try_levels(struct v_ctx *x, size_t j, size_t lo, size_t hi,
    struct v_level *lv, unsigned *level, int *found, const char **bad,
    uint32_t *badlen)
{
	const struct deid_hierarchy *h = x->o->h[j];
	size_t l;
	int r;

	*found = 0;
	for (l = lo; l < hi; l++) {
		if ((r = v_level_build(h, l, lv)) != DEID_OK)
			return r;
		if (v_level_holds(x, j, lv, bad, badlen)) {
			*level = (unsigned)l;
			*found = 1;
			return DEID_OK;
		}
		v_level_free(lv);
	}
	return DEID_OK;
}

/* QI j's level: the one given, or the lowest that holds every value,
 * looked for first at or above the Safe Harbor floor (a level there that
 * holds every value means the release is not below Safe Harbor, even
 * when a lower level happens to hold them too). */
static int
v_pick_level(struct v_ctx *x, size_t j, struct v_level *lv,
    unsigned *level, struct deid_error *err)
{
	const struct deid_hierarchy *h = x->o->h[j];
	size_t lo = 0, hi = h->nlevels, floor = x->o->crit.min_level[j];
	const char *bad = "";
	uint32_t badlen = 0;
	int r, found;

	if (x->o->levels != NULL) {
		if (x->o->levels[j] >= h->nlevels)
			return deid_error_set(err, DEID_EINPUT, x->name, 0, 0,
			    "column \"%s\": level %u is above its hierarchy",
			    x->o->qi[j], x->o->levels[j]);
		lo = x->o->levels[j];
		hi = lo + 1;
	}
	if ((x->val[j].leaves = calloc(x->val[j].n + 1,
	    sizeof(*x->val[j].leaves))) == NULL)
		return DEID_ENOMEM;
	if (x->o->levels == NULL && floor > 0 && floor < hi) {
		if ((r = v_try_levels(x, j, floor, hi, lv, level, &found,
		    &bad, &badlen)) != DEID_OK || found)
			return r;
		hi = floor;
	}
	if ((r = v_try_levels(x, j, lo, hi, lv, level, &found, &bad,
	    &badlen)) != DEID_OK || found)
		return r;
	return deid_error_set(err, DEID_EINPUT, x->name, 0, 0, "column "
	    "\"%s\": the released value \"%.*s\" is not a value of %s of its "
	    "hierarchy", x->o->qi[j], (int)(badlen > 64 ? 64 : badlen), bad,
	    x->o->levels != NULL ? "the transformation's level" : "any level");
}

/* ---- figures -------------------------------------------------------- */

#define V_SMALL	64	/* class sizes counted in an array first */

/* Histogram of released class sizes; smallest class.  Sizes below
 * V_SMALL (most classes) are tallied first, then added once each. */
static int
v_classes(const struct v_ctx *x, struct deid_hist *h, struct deid_verified *v)
{
	uint64_t small[V_SMALL] = { 0 };
	size_t c;
	int r;

	deid_hist_clear(h);
	for (c = 0; c < x->ncls; c++)
		if (x->ccount[c] < V_SMALL)
			small[x->ccount[c]]++;
		else if ((r = deid_hist_add(h, x->ccount[c], 1)) != DEID_OK)
			return r;
	for (c = 1; c < V_SMALL; c++)
		if ((r = deid_hist_add(h, c, small[c])) != DEID_OK)
			return r;
	v->classes = h->u;
	v->sample_uniques = h->c1;
	v->smallest_class = h->nsizes ? h->size[0] : 0;
	return DEID_OK;
}

/* PU for the first population and the residual checks. */
static int
v_risk(const struct deid_verify_opts *o, const struct deid_hist *h,
    struct deid_verified *v)
{
	double population = NAN;
	size_t i;

	if (o->crit.pu || o->npopulation > 0) {
		v->has_pu = 1;	/* exactly 0 with no sample unique */
		population = o->crit.pu ? o->crit.population :
		    o->population[0];
		deid_model_estimate(o->crit.pu_model, h, population, &v->pu);
	}
	if (deid_residual_list(o->population, o->npopulation,
	    o->residual_population, o->residual_bound, o->nresidual,
	    &v->residual, &v->nresidual) != DEID_OK)
		return DEID_ENOMEM;
	for (i = 0; i < v->nresidual; i++)	/* PU's population: known */
		deid_residual_with(h, o->crit.pu_model,
		    v->residual[i].population, v->residual[i].bound,
		    v->has_pu && v->residual[i].population == population ?
		    &v->pu : NULL, &v->residual[i]);
	return DEID_OK;
}

/* Information loss (ARX's Loss) from the released values' leaves
 * at the QIs' levels. */
static void
v_quality(const struct v_ctx *x, struct deid_verified *v)
{
	double terms[DEID_MAX_QI], R = (double)x->records, D, lo;
	const struct deid_hierarchy *h;
	uint64_t sum;
	size_t c, j;

	for (j = 0; j < x->o->nqi; j++) {
		h = x->o->h[j];
		sum = 0;
		for (c = 0; c < x->ncls; c++)
			sum += x->ccount[c] * v_class_leaves(x, c, j);
		D = (double)h->nleaves;
		lo = R / D;
		terms[j] = R - lo <= 0 ? 0 : ((double)sum / D +
		    (double)x->suppressed - lo) / (R - lo);
	}
	v->loss = deid_loss_combine_geometric(terms, x->o->nqi);
	v->loss_arithmetic = deid_loss_combine_mean(terms, x->o->nqi);
}

/* Wan's IL of class c: mean of ln(leaves)/ln|D| over its QIs. */
static double
v_il(const struct v_ctx *x, size_t c)
{
	const struct deid_hierarchy *h;
	double s = 0;
	size_t j;

	for (j = 0; j < x->o->nqi; j++) {
		h = x->o->h[j];
		if (h->nleaves > 1)
			s += log((double)v_class_leaves(x, c, j)) /
			    log((double)h->nleaves);
	}
	return s / (double)x->o->nqi;
}

/* ---- the journalist's population table ------------------------------ */

/* The number of QI j's released value s, or -1: not released. */
static long
v_find(const struct v_ctx *x, size_t j, const char *s)
{
	const struct v_values *vs = &x->val[j];
	struct deid_csv_span f = { s, strlen(s) };
	struct v_word w;
	size_t k;

	if (vs->nslot == 0)
		return -1;
	v_word(&f, &w);
	return v_probe(x, vs, &w, &f, &k);
}

/* The class of the tuple id[], or -1: none released. */
static long
v_find_class(const struct v_ctx *x, const uint32_t *id)
{
	size_t k, nqi = x->o->nqi;
	const struct v_slot *sl;
	uint64_t key[2];

	if (x->nslot == 0)
		return -1;
	v_pack(x, id, key);
	for (k = v_slot_of(x, key); (sl = &x->slot[k])->count != 0;
	    k = (k + 1) & (x->nslot - 1))
		if (sl->key[0] == key[0] && sl->key[1] == key[1] &&
		    (x->bits <= 128 || memcmp(x->vid + sl->cls * nqi, id,
		    nqi * sizeof(*id)) == 0))
			return (long)sl->cls;
	return -1;
}

/* tr[d]: the released number of the population column's value d
 * generalized to QI j's level l (UINT32_MAX: not released). */
static int
v_pop_column(const struct v_ctx *x, size_t j, unsigned l,
    const struct deid_column *c, size_t col, uint32_t *tr,
    struct deid_error *err)
{
	const struct deid_hierarchy *h = x->o->h[j];
	const struct deid_dataset *pop = x->o->population_table;
	uint32_t leaf;
	long id;
	size_t d;

	for (d = 0; d < c->ndict; d++) {
		if (deid_hierarchy_lookup(h, c->dict[d], &leaf) != DEID_OK)
			return deid_error_set(err, DEID_EINPUT, pop->path,
			    c->first_line[d], (unsigned long)col + 1,
			    "population value \"%.200s\" of column \"%s\" is "
			    "not in its hierarchy", c->dict[d], x->o->qi[j]);
		id = v_find(x, j, h->values[l][h->map[l][leaf]]);
		tr[d] = id < 0 ? UINT32_MAX : (uint32_t)id;
	}
	return DEID_OK;
}

/* pop[c]: the population table's rows in released class c, each row's
 * QI values generalized to the release's levels and matched by their
 * released strings. */
static int
v_pop_count(const struct v_ctx *x, const unsigned *levels, uint64_t *pop,
    struct deid_error *err)
{
	const struct deid_dataset *p = x->o->population_table;
	const struct deid_column *c[DEID_MAX_QI];
	uint32_t *tr[DEID_MAX_QI] = { NULL }, id[DEID_MAX_QI];
	size_t j, i, nqi = x->o->nqi;
	long col, k;
	int r = DEID_OK;

	for (j = 0; j < nqi && r == DEID_OK; j++) {
		if ((col = deid_dataset_column(p, x->o->qi[j])) < 0) {
			r = deid_error_set(err, DEID_EINPUT, p->path, 1, 0,
			    "the population table has no column \"%s\"",
			    x->o->qi[j]);
			break;
		}
		c[j] = &p->cols[col];
		if ((tr[j] = calloc(c[j]->ndict + 1, sizeof(uint32_t))) ==
		    NULL)
			r = DEID_ENOMEM;
		else
			r = v_pop_column(x, j, levels[j], c[j], (size_t)col,
			    tr[j], err);
	}
	for (i = 0; r == DEID_OK && i < p->nrows; i++) {
		for (j = 0; j < nqi; j++)
			if ((id[j] = tr[j][c[j]->codes[i]]) == UINT32_MAX)
				break;
		if (j == nqi && (k = v_find_class(x, id)) >= 0)
			pop[k]++;
	}
	for (j = 0; j < nqi; j++)
		free(tr[j]);
	return r;
}

/* The game: released records worth attacking, and those its criterion
 * would not release (IL needs the hierarchies: 1 without).  With a
 * population table SP = 1/F, F counted from the table (a class it
 * lacks: SP = 1, fail closed). */
static int
v_game(const struct v_ctx *x, int leaves, struct deid_verified *v,
    struct deid_error *err)
{
	struct deid_game gj = x->o->crit.game, *g = &gj;
	uint64_t *pop = NULL;
	size_t c, n;
	double il;
	char msg[256];
	int r;

	/* The journalist's fraction from the records in the file; without a
	 * population it stays 1 (prosecutor) and v_decide fails the table. */
	g->table = x->o->population_table != NULL;
	(void)deid_game_set_fraction(g, v->records, x->o->npopulation > 0 ?
	    x->o->population[0] : 0, msg, sizeof(msg));
	if (deid_game_uses_table(g)) {
		if (!leaves)
			return deid_error_set(err, DEID_EINPUT, NULL, 0, 0,
			    "a population table needs every QI's hierarchy");
		if ((pop = calloc(x->ncls + 1, sizeof(*pop))) == NULL)
			return DEID_ENOMEM;
		if ((r = v_pop_count(x, v->levels, pop, err)) != DEID_OK) {
			free(pop);
			return r;
		}
		v->has_population_table = 1;
		v->population_rows = x->o->population_table->nrows;
	}
	v->has_game = 1;
	for (c = 0; c < x->ncls; c++) {
		n = deid_game_size(g, x->ccount[c], pop != NULL ? pop[c] : 0);
		if (deid_game_attacks(g, n))
			v->attacked += x->ccount[c];
		il = leaves ? v_il(x, c) : 1;
		if (!deid_game_release(g, il, n))
			v->unreleasable += x->ccount[c];
		if (pop != NULL && pop[c] == 0)
			v->population_absent += x->ccount[c];
	}
	free(pop);
	return DEID_OK;
}

/* ---- the verdict ---------------------------------------------------- */

static void __attribute__((format(printf, 2, 3)))
v_fail(struct deid_verified *v, const char *fmt, ...)
{
	va_list ap;

	v->passed = 0;
	if (v->nreasons == DEID_VERIFY_MAX_REASONS)
		return;
	va_start(ap, fmt);
	vsnprintf(v->reasons[v->nreasons++], sizeof(v->reasons[0]), fmt, ap);
	va_end(ap);
}

/* No QI below its Safe Harbor level: needs the levels, so the
 * hierarchies; without them the floor cannot be shown to hold. */
static void
v_floor(const struct deid_verify_opts *o, struct deid_verified *v)
{
	size_t j;

	if (!deid_criteria_has_floor(&o->crit, o->nqi))
		return;
	if (!v->has_quality) {
		v_fail(v, "the Safe Harbor levels cannot be checked without "
		    "the hierarchies");
		return;
	}
	for (j = 0; j < o->nqi; j++)
		if (v->levels[j] < o->crit.min_level[j])
			v_fail(v, "%s is at level %u, below its Safe Harbor "
			    "level %u", o->qi[j], v->levels[j],
			    o->crit.min_level[j]);
}

/* Every criterion on the re-derived figures. */
static void
v_decide(const struct deid_verify_opts *o, struct deid_verified *v)
{
	const struct deid_criteria *c = &o->crit;
	const struct deid_residual *rs;
	size_t i;

	v->passed = 1;
	v->nothing_released = v->records == v->suppressed;
	v->over_warn = v->suppressed_share > o->warn_suppressed;
	if (v->nothing_released && v->records == 0)
		v_fail(v, "nothing released: the table has no records");
	else if (v->nothing_released)
		v_fail(v, "nothing released: all %llu records are suppressed",
		    (unsigned long long)v->records);
	if (c->k > 1 && v->smallest_class > 0 && v->smallest_class < c->k)
		v_fail(v, "a released class has %llu records, fewer than "
		    "k = %u", (unsigned long long)v->smallest_class, c->k);
	if (v->suppressed_share > c->suppression_limit + 1e-12)
		v_fail(v, "%.2f%% of the records are suppressed, above the "
		    "suppression limit of %g%%", 100 * v->suppressed_share,
		    100 * c->suppression_limit);
	if (c->pu && v->sample_uniques > 0 && v->pu.status != DEID_OK)
		v_fail(v, "PU could not be estimated (%s)", v->pu.error);
	else if (c->pu && v->pu.fraction > c->pu_threshold)
		v_fail(v, "PU = %.6g exceeds the threshold %g",
		    v->pu.fraction, c->pu_threshold);
	for (i = 0; i < v->nresidual; i++) {
		rs = &v->residual[i];
		if (rs->passed)
			continue;
		if (isnan(rs->ratio))
			v_fail(v, "PU/SU for population %.6g could not be "
			    "estimated (%s)", rs->population, rs->est.error);
		else
			v_fail(v, "PU/SU = %.4f exceeds the bound %.4f for "
			    "population %.6g", rs->ratio, rs->bound,
			    rs->population);
	}
	v_floor(o, v);
	if (v->has_game && c->game.risk == DEID_GAME_JOURNALIST &&
	    !v->has_population_table &&
	    (o->npopulation == 0 || !(o->population[0] >= 1)))
		v_fail(v, "the journalist's success probability needs the "
		    "population");
	if (v->has_game && v->unreleasable > 0)
		v_fail(v, "%llu released records fail the game's %s criterion",
		    (unsigned long long)v->unreleasable,
		    deid_game_variant_name(c->game.variant));
	if (v->has_adversary && o->max_adversarial_risk > 0 &&
	    v->adversary.mean[DEID_ADV_OVERALL] > o->max_adversarial_risk)
		v_fail(v, "the adversarial risk = %.4f exceeds the bound %g "
		    "(attacker %s, seed %llu)",
		    v->adversary.mean[DEID_ADV_OVERALL],
		    o->max_adversarial_risk, o->attacker->name,
		    (unsigned long long)o->adversary_seed);
}

/* Xia 2021's adversarial risk on the same bytes (deid/adversary.h). */
static int
v_adversary(const void *data, size_t len, const char *name,
    const struct deid_verify_opts *o, struct deid_verified *v,
    struct deid_error *err)
{
	struct deid_adversary_opts ao = { o->qi, o->nqi, 0, o->adversary_seed,
	    o->adversary_workers, o->csv };

	if (o->attacker == NULL)
		return DEID_OK;
	if (o->npopulation == 0)
		return deid_error_set(err, DEID_EINPUT, o->attacker->name, 0,
		    0, "the adversarial risk needs a population size");
	ao.population = o->population[0];
	v->has_adversary = 1;
	v->max_adversarial_risk = o->max_adversarial_risk;
	return deid_adversary_release(data, len, name, o->attacker, &ao,
	    &v->adversary, err);
}

/* ---- the call ------------------------------------------------------- */

/* Quality and game figures, which need the QIs' levels. */
static int
v_levels(struct v_ctx *x, struct deid_verified *v, struct deid_error *err)
{
	struct v_level lv[DEID_MAX_QI];
	size_t j, nlv = 0;
	int r = DEID_OK, game = x->o->crit.game.variant != DEID_GAME_OFF;

	memset(lv, 0, sizeof(lv));
	v->has_quality = x->o->h != NULL;
	for (j = 0; v->has_quality && j < x->o->nqi; j++)
		v->has_quality = x->o->h[j] != NULL;
	for (j = 0; v->has_quality && j < x->o->nqi; j++, nlv++)
		if ((r = v_pick_level(x, j, &lv[j], &v->levels[j], err)) !=
		    DEID_OK)
			goto out;
	if (v->has_quality)
		v_quality(x, v);
	else
		v->loss = v->loss_arithmetic = NAN;
	if (game)
		r = v_game(x, v->has_quality, v, err);
out:
	for (j = 0; j < nlv; j++)
		v_level_free(&lv[j]);
	return r;
}

/* The figures and the verdict from the classes read (parse status r). */
static int
v_finish(struct v_ctx *x, int r, const void *data, size_t len,
    struct deid_verified *v, struct deid_error *err)
{
	struct deid_hist *h = NULL;
	size_t j;

	if (r == DEID_OK && x->ncols == 0)
		r = deid_error_set(err, DEID_EINPUT, x->name, 0, 0,
		    "empty file");
	if (r == DEID_OK)
		r = v_drain(x, V_PIPE);
	if (r != DEID_OK)
		goto out;
	v->records = x->records;
	v->suppressed = x->suppressed;
	v->suppressed_share = x->records ? (double)x->suppressed /
	    (double)x->records : 0;
	if ((h = deid_hist_alloc(64)) == NULL) {
		r = DEID_ENOMEM;
		goto out;
	}
	if ((r = v_class_list(x)) != DEID_OK ||
	    (r = v_classes(x, h, v)) != DEID_OK ||
	    (r = v_risk(x->o, h, v)) != DEID_OK ||
	    (r = v_levels(x, v, err)) != DEID_OK ||
	    (r = v_adversary(data, len, x->name, x->o, v, err)) != DEID_OK)
		goto out;
	v_decide(x->o, v);
out:
	deid_hist_free(h);
	free(x->arena);
	for (j = 0; j < DEID_MAX_QI; j++) {
		free(x->val[j].off);
		free(x->val[j].leaves);
		free(x->val[j].slot);
	}
	free(x->vid);
	free(x->ccount);
	v_slots_free(x->spare, x->nslot);
	v_slots_free(x->slot, x->nslot);
	return r;
}

/* Set up x for a release of o's columns. */
static int
v_start(struct v_ctx *x, const char *name, const struct deid_verify_opts *o,
    struct deid_verified *v, struct deid_error *err)
{
	memset(v, 0, sizeof(*v));
	memset(x, 0, sizeof(*x));
	x->o = o;
	x->name = name;
	if (o->nqi == 0 || o->nqi > DEID_MAX_QI)
		return deid_error_set(err, DEID_EINPUT, NULL, 0, 0, "1 to %d "
		    "quasi-identifiers", DEID_MAX_QI);
	return DEID_OK;
}

int
deid_verify_release(const void *data, size_t len, const char *name,
    const struct deid_verify_opts *o, struct deid_verified *v,
    struct deid_error *err)
{
	struct v_ctx x;
	int r;

	if ((r = v_start(&x, name, o, v, err)) != DEID_OK)
		return r;
	r = deid_csv_scan(data, len, name, &o->csv, v_record, &x, NULL, err);
	return v_finish(&x, r, data, len, v, err);
}

int
deid_verify_fd(int fd, const char *name, const struct deid_verify_opts *o,
    struct deid_verified *v, struct deid_error *err)
{
	struct v_ctx x;
	char *data;
	size_t len;
	int r;

	if (o->attacker != NULL) {	/* its Monte Carlo reads the table whole */
		if ((r = deid_fd_read(fd, name, &data, &len, err)) != DEID_OK)
			return r;
		r = deid_verify_release(data, len, name, o, v, err);
		free(data);
		return r;
	}
	if ((r = v_start(&x, name, o, v, err)) != DEID_OK)
		return r;
	r = deid_csv_scan_fd(fd, name, &o->csv, v_record, &x, NULL, err);
	return v_finish(&x, r, NULL, 0, v, err);
}

void
deid_verified_free(struct deid_verified *v)
{
	free(v->residual);
	v->residual = NULL;
	v->nresidual = 0;
}
