/*
 * tests/unit/test-hierarchy.c — deid/hierarchy.c: the materialized
 * arrays on a hand-checked example, every validation error (message
 * names file and line), flat hierarchies, and every real hierarchy under
 * ../shared/data (shapes from an independent count, structural
 * invariants, single root, every dataset value found as a leaf).
 */
#include "config.h"

#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "deid/csv.h"
#include "deid/hierarchy.h"
#include "tests/tap.h"
#include "tests/testdata.h"

static int
hparse(const char *s, struct deid_hierarchy **h, struct deid_error *e)
{
	memset(e, 0, sizeof(*e));
	return deid_hierarchy_parse(s, strlen(s), "h.csv", NULL, h, e);
}

/* Level-by-level check of the example in test_example(). */
static int
level_is(const struct deid_hierarchy *h, size_t l, const char *const *v,
    size_t n, const uint64_t *leaves)
{
	size_t i;

	if (h->ndomain[l] != n)
		return 0;
	for (i = 0; i < n; i++)
		if (strcmp(h->values[l][i], v[i]) != 0 ||
		    h->leaves[l][i] != leaves[i])
			return 0;
	return 1;
}

static void
test_example(void)
{
	static const char *const l0[] = { "b", "a", "c", "d" };
	static const char *const l1[] = { "x", "y" };
	static const char *const l2[] = { "*" };
	static const uint64_t n0[] = { 1, 1, 1, 1 }, n1[] = { 2, 2 },
	    n2[] = { 4 };
	static const uint32_t map1[] = { 0, 0, 1, 1 }, up0[] = { 0, 0, 1, 1 };
	struct deid_hierarchy *h = NULL;
	struct deid_error e;
	uint32_t leaf = 99;
	int r;

	r = hparse("b;x;*\na;x;*\nc;y;*\r\nd;y;*", &h, &e);
	if (!tap_ok(r == DEID_OK && h != NULL, "example parses (%s)", e.msg))
		return;
	tap_ok(h->nleaves == 4 && h->nlevels == 3 && h->ndup == 0,
	    "4 leaves, 3 levels");
	tap_ok(level_is(h, 0, l0, 4, n0) && level_is(h, 1, l1, 2, n1) &&
	    level_is(h, 2, l2, 1, n2),
	    "values in first-appearance order, leaf counts per value");
	tap_ok(memcmp(h->map[1], map1, sizeof(map1)) == 0 &&
	    h->map[2][0] == 0 && h->map[2][3] == 0 && h->map[0][2] == 2,
	    "map[level][leaf]");
	tap_ok(memcmp(h->up[0], up0, sizeof(up0)) == 0 && h->up[1][0] == 0 &&
	    h->up[1][1] == 0 && h->up[2] == NULL, "up[level][code]");
	tap_ok(deid_hierarchy_lookup(h, "c", &leaf) == DEID_OK && leaf == 2,
	    "lookup(\"c\") = 2");
	tap_ok(deid_hierarchy_lookup(h, "x", &leaf) == DEID_EINPUT &&
	    deid_hierarchy_lookup(h, "", &leaf) == DEID_EINPUT &&
	    deid_hierarchy_lookup(h, "bb", &leaf) == DEID_EINPUT,
	    "non-leaves are not found");
	deid_hierarchy_free(h);
	deid_hierarchy_free(NULL);
	tap_ok(1, "free(NULL) is a no-op");
}

/* Twenty repeats: sixteen warnings, the last one counting the rest. */
static void
test_many_repeats(void)
{
	const struct deid_warning *w;
	struct deid_hierarchy *h = NULL;
	struct deid_error e;
	char text[2048], msg[1024];
	size_t len = 0, i;
	int r;

	len += (size_t)snprintf(text, sizeof(text), "a;*\n");
	for (i = 0; i < 20; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "a;*\n");
	r = hparse(text, &h, &e);
	w = r == DEID_OK ? deid_hierarchy_warning(h, 15) : NULL;
	if (w != NULL)
		deid_warning_format(w, msg, sizeof(msg));
	tap_ok(r == DEID_OK && h->ndup == 20 && deid_hierarchy_nwarnings(h) ==
	    DEID_HIERARCHY_MAX_WARNINGS && w != NULL && w->line == 17 &&
	    strstr(msg, "(and 4 more repeated rows not listed)") != NULL,
	    "20 repeats: %d warnings, the last: %s",
	    DEID_HIERARCHY_MAX_WARNINGS, w != NULL ? msg : "(none)");
	deid_hierarchy_free(h);
}

