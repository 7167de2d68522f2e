/*
 * tests/unit/test-adversary.c — Xia 2021's adversarial risk
 * (deid/adversary.h): the attacker file's errors with line and column;
 * figures known by hand where the attacker's knowledge is certain (the
 * worst case itself, nothing known, one attribute known, a suppressed
 * row matching everyone); then the shipped scenarios on the synthetic
 * patients: the same seed gives identical figures, one worker or two
 * give identical figures, another seed other ones, and the shape of
 * the paper's Table 3 (prosecutor reduced for most subjects, the
 * sparse social-media attacker reducing the marketer risk more than
 * the voter list).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deid/adversary.h"
#include "deid/csv.h"
#include "deid/risk.h"
#include "deid/synth.h"
#include "tests/tap.h"

static struct deid_attacker *
attacker(const char *text)
{
	struct deid_error err = { .msg = "" };
	struct deid_attacker *a = NULL;

	if (deid_attacker_parse(text, strlen(text), "a.txt", &a, &err) !=
	    DEID_OK)
		tap_diag("attacker: %s:%lu:%lu: %s", err.file, err.line,
		    err.column, err.msg);
	return a;
}

/* The parse error of text, as "line:column: msg" in buf. */
static int
parse_error(const char *text, char *buf, size_t len)
{
	struct deid_error err = { .msg = "" };
	struct deid_attacker *a = NULL;
	int r = deid_attacker_parse(text, strlen(text), "a.txt", &a, &err);

	deid_attacker_free(a);
	snprintf(buf, len, "%s:%lu:%lu: %s", err.file, err.line, err.column,
	    err.msg);
	return r;
}

static void
test_parse(void)
{
	static const struct {
		const char *text, *where, *what;
	} bad[] = {
		{ "trials 10\n", "a.txt:1:0", "no group" },
		{ "group 0.5 a\n  colour 1\n", "a.txt:2:3", "unknown" },
		{ "group 1.5 a\n", "a.txt:1:7", "probability" },
		{ "group 0.5 a b\ngroup 0.1 c a\n", "a.txt:2:13",
		  "already in the group of line 1" },
		{ "group 0.5\n", "a.txt:1:7", "at least one attribute" },
		{ "p_m 0.2\np_m 0.3\ngroup 1 a\n", "a.txt:2:1", "twice" },
		{ "trials 2.5\ngroup 1 a\n", "a.txt:1:8", "integer" },
		{ "trials 0\ngroup 1 a\n", "a.txt:1:8", "integer" },
		{ "p_c\ngroup 1 a\n", "a.txt:1:1", "needs a value" },
		{ "p_c 0.1 0.2\ngroup 1 a\n", "a.txt:1:9", "one value" },
		{ "coverage 0.5 zip\ngroup 1 a\n", "a.txt:1:14",
		  "an attribute and at least one value" },
		{ "coverage 2 zip 9*\ngroup 1 a\n", "a.txt:1:10",
		  "probability" },
		{ "coverage 0.5\ncoverage 0.1 zip 9*\ncoverage 0.2\n"
		  "group 1 a\n", "a.txt:3:1", "twice" },
	};
	struct deid_attacker *a;
	char buf[1100];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = parse_error(bad[i].text, buf, sizeof(buf));

		tap_ok(r == DEID_EINPUT && strncmp(buf, bad[i].where,
		    strlen(bad[i].where)) == 0 && buf[strlen(bad[i].where)] ==
		    ':' && strstr(buf, bad[i].what) != NULL,
		    "bad attacker file %zu: %s", i, buf);
	}
	a = attacker("# x\r\ntrials 7 # seven\np_m 0.25\np_fm 0\np_c 1\n"
	    "\n\tgroup 0.5 age sex  \ngroup 1 zip\n");
	tap_ok(a != NULL && a->trials == 7 && a->p_m == 0.25 && a->p_fm == 0 &&
	    a->p_c == 1 && a->p_cu == 0.5 && a->ngroups == 2 &&
	    a->group[0].p == 0.5 && a->group[0].nattr == 2 &&
	    strcmp(a->group[0].attr[1], "sex") == 0 && a->group[0].line == 7 && a->group[1].line == 8,
	    "a valid attacker file: values, defaults, comments, CRLF");
	deid_attacker_free(a);
}

static int
run(const char *csv, const char *text, unsigned workers, uint64_t seed,
    struct deid_adversary *res)
{
	static const char *const qi[] = { "a", "b" };
	struct deid_adversary_opts o = { qi, 2, 1000, seed, workers,
	    { ',', 0 } };
	struct deid_error err = { .msg = "" };
	struct deid_attacker *a = attacker(text);
	int r;

