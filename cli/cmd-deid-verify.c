/*
 * cli/cmd-deid-verify.c — `cdsgate deid verify`: the gate's figures
 * re-derived from a released table alone (deid/verify.h), for the
 * custodian and the auditor: classes from the written strings, records
 * written "*" as suppressed, k, PU, PU/SU, the suppressed share and,
 * with hierarchies, the information loss; the verdict on them.
 * The file is untrusted: parsed in the deid worker (cli/deid-worker.c).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/deid-args.h"
#include "cli/deid-worker.h"
#include "deid/report.h"
#include "deid/verify.h"

/* Xia 2021's figures: each risk under the attacker and the worst case,
 * and its reduction's quartiles over the subjects. */
static void
verify_print_adversary(FILE *f, const struct deid_adversary *ad,
    double bound)
{
	int k;

	fprintf(f, "adversarial risk %.4f", ad->mean[DEID_ADV_OVERALL]);
	if (bound > 0)
		fprintf(f, ", bound %g", bound);
	fprintf(f, " (attacker %s, seed %llu, %u trials, %llu subjects)\n",
	    ad->attacker, (unsigned long long)ad->seed, ad->trials,
	    (unsigned long long)ad->subjects);
	for (k = 0; k < DEID_ADV_NRISKS; k++)
		fprintf(f, "  %-10s %.4f (worst case %.4f), reduction Q1 "
		    "%.2f%% median %.2f%% Q3 %.2f%%\n", deid_adv_risk_name(k),
		    ad->mean[k], ad->worst_mean[k], 100 * ad->reduction[k].q1,
		    100 * ad->reduction[k].median, 100 * ad->reduction[k].q3);
}

static void
verify_print(FILE *f, const struct deid_verified *v, const char *const *qi,
    size_t nqi)
{
	size_t i;

	fprintf(f, "records %llu, suppressed %llu (%.2f%%), classes %llu, "
	    "smallest %llu, sample uniques %llu\n",
	    (unsigned long long)v->records, (unsigned long long)v->suppressed,
	    v->records ? 100.0 * (double)v->suppressed / (double)v->records :
	    0, (unsigned long long)v->classes,
	    (unsigned long long)v->smallest_class,
	    (unsigned long long)v->sample_uniques);
	if (v->has_pu && v->pu.status == DEID_OK)
		fprintf(f, "PU %.6g (%s)\n", v->pu.fraction,
		    deid_model_name(v->pu.model));
	else if (v->has_pu)
		fprintf(f, "PU could not be estimated: %s\n", v->pu.error);
	for (i = 0; i < v->nresidual; i++)
		fprintf(f, "PU/SU for population %.6g: %.4f (bound %.4f)\n",
		    v->residual[i].population, v->residual[i].ratio,
		    v->residual[i].bound);
	if (v->has_quality) {
		fprintf(f, "levels:");
		for (i = 0; i < nqi; i++)
			fprintf(f, " %s=%u", qi[i], v->levels[i]);
		fprintf(f, "\ninformation loss: %.2f%% (Loss)\n",
		    100 * v->loss);
	}
	if (v->has_adversary)
		verify_print_adversary(f, &v->adversary,
		    v->max_adversarial_risk);
	if (v->has_game)
		fprintf(f, "game: %llu released records worth attacking, %llu "
		    "its criterion would not release\n",
		    (unsigned long long)v->attacked,
		    (unsigned long long)v->unreleasable);
	fprintf(f, "gate: %s\n", v->passed ? "PASSED" : v->nothing_released ?
	    "FAILED - nothing released" : "FAILED - must not be released");
	for (i = 0; i < v->nreasons; i++)
		fprintf(f, "  %s\n", v->reasons[i]);
	if (v->over_warn && !v->nothing_released)
		fprintf(f, "  warning: %.1f%% of the records are suppressed\n",
		    100 * v->suppressed_share);
}

/* The table's read status, then each QI's hierarchy when the parent
 * found one (the others stay NULL: no quality then). */
static int
verify_hierarchies(const struct deid_args *a, const struct deid_job *job,
    struct deid_hierarchy **h, struct deid_error *err)
{
	size_t i;
	int r;

	if (job->data.status != DEID_OK) {
		*err = job->data.err;
		return job->data.status;
	}
	for (i = 0; i < a->nqi; i++) {
		if (job->hier[i].status != DEID_OK) {
			*err = job->hier[i].err;
			return job->hier[i].status;
		}
		if (job->hier[i].data != NULL &&
		    (r = deid_hierarchy_parse(job->hier[i].data,
		    job->hier[i].len, job->hier[i].name, &a->csv, &h[i], err))
		    != DEID_OK)
			return r;
	}
	return DEID_OK;
}

/* The check's options from the command line. */
static void
verify_opts(const struct deid_args *a, const struct deid_job *job,
    struct deid_hierarchy **h, const struct deid_attacker *attacker,
    struct deid_verify_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->qi = job->qi;
	o->nqi = job->nqi;
	o->crit = a->sopts.crit;
	o->population = a->pop;
	o->npopulation = a->npop;
	o->residual_population = a->resid_n;
	o->residual_bound = a->resid_b;
	o->nresidual = a->nresid;
	o->warn_suppressed = a->warn_suppressed;
	o->csv = a->csv;
	o->h = (const struct deid_hierarchy *const *)h;
	o->attacker = attacker;
	o->adversary_seed = a->seed;
	o->adversary_workers = a->sopts.threads;
	o->max_adversarial_risk = a->max_adversarial_risk;
}

