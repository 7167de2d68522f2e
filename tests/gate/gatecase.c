/*
 * tests/gate/gatecase.c — random gate cases, the gate run on them, and
 * the checker that re-derives the verdict from the released file with
 * its own CSV reader, class count and Zayatz estimate (gatecase.h).
 * Test code: trusts its own generator, nothing the gate returns.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "deid/anonymize.h"
#include "deid/risk.h"
#include "deid/verify.h"
#include "tests/gate/gatecase.h"

const char *const gp_models[4] = { "dankar", "pitman", "zayatz", "snb" };

/* ---- random numbers: the fuzzer's bytes first, then splitmix64 ---- */

/* Bytes first (p may be NULL), then splitmix64 from seed. */
void
gp_rng_init(struct gp_rng *r, uint64_t seed, const uint8_t *p, size_t n)
{
	r->s = seed;
	r->p = p;
	r->n = n;
}

/* 64 bits: up to 8 of the given bytes while they last, else splitmix. */
uint64_t
gp_next(struct gp_rng *r)
{
	uint64_t z = 0;
	int i;

	if (r->n > 0) {
		for (i = 0; i < 8 && r->n > 0; i++, r->n--)
			z = z << 8 | *r->p++;
		return z;
	}
	z = (r->s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* 0..n-1; one byte of the fuzzer's input per small choice. */
static unsigned
gp_rnd(struct gp_rng *r, unsigned n)
{
	if (n == 0)
		return 0;
	if (r->n > 0 && n <= 256) {
		r->n--;
		return *r->p++ % n;
	}
	return (unsigned)(gp_next(r) % n);
}

/* Uniform in [0, 1). */
static double
gp_unif(struct gp_rng *r)
{
	return (double)(gp_next(r) >> 11 & ((1ULL << 53) - 1)) /
	    9007199254740992.0;
}

/* ---- the generator ---- */

/* Leaf strings: plain, or now and then needing CSV quoting. */
static void
gen_leaf(struct gp_rng *s, int odd, size_t j, size_t i, char *out)
{
	static const char *const odd_tail[] = { " a,b", " \"q\"", ";x", " y" };

	snprintf(out, GP_VAL, "q%uv%u%s", (unsigned)j % 10, (unsigned)i % 100,
	    odd && gp_rnd(s, 3) == 0 ? odd_tail[gp_rnd(s, 4)] : "");
}

/* Level l's value of every leaf: the same parent for leaves that share
 * their level l-1 value; a value kept as it is (an uneven branch), a
 * group, or at the top now and then one root for all. */
static void
gen_level(struct gp_rng *s, struct gp_hier *h, size_t j, size_t l)
{
	size_t i, p, groups = 1 + gp_rnd(s, (unsigned)h->nleaves);
	int one_root = l + 1 == h->nlevels && gp_rnd(s, 2) == 0;
	const char *root = gp_rnd(s, 4) ? "*" : "ANY";

	for (i = 0; i < h->nleaves; i++) {
		for (p = 0; p < i; p++)
			if (strcmp(h->val[p][l - 1], h->val[i][l - 1]) == 0)
				break;
		if (p < i)
			memcpy(h->val[i][l], h->val[p][l], GP_VAL);
		else if (one_root)
			snprintf(h->val[i][l], GP_VAL, "%s", root);
		else if (gp_rnd(s, 5) == 0)
			memcpy(h->val[i][l], h->val[i][l - 1], GP_VAL);
		else
			snprintf(h->val[i][l], GP_VAL, "q%zul%zug%u", j % 10, l % 10,
			    gp_rnd(s, (unsigned)groups));
	}
}

/* One QI's hierarchy: 1..12 leaves, 1..5 levels, each level from the last. */
static void
gen_hier(struct gp_rng *s, struct gp_hier *h, size_t j)
{
	size_t i, l;
	int odd = gp_rnd(s, 12) == 0;

	h->nleaves = 1 + gp_rnd(s, GP_MAXLEAF);
	h->nlevels = 1 + gp_rnd(s, GP_MAXLEV);
	for (i = 0; i < h->nleaves; i++)
		gen_leaf(s, odd, j, i, h->val[i][0]);
	for (l = 1; l < h->nlevels; l++)
		gen_level(s, h, j, l);
}

/* Columns: the QIs, maybe an identifying, a sensitive and an
 * insensitive one, in a random order. */
static void
gen_columns(struct gp_rng *s, struct gp_case *c)
{
	static const char *const extra[] = { "pid", "diag", "site" };
	struct gp_col t;
	size_t i, j;

	c->nqi = 1 + gp_rnd(s, GP_MAXQI);
	for (c->ncols = 0; c->ncols < c->nqi; c->ncols++) {
		c->col[c->ncols].kind = GP_COL_QI;
		c->col[c->ncols].qi = (int)c->ncols;
		snprintf(c->col[c->ncols].name, 16, "q%u", (unsigned)c->ncols % 10);
	}
	for (i = 0; i < 3; i++)
		if (gp_rnd(s, 2)) {
			c->col[c->ncols].kind = GP_COL_ID + (int)i;
			c->col[c->ncols].qi = -1;
			snprintf(c->col[c->ncols++].name, 16, "%s", extra[i]);
		}
	for (i = c->ncols - 1; i > 0; i--) {
		j = gp_rnd(s, (unsigned)i + 1);
		t = c->col[i], c->col[i] = c->col[j], c->col[j] = t;
	}
}

/* Rows: skewed leaf choices so classes of many sizes occur. */
static void
gen_rows(struct gp_rng *s, struct gp_case *c)
{
	size_t r, j, n;

	c->nrows = 1 + gp_rnd(s, gp_rnd(s, 4) ? 40 : GP_MAXROWS);
	for (r = 0; r < c->nrows; r++) {
		for (j = 0; j < c->nqi; j++) {
			n = c->h[j].nleaves;
			c->leaf[r][j] = gp_rnd(s, 2) ? gp_rnd(s, (unsigned)n) :
			    gp_rnd(s, 1 + gp_rnd(s, (unsigned)n));
		}
		for (j = 0; j < c->ncols; j++)
			snprintf(c->other[r][j], GP_VAL, "%s%u",
			    c->col[j].name, gp_rnd(s, 1000));
	}
}

/* k, PU (threshold, population n..1e6 n, model), the suppression limit,
 * now and then the game; at least one criterion. */
static void
gen_criteria(struct gp_rng *s, struct gp_case *c)
{
	static const double ts[] = { 0, 0.001, 0.01, 0.05, 0.1, 0.3, 1 };
	static const double lims[] = { 0, 0.02, 0.05, 0.1, 0.25, 0.5, 1 };
	unsigned r = gp_rnd(s, 10);

	c->k = r < 3 ? 0 : 2 + gp_rnd(s, 6);
	if (gp_rnd(s, 20) == 0)
		c->k = (unsigned)c->nrows + gp_rnd(s, 3);
	if ((c->pu = gp_rnd(s, 10) < 4)) {
		c->t = ts[gp_rnd(s, 7)];
		c->N = gp_rnd(s, 8) == 0 ? (double)c->nrows :
		    ceil((double)c->nrows * exp(gp_unif(s) * log(1e6)));
		c->model = (int)gp_rnd(s, 4);
	}
	c->limit = gp_rnd(s, 8) < 7 ? lims[gp_rnd(s, 7)] : gp_unif(s);
	if (gp_rnd(s, 12) == 0) {
		c->game = 1 + (int)gp_rnd(s, 2);
		c->cost = 1 + gp_rnd(s, 10);
		c->gain = gp_rnd(s, 400);
		c->benefit = 1 + gp_rnd(s, 1500);
	}
	if (c->k < 2)
		c->k = 0;
	if (c->k == 0 && !c->pu && c->game == 0)
		c->k = 2;
	c->threads = 1 + gp_rnd(s, 2);
}

/* The whole case; the order of the draws keeps old seeds' cases. */
void
gp_gen_case(struct gp_rng *s, uint64_t seed, struct gp_case *c)
{
	size_t j;

	memset(c, 0, sizeof(*c));
	c->seed = seed;
	c->sep = gp_rnd(s, 2) ? ',' : ';';
	gen_columns(s, c);
	for (j = 0; j < c->nqi; j++)
		gen_hier(s, &c->h[j], j);
	gen_rows(s, c);
	gen_criteria(s, c);
	c->dup_q = gp_rnd(s, 15) == 0 ? (int)gp_rnd(s, (unsigned)c->nqi) : -1;
	if (c->dup_q >= 0)
		c->dup_row = gp_rnd(s, (unsigned)c->h[c->dup_q].nleaves);
}

/* ---- writing the case's files ---- */

/* An RFC 4180 field, quoted when it holds sep, a quote or a newline. */
static void
put_field(FILE *f, const char *v, char sep)
{
	const char *p;

	if (strchr(v, sep) == NULL && strpbrk(v, "\"\r\n") == NULL) {
		fputs(v, f);
		return;
	}
	putc('"', f);
	for (p = v; *p; p++) {
		if (*p == '"')
			putc('"', f);
		putc(*p, f);
	}
	putc('"', f);
}

/* The input value of column i in row r. */
static const char *
input_cell(const struct gp_case *c, size_t r, size_t i)
{
	const struct gp_col *col = &c->col[i];

	if (col->kind == GP_COL_QI)
		return c->h[col->qi].val[c->leaf[r][col->qi]][0];
	return c->other[r][i];
}

/* Hierarchy row i: the leaf and its value at every level. */
static void
put_row(FILE *f, const struct gp_hier *h, size_t i, char sep)
{
	size_t l;

	for (l = 0; l < h->nlevels; l++) {
		put_field(f, h->val[i][l], sep);
		putc(l + 1 < h->nlevels ? sep : '\n', f);
	}
}

/* The table, and each hierarchy (one with its row dup_row repeated
 * verbatim as the last line). */
static int
write_files(const struct gp_case *c, const char *dir)
{
	char path[512];
	size_t r, i, j;
	FILE *f;

	snprintf(path, sizeof(path), "%s/data.csv", dir);
	if ((f = fopen(path, "w")) == NULL)
		return -1;
	for (r = 0; r <= c->nrows; r++)
		for (i = 0; i < c->ncols; i++) {
			put_field(f, r ? input_cell(c, r - 1, i) :
			    c->col[i].name, c->sep);
			putc(i + 1 < c->ncols ? c->sep : '\n', f);
		}
	if (fclose(f) != 0)
		return -1;
	for (j = 0; j < c->nqi; j++) {
		snprintf(path, sizeof(path), "%s/hierarchy_q%zu.csv", dir, j);
		if ((f = fopen(path, "w")) == NULL)
			return -1;
		for (i = 0; i < c->h[j].nleaves; i++)
			put_row(f, &c->h[j], i, c->sep);
		if (c->dup_q == (int)j)
			put_row(f, &c->h[j], c->dup_row, c->sep);
		if (fclose(f) != 0)
			return -1;
	}
	return 0;
}

/* ---- the checker's own CSV reader (RFC 4180, LF or CRLF) ---- */

struct gp_table {
	size_t	 nrows, ncols;		/* rows include the header */
	char	*cell[GP_MAXROWS + 1][GP_MAXCOL];
};

/* Free every cell; the table is empty again. */
static void
table_free(struct gp_table *t)
{
	size_t r, i;

	for (r = 0; r < t->nrows; r++)
		for (i = 0; i < t->ncols; i++)
			free(t->cell[r][i]);
	memset(t, 0, sizeof(*t));
}

/* One field from *p; returns its end state: sep, '\n' or 0 (EOF). */
static int
csv_field(const char **p, const char *end, char sep, char *out, size_t cap)
{
	const char *s = *p;
	size_t n = 0;
	int quoted = s < end && *s == '"';

	if (quoted)
		s++;
	while (s < end) {
		if (quoted && *s == '"') {
			if (s + 1 < end && s[1] == '"')
				s++;
			else {
				quoted = 0;
				s++;
				continue;
			}
		} else if (!quoted && (*s == sep || *s == '\n' || *s == '\r'))
			break;
		if (n + 1 < cap)
			out[n++] = *s;
		s++;
	}
	out[n] = '\0';
	if (s < end && *s == '\r')
		s++;
	*p = s < end ? s + 1 : s;
	return s < end ? *s : 0;
}

/* The released file into cells: every record as many fields as the
 * header, a final newline, nothing else. */
static int
read_table(const char *path, char sep, struct gp_table *t, char *why)
{
	char buf[64 * 1024], field[256];
	const char *p, *end;
	size_t len, col = 0;
	FILE *f;
	int e;

	memset(t, 0, sizeof(*t));
	if ((f = fopen(path, "r")) == NULL)
		return snprintf(why, 512, "cannot open the release: %s",
		    strerror(errno)), -1;
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (len == 0 || len == sizeof(buf) || buf[len - 1] != '\n')
		return snprintf(why, 512, "release empty, too long or without "
		    "a final newline (%zu bytes)", len), -1;
	for (p = buf, end = buf + len; p < end;) {
		if (t->nrows > GP_MAXROWS || col >= GP_MAXCOL)
			return snprintf(why, 512, "release has too many rows or "
			    "columns"), -1;
		e = csv_field(&p, end, sep, field, sizeof(field));
		t->cell[t->nrows][col++] = strdup(field);
		if (e == sep)
			continue;
		if (t->nrows == 0)
			t->ncols = col;
		else if (col != t->ncols)
			return snprintf(why, 512, "release line %zu has %zu "
			    "fields, the header %zu", t->nrows + 1, col,
			    t->ncols), -1;
		t->nrows++;
		col = 0;
	}
	return 0;
}

/* ---- the independent count ---- */

struct gp_count {
	size_t	 n, suppressed, released, classes, c1, smallest;
	size_t	 size[GP_MAXROWS];	/* released classes' sizes */
	unsigned level[GP_MAXQI];
};

/* qsort on strings. */
static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Classes of n rows from their keys (the keys are sorted, then freed). */
static void
count_keys(char **key, size_t n, struct gp_count *k)
{
	size_t i, run;

	qsort(key, n, sizeof(*key), cmp_str);
	k->smallest = n ? SIZE_MAX : 0;
	for (i = 0; i < n; i += run) {
		for (run = 1; i + run < n && strcmp(key[i], key[i + run]) == 0;)
			run++;
		k->size[k->classes++] = run;
		k->c1 += run == 1;
		if (run < k->smallest)
			k->smallest = run;
	}
	for (i = 0; i < n; i++)
		free(key[i]);
}

/* Classes of the released rows from their written QI strings. */
static void
count_classes(const struct gp_case *c, const struct gp_table *t,
    const int *qicol, const int *supp, struct gp_count *k)
{
	char *key[GP_MAXROWS], *p;
	size_t r, j, n = 0;

	for (r = 1; r < t->nrows; r++) {
		if (supp[r])
			continue;
		p = key[n++] = calloc(c->nqi, 260);
		for (j = 0; j < c->nqi; j++) {
			p += sprintf(p, "%s", t->cell[r][qicol[j]]);
			*p++ = '\x1f';
		}
	}
	count_keys(key, n, k);
}

/* Classes of the input, from the generator's leaf choices. */
static void
count_input(const struct gp_case *c, struct gp_count *k)
{
	char *key[GP_MAXROWS];
	size_t r, j;

	memset(k, 0, sizeof(*k));
	for (r = 0; r < c->nrows; r++) {
		key[r] = calloc(c->nqi, 8);
		for (j = 0; j < c->nqi; j++)
			sprintf(key[r] + strlen(key[r]), "%u,", c->leaf[r][j]);
	}
	k->n = k->released = c->nrows;
	count_keys(key, c->nrows, k);
}

/* Zayatz's PU / N of the released classes, computed as a product so no
 * large log-gammas cancel: h_s = P(X = 1), X ~ Hypergeometric(N, s, n)
 * = s (n/N) prod_{i=1}^{s-1} (N-n-i+1)/(N-i). */
static double
own_zayatz(const struct gp_count *k, double N)
{
	double n = (double)k->released, den = 0, h;
	size_t i, s, m;

	if (k->c1 == 0)
		return 0;
	for (i = 0; i < k->classes; i++) {
		s = k->size[i];
		h = (double)s * n / N;
		for (m = 1; m < s && h > 0; m++)
			h *= fmax(N - n - (double)m + 1, 0) / (N - (double)m);
		den += h;
	}
	return (double)k->c1 * (double)k->c1 / den / N;
}

/* Leaves of hierarchy h under leaf x's value at level l. */
static size_t
leaves_under(const struct gp_hier *h, unsigned x, unsigned l)
{
	size_t i, n = 0;

	for (i = 0; i < h->nleaves; i++)
		n += strcmp(h->val[i][l], h->val[x][l]) == 0;
	return n;
}

/* Iyengar's Loss of the release: a record's share on QI j is (leaves
 * under its value)/|D_j|, 1 when suppressed; per QI (sum - R/|D|)/(R -
 * R/|D|), 0 when |D| = 1.  The geometric mean over the QIs, and in
 * *arith (if not NULL) the arithmetic one. */
static double
own_loss2(const struct gp_case *c, const int *supp, const unsigned *level,
    double *arith)
{
	double R = (double)c->nrows, D, lo, sum, term, prod = 1, mean = 0;
	size_t j, r;

	for (j = 0; j < c->nqi; j++) {
		D = (double)c->h[j].nleaves;
		for (sum = 0, r = 0; r < c->nrows; r++)
			sum += supp[r + 1] ? 1 : (double)leaves_under(&c->h[j],
			    c->leaf[r][j], level[j]) / D;
		lo = R / D;
		term = R - lo <= 0 ? 0 : (sum - lo) / (R - lo);
		prod *= 1 + term;
		mean += term / (double)c->nqi;
	}
	if (arith != NULL)
		*arith = mean;
	return pow(prod, 1.0 / (double)c->nqi) - 1;
}

static double
own_loss(const struct gp_case *c, const int *supp, const unsigned *level)
{
	return own_loss2(c, supp, level, NULL);
}

/* -a log2(a/b), 0 for a = 0. */
static double
xlog2(double a, double b)
{
	return a > 0 ? -a * log2(a / b) : 0;
}

/* Non-uniform entropy of QI j, normalized: released records by their
 * leaf within their generalized value, suppressed ones by their leaf
 * among the suppressed, over the leaves' entropy in the whole table. */
static double
own_entropy_qi(const struct gp_case *c, const int *supp, size_t j,
    unsigned level)
{
	const struct gp_hier *h = &c->h[j];
	double an[GP_MAXLEAF] = { 0 }, as[GP_MAXLEAF] = { 0 };
	double all[GP_MAXLEAF] = { 0 }, b, S = 0, ent = 0, max = 0;
	size_t r, x, y;

	for (r = 0; r < c->nrows; r++) {
		x = c->leaf[r][j];
		all[x]++;
		if (supp[r + 1])
			as[x]++, S++;
		else
			an[x]++;
	}
	for (x = 0; x < h->nleaves; x++) {
		for (b = 0, y = 0; y < h->nleaves; y++)
			if (strcmp(h->val[y][level], h->val[x][level]) == 0)
				b += an[y];
		ent += xlog2(an[x], b) + xlog2(as[x], S);
		max += xlog2(all[x], (double)c->nrows);
	}
	return max > 0 ? ent / max : 0;
}

/* Its arithmetic mean over the QIs. */
static double
own_entropy(const struct gp_case *c, const int *supp, const unsigned *level)
{
	double sum = 0;
	size_t j;

	for (j = 0; j < c->nqi; j++)
		sum += own_entropy_qi(c, supp, j, level[j]);
	return sum / (double)c->nqi;
}

/* Within 1e-9 relative (1e-15 absolute near 0). */
static int
close_to(double got, double want)
{
	return fabs(got - want) <= GP_TOL * fmax(fabs(want), 1e-300) ||
	    fabs(got - want) <= 1e-15;
}

/* ---- the report, as JSON ---- */

/* o.a.b.c, any of them NULL; NULL when absent. */
static json_t *
jpath(json_t *o, const char *a, const char *b, const char *c)
{
	if (o != NULL && a != NULL)
		o = json_object_get(o, a);
	if (o != NULL && b != NULL)
		o = json_object_get(o, b);
	if (o != NULL && c != NULL)
		o = json_object_get(o, c);
	return o;
}

/* A report figure equals our count (integers exactly, reals to 1e-9). */
static int
jfig(json_t *rep, const char *a, const char *b, const char *c, double want,
    char *why)
{
	json_t *v = jpath(rep, a, b, c);

	if (json_is_number(v) && close_to(json_number_value(v), want))
		return 0;
	snprintf(why, 512, "report %s%s%s%s%s = %.17g, the release has %.17g",
	    a, b ? "." : "", b ? b : "", c ? "." : "", c ? c : "",
	    json_is_number(v) ? json_number_value(v) : NAN, want);
	return -1;
}

/* ---- checks of a passed gate ---- */

/* Header: the input's columns less the identifying one, in order. */
static int
check_header(const struct gp_case *c, const struct gp_table *t, int *incol,
    int *qicol, char *why)
{
	size_t i, o = 0;

	for (i = 0; i < c->ncols; i++) {
		if (c->col[i].kind == GP_COL_ID)
			continue;
		if (o >= t->ncols || strcmp(t->cell[0][o], c->col[i].name) != 0)
			return snprintf(why, 512, "release column %zu is \"%s\", "
			    "want \"%s\"", o + 1, o < t->ncols ?
			    t->cell[0][o] : "(none)", c->col[i].name), -1;
		incol[o] = (int)i;
		if (c->col[i].kind == GP_COL_QI)
			qicol[c->col[i].qi] = (int)o;
		o++;
	}
	if (o != t->ncols)
		return snprintf(why, 512, "release has %zu columns, want %zu",
		    t->ncols, o), -1;
	if (t->nrows != c->nrows + 1)
		return snprintf(why, 512, "release has %zu records, the input "
		    "%zu", t->nrows - 1, c->nrows), -1;
	return 0;
}

/* Each row: other columns verbatim; QIs all "*" (suppressed) or each
 * the value of its input leaf at the level the report names. */
static int
check_rows(const struct gp_case *c, const struct gp_table *t,
    const int *incol, const int *qicol, int *supp, struct gp_count *k,
    char *why)
{
	size_t r, i, j, stars;
	const char *want;

	for (r = 1; r < t->nrows; r++) {
		for (i = 0; i < t->ncols; i++)
			if (c->col[incol[i]].kind != GP_COL_QI &&
			    strcmp(t->cell[r][i], input_cell(c, r - 1,
			    (size_t)incol[i])) != 0)
				return snprintf(why, 512, "record %zu column %s "
				    "changed to \"%s\"", r, t->cell[0][i],
				    t->cell[r][i]), -1;
		for (stars = j = 0; j < c->nqi; j++)
			stars += strcmp(t->cell[r][qicol[j]], "*") == 0;
		if ((supp[r] = stars == c->nqi)) {
			k->suppressed++;
			continue;
		}
		for (j = 0; j < c->nqi; j++) {
			want = c->h[j].val[c->leaf[r - 1][j]][k->level[j]];
			if (strcmp(t->cell[r][qicol[j]], want) != 0)
				return snprintf(why, 512, "record %zu: q%zu is "
				    "\"%s\", its leaf at level %u is \"%s\"", r,
				    j, t->cell[r][qicol[j]], k->level[j], want),
				    -1;
		}
	}
	k->n = c->nrows;
	k->released = k->n - k->suppressed;
	return 0;
}

/* The report's transformation: one level per QI, within its hierarchy. */
static int
report_levels(const struct gp_case *c, json_t *rep, struct gp_count *k,
    char *why)
{
	char name[16];
	json_t *v;
	size_t j;

	for (j = 0; j < c->nqi; j++) {
		snprintf(name, sizeof(name), "q%u", (unsigned)j % 10);
		v = jpath(rep, "transformation", name, NULL);
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) >= (json_int_t)c->h[j].nlevels)
			return snprintf(why, 512, "report transformation.%s is "
			    "not a level of its %zu-level hierarchy", name,
			    c->h[j].nlevels), -1;
		k->level[j] = (unsigned)json_integer_value(v);
	}
	return 0;
}

