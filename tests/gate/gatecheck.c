/*
 * tests/gate/gatecheck.c — the independent checker (gatecase.h): reads a
 * released file with its own CSV reader, builds its own classes from the
 * written strings, recomputes Loss, non-uniform entropy and Zayatz's PU
 * itself, and holds the report, the verifier and the verdict to them.
 * Shares no code with deid/ but the calls under test.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deid/anonymize.h"
#include "deid/verify.h"
#include "tests/gate/gatecase.h"

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
own_loss(const struct gp_case *c, const int *supp, const unsigned *level,
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
			    strcmp(t->cell[r][i], gp_input_cell(c, r - 1,
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
		if (k->level[j] < c->floor[j])
			return snprintf(why, 512, "report transformation.%s "
			    "is %u, below its Safe Harbor level %u", name,
			    k->level[j], c->floor[j]), -1;
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
int
gp_check_passed(const struct gp_case *c, const char *dir, json_t *rep,
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
	loss = own_loss(c, supp, k.level, &arith);
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

/* Is no QI of the node below the case's Safe Harbor floor? */
static int
floor_ok(const struct gp_case *c, const unsigned *lv)
{
	size_t j;

	for (j = 0; j < c->nqi; j++)
		if (lv[j] < c->floor[j])
			return 0;
	return 1;
}

/* k-anonymity alone (no PU, no game): does some node at or above the
 * Safe Harbor floor meet k within the suppression limit and release a
 * record?  Suppressing every record loses most, and at equal Loss the
 * search prefers a node that releases.  Every node is tried; lv gets the
 * first. */
static int
own_feasible(const struct gp_case *c, unsigned *lv, size_t *S)
{
	static struct gp_rowkey rk[GP_MAXROWS];
	int supp[GP_MAXROWS + 1];
	size_t j;

	memset(lv, 0, GP_MAXQI * sizeof(*lv));
	for (;;) {
		if (floor_ok(c, lv) &&
		    (*S = node_suppressed(c, lv, rk, supp)) < c->nrows &&
		    (double)*S <= c->limit * (double)c->nrows + 1e-9)
			return 1;
		for (j = 0; j < c->nqi && ++lv[j] == c->h[j].nlevels; j++)
			lv[j] = 0;
		if (j == c->nqi)
			return 0;
	}
}

/* A failed gate under k alone must have had no informative choice. */
int
gp_check_failed(const struct gp_case *c, char *why)
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
int
gp_check_warning(const struct gp_case *c, json_t *rep, char *why)
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
			gp_put_field(f, t->cell[r][i], sep);
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
	gp_lib_job(c, &job, names, &c->N);
	o.qi = job.qi;
	o.nqi = job.nqi;
	o.crit = job.sopts.crit;
	/* No hierarchies here, so no levels: without them verify fails any
	 * Safe Harbor floor (report_levels checks the floor on passes). */
	memset(o.crit.min_level, 0, sizeof(o.crit.min_level));
	o.population = job.population;
	o.npopulation = job.npopulation;
	o.warn_suppressed = DEID_DEFAULT_WARN_SUPPRESSED;
	o.csv.separator = c->sep;
	if (gp_slurp(dir, name, &f, &buf) != 0) {
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
int
gp_check_tampered(const struct gp_case *c, const char *dir, char *why)
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
