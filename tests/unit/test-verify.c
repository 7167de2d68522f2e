/*
 * tests/unit/test-verify.c — the gate's second opinion (deid/verify.h)
 * on releases written by hand, with every figure known: classes from
 * the written strings (quoting and separators inside values included),
 * suppressed = every QI "*" and nothing else, k, the suppressed share
 * against the limit, PU exactly 0 without sample uniques, the residual
 * check, the game, the information loss by hand; then a real release
 * from deid_anonymize, corrupted on purpose, which must be rejected;
 * and releases of several MiB streamed from a descriptor in chunks
 * (DEID_CSV_CHUNK) giving what one pass over the same bytes in memory
 * gives, errors and their lines included, whatever lies across or at a
 * chunk's end; the class table's size hint changing no figure; keys of
 * over 64 and over 128 bits against a count made here.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "deid/anonymize.h"
#include "deid/verify.h"
#include "tests/tap.h"

static const char *const qi2[] = { "a", "b" };

static void
opts_init(struct deid_verify_opts *o, unsigned k)
{
	memset(o, 0, sizeof(*o));
	o->qi = qi2;
	o->nqi = 2;
	o->crit.k = k;
	o->crit.suppression_limit = 1;
	deid_game_defaults(&o->crit.game);
	o->warn_suppressed = 0.5;
	o->csv.separator = ',';
}

static int
run(const char *csv, const struct deid_verify_opts *o,
    struct deid_verified *v, struct deid_error *err)
{
	return deid_verify_release(csv, strlen(csv), "r.csv", o, v, err);
}

/* Classes of 3, 2 and 1; two suppressed rows; a row with one "*" is a
 * class of its own, not suppressed; "x,y"+"z" differs from "x"+"y,z". */
static void
test_counts(void)
{
	static const char csv[] =
	    "a,b,c\n"
	    "1,p,s\n" "1,p,t\n" "1,p,u\n"		/* class of 3 */
	    "2,q,s\n" "2,q,s\n"				/* class of 2 */
	    "*,*,s\n" "*,*,t\n"				/* suppressed */
	    "*,q,s\n"					/* class of 1 */
	    "\"x,y\",z,s\n" "x,\"y,z\",s\n";		/* two classes of 1 */
	struct deid_error err = { .msg = "" };
	struct deid_verify_opts o;
	struct deid_verified v;
	int r;

	opts_init(&o, 2);
	r = run(csv, &o, &v, &err);
	tap_ok(r == DEID_OK && v.records == 10 && v.suppressed == 2 &&
	    v.classes == 5 && v.smallest_class == 1 && v.sample_uniques == 3,
	    "counts: %llu records, %llu suppressed, %llu classes, smallest "
	    "%llu, %llu uniques", (unsigned long long)v.records,
	    (unsigned long long)v.suppressed, (unsigned long long)v.classes,
	    (unsigned long long)v.smallest_class,
	    (unsigned long long)v.sample_uniques);
	tap_ok(!v.passed && v.nreasons == 1 &&
	    strstr(v.reasons[0], "1 records, fewer than k = 2") != NULL,
	    "k = 2 fails on the class of 1: \"%s\"", v.reasons[0]);
	tap_close(v.suppressed_share, 0.2, 1e-15, "suppressed share 2/10");
	deid_verified_free(&v);

	o.crit.k = 1;
	o.crit.suppression_limit = 0.1;
	r = run(csv, &o, &v, &err);
	tap_ok(r == DEID_OK && !v.passed && strstr(v.reasons[0],
	    "20.00% of the records are suppressed, above the suppression "
	    "limit of 10%") != NULL, "a 20%% share over a 10%% limit fails: "
	    "\"%s\"", v.reasons[0]);
	deid_verified_free(&v);
}

/* Every record suppressed: nothing released, never passed. */
static void
test_nothing(void)
{
	struct deid_error err = { .msg = "" };
	struct deid_verify_opts o;
	struct deid_verified v;
	int r;

	opts_init(&o, 2);
	r = run("a,b\n*,*\n*,*\n*,*\n", &o, &v, &err);
	tap_ok(r == DEID_OK && !v.passed && v.nothing_released &&
	    v.smallest_class == 0 && strstr(v.reasons[0], "nothing released"),
	    "all suppressed: \"%s\"", r == DEID_OK ? v.reasons[0] : err.msg);
	deid_verified_free(&v);
	r = run("a,b\n", &o, &v, &err);
	tap_ok(r == DEID_OK && !v.passed && v.nothing_released &&
	    strstr(v.reasons[0], "no records"), "a header alone: \"%s\"",
	    r == DEID_OK ? v.reasons[0] : err.msg);
	deid_verified_free(&v);
}