/* The criteria, on our own count. */
static int
check_criteria(const struct gp_case *c, const struct gp_count *k, char *why)
{
	size_t i;

	if (k->released == 0)
		return snprintf(why, 512, "passed with every record suppressed "
		    "(nothing released)"), -1;
	if (c->k > 1 && k->smallest < c->k)
		return snprintf(why, 512, "smallest released class has %zu "
		    "records, k = %u", k->smallest, c->k), -1;
	if ((double)k->suppressed > c->limit * (double)k->n + 1e-9)
		return snprintf(why, 512, "%zu of %zu records suppressed, over "
		    "the limit %.17g", k->suppressed, k->n, c->limit), -1;
	/* No-Attack: the adversary must strictly lose on every released
	   record, SP * Gain < Cost, i.e. |class| > Gain / Cost (equal is
	   not a loss: with Cost 10 and Gain 330 a class of 33 fails). */
	for (i = 0; c->game == 1 && i < k->classes; i++)
		if (c->gain >= (double)k->size[i] * c->cost)
			return snprintf(why, 512, "no-attack: a released class "
			    "of %zu is not a loss to attack (gain %g, cost %g)",
			    k->size[i], c->gain, c->cost), -1;
	return 0;
}

/* PU of the release: the report's estimate within t; 0 without sample
 * uniques; Zayatz recomputed here. */