	if (a == NULL)
		return DEID_EINPUT;
	r = deid_adversary_release(csv, strlen(csv), "t.csv", a, &o, res,
	    &err);
	if (r != DEID_OK)
		tap_diag("adversary: %s:%lu:%lu: %s", err.file, err.line,
		    err.column, err.msg);
	deid_attacker_free(a);
	return r;
}

/* Knowledge that is certain makes every figure exact. */
static void
test_exact(void)
{
	static const char csv[] = "a,b,c\n1,x,s\n1,y,s\n2,x,s\n3,z,s\n3,z,t\n";
	struct deid_adversary r, w;
	int k, same;

	/* Only a known (p_c = p_cu = 0, p_m = p_fm = 1: overall is the
	 * prosecutor's route alone).  Sizes on a: 2 2 1 2 2; on (a, b):
	 * 1 1 1 2 2. */
	if (run(csv, "p_m 1\np_fm 1\np_c 0\np_cu 0\ntrials 50\ngroup 1 a\n"
	    "group 0 b\n", 2, 1, &r) != DEID_OK) {
		tap_ok(0, "the one-attribute attacker runs");
		return;
	}
	tap_ok(r.records == 5 && r.subjects == 5 && r.patterns == 5,
	    "5 records, 5 subjects, 2^2 + 1 patterns");
	tap_ok(r.mean[DEID_ADV_PROSECUTOR] == 0.2 &&
	    r.worst_mean[DEID_ADV_PROSECUTOR] == 0.6,
	    "prosecutor 1/5 knowing a, 3/5 knowing everything");
	tap_close(r.mean[DEID_ADV_MARKETER], 0.6, 1e-12, "marketer 3/5");
	tap_close(r.worst_mean[DEID_ADV_MARKETER], 0.8, 1e-12,
	    "worst-case marketer 4/5");
	tap_ok(r.mean[DEID_ADV_OVERALL] == r.mean[DEID_ADV_PROSECUTOR] &&
	    r.worst_mean[DEID_ADV_OVERALL] ==
	    r.worst_mean[DEID_ADV_PROSECUTOR],
	    "overall = prosecutor when only that route is open");
	tap_ok(r.reduction_subjects[DEID_ADV_PROSECUTOR] == 3 &&
	    r.reduction[DEID_ADV_PROSECUTOR].q1 == 0.5 &&
	    r.reduction[DEID_ADV_PROSECUTOR].median == 1 &&
	    r.reduction[DEID_ADV_PROSECUTOR].q3 == 1,
	    "prosecutor reduction over the 3 subjects at risk: 0, 1, 1");
	tap_ok(r.mean[DEID_ADV_JOURNALIST] >= 0 &&
	    r.mean[DEID_ADV_JOURNALIST] <= r.mean[DEID_ADV_PROSECUTOR] &&
	    r.worst_mean[DEID_ADV_JOURNALIST] > 0,
	    "journalist within [0, prosecutor]: %g",
	    r.mean[DEID_ADV_JOURNALIST]);
	/* The worst case as the attacker: no reduction at all. */
	run(csv, "group 1 a b\n", 2, 1, &w);
	for (k = 0, same = 1; k < DEID_ADV_NRISKS; k++)
		same &= fabs(w.mean[k] - w.worst_mean[k]) < 1e-12;
	tap_ok(same && fabs(w.reduction[DEID_ADV_OVERALL].q3) < 1e-12,
	    "an attacker who knows every QI is the worst case, overall "
	    "risk too (the network's probability, no sampling noise)");
	/* Nothing known: every subject is one of 5. */
	run(csv, "group 0 a b\n", 2, 1, &w);
	tap_ok(w.mean[DEID_ADV_PROSECUTOR] == 0 &&
	    w.mean[DEID_ADV_JOURNALIST] == 0 &&
	    fabs(w.mean[DEID_ADV_MARKETER] - 0.2) < 1e-12 &&
	    w.reduction[DEID_ADV_PROSECUTOR].q1 == 1,
	    "nothing known: marketer 1/5, no unique");
	/* Coverage 0: the attacker's sources cover nobody, whatever the
	 * groups say. */
	run(csv, "coverage 0\ngroup 1 a b\n", 2, 1, &w);
	tap_ok(w.mean[DEID_ADV_PROSECUTOR] == 0 &&
	    fabs(w.mean[DEID_ADV_MARKETER] - 0.2) < 1e-12 &&
	    w.worst_mean[DEID_ADV_PROSECUTOR] == 0.6,
	    "coverage 0: nothing known of anyone, the worst case unchanged");
	/* Coverage by the subject's own value: a = 1 and a = 3* covered,
	 * a = 2 not (it knows nothing of that subject). */
	run(csv, "coverage 0\ncoverage 1 a 1 3*\ngroup 1 a b\n", 2, 1, &w);
	tap_ok(fabs(w.mean[DEID_ADV_PROSECUTOR] - 0.4) < 1e-12 &&
	    fabs(w.mean[DEID_ADV_MARKETER] - 0.64) < 1e-12,
	    "coverage per subject value: prosecutor 2/5, marketer 3.2/5");
	/* A masked released value may be any it masks: it gets the largest
	 * coverage it could have.  Unique on (a, b): "2" (coverage 0), "*"
	 * (it could be 2 or 1: coverage 1), "9" (default 0). */
	run("a,b\n1*,x\n1*,x\n2,y\n3*,z\n3*,z\n*,w\n9,v\n",
	    "coverage 0\ncoverage 0 a 2\ncoverage 1 a 1 3\ngroup 1 a b\n",
	    1, 1, &w);
	tap_ok(fabs(w.mean[DEID_ADV_PROSECUTOR] - 1.0 / 7) < 1e-12 &&
	    fabs(w.worst_mean[DEID_ADV_PROSECUTOR] - 3.0 / 7) < 1e-12,
	    "a masked value takes the largest coverage it could have: %g",
	    w.mean[DEID_ADV_PROSECUTOR]);
	tap_ok(run(csv, "coverage 1 zz 1\ngroup 1 a\n", 1, 1, &w) ==
	    DEID_EINPUT, "a coverage attribute that is no QI: input error");
	/* A suppressed row matches everyone: no subject is unique. */
	run("a,b\n1,x\n2,y\n*,*\n", "group 1 a b\n", 1, 1, &w);
	tap_ok(w.records == 3 && w.subjects == 2 &&
	    w.worst_mean[DEID_ADV_PROSECUTOR] == 0 &&
	    w.worst_mean[DEID_ADV_MARKETER] == 0.5,
	    "a suppressed row is no subject and matches every subject");
	tap_ok(run(csv, "group 1 a zz\n", 1, 1, &w) == DEID_EINPUT,
	    "an attribute that is no QI of the table is an input error");
}