/* PU is exactly 0 without sample uniques; with them it is the model's. */
static void
test_pu(void)
{
	struct deid_error err = { .msg = "" };
	struct deid_verify_opts o;
	struct deid_verified v;
	double pop[1] = { 1e5 };
	int r;

	opts_init(&o, 0);
	o.crit.pu = 1;
	o.crit.pu_threshold = 0.01;
	o.crit.population = pop[0];
	o.crit.pu_model = DEID_MODEL_DANKAR;
	o.population = pop;
	o.npopulation = 1;
	r = run("a,b\n1,1\n1,1\n2,2\n2,2\n2,2\n", &o, &v, &err);
	tap_ok(r == DEID_OK && v.has_pu && v.pu.status == DEID_OK &&
	    v.pu.fraction == 0 && v.passed && v.nresidual == 1 &&
	    v.residual[0].passed && v.residual[0].bound == 0.25,
	    "no sample uniques: PU exactly 0, the default residual check "
	    "(25%%) passes");
	deid_verified_free(&v);
	r = run("a,b\n1,1\n2,2\n3,3\n3,3\n4,4\n4,4\n4,4\n", &o, &v, &err);
	tap_ok(r == DEID_OK && v.sample_uniques == 2 &&
	    (v.pu.status != DEID_OK || v.pu.fraction > 0),
	    "two sample uniques: PU from the model (%g)", v.pu.fraction);
	deid_verified_free(&v);
}

/* Loss by hand: QI a over leaves {1,2,3,4} -> {12,34} -> *, b flat.
 * Rows: (12,x) x2, (34,y) x1 at level 1/0, one suppressed.  R = 4,
 * shares a: 2*(2/4) + 1*(2/4) + 1 = 2.5; (2.5 - 1)/(4 - 1) = 0.5;
 * b (|D| = 2: x,y): 3*(1/2) + 1 = 2.5; (2.5 - 2)/(4 - 2) = 0.25;
 * geometric sqrt(1.5 * 1.25) - 1, arithmetic 0.375. */
static void
test_quality(void)
{
	static const char ha[] = "1;12;*\n2;12;*\n3;34;*\n4;34;*\n";
	static const char hb[] = "x;*\ny;*\n";
	struct deid_hierarchy *h[2] = { NULL, NULL };
	const struct deid_hierarchy *hc[2];
	struct deid_error err = { .msg = "" };
	struct deid_verify_opts o;
	struct deid_verified v;
	unsigned bad[2] = { 0, 0 };
	int r;

	deid_hierarchy_parse(ha, strlen(ha), "ha", NULL, &h[0], &err);
	deid_hierarchy_parse(hb, strlen(hb), "hb", NULL, &h[1], &err);
	hc[0] = h[0];
	hc[1] = h[1];
	opts_init(&o, 1);
	o.h = hc;
	o.crit.game.variant = DEID_GAME_NO_ATTACK;	/* size*4 > 300 */
	r = run("a,b\n12,x\n12,x\n34,y\n*,*\n", &o, &v, &err);
	tap_ok(r == DEID_OK && v.has_quality && v.levels[0] == 1 &&
	    v.levels[1] == 0, "levels found: a=%u b=%u", v.levels[0],
	    v.levels[1]);
	tap_close(v.loss, sqrt(1.5 * 1.25) - 1, 1e-12, "Loss, geometric");
	tap_close(v.loss_arithmetic, 0.375, 1e-12, "Loss, arithmetic");
	tap_ok(v.has_game && v.attacked == 3 && v.unreleasable == 3 &&
	    !v.passed, "no-attack: the 3 released records are worth "
	    "attacking, the criterion fails");
	deid_verified_free(&v);
	o.levels = bad;		/* a's values are not leaves */
	r = run("a,b\n12,x\n12,x\n34,y\n*,*\n", &o, &v, &err);
	tap_ok(r == DEID_EINPUT && strstr(err.msg, "\"12\" is not a value"),
	    "a value not at the given level: refused (%s)", err.msg);
	deid_verified_free(&v);
	deid_hierarchy_free(h[0]);
	deid_hierarchy_free(h[1]);
}