static int
check_pu(const struct gp_case *c, json_t *rep, const struct gp_count *k,
    char *why)
{
	json_t *v = jpath(rep, "risk", "after", "pu_fraction");
	double pu;

	if (!c->pu)
		return 0;
	if (!json_is_number(v))
		return snprintf(why, 512, "PU criterion on, report has no "
		    "risk.after.pu_fraction"), -1;
	pu = json_number_value(v);
	if (k->c1 == 0 && pu != 0)
		return snprintf(why, 512, "no sample uniques, yet PU %.17g",
		    pu), -1;
	if (pu > c->t)
		return snprintf(why, 512, "PU %.17g over the threshold %g", pu,
		    c->t), -1;
	if (strcmp(gp_models[c->model], "zayatz") == 0)
		return jfig(rep, "risk", "after", "pu_fraction",
		    own_zayatz(k, c->N), why);
	return 0;
}

/* The attack summary: prosecutor c1/n and 1/smallest, marketer u/n. */
static int
check_attack(json_t *rep, const struct gp_count *k, char *why)
{
	json_t *atk = jpath(rep, "risk", "after", "attack");
	double n = (double)k->released;

	if (jfig(atk, "prosecutor", NULL, NULL, (double)k->c1 / n, why) ||
	    jfig(atk, "prosecutor_max", NULL, NULL, 1.0 / (double)k->smallest,
	    why) ||
	    jfig(atk, "marketer", NULL, NULL, (double)k->classes / n, why))
		return -1;
	return 0;
}

