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
 * gives,
 * errors and their lines included, whatever lies across a chunk's end.
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
 * its number; mid (may be NULL) across the
 * first chunk's end.  Malloc'd. */
static char *
big(size_t n, const char *mid, size_t *len)
{
	size_t i, cap = 64 * n + (mid ? strlen(mid) : 0) + 64, at;
	char *s = malloc(cap);

	at = (size_t)snprintf(s, cap, "a,b,c\n");
	for (i = 0; i < n; i++) {
		if (mid != NULL && at + strlen(mid) / 2 >= DEID_CSV_CHUNK) {
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

	s = big(60000, NULL, &len);
	same_as_one_pass("plain, 3 MiB", s, len, 37 * 101);
	free(s);
	i = (size_t)snprintf(blob, sizeof(blob), "1,q,\"");
	for (; i + 8 < sizeof(blob); i += 5)
		memcpy(blob + i, "x\nx,\n", 5);
	memcpy(blob + i, "\"\n", 3);
	s = big(60000, blob, &len);
	same_as_one_pass("a quoted field of line ends across a chunk's end", s, len,
	    37 * 101 + 1);
	free(s);
	s = big(60000, "\n", &len);
	same_as_one_pass("a blank line at a chunk's end", s, len, 0);
	free(s);
	s = big(60000, "1,2\n", &len);
	same_as_one_pass("a short row at a chunk's end", s, len, 0);
	free(s);
	s = big(60000, "*,*,x\n", &len);
	same_as_one_pass("a suppressed row at a chunk's end", s, len, 37 * 101);
	free(s);
}

/* The class table's size hint changes no figure: none, too small, the
 * right one, far too large. */
static void
test_hint(void)
{
	static const size_t hint[] = { 0, 1, 37 * 101, 1000000 };
	struct deid_verified v[4];
	struct deid_verify_opts o;
	struct deid_error e;
	size_t len, i, same = 0;
	char *s = big(20000, NULL, &len);
	int r;

	opts_init(&o, 2);
	for (i = 0; i < 4; i++) {
		o.classes_hint = hint[i];
		if ((r = deid_verify_release(s, len, "hint.csv", &o, &v[i],
		    &e)) != DEID_OK) {
			tap_ok(0, "hint %zu: %s", hint[i], e.msg);
			break;
		}
		same += v[i].records == v[0].records &&
		    v[i].classes == v[0].classes &&
		    v[i].sample_uniques == v[0].sample_uniques &&
		    v[i].smallest_class == v[0].smallest_class &&
		    v[i].pu.fraction == v[0].pu.fraction;
	}
	if (i == 4)
		tap_ok(same == 4 && v[0].classes == 37 * 101, "a class table "
		    "sized from hints 0, 1, 3737 and 10^6: the same figures "
		    "(%llu classes)", (unsigned long long)v[0].classes);
	while (i-- > 0)
		deid_verified_free(&v[i]);
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
	return tap_done();
}
