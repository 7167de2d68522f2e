/*
 * bench/gen-shaped.c — benchmark data shaped like a dataset we only have
 * the hierarchies of (ATUS, IHIS).
 *
 *   gen-shaped --hierarchies DIR --rows N --out FILE [--seed S]
 *       [--separator C] [--unique-share F] [--verbose]
 *
 * Reads column 0 (the leaves) of every DIR/hierarchy_<attr>.csv and
 * writes N rows over those attributes: header sorted by name, separator
 * ';' unless told otherwise, LF, RFC 4180 quoting where needed.  Values
 * are not uniform noise.  Each attribute gets skewed weights: Zipf-
 * Mandelbrot over a seeded, file-order-biased ranking for categories, a
 * sloping window with heavy-tailed shoulders over value order for integer
 * domains.  A latent "profile" drawn per row reshapes about 60% of the
 * attributes together (correlated columns).  Finally all attributes are
 * tightened together until the expected share of unique rows is at most
 * F (default 25%), so the equivalence classes look like survey data: a
 * dense core and a long tail of rare combinations, rather than almost
 * every row unique.  Deterministic for a seed (the shape math uses libm,
 * so bytes may differ across libm versions); each attribute's shape
 * depends only on the seed and its own name.  The output is written to a
 * temporary file beside FILE, fsync'd and renamed into place.
 * Standalone tool, trusted input; exit 2 for bad input, 1 for I/O.
 */
#include "config.h"

#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/rng.h"

#define EXIT_IO		1
#define EXIT_INPUT	2

#define PREFIX		"hierarchy_"
#define SUFFIX		".csv"
#define NPROFILES	8
#define MAX_LEAVES	(1u << 20)
#define MAX_ROWS	1000000000ULL
#define OUTBUF		(1u << 20)
#define DEFAULT_UNIQUE_SHARE	0.25

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))

struct attr {
	char		 *name;		/* from the file name */
	char		 *path;
	char		**leaf;		/* column 0, in file order */
	unsigned long	 *line;		/* where each leaf was read */
	size_t		  nleaves;
	char		**field;	/* leaf rendered for the output */
	size_t		 *flen;
	size_t		  maxlen;
	int		  correlated;	/* shaped by the row's profile */
	uint32_t	 *cum[NPROFILES];	/* cumulative weights */
};

struct gen {
	struct attr	*attr;
	size_t		 nattrs;
	uint32_t	 profile_cum[NPROFILES];
	char		 sep;
	double		 unique_share;	/* target share of unique rows */
	int		 verbose;
};

/* The temporary output file, removed if a signal ends us. */
static char tmp_path[4096];

/* Uniform in [lo, hi). */
static double
rng_range(struct rng *r, double lo, double hi)
{
	return lo + (hi - lo) * rng_unit(r);
}

/* ---- small helpers ---- */

static void *
xcalloc(size_t n, size_t size)
{
	void *p;

	if ((p = calloc(n, size)) == NULL)
		err(EXIT_IO, "calloc");
	return p;
}

static char *
xstrndup(const char *s, size_t n)
{
	char *p;

	if ((p = strndup(s, n)) == NULL)
		err(EXIT_IO, "strndup");
	return p;
}

/* FNV-1a: a stable hash of an attribute name, to seed its own shape. */
static uint64_t
fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* ---- reading hierarchies ---- */

/* Whole file into memory (the largest known hierarchy is 3.3 MB). */
static int
read_file(const char *path, char **datap, size_t *lenp)
{
	FILE *fp;
	char *data = NULL;
	size_t len = 0, cap = 0, n;
	int rc = EXIT_IO;

	if ((fp = fopen(path, "rb")) == NULL) {
		warn("%s", path);
		return EXIT_IO;
	}
	do {
		if (cap - len < 65536) {
			cap = cap ? cap * 2 : 65536;
			/* err() exits: nothing is left to free */
			/* cppcheck-suppress memleakOnRealloc */
			if ((data = realloc(data, cap)) == NULL)
				err(EXIT_IO, "realloc");
		}
		n = fread(data + len, 1, cap - len, fp);
		len += n;
	} while (n > 0);
	if (ferror(fp)) {
		warn("%s: read", path);
		goto out;
	}
	*datap = data;
	*lenp = len;
	data = NULL;	/* transferred */
	rc = 0;
 out:
	free(data);
	fclose(fp);
	return rc;
}

/*
 * Column 0 of one line: either up to the first separator, or an RFC 4180
 * quoted field ("" for a quote) that must be followed by sep or the end.
 */