/* Each PU/SU check passed, SU = c1/n, ratio = PU/SU within its bound;
 * under Zayatz, PU recomputed here. */
static int
check_residual(const struct gp_case *c, json_t *a, const struct gp_count *k,
    char *why)
{
	json_t *e;
	double su = (double)k->c1 / (double)k->released, pu, ratio, bound;
	size_t i;

	if (!json_is_array(a) || json_array_size(a) != (size_t)c->pu)
		return snprintf(why, 512, "report has %zu PU/SU checks, want "
		    "%d", json_array_size(a), c->pu), -1;
	json_array_foreach(a, i, e) {
		if (!json_is_true(json_object_get(e, "passed")))
			return snprintf(why, 512, "gate passed, PU/SU check %zu "
			    "did not", i), -1;
		if (k->c1 == 0)
			continue;
		pu = json_number_value(json_object_get(e, "pu"));
		ratio = json_number_value(json_object_get(e, "ratio"));
		bound = json_number_value(json_object_get(e, "bound"));
		if (jfig(e, "su", NULL, NULL, su, why) ||
		    jfig(e, "ratio", NULL, NULL, pu / su, why) ||
		    jfig(e, "bound", NULL, NULL, 0.25, why) ||
		    (strcmp(gp_models[c->model], "zayatz") == 0 &&
		    jfig(e, "pu", NULL, NULL, own_zayatz(k, c->N), why)))
			return -1;
		if (!(ratio <= bound))
			return snprintf(why, 512, "PU/SU %.17g over its bound "
			    "%g", ratio, bound), -1;
	}
	return 0;
}

