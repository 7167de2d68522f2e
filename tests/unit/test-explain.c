/*
 * tests/unit/test-explain.c — the report in plain language
 * (deid/explain.h) and as an HTML page (deid/html.h): a real gate run
 * explained in its hierarchy's own labels, then report shapes written
 * here (passed, failed on k, failed on PU/SU, a failed PU estimate,
 * nothing released, no transformation at all) whose lines must name the
 * deciding criterion with its figure and bound, and a page whose
 * hostile column and label names come out escaped.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deid/anonymize.h"
#include "deid/explain.h"
#include "deid/html.h"
#include "deid/report.h"
#include "tests/tap.h"

/* Does any line of the array contain needle?  The line, or NULL. */
static const char *
find_line(const json_t *lines, const char *needle)
{
	const json_t *l;
	size_t i;

	json_array_foreach(lines, i, l)
		if (json_is_string(l) && strstr(json_string_value(l),
		    needle) != NULL)
			return json_string_value(l);
	return NULL;
}

static const char *
headline(const json_t *lines)
{
	const char *s = json_string_value(json_array_get(lines, 0));

	return s != NULL ? s : "";
}

static void
print_lines(const json_t *lines)
{
	const json_t *l;
	size_t i;

	json_array_foreach(lines, i, l)
		tap_diag("  %s", json_string_value(l));
}

/* ---- a real run ----------------------------------------------------- */

/* id;age;zip;dx: ages 20..59, zips 1000..1003, a pseudo-random mix. */
static char *
make_table(unsigned rows)
{
	size_t cap = 64 + rows * 40, len = 0;
	char *s = malloc(cap);
	unsigned i, x = 7;

	len += (size_t)snprintf(s + len, cap - len, "id;age;zip;dx\n");
	for (i = 0; i < rows; i++) {
		x = x * 1103515245u + 12345u;
		len += (size_t)snprintf(s + len, cap - len, "%u;%u;%u;d%u\n", i,
		    20 + (x >> 8) % 40, 1000 + (x >> 20) % 4, (x >> 4) % 3);
	}
	return s;
}

static char *
make_age_hierarchy(void)
{
	size_t cap = 4096, len = 0;
	char *s = malloc(cap);
	unsigned a;

	for (a = 20; a < 60; a++)
		len += (size_t)snprintf(s + len, cap - len, "%u;%u-%u;*\n", a,
		    a / 10 * 10, a / 10 * 10 + 9);
	return s;
}

static const char zip_h[] = "1000;100*;*\n1001;100*;*\n1002;100*;*\n"
    "1003;100*;*\n";

/* The gate on 400 records at k = 3 (out_fd -1: in memory); its report. */
static json_t *
real_report(void)
{
	static const char *const qi[] = { "age", "zip" }, *id[] = { "id" },
	    *sens[] = { "dx" };
	char *table = make_table(400), *age = make_age_hierarchy();
	struct deid_anon_report rep;
	struct deid_error err;
	struct deid_job job;
	json_t *o = NULL;

	memset(&job, 0, sizeof(job));
	memset(&rep, 0, sizeof(rep));
	job.data = (struct deid_job_file){ "t.csv", table, strlen(table),
	    DEID_OK, { "", 0, 0, "" } };
	job.qi = qi;
	job.nqi = 2;
	job.identifying = id;
	job.nidentifying = 1;
	job.sensitive = sens;
	job.nsensitive = 1;
	job.hier[0] = (struct deid_job_file){ "h_age.csv", age, strlen(age),
	    DEID_OK, { "", 0, 0, "" } };
	job.hier[1] = (struct deid_job_file){ "h_zip.csv", zip_h,
	    strlen(zip_h), DEID_OK, { "", 0, 0, "" } };
	job.sopts.crit.k = 3;
	job.sopts.crit.suppression_limit = 1;
	job.sopts.threads = 1;
	deid_game_defaults(&job.sopts.crit.game);
	job.warn_suppressed = DEID_DEFAULT_WARN_SUPPRESSED;
	job.out_fd = -1;
	if (deid_anonymize(&job, &rep, &err) == DEID_OK)
		o = deid_report_anonymize(&rep);
	else
		tap_diag("deid_anonymize: %s", err.msg);
	deid_anon_report_free(&rep);
	free(table);
	free(age);
	return o;
}

