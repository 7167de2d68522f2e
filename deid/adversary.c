/*
 * deid/adversary.c — Xia et al. 2021's adversarial risk (deid/adversary.h).
 *
 * The table is read into per-QI codes (each column's own dictionary);
 * a row with "*" in every QI is suppressed: no subject, and it matches
 * everyone.  For each knowledge pattern (a subset of the attacker's
 * groups, and the worst case: every QI) the subjects are grouped on the
 * known QIs: a_t is the subject's class size there plus the suppressed
 * rows, and the Pitman ratio PU/SU of that projection ((estimated
 * population uniques / N) / (sample uniques / n), at most 1) is b_t for a subject with
 * a_t = 1.  Then every subject runs its trials with its own generator,
 * seeded from (seed, subject), so the figures do not depend on how the
 * subjects are split between the workers.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "deid/adversary.h"
#include "deid/risk.h"

#define ADV_MAX_TRIALS	1000000u

const char *
deid_adv_risk_name(enum deid_adv_risk r)
{
	static const char *const names[] = {
		"prosecutor", "journalist", "marketer", "overall"
	};

	return (unsigned)r < DEID_ADV_NRISKS ? names[r] : "?";
}

/* ---- the attacker file -------------------------------------------- */

struct a_line {
	const char	*name;
	unsigned long	 line;
	char		 tok[DEID_ADV_MAX_ATTRS + 2][256];
	unsigned long	 col[DEID_ADV_MAX_ATTRS + 2];
	size_t		 ntok;
};

/* Split the next line of b into whitespace-separated tokens (a '#'
 * starts a comment).  Columns are 1-based byte offsets. */
static int
a_tokens(struct buf *b, struct a_line *l, struct deid_error *err)
{
	unsigned long col = 0;
	size_t n = 0;
	uint8_t c;
	int in = 0, comment = 0;

	l->ntok = 0;
	while (buf_get_u8(b, &c) == BUF_OK && c != '\n') {
		col++;
		if (c == '#')
			comment = 1;
		if (comment || c == '\r')
			continue;
		if (c == ' ' || c == '\t') {
			in = 0;
			continue;
		}
		if (c < 0x20 || c == 0x7f)
			return deid_error_set(err, DEID_EINPUT, l->name,
			    l->line, col, "control character 0x%02x", c);
		if (!in) {
			if (l->ntok == DEID_ADV_MAX_ATTRS + 2)
				return deid_error_set(err, DEID_EINPUT,
				    l->name, l->line, col, "more than %d "
				    "words on a line", DEID_ADV_MAX_ATTRS + 2);
			l->col[l->ntok++] = col;
			n = 0;
			in = 1;
		}
		if (n + 1 >= sizeof(l->tok[0]))
			return deid_error_set(err, DEID_EINPUT, l->name,
			    l->line, col, "word longer than %zu bytes",
			    sizeof(l->tok[0]) - 1);
		l->tok[l->ntok - 1][n++] = (char)c;
		l->tok[l->ntok - 1][n] = '\0';
	}
	return DEID_OK;
}

/* A probability in [0, 1] (or, with max > 1, an integer 1..max). */
static int
a_number(const struct a_line *l, size_t i, double max, double *v,
    struct deid_error *err)
{
	char *end;

	if (i >= l->ntok)
		return deid_error_set(err, DEID_EINPUT, l->name, l->line,
		    l->col[0], "\"%s\" needs a value", l->tok[0]);
	*v = strtod(l->tok[i], &end);
	if (*end != '\0' || !isfinite(*v) || *v < 0 || *v > max ||
	    (max > 1 && (*v < 1 || *v != floor(*v))))
		return deid_error_set(err, DEID_EINPUT, l->name, l->line,
		    l->col[i], max > 1 ? "\"%s\" is not an integer 1..%.0f" :
		    "\"%s\" is not a probability in [0, 1]", l->tok[i], max);
	return DEID_OK;
}

static int
a_group(struct deid_attacker *a, const struct a_line *l,
    struct deid_error *err)
{
	struct deid_attacker_group *g;
	size_t i, j, k;
	int r;