/* The report's "verified" figures (re-derived by deid/verify.c from the
 * written bytes) against our count. */
static int
check_verified(const struct gp_case *c, json_t *rep, const struct gp_count *k,
    double loss, double arith, char *why)
{
	json_t *v = json_object_get(rep, "verified"), *lv;
	double n = (double)k->n, pu = c->pu ? own_zayatz(k, c->N) : 0;
	char name[16];
	size_t j;

	if (!json_is_true(json_object_get(v, "passed")))
		return snprintf(why, 512, "gate passed, verified.passed is "
		    "not true"), -1;
	if (jfig(v, "records", NULL, NULL, n, why) ||
	    jfig(v, "suppressed_records", NULL, NULL, (double)k->suppressed,
	    why) ||
	    jfig(v, "released_records", NULL, NULL, (double)k->released, why) ||
	    jfig(v, "suppressed_share", NULL, NULL, (double)k->suppressed / n,
	    why) ||
	    jfig(v, "classes", NULL, NULL, (double)k->classes, why) ||
	    jfig(v, "sample_uniques", NULL, NULL, (double)k->c1, why) ||
	    jfig(v, "smallest_class", NULL, NULL, (double)k->smallest, why) ||
	    jfig(v, "information_loss", "loss", NULL, loss, why) ||
	    jfig(v, "information_loss", "loss_arithmetic", NULL, arith, why) ||
	    (c->pu && (k->c1 == 0 || strcmp(gp_models[c->model], "zayatz") ==
	    0) && jfig(v, "pu_fraction", NULL, NULL, pu, why)) ||
	    check_residual(c, json_object_get(v, "residual"), k, why))
		return -1;
	for (j = 0; j < c->nqi; j++) {
		snprintf(name, sizeof(name), "q%u", (unsigned)j % 10);
		lv = jpath(v, "levels", name, NULL);
		if (!json_is_integer(lv) || json_integer_value(lv) !=
		    (json_int_t)k->level[j])
			return snprintf(why, 512, "verified.levels.%s is not the "
			    "level %u the release shows", name, k->level[j]),
			    -1;
	}
	return 0;
}

/* The verdict: "passed", and the call-out exactly when more than half
 * the records (the default share) are suppressed. */
static int
check_verdict(json_t *rep, const struct gp_count *k, char *why)
{
	json_t *g = json_object_get(rep, "gate");
	const char *v = json_string_value(json_object_get(g, "verdict"));
	size_t nw = json_array_size(json_object_get(g, "warnings"));
	int over = (double)k->suppressed / (double)k->n > 0.5;

	if (v == NULL || strcmp(v, "passed") != 0)
		return snprintf(why, 512, "gate passed, verdict \"%s\"",
		    v ? v : "(none)"), -1;
	if (over != (nw > 0))
		return snprintf(why, 512, "%zu of %zu suppressed, %zu call-outs",
		    k->suppressed, k->n, nw), -1;
	return 0;
}

/* The report's figures against our count. */
static int
check_report(const struct gp_case *c, json_t *rep, const struct gp_count *k,
    char *why)
{
	double n = (double)k->released;
	struct gp_count in;

	count_input(c, &in);
	if (jfig(rep, "records", NULL, NULL, (double)k->n, why) != 0 ||
	    jfig(rep, "suppressed_records", NULL, NULL, (double)k->suppressed,
	    why) != 0 ||
	    jfig(rep, "risk", "after", "records", n, why) ||
	    jfig(rep, "risk", "after", "classes", (double)k->classes, why) ||
	    jfig(rep, "risk", "after", "sample_uniques", (double)k->c1, why) ||
	    jfig(rep, "risk", "before", "records", (double)in.n, why) ||
	    jfig(rep, "risk", "before", "classes", (double)in.classes, why) ||
	    jfig(rep, "risk", "before", "sample_uniques", (double)in.c1, why))
		return -1;
	return check_attack(rep, k, why) != 0 ||
	    check_residual(c, jpath(rep, "risk", "after", "residual"), k, why)
	    != 0 ? -1 : 0;
}

/* A passed gate: read the release, count it, check everything. */
static int
check_passed(const struct gp_case *c, const char *dir, json_t *rep,
    char *why)
{
	int incol[GP_MAXCOL], qicol[GP_MAXQI], supp[GP_MAXROWS + 1] = { 0 };
	struct gp_count k;
	struct gp_table t;
	char path[512];
	double loss, arith;
	int r = -1;

	memset(&k, 0, sizeof(k));
	snprintf(path, sizeof(path), "%s/out.csv", dir);
	if (rep == NULL)
		return snprintf(why, 512, "gate passed without a report"), -1;
	if (read_table(path, c->sep, &t, why) != 0)
		goto out;
	if (check_header(c, &t, incol, qicol, why) != 0 ||
	    report_levels(c, rep, &k, why) != 0 ||
	    check_rows(c, &t, incol, qicol, supp, &k, why) != 0)
		goto out;
	count_classes(c, &t, qicol, supp, &k);
	if (check_criteria(c, &k, why) != 0 || check_report(c, rep, &k, why) != 0 ||
	    check_pu(c, rep, &k, why) != 0)
		goto out;
	loss = own_loss2(c, supp, k.level, &arith);
	if (jfig(rep, "quality", "loss", NULL, 1 - loss, why) != 0 ||
	    jfig(rep, "quality", "loss_arithmetic", NULL, 1 - arith, why) ||
	    jfig(rep, "quality", "nu_entropy", NULL,
	    1 - own_entropy(c, supp, k.level), why) ||
	    check_verified(c, rep, &k, loss, arith, why) != 0 ||
	    check_verdict(rep, &k, why) != 0)
		goto out;
	r = 0;
out:
	table_free(&t);
	return r;
}

/* ---- checks of a failed gate ---- */

struct gp_rowkey {
	char	 key[GP_MAXQI * (GP_VAL + 1)];
	int	 stars;		/* every QI "*": written as suppressed */
	size_t	 row;
};

static int
cmp_rowkey(const void *a, const void *b)
{
	return strcmp(((const struct gp_rowkey *)a)->key,
	    ((const struct gp_rowkey *)b)->key);
}

/* Records one node would suppress under k alone: the classes smaller
 * than k, and rows whose every QI is "*" at that node; supp[row + 1]
 * says which. */