/* 40 QIs (more than 32: the masks are 64 bits wide), all in one group
 * known for sure: exactly the worst case; rows differ in the last QI. */
static void
test_wide(void)
{
	static char names[40][8];
	const char *qi[40];
	char csv[2048], text[512];
	struct deid_adversary_opts o = { qi, 40, 1000, 3, 2, { ',', 0 } };
	struct deid_error err = { .msg = "" };
	struct deid_attacker *a;
	struct deid_adversary r;
	size_t i, n = 0, m;
	int ok = 0;

	m = (size_t)snprintf(text, sizeof(text), "trials 10\ngroup 1");
	for (i = 0; i < 40; i++) {
		snprintf(names[i], sizeof(names[i]), "q%zu", i);
		qi[i] = names[i];
		n += (size_t)snprintf(csv + n, sizeof(csv) - n, "%s%s",
		    i ? "," : "", names[i]);
		m += (size_t)snprintf(text + m, sizeof(text) - m, " q%zu", i);
	}
	snprintf(text + m, sizeof(text) - m, "\n");
	for (i = 0; i < 3; i++)		/* rows 0 0 ... 0 k, k = 0, 0, 1 */
		n += (size_t)snprintf(csv + n, sizeof(csv) - n, "\n0,0,0,0,0,"
		    "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,"
		    "0,0,0,0,0,%d", i == 2);
	if ((a = attacker(text)) != NULL && deid_adversary_release(csv,
	    strlen(csv), "wide.csv", a, &o, &r, &err) == DEID_OK)
		ok = r.subjects == 3 && fabs(r.mean[DEID_ADV_PROSECUTOR] -
		    1.0 / 3) < 1e-12 && r.worst_mean[DEID_ADV_PROSECUTOR] ==
		    r.mean[DEID_ADV_PROSECUTOR];
	tap_ok(ok, "40 QIs in one group: one unique of three (%s)", err.msg);
	deid_attacker_free(a);
}

static struct deid_attacker *
scenario(const char *file)
{
	struct deid_error err = { .msg = "" };
	struct deid_attacker *a = NULL;
	char path[1024], *data;
	size_t len;

	snprintf(path, sizeof(path), "%s/demo/attackers/%s", TOP_SRCDIR,
	    file);
	if (deid_file_read(path, &data, &len, &err) != DEID_OK ||
	    deid_attacker_parse(data, len, path, &a, &err) != DEID_OK)
		tap_diag("%s: %s:%lu:%lu: %s", file, err.file, err.line,
		    err.column, err.msg);
	if (a != NULL)
		free(data);
	return a;
}