/* Not a release of these columns: refused with the place. */
static void
test_bad(void)
{
	struct deid_error err = { .msg = "" };
	struct deid_verify_opts o;
	struct deid_verified v;
	int r;

	opts_init(&o, 2);
	r = run("a,c\n1,2\n", &o, &v, &err);
	tap_ok(r == DEID_EINPUT && strstr(err.msg, "\"b\"") && err.line == 1,
	    "a missing QI column: %s:%lu: %s", err.file, err.line, err.msg);
	deid_verified_free(&v);
	r = run("a,b,a\n1,2,3\n", &o, &v, &err);
	tap_ok(r == DEID_EINPUT && strstr(err.msg, "appears twice") &&
	    err.column == 3, "a QI column twice in the header: refused (%s)",
	    err.msg);
	deid_verified_free(&v);
	r = run("a,b\n1,2\n1\n", &o, &v, &err);
	tap_ok(r == DEID_EINPUT && err.line == 3, "a ragged row: line %lu: %s",
	    err.line, err.msg);
	deid_verified_free(&v);
}

/* A real release (deid_anonymize), then the same bytes corrupted. */
static char *
release(size_t *len)
{
	static const char hz[] = "1;1*;*\n2;1*;*\n3;3*;*\n4;3*;*\n";
	static const char hy[] = "a;*\nb;*\nc;*\n";
	const char *qi[2] = { "z", "y" }, *ins[1] = { "v" };
	struct deid_anon_report rep = { 0 };
	struct deid_error err = { .msg = "" };
	struct deid_job job;
	char table[8192], *s;
	size_t n = 0;
	unsigned i;
	int fd = memfd_create("rel", 0), r;

	n += (size_t)snprintf(table, sizeof(table), "z;y;v\n");
	for (i = 0; i < 300; i++)
		n += (size_t)snprintf(table + n, sizeof(table) - n, "%u;%c;%u\n",
		    1 + (i * 7) % 4, "abc"[(i * 5) % 3], i);
	memset(&job, 0, sizeof(job));
	job.data = (struct deid_job_file){ "t.csv", table, n, 0, { "", 0, 0,
	    "" } };
	job.qi = qi;
	job.nqi = 2;
	job.insensitive = ins;
	job.ninsensitive = 1;
	job.hier[0] = (struct deid_job_file){ "hz", hz, strlen(hz), 0,
	    { "", 0, 0, "" } };
	job.hier[1] = (struct deid_job_file){ "hy", hy, strlen(hy), 0,
	    { "", 0, 0, "" } };
	job.sopts.crit.k = 20;
	job.sopts.crit.suppression_limit = 1;
	job.sopts.threads = 1;
	deid_game_defaults(&job.sopts.crit.game);
	job.warn_suppressed = 0.5;
	job.out_fd = fd;
	r = deid_anonymize(&job, &rep, &err);
	tap_ok(r == DEID_OK && rep.released, "a release to corrupt (k = 20, "
	    "%llu classes)", (unsigned long long)rep.verified.classes);
	deid_anon_report_free(&rep);
	*len = (size_t)lseek(fd, 0, SEEK_END);
	s = calloc(1, *len + 1);
	if (pread(fd, s, *len, 0) != (ssize_t)*len)
		*len = 0;
	close(fd);
	return s;
}

static void
test_corrupted(void)
{
	struct deid_error err = { .msg = "" };
	const char *qi[2] = { "z", "y" };
	struct deid_verify_opts o;
	struct deid_verified v;
	char *s, *p, *line;
	size_t len;
	int r;

	s = release(&len);
	opts_init(&o, 20);
	o.qi = qi;
	o.csv.separator = ';';
	r = deid_verify_release(s, len, "rel", &o, &v, &err);
	tap_ok(r == DEID_OK && v.passed && v.smallest_class >= 20,
	    "the release as written verifies (smallest class %llu)",
	    (unsigned long long)v.smallest_class);
	deid_verified_free(&v);
	/* one record's generalized value changed: a class of 1 appears */
	line = strchr(s, '\n') + 1;
	p = strchr(line, ';');
	memmove(line + 1, p, strlen(p) + 1);
	line[0] = '9';
	r = deid_verify_release(s, strlen(s), "rel", &o, &v, &err);
	tap_ok(r == DEID_OK && !v.passed && v.smallest_class == 1,
	    "one value rewritten: rejected (%s)", v.nreasons ? v.reasons[0] :
	    "no reason");
	deid_verified_free(&v);
	free(s);
}

