/*
 * cli/cmd-deid-anonymize.c — `cdsgate deid anonymize`: find the optimal
 * transformation under the privacy criteria, write the de-identified CSV
 * and the report whose gate says whether it may be released.
 * Untrusted input, parsed and searched in the deid worker
 * (cli/deid-worker.c); this process opens the files, renames the output
 * into place and prints: files are written atomically or not at all.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/deid-args.h"
#include "cli/deid-worker.h"
#include "deid/output.h"
#include "deid/report.h"

#define DEFAULT_RESIDUAL_BOUND	0.25

/* Criteria must make sense together before any work starts. */
static int
anon_check_args(struct deid_args *a)
{
	struct deid_criteria *c = &a->sopts.crit;
	char msg[256];
	size_t i;

	if (a->output == NULL && a->report == NULL && !a->json)
		return cli_usage_error(a->usage, "give --output and --report "
		    "(or --json)");
	if (a->pu_set) {
		if (a->npop == 0)
			return cli_usage_error(a->usage, "--pu-threshold needs "
			    "--population N");
		c->pu = 1;
		c->population = a->pop[0];
	}
	if (!c->pu && c->k < 2 && c->game.variant == DEID_GAME_OFF)
		return cli_usage_error(a->usage, "no privacy criterion: give "
		    "--pu-threshold T --population N, --k K (K >= 2) and/or "
		    "--game payout|no-attack");
	if (deid_game_check(&c->game, msg, sizeof(msg)) != DEID_OK)
		return cli_usage_error(a->usage, "%s", msg);
	if (a->nresid == 0)	/* default: the populations given, 25% */
		for (i = 0; i < a->npop; i++) {
			a->resid_n[a->nresid] = a->pop[i];
			a->resid_b[a->nresid++] = DEFAULT_RESIDUAL_BOUND;
		}
	return 0;
}

/* Risk figures of one histogram for the report. */
static int
anon_side(const struct deid_args *a, const struct deid_hist *h,
    struct deid_risk_side *s)
{
	const struct deid_criteria *c = &a->sopts.crit;
	size_t i;

	s->records = h->n;
	s->classes = h->u;
	s->sample_uniques = h->c1;
	if (c->pu || a->npop > 0) {
		s->has_pu = 1;
		if (h->c1 == 0) {
			memset(&s->pu, 0, sizeof(s->pu));
			s->pu.model = c->pu_model;
			s->pu.path = DEID_PATH_TRIVIAL;
		} else
			deid_model_estimate(c->pu_model, h, a->pop[0], &s->pu);
	}
	s->nresidual = a->nresid;
	if ((s->residual = calloc(a->nresid + 1, sizeof(*s->residual))) == NULL)
		return DEID_ENOMEM;
	for (i = 0; i < a->nresid; i++)
		deid_residual_check(h, c->pu_model, a->resid_n[i],
		    a->resid_b[i], &s->residual[i]);
	deid_attack_risk(h, a->npop ? a->pop[0] : 0, &s->attack);
	return DEID_OK;
}

/* Decide the gate: a solution exists and every residual check passes. */
static void
anon_gate(struct deid_anon_report *rep)
{
	const struct deid_search_opts *o = rep->opts;
	size_t i;

	rep->gate_passed = 1;
	if (!rep->res->found) {
		rep->gate_passed = 0;
		snprintf(rep->reasons[rep->nreasons++], 256, "no transformation "
		    "satisfies the criteria within the suppression limit of "
		    "%g%%", 100 * o->crit.suppression_limit);
		return;
	}
	for (i = 0; i < rep->after.nresidual; i++) {
		const struct deid_residual *rs = &rep->after.residual[i];

		if (rs->passed || rep->nreasons == DEID_MAX_REASONS)
			continue;
		rep->gate_passed = 0;
		if (isnan(rs->ratio))
			snprintf(rep->reasons[rep->nreasons++], 256, "PU/SU for "
			    "population %.6g could not be estimated (%s)",
			    rs->population, rs->est.error);
		else
			snprintf(rep->reasons[rep->nreasons++], 256, "PU/SU = "
			    "%.4f exceeds the bound %.4f for population %.6g",
			    rs->ratio, rs->bound, rs->population);
	}
}