static int
first_field(const struct attr *a, unsigned long lineno, const char *p,
    size_t len, char sep, char **out)
{
	char *v;
	size_t i, o = 0;
	const char *end;

	if (len == 0 || p[0] != '"') {
		end = memchr(p, sep, len);
		*out = xstrndup(p, end ? (size_t)(end - p) : len);
		return 0;
	}
	v = xcalloc(len, 1);
	for (i = 1; i < len; i++) {
		if (p[i] != '"') {
			v[o++] = p[i];
			continue;
		}
		if (i + 1 < len && p[i + 1] == '"') {
			v[o++] = '"';
			i++;
			continue;
		}
		if (i + 1 == len || p[i + 1] == sep) {
			*out = v;
			return 0;
		}
		break;
	}
	free(v);
	warnx("%s:%lu: malformed quoted value (quoted fields may not span "
	    "lines)", a->path, lineno);
	return EXIT_INPUT;
}

/* The separator of an ARX hierarchy: ';' if the first line has one. */
static char
detect_sep(const char *data, size_t len)
{
	const char *eol = memchr(data, '\n', len);
	size_t n = eol ? (size_t)(eol - data) : len;

	if (memchr(data, ';', n) != NULL)
		return ';';
	if (memchr(data, ',', n) != NULL)
		return ',';
	return ';';
}

static void
add_leaf(struct attr *a, size_t *cap, char *value, unsigned long lineno)
{
	if (a->nleaves == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		a->leaf = reallocarray(a->leaf, *cap, sizeof(*a->leaf));
		a->line = reallocarray(a->line, *cap, sizeof(*a->line));
		if (a->leaf == NULL || a->line == NULL)
			err(EXIT_IO, "reallocarray");
	}
	a->leaf[a->nleaves] = value;
	a->line[a->nleaves++] = lineno;
}

/* Leaves of one hierarchy: CRLF or LF, final newline optional, blank
 * lines skipped. */
static int
parse_leaves(struct attr *a, const char *data, size_t len)
{
	const char *p = data, *end = data + len, *eol;
	unsigned long lineno = 0;
	size_t n, cap = 0;
	char sep, *value;
	int rc;

	if (memchr(data, '\0', len) != NULL) {
		warnx("%s: contains a NUL byte", a->path);
		return EXIT_INPUT;
	}
	sep = detect_sep(data, len);
	for (; p < end; p = eol + 1) {
		lineno++;
		if ((eol = memchr(p, '\n', (size_t)(end - p))) == NULL)
			eol = end;
		n = (size_t)(eol - p);
		if (n > 0 && p[n - 1] == '\r')
			n--;
		if (n == 0)
			continue;
		if ((rc = first_field(a, lineno, p, n, sep, &value)) != 0)
			return rc;
		if (a->nleaves >= MAX_LEAVES) {
			warnx("%s:%lu: more than %u leaves", a->path, lineno,
			    MAX_LEAVES);
			return EXIT_INPUT;
		}
		add_leaf(a, &cap, value, lineno);
	}
	if (a->nleaves == 0) {
		warnx("%s: no leaves (empty hierarchy)", a->path);
		return EXIT_INPUT;
	}
	return 0;
}

static const struct attr *cmp_attr;	/* qsort context */

static int
cmp_leaf_index(const void *x, const void *y)
{
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	int c = strcmp(cmp_attr->leaf[i], cmp_attr->leaf[j]);

	return c != 0 ? c : (i > j) - (i < j);
}

/* Keep the leaves whose drop[] is 0, in file order. */
static void
compact_leaves(struct attr *a, const uint8_t *drop)
{
	size_t i, o = 0;

	for (i = 0; i < a->nleaves; i++) {
		if (drop[i]) {
			free(a->leaf[i]);
			continue;
		}
		a->leaf[o] = a->leaf[i];
		a->line[o++] = a->line[i];
	}
	a->nleaves = o;
}

/*
 * A leaf listed twice (FARS's iage lists 99 twice, identically) would be
 * drawn twice as often; keep the first and say so.
 */
static void
drop_duplicates(struct attr *a)
{
	size_t *idx, i;
	uint8_t *drop;

	idx = xcalloc(a->nleaves, sizeof(*idx));
	drop = xcalloc(a->nleaves, sizeof(*drop));
	for (i = 0; i < a->nleaves; i++)
		idx[i] = i;
	cmp_attr = a;
	qsort(idx, a->nleaves, sizeof(*idx), cmp_leaf_index);
	for (i = 1; i < a->nleaves; i++)
		if (strcmp(a->leaf[idx[i - 1]], a->leaf[idx[i]]) == 0) {
			warnx("%s:%lu: duplicate leaf \"%s\" (first on line "
			    "%lu) ignored", a->path, a->line[idx[i]],
			    a->leaf[idx[i]], a->line[idx[i - 1]]);
			drop[idx[i]] = 1;
		}
	compact_leaves(a, drop);
	free(drop);
	free(idx);
}

