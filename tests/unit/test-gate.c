/*
 * tests/unit/test-gate.c — the gate as a library call (deid/anonymize.h)
 * on small tables held in memory: a passing release is what its report
 * says (counted again here from the descriptor's bytes, with a parser of
 * this test's own), a failing one is never released, every column must
 * be classified, "nothing released" is never "passed", the suppressed
 * share is called out, and input errors come back naming their place.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "deid/anonymize.h"
#include "deid/risk.h"
#include "tests/tap.h"

/* A table: id;name;age;zip;dx, ages 20..59 and zips 1000..1003. */
static char *
make_table(unsigned rows, unsigned seed)
{
	size_t cap = 64 + rows * 48, len = 0;
	char *s = malloc(cap);
	unsigned i, x = seed;

	len += (size_t)snprintf(s + len, cap - len, "id;name;age;zip;dx\n");
	for (i = 0; i < rows; i++) {
		x = x * 1103515245u + 12345u;
		len += (size_t)snprintf(s + len, cap - len, "%u;n%u;%u;%u;d%u\n",
		    i, i, 20 + (x >> 8) % 40, 1000 + (x >> 20) % 4, (x >> 4) % 3);
	}
	return s;
}

/* age: 20..59 -> decade -> "*"; a flat or single-level one on request. */
static char *
make_age_hierarchy(int levels)
{
	size_t cap = 4096, len = 0;
	char *s = malloc(cap);
	unsigned a;

	for (a = 20; a < 60; a++)
		len += (size_t)snprintf(s + len, cap - len, levels == 1 ?
		    "%u\n" : "%u;%u0s;*\n", a, a / 10);
	return s;
}

static const char zip_h[] = "1000;100*;*\n1001;100*;*\n1002;100*;*\n"
    "1003;100*;*\n";

struct fixture {
	struct deid_job		 job;
	struct deid_anon_report	 rep;
	struct deid_error	 err;
	int			 r;	/* deid_anonymize's */
	char			*table, *age;
	const char		*qi[2], *ident[2], *sens[1];
	double			 pop[1];
	int			 fd;
};

/* A job over the fixture's table: QIs age and zip, id and name
 * identifying, dx sensitive, k given, output to a fresh memfd. */
static void
fixture_init(struct fixture *f, unsigned rows, int age_levels, unsigned k)
{
	memset(f, 0, sizeof(*f));
	f->table = make_table(rows, 7);
	f->age = make_age_hierarchy(age_levels);
	f->qi[0] = "age";
	f->qi[1] = "zip";
	f->ident[0] = "id";
	f->ident[1] = "name";
	f->sens[0] = "dx";
	f->fd = memfd_create("release", 0);
	f->job.data = (struct deid_job_file){ "table.csv", f->table,
	    strlen(f->table), DEID_OK, { "", 0, 0, "" } };
	f->job.qi = f->qi;
	f->job.nqi = 2;
	f->job.identifying = f->ident;
	f->job.nidentifying = 2;
	f->job.sensitive = f->sens;
	f->job.nsensitive = 1;
	f->job.hier[0] = (struct deid_job_file){ "hierarchy_age.csv", f->age,
	    strlen(f->age), DEID_OK, { "", 0, 0, "" } };
	f->job.hier[1] = (struct deid_job_file){ "hierarchy_zip.csv", zip_h,
	    strlen(zip_h), DEID_OK, { "", 0, 0, "" } };
	f->job.sopts.crit.k = k;
	f->job.sopts.crit.suppression_limit = 1;
	f->job.sopts.threads = 1;
	deid_game_defaults(&f->job.sopts.crit.game);
	f->job.warn_suppressed = DEID_DEFAULT_WARN_SUPPRESSED;
	f->job.out_fd = f->fd;
	f->job.out_name = "release.csv";
}

static void
fixture_run(struct fixture *f)
{
	f->r = deid_anonymize(&f->job, &f->rep, &f->err);
}

static void
fixture_free(struct fixture *f)
{
	deid_anon_report_free(&f->rep);
	free(f->table);
	free(f->age);
	close(f->fd);
}

/* The descriptor's bytes. */
static char *
slurp(int fd, size_t *len)
{
	off_t end = lseek(fd, 0, SEEK_END);
	char *s = calloc(1, (size_t)end + 1);

	*len = 0;
	if (s != NULL && pread(fd, s, (size_t)end, 0) == end)
		*len = (size_t)end;
	return s;
}