	if (a->ngroups == DEID_ADV_MAX_GROUPS)
		return deid_error_set(err, DEID_EINPUT, l->name, l->line,
		    l->col[0], "more than %d groups", DEID_ADV_MAX_GROUPS);
	g = &a->group[a->ngroups];
	if ((r = a_number(l, 1, 1, &g->p, err)) != DEID_OK)
		return r;
	if (l->ntok < 3)
		return deid_error_set(err, DEID_EINPUT, l->name, l->line,
		    l->col[1], "a group names at least one attribute");
	for (i = 2; i < l->ntok; i++) {
		for (j = 0; j <= a->ngroups; j++)
			for (k = 0; k < a->group[j].nattr; k++)
				if (strcmp(a->group[j].attr[k], l->tok[i]) == 0)
					return deid_error_set(err, DEID_EINPUT,
					    l->name, l->line, l->col[i],
					    "\"%s\" is already in the group "
					    "of line %lu", l->tok[i],
					    j < a->ngroups ? a->group[j].line :
					    l->line);
		if ((g->attr[g->nattr] = strdup(l->tok[i])) == NULL)
			return DEID_ENOMEM;
		g->nattr++;
	}
	g->line = l->line;
	a->ngroups++;
	return DEID_OK;
}

/* coverage P ATTR VALUE...: a coverage for some subjects only. */
static int
a_rule(struct deid_attacker *a, const struct a_line *l,
    struct deid_error *err)
{
	struct deid_attacker_rule *u;
	size_t i;
	int r;

	if (a->nrules == DEID_ADV_MAX_RULES)
		return deid_error_set(err, DEID_EINPUT, l->name, l->line,
		    l->col[0], "more than %d coverage lines with a condition",
		    DEID_ADV_MAX_RULES);
	u = &a->rule[a->nrules];
	if ((r = a_number(l, 1, 1, &u->p, err)) != DEID_OK)
		return r;
	if (l->ntok < 4)
		return deid_error_set(err, DEID_EINPUT, l->name, l->line,
		    l->col[2], "a conditional coverage names an attribute and "
		    "at least one value");
	if ((u->attr = strdup(l->tok[2])) == NULL)
		return DEID_ENOMEM;
	a->nrules++;
	for (i = 3; i < l->ntok; i++, u->nvalue++)
		if ((u->value[u->nvalue] = strdup(l->tok[i])) == NULL)
			return DEID_ENOMEM;
	u->line = l->line;
	return DEID_OK;
}

/* One line's directive; seen[] marks the keys already given. */
static int
a_directive(struct deid_attacker *a, const struct a_line *l, int seen[6],
    struct deid_error *err)
{
	static const char *const keys[] = { "trials", "p_m", "p_fm", "p_c",
	    "p_cu", "coverage" };
	double *p[] = { NULL, &a->p_m, &a->p_fm, &a->p_c, &a->p_cu,
	    &a->coverage }, v;
	size_t i;
	int r;

	if (strcmp(l->tok[0], "group") == 0)
		return a_group(a, l, err);
	if (strcmp(l->tok[0], "coverage") == 0 && l->ntok > 2)
		return a_rule(a, l, err);
	for (i = 0; i < 6 && strcmp(l->tok[0], keys[i]) != 0; i++)
		;
	if (i == 6)
		return deid_error_set(err, DEID_EINPUT, l->name, l->line,
		    l->col[0], "unknown directive \"%s\" (trials, coverage, "
		    "p_m, p_fm, p_c, p_cu, group)", l->tok[0]);
	if (seen[i]++)
		return deid_error_set(err, DEID_EINPUT, l->name, l->line,
		    l->col[0], "\"%s\" given twice", keys[i]);
	if (l->ntok > 2)
		return deid_error_set(err, DEID_EINPUT, l->name, l->line,
		    l->col[2], "\"%s\" takes one value", keys[i]);
	if ((r = a_number(l, 1, i == 0 ? ADV_MAX_TRIALS : 1, &v, err)) !=
	    DEID_OK)
		return r;
	if (i == 0)
		a->trials = (unsigned)v;
	else
		*p[i] = v;
	return DEID_OK;
}

void
deid_attacker_free(struct deid_attacker *a)
{
	size_t i, j;

	if (a == NULL)
		return;
	for (i = 0; i < DEID_ADV_MAX_GROUPS; i++)
		for (j = 0; j < a->group[i].nattr; j++)
			free(a->group[i].attr[j]);
	for (i = 0; i < a->nrules; i++) {
		free(a->rule[i].attr);
		for (j = 0; j < a->rule[i].nvalue; j++)
			free(a->rule[i].value[j]);
	}
	free(a);
}