static int
load_attr(struct attr *a)
{
	char *data = NULL;
	size_t len;
	int rc;

	if ((rc = read_file(a->path, &data, &len)) != 0)
		goto out;
	if ((rc = parse_leaves(a, data, len)) != 0)
		goto out;
	drop_duplicates(a);
 out:
	free(data);
	return rc;
}

static int
cmp_attr_name(const void *x, const void *y)
{
	return strcmp(((const struct attr *)x)->name,
	    ((const struct attr *)y)->name);
}

/* The attribute named by a directory entry, or NULL if not a hierarchy. */
static char *
attr_name(const char *d_name)
{
	size_t n = strlen(d_name), pl = strlen(PREFIX), sl = strlen(SUFFIX);

	if (n <= pl + sl || strncmp(d_name, PREFIX, pl) != 0 ||
	    strcmp(d_name + n - sl, SUFFIX) != 0)
		return NULL;
	return xstrndup(d_name + pl, n - pl - sl);
}

static void
add_attr(struct gen *g, size_t *cap, const char *dir, char *name)
{
	struct attr *a;

	if (g->nattrs == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		if ((g->attr = reallocarray(g->attr, *cap,
		    sizeof(*g->attr))) == NULL)
			err(EXIT_IO, "reallocarray");
	}
	a = &g->attr[g->nattrs++];
	memset(a, 0, sizeof(*a));
	a->name = name;
	if (asprintf(&a->path, "%s/%s%s%s", dir, PREFIX, name, SUFFIX) == -1)
		err(EXIT_IO, "asprintf");
}

/* Every DIR/hierarchy_<attr>.csv, sorted by attribute name, loaded. */
static int
scan_dir(const char *dir, struct gen *g)
{
	DIR *dp;
	struct dirent *de;
	size_t cap = 0, i;
	char *name;
	int rc = 0;

	if ((dp = opendir(dir)) == NULL) {
		warn("%s", dir);
		return EXIT_IO;
	}
	while ((de = readdir(dp)) != NULL)
		if ((name = attr_name(de->d_name)) != NULL)
			add_attr(g, &cap, dir, name);
	closedir(dp);
	if (g->nattrs == 0) {
		warnx("%s: no " PREFIX "<attribute>" SUFFIX " files", dir);
		return EXIT_INPUT;
	}
	qsort(g->attr, g->nattrs, sizeof(*g->attr), cmp_attr_name);
	for (i = 0; i < g->nattrs && rc == 0; i++)
		rc = load_attr(&g->attr[i]);
	return rc;
}

/* ---- shaping the distributions ---- */

/*
 * How one attribute is shaped, drawn from the seed and its name.  The
 * global tightness gamma (see choose_gamma) is applied on top, so the
 * same draws serve every row count.
 */
struct shape {
	int	 numeric;
	size_t	*rank;		/* leaf -> position: value order or popularity */
	double	 s, q;		/* categorical: (rank + q)^-s */
	size_t	*order;		/* position -> leaf */
	double	 boost[NPROFILES];
	size_t	 nboost;
	size_t	*boosted;	/* [NPROFILES][nboost] leaves */
	uint8_t	*isnum;		/* numeric: leaf is an integer (else a code
				   such as "NIU", kept rare) */
	size_t	 nnum;		/* numeric: integer leaves, ranked first */
	double	 width, lo, slope, scale, tail;	/* numeric window */
	double	 shift[NPROFILES];	/* in widths */
};

/*
 * Integer leaves, marked in isnum; returns how many.  An attribute whose
 * leaves are (nearly) all integers is shaped over value order, so
 * neighbouring values get similar weight.
 */
static size_t
numeric_values(const struct attr *a, long *val, uint8_t *isnum)
{
	char *end;
	size_t i, count = 0;

	for (i = 0; i < a->nleaves; i++) {
		errno = 0;
		val[i] = strtol(a->leaf[i], &end, 10);
		isnum[i] = errno == 0 && end != a->leaf[i] && *end == '\0';
		count += isnum[i];
	}
	return count;
}

static const double *cmp_key;	/* qsort context */

static int
cmp_by_key(const void *x, const void *y)
{
	size_t i = *(const size_t *)x, j = *(const size_t *)y;

	if (cmp_key[i] != cmp_key[j])
		return cmp_key[i] < cmp_key[j] ? -1 : 1;
	return (i > j) - (i < j);
}