static void
test_real_run(void)
{
	json_t *o = real_report(), *lines, *g, *b;
	const char *l;
	json_int_t recs = 0;
	size_t i;

	if (!tap_ok(o != NULL, "the gate ran on 400 records at k = 3"))
		return;
	lines = deid_explain(o);
	print_lines(lines);
	tap_ok(json_equal(lines, json_object_get(o, "explanation")),
	    "the report carries the explanation the CLI prints");
	tap_ok(strncmp(headline(lines), "Passed: ", 8) == 0 &&
	    strstr(headline(lines), "k = 3") != NULL,
	    "passed, and the headline names k = 3: %s", headline(lines));
	g = json_array_get(json_object_get(o, "generalization"), 0);
	tap_ok(strcmp(deid_jstr(g, "attribute"), "age") == 0 &&
	    json_array_size(json_object_get(g, "levels")) == 3 &&
	    deid_jnum(json_array_get(json_object_get(g, "levels"), 0),
	    "values") == 40 && deid_jnum(json_array_get(json_object_get(g,
	    "levels"), 1), "values") == 4,
	    "generalization: age has three levels of 40, 4 and 1 values");
	l = find_line(lines, "age: ");
	tap_ok(l != NULL && (strstr(l, "kept as is") != NULL ||
	    strstr(l, "40 values → 4, e.g. \"40\" → \"40-49\"") != NULL ||
	    strstr(l, "removed, every value → \"*\"") != NULL),
	    "age in the hierarchy's own labels: %s", l ? l : "(none)");
	json_array_foreach(json_object_get(json_object_get(json_object_get(o,
	    "risk"), "after"), "class_sizes"), i, b)
		recs += (json_int_t)deid_jnum(b, "records");
	tap_ok(recs == (json_int_t)deid_jnum(json_object_get(o, "verified"),
	    "released_records"), "class sizes after add up to the %lld "
	    "released records", (long long)recs);
	json_decref(lines);
	json_decref(o);
}

/* ---- report shapes -------------------------------------------------- */

/* A report's skeleton around a verified block and criteria. */
static json_t *
shape(const char *verdict, const char *criteria, const char *verified,
    const char *reasons)
{
	char buf[4096];
	json_t *o;

	snprintf(buf, sizeof(buf), "{\"gate\": {\"passed\": %s, \"verdict\": "
	    "\"%s\", \"reasons\": %s, \"warnings\": []}, \"criteria\": %s, "
	    "\"verified\": %s, \"risk\": {\"after\": {\"population\": 4031000,"
	    " \"attack\": {\"prosecutor\": 0.05, \"prosecutor_max\": 1, "
	    "\"marketer\": 0.4}}}, \"generalization\": [{\"attribute\": "
	    "\"age\", \"level\": 1, \"distinct_values\": 90, \"levels\": "
	    "[{\"values\": 100, \"example\": \"37\"}, {\"values\": 10, "
	    "\"example\": \"30-39\"}, {\"values\": 1, \"example\": \"*\"}]}]}",
	    strcmp(verdict, "passed") == 0 ? "true" : "false", verdict,
	    reasons, criteria, verified);
	o = json_loads(buf, 0, NULL);
	if (o == NULL)
		tap_diag("bad shape: %s", buf);
	return o;
}

#define CRIT_K5	"{\"k\": 5, \"suppression_limit\": 1, \"game\": null}"
#define CRIT_PU	"{\"k\": null, \"pu_threshold\": 0.01, \"population\": " \
	"4031000, \"pu_model\": \"dankar\", \"suppression_limit\": 1, " \
	"\"game\": null}"

static void
test_passed_with_pu(void)
{
	json_t *o = shape("passed", CRIT_PU, "{\"records\": 5000, "
	    "\"released_records\": 4900, \"suppressed_records\": 100, "
	    "\"suppressed_share\": 0.02, \"smallest_class\": 1, "
	    "\"sample_uniques\": 40, \"pu_fraction\": 0.007, \"pu_model\": "
	    "\"pitman\", \"residual\": [{\"population\": 4031000, \"su\": "
	    "0.008, \"ratio\": 0.875, \"bound\": 0.9, \"passed\": true, "
	    "\"model\": \"pitman\"}]}", "[]"), *lines = deid_explain(o);

	print_lines(lines);
	tap_ok(strncmp(headline(lines), "Passed: ", 8) == 0,
	    "passed: %s", headline(lines));
	tap_ok(find_line(lines, "an estimated 0.7 % of the released records "
	    "(about 34 of 4,900) are unique in a population of 4.0 million")
	    != NULL, "the PU figure in one sentence, in the issue's words");
	tap_ok(find_line(lines, "the pitman model, chosen by the dankar rule")
	    != NULL, "says which model decided and by which rule");
	tap_ok(find_line(lines, "age: level 1 of 2, 100 values → 10, e.g. "
	    "\"37\" → \"30-39\"") != NULL, "age 37 → 30-39 in the labels");
	tap_ok(find_line(lines, "100 of 5,000 records (2.0 %)") != NULL &&
	    find_line(lines, "removed until PU ≤ 1.0 %") != NULL,
	    "how many were suppressed and why");
	tap_ok(find_line(lines, "met: PU/SU = 0.875 is within the bound 0.9")
	    != NULL && strstr(headline(lines), "PU/SU = 0.875") != NULL,
	    "the tightest criterion (PU/SU at 0.875 of 0.9) is named");
	json_decref(lines);
	json_decref(o);
}