/* The code of "*" per level: where a class reads as suppressed. */
static void
test_star_codes(void)
{
	struct deid_hierarchy *h = NULL;
	struct deid_error e;
	int r;

	r = hparse("a;x;*\nb;*;*\nc;y;*\n", &h, &e);
	tap_ok(r == DEID_OK && h->star[0] == DEID_NO_CODE &&
	    h->star[1] == 1 && h->star[2] == 0, "\"*\" found per level "
	    "(uneven depth: at level 1 too)");
	deid_hierarchy_free(h);
	r = hparse("a;T1\nb;T2\n", &h, &e);
	tap_ok(r == DEID_OK && h->star[0] == DEID_NO_CODE &&
	    h->star[1] == DEID_NO_CODE, "two top values, no \"*\": no level "
	    "reads as suppressed");
	deid_hierarchy_free(h);
	r = hparse("a\n*\n", &h, &e);
	tap_ok(r == DEID_OK && h->nlevels == 1 && h->star[0] == 1,
	    "one column with the leaf \"*\"");
	deid_hierarchy_free(h);
}

static void
test_shapes(void)
{
	const struct deid_warning *w;
	struct deid_hierarchy *h = NULL;
	struct deid_error e;
	char msg[1024];
	uint32_t leaf;
	int r;

	r = hparse("1;1;*\n2;1;*\n*;2;*\n", &h, &e);
	tap_ok(r == DEID_OK && h->ndomain[0] == 3 && h->ndomain[1] == 2 &&
	    deid_hierarchy_lookup(h, "*", &leaf) == DEID_OK && leaf == 2,
	    "levels are separate namespaces (\"1\", \"*\" on two levels)");
	deid_hierarchy_free(h);
	r = hparse("0;[0,4];[0,9]\n5;[5,9];[0,9]\n", &h, &e);
	tap_ok(r == DEID_OK && h->nlevels == 3 &&
	    strcmp(h->values[1][1], "[5,9]") == 0,
	    "interval labels: ';' on a tie");
	deid_hierarchy_free(h);
	r = hparse("Master's (MA, MS, MEng, MEd);Graduate;*\nBA;Grad;*\n",
	    &h, &e);
	tap_ok(r == DEID_OK && h->nlevels == 3 && h->nleaves == 2,
	    "ATUS-style label: 3 commas vs 2 ';' still ';' (%s)", e.msg);
	deid_hierarchy_free(h);
	r = hparse("a,x,*\nb,x,*\n", &h, &e);
	tap_ok(r == DEID_OK && h->nlevels == 3, "',' hierarchy detected");
	deid_hierarchy_free(h);
	r = hparse("\"a;1\";x;*\n\"b\nc\";x;*\n", &h, &e);
	tap_ok(r == DEID_OK && h->nleaves == 2 &&
	    strcmp(h->values[0][1], "b\nc") == 0, "quoted leaves");
	deid_hierarchy_free(h);
	r = hparse("a\nb\n", &h, &e);
	tap_ok(r == DEID_OK && h->nlevels == 1 && h->ndomain[0] == 2 &&
	    h->up[0] == NULL, "one column: leaves only");
	deid_hierarchy_free(h);
	r = hparse("a;x;*\nb;y;*\na;x;*\n", &h, &e);
	w = h != NULL ? deid_hierarchy_warning(h, 0) : NULL;
	if (w != NULL)
		deid_warning_format(w, msg, sizeof(msg));
	tap_ok(r == DEID_OK && h->nleaves == 2 && h->ndup == 1 &&
	    deid_hierarchy_nwarnings(h) == 1 && w != NULL &&
	    strcmp(msg, "h.csv:3:1: leaf \"a\" repeats line 1; merged, "
	    "counted once") == 0 && deid_hierarchy_warning(h, 1) == NULL &&
	    h->leaves[2][0] == 2, "verbatim repeated row merged, warned: %s",
	    w != NULL ? msg : "(no warning)");
	deid_hierarchy_free(h);
	r = hparse("a;x;*\nb;y;*\n", &h, &e);
	tap_ok(r == DEID_OK && deid_hierarchy_nwarnings(h) == 0,
	    "no repeat, no warning");
	deid_hierarchy_free(h);
	test_many_repeats();
	test_star_codes();
}