/* order[i] = leaf at position i when sorted by key; rank is its inverse. */
static void
sort_by_key(const double *key, size_t n, size_t *order, size_t *rank)
{
	size_t i;

	for (i = 0; i < n; i++)
		order[i] = i;
	cmp_key = key;
	qsort(order, n, sizeof(*order), cmp_by_key);
	for (i = 0; i < n; i++)
		rank[order[i]] = i;
}

/*
 * Zipf-Mandelbrot exponent and offset by domain size: tiny domains (sex,
 * region, quarter) are fairly balanced, mid-sized ones skewed, large ones
 * dominated by a few values with a long tail (birthplace, race).
 */
static void
zipf_params(size_t n, struct rng *r, double *s, double *q)
{
	if (n <= 4) {
		*s = rng_range(r, 0.3, 1.0);
		*q = rng_range(r, 1.5, 3.0);
	} else if (n <= 12) {
		*s = rng_range(r, 1.0, 2.0);
		*q = rng_range(r, 0.8, 2.0);
	} else {
		*s = rng_range(r, 1.6, 2.6);
		*q = rng_range(r, 0.6, 1.5);
	}
}

/*
 * Categorical: popularity follows file order loosely (ARX files list
 * values roughly by first appearance, so early leaves tend to be common),
 * jittered by the seed.  Each profile boosts a few leaves of its own,
 * drawn mostly from the head, so it reorders what is common rather than
 * only lifting the tail.
 */
static void
draw_categorical(const struct attr *a, struct rng *r, struct shape *sh)
{
	double *key, jitter, u;
	size_t i, k, n = a->nleaves;

	key = xcalloc(n, sizeof(*key));
	jitter = rng_range(r, 0.2, 1.0);
	for (i = 0; i < n; i++)
		key[i] = (double)i / (double)n + jitter * rng_unit(r);
	sort_by_key(key, n, sh->order, sh->rank);
	free(key);
	zipf_params(n, r, &sh->s, &sh->q);
	if (!a->correlated)
		return;
	sh->nboost = (size_t)ceil((double)n * rng_range(r, 0.05, 0.2));
	sh->boosted = xcalloc(NPROFILES * sh->nboost, sizeof(*sh->boosted));
	for (k = 0; k < NPROFILES; k++) {
		sh->boost[k] = rng_range(r, 2.0, 8.0);
		for (i = 0; i < sh->nboost; i++) {
			u = rng_unit(r);
			sh->boosted[k * sh->nboost + i] =
			    sh->order[(size_t)((double)n * u * u * u)];
		}
	}
}

/*
 * Numeric: most of the mass in a window over the value order (the ages in
 * a survey's universe, the years it ran), 5% to 60% of the domain wide,
 * gently sloping, with heavy-tailed shoulders outside.  A profile slides
 * the window by up to a third of its width.
 */
static void
draw_numeric(const struct attr *a, const long *val, struct rng *r,
    struct shape *sh)
{
	double *key;
	size_t i, k, n = a->nleaves;

	key = xcalloc(n, sizeof(*key));
	for (i = 0; i < n; i++)
		key[i] = sh->isnum[i] ? (double)val[i] : HUGE_VAL;
	sort_by_key(key, n, sh->order, sh->rank);
	free(key);
	sh->width = exp(rng_range(r, log(0.05), log(0.6)));
	sh->lo = rng_unit(r);
	sh->slope = rng_range(r, -0.6, 0.6);
	sh->scale = rng_range(r, 0.02, 0.08);
	sh->tail = rng_range(r, 2.0, 3.5);
	for (k = 1; a->correlated && k < NPROFILES; k++)
		sh->shift[k] = rng_range(r, -1.0, 1.0) / 3.0;
}

/* Draw an attribute's shape from the seed and its own name. */
static void
draw_shape(const struct attr *a, uint64_t seed, struct shape *sh)
{
	struct rng r;
	long *val;
	size_t n = a->nleaves;

	memset(sh, 0, sizeof(*sh));
	rng_seed(&r, seed ^ fnv1a(a->name));
	sh->rank = xcalloc(n, sizeof(*sh->rank));
	sh->order = xcalloc(n, sizeof(*sh->order));
	sh->isnum = xcalloc(n, sizeof(*sh->isnum));
	val = xcalloc(n, sizeof(*val));
	sh->nnum = numeric_values(a, val, sh->isnum);
	sh->numeric = sh->nnum >= 3 && sh->nnum * 10 >= n * 9;
	if (sh->numeric)
		draw_numeric(a, val, &r, sh);
	else
		draw_categorical(a, &r, sh);
	free(val);
}

