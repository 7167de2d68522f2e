/*
 * deid/verify.c — re-derive a release's figures from its bytes
 * (deid/verify.h).  Parses the released CSV (untrusted when a custodian
 * or auditor verifies a file from elsewhere; runs in the deid worker).
 *
 * Classes are built here, independently of the search: each released
 * row's quasi-identifier strings become one length-prefixed key, looked
 * up byte for byte in this file's own hash table of the keys seen; a
 * new key is a new class, a known one counts a record to its class.
 */
#include "config.h"

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

struct v_ctx {
	const struct deid_verify_opts	*o;
	const char			*name;
	size_t				 ncols;
	size_t				 col[DEID_MAX_QI];	/* field of QI j */
	size_t				 len[DEID_MAX_QI];	/* its length */
	char				*arena;		/* distinct keys */
	size_t				 used, cap;
	char				*row;		/* the row's key */
	size_t				 rowcap;
	size_t				*coff;		/* [ncls] key offset */
	uint64_t			*ccount;	/* [ncls] records */
	uint64_t			*chash;		/* [ncls] key hash */
	size_t				 ncls, capcls;
	uint32_t			*slot;		/* class + 1, 0 empty */
	size_t				 nslot;
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
	if (i < len) {
		w = 0;
		memcpy(&w, s + i, len - i);
		h = (h ^ w) * 0x94d049bb133111ebULL;
	}
	return h ^ (h >> 29);
}

/* Header: where each QI is. */
static int
v_header(struct v_ctx *x, const char *const *f, size_t nf,
    struct deid_error *err)
{
	size_t i, j;

	x->ncols = nf;
	for (j = 0; j < x->o->nqi; j++) {
		for (i = 0; i < nf && strcmp(f[i], x->o->qi[j]) != 0; i++)
			;
		if (i == nf)
			return deid_error_set(err, DEID_EINPUT, x->name, 1, 0,
			    "no column named \"%s\" in the header",
			    x->o->qi[j]);
		x->col[j] = i;
		while (++i < nf)
			if (strcmp(f[i], x->o->qi[j]) == 0)
				return deid_error_set(err, DEID_EINPUT, x->name,
				    1, i + 1, "column \"%s\" appears twice in "
				    "the header", x->o->qi[j]);
	}
	return DEID_OK;
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

/* The row's key into x->row: [len0][bytes0][len1][bytes1]..., lengths
 * as uint32_t, so no byte of a value can fake a boundary. */
static int
v_row_key(struct v_ctx *x, const char *const *f, size_t *n)
{
	uint32_t len;
	size_t j;
	char *p;
	int r;

	for (*n = 0, j = 0; j < x->o->nqi; j++)
		*n += sizeof(len) + (x->len[j] = strlen(f[x->col[j]]));
	if ((r = v_reserve((void **)&x->row, &x->rowcap, *n, 1)) != DEID_OK)
		return r;
	for (p = x->row, j = 0; j < x->o->nqi; j++) {
		len = (uint32_t)x->len[j];
		memcpy(p, &len, sizeof(len));
		memcpy(p + sizeof(len), f[x->col[j]], len);
		p += sizeof(len) + len;
	}
	return DEID_OK;
}

/* Does class c's key equal the row's key[n]? */
static int
v_same(const struct v_ctx *x, size_t c, size_t n)
{
	uint32_t len;

	memcpy(&len, x->arena + x->coff[c], sizeof(len));
	return len == n && memcmp(x->arena + x->coff[c] + sizeof(len), x->row,
	    n) == 0;
}

/* Twice the slots, every class placed again. */
static int
v_rehash(struct v_ctx *x)
{
	size_t c, k, n = x->nslot ? 2 * x->nslot : 1 << 12;
	uint32_t *slot = calloc(n, sizeof(*slot));

	if (slot == NULL)
		return DEID_ENOMEM;
	for (c = 0; c < x->ncls; c++) {
		k = x->chash[c] & (n - 1);
		while (slot[k] != 0)
			k = (k + 1) & (n - 1);
		slot[k] = (uint32_t)c + 1;
	}
	free(x->slot);
	x->slot = slot;
	x->nslot = n;
	return DEID_OK;
}

/* Room for one more class. */
static int
v_class_room(struct v_ctx *x)
{
	size_t cap = x->capcls;

	if (x->ncls < cap)
		return DEID_OK;
	if (v_reserve((void **)&x->coff, &cap, x->ncls + 1, sizeof(*x->coff))
	    != DEID_OK ||
	    (x->ccount = realloc(x->ccount, cap * sizeof(*x->ccount))) ==
	    NULL ||
	    (x->chash = realloc(x->chash, cap * sizeof(*x->chash))) == NULL)
		return DEID_ENOMEM;
	x->capcls = cap;
	return DEID_OK;
}

/* A new class for the row's key[n] of hash hv, at slot k. */
static int
v_new_class(struct v_ctx *x, size_t k, size_t n, uint64_t hv)
{
	uint32_t len = (uint32_t)n;
	int r;

	if ((r = v_reserve((void **)&x->arena, &x->cap, x->used + sizeof(len) +
	    n, 1)) != DEID_OK || (r = v_class_room(x)) != DEID_OK)
		return r;
	memcpy(x->arena + x->used, &len, sizeof(len));
	memcpy(x->arena + x->used + sizeof(len), x->row, n);
	x->coff[x->ncls] = x->used;
	x->ccount[x->ncls] = 1;
	x->chash[x->ncls] = hv;
	x->used += sizeof(len) + n;
	x->slot[k] = (uint32_t)++x->ncls;
	return 2 * x->ncls > x->nslot ? v_rehash(x) : DEID_OK;
}

/* Count the row into its class (a new one if its key is new). */
static int
v_key(struct v_ctx *x, const char *const *f)
{
	uint64_t hv;
	size_t k, n;
	int r;

	if ((r = v_row_key(x, f, &n)) != DEID_OK ||
	    (x->nslot == 0 && (r = v_rehash(x)) != DEID_OK))
		return r;
	hv = v_hash(x->row, n);
	for (k = hv & (x->nslot - 1); x->slot[k] != 0;
	    k = (k + 1) & (x->nslot - 1))
		if (x->chash[x->slot[k] - 1] == hv &&
		    v_same(x, x->slot[k] - 1, n)) {
			x->ccount[x->slot[k] - 1]++;
			return DEID_OK;
		}
	if (x->ncls >= UINT32_MAX / 2)
		return DEID_ELIMIT;
	return v_new_class(x, k, n, hv);
}

static int
v_record(void *ctx, const char *const *f, size_t nf, unsigned long line,
    struct deid_error *err)
{
	struct v_ctx *x = ctx;
	size_t j;