static size_t
node_suppressed(const struct gp_case *c, const unsigned *lv,
    struct gp_rowkey *rk, int *supp)
{
	size_t r, j, i, m, run, S = 0;
	const char *v;

	for (r = 0; r < c->nrows; r++) {
		rk[r].key[0] = '\0';
		rk[r].stars = 1;
		rk[r].row = r;
		for (j = 0; j < c->nqi; j++) {
			v = c->h[j].val[c->leaf[r][j]][lv[j]];
			rk[r].stars &= strcmp(v, "*") == 0;
			strcat(strcat(rk[r].key, v), "\x1f");
		}
	}
	qsort(rk, c->nrows, sizeof(*rk), cmp_rowkey);
	for (i = 0; i < c->nrows; i += run) {
		for (run = 1; i + run < c->nrows &&
		    strcmp(rk[i].key, rk[i + run].key) == 0;)
			run++;
		for (m = i; m < i + run; m++)
			supp[rk[m].row + 1] = run < c->k || rk[i].stars;
		S += supp[rk[i].row + 1] ? run : 0;
	}
	return S;
}

/* k-anonymity alone (no PU, no game): does some node meet k within the
 * suppression limit, release a record and lose less than suppressing
 * every record would?  (At equal Loss the search may rightly prefer
 * suppressing all.)  Every node is tried; lv gets the first. */
static int
own_feasible(const struct gp_case *c, unsigned *lv, size_t *S)
{
	static struct gp_rowkey rk[GP_MAXROWS];
	int supp[GP_MAXROWS + 1];
	double all;
	size_t j;

	memset(lv, 0, GP_MAXQI * sizeof(*lv));
	for (j = 0; j <= c->nrows; j++)
		supp[j] = 1;
	all = own_loss(c, supp, lv);
	for (;;) {
		*S = node_suppressed(c, lv, rk, supp);
		if (*S < c->nrows &&
		    (double)*S <= c->limit * (double)c->nrows + 1e-9 &&
		    own_loss(c, supp, lv) < all - 1e-9)
			return 1;
		for (j = 0; j < c->nqi && ++lv[j] == c->h[j].nlevels; j++)
			lv[j] = 0;
		if (j == c->nqi)
			return 0;
	}
}

/* A failed gate under k alone must have had no informative choice. */
static int
check_failed(const struct gp_case *c, char *why)
{
	unsigned lv[GP_MAXQI];
	size_t S;

	if (c->pu || c->game || c->k < 2 || !own_feasible(c, lv, &S))
		return 0;
	return snprintf(why, 512, "gate failed, yet levels %u,%u,%u,%u "
	    "release %zu of %zu records, suppressing %zu within the limit "
	    "%.17g", lv[0], lv[1], lv[2], lv[3], c->nrows - S, c->nrows, S,
	    c->limit), -1;
}

/* A repeated hierarchy row is reported as a warning naming its line. */
static int
check_warning(const struct gp_case *c, json_t *rep, char *why)
{
	char want[64];
	json_t *w;
	size_t i;

	if (c->dup_q < 0 || rep == NULL)
		return 0;
	snprintf(want, sizeof(want), "%s:%zu:", gp_files[GP_HIER0 + c->dup_q],
	    c->h[c->dup_q].nleaves + 1);
	json_array_foreach(json_object_get(rep, "warnings"), i, w)
		if (strstr(json_string_value(w) ? json_string_value(w) : "",
		    want) != NULL)
			return 0;
	return snprintf(why, 512, "no warning for the repeated row %s",
	    want), -1;
}

/* ---- running the gate ---- */

struct gp_result {
	int	 exit;		/* as the CLI's: 0 passed, 3 failed */
	json_t	*report;
	char	 msg[512];
};

const char *const gp_files[GP_NFILES] = {
	"data.csv", "out.csv", "r.json", "stdout.txt", "hierarchy_q0.csv",
	"hierarchy_q1.csv", "hierarchy_q2.csv", "hierarchy_q3.csv", "tampered.csv",
};

/* A double for the command line, exactly. */
static void
fmt_real(char *out, double v)
{
	snprintf(out, 32, "%.17g", v);
}

/* `cdsgate deid anonymize` with the case's criteria, in this process's
 * child, parsing in-process (no seccomp'd worker). */
static void
run_cli(const char *cdsgate, const struct gp_case *c, const char *dir,
    struct gp_result *res)
{
	char a[64][600], *argv[65], sep[2] = { c->sep, 0 }, path[600];
	size_t n = 0, i, j;
	int st, fd;
	pid_t pid;
	FILE *f;

#define ARG(...)	(snprintf(a[n], sizeof(a[n]), __VA_ARGS__), \
			    argv[n] = a[n], n++)
	ARG("%s", cdsgate); ARG("deid"); ARG("anonymize"); ARG("--in-process");
	ARG("--data"); ARG("%s/data.csv", dir);
	ARG("--hierarchies"); ARG("%s", dir);
	ARG("--output"); ARG("%s/out.csv", dir);
	ARG("--report"); ARG("%s/r.json", dir);
	ARG("--separator"); ARG("%s", sep);
	ARG("--threads"); ARG("%u", c->threads);
	ARG("--suppression-limit"); fmt_real(a[n], c->limit); argv[n] = a[n];
	n++;
	ARG("--qi"); a[n][0] = '\0';
	for (j = 0; j < c->nqi; j++)
		snprintf(a[n] + strlen(a[n]), 8, "%sq%u", j ? "," : "", (unsigned)j % 10);
	argv[n] = a[n];
	n++;
	for (i = 0; i < c->ncols; i++)
		if (c->col[i].kind == GP_COL_ID) {
			ARG("--identifying"); ARG("%s", c->col[i].name);
		} else if (c->col[i].kind == GP_COL_SENS) {
			ARG("--sensitive"); ARG("%s", c->col[i].name);
		} else if (c->col[i].kind == GP_COL_INS) {
			ARG("--insensitive"); ARG("%s", c->col[i].name);
		}
	if (c->k > 1) {
		ARG("--k"); ARG("%u", c->k);
	}
	if (c->pu) {
		ARG("--pu-threshold"); fmt_real(a[n], c->t); argv[n] = a[n];
		n++;
		ARG("--population"); fmt_real(a[n], c->N); argv[n] = a[n];
		n++;
		ARG("--pu-model"); ARG("%s", gp_models[c->model]);
	}
	if (c->game) {
		ARG("--game"); ARG("%s", c->game == 1 ? "no-attack" : "payout");
		ARG("--game-cost"); ARG("%g", c->cost);
		ARG("--game-gain"); ARG("%g", c->gain);
		ARG("--game-benefit"); ARG("%g", c->benefit);
	}
#undef ARG
	argv[n] = NULL;
	snprintf(path, sizeof(path), "%s/stdout.txt", dir);
	if ((pid = fork()) == 0) {
		if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0)
			_exit(125);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(cdsgate, argv);
		_exit(126);
	}
	res->exit = pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) ?
	    WEXITSTATUS(st) : 128;
	if ((f = fopen(path, "r")) != NULL) {
		res->msg[fread(res->msg, 1, sizeof(res->msg) - 1, f)] = '\0';
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/r.json", dir);
	res->report = json_load_file(path, 0, NULL);
}