/* Expect a validation error on line, naming h.csv, whose message holds
 * every string in subs. */
static void
expect_herr(const char *s, int status, unsigned long line,
    const char *const *subs, const char *what)
{
	struct deid_hierarchy *h = (void *)1;
	struct deid_error e;
	int r = hparse(s, &h, &e), ok;
	size_t i;

	ok = r == status && h == NULL && e.line == line &&
	    strcmp(e.file, "h.csv") == 0;
	for (i = 0; subs[i] != NULL; i++)
		ok = ok && strstr(e.msg, subs[i]) != NULL;
	if (!tap_ok(ok, "%s", what))
		tap_diag("got %d %s:%lu: %s", r, e.file, e.line, e.msg);
}

#define SUBS(...)	((const char *const[]){ __VA_ARGS__, NULL })

static void
test_errors(void)
{
	expect_herr("", DEID_EINPUT, 0, SUBS("empty file"), "empty file");
	expect_herr("\n", DEID_EINPUT, 0, SUBS("empty file"),
	    "only a newline: empty file");
	expect_herr("a;x;*\nb;x;*\nc;x\n", DEID_EINPUT, 3,
	    SUBS("row has 2 columns, expected 3 (as on line 1)"),
	    "ragged: short row");
	expect_herr("a;x;*\nb;x;*;*\n", DEID_EINPUT, 2,
	    SUBS("row has 4 columns, expected 3"), "ragged: long row");
	expect_herr("a;x;*\n\nb;x;*\n", DEID_EINPUT, 2, SUBS("blank line"),
	    "blank line inside");
	expect_herr("a;x;*\nb;y;*\na;y;*\n", DEID_EINPUT, 3,
	    SUBS("duplicate leaf \"a\"", "line 1"),
	    "duplicate leaf with another parent names both lines");
	expect_herr("a;x;*\nb;x;*\nc;x;R\n", DEID_EINPUT, 3,
	    SUBS("level 1 value \"x\"", "parent \"R\" here",
	    "\"*\" on line 1"), "inconsistent parent at level 1");
	expect_herr("a;x;p;*\nb;y;p;*\nc;y;q;*\n", DEID_EINPUT, 3,
	    SUBS("level 1 value \"y\"", "\"q\" here", "\"p\" on line 2"),
	    "inconsistent parent names the line that set it");
	expect_herr("a;x;p;*\nb;y;q;*\nc;z;q;R\n", DEID_EINPUT, 3,
	    SUBS("level 2 value \"q\"", "\"R\" here", "\"*\" on line 2"),
	    "inconsistent parent at level 2");
	expect_herr("a;x;*\n;x;*\n", DEID_EINPUT, 2,
	    SUBS("empty value at level 0"), "empty leaf");
	expect_herr("a;x;*\nb;;*\n", DEID_EINPUT, 2,
	    SUBS("empty value at level 1"), "empty inner value");
	expect_herr("a;x;\n", DEID_EINPUT, 1, SUBS("empty value at level 2"),
	    "empty root");
	expect_herr("a;\"\";*\n", DEID_EINPUT, 1,
	    SUBS("empty value at level 1"), "quoted empty value");
	expect_herr("a;x;*\nb;\"x;*\n", DEID_EINPUT, 2,
	    SUBS("unterminated quoted field"), "CSV errors pass through");
	expect_herr("a;x;*\nb\xc0\xaf;x;*\n", DEID_EINPUT, 2,
	    SUBS("overlong"), "invalid UTF-8 in a hierarchy");
}

static void
test_read_and_opts(void)
{
	struct deid_hierarchy *h = (void *)1;
	struct deid_csv_opts o = { ',', 0 };
	struct deid_error e;
	int r;

	r = deid_hierarchy_read("/nonexistent/hierarchy_x.csv", NULL, &h, &e);
	tap_ok(r == DEID_EIO && h == NULL &&
	    strcmp(e.file, "/nonexistent/hierarchy_x.csv") == 0,
	    "missing file: EIO naming the path (%s)", e.msg);
	r = deid_hierarchy_parse("a;1,x,*\n", 8, "o", &o, &h, &e);
	tap_ok(r == DEID_OK && h->nlevels == 3 &&
	    strcmp(h->values[0][0], "a;1") == 0, "given separator is used");
	deid_hierarchy_free(h);
	o.separator = ';';
	o.max_field = 3;
	r = deid_hierarchy_parse("abcd;x\n", 7, "o", &o, &h, &e);
	tap_ok(r == DEID_EINPUT && strstr(e.msg, "longer than 3") != NULL,
	    "max_field is honoured");
}