/* The hierarchies' warnings (repeated rows, ...) as JSON strings. */
static json_t *
verify_warnings(const struct deid_args *a, struct deid_hierarchy **h)
{
	json_t *all = json_array(), *one;
	size_t i;

	for (i = 0; i < a->nqi; i++)
		if (h[i] != NULL) {
			one = deid_report_warnings(h[i]->warnings,
			    deid_hierarchy_nwarnings(h[i]));
			json_array_extend(all, one);
			json_decref(one);
		}
	return all;
}

/* The verified figures as JSON or text, into res. */
static int
verify_emit(const struct deid_args *a, struct deid_hierarchy **h,
    const struct deid_verified *v, struct deid_result *res)
{
	json_t *o = deid_report_verified(v, (const char *const *)a->qi), *w;
	char *s = NULL, *text = NULL;
	size_t len = 0, i;
	FILE *f;

	if (o == NULL || (f = open_memstream(&text, &len)) == NULL) {
		json_decref(o);
		return DEID_ENOMEM;
	}
	w = verify_warnings(a, h);
	json_object_set(o, "warnings", w);
	for (i = 0; !a->json && i < json_array_size(w); i++)
		fprintf(f, "warning: %s\n", json_string_value(
		    json_array_get(w, i)));
	json_decref(w);
	if (a->json) {
		s = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
		fprintf(f, "%s\n", s ? s : "");
		free(s);
	} else
		verify_print(f, v, (const char *const *)a->qi, a->nqi);
	fclose(f);
	json_decref(o);
	return dres_take(&res->out, text, len);
}

/* The release's descriptor, taken from in when nothing needs the table
 * whole (an attacker's Monte Carlo does): it is then streamed
 * (deid_verify_fd) rather than read into memory first.  -1: read it. */
static int
verify_stream_fd(struct deid_inputs *in)
{
	int fd = in->data.fd;

	if (in->data.status != DEID_OK || fd < 0 || in->attacker.fd >= 0)
		return -1;
	in->data.fd = -1;	/* dargs_job leaves it alone */
	return fd;
}

/* Re-derive the figures from the release: streamed from fd, or the
 * job's bytes when fd is -1. */
static int
verify_release(const struct deid_job *job, int fd,
    const struct deid_verify_opts *o, struct deid_verified *v,
    struct deid_error *err)
{
	if (fd >= 0)
		return deid_verify_fd(fd, job->data.name, o, v, err);
	return deid_verify_release(job->data.data, job->data.len,
	    job->data.name, o, v, err);
}

/* The job, in the deid worker: read, re-derive, decide, say it. */
static void
verify_job(struct deid_args *a, struct deid_inputs *in,
    struct deid_result *res)
{
	struct deid_hierarchy *h[MAX_LIST] = { 0 };
	char *bufs[DARGS_NBUFS] = { 0 };
	struct deid_verify_opts o;
	struct deid_verified v = { 0 };
	struct deid_attacker *attacker = NULL;
	struct deid_dataset *pop = NULL;
	struct deid_job job;
	size_t i;
	int r, fd = verify_stream_fd(in);

	dargs_job(a, in, &job, bufs);
	if ((r = verify_hierarchies(a, &job, h, &res->err)) != DEID_OK ||
	    (r = deid_job_attacker(&job.attacker, &attacker, &res->err)) !=
	    DEID_OK ||
	    (r = deid_job_population_table(&job, &pop, &res->err)) !=
	    DEID_OK ||
	    (verify_opts(a, &job, h, attacker, &o),
	    o.population_table = pop,
	    r = verify_release(&job, fd, &o, &v, &res->err)) != DEID_OK) {
		dres_fail(res, r, 1);
		goto out;
	}
	if ((r = verify_emit(a, h, &v, res)) != DEID_OK)
		dres_fail(res, r, 0);
	res->exit_code = v.passed ? EXIT_GATE_PASSED : EXIT_GATE_FAILED;
out:
	if (fd >= 0)
		close(fd);
	deid_verified_free(&v);
	deid_attacker_free(attacker);
	deid_dataset_free(pop);
	for (i = 0; i < a->nqi; i++)
		deid_hierarchy_free(h[i]);
	dargs_job_free(bufs);
}

static int
cmd_deid_verify(int argc, char **argv)
{
	struct deid_args a = { .usage = cmd_deid_verify_entry.usage };
	int rc;

	if ((rc = dargs_parse(&a, argc, argv)) != 0)
		return rc;
	/* The adversarial risk alone is a check of its own. */
	if ((a.attacker == NULL || a.pu_set || a.sopts.crit.k > 1 ||
	    a.sopts.crit.game.variant != DEID_GAME_OFF) &&
	    (rc = dargs_criteria(&a)) != 0)
		return rc;
	if (a.output != NULL || a.report != NULL)
		return cli_usage_error(a.usage, "verify writes nothing: no "
		    "--output or --report");
	return dw_run_print(&a, verify_job);
}

const struct cmd_entry cmd_deid_verify_entry = {
	"deid", "verify",
	"deid verify --data RELEASED.csv --qi A,B,C [--hierarchies DIR | "
	"--hierarchy A=FILE ...] [--separator C] "
	"[--pu-threshold T --population N [--pu-model dankar|pitman|zayatz|"
	"snb]] [--k K] [--suppression-limit S] [--warn-suppressed S] "
	"[--game payout|no-attack|sh-friendly [--game-cost C] [--game-gain G] "
	"[--game-loss L] [--game-benefit B] [--game-risk prosecutor|journalist "
	"[--population-table FILE]]] "
	"[--safe-harbor QI=LEVEL,...] "
	"[--residual N=BOUND ...] "
	"[--attacker FILE [--max-adversarial-risk R] [--seed S]] [--json]",
	"re-derive a released table's figures and check them against the "
	"criteria",
	cmd_deid_verify
};