/* A case file as the job's bytes. */
static int
slurp(const char *dir, const char *name, struct deid_job_file *f,
    char **buf)
{
	char path[600];
	long len;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fp = fopen(path, "r")) == NULL)
		return -1;
	fseek(fp, 0, SEEK_END);
	len = ftell(fp);
	rewind(fp);
	if (len < 0 || (*buf = malloc((size_t)len + 1)) == NULL ||
	    fread(*buf, 1, (size_t)len, fp) != (size_t)len) {
		fclose(fp);
		return -1;
	}
	fclose(fp);
	f->name = name;
	f->data = *buf;
	f->len = (size_t)len;
	return 0;
}

/* The job's lists and criteria from the case. */
static void
lib_job(const struct gp_case *c, struct deid_job *job, const char **names,
    const double *pop)
{
	const char **lists[4];
	size_t *counts[4], i, k;

	memset(job, 0, sizeof(*job));
	lists[GP_COL_QI] = names, counts[GP_COL_QI] = &job->nqi;
	lists[GP_COL_ID] = names + GP_MAXCOL, counts[GP_COL_ID] = &job->nidentifying;
	lists[GP_COL_SENS] = names + 2 * GP_MAXCOL,
	    counts[GP_COL_SENS] = &job->nsensitive;
	lists[GP_COL_INS] = names + 3 * GP_MAXCOL,
	    counts[GP_COL_INS] = &job->ninsensitive;
	for (i = 0; i < c->ncols; i++) {
		k = (size_t)c->col[i].kind;
		if (k == GP_COL_QI)
			lists[k][c->col[i].qi] = c->col[i].name;
		else
			lists[k][*counts[k]] = c->col[i].name;
		(*counts[k])++;
	}
	job->qi = lists[GP_COL_QI];
	job->identifying = lists[GP_COL_ID];
	job->sensitive = lists[GP_COL_SENS];
	job->insensitive = lists[GP_COL_INS];
	job->csv.separator = c->sep;
	job->sopts.threads = c->threads;
	job->sopts.crit.k = c->k;
	job->sopts.crit.suppression_limit = c->limit;
	deid_model_parse(gp_models[c->model], &job->sopts.crit.pu_model);
	if ((job->sopts.crit.pu = c->pu)) {
		job->sopts.crit.pu_threshold = c->t;
		job->sopts.crit.population = c->N;
		job->population = pop;
		job->npopulation = 1;
	}
	deid_game_defaults(&job->sopts.crit.game);
	if (c->game) {
		deid_game_variant_parse(c->game == 1 ? "no-attack" : "payout",
		    &job->sopts.crit.game.variant);
		job->sopts.crit.game.cost = c->cost;
		job->sopts.crit.game.gain = c->gain;
		job->sopts.crit.game.benefit = c->benefit;
	}
	job->warn_suppressed = DEID_DEFAULT_WARN_SUPPRESSED;
}

/* deid_anonymize() on the case's files, the released table into
 * dir/out.csv; as its contract asks of the caller (and the CLI does),
 * the file is removed unless the call says it is released, so the
 * gate's verdict and rep->released must agree (else exit 1). */
static void
run_lib(const struct gp_case *c, const char *dir, struct gp_result *res)
{
	const char *names[4 * GP_MAXCOL];
	char *bufs[1 + GP_MAXQI] = { NULL }, path[600];
	struct deid_error err = { .msg = "" };
	struct deid_anon_report rep;
	struct deid_job job;
	size_t j;
	int r, fd;

	memset(&rep, 0, sizeof(rep));
	lib_job(c, &job, names, &c->N);
	snprintf(path, sizeof(path), "%s/out.csv", dir);
	res->exit = 125;
	if (slurp(dir, "data.csv", &job.data, &bufs[0]) != 0 ||
	    (fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600)) < 0) {
		snprintf(res->msg, sizeof(res->msg), "cannot set up the job");
		goto out;
	}
	for (j = 0; j < c->nqi; j++)
		if (slurp(dir, gp_files[GP_HIER0 + j], &job.hier[j],
		    &bufs[1 + j]) != 0) {
			snprintf(res->msg, sizeof(res->msg), "cannot read %s",
			    gp_files[GP_HIER0 + j]);
			close(fd);
			goto out;
		}
	job.out_fd = fd;
	job.out_name = "out.csv";
	r = deid_anonymize(&job, &rep, &err);
	if (r != DEID_OK) {
		res->exit = r == DEID_EINPUT ? 2 : 1;
		deid_error_format(&err, res->msg, sizeof(res->msg));
	} else {
		res->exit = rep.gate_passed ? 0 : 3;
		res->report = deid_report_anonymize(&rep);
		if (rep.gate_passed != rep.released) {
			res->exit = 1;
			snprintf(res->msg, sizeof(res->msg), "gate %d but "
			    "released %d", rep.gate_passed, rep.released);
		}
	}
	if (!rep.released)
		unlink(path);	/* the caller discards what is not released */
	close(fd);
out:
	deid_anon_report_free(&rep);
	for (j = 0; j <= GP_MAXQI; j++)
		free(bufs[j]);
}

/* ---- the verifier on a tampered release ---- */

/* One change to a passed release: a released record's first QI made
 * unique, up to three released records marked suppressed, or a released
 * record written twice. */
static void
tamper(const struct gp_case *c, struct gp_table *t, const int *qicol,
    struct gp_rng *s)
{
	size_t r, j, n, m = gp_rnd(s, 3);

	for (n = 0; n < (m == 1 ? 1 + gp_rnd(s, 3) : 1); n++) {
		r = 1 + gp_rnd(s, (unsigned)t->nrows - 1);
		if (strcmp(t->cell[r][qicol[0]], "*") == 0)
			continue;	/* suppressed already: no change */
		if (m == 0 || (m == 2 && t->nrows > GP_MAXROWS)) {
			free(t->cell[r][qicol[0]]);
			t->cell[r][qicol[0]] = strdup("tampered");
		} else if (m == 1)
			for (j = 0; j < c->nqi; j++) {
				free(t->cell[r][qicol[j]]);
				t->cell[r][qicol[j]] = strdup("*");
			}
		else {
			for (j = 0; j < t->ncols; j++)
				t->cell[t->nrows][j] = strdup(t->cell[r][j]);
			t->nrows++;
		}
	}
}

static int
write_table(const char *path, const struct gp_table *t, char sep)
{
	size_t r, i;
	FILE *f;

	if ((f = fopen(path, "w")) == NULL)
		return -1;
	for (r = 0; r < t->nrows; r++)
		for (i = 0; i < t->ncols; i++) {
			put_field(f, t->cell[r][i], sep);
			putc(i + 1 < t->ncols ? sep : '\n', f);
		}
	return fclose(f);
}