static void
anon_print(FILE *f, const struct deid_anon_report *rep)
{
	const struct deid_engine *e = rep->e;
	size_t j;

	if (!rep->res->found) {
		fprintf(f, "no solution: %s\n", rep->reasons[0]);
		return;
	}
	fprintf(f, "transformation:");
	for (j = 0; j < e->nqi; j++)
		fprintf(f, " %s=%u", e->ds->cols[e->qi[j].col].name,
		    rep->res->levels[j]);
	fprintf(f, "\nrecords %llu, suppressed %llu\n",
	    (unsigned long long)e->ds->nrows,
	    (unsigned long long)rep->res->eval.suppressed_records);
	fprintf(f, "quality: loss %.2f%%, non-uniform entropy %.2f%%\n",
	    100 * (1 - rep->loss.geometric), 100 * (1 - rep->loss.entropy));
	if (rep->opts->crit.game.variant != DEID_GAME_OFF ||
	    rep->opts->quality == DEID_QUALITY_PAYOUT)
		fprintf(f, "game (%s): publisher payout $%.0f of $%.0f "
		    "(%.2f%%), %llu released records worth attacking\n",
		    deid_game_variant_name(rep->opts->crit.game.variant),
		    rep->payout.payout, rep->payout.max,
		    100 * (1 - rep->loss.payout),
		    (unsigned long long)rep->payout.attacked);
	fprintf(f, "sample uniques: before %llu, after %llu\n",
	    (unsigned long long)rep->before.sample_uniques,
	    (unsigned long long)rep->after.sample_uniques);
	fprintf(f, "lattice: %llu nodes, %llu checked; search %.1f ms, all %.1f ms\n",
	    (unsigned long long)rep->res->nodes,
	    (unsigned long long)rep->res->evaluated, rep->search_ms,
	    rep->elapsed_ms);
	fprintf(f, "gate: %s\n", rep->gate_passed ? "PASSED" :
	    "FAILED - must not be released");
	for (j = 0; j < rep->nreasons; j++)
		fprintf(f, "  %s\n", rep->reasons[j]);
}

/* In the worker: the released table to the descriptor the parent opened
 * (the temp file of its atomic write). */