int
deid_attacker_parse(const void *data, size_t len, const char *name,
    struct deid_attacker **out, struct deid_error *err)
{
	struct deid_attacker *a;
	struct a_line *l;
	struct buf b;
	int seen[6] = { 0 }, r = DEID_OK;

	*out = NULL;
	if ((a = calloc(1, sizeof(*a))) == NULL ||
	    (l = calloc(1, sizeof(*l))) == NULL) {
		free(a);
		return deid_error_set(err, DEID_ENOMEM, name, 0, 0,
		    "out of memory");
	}
	snprintf(a->name, sizeof(a->name), "%s", name);
	a->trials = 1000;
	a->p_m = a->p_fm = a->p_c = a->p_cu = 0.5;
	a->coverage = 1;
	l->name = name;
	buf_init(&b, data, len);
	while (r == DEID_OK && !buf_eof(&b)) {
		l->line++;
		if ((r = a_tokens(&b, l, err)) == DEID_OK && l->ntok > 0)
			r = a_directive(a, l, seen, err);
	}
	if (r == DEID_OK && a->ngroups == 0)
		r = deid_error_set(err, DEID_EINPUT, name, l->line, 0,
		    "no group: an attacker knows at least one group of "
		    "attributes (\"group P ATTR...\")");
	free(l);
	if (r == DEID_ENOMEM)
		deid_error_set(err, r, name, 0, 0, "out of memory");
	if (r != DEID_OK) {
		deid_attacker_free(a);
		return r;
	}
	*out = a;
	return DEID_OK;
}

/* ---- the table ----------------------------------------------------- */

/* One QI's dictionary: open addressing over its distinct strings. */
struct t_dict {
	char		**s;
	size_t		  n, cap;
	uint32_t	 *slot;		/* code + 1, 0 empty */
	size_t		  nslot;
};

struct t_ctx {
	const char			*name;
	const struct deid_adversary_opts *o;
	size_t				 col[DEID_ADV_MAX_QI];
	struct t_dict			 d[DEID_ADV_MAX_QI];
	uint32_t			*code;		/* [nsub * nqi] */
	size_t				 nsub, cap;
	uint64_t			 records, suppressed;
	int				 header;
};

static uint64_t
t_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ULL;
	return h;
}

static int
t_dict_grow(struct t_dict *d)
{
	size_t ns = d->nslot ? 2 * d->nslot : 1024, i, k;
	uint32_t *slot = calloc(ns, sizeof(*slot));

	if (slot == NULL)
		return DEID_ENOMEM;
	for (i = 0; i < d->n; i++) {
		for (k = t_hash(d->s[i]) & (ns - 1); slot[k]; k = (k + 1) &
		    (ns - 1))
			;
		slot[k] = (uint32_t)i + 1;
	}
	free(d->slot);
	d->slot = slot;
	d->nslot = ns;
	return DEID_OK;
}

/* The code of s in d, adding it when new. */
static int
t_intern(struct t_dict *d, const char *s, uint32_t *code)
{
	size_t k;
	char **p;

	if (2 * (d->n + 1) > d->nslot && t_dict_grow(d) != DEID_OK)
		return DEID_ENOMEM;
	for (k = t_hash(s) & (d->nslot - 1); d->slot[k]; k = (k + 1) &
	    (d->nslot - 1))
		if (strcmp(d->s[d->slot[k] - 1], s) == 0) {
			*code = d->slot[k] - 1;
			return DEID_OK;
		}
	if (d->n == d->cap) {
		if ((p = realloc(d->s, (d->cap ? 2 * d->cap : 256) *
		    sizeof(*p))) == NULL)
			return DEID_ENOMEM;
		d->s = p;
		d->cap = d->cap ? 2 * d->cap : 256;
	}
	if ((d->s[d->n] = strdup(s)) == NULL)
		return DEID_ENOMEM;
	d->slot[k] = (uint32_t)d->n + 1;
	*code = (uint32_t)d->n++;
	return DEID_OK;
}

static int
t_header(struct t_ctx *x, const char *const *f, size_t nf,
    struct deid_error *err)
{
	size_t i, j;

	for (j = 0; j < x->o->nqi; j++) {
		for (i = 0; i < nf && strcmp(f[i], x->o->qi[j]) != 0; i++)
			;
		if (i == nf)
			return deid_error_set(err, DEID_EINPUT, x->name, 1, 0,
			    "no column named \"%s\" in the header",
			    x->o->qi[j]);
		x->col[j] = i;
	}
	return DEID_OK;
}