static void
test_flat(void)
{
	static const char *const v[] = { "b", "a", "", "*" };
	static const char *const dup[] = { "a", "b", "c", "b" };
	struct deid_hierarchy *h = NULL;
	struct deid_error e;
	uint32_t leaf = 99;
	int r;

	r = deid_hierarchy_flat(v, 4, &h, &e);
	tap_ok(r == DEID_OK && h->nleaves == 4 && h->nlevels == 2 &&
	    h->ndomain[1] == 1 && strcmp(h->values[1][0], "*") == 0 &&
	    h->leaves[1][0] == 4 && h->up[0][3] == 0 && h->map[1][2] == 0,
	    "flat: 4 values -> \"*\"");
	tap_ok(r == DEID_OK && deid_hierarchy_lookup(h, "a", &leaf) ==
	    DEID_OK && leaf == 1 && deid_hierarchy_lookup(h, "", &leaf) ==
	    DEID_OK && leaf == 2 && deid_hierarchy_lookup(h, "*", &leaf) ==
	    DEID_OK && leaf == 3, "flat: lookup, incl. \"\" and \"*\"");
	deid_hierarchy_free(h);
	r = deid_hierarchy_flat(dup, 4, &h, &e);
	tap_ok(r == DEID_EINPUT && h == NULL &&
	    strcmp(e.msg, "duplicate value \"b\" (values 2 and 4)") == 0,
	    "flat: duplicates are an error: %s", e.msg);
	r = deid_hierarchy_flat(v, 0, &h, &e);
	tap_ok(r == DEID_EINPUT && h == NULL, "flat: no values");
}

/* A big synthetic hierarchy: lookup of every leaf, and speed. */
static void
test_big(void)
{
	size_t n = 200000, i, len = 0;
	char *d = malloc(n * 32), key[32];
	struct deid_hierarchy *h = NULL;
	struct deid_error e;
	uint32_t leaf;
	int r, bad = 0;

	if (d == NULL)
		exit(99);
	for (i = 0; i < n; i++)
		len += (size_t)sprintf(d + len, "k%zu;g%zu;*\n", i, i % 1000);
	r = deid_hierarchy_parse(d, len, "big", NULL, &h, &e);
	for (i = 0; r == DEID_OK && i < n; i++) {
		snprintf(key, sizeof(key), "k%zu", i);
		bad += deid_hierarchy_lookup(h, key, &leaf) != DEID_OK ||
		    leaf != i;
		snprintf(key, sizeof(key), "g%zu", i);
		bad += deid_hierarchy_lookup(h, key, &leaf) == DEID_OK;
	}
	tap_ok(r == DEID_OK && bad == 0 && h->ndomain[1] == 1000 &&
	    h->leaves[1][7] == 200, "200,000 leaves: every lookup right");
	deid_hierarchy_free(h);
	free(d);
}