/* The test's own count of a release "age;zip;dx" (no quoting in these
 * tables): records, rows "*;*", classes of the rest, smallest class. */
struct count { unsigned records, suppressed, classes, smallest; };

static int
line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
count_release(char *s, struct count *c)
{
	char *line, *save = NULL, *keys[4096], *p;
	unsigned n = 0, i, run;

	memset(c, 0, sizeof(*c));
	line = strtok_r(s, "\n", &save);	/* the header */
	while ((line = strtok_r(NULL, "\n", &save)) != NULL && n < 4096) {
		c->records++;
		if ((p = strrchr(line, ';')) != NULL)
			*p = '\0';	/* drop dx: the QIs are age;zip */
		if (strcmp(line, "*;*") == 0)
			c->suppressed++;
		else
			keys[n++] = line;
	}
	qsort(keys, n, sizeof(keys[0]), line_cmp);
	for (i = 0; i < n; i += run) {
		for (run = 1; i + run < n && strcmp(keys[i], keys[i + run]) ==
		    0; run++)
			;
		c->classes++;
		if (c->smallest == 0 || run < c->smallest)
			c->smallest = run;
	}
}

/* A passing release: written, counted again, the figures agree. */
static void
test_pass(void)
{
	struct fixture f;
	struct count c;
	size_t len;
	char *s;

	fixture_init(&f, 400, 3, 5);
	fixture_run(&f);
	tap_ok(f.r == DEID_OK && f.rep.gate_passed && f.rep.released,
	    "k = 5 on 400 rows passes and is released (%d: %s)", f.r, f.err.msg);
	s = slurp(f.fd, &len);
	tap_ok(len > 0 && strncmp(s, "age;zip;dx\n", 11) == 0,
	    "the descriptor holds the table, identifying columns dropped");
	count_release(s, &c);
	tap_ok(c.records == 400 && c.suppressed == f.rep.suppressed_records &&
	    c.classes == f.rep.verified.classes && c.smallest >= 5 &&
	    c.smallest == f.rep.verified.smallest_class,
	    "counted here: %u records, %u suppressed, %u classes, smallest %u "
	    "= the report's verified figures", c.records, c.suppressed,
	    c.classes, c.smallest);
	tap_ok(f.rep.after.classes == f.rep.verified.classes &&
	    f.rep.after.sample_uniques == 0 &&
	    fabs(f.rep.loss.geometric - f.rep.verified.loss) < 1e-12,
	    "the search's figures equal the verified ones (loss %.6f)",
	    f.rep.verified.loss);
	tap_ok(strcmp(deid_verdict(&f.rep), "passed") == 0 &&
	    f.rep.callout[0] == '\0', "verdict \"passed\", nothing called out "
	    "(%llu suppressed)", (unsigned long long)f.rep.suppressed_records);
	free(s);
	fixture_free(&f);
}

/* A QI whose hierarchy is one level (kept as is): the top of the
 * lattice is an ordinary node, never "all suppressed". */
static void
test_single_level(void)
{
	struct fixture f;
	struct count c;
	size_t len;
	char *s;

	fixture_init(&f, 120, 1, 5);
	f.job.sopts.crit.suppression_limit = 0;
	fixture_run(&f);
	s = slurp(f.fd, &len);
	count_release(s, &c);
	if (f.r == DEID_OK && !f.rep.gate_passed)
		tap_ok(!f.rep.released && f.rep.nreasons > 0, "ages kept as they "
		    "are, k = 5, no suppression: the gate fails (%s), nothing "
		    "released", f.rep.reasons[0]);
	else
		tap_ok(f.r == DEID_OK && f.rep.released && c.smallest >= 5 &&
		    c.suppressed == 0, "ages kept as they are: released only "
		    "with every class >= 5 (smallest %u)", c.smallest);
	free(s);
	fixture_free(&f);
}

/* k = n: every record suppressed is "nothing released", not passed. */
static void
test_nothing_released(void)
{
	struct fixture f;

	fixture_init(&f, 60, 3, 60);
	f.job.sopts.crit.k = 61;	/* more than there are records */
	fixture_run(&f);
	tap_ok(f.r == DEID_OK && !f.rep.gate_passed && !f.rep.released,
	    "k = 61 on 60 records: the gate fails (%s)",
	    f.rep.nreasons ? f.rep.reasons[0] : f.err.msg);
	tap_ok(!f.rep.res.found || strcmp(deid_verdict(&f.rep),
	    "nothing released") == 0, "the verdict says \"%s\"",
	    deid_verdict(&f.rep));
	fixture_free(&f);
}