static void
print(const char *what, const struct deid_adversary *r)
{
	int k;

	for (k = 0; k < DEID_ADV_NRISKS; k++)
		tap_diag("%s %-10s mean %.4f (worst %.4f), reduction Q1 %.2f%% "
		    "median %.2f%% Q3 %.2f%% over %llu", what,
		    deid_adv_risk_name(k), r->mean[k], r->worst_mean[k],
		    100 * r->reduction[k].q1, 100 * r->reduction[k].median,
		    100 * r->reduction[k].q3,
		    (unsigned long long)r->reduction_subjects[k]);
}

/* Remove what deid_synth_patients wrote into dir, and dir. */
static void
cleanup(const char *dir)
{
	char path[128];
	size_t i;

	for (i = 0; deid_synth_qis[i] != NULL; i++) {
		snprintf(path, sizeof(path), "%s/hierarchy_%s.csv", dir,
		    deid_synth_qis[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/patients.csv", dir);
	unlink(path);
	rmdir(dir);
}

/* The shipped scenarios on 2,000 synthetic patients. */
static void
test_scenarios(void)
{
	struct deid_attacker *voter = scenario("voter.txt");
	struct deid_attacker *twitter = scenario("twitter.txt");
	struct deid_adversary_opts o = { deid_synth_qis, 5, 4e6, 42, 2,
	    { ',', 0 } };
	struct deid_adversary v1, v2, v3, v4, t;
	struct deid_error err = { .msg = "" };
	char dir[] = "/tmp/test-adversary.XXXXXX", path[64], *data = NULL;
	size_t len = 0;
	int r;

	if (voter == NULL || twitter == NULL || mkdtemp(dir) == NULL ||
	    deid_synth_patients(dir, 2000, 7, &err) != DEID_OK) {
		tap_ok(0, "scenarios and synthetic patients: %s", err.msg);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/patients.csv", dir);
	r = deid_file_read(path, &data, &len, &err);
	r = r ? r : deid_adversary_release(data, len, path, voter, &o, &v1,
	    &err);
	r = r ? r : deid_adversary_release(data, len, path, voter, &o, &v2,
	    &err);
	o.workers = 1;
	r = r ? r : deid_adversary_release(data, len, path, voter, &o, &v3,
	    &err);
	o.seed = 43;
	r = r ? r : deid_adversary_release(data, len, path, voter, &o, &v4,
	    &err);
	r = r ? r : deid_adversary_release(data, len, path, twitter, &o, &t,
	    &err);
	if (!tap_ok(r == DEID_OK, "the scenarios run on 2,000 patients: %s",
	    err.msg))
		goto out;
	tap_diag("Pitman failed (taken as unique) on %u of %u patterns",
	    v1.pitman_failed, v1.patterns);
	print("voter", &v1);
	print("twitter", &t);
	tap_ok(memcmp(&v1, &v2, sizeof(v1)) == 0,
	    "the same seed twice: identical figures");
	tap_ok(memcmp(&v1, &v3, sizeof(v1)) == 0,
	    "one worker or two: identical figures");
	tap_ok(v4.mean[DEID_ADV_OVERALL] != v1.mean[DEID_ADV_OVERALL],
	    "another seed: another Monte Carlo figure (%.6f, %.6f)",
	    v1.mean[DEID_ADV_OVERALL], v4.mean[DEID_ADV_OVERALL]);
	tap_ok(v1.worst_mean[DEID_ADV_PROSECUTOR] > 0.9,
	    "the worst case: most patients are unique on every QI (%.3f)",
	    v1.worst_mean[DEID_ADV_PROSECUTOR]);
	tap_ok(t.reduction[DEID_ADV_PROSECUTOR].q1 == 1 &&
	    t.reduction[DEID_ADV_JOURNALIST].q1 == 1,
	    "social media: prosecutor and journalist reduction Q1 = 100%%");
	tap_ok(t.reduction[DEID_ADV_MARKETER].median >
	    v1.reduction[DEID_ADV_MARKETER].median &&
	    v1.reduction[DEID_ADV_MARKETER].q1 > 0.2 &&
	    v1.reduction[DEID_ADV_MARKETER].q3 > 0.99,
	    "marketer reduction: social media above the voter list; the "
	    "voter list's from over 20%% (covered) to over 99%% (not)");
	tap_ok(t.reduction[DEID_ADV_OVERALL].median >
	    v1.reduction[DEID_ADV_OVERALL].q1,
	    "overall reduction larger for the sparse attacker");
out:
	free(data);
	cleanup(dir);
	deid_attacker_free(voter);
	deid_attacker_free(twitter);
}

int
main(void)
{
	deid_risk_init();
	test_parse();
	test_exact();
	test_wide();
	test_scenarios();
	return tap_done();
}