/* Shapes counted independently (a Python script over the same files). */
static const struct real {
	const char	*path;
	size_t		 rows;
	size_t		 ndomain[7];	/* 0-terminated */
} reals[] = {
	{ "adult/hierarchy_age.csv", 100, { 100, 20, 10, 5, 1 } },
	{ "adult/hierarchy_education.csv", 16, { 16, 5, 3, 1 } },
	{ "adult/hierarchy_marital-status.csv", 7, { 7, 2, 1 } },
	{ "adult/hierarchy_native-country.csv", 41, { 41, 5, 1 } },
	{ "adult/hierarchy_native-country.pre2016-10.csv", 41, { 41, 6, 1 } },
	{ "adult/hierarchy_occupation.csv", 14, { 14, 3, 1 } },
	{ "adult/hierarchy_race.csv", 5, { 5, 1 } },
	{ "adult/hierarchy_salary-class.csv", 2, { 2, 1 } },
	{ "adult/hierarchy_sex.csv", 2, { 2, 1 } },
	{ "adult/hierarchy_workclass.csv", 8, { 8, 3, 1 } },
	{ "atus/hierarchy_Age.csv", 101, { 101, 21, 11, 6, 4, 1 } },
	{ "atus/hierarchy_Birthplace.csv", 155, { 155, 7, 1 } },
	{ "atus/hierarchy_Citizenship status.csv", 6, { 6, 3, 1 } },
	{ "atus/hierarchy_Highest level of school completed.csv", 18,
	    { 18, 4, 2, 1 } },
	{ "atus/hierarchy_Labor force status.csv", 6, { 6, 3, 1 } },
	{ "atus/hierarchy_Marital status.csv", 7, { 7, 4, 1 } },
	{ "atus/hierarchy_Race.csv", 23, { 23, 5, 1 } },
	{ "atus/hierarchy_Region.csv", 4, { 4, 2, 1 } },
	{ "atus/hierarchy_Sex.csv", 3, { 3, 1 } },
	{ "cup/hierarchy_AGE.csv", 100, { 100, 20, 10, 5, 1 } },
	{ "cup/hierarchy_GENDER.csv", 6, { 6, 1 } },
	{ "cup/hierarchy_INCOME.csv", 7, { 7, 2, 1 } },
	{ "cup/hierarchy_MINRAMNT.csv", 451, { 451, 5, 3, 2, 1 } },
	{ "cup/hierarchy_NGIFTALL.csv", 238, { 238, 12, 6, 3, 1 } },
	{ "cup/hierarchy_RAMNTALL.csv", 5676, { 5676, 6, 3, 2, 1 } },
	{ "cup/hierarchy_STATE.csv", 53, { 53, 1 } },
	{ "cup/hierarchy_ZIP.csv", 100000, { 100000, 10000, 1000, 100, 10,
	    1 } },
	{ "fars/hierarchy_iage.csv", 100, { 100, 20, 10, 5, 3, 1 } },
	{ "fars/hierarchy_ideathday.csv", 33, { 33, 5, 3, 1 } },
	{ "fars/hierarchy_ideathmon.csv", 14, { 14, 5, 3, 1 } },
	{ "fars/hierarchy_ihispanic.csv", 10, { 10, 5, 1 } },
	{ "fars/hierarchy_iinjury.csv", 10, { 10, 5, 1 } },
	{ "fars/hierarchy_irace.csv", 20, { 20, 5, 1 } },
	{ "fars/hierarchy_isex.csv", 3, { 3, 1 } },
	{ "fars/hierarchy_istatenum.csv", 57, { 57, 6, 3, 1 } },
	/* leaf 99 is listed twice, verbatim (lines 99 and 100) */
	{ "fars/int-recoded/hierarchy_iage.csv", 100, { 99, 20, 10, 5, 3,
	    1 } },
	{ "fars/int-recoded/hierarchy_ideathday.csv", 33, { 33, 5, 3, 1 } },
	{ "fars/int-recoded/hierarchy_ideathmon.csv", 14, { 14, 5, 3, 1 } },
	{ "fars/int-recoded/hierarchy_ihispanic.csv", 10, { 10, 5, 1 } },
	{ "fars/int-recoded/hierarchy_iinjury.csv", 10, { 10, 5, 1 } },
	{ "fars/int-recoded/hierarchy_irace.csv", 20, { 20, 5, 1 } },
	{ "fars/int-recoded/hierarchy_isex.csv", 3, { 3, 1 } },
	{ "fars/int-recoded/hierarchy_istatenum.csv", 57, { 57, 6, 3, 1 } },
	{ "ihis/hierarchy_AGE.csv", 100, { 100, 20, 10, 5, 1 } },
	{ "ihis/hierarchy_EDUC.csv", 26, { 26, 1 } },
	{ "ihis/hierarchy_MARSTAT.csv", 10, { 10, 3, 1 } },
	{ "ihis/hierarchy_PERNUM.csv", 25, { 25, 13, 7, 1 } },
	{ "ihis/hierarchy_QUARTER.csv", 4, { 4, 2, 1 } },
	{ "ihis/hierarchy_RACEA.csv", 38, { 38, 1 } },
	{ "ihis/hierarchy_REGION.csv", 4, { 4, 2, 1 } },
	{ "ihis/hierarchy_SEX.csv", 2, { 2, 1 } },
	{ "ihis/hierarchy_YEAR.csv", 112, { 112, 23, 12, 6, 3, 1 } },
};
#define NREALS	(sizeof(reals) / sizeof(reals[0]))