/* A suppressed share above warn_suppressed is called out: the first k
 * whose optimum suppresses records on a 100-row table. */
static void
test_callout(void)
{
	struct fixture f;
	unsigned k;

	for (k = 2;; k++) {
		fixture_init(&f, 100, 3, k);
		f.job.warn_suppressed = 0.001;
		fixture_run(&f);
		if (f.r != DEID_OK || f.rep.suppressed_records > 0 || k == 50)
			break;
		fixture_free(&f);
	}
	tap_ok(f.r == DEID_OK && f.rep.gate_passed &&
	    f.rep.suppressed_records > 0 && strstr(f.rep.callout,
	    "suppressed") != NULL, "k = %u suppresses %llu of 100 records, "
	    "above a 0.1%% call-out: passed, called out: \"%s\"", k,
	    (unsigned long long)f.rep.suppressed_records, f.rep.callout);
	fixture_free(&f);
}

/* Every column classified, or DEID_EINPUT naming the first that is not;
 * an insensitive one is accepted. */
static void
test_classify(void)
{
	const char *ins[1] = { "dx" };
	struct fixture f;

	fixture_init(&f, 100, 3, 2);
	f.job.nidentifying = 1;		/* "name" forgotten */
	fixture_run(&f);
	tap_ok(f.r == DEID_EINPUT && strstr(f.err.msg, "\"name\" is not "
	    "classified") != NULL && f.err.line == 1 && f.err.column == 2,
	    "a column in no list: refused naming it (%s:%lu:%lu: %s)",
	    f.err.file, f.err.line, f.err.column, f.err.msg);
	fixture_free(&f);

	fixture_init(&f, 100, 3, 2);
	f.job.nsensitive = 0;
	f.job.insensitive = ins;
	f.job.ninsensitive = 1;
	fixture_run(&f);
	tap_ok(f.r == DEID_OK && f.rep.gate_passed, "dx named insensitive "
	    "instead: accepted (%d)", f.r);
	fixture_free(&f);
}

/* Errors: a hierarchy the caller could not read is reported as such;
 * no criterion is refused before any input is read. */
static void
test_errors(void)
{
	struct fixture f;

	fixture_init(&f, 50, 3, 2);
	f.job.hier[1].data = NULL;
	f.job.hier[1].status = deid_error_set(&f.job.hier[1].err, DEID_EIO,
	    "hierarchy_zip.csv", 0, 0, "Permission denied");
	fixture_run(&f);
	tap_ok(f.r == DEID_EIO && strcmp(f.err.file, "hierarchy_zip.csv") == 0,
	    "an unreadable hierarchy: its own error (%s: %s)", f.err.file,
	    f.err.msg);
	fixture_free(&f);

	fixture_init(&f, 50, 3, 1);
	fixture_run(&f);
	tap_ok(f.r == DEID_EINPUT && strstr(f.err.msg, "no privacy criterion"),
	    "no criterion: refused (%s)", f.err.msg);
	fixture_free(&f);
}

/* Without a descriptor the figures are still verified, nothing is
 * released. */
static void
test_no_output(void)
{
	struct fixture f;

	fixture_init(&f, 200, 3, 3);
	f.job.out_fd = -1;
	fixture_run(&f);
	tap_ok(f.r == DEID_OK && f.rep.has_verified && f.rep.gate_passed &&
	    !f.rep.released && f.rep.verified.records == 200,
	    "no output descriptor: verified in memory, passed, not released");
	fixture_free(&f);
}

/* A release whose bytes disagree with the search (the test hook writes
 * the last row twice): refused naming the figure, not released. */
static void
test_tamper(void)
{
	struct fixture f;

	fixture_init(&f, 200, 3, 3);
	f.job.test_tamper = 1;
	fixture_run(&f);
	tap_ok(f.r == DEID_EINTERNAL && !f.rep.released &&
	    strstr(f.err.msg, "records is 201 in the file, 200 in the search"),
	    "a corrupted write: refused (%s)", f.err.msg);
	fixture_free(&f);
}

int
main(void)
{
	deid_risk_init();
	test_pass();
	test_single_level();
	test_nothing_released();
	test_callout();
	test_classify();
	test_errors();
	test_no_output();
	test_tamper();
	return tap_done();
}