static void
shape_free(struct shape *sh)
{
	free(sh->rank);
	free(sh->order);
	free(sh->isnum);
	free(sh->boosted);
}

/*
 * Weights of profile k.  gamma >= 0 tightens, mostly through the numeric
 * windows (they hold most of the cells): windows and shoulders shrink by
 * (1 + gamma); Zipf exponents grow by (1 + gamma/3), at most doubling,
 * and tiny domains (sex, region) are left alone.
 */
static void
fill_weights(const struct shape *sh, size_t n, size_t k, double gamma,
    double *w)
{
	double width, start, scale, d, x, tight, dn = (double)sh->nnum;
	size_t i;

	if (!sh->numeric) {
		tight = n > 4 ? 1.0 + fmin(gamma, 3.0) / 3.0 : 1.0;
		for (i = 0; i < n; i++)
			w[i] = pow((double)sh->rank[i] + sh->q, -sh->s * tight);
		for (i = 0; i < sh->nboost; i++)
			w[sh->boosted[k * sh->nboost + i]] *= sh->boost[k];
		return;
	}
	width = fmax(1.0, sh->width * dn / (1.0 + gamma));
	start = sh->lo * (dn - width) + sh->shift[k] * width;
	scale = fmax(0.5, sh->scale * dn / (1.0 + gamma));
	for (i = 0; i < n; i++) {
		if (!sh->isnum[i]) {
			w[i] = 0.005;
			continue;
		}
		x = (double)sh->rank[i];
		d = x < start ? start - x : x > start + width ?
		    x - start - width : 0.0;
		x = fmin(fmax((x - start) / width, 0.0), 1.0);
		w[i] = (1.0 + sh->slope * (x - 0.5)) *
		    pow(1.0 + d / scale, -sh->tail);
	}
}

/* Normalize w into probabilities p and their running sums c. */
static void
to_cdf(const double *w, size_t n, double *p, double *c)
{
	double sum = 0, run = 0;
	size_t i;

	for (i = 0; i < n; i++)
		sum += w[i];
	for (i = 0; i < n; i++) {
		p[i] = w[i] / sum;
		run += p[i];
		c[i] = run;
	}
	c[n - 1] = 1.0;
}