/* Our count of a table whose columns are known: suppressed = all "*". */
static void
count_table(const struct gp_case *c, const struct gp_table *t,
    const int *qicol, struct gp_count *k)
{
	int supp[GP_MAXROWS + 2] = { 0 };
	size_t r, j;

	memset(k, 0, sizeof(*k));
	for (r = 1; r < t->nrows; r++) {
		for (supp[r] = 1, j = 0; j < c->nqi; j++)
			supp[r] &= strcmp(t->cell[r][qicol[j]], "*") == 0;
		k->suppressed += supp[r];
	}
	k->n = t->nrows - 1;
	k->released = k->n - k->suppressed;
	count_classes(c, t, qicol, supp, k);
}

/* Do k, the limit and (No-Attack) the game hold on our count?  -1: they
 * do, as far as we can tell, but PU or the payout game may not. */
static int
own_verdict(const struct gp_case *c, const struct gp_count *k)
{
	char why[512];

	if (check_criteria(c, k, why) != 0)
		return 0;
	return c->pu || c->game == 2 ? -1 : 1;
}

/* deid_verify_release on the tampered bytes: its counts are ours, and
 * its verdict ours wherever ours is certain. */
static int
verify_bytes(const struct gp_case *c, const char *dir, const char *name,
    const struct gp_count *k, char *why)
{
	const char *names[4 * GP_MAXCOL];
	struct deid_error err = { .msg = "" };
	struct deid_verify_opts o;
	struct deid_verified v;
	struct deid_job job;
	struct deid_job_file f;
	char *buf = NULL;
	int r = -1, own = own_verdict(c, k);

	memset(&o, 0, sizeof(o));
	memset(&v, 0, sizeof(v));
	lib_job(c, &job, names, &c->N);
	o.qi = job.qi;
	o.nqi = job.nqi;
	o.crit = job.sopts.crit;
	o.population = job.population;
	o.npopulation = job.npopulation;
	o.warn_suppressed = DEID_DEFAULT_WARN_SUPPRESSED;
	o.csv.separator = c->sep;
	if (slurp(dir, name, &f, &buf) != 0) {
		snprintf(why, 512, "cannot read %s", name);
		return -1;
	}
	if (deid_verify_release(f.data, f.len, name, &o, &v, &err) != DEID_OK)
		snprintf(why, 512, "deid_verify_release: %.400s", err.msg);
	else if (v.records != k->n || v.suppressed != k->suppressed ||
	    v.classes != k->classes || v.sample_uniques != k->c1 ||
	    v.smallest_class != k->smallest)
		snprintf(why, 512, "verify counts %" PRIu64 "/%" PRIu64 "/%"
		    PRIu64 "/%" PRIu64 "/%" PRIu64 ", we %zu/%zu/%zu/%zu/%zu "
		    "(records/suppressed/classes/uniques/smallest)", v.records,
		    v.suppressed, v.classes, v.sample_uniques, v.smallest_class,
		    k->n, k->suppressed, k->classes, k->c1, k->smallest);
	else if (own >= 0 && v.passed != own)
		snprintf(why, 512, "tampered release: verify says %s, the "
		    "criteria %s", v.passed ? "passed" : "failed",
		    own ? "hold" : "do not hold");
	else
		r = 0;
	deid_verified_free(&v);
	free(buf);
	return r;
}

/* A passed release, changed once, through the verifier. */
static int
check_tampered(const struct gp_case *c, const char *dir, char *why)
{
	int incol[GP_MAXCOL], qicol[GP_MAXQI], r = -1;
	struct gp_count k;
	struct gp_table t;
	struct gp_rng s;
	char path[600];

	gp_rng_init(&s, c->seed ^ 0x7a3bULL, NULL, 0);
	snprintf(path, sizeof(path), "%s/out.csv", dir);
	if (read_table(path, c->sep, &t, why) != 0 ||
	    check_header(c, &t, incol, qicol, why) != 0)
		goto out;
	tamper(c, &t, qicol, &s);
	count_table(c, &t, qicol, &k);
	snprintf(path, sizeof(path), "%s/tampered.csv", dir);
	if (write_table(path, &t, c->sep) != 0)
		snprintf(why, 512, "cannot write %.400s", path);
	else
		r = verify_bytes(c, dir, "tampered.csv", &k, why);
out:
	table_free(&t);
	return r;
}

/* Run one case in dir, leave its files there; judge it. */
int
gp_run_case(const char *cli, const struct gp_case *c, const char *dir,
    int *passed, char *why)
{
	struct gp_result res = { .exit = -1 };
	char path[600];
	int r = -1;

	if (write_files(c, dir) != 0) {
		snprintf(why, 512, "cannot write the case: %s", strerror(errno));
		goto out;
	}
	if (cli != NULL)
		run_cli(cli, c, dir, &res);
	else
		run_lib(c, dir, &res);
	snprintf(path, sizeof(path), "%s/out.csv", dir);
	*passed = res.exit == 0;
	if ((res.exit == 0 || res.exit == 3) &&
	    check_warning(c, res.report, why) != 0)
		goto out;
	if (res.exit == 0) {
		if ((r = check_passed(c, dir, res.report, why)) == 0)
			r = check_tampered(c, dir, why);
	} else if (res.exit != 3)
		snprintf(why, 512, "exit %d: %.400s", res.exit, res.msg);
	else if (access(path, F_OK) == 0)
		snprintf(why, 512, "gate failed (exit 3), yet %.400s exists", path);
	else
		r = check_failed(c, why);
out:
	json_decref(res.report);
	return r;
}

/* ---- describing and cleaning up ---- */

/* Distinct values at one level of h. */
size_t
gp_distinct_at(const struct gp_hier *h, size_t l)
{
	size_t i, p, n = 0;

	for (i = 0; i < h->nleaves; i++) {
		for (p = 0; p < i && strcmp(h->val[p][l], h->val[i][l]); p++)
			;
		n += p == i;
	}
	return n;
}

/* The case in a few TAP comment lines, to reproduce it by its seed. */
void
gp_describe_case(FILE *f, const struct gp_case *c)
{
	size_t j;

	fprintf(f, "#   case seed %" PRIu64 ": %zu records, sep '%c', k %u, "
	    "limit %.17g, PU %s t %g N %.17g (%s), game %d (cost %g gain %g)\n",
	    c->seed, c->nrows, c->sep, c->k, c->limit, c->pu ? "on" : "off",
	    c->t, c->N, gp_models[c->model], c->game, c->cost, c->gain);
	for (j = 0; j < c->nqi; j++)
		fprintf(f, "#   q%zu: %zu leaves, %zu levels, %zu top values\n", j,
		    c->h[j].nleaves, c->h[j].nlevels,
		    gp_distinct_at(&c->h[j], c->h[j].nlevels - 1));
}

/* Remove the case's files; anything else left in dir is a stray
 * (a temporary file the gate forgot). */
int
gp_clean_dir(const char *dir, char *why)
{
	char path[600];
	size_t i;

	for (i = 0; i < GP_NFILES; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, gp_files[i]);
		unlink(path);
	}
	if (rmdir(dir) == 0 && mkdir(dir, 0700) == 0)
		return 0;
	snprintf(why, 512, "%s: %s (a stray file left behind?)", dir,
	    strerror(errno));
	return -1;
}