static int
anon_table(const char *name, const struct deid_engine *e, int fd,
    const struct deid_node_ws *ws, struct deid_error *err)
{
	FILE *f;
	int dfd, r;

	if (fd < 0)
		return deid_error_set(err, DEID_EINTERNAL, name, 0, 0,
		    "no output descriptor");
	if ((dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0)
		return deid_error_set(err, DEID_EIO, name, 0, 0, "%s",
		    strerror(errno));
	if ((f = fdopen(dfd, "w")) == NULL) {
		close(dfd);
		return DEID_ENOMEM;
	}
	r = deid_output_write_fp(f, name, e, ws->classes, ws->supp->suppressed,
	    err);
	if (fclose(f) != 0 && r == DEID_OK)
		r = deid_error_set(err, DEID_EIO, name, 0, 0, "write failed: %s",
		    strerror(errno));
	return r;
}

/* In the worker: the table, the report JSON and what to print, into res. */
static int
anon_emit(const struct deid_args *a, const struct deid_engine *e, int out_fd,
    const struct deid_node_ws *ws, json_t *report,
    const struct deid_anon_report *rep, struct deid_result *res)
{
	char *s, *text = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	if (a->output != NULL && ws != NULL) {
		if ((r = anon_table(a->output, e, out_fd, ws, &res->err)) !=
		    DEID_OK)
			return r;
		res->wrote_output = 1;
	}
	s = json_dumps(report, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
	if ((r = dres_take(&res->report, s, s ? strlen(s) : 0)) != DEID_OK)
		return r;
	if ((f = open_memstream(&text, &len)) == NULL)
		return DEID_ENOMEM;
	if (a->json) {
		fwrite(res->report.d, 1, res->report.len, f);
		fputc('\n', f);
	} else
		anon_print(f, rep);
	fclose(f);
	return dres_take(&res->out, text, len);
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The game's figures for the chosen node. */
static void
anon_payout(const struct deid_engine *e, const struct deid_game *g,
    const struct deid_quality_tables *t, const struct deid_node_ws *ws,
    struct deid_anon_report *rep)
{
	deid_game_node(e, g, t->game, ws->classes, ws->supp->suppressed,
	    &rep->payout);
	rep->loss.payout = deid_game_loss(&rep->payout);
}

/* Re-check the chosen node for its classes, both losses and risk. */
static int
anon_finish(const struct deid_args *a, const struct deid_engine *e,
    struct deid_anon_report *rep, struct deid_node_ws *ws,
    struct deid_hist *h)
{
	struct deid_quality_tables *t = NULL;
	struct deid_node_eval ev;
	struct deid_loss unused;
	int r;

	if ((r = deid_node_ws_alloc(e, ws)) != DEID_OK ||
	    (r = deid_quality_tables_alloc(e, &t)) != DEID_OK)
		goto out;
	deid_node_check(e, t, &a->sopts, rep->res->levels, ws, &ev, &unused);
	deid_quality_node(e, t, ws->classes, ws->supp->suppressed,
	    DEID_WANT_LOSS | DEID_WANT_ENTROPY, ws->scratch, &rep->loss);
	anon_payout(e, &a->sopts.crit.game, t, ws, rep);
	if ((r = deid_summary_hist(ws->classes, ws->supp->suppressed, h))
	    != DEID_OK)
		goto out;
	r = anon_side(a, h, &rep->after);
out:
	deid_quality_tables_free(t);
	return r;
}

/* The job, in the deid worker: read, search, re-check, report. */
static void
anon_job(struct deid_args *a, struct deid_inputs *in, struct deid_result *res)
{
	struct deid_dataset *ds = NULL;
	struct deid_engine *e = NULL;
	struct deid_hist *h = NULL;
	struct deid_search_result sr;
	struct deid_anon_report rep;
	struct deid_node_ws ws = { 0 };
	json_t *o = NULL;
	double t0 = now_ms(), t1;
	int r;

	memset(&rep, 0, sizeof(rep));
	if ((r = dargs_load(a, in, &ds, &e, &res->err)) != DEID_OK) {
		dres_fail(res, r, 1);
		goto out;
	}
	r = DEID_ENOMEM;
	if ((h = deid_hist_alloc(64)) == NULL ||
	    dargs_bottom_hist(e, h) != DEID_OK ||
	    anon_side(a, h, &rep.before) != DEID_OK)
		goto fail;
	t1 = now_ms();
	if ((r = deid_search(e, &a->sopts, &sr, &res->err)) != DEID_OK)
		goto fail;
	rep.search_ms = now_ms() - t1;
	rep.e = e;
	rep.opts = &a->sopts;
	rep.res = &sr;
	rep.loss.geometric = rep.loss.arithmetic = rep.loss.entropy = NAN;
	if (sr.found && (r = anon_finish(a, e, &rep, &ws, h)) != DEID_OK)
		goto fail;
	anon_gate(&rep);
	rep.elapsed_ms = now_ms() - t0;
	rep.output = sr.found ? a->output : NULL;
	o = deid_report_anonymize(&rep);
	if ((r = anon_emit(a, e, in->out_fd, sr.found ? &ws : NULL, o, &rep,
	    res)) != DEID_OK)
		goto fail;
	res->exit_code = rep.gate_passed ? EXIT_GATE_PASSED : EXIT_GATE_FAILED;
	goto out;
fail:
	dres_fail(res, r, 0);
out:
	json_decref(o);
	free(rep.before.residual);
	free(rep.after.residual);
	deid_node_ws_free(&ws);
	deid_hist_free(h);
	deid_engine_free(e);
	deid_dataset_free(ds);
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
	"[--separator C] --output OUT.csv --report R.json "
	"[--pu-threshold T --population N [--pu-model dankar|pitman|zayatz|"
	"snb]] [--k K] [--suppression-limit S] [--quality loss|entropy|payout] "
	"[--game payout|no-attack [--game-cost C] [--game-gain G] "
	"[--game-loss L] [--game-benefit B]] "
	"[--residual N=BOUND ...] [--threads N] [--json]",
	"de-identify a table through the gate",
	cmd_deid_anonymize
};