static int
t_row(void *ctx, const char *const *f, size_t nf, unsigned long line,
    struct deid_error *err)
{
	struct t_ctx *x = ctx;
	size_t j, nqi = x->o->nqi;
	uint32_t *p;

	if (!x->header) {
		x->header = 1;
		return t_header(x, f, nf, err);
	}
	for (j = 0; j < nqi && x->col[j] < nf; j++)
		;
	if (j < nqi)
		return deid_error_set(err, DEID_EINPUT, x->name, line, nf,
		    "%zu fields, the header has more", nf);
	x->records++;
	for (j = 0; j < nqi && strcmp(f[x->col[j]], "*") == 0; j++)
		;
	if (j == nqi) {
		x->suppressed++;
		return DEID_OK;
	}
	if (x->nsub == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 4096;
		if ((p = realloc(x->code, x->cap * nqi * sizeof(*p))) == NULL)
			return DEID_ENOMEM;
		x->code = p;
	}
	for (j = 0; j < nqi; j++)
		if (t_intern(&x->d[j], f[x->col[j]], &x->code[x->nsub * nqi +
		    j]) != DEID_OK)
			return DEID_ENOMEM;
	x->nsub++;
	return DEID_OK;
}

static void
t_free(struct t_ctx *x)
{
	size_t i, j;

	for (j = 0; j < DEID_ADV_MAX_QI; j++) {
		for (i = 0; i < x->d[j].n; i++)
			free(x->d[j].s[i]);
		free(x->d[j].s);
		free(x->d[j].slot);
	}
	free(x->code);
}

/* ---- knowledge patterns ------------------------------------------- */

/* Pattern g < 2^ngroups: the groups known; pattern 2^ngroups: every QI.
 * size[i]: subject i's class on the known QIs (+ suppressed rows). */
struct pattern {
	uint32_t	*size;
	double		 ratio;		/* b_t for a_t = 1 */
	int		 pitman_failed;
};

struct engine {
	const struct deid_attacker	*a;
	const struct deid_adversary_opts *o;
	const struct t_ctx		*t;
	uint64_t			 qimask[DEID_ADV_MAX_GROUPS];
	size_t				 rule_qi[DEID_ADV_MAX_RULES];
	size_t				 npat;
	struct pattern			*pat;
	double				*risk;	/* [nsub][2][NRISKS] */
	int				 status;
};

struct sort_ctx {
	const uint32_t	*code;
	size_t		 nqi;
	uint64_t	 mask;
};

static int
p_cmp(const void *x, const void *y, void *arg)
{
	const struct sort_ctx *s = arg;
	const uint32_t *a = s->code + *(const uint32_t *)x * s->nqi;
	const uint32_t *b = s->code + *(const uint32_t *)y * s->nqi;
	size_t j;

	for (j = 0; j < s->nqi; j++)
		if ((s->mask >> j & 1) && a[j] != b[j])
			return a[j] < b[j] ? -1 : 1;
	return 0;
}

/* Class sizes of pattern p, and its Pitman ratio. */
static int
p_build(struct engine *e, size_t p, uint32_t *idx)
{
	struct sort_ctx s = { e->t->code, e->o->nqi, 0 };
	struct pattern *pt = &e->pat[p];
	struct deid_estimate est;
	struct deid_hist *h;
	size_t i, j, k, n = e->t->nsub, g;
	int r = DEID_OK;

	if (p + 1 == e->npat)
		s.mask = e->o->nqi == 64 ? UINT64_MAX :
		    ((uint64_t)1 << e->o->nqi) - 1;
	else
		for (g = 0; g < e->a->ngroups; g++)
			if (p >> g & 1)
				s.mask |= e->qimask[g];
	if ((pt->size = malloc((n ? n : 1) * sizeof(*pt->size))) == NULL ||
	    (h = deid_hist_alloc(64)) == NULL)
		return DEID_ENOMEM;
	for (i = 0; i < n; i++)
		idx[i] = (uint32_t)i;
	qsort_r(idx, n, sizeof(*idx), p_cmp, &s);
	for (i = 0; i < n && r == DEID_OK; i = j) {
		for (j = i + 1; j < n && p_cmp(&idx[i], &idx[j], &s) == 0; j++)
			;
		r = deid_hist_add(h, j - i, 1);
		for (k = i; k < j; k++)
			pt->size[idx[k]] = (uint32_t)(j - i + e->t->suppressed);
	}
	pt->ratio = 0;
	if (r == DEID_OK && h->c1 > 0) {
		if (deid_pitman_estimate(h, e->o->population, &est) ==
		    DEID_OK && isfinite(est.pu))
			pt->ratio = fmin(1, est.fraction /
			    ((double)h->c1 / (double)h->n));
		else {
			pt->ratio = 1;
			pt->pitman_failed = 1;
		}
	}
	deid_hist_free(h);
	return r;
}