	if (line == 1 && x->ncols == 0)
		return v_header(x, f, nf, err);
	if (nf != x->ncols)
		return deid_error_set(err, DEID_EINPUT, x->name, line, 0,
		    "record has %zu fields, the header has %zu", nf, x->ncols);
	x->records++;
	for (j = 0; j < x->o->nqi; j++)
		if (strcmp(f[x->col[j]], DEID_SUPPRESSED) != 0)
			return v_key(x, f);
	x->suppressed++;
	return DEID_OK;
}

/* Field j of the key at offset off (not NUL-terminated). */
static const char *
v_field(const struct v_ctx *x, size_t off, size_t j, uint32_t *len)
{
	const char *p = x->arena + off + sizeof(uint32_t);	/* past the total */

	for (;;) {
		memcpy(len, p, sizeof(*len));
		if (j-- == 0)
			return p + sizeof(*len);
		p += sizeof(*len) + *len;
	}
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

/* Leaves under QI j's value in the key at offset off. */
static uint64_t
v_key_leaves(const struct v_ctx *x, const struct v_level *lv, size_t off,
    size_t j)
{
	uint32_t len;
	const char *s = v_field(x, off, j, &len);

	return v_leaves(lv, s, len);
}

/* Does every released value of QI j sit at level lv? */
static int
v_level_holds(const struct v_ctx *x, size_t j, const struct v_level *lv,
    const char **bad, uint32_t *badlen)
{
	size_t c;

	for (c = 0; c < x->ncls; c++) {
		*bad = v_field(x, x->coff[c], j, badlen);
		if (v_leaves(lv, *bad, *badlen) == 0)
			return 0;
	}
	return 1;
}

/* The lowest level in lo..hi-1 that holds every value of QI j: DEID_OK
 * with *found set, or an error. */
static int
v_try_levels(const struct v_ctx *x, size_t j, size_t lo, size_t hi,
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
v_pick_level(const struct v_ctx *x, size_t j, struct v_level *lv,
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
	} else if (floor > 0 && floor < hi) {
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

/* Histogram of released class sizes; smallest class. */
static int
v_classes(const struct v_ctx *x, struct deid_hist *h, struct deid_verified *v)
{
	size_t c;
	int r;

	deid_hist_clear(h);
	for (c = 0; c < x->ncls; c++)
		if ((r = deid_hist_add(h, x->ccount[c], 1)) != DEID_OK)
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
	size_t i;

	if (o->crit.pu || o->npopulation > 0) {
		v->has_pu = 1;	/* exactly 0 with no sample unique */
		deid_model_estimate(o->crit.pu_model, h, o->crit.pu ?
		    o->crit.population : o->population[0], &v->pu);
	}
	if (deid_residual_list(o->population, o->npopulation,
	    o->residual_population, o->residual_bound, o->nresidual,
	    &v->residual, &v->nresidual) != DEID_OK)
		return DEID_ENOMEM;
	for (i = 0; i < v->nresidual; i++)
		deid_residual_check(h, o->crit.pu_model,
		    v->residual[i].population, v->residual[i].bound,
		    &v->residual[i]);
	return DEID_OK;
}

/* Information loss (Loss, DEID.md §4) from the released values, and
 * each class's IL for the game; lv[j] are the QIs' levels. */
static void
v_quality(const struct v_ctx *x, const struct v_level *lv,
    struct deid_verified *v)
{
	double terms[DEID_MAX_QI], R = (double)x->records, D, lo;
	const struct deid_hierarchy *h;
	uint64_t sum;
	size_t c, j;

	for (j = 0; j < x->o->nqi; j++) {
		h = x->o->h[j];
		sum = 0;
		for (c = 0; c < x->ncls; c++)
			sum += x->ccount[c] * v_key_leaves(x, &lv[j],
			    x->coff[c], j);
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
v_il(const struct v_ctx *x, const struct v_level *lv, size_t c)
{
	const struct deid_hierarchy *h;
	double s = 0;
	size_t j;

	for (j = 0; j < x->o->nqi; j++) {
		h = x->o->h[j];
		if (h->nleaves > 1)
			s += log((double)v_key_leaves(x, &lv[j], x->coff[c],
			    j)) / log((double)h->nleaves);
	}
	return s / (double)x->o->nqi;
}

/* The game: released records worth attacking, and those its criterion
 * would not release (IL needs the hierarchies: lv NULL without). */
static void
v_game(const struct v_ctx *x, const struct v_level *lv,
    struct deid_verified *v)
{
	struct deid_game gj = x->o->crit.game, *g = &gj;
	size_t c, n;
	double il;
	char msg[256];

	/* The journalist's fraction from the records in the file; without a
	 * population it stays 1 (prosecutor) and v_decide fails the table. */
	(void)deid_game_set_fraction(g, v->records, x->o->npopulation > 0 ?
	    x->o->population[0] : 0, msg, sizeof(msg));
	v->has_game = 1;
	for (c = 0; c < x->ncls; c++) {
		n = x->ccount[c];
		if (deid_game_attacks(g, n))
			v->attacked += n;
		il = lv != NULL ? v_il(x, lv, c) : 1;
		if (!deid_game_release(g, il, n))
			v->unreleasable += n;
	}
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
		v_quality(x, lv, v);
	else
		v->loss = v->loss_arithmetic = NAN;
	if (game)
		v_game(x, v->has_quality ? lv : NULL, v);
out:
	for (j = 0; j < nlv; j++)
		v_level_free(&lv[j]);
	return r;
}

int
deid_verify_release(const void *data, size_t len, const char *name,
    const struct deid_verify_opts *o, struct deid_verified *v,
    struct deid_error *err)
{
	struct v_ctx x;
	struct deid_hist *h = NULL;
	int r;

	memset(v, 0, sizeof(*v));
	memset(&x, 0, sizeof(x));
	x.o = o;
	x.name = name;
	if (o->nqi == 0 || o->nqi > DEID_MAX_QI)
		return deid_error_set(err, DEID_EINPUT, NULL, 0, 0, "1 to %d "
		    "quasi-identifiers", DEID_MAX_QI);
	if ((r = deid_csv_parse(data, len, name, &o->csv, v_record, &x, NULL,
	    err)) != DEID_OK)
		goto out;
	if (x.ncols == 0) {
		r = deid_error_set(err, DEID_EINPUT, name, 0, 0, "empty file");
		goto out;
	}
	v->records = x.records;
	v->suppressed = x.suppressed;
	v->suppressed_share = x.records ? (double)x.suppressed /
	    (double)x.records : 0;
	if ((h = deid_hist_alloc(64)) == NULL) {
		r = DEID_ENOMEM;
		goto out;
	}
	if ((r = v_classes(&x, h, v)) != DEID_OK ||
	    (r = v_risk(o, h, v)) != DEID_OK ||
	    (r = v_levels(&x, v, err)) != DEID_OK ||
	    (r = v_adversary(data, len, name, o, v, err)) != DEID_OK)
		goto out;
	v_decide(o, v);
out:
	deid_hist_free(h);
	free(x.arena);
	free(x.row);
	free(x.coff);
	free(x.ccount);
	free(x.chash);
	free(x.slot);
	return r;
}

void
deid_verified_free(struct deid_verified *v)
{
	free(v->residual);
	v->residual = NULL;
	v->nresidual = 0;
}