/* n rows of classes made of a short value and a long one (over 16
 * bytes, differing only in its middle): 37 * 101 classes; each row's c
 * its number; mid (may be NULL) across the first chunk's end, or ending
 * with its last byte (after a row of class 0 padded to fit).
 * Malloc'd. */
static char *
big(size_t n, const char *mid, int across, size_t *len)
{
	size_t i, cap = 64 * n + (mid ? strlen(mid) : 0) + 128, at, end;
	char *s = malloc(cap);

	end = DEID_CSV_CHUNK - (mid ? strlen(mid) : 0);
	at = (size_t)snprintf(s, cap, "a,b,c\n");
	for (i = 0; i < n; i++) {
		if (mid != NULL && across && at + strlen(mid) / 2 >=
		    DEID_CSV_CHUNK) {
			at += (size_t)snprintf(s + at, cap - at, "%s", mid);
			mid = NULL;
		} else if (mid != NULL && !across && at + 80 > end) {
			at += (size_t)snprintf(s + at, cap - at, "0,aaaaaaaa-"
			    "000-zzzzzzzz,%0*d\n", (int)(end - at - 25), 0);
			at += (size_t)snprintf(s + at, cap - at, "%s", mid);
			mid = NULL;
		}
		at += (size_t)snprintf(s + at, cap - at, "%zu,aaaaaaaa-%03zu-"
		    "zzzzzzzz,%zu\n", i % 37, i % 101, i);
	}
	*len = at;
	return s;
}

/* The same figures and the same error from deid_verify_fd as from
 * deid_verify_release on bytes s[len], and (when not 0) that many
 * classes. */
static void
same_as_one_pass(const char *what, const char *s, size_t len,
    uint64_t classes)
{
	struct deid_error e1 = { .msg = "" }, e2 = { .msg = "" };
	struct deid_verified v1, v2;
	struct deid_verify_opts o;
	int fd = memfd_create("big", 0), r1, r2;

	opts_init(&o, 2);
	if (fd < 0 || write(fd, s, len) != (ssize_t)len ||
	    lseek(fd, 0, SEEK_SET) != 0) {
		tap_ok(0, "%s: a memfd of %zu bytes", what, len);
		return;
	}
	r1 = deid_verify_release(s, len, "big.csv", &o, &v1, &e1);
	r2 = deid_verify_fd(fd, "big.csv", &o, &v2, &e2);
	if (r1 != DEID_OK || r2 != DEID_OK)
		tap_ok(r1 == r2 && e1.line == e2.line && e1.column == e2.column &&
		    strcmp(e1.msg, e2.msg) == 0, "%s: the same error (line "
		    "%lu: %s / line %lu: %s)", what, e1.line, e1.msg, e2.line,
		    e2.msg);
	else
		tap_ok(v1.records == v2.records && v1.classes == v2.classes &&
		    (classes == 0 || v2.classes == classes) &&
		    v1.sample_uniques == v2.sample_uniques &&
		    v1.smallest_class == v2.smallest_class &&
		    v1.suppressed == v2.suppressed && v1.passed == v2.passed,
		    "%s: %llu records, %llu classes, %llu uniques, smallest "
		    "%llu (one pass: %llu, %llu, %llu, %llu)", what,
		    (unsigned long long)v2.records,
		    (unsigned long long)v2.classes,
		    (unsigned long long)v2.sample_uniques,
		    (unsigned long long)v2.smallest_class,
		    (unsigned long long)v1.records,
		    (unsigned long long)v1.classes,
		    (unsigned long long)v1.sample_uniques,
		    (unsigned long long)v1.smallest_class);
	if (r1 == DEID_OK)
		deid_verified_free(&v1);
	if (r2 == DEID_OK)
		deid_verified_free(&v2);
	close(fd);
}

