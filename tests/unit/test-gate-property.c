/*
 * tests/unit/test-gate-property.c — the gate's promise as a property:
 * 10,000 random cases (tests/gate/gatecase.h) through deid_anonymize(),
 * then 200 through the CLI; every pass must re-count, from the released
 * file alone, to its report and its criteria, every failure must leave
 * no file.  The TAP output gives the run seed, the case counts, the run
 * times and how many cases had each hierarchy shape.
 *
 * Environment: GATE_PROPERTY_CASES (default 10000), GATE_PROPERTY_SEED
 * (default from the clock; printed, with every failing case's own seed),
 * GATE_PROPERTY_CASE=SEED runs that one case and keeps its files,
 * GATE_PROPERTY_SHOW (default 5) failing cases are described,
 * GATE_PROPERTY_CLI_CASES (default 200) more cases go through the
 * CLI, `$top_builddir/cdsgate deid anonymize --in-process`, where "no
 * file" means no file on disk; GATE_PROPERTY_CLI=PATH drives that CLI
 * for every case instead of the library call deid_anonymize().
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "deid/risk.h"
#include "tests/gate/gatecase.h"
#include "tests/tap.h"

/* ---- the run ---- */

struct gp_stats {
	unsigned long	 cases, passed, failed, bad;
	unsigned long	 single_level, several_tops, uneven, star_root, repeat;
};

/* Which shapes the case has, so the run can show it covered them. */
static void
tally_shapes(const struct gp_case *c, struct gp_stats *st)
{
	const struct gp_hier *h;
	size_t j, i, l;
	int single = 0, tops = 0, uneven = 0, star = 0;

	for (j = 0; j < c->nqi; j++) {
		h = &c->h[j];
		single |= h->nlevels == 1;
		tops |= h->nlevels > 1 && gp_distinct_at(h, h->nlevels - 1) > 1;
		star |= strcmp(h->val[0][h->nlevels - 1], "*") == 0;
		for (i = 0; i < h->nleaves; i++)
			for (l = 1; l < h->nlevels; l++)
				uneven |= strcmp(h->val[i][l], h->val[i][l - 1])
				    == 0;
	}
	st->single_level += single;
	st->several_tops += tops;
	st->uneven += uneven;
	st->star_root += star;
	st->repeat += c->dup_q >= 0;
}

static char gp_dir[256];

static void
remove_dir(void)
{
	char why[512];

	if (gp_dir[0] && gp_clean_dir(gp_dir, why) == 0)
		rmdir(gp_dir);
}