/* ---- Monte Carlo per subject -------------------------------------- */

static uint64_t
splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* xoshiro256**, one per subject. */
struct rng {
	uint64_t	s[4];
};

static void
rng_seed(struct rng *g, uint64_t seed, uint64_t subject)
{
	uint64_t x = seed ^ (subject + 1) * 0xd1342543de82ef95ULL;
	int i;

	for (i = 0; i < 4; i++)
		g->s[i] = splitmix(&x);
}

static double
rng_unit(struct rng *g)
{
	uint64_t *s = g->s, r = s[1] * 5, t = s[1] << 17;

	r = ((r << 7) | (r >> 57)) * 9;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = (s[3] << 45) | (s[3] >> 19);
	return (double)(r >> 11) * 0x1.0p-53;
}

/* One trial of subject i under pattern p, added to acc[NRISKS].  The
 * overall risk is the Bayesian network's P(X_r | a_t, b_t): its three
 * routes are independent given what the attacker knows, so
 * P = 1 - (1 - [a_t = 1] p_m p_fm)(1 - b_t p_cu)(1 - p_c / a_t), the
 * expectation of the trial's Bernoulli draws without their noise. */
static void
trial(const struct engine *e, size_t p, size_t i, double *acc)
{
	const struct deid_attacker *a = e->a;
	double at = e->pat[p].size[i];
	int uniq = at == 1;
	double bt = uniq ? e->pat[p].ratio : 0;

	acc[DEID_ADV_PROSECUTOR] += uniq;
	acc[DEID_ADV_JOURNALIST] += bt;
	acc[DEID_ADV_MARKETER] += 1 / at;
	acc[DEID_ADV_OVERALL] += 1 - (1 - (uniq ? a->p_m * a->p_fm : 0)) *
	    (1 - bt * a->p_cu) * (1 - a->p_c / at);
}

/* Length of s without its trailing '*'s. */
static size_t
unmasked(const char *s)
{
	size_t n = strlen(s);

	while (n > 0 && s[n - 1] == '*')
		n--;
	return n;
}

/* Can the released value s be one that v names?  Either may end in
 * '*' (a pattern "946*"; a masked release "946**", or "*"): then only
 * the part before the '*'s must agree. */
static int
value_match(const char *s, const char *v)
{
	size_t ns = unmasked(s), nv = unmasked(v);
	int ws = ns < strlen(s), wv = nv < strlen(v);

	if (!ws && !wv)
		return strcmp(s, v) == 0;
	if (ws && wv)
		return strncmp(s, v, ns < nv ? ns : nv) == 0;
	return ws ? ns <= nv && strncmp(s, v, ns) == 0 :
	    nv <= ns && strncmp(s, v, nv) == 0;
}

/* Subject i's coverage: the first conditional line its value matches,
 * else the attacker's coverage.  A masked value (ending in '*') may be
 * any of several, so it gets the largest coverage it could have: fail
 * closed. */
static double
coverage(const struct engine *e, size_t i)
{
	const struct deid_attacker_rule *u;
	double best = e->a->coverage;
	const char *s;
	size_t k, v;
	int masked;

	for (k = 0; k < e->a->nrules; k++) {
		u = &e->a->rule[k];
		s = e->t->d[e->rule_qi[k]].s[e->t->code[i * e->o->nqi +
		    e->rule_qi[k]]];
		masked = unmasked(s) < strlen(s);
		for (v = 0; v < u->nvalue; v++)
			if (value_match(s, u->value[v])) {
				if (!masked)
					return u->p;
				best = fmax(best, u->p);
			}
	}
	return best;
}

/* Subject i: its trials under the attacker (which groups it knows is
 * drawn), then the worst case (known: one trial is exact), into
 * risk[i][0..1][NRISKS]. */