/* Releases of several chunks: plain; a quoted field full of line ends
 * across the first chunk's end; a blank line, a short row and a
 * suppressed row there. */
static void
test_halves(void)
{
	char blob[20000], *s;
	size_t i, len;

	s = big(60000, NULL, 0, &len);
	same_as_one_pass("plain, 3 MiB", s, len, 37 * 101);
	free(s);
	i = (size_t)snprintf(blob, sizeof(blob), "1,q,\"");
	for (; i + 8 < sizeof(blob); i += 5)
		memcpy(blob + i, "x\nx,\n", 5);
	memcpy(blob + i, "\"\n", 3);
	s = big(60000, blob, 1, &len);
	same_as_one_pass("a quoted field of line ends across a chunk's end", s, len,
	    37 * 101 + 1);
	free(s);
	s = big(60000, "\n", 0, &len);
	tap_ok(s[DEID_CSV_CHUNK - 1] == '\n' && s[DEID_CSV_CHUNK - 2] == '\n',
	    "the blank line ends the first chunk");
	same_as_one_pass("a blank line at a chunk's end", s, len, 0);
	free(s);
	s = big(60000, "1,2\n", 0, &len);
	same_as_one_pass("a short row at a chunk's end", s, len, 0);
	free(s);
	s = big(60000, "*,*,x\n", 0, &len);
	same_as_one_pass("a suppressed row at a chunk's end", s, len, 37 * 101);
	free(s);
}

/* Flat hierarchies (value -> "*") of n values each, for QIs 0..nqi-1:
 * value i is pre, i in at least w digits, post.  0 when one could not
 * be built. */
static int
flat_hierarchies(size_t nqi, size_t n, const char *pre, int w,
    const char *post, struct deid_hierarchy **h)
{
	char **v = calloc(n, sizeof(*v));
	struct deid_error e;
	size_t i, j;
	int ok = v != NULL;

	for (i = 0; ok && i < n; i++)
		ok = asprintf(&v[i], "%s%0*zu%s", pre, w, i, post) > 0;
	for (j = 0; ok && j < nqi; j++)
		ok = deid_hierarchy_flat((const char *const *)v, n, &h[j],
		    &e) == DEID_OK;
	for (i = 0; v != NULL && i < n; i++)
		free(v[i]);
	free(v);
	return ok;
}

/* The class table's size hint changes no figure: none, too small, the
 * right one, far too large, past the cap, and one that overflows. */
