/*
 * cli/cmd-deid-anonymize.c — `cdsgate deid anonymize`: the gate
 * (deid_anonymize, deid/anonymize.h) over the custodian's files: the
 * de-identified CSV, released only when the figures re-derived from its
 * bytes pass, and the report that says why.  Untrusted input, parsed
 * and searched in the deid worker (cli/deid-worker.c); this process
 * opens the files, renames the output into place and prints: files are
 * written atomically or not at all.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/deid-args.h"
#include "cli/deid-worker.h"
#include "deid/anonymize.h"
#include "deid/html.h"
#include "deid/output.h"
#include "deid/report.h"

/* Criteria must make sense together before any work starts. */
static int
anon_check_args(struct deid_args *a)
{
	if (a->output == NULL && a->report == NULL && a->report_html == NULL &&
	    !a->json)
		return cli_usage_error(a->usage, "give --output and --report "
		    "(or --json)");
	return dargs_criteria(a);
}

/* What the release's own bytes say (the verdict rests on them). */
static void
anon_print_verified(FILE *f, const struct deid_verified *v)
{
	fprintf(f, "verified from the written table: %llu records, %llu "
	    "suppressed, %llu classes, smallest %llu, sample uniques %llu",
	    (unsigned long long)v->records, (unsigned long long)v->suppressed,
	    (unsigned long long)v->classes,
	    (unsigned long long)v->smallest_class,
	    (unsigned long long)v->sample_uniques);
	if (v->has_pu && v->pu.status == DEID_OK)
		fprintf(f, ", PU %.6g", v->pu.fraction);
	if (v->has_quality)
		fprintf(f, ", information loss %.2f%%", 100 * v->loss);
	fputc('\n', f);
}

/* The verdict, then the report's explanation (deid/explain.h): the
 * criterion that decided with its figure and bound, what each QI
 * became, the suppression, what the PU figure means. */
static void
anon_print_verdict(FILE *f, const struct deid_anon_report *rep,
    const json_t *report)
{
	const char *verdict = deid_verdict(rep);
	json_t *line;
	size_t j;

	if (rep->gate_passed)
		fprintf(f, "gate: PASSED\n");
	else if (strcmp(verdict, "nothing released") == 0)
		fprintf(f, "gate: FAILED - nothing released\n");
	else
		fprintf(f, "gate: FAILED - must not be released\n");
	json_array_foreach(json_object_get(report, "explanation"), j, line)
		fprintf(f, "  %s\n", json_string_value(line));
}

static void
anon_print(FILE *f, const struct deid_anon_report *rep, const json_t *report)
{
	const struct deid_engine *e = rep->e;
	char w[1400];
	size_t j;

	for (j = 0; j < rep->nwarnings; j++) {
		deid_warning_format(&rep->warnings[j], w, sizeof(w));
		fprintf(f, "warning: %s\n", w);
	}
	if (!rep->res.found) {
		fprintf(f, "no transformation meets the criteria; lattice: "
		    "%llu nodes, all checked\n",
		    (unsigned long long)rep->res.nodes);
		anon_print_verdict(f, rep, report);
		return;
	}
	fprintf(f, "transformation:");
	for (j = 0; j < e->nqi; j++)
		fprintf(f, " %s=%u", e->ds->cols[e->qi[j].col].name,
		    rep->res.levels[j]);
	fprintf(f, "\nrecords %llu, suppressed %llu (%.2f%%)\n",
	    (unsigned long long)e->ds->nrows,
	    (unsigned long long)rep->suppressed_records,
	    100.0 * (double)rep->suppressed_records / (double)e->ds->nrows);
	fprintf(f, "information loss: %.2f%% (Loss), %.2f%% (non-uniform "
	    "entropy)\n", 100 * rep->loss.geometric, 100 * rep->loss.entropy);
	if (rep->opts.crit.game.variant != DEID_GAME_OFF ||
	    rep->opts.quality == DEID_QUALITY_PAYOUT)
		fprintf(f, "game (%s, %s%s): publisher payout $%.0f of $%.0f "
		    "(%.2f%%), %llu released records worth attacking\n",
		    deid_game_variant_name(rep->opts.crit.game.variant),
		    deid_game_risk_name(rep->opts.crit.game.risk),
		    deid_game_uses_table(&rep->opts.crit.game) ?
		    ", SP from the population table" : "",
		    rep->payout.payout, rep->payout.max,
		    100 * (1 - rep->loss.payout),
		    (unsigned long long)rep->payout.attacked);
	fprintf(f, "sample uniques: before %llu, after %llu\n",
	    (unsigned long long)rep->before.sample_uniques,
	    (unsigned long long)rep->after.sample_uniques);
	anon_print_verified(f, &rep->verified);
	fprintf(f, "lattice: %llu nodes, %llu checked; search %.1f ms, "
	    "verify %.1f ms, all %.1f ms\n", (unsigned long long)rep->res.nodes,
	    (unsigned long long)rep->res.evaluated, rep->search_ms,
	    rep->verify_ms, rep->elapsed_ms);
	anon_print_verdict(f, rep, report);
}