static void
subject(const struct engine *e, size_t i)
{
	double *out = e->risk + i * 2 * DEID_ADV_NRISKS;
	unsigned t, th = e->a->trials;
	struct rng g;
	size_t p, k;
	int covered;

	rng_seed(&g, e->o->seed, i);
	covered = rng_unit(&g) < coverage(e, i);
	for (t = 0; t < th; t++) {
		for (p = 0, k = 0; k < e->a->ngroups; k++)
			if (rng_unit(&g) < e->a->group[k].p && covered)
				p |= (size_t)1 << k;
		trial(e, p, i, out);
	}
	for (k = 0; k < DEID_ADV_NRISKS; k++)
		out[k] /= th;
	trial(e, e->npat - 1, i, out + DEID_ADV_NRISKS);
}

struct worker {
	struct engine	*e;
	unsigned	 id, n;
	int		 phase;		/* 0: patterns, 1: subjects */
	int		 status;
};

static void *
work(void *arg)
{
	struct worker *w = arg;
	struct engine *e = w->e;
	size_t i, n = e->t->nsub, lo, hi;
	uint32_t *idx;

	if (w->phase == 1) {
		lo = n * w->id / w->n;
		hi = n * (w->id + 1) / w->n;
		for (i = lo; i < hi; i++)
			subject(e, i);
		return NULL;
	}
	if ((idx = malloc((n ? n : 1) * sizeof(*idx))) == NULL) {
		w->status = DEID_ENOMEM;
		return NULL;
	}
	for (i = w->id; i < e->npat && w->status == DEID_OK; i += w->n)
		w->status = p_build(e, i, idx);
	free(idx);
	return NULL;
}

/* Run one phase on nw workers (the calling thread is the first). */
static int
run_phase(struct engine *e, unsigned nw, int phase)
{
	struct worker w[16];
	pthread_t tid[16];
	unsigned i, started = 1;
	int r = DEID_OK;

	for (i = 0; i < nw; i++)
		w[i] = (struct worker){ e, i, nw, phase, DEID_OK };
	for (i = 1; i < nw; i++, started++)
		if (pthread_create(&tid[i], NULL, work, &w[i]) != 0)
			break;
	if (started < nw)		/* do the rest here */
		for (i = started; i < nw; i++)
			work(&w[i]);
	work(&w[0]);
	for (i = 1; i < started; i++)
		pthread_join(tid[i], NULL);
	for (i = 0; i < nw; i++)
		if (w[i].status != DEID_OK)
			r = w[i].status;
	return r;
}

/* ---- summaries ----------------------------------------------------- */

static int
dcmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

static double
quantile(const double *v, size_t n, double q)
{
	double h = q * (double)(n - 1), lo = floor(h);
	size_t i = (size_t)lo;

	return i + 1 < n ? v[i] + (h - lo) * (v[i + 1] - v[i]) : v[i];
}

static void
quartiles(double *v, size_t n, struct deid_quartiles *q)
{
	if (n == 0) {
		q->q1 = q->median = q->q3 = NAN;
		return;
	}
	qsort(v, n, sizeof(*v), dcmp);
	q->q1 = quantile(v, n, 0.25);
	q->median = quantile(v, n, 0.5);
	q->q3 = quantile(v, n, 0.75);
}

static void
summarise(const struct engine *e, double *v, struct deid_adversary *res)
{
	size_t i, k, m, n = e->t->nsub;
	const double *r;
	int side;

	for (k = 0; k < DEID_ADV_NRISKS; k++) {
		for (side = 0; side < 2; side++) {
			double sum = 0;

			for (i = 0; i < n; i++) {
				v[i] = e->risk[(i * 2 + side) *
				    DEID_ADV_NRISKS + k];
				sum += v[i];
			}
			(side ? res->worst_mean : res->mean)[k] =
			    n ? sum / n : 0;
			quartiles(v, n, side ? &res->worst[k] : &res->risk[k]);
		}
		for (i = 0, m = 0; i < n; i++) {
			r = e->risk + i * 2 * DEID_ADV_NRISKS;
			if (r[DEID_ADV_NRISKS + k] > 0)
				v[m++] = (r[DEID_ADV_NRISKS + k] - r[k]) /
				    r[DEID_ADV_NRISKS + k];
		}
		res->reduction_subjects[k] = m;
		quartiles(v, m, &res->reduction[k]);
	}
}