static void
test_hint(void)
{
	static const size_t hint[] = { 0, 1, 37 * 101, 1000000, SIZE_MAX / 4,
	    SIZE_MAX };
	static const unsigned lv[] = { 0, 0 };
	struct deid_hierarchy *h[2] = { NULL, NULL };
	const struct deid_hierarchy *ch[2];
	struct deid_verified v[6];
	struct deid_verify_opts o;
	struct deid_error e;
	size_t len, i, same = 0;
	char *s = big(20000, NULL, 0, &len);

	opts_init(&o, 2);
	if (!flat_hierarchies(1, 37, "", 0, "", &h[0]) ||
	    !flat_hierarchies(1, 101, "aaaaaaaa-", 3, "-zzzzzzzz", &h[1])) {
		tap_ok(0, "hint: flat hierarchies");
		goto out;
	}
	ch[0] = h[0];
	ch[1] = h[1];
	o.h = ch;
	o.levels = lv;
	for (i = 0; i < 6; i++) {
		o.classes_hint = hint[i];
		if (deid_verify_release(s, len, "hint.csv", &o, &v[i], &e) !=
		    DEID_OK) {
			tap_ok(0, "hint %zu: %s", hint[i], e.msg);
			break;
		}
		same += v[i].records == v[0].records &&
		    v[i].classes == v[0].classes &&
		    v[i].sample_uniques == v[0].sample_uniques &&
		    v[i].smallest_class == v[0].smallest_class &&
		    v[i].pu.fraction == v[0].pu.fraction &&
		    v[i].loss == v[0].loss;
	}
	if (i == 6)
		tap_ok(same == 6 && v[0].classes == 37 * 101 &&
		    v[0].has_quality, "a class table sized from hints 0, 1, "
		    "3737, 10^6, past the cap and SIZE_MAX: the same figures "
		    "(%llu classes, loss %.6f)",
		    (unsigned long long)v[0].classes, v[0].loss);
	while (i-- > 0)
		deid_verified_free(&v[i]);
out:
	deid_hierarchy_free(h[0]);
	deid_hierarchy_free(h[1]);
	free(s);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Classes and sample uniques of rows[n], counted here (sorted). */
static void
count_rows(char **rows, size_t n, uint64_t *classes, uint64_t *uniques)
{
	size_t i, run;

	qsort(rows, n, sizeof(*rows), cmp_str);
	*classes = *uniques = 0;
	for (i = 0; i < n; i += run) {
		for (run = 1; i + run < n && strcmp(rows[i],
		    rows[i + run]) == 0; run++)
			;
		(*classes)++;
		*uniques += run == 1;
	}
}

/* nqi QIs of 70,000 values each (17 bits a number at level 0): keys of
 * 6 * 17 = 102 bits (two words) and 9 * 17 = 153 (hashed, the tuple
 * compared), starting at those widths, against a count made here and
 * against widths grown from 0 (no levels given). */
static void
test_wide_keys(size_t nqi)
{
	static const char *const names[] = { "q0", "q1", "q2", "q3", "q4",
	    "q5", "q6", "q7", "q8" };
	static const unsigned lv[9];
	struct deid_hierarchy *h[9] = { NULL };
	const struct deid_hierarchy *ch[9];
	size_t i, j, n = 3000, len = 0, cap = n * 12 * 10 + 64;
	char *s = malloc(cap), **rows = calloc(n, sizeof(*rows)), *p;
	uint64_t classes, uniques;
	struct deid_verified v[2];
	struct deid_verify_opts o;
	struct deid_error e;
	int r[2];

	opts_init(&o, 1);
	if (s == NULL || rows == NULL || !flat_hierarchies(nqi, 70000, "v", 5,
	    "", h)) {
		tap_ok(0, "wide keys: memory or hierarchies");
		goto out;
	}
	for (j = 0; j < nqi; j++)
		len += (size_t)snprintf(s + len, cap - len, "%sq%zu",
		    j ? "," : "", j);
	s[len++] = '\n';
	for (i = 0; i < n; i++) {	/* 97 classes and the uniques of i % 50 */
		p = s + len;
		for (j = 0; j < nqi; j++)
			len += (size_t)snprintf(s + len, cap - len, "%sv%05zu",
			    j ? "," : "", (i % 50 ? (i % 97) * 613 + j * 7919 :
			    i * 23 + j * 7) % 70000);
		rows[i] = strndup(p, (size_t)(s + len - p));
		s[len++] = '\n';
	}
	count_rows(rows, n, &classes, &uniques);
	for (j = 0; j < nqi; j++)
		ch[j] = h[j];
	o.qi = names;
	o.nqi = nqi;
	o.h = ch;
	o.levels = lv;
	o.classes_hint = 97;
	r[0] = deid_verify_release(s, len, "wide.csv", &o, &v[0], &e);
	o.levels = NULL;
	r[1] = deid_verify_release(s, len, "wide.csv", &o, &v[1], &e);
	tap_ok(r[0] == DEID_OK && r[1] == DEID_OK &&
	    v[0].classes == classes && v[0].sample_uniques == uniques &&
	    v[1].classes == classes && v[1].sample_uniques == uniques &&
	    v[0].loss == v[1].loss, "%zu QIs of 17 bits (%zu-bit keys): %llu "
	    "classes, %llu uniques, as counted here, with and without the "
	    "levels", nqi, nqi * 17, (unsigned long long)classes,
	    (unsigned long long)uniques);
	for (j = 0; j < 2; j++)
		if (r[j] == DEID_OK)
			deid_verified_free(&v[j]);
out:
	for (i = 0; rows != NULL && i < n; i++)
		free(rows[i]);
	for (j = 0; j < nqi; j++)
		deid_hierarchy_free(h[j]);
	free(rows);
	free(s);
}

int
main(void)
{
	deid_risk_init();
	test_counts();
	test_nothing();
	test_pu();
	test_quality();
	test_bad();
	test_corrupted();
	test_halves();
	test_hint();
	test_wide_keys(6);
	test_wide_keys(9);
	return tap_done();
}