/* In the worker: the report JSON and what to print, into res. */
static int
anon_emit(const struct deid_args *a, json_t *report,
    const struct deid_anon_report *rep, struct deid_result *res)
{
	char *s, *text = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	s = json_dumps(report, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
	if ((r = dres_take(&res->report, s, s ? strlen(s) : 0)) != DEID_OK)
		return r;
	if ((f = open_memstream(&text, &len)) == NULL)
		return DEID_ENOMEM;
	if (a->json) {
		fwrite(res->report.d, 1, res->report.len, f);
		fputc('\n', f);
	} else
		anon_print(f, rep, report);
	fclose(f);
	return dres_take(&res->out, text, len);
}

/* In the worker: the report's HTML page (deid/html.h) into res, its
 * title the input file's name. */
static int
anon_emit_html(const struct deid_args *a, const json_t *report,
    struct deid_result *res)
{
	char *page = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	if ((f = open_memstream(&page, &len)) == NULL)
		return DEID_ENOMEM;
	r = deid_html_report(report, a->data, f);
	if (fclose(f) != 0 && r == DEID_OK)
		r = DEID_ENOMEM;
	if (r != DEID_OK) {
		free(page);
		return r;
	}
	return dres_take(&res->html, page, len);
}

/* The job, in the deid worker: the gate over the inputs, then what to
 * print and store. */
static void
anon_job(struct deid_args *a, struct deid_inputs *in, struct deid_result *res)
{
	char *bufs[DARGS_NBUFS] = { 0 };
	struct deid_anon_report rep;
	struct deid_job job;
	json_t *o = NULL;
	int r;

	memset(&rep, 0, sizeof(rep));
	dargs_job(a, in, &job, bufs);
#ifdef ENABLE_TEST_HOOKS	/* a corrupted write, for the tests */
	job.test_tamper = getenv("CDSGATE_TEST_TAMPER") != NULL;
#endif
	if ((r = deid_anonymize(&job, &rep, &res->err)) != DEID_OK) {
		/* an I/O error is the input's unless writing the output */
		dres_fail(res, r, !(r == DEID_EIO && a->output != NULL &&
		    strcmp(res->err.file, a->output) == 0));
		goto out;
	}
	res->wrote_output = rep.released;
	o = deid_report_anonymize(&rep);
	if ((r = anon_emit(a, o, &rep, res)) != DEID_OK ||
	    (a->report_html != NULL &&
	    (r = anon_emit_html(a, o, res)) != DEID_OK)) {
		dres_fail(res, r, 0);
		goto out;
	}
	res->exit_code = rep.gate_passed ? EXIT_GATE_PASSED : EXIT_GATE_FAILED;
out:
	json_decref(o);
	deid_anon_report_free(&rep);
	dargs_job_free(bufs);
}

/* In the parent: the table renamed into place, then the report, then
 * the printout; a failure anywhere leaves no output file. */
static int
anon_commit(const struct deid_args *a, struct deid_atomic *out,
    struct deid_result *res)
{
	struct deid_error err = { .msg = "" };
	const char *s;
	int r;

	if (res->status != DEID_OK || !res->wrote_output)
		deid_atomic_abort(out);
	if (res->status != DEID_OK)
		return dargs_error(res->status, &res->err, res->reading);
	if (res->wrote_output && (r = deid_atomic_commit(out, &err)) !=
	    DEID_OK)
		return dargs_error(r, &err, 0);
	if (wbuf_cstr(&res->report, &s) != BUF_OK)
		r = DEID_ENOMEM;
	else if (a->report != NULL)
		r = deid_write_file(a->report, s, &err);
	else
		r = DEID_OK;
	if (r == DEID_OK && a->report_html != NULL)
		r = wbuf_cstr(&res->html, &s) != BUF_OK ? DEID_ENOMEM :
		    deid_write_file(a->report_html, s, &err);
	if (r != DEID_OK) {
		if (res->wrote_output)
			unlink(a->output);
		return dargs_error(r, &err, 0);
	}
	if (res->out.len > 0)
		dargs_put_safe(stdout, (const char *)res->out.d,
		    res->out.len, 1);
	return res->exit_code;
}

static int
cmd_deid_anonymize(int argc, char **argv)
{
	struct deid_args a = { .usage = cmd_deid_anonymize_entry.usage };
	struct deid_error err = { .msg = "" };
	struct deid_atomic out;
	struct deid_inputs in;
	struct deid_result res;
	int r, rc;

	memset(&out, 0, sizeof(out));
	if ((rc = dargs_parse(&a, argc, argv)) != 0 ||
	    (rc = anon_check_args(&a)) != 0)
		return rc;
	deid_risk_init();
	if ((r = dargs_open(&a, 1, &in, &err)) != DEID_OK)
		return dargs_error(r, &err, 1);
	if (a.output != NULL &&
	    (r = deid_atomic_open(&out, a.output, &err)) != DEID_OK) {
		dargs_close(&in);
		return dargs_error(r, &err, 0);
	}
	in.out_fd = a.output != NULL ? fileno(out.f) : -1;
	dres_init(&res);
	dw_run(&a, &in, anon_job, &res);
	rc = anon_commit(&a, &out, &res);
	dres_free(&res);
	return rc;
}

const struct cmd_entry cmd_deid_anonymize_entry = {
	"deid", "anonymize",
	"deid anonymize --data F.csv --qi A,B,C [--hierarchies DIR | "
	"--hierarchy A=FILE ...] [--identifying A,..] [--sensitive A,..] "
	"[--insensitive A,..] [--separator C] --output OUT.csv --report R.json "
	"[--report-html R.html] "
	"[--pu-threshold T --population N [--pu-model dankar|pitman|zayatz|"
	"snb]] [--k K] [--suppression-limit S] [--warn-suppressed S] "
	"[--quality loss|entropy|payout] "
	"[--game payout|no-attack|sh-friendly [--game-cost C] [--game-gain G] "
	"[--game-loss L] [--game-benefit B] [--game-risk prosecutor|journalist "
	"[--population-table FILE]]] "
	"[--safe-harbor QI=LEVEL,...] "
	"[--residual N=BOUND ...] "
	"[--attacker FILE [--max-adversarial-risk R] [--seed S]] "
	"[--threads N] [--json] [--error-json]",
	"de-identify a table through the gate",
	cmd_deid_anonymize
};