int
deid_attacker_qi(const struct deid_attacker *a, const char *const *qi,
    size_t nqi, uint64_t *mask, size_t *rule_qi, struct deid_error *err)
{
	const struct deid_attacker_group *g;
	size_t i, j, k;

	for (k = 0; k < a->ngroups; k++)
		for (g = &a->group[k], i = 0; i < g->nattr; i++) {
			for (j = 0; j < nqi && strcmp(qi[j], g->attr[i]) != 0;
			    j++)
				;
			if (j == nqi || j >= DEID_ADV_MAX_QI)
				return deid_error_set(err, DEID_EINPUT,
				    a->name, g->line, 0, "\"%s\" is not a "
				    "quasi-identifier of the table",
				    g->attr[i]);
			if (mask != NULL)
				mask[k] |= (uint64_t)1 << j;
		}
	for (k = 0; k < a->nrules; k++) {
		for (j = 0; j < nqi && strcmp(qi[j], a->rule[k].attr) != 0; j++)
			;
		if (j == nqi)
			return deid_error_set(err, DEID_EINPUT, a->name,
			    a->rule[k].line, 0, "\"%s\" is not a "
			    "quasi-identifier of the table", a->rule[k].attr);
		if (rule_qi != NULL)
			rule_qi[k] = j;
	}
	return DEID_OK;
}

static int
engine_run(struct engine *e, struct deid_adversary *res,
    struct deid_error *err)
{
	unsigned nw = e->o->workers ? e->o->workers : 2;
	size_t n = e->t->nsub, i;
	double *v;
	int r;

	if (nw > 16)
		nw = 16;
	e->npat = ((size_t)1 << e->a->ngroups) + 1;
	if ((e->pat = calloc(e->npat, sizeof(*e->pat))) == NULL ||
	    (e->risk = calloc(n * 2 * DEID_ADV_NRISKS + 1,
	    sizeof(*e->risk))) == NULL ||
	    (v = malloc((n + 1) * sizeof(*v))) == NULL)
		return deid_error_set(err, DEID_ENOMEM, "", 0, 0,
		    "out of memory");
	if ((r = run_phase(e, nw, 0)) != DEID_OK) {
		free(v);
		return deid_error_set(err, r, "", 0, 0, "out of memory");
	}
	run_phase(e, nw, 1);
	summarise(e, v, res);
	free(v);
	for (i = 0; i < e->npat; i++)
		res->pitman_failed += (unsigned)e->pat[i].pitman_failed;
	res->patterns = (unsigned)e->npat;
	return DEID_OK;
}

int
deid_adversary_release(const void *data, size_t len, const char *name,
    const struct deid_attacker *a, const struct deid_adversary_opts *o,
    struct deid_adversary *res, struct deid_error *err)
{
	struct t_ctx t = { .name = name, .o = o };
	struct engine e = { .a = a, .o = o, .t = &t };
	size_t i;
	int r;

	memset(res, 0, sizeof(*res));
	if (o->nqi == 0 || o->nqi > DEID_ADV_MAX_QI)
		return deid_error_set(err, DEID_EINPUT, name, 0, 0,
		    "1 to %d quasi-identifiers", DEID_ADV_MAX_QI);
	if ((r = deid_attacker_qi(a, o->qi, o->nqi, e.qimask, e.rule_qi,
	    err)) != DEID_OK ||
	    (r = deid_csv_parse(data, len, name, &o->csv, t_row, &t, NULL,
	    err)) != DEID_OK)
		goto out;
	if (!(o->population >= (double)t.records) || !isfinite(o->population)) {
		r = deid_error_set(err, DEID_EINPUT, name, 0, 0, "the "
		    "population (%g) must be at least the %llu records",
		    o->population, (unsigned long long)t.records);
		goto out;
	}
	snprintf(res->attacker, sizeof(res->attacker), "%s", a->name);
	res->coverage = a->coverage;
	res->p_m = a->p_m;
	res->p_fm = a->p_fm;
	res->p_c = a->p_c;
	res->p_cu = a->p_cu;
	res->records = t.records;
	res->subjects = t.nsub;
	res->seed = o->seed;
	res->trials = a->trials;
	res->population = o->population;
	r = engine_run(&e, res, err);
out:
	if (e.pat != NULL)
		for (i = 0; i < e.npat; i++)
			free(e.pat[i].size);
	free(e.pat);
	free(e.risk);
	t_free(&t);
	if (r == DEID_ENOMEM)
		deid_error_set(err, r, name, 0, 0, "out of memory");
	return r;
}