/* Structure that must hold for any loaded hierarchy. */
static int
invariants(const struct deid_hierarchy *h)
{
	size_t l, i;
	uint64_t sum;
	uint32_t leaf;

	for (i = 0; i < h->nleaves; i++) {
		if (h->map[0][i] != i || deid_hierarchy_lookup(h,
		    h->values[0][i], &leaf) != DEID_OK || leaf != i)
			return 0;
		for (l = 0; l + 1 < h->nlevels; l++)
			if (h->up[l][h->map[l][i]] != h->map[l + 1][i])
				return 0;
	}
	for (l = 0; l < h->nlevels; l++) {
		for (i = 0, sum = 0; i < h->ndomain[l]; i++)
			sum += h->leaves[l][i];
		if (sum != h->nleaves)
			return 0;
	}
	return h->ndomain[0] == h->nleaves;
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Load one real hierarchy and check its shape against the table. */
/* Every merged row is a warning naming this file and a line in it. */
static void
real_warnings(const struct deid_hierarchy *h, const char *path,
    const struct real *x)
{
	const struct deid_warning *w;
	char msg[1024] = "";
	size_t i;
	int ok = deid_hierarchy_nwarnings(h) == h->ndup;

	for (i = 0; i < deid_hierarchy_nwarnings(h); i++) {
		w = deid_hierarchy_warning(h, i);
		ok &= strcmp(w->file, path) == 0 && w->line > 1 &&
		    w->line <= x->rows && w->column == 1;
		if (i == 0)
			deid_warning_format(w, msg, sizeof(msg));
	}
	tap_ok(ok, "%s: %zu repeated row(s) warned: %s", x->path, h->ndup,
	    msg);
}

static void
real_one(const char *dir, const struct real *x)
{
	struct deid_hierarchy *h = NULL;
	struct deid_error e;
	char path[PATH_MAX];
	size_t l, nl = 0;
	double t0 = now_ms();
	int r, shape;

	while (x->ndomain[nl] != 0)
		nl++;
	snprintf(path, sizeof(path), "%s/%s", dir, x->path);
	r = deid_hierarchy_read(path, NULL, &h, &e);
	if (!tap_ok(r == DEID_OK, "%s loads", x->path)) {
		tap_diag("%s:%lu: %s", e.file, e.line, e.msg);
		return;
	}
	if (x->rows >= 10000)
		tap_diag("%s: read + load %.1f ms", x->path, now_ms() - t0);
	shape = h->nlevels == nl && h->nleaves + h->ndup == x->rows;
	for (l = 0; shape && l < nl; l++)
		shape = h->ndomain[l] == x->ndomain[l];
	tap_ok(shape, "%s: %zu leaves, %zu levels, domains as counted",
	    x->path, x->ndomain[0], nl);
	tap_ok(invariants(h), "%s: map/up/leaves/lookup consistent",
	    x->path);
	if (!tap_ok(h->ndomain[h->nlevels - 1] == 1, "%s: single root \"%s\"",
	    x->path, h->values[h->nlevels - 1][0]))
		tap_diag("%s: %zu values at the top level", x->path,
		    h->ndomain[h->nlevels - 1]);
	if (h->ndup != 0)
		real_warnings(h, path, x);
	deid_hierarchy_free(h);
}

/* Every hierarchy_*.csv in a folder must be in the table (no file
 * escapes the checks); returns how many were found. */
static size_t
real_listed(const char *dir, const char *sub)
{
	char path[PATH_MAX], rel[PATH_MAX];
	struct dirent *de;
	DIR *d;
	size_t n = 0, i;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	if ((d = opendir(path)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "hierarchy_", 10) != 0)
			continue;
		snprintf(rel, sizeof(rel), "%s/%s", sub, de->d_name);
		for (i = 0; i < NREALS && strcmp(reals[i].path, rel) != 0; i++)
			;
		if (!tap_ok(i < NREALS, "%s is in the expectation table", rel))
			continue;
		n++;
	}
	closedir(d);
	return n;
}

struct colcheck {
	struct deid_hierarchy	*h[16];
	size_t			 ncols;
	unsigned long		 records, misses;
	uint8_t			*seen[16];
	size_t			 distinct[16];
};

/* Dataset callback: the header names the hierarchies, then every cell
 * must be a leaf of its column's hierarchy. */