static void
test_failed_on_k(void)
{
	json_t *o = shape("failed", CRIT_K5, "{\"records\": 300, "
	    "\"released_records\": 300, \"suppressed_records\": 0, "
	    "\"suppressed_share\": 0, \"smallest_class\": 2, "
	    "\"sample_uniques\": 0, \"residual\": []}",
	    "[\"a released class has 2 records, fewer than k = 5\"]");
	json_t *lines = deid_explain(o);

	print_lines(lines);
	tap_ok(strcmp(headline(lines), "Failed, the table must not be "
	    "released: k = 5: a released class has only 2 records.") == 0,
	    "failed on k: the criterion with its figure and bound");
	tap_ok(find_line(lines, "FAILED: k = 5") != NULL &&
	    find_line(lines, "Suppressed: no record.") != NULL,
	    "the criterion line says FAILED; nothing suppressed");
	json_decref(lines);
	json_decref(o);
}

static void
test_failed_on_residual(void)
{
	json_t *o = shape("failed", CRIT_K5, "{\"records\": 300, "
	    "\"released_records\": 290, \"suppressed_records\": 10, "
	    "\"suppressed_share\": 0.0333, \"smallest_class\": 5, "
	    "\"sample_uniques\": 0, \"residual\": [{\"population\": 4031000,"
	    " \"su\": 0.1, \"ratio\": 0.0601, \"bound\": 0.05, \"passed\": "
	    "false, \"model\": \"pitman\"}, {\"population\": 39140000, "
	    "\"su\": 0.1, \"ratio\": 0.01, \"bound\": 0.05, \"passed\": true,"
	    " \"model\": \"pitman\"}]}", "[]"), *lines = deid_explain(o);

	print_lines(lines);
	tap_ok(strstr(headline(lines), "Failed, the table must not be "
	    "released: PU/SU = 0.0601 exceeds the bound 0.05 at N = 4.0 "
	    "million (model pitman)") != NULL,
	    "failed on PU/SU: figure, bound and population in the headline");
	tap_ok(find_line(lines, "FAILED: PU/SU = 0.0601") != NULL &&
	    find_line(lines, "met: PU/SU = 0.01 is within the bound 0.05 at "
	    "N = 39.1 million") != NULL &&
	    find_line(lines, "met: k = 5") != NULL,
	    "each criterion with its state");
	tap_ok(find_line(lines, "6.0 % of the released sample uniques are "
	    "expected to be unique in the population") != NULL,
	    "what PU/SU means, in a sentence");
	json_decref(lines);
	json_decref(o);
}

static void
test_failed_estimate(void)
{
	json_t *o = shape("failed", CRIT_PU, "{\"records\": 50, "
	    "\"released_records\": 50, \"suppressed_records\": 0, "
	    "\"suppressed_share\": 0, \"smallest_class\": 1, "
	    "\"sample_uniques\": 50, \"pu_fraction\": null, \"pu_model\": "
	    "\"pitman\", \"pu_error\": \"every record is unique\", "
	    "\"residual\": []}", "[]"), *lines = deid_explain(o);

	print_lines(lines);
	tap_ok(strstr(headline(lines), "could not estimate it (every record "
	    "is unique), which fails closed") != NULL,
	    "a failed estimate fails closed, with the model's reason");
	json_decref(lines);
	json_decref(o);
}