static unsigned long
env_ulong(const char *name, unsigned long dflt)
{
	const char *v = getenv(name);

	return v != NULL && *v ? strtoul(v, NULL, 0) : dflt;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One case by its seed: generate, run, judge, tidy; failures described
 * (the first `show` of them) and counted in st. */
static void
one_case(const char *cli, uint64_t seed, int keep, unsigned long show,
    struct gp_case *c, struct gp_stats *st)
{
	struct gp_rng rng;
	char why[512];
	int passed = 0;

	gp_rng_init(&rng, seed, NULL, 0);
	gp_gen_case(&rng, seed, c);
	tally_shapes(c, st);
	st->cases++;
	if (gp_run_case(cli, c, gp_dir, &passed, why) == 0 &&
	    (keep || gp_clean_dir(gp_dir, why) == 0)) {
		st->passed += passed;
		st->failed += !passed;
		return;
	}
	if (st->bad++ < show) {
		tap_diag("case seed %" PRIu64 ": %s", seed, why);
		gp_describe_case(stdout, c);
	}
	if (!keep)
		gp_clean_dir(gp_dir, why);
}

/* The verdict of a run (what ran it: "deid_anonymize()" or the CLI's
 * path), and that it covered what it should. */
static void
report_run(const char *how, const struct gp_stats *st, double elapsed,
    int one)
{
	tap_diag("%s: gate passed %lu, failed %lu; shapes: single-level %lu, "
	    "several top values %lu, uneven %lu, root \"*\" %lu, a repeated "
	    "row %lu", how, st->passed, st->failed, st->single_level,
	    st->several_tops, st->uneven, st->star_root, st->repeat);
	tap_ok(st->bad == 0, "%lu cases through %s in %.1f s: every pass "
	    "re-counts to its report and meets its criteria, every failure "
	    "leaves no file (%lu bad)", st->cases, how, elapsed, st->bad);
	if (!one)
		tap_ok(st->passed >= st->cases / 10 &&
		    st->failed >= st->cases / 20 &&
		    st->single_level >= st->cases / 20 &&
		    st->several_tops >= st->cases / 20 &&
		    st->uneven >= st->cases / 20 && st->repeat >= st->cases / 100,
		    "%s: the cases cover passes, failures and every hierarchy "
		    "shape", how);
}

/* n cases from the run's seeds through cli (NULL: the library). */
static void
run_many(const char *cli, unsigned long n, struct gp_rng *runr,
    unsigned long show, struct gp_case *c)
{
	struct gp_stats st = { 0 };
	double t0 = now_s();
	unsigned long i;

	for (i = 0; i < n; i++)
		one_case(cli, gp_next(runr), 0, show, c, &st);
	report_run(cli ? cli : "deid_anonymize()", &st, now_s() - t0, 0);
}

/* The CLI for the second run: GATE_PROPERTY_CLI, else the build's. */
static const char *
cli_path(char *buf, size_t len)
{
	const char *top = getenv("top_builddir");

	if (getenv("GATE_PROPERTY_CLI") != NULL)
		return getenv("GATE_PROPERTY_CLI");
	snprintf(buf, len, "%s/cdsgate", top ? top : ".");
	return access(buf, X_OK) == 0 ? buf : NULL;
}

int
main(void)
{
	unsigned long ncases = env_ulong("GATE_PROPERTY_CASES", 10000);
	unsigned long ncli = env_ulong("GATE_PROPERTY_CLI_CASES", 200);
	unsigned long show = env_ulong("GATE_PROPERTY_SHOW", 5);
	uint64_t run = env_ulong("GATE_PROPERTY_SEED",
	    (unsigned long)time(NULL) ^ ((unsigned long)getpid() << 16));
	uint64_t one = env_ulong("GATE_PROPERTY_CASE", 0);
	struct gp_case *c = malloc(sizeof(*c));
	struct gp_stats st = { 0 };
	const char *cli;
	struct gp_rng runr;
	char buf[600];

	deid_risk_init();
	gp_rng_init(&runr, run, NULL, 0);
	snprintf(gp_dir, sizeof(gp_dir), "%s/gate-property.XXXXXX",
	    access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (c == NULL || mkdtemp(gp_dir) == NULL)
		tap_skip_all("no temporary directory");
	cli = cli_path(buf, sizeof(buf));
	if (one != 0) {
		one_case(getenv("GATE_PROPERTY_CLI"), one, 1, 1, c, &st);
		tap_diag("files of the case kept in %s", gp_dir);
		report_run(getenv("GATE_PROPERTY_CLI") ? getenv(
		    "GATE_PROPERTY_CLI") : "deid_anonymize()", &st, 0, 1);
		free(c);
		return tap_done();
	}
	atexit(remove_dir);
	tap_diag("run seed %" PRIu64 " (GATE_PROPERTY_SEED): %lu cases through "
	    "deid_anonymize(), %lu through %s", run, ncases, ncli,
	    cli ? cli : "(no CLI built)");
	run_many(getenv("GATE_PROPERTY_CLI"), ncases, &runr, show, c);
	if (cli != NULL && ncli > 0)
		run_many(cli, ncli, &runr, show, c);
	else if (ncli > 0)
		tap_ok(1, "# SKIP no cdsgate binary at %s", buf);
	free(c);
	return tap_done();
}