static size_t
dcdf_pick(double u, const double *c, size_t n)
{
	size_t lo = 0, hi = n - 1, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (c[mid] > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Profiles are themselves skewed: weight 1/(k+1). */
static void
profile_weights(double *pw)
{
	size_t k;

	for (k = 0; k < NPROFILES; k++)
		pw[k] = 1.0 / (double)(k + 1);
}

/* Probability and running sum of every (attribute, profile, leaf). */
struct model {
	double	 pprof[NPROFILES], cprof[NPROFILES];
	double	**p, **c;	/* [attr * NPROFILES + k][leaf] */
};

static void
model_build(struct model *m, const struct gen *g, const struct shape *sh,
    double gamma)
{
	size_t i, k, n, j;
	double *w, pw[NPROFILES];

	profile_weights(pw);
	to_cdf(pw, NPROFILES, m->pprof, m->cprof);
	for (i = 0; i < g->nattrs; i++) {
		n = g->attr[i].nleaves;
		w = xcalloc(n, sizeof(*w));
		for (k = 0; k < NPROFILES; k++) {
			j = i * NPROFILES + k;
			m->p[j] = xcalloc(n, sizeof(*m->p[j]));
			m->c[j] = xcalloc(n, sizeof(*m->c[j]));
			fill_weights(&sh[i], n, k, gamma, w);
			to_cdf(w, n, m->p[j], m->c[j]);
		}
		free(w);
	}
}

static void
model_free(struct model *m, size_t nattrs)
{
	size_t j;

	for (j = 0; j < nattrs * NPROFILES; j++) {
		free(m->p[j]);
		free(m->c[j]);
	}
}

#define MC_SAMPLES	16384
#define GAMMA_MAX	65536.0
#define MC_SEED		0x6d6f6e7465636172ULL

/*
 * Expected share of unique rows among nrows drawn from the model:
 * E[(1 - p_cell)^(nrows-1)] over cells drawn from the model itself, by
 * Monte Carlo with a fixed stream (so the estimate is a smooth,
 * deterministic function of gamma).
 */
static double
unique_share(const struct gen *g, const struct model *m, uint64_t nrows)
{
	struct rng r;
	size_t *leaf, i, k, kk, t;
	double pc, pk, sum = 0;

	leaf = xcalloc(g->nattrs, sizeof(*leaf));
	rng_seed(&r, MC_SEED);
	for (t = 0; t < MC_SAMPLES; t++) {
		k = dcdf_pick(rng_unit(&r), m->cprof, NPROFILES);
		for (i = 0; i < g->nattrs; i++)
			leaf[i] = dcdf_pick(rng_unit(&r),
			    m->c[i * NPROFILES + k], g->attr[i].nleaves);
		for (pc = 0, kk = 0; kk < NPROFILES; kk++) {
			pk = m->pprof[kk];
			for (i = 0; i < g->nattrs; i++)
				pk *= m->p[i * NPROFILES + kk][leaf[i]];
			pc += pk;
		}
		sum += exp((double)(nrows - 1) * log1p(-fmin(pc, 0.5)));
	}
	free(leaf);
	return sum / MC_SAMPLES;
}

static double
share_at(const struct gen *g, const struct shape *sh, double gamma,
    uint64_t nrows)
{
	struct model m;
	double share;

	memset(&m, 0, sizeof(m));
	m.p = xcalloc(g->nattrs * NPROFILES, sizeof(*m.p));
	m.c = xcalloc(g->nattrs * NPROFILES, sizeof(*m.c));
	model_build(&m, g, sh, gamma);
	share = unique_share(g, &m, nrows);
	model_free(&m, g->nattrs);
	free(m.p);
	free(m.c);
	return share;
}

/*
 * Survey data is not a product of independent wide marginals: drawn as
 * such, with nine attributes, nearly every row would be unique.  Tighten
 * all attributes together (bracket, then bisect on gamma) until the
 * expected share of unique rows is at most the target, or as tight as it
 * gets (huge domains such as CUP's 100,000 ZIPs); never loosen the draws.
 */
static double
choose_gamma(const struct gen *g, const struct shape *sh, uint64_t nrows,
    double target, double *share)
{
	double lo = 0.0, hi = 1.0, mid;
	int it;

	if (nrows < 2 || (*share = share_at(g, sh, 0.0, nrows)) <= target)
		return 0.0;
	while (hi < GAMMA_MAX && share_at(g, sh, hi, nrows) > target) {
		lo = hi;
		hi *= 4;
	}
	for (it = 0; it < 24; it++) {
		mid = (lo + hi) / 2;
		if (share_at(g, sh, mid, nrows) > target)
			lo = mid;
		else
			hi = mid;
	}
	*share = share_at(g, sh, hi, nrows);
	return hi;
}

/* Integer cumulative weights (total below 2^32), every leaf possible. */
static void
quantize(const double *w, size_t n, uint32_t *cum)
{
	double sum = 0;
	uint32_t total = 0;
	size_t i;

	for (i = 0; i < n; i++)
		sum += w[i];
	for (i = 0; i < n; i++) {
		total += 1 + (uint32_t)(w[i] / sum * 0x1.0p31);
		cum[i] = total;
	}
}

/* Which attributes follow the profile: about 60%, and at least two. */
static void
choose_correlated(struct gen *g, uint64_t seed)
{
	struct rng r;
	size_t i, ncorr = 0;

	for (i = 0; i < g->nattrs; i++) {
		rng_seed(&r, ~seed ^ fnv1a(g->attr[i].name));
		g->attr[i].correlated = g->attr[i].nleaves > 1 &&
		    rng_unit(&r) < 0.6;
		ncorr += (size_t)g->attr[i].correlated;
	}
	for (i = 0; i < g->nattrs && ncorr < 2; i++)
		if (!g->attr[i].correlated && g->attr[i].nleaves > 1) {
			g->attr[i].correlated = 1;
			ncorr++;
		}
}

/* Every attribute's per-profile cumulative weights, and the profiles'. */
static void
shape(struct gen *g, uint64_t seed, uint64_t nrows)
{
	struct shape *sh;
	double pw[NPROFILES], gamma, share = 0, *w;
	size_t i, k, n;

	choose_correlated(g, seed);
	sh = xcalloc(g->nattrs, sizeof(*sh));
	for (i = 0; i < g->nattrs; i++)
		draw_shape(&g->attr[i], seed, &sh[i]);
	gamma = choose_gamma(g, sh, nrows, g->unique_share, &share);
	for (i = 0; i < g->nattrs; i++) {
		n = g->attr[i].nleaves;
		w = xcalloc(n, sizeof(*w));
		for (k = 0; k < NPROFILES; k++) {
			g->attr[i].cum[k] = xcalloc(n, sizeof(**g->attr[i].cum));
			fill_weights(&sh[i], n, k, gamma, w);
			quantize(w, n, g->attr[i].cum[k]);
		}
		free(w);
		shape_free(&sh[i]);
	}
	free(sh);
	profile_weights(pw);
	quantize(pw, NPROFILES, g->profile_cum);
	if (g->verbose)
		fprintf(stderr, "gen-shaped: %zu attributes, tightness %.3f, "
		    "expected unique rows %.1f%%\n", g->nattrs, gamma,
		    100.0 * share);
}

/* ---- output ---- */

/* A value as an output field: quoted when it holds sep, '"', CR or LF,
 * or is empty (so a one-column row is never a blank line). */
static char *
render(const char *s, char sep, size_t *lenp)
{
	char *out, *o;

	if (*s != '\0' && strchr(s, sep) == NULL &&
	    strpbrk(s, "\"\r\n") == NULL) {
		out = xstrndup(s, strlen(s));
		*lenp = strlen(out);
		return out;
	}
	o = out = xcalloc(2 * strlen(s) + 3, 1);
	*o++ = '"';
	for (; *s != '\0'; s++) {
		if (*s == '"')
			*o++ = '"';
		*o++ = *s;
	}
	*o++ = '"';
	*lenp = (size_t)(o - out);
	return out;
}

static void
render_attr(struct attr *a, char sep)
{
	size_t i;

	a->field = xcalloc(a->nleaves, sizeof(*a->field));
	a->flen = xcalloc(a->nleaves, sizeof(*a->flen));
	for (i = 0; i < a->nleaves; i++) {
		a->field[i] = render(a->leaf[i], sep, &a->flen[i]);
		if (a->flen[i] > a->maxlen)
			a->maxlen = a->flen[i];
	}
}

static int
write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = write(fd, p, n)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Append the header line to buf; returns its length. */
static size_t
put_header(const struct gen *g, char *buf)
{
	size_t i, n, len = 0;
	char *f;

	for (i = 0; i < g->nattrs; i++) {
		if (i > 0)
			buf[len++] = g->sep;
		f = render(g->attr[i].name, g->sep, &n);
		memcpy(buf + len, f, n);
		len += n;
		free(f);
	}
	buf[len++] = '\n';
	return len;
}

/* One row: a profile, then one leaf per attribute. */
static size_t
put_row(const struct gen *g, struct rng *r, char *buf)
{
	const struct attr *a;
	size_t i, k, leaf, len = 0;

	k = rng_cdf_pick(r, g->profile_cum, NPROFILES);
	for (i = 0; i < g->nattrs; i++) {
		a = &g->attr[i];
		leaf = rng_cdf_pick(r, a->cum[a->correlated ? k : 0], a->nleaves);
		if (i > 0)
			buf[len++] = g->sep;
		memcpy(buf + len, a->field[leaf], a->flen[leaf]);
		len += a->flen[leaf];
	}
	buf[len++] = '\n';
	return len;
}

/* Stream header and rows through a 1 MiB buffer. */
static int
write_rows(int fd, const struct gen *g, uint64_t nrows, uint64_t seed)
{
	struct rng r;
	size_t maxrow = 2, hdr = 2, i, len, cap;
	uint64_t row;
	char *buf;
	int rc = 0;

	for (i = 0; i < g->nattrs; i++) {
		maxrow += g->attr[i].maxlen + 1;
		hdr += 2 * strlen(g->attr[i].name) + 3;
	}
	cap = OUTBUF + (maxrow > hdr ? maxrow : hdr);
	buf = xcalloc(cap, 1);
	rng_seed(&r, seed);
	len = put_header(g, buf);
	for (row = 0; row < nrows && rc == 0; row++) {
		len += put_row(g, &r, buf + len);
		if (len >= OUTBUF) {
			rc = write_all(fd, buf, len);
			len = 0;
		}
	}
	if (rc == 0)
		rc = write_all(fd, buf, len);
	free(buf);
	return rc;
}

/* A signal while writing must not leave the temporary file behind. */
static void
on_signal(int sig)
{
	if (tmp_path[0] != '\0')
		unlink(tmp_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* Temporary file beside out, fsync, rename: out is whole or untouched. */
static int
write_output(const char *out, const struct gen *g, uint64_t nrows,
    uint64_t seed)
{
	int fd = -1, rc = EXIT_IO;

	if ((size_t)snprintf(tmp_path, sizeof(tmp_path), "%s.XXXXXX", out) >=
	    sizeof(tmp_path)) {
		tmp_path[0] = '\0';
		warnx("%s: path too long", out);
		return EXIT_INPUT;
	}
	catch_signals();
	if ((fd = mkostemp(tmp_path, O_CLOEXEC)) == -1) {
		tmp_path[0] = '\0';
		warn("%s: cannot create temporary file", out);
		goto out;
	}
	if (write_rows(fd, g, nrows, seed) != 0 || fsync(fd) != 0) {
		warn("%s: write", tmp_path);
		goto out;
	}
	if (close(fd) != 0) {
		fd = -1;
		warn("%s: close", tmp_path);
		goto out;
	}
	fd = -1;
	if (rename(tmp_path, out) != 0) {
		warn("rename %s to %s", tmp_path, out);
		goto out;
	}
	tmp_path[0] = '\0';	/* now the real file */
	rc = 0;
 out:
	if (fd != -1)
		close(fd);
	if (tmp_path[0] != '\0')
		unlink(tmp_path);
	tmp_path[0] = '\0';
	return rc;
}

static void
gen_free(struct gen *g)
{
	struct attr *a;
	size_t i, j, k;

	for (i = 0; i < g->nattrs; i++) {
		a = &g->attr[i];
		for (j = 0; j < a->nleaves; j++) {
			free(a->leaf[j]);
			if (a->field != NULL)
				free(a->field[j]);
		}
		for (k = 0; k < NPROFILES; k++)
			free(a->cum[k]);
		free(a->leaf);
		free(a->line);
		free(a->field);
		free(a->flen);
		free(a->name);
		free(a->path);
	}
	free(g->attr);
}

/* ---- command line ---- */

static void
usage(void)
{
	fprintf(stderr, "usage: gen-shaped --hierarchies DIR --rows N "
	    "--out FILE [--seed S] [--separator C]\n"
	    "                  [--unique-share F] [--verbose]\n");
	exit(EXIT_INPUT);
}

/* A non-negative integer (decimal, or 0x hex) no larger than max. */
static uint64_t
parse_u64(const char *opt, const char *s, uint64_t max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (*s == '\0' || *s == '-' || *end != '\0' || errno != 0 || v > max)
		errx(EXIT_INPUT, "--%s: expected an integer from 0 to %llu, "
		    "got \"%s\"", opt, (unsigned long long)max, s);
	return v;
}

static double
parse_share(const char *s)
{
	double v;
	char *end;

	errno = 0;
	v = strtod(s, &end);
	if (*s == '\0' || *end != '\0' || errno != 0 || !(v >= 0.0 && v <= 1.0))
		errx(EXIT_INPUT, "--unique-share: expected a fraction from 0 "
		    "to 1, got \"%s\"", s);
	return v;
}

static char
parse_sep(const char *s)
{
	if (strcmp(s, "\\t") == 0 || strcmp(s, "tab") == 0)
		return '\t';
	if (strlen(s) != 1 || strchr("\"\r\n", s[0]) != NULL)
		errx(EXIT_INPUT, "--separator: expected one character other "
		    "than '\"', CR or LF, got \"%s\"", s);
	return s[0];
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "hierarchies", required_argument, NULL, 'H' },
		{ "rows", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "out", required_argument, NULL, 'o' },
		{ "separator", required_argument, NULL, 'S' },
		{ "unique-share", required_argument, NULL, 'u' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct gen g;
	const char *dir = NULL, *out = NULL;
	uint64_t nrows = 0, seed = 1;
	int ch, have_rows = 0, rc;
	size_t i;

	memset(&g, 0, sizeof(g));
	g.sep = ';';
	g.unique_share = DEFAULT_UNIQUE_SHARE;
	while ((ch = getopt_long(argc, argv, "H:n:s:o:S:u:vh", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'H':
			dir = optarg;
			break;
		case 'n':
			nrows = parse_u64("rows", optarg, MAX_ROWS);
			have_rows = 1;
			break;
		case 's':
			seed = parse_u64("seed", optarg, UINT64_MAX);
			break;
		case 'o':
			out = optarg;
			break;
		case 'S':
			g.sep = parse_sep(optarg);
			break;
		case 'u':
			g.unique_share = parse_share(optarg);
			break;
		case 'v':
			g.verbose = 1;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || dir == NULL || out == NULL || !have_rows)
		usage();
	if ((rc = scan_dir(dir, &g)) != 0)
		goto out;
	shape(&g, seed, nrows);
	for (i = 0; i < g.nattrs; i++)
		render_attr(&g.attr[i], g.sep);
	rc = write_output(out, &g, nrows, seed);
 out:
	gen_free(&g);
	return rc;
}