static void
test_nothing_released(void)
{
	json_t *o = shape("nothing released", CRIT_K5, "{\"records\": 300, "
	    "\"released_records\": 0, \"suppressed_records\": 300, "
	    "\"suppressed_share\": 1, \"smallest_class\": 0, "
	    "\"sample_uniques\": 0, \"residual\": []}",
	    "[\"nothing released: all 300 records are suppressed\"]");
	json_t *lines = deid_explain(o);

	print_lines(lines);
	tap_ok(strcmp(headline(lines), "Nothing released: all 300 records "
	    "would be suppressed, so the gate fails.") == 0,
	    "nothing released: said so");
	tap_ok(find_line(lines, "met:") == NULL && find_line(lines,
	    "attacker") == NULL, "and no criterion is called met on nothing");
	json_decref(lines);
	json_decref(o);
}

static void
test_no_transformation(void)
{
	json_t *o = shape("failed", CRIT_K5, "null", "[\"no transformation "
	    "reaches k = 5 within the suppression limit of 0%; the closest "
	    "suppresses 9.4%\"]"), *lines;

	json_object_set_new(json_array_get(json_object_get(o,
	    "generalization"), 0), "level", json_null());
	lines = deid_explain(o);
	print_lines(lines);
	tap_ok(strcmp(headline(lines), "Failed, nothing is written: no "
	    "transformation reaches k = 5 within the suppression limit of 0%;"
	    " the closest suppresses 9.4%.") == 0,
	    "no transformation: the search's reason, nothing written");
	tap_ok(json_array_size(lines) == 1, "and no made-up figure after it "
	    "(%zu lines)", json_array_size(lines));
	json_decref(lines);
	json_decref(o);
}

static void
test_formats(void)
{
	char b[64];

	deid_fmt_count(30162, b, sizeof(b));
	tap_ok(strcmp(b, "30,162") == 0, "count 30162: %s", b);
	deid_fmt_count(999, b, sizeof(b));
	tap_ok(strcmp(b, "999") == 0, "count 999: %s", b);
	deid_fmt_population(318.9e6, b, sizeof(b));
	tap_ok(strcmp(b, "318.9 million") == 0, "population: %s", b);
	deid_fmt_share(0.0070, b, sizeof(b));
	tap_ok(strcmp(b, "0.7 %") == 0, "share 0.007: %s", b);
	deid_fmt_share(0.000123, b, sizeof(b));
	tap_ok(strcmp(b, "0.012 %") == 0, "share 0.000123: %s", b);
}

/* ---- the HTML page -------------------------------------------------- */

static void
test_html_escaping(void)
{
	static const char hostile[] = "<script>alert(1)</script>\"&'";
	json_t *o = shape("passed", CRIT_K5, "{\"records\": 300, "
	    "\"released_records\": 300, \"suppressed_records\": 0, "
	    "\"suppressed_share\": 0, \"smallest_class\": 5, "
	    "\"sample_uniques\": 0, \"residual\": []}", "[]"), *g;
	char *page = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	g = json_array_get(json_object_get(o, "generalization"), 0);
	json_object_set_new(g, "attribute", json_string(hostile));
	json_object_set_new(json_array_get(json_object_get(g, "levels"), 1),
	    "example", json_string(hostile));
	f = open_memstream(&page, &len);
	r = deid_html_report(o, hostile, f);
	fclose(f);
	tap_ok(r == DEID_OK && len > 1000, "the page is written (%zu bytes)",
	    len);
	tap_ok(strstr(page, "<script") == NULL && strstr(page, "alert(1)") !=
	    NULL, "no <script> from the data gets through");
	tap_ok(strstr(page, "&lt;script&gt;alert(1)&lt;/script&gt;&quot;"
	    "&amp;&#39;") != NULL, "it is escaped as &lt;script&gt;...&quot;"
	    "&amp;&#39;");
	tap_ok(strstr(page, "<svg") != NULL && strstr(page, "http:") == NULL &&
	    strstr(page, "https:") == NULL && strstr(page, "src=") == NULL &&
	    strstr(page, "href=") == NULL && strstr(page, "url(") == NULL,
	    "inline SVG; no http:, https:, src=, href= or url( anywhere");
	tap_ok(strstr(page, "default-src 'none'") != NULL,
	    "its Content-Security-Policy forbids loading anything");
	free(page);
	f = open_memstream(&page, &len);
	tap_ok(deid_html_report(json_object_get(o, "criteria"), NULL, f) ==
	    DEID_EINPUT, "not a report: DEID_EINPUT");
	fclose(f);
	free(page);
	json_decref(o);
}

int
main(void)
{
	deid_risk_init();
	test_real_run();
	test_passed_with_pu();
	test_failed_on_k();
	test_failed_on_residual();
	test_failed_estimate();
	test_nothing_released();
	test_no_transformation();
	test_formats();
	test_html_escaping();
	return tap_done();
}