static int
col_cb(void *ctx, const char *const *f, size_t nf, unsigned long line,
    struct deid_error *err)
{
	struct colcheck *c = ctx;
	uint32_t leaf;
	size_t j;

	if (c->records++ == 0)
		return DEID_OK;
	if (nf != c->ncols)
		return deid_error_set(err, DEID_EINPUT, "data", line, 0,
		    "ragged");
	for (j = 0; j < nf; j++) {
		if (deid_hierarchy_lookup(c->h[j], f[j], &leaf) != DEID_OK)
			c->misses++;
		else if (!c->seen[j][leaf]) {
			c->seen[j][leaf] = 1;
			c->distinct[j]++;
		}
	}
	return DEID_OK;
}

/* Load a dataset's hierarchies by its header and look every cell up. */
static void
real_coverage(const char *dir, const char *data, const char *hdir,
    const char *const *attrs, const size_t *distinct)
{
	struct colcheck c;
	struct deid_error e;
	char path[PATH_MAX], *d = NULL;
	size_t j, len;
	int r = DEID_OK, same = 1;

	memset(&c, 0, sizeof(c));
	memset(&e, 0, sizeof(e));
	for (c.ncols = 0; attrs[c.ncols] != NULL && r == DEID_OK; c.ncols++) {
		snprintf(path, sizeof(path), "%s/%s/hierarchy_%s.csv", dir,
		    hdir, attrs[c.ncols]);
		r = deid_hierarchy_read(path, NULL, &c.h[c.ncols], &e);
		if (r == DEID_OK && (c.seen[c.ncols] = calloc(
		    c.h[c.ncols]->nleaves, 1)) == NULL)
			r = DEID_ENOMEM;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, data);
	if (r == DEID_OK && (r = deid_file_read(path, &d, &len, &e)) ==
	    DEID_OK)
		r = deid_csv_parse(d, len, path, NULL, col_cb, &c, NULL, &e);
	for (j = 0; j < c.ncols; j++)
		same = same && c.distinct[j] == distinct[j];
	if (!tap_ok(r == DEID_OK && c.misses == 0 && same && c.records > 1,
	    "%s: every cell is a leaf (%lu records); distinct values per "
	    "column as counted", data, c.records - 1))
		tap_diag("status %d (%s), %lu misses", r, e.msg, c.misses);
	for (j = 0; j < c.ncols; j++) {
		deid_hierarchy_free(c.h[j]);
		free(c.seen[j]);
	}
	free(d);
}

static void
test_real(void)
{
	static const char *const subs[] = { "adult", "atus", "cup", "fars",
	    "fars/int-recoded", "ihis" };
	static const char *const adult[] = { "sex", "age", "race",
	    "marital-status", "education", "native-country", "workclass",
	    "occupation", "salary-class", NULL };
	static const size_t adult_d[] = { 2, 72, 5, 7, 16, 41, 7, 14, 2 };
	static const char *const cup[] = { "ZIP", "AGE", "GENDER", "INCOME",
	    "STATE", "RAMNTALL", "NGIFTALL", "MINRAMNT", NULL };
	static const size_t cup_d[] = { 13294, 94, 6, 7, 53, 814, 81, 58 };
	static const char *const fars[] = { "iage", "irace", "ideathmon",
	    "ideathday", "isex", "ihispanic", "istatenum", "iinjury", NULL };
	static const size_t fars_d[] = { 99, 20, 14, 33, 3, 10, 51, 8 };
	const char *dir = tests_shared_data();
	size_t i, found = 0;

	if (dir == NULL) {
		printf("ok %d # SKIP real hierarchies: ../shared/data not "
		    "found (set CDSGATE_SHARED)\n", ++tap_n);
		return;
	}
	for (i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
		found += real_listed(dir, subs[i]);
	tap_ok(found == NREALS, "found all %zu hierarchies (%zu)", NREALS,
	    found);
	for (i = 0; i < NREALS; i++)
		real_one(dir, &reals[i]);
	real_coverage(dir, "adult/adult.csv", "adult", adult, adult_d);
	real_coverage(dir, "cup/cup.csv", "cup", cup, cup_d);
	real_coverage(dir, "fars/int-recoded/fars_int.csv",
	    "fars/int-recoded", fars, fars_d);
}

int
main(void)
{
	test_example();
	test_shapes();
	test_errors();
	test_read_and_opts();
	test_flat();
	test_big();
	test_real();
	return tap_done();
}
