/*
 * deid/anonymize.c — the gate (deid/anonymize.h): load, search, write the
 * released table, figure its risk and quality, decide.  Runs on
 * untrusted bytes inside the caller's confinement (the CLI's deid
 * worker); opens nothing, writes only to the descriptor it is handed.
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

#include "deid/anonymize.h"
#include "deid/output.h"
#include "deid/summary.h"

/* The residual checks the job asks for, defaults filled in. */
struct anon_resid {
	size_t	 n;
	double	*population, *bound;
};

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- options and loading ------------------------------------------ */

int
deid_job_check(const struct deid_job *job, struct deid_error *err)
{
	const struct deid_criteria *c = &job->sopts.crit;
	char msg[256];
	size_t i;

	if (job->nqi == 0 || job->nqi > DEID_MAX_QI)
		return deid_error_set(err, DEID_EINPUT, NULL, 0, 0, "1 to %d "
		    "quasi-identifiers, not %zu", DEID_MAX_QI, job->nqi);
	if (c->pu && (job->npopulation == 0 ||
	    c->population != job->population[0]))
		return deid_error_set(err, DEID_EINPUT, NULL, 0, 0, "the PU "
		    "criterion needs its population as the first one");
	if (!c->pu && c->k < 2 && c->game.variant == DEID_GAME_OFF)
		return deid_error_set(err, DEID_EINPUT, NULL, 0, 0, "no privacy "
		    "criterion: PU <= t, k >= 2 and/or the game");
	if (!(c->suppression_limit >= 0 && c->suppression_limit <= 1) ||
	    (c->pu && !(c->pu_threshold >= 0 && c->pu_threshold <= 1)) ||
	    !(job->warn_suppressed >= 0 && job->warn_suppressed <= 1))
		return deid_error_set(err, DEID_EINPUT, NULL, 0, 0, "a share "
		    "outside 0..1 (suppression limit, PU threshold or "
		    "suppressed-share warning)");
	if (deid_game_check(&c->game, msg, sizeof(msg)) != DEID_OK)
		return deid_error_set(err, DEID_EINPUT, NULL, 0, 0, "%s", msg);
	for (i = 0; i < job->npopulation; i++)
		if (!(job->population[i] >= 1))
			return deid_error_set(err, DEID_EINPUT, NULL, 0, 0,
			    "a population must be at least 1");
	for (i = 0; i < job->nresidual; i++)
		if (!(job->residual_population[i] >= 1) ||
		    !(job->residual_bound[i] >= 0 &&
		    job->residual_bound[i] <= 1))
			return deid_error_set(err, DEID_EINPUT, NULL, 0, 0,
			    "a residual check needs population >= 1 and bound "
			    "within 0..1");
	return DEID_OK;
}

/* Set one list of columns to a type; unknown names are input errors. */
static int
job_types(struct deid_dataset *ds, const char *const *names, size_t n,
    enum deid_attr_type type, uint8_t *listed, struct deid_error *err)
{
	size_t i;
	long c;

	for (i = 0; i < n; i++) {
		if ((c = deid_dataset_column(ds, names[i])) < 0)
			return deid_error_set(err, DEID_EINPUT, ds->path, 1, 0,
			    "no column named \"%s\" in the header", names[i]);
		if (listed[c])
			return deid_error_set(err, DEID_EINPUT, NULL, 0, 0,
			    "column \"%s\" is given two attribute types",
			    names[i]);
		listed[c] = 1;
		ds->cols[c].type = type;
	}
	return DEID_OK;
}

/* Every column typed by one list; classify: an unlisted one is refused. */
static int
job_classify(const struct deid_job *job, int classify,
    struct deid_dataset *ds, struct deid_error *err)
{
	uint8_t *listed = calloc(ds->ncols + 1, 1);
	size_t i;
	int r;

	if (listed == NULL)
		return DEID_ENOMEM;
	if ((r = job_types(ds, job->qi, job->nqi, DEID_ATTR_QUASI, listed,
	    err)) != DEID_OK ||
	    (r = job_types(ds, job->identifying, job->nidentifying,
	    DEID_ATTR_IDENTIFYING, listed, err)) != DEID_OK ||
	    (r = job_types(ds, job->sensitive, job->nsensitive,
	    DEID_ATTR_SENSITIVE, listed, err)) != DEID_OK ||
	    (r = job_types(ds, job->insensitive, job->ninsensitive,
	    DEID_ATTR_INSENSITIVE, listed, err)) != DEID_OK)
		goto out;
	for (i = 0; classify && i < ds->ncols; i++)
		if (!listed[i]) {
			r = deid_error_set(err, DEID_EINPUT, ds->path, 1, i + 1,
			    "column \"%s\" is not classified: name it as a "
			    "quasi-identifier, identifying, sensitive or "
			    "insensitive", ds->cols[i].name);
			break;
		}
out:
	free(listed);
	return r;
}

/* Bind every QI to its hierarchy (or the flat one when it has none). */
static int
job_bind(const struct deid_job *job, struct deid_dataset *ds,
    struct deid_error *err)
{
	const struct deid_job_file *f;
	struct deid_hierarchy *h;
	size_t i;
	long c;
	int r;

	for (i = 0; i < job->nqi; i++) {
		f = &job->hier[i];
		c = deid_dataset_column(ds, job->qi[i]);
		if (f->status != DEID_OK) {
			if (err != NULL)
				*err = f->err;
			return f->status;
		}
		if (f->data == NULL)
			r = deid_dataset_bind_flat(ds, (size_t)c, err);
		else if ((r = deid_hierarchy_parse(f->data, f->len, f->name,
		    &job->csv, &h, err)) == DEID_OK)
			r = deid_dataset_bind(ds, (size_t)c, h, err);
		if (r != DEID_OK)
			return r;
	}
	return DEID_OK;
}

int
deid_job_load(const struct deid_job *job, int classify,
    struct deid_dataset **dsp, struct deid_engine **ep,
    struct deid_error *err)
{
	int r;

	*dsp = NULL;
	*ep = NULL;
	if (job->data.status != DEID_OK) {
		if (err != NULL)
			*err = job->data.err;
		return job->data.status;
	}
	if (job->data.data == NULL)
		return deid_error_set(err, DEID_EINPUT, job->data.name, 0, 0,
		    "no data");
	if ((r = deid_dataset_parse(job->data.data, job->data.len,
	    job->data.name, &job->csv, dsp, err)) != DEID_OK ||
	    (r = job_classify(job, classify, *dsp, err)) != DEID_OK ||
	    (r = job_bind(job, *dsp, err)) != DEID_OK)
		return r;
	return deid_engine_alloc(*dsp, ep, err);
}

/* ---- figures -------------------------------------------------------- */

/* The residual checks: the job's, or each population at 25%. */
static int
anon_resid(const struct deid_job *job, struct anon_resid *rs)
{
	size_t i, n = job->nresidual ? job->nresidual : job->npopulation;

	rs->n = n;
	rs->population = calloc(n + 1, sizeof(double));
	rs->bound = calloc(n + 1, sizeof(double));
	if (rs->population == NULL || rs->bound == NULL)
		return DEID_ENOMEM;
	for (i = 0; i < n; i++) {
		rs->population[i] = job->nresidual ?
		    job->residual_population[i] : job->population[i];
		rs->bound[i] = job->nresidual ? job->residual_bound[i] :
		    DEID_DEFAULT_RESIDUAL_BOUND;
	}
	return DEID_OK;
}

/* Risk figures of one histogram for the report. */
static int
anon_side(const struct deid_job *job, const struct anon_resid *rs,
    const struct deid_hist *h, struct deid_risk_side *s)
{
	const struct deid_criteria *c = &job->sopts.crit;
	size_t i;

	s->records = h->n;
	s->classes = h->u;
	s->sample_uniques = h->c1;
	if (c->pu || job->npopulation > 0) {
		s->has_pu = 1;
		if (h->c1 == 0) {
			memset(&s->pu, 0, sizeof(s->pu));
			s->pu.model = c->pu_model;
			s->pu.path = DEID_PATH_TRIVIAL;
		} else
			deid_model_estimate(c->pu_model, h, job->population[0],
			    &s->pu);
	}
	s->nresidual = rs->n;
	if ((s->residual = calloc(rs->n + 1, sizeof(*s->residual))) == NULL)
		return DEID_ENOMEM;
	for (i = 0; i < rs->n; i++)
		deid_residual_check(h, c->pu_model, rs->population[i],
		    rs->bound[i], &s->residual[i]);
	deid_attack_risk(h, job->npopulation ? job->population[0] : 0,
	    &s->attack);
	return DEID_OK;
}

/* The game's figures for the chosen node: nothing released at the top. */
static void
anon_payout(const struct deid_engine *e, const struct deid_game *g,
    const struct deid_quality_tables *t, const struct deid_node_ws *ws,
    int top, struct deid_anon_report *rep)
{
	if (top) {
		memset(&rep->payout, 0, sizeof(rep->payout));
		rep->payout.max = (double)e->ds->nrows * g->benefit;
		rep->loss.payout = 1;
		return;
	}
	deid_game_node(e, g, t->game, ws->classes, ws->supp->suppressed,
	    &rep->payout);
	rep->loss.payout = deid_game_loss(&rep->payout);
}

/* Re-check the chosen node for its classes, both losses and risk. */
static int
anon_finish(const struct deid_job *job, const struct anon_resid *rs,
    struct deid_anon_report *rep, struct deid_node_ws *ws,
    struct deid_hist *h)
{
	const struct deid_engine *e = rep->e;
	struct deid_quality_tables *t = NULL;
	struct deid_node_eval ev;
	struct deid_loss unused;
	int r;

	if ((r = deid_node_ws_alloc(e, ws)) != DEID_OK ||
	    (r = deid_quality_tables_alloc(e, &t)) != DEID_OK)
		goto out;
	deid_node_check(e, t, &job->sopts, rep->res.levels, rep->res.eval.top,
	    ws, &ev, &unused);
	if (ev.top)
		rep->loss.geometric = rep->loss.arithmetic =
		    rep->loss.entropy = 1;
	else
		deid_quality_node(e, t, ws->classes, ws->supp->suppressed,
		    DEID_WANT_LOSS | DEID_WANT_ENTROPY, ws->scratch, &rep->loss);
	anon_payout(e, &job->sopts.crit.game, t, ws, ev.top, rep);
	if (ev.top)
		deid_hist_clear(h);	/* all at the root: nothing released */
	else if ((r = deid_summary_hist(ws->classes, ws->supp->suppressed, h))
	    != DEID_OK)
		goto out;
	r = anon_side(job, rs, h, &rep->after);
out:
	deid_quality_tables_free(t);
	return r;
}

/* Decide the gate: a solution exists and every residual check passes. */
static void
anon_gate(struct deid_anon_report *rep)
{
	const struct deid_search_opts *o = &rep->opts;
	size_t i;

	rep->gate_passed = 1;
	if (!rep->res.found) {
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

/* ---- the released table ------------------------------------------- */

/* The table of the node grouped in ws, to the caller's descriptor. */
static int
anon_write(const struct deid_job *job, const struct deid_engine *e,
    const struct deid_node_ws *ws, struct deid_error *err)
{
	const char *name = job->out_name ? job->out_name : "(output)";
	FILE *f;
	int dfd, r;

	if ((dfd = fcntl(job->out_fd, F_DUPFD_CLOEXEC, 0)) < 0)
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

/* ---- the call ------------------------------------------------------- */

/* Search and figure the chosen node; the table to out_fd when found. */
static int
anon_run(const struct deid_job *job, const struct anon_resid *rs,
    struct deid_anon_report *rep, struct deid_hist *h,
    struct deid_error *err)
{
	struct deid_node_ws ws = { 0 };
	double t1;
	int r;

	if ((r = deid_summary_bottom_hist(rep->e, h)) != DEID_OK ||
	    (r = anon_side(job, rs, h, &rep->before)) != DEID_OK)
		return r;
	t1 = now_ms();
	if ((r = deid_search(rep->e, &rep->opts, &rep->res, err)) != DEID_OK)
		return r;
	rep->search_ms = now_ms() - t1;
	rep->loss.geometric = rep->loss.arithmetic = rep->loss.entropy = NAN;
	if (rep->res.found) {
		if ((r = anon_finish(job, rs, rep, &ws, h)) != DEID_OK)
			goto out;
		if (job->out_fd >= 0 &&
		    (r = anon_write(job, rep->e, &ws, err)) != DEID_OK)
			goto out;
	}
	anon_gate(rep);
	rep->released = rep->gate_passed && rep->res.found &&
	    job->out_fd >= 0;
out:
	deid_node_ws_free(&ws);
	return r;
}

int
deid_anonymize(const struct deid_job *job, struct deid_anon_report *rep,
    struct deid_error *err)
{
	struct anon_resid rs = { 0 };
	struct deid_hist *h = NULL;
	double t0 = now_ms();
	int r;

	rep->opts = job->sopts;
	if ((r = deid_job_check(job, err)) != DEID_OK ||
	    (r = deid_job_load(job, 0, &rep->ds, &rep->e, err)) != DEID_OK)
		goto out;
	if ((r = anon_resid(job, &rs)) != DEID_OK ||
	    (h = deid_hist_alloc(64)) == NULL) {
		r = DEID_ENOMEM;
		goto out;
	}
	if ((r = anon_run(job, &rs, rep, h, err)) != DEID_OK)
		goto out;
	rep->elapsed_ms = now_ms() - t0;
	rep->output = rep->res.found && job->out_fd >= 0 ? job->out_name : NULL;
out:
	free(rs.population);
	free(rs.bound);
	deid_hist_free(h);
	if (r != DEID_OK)
		rep->released = 0;
	return r;
}

void
deid_anon_report_free(struct deid_anon_report *rep)
{
	free(rep->before.residual);
	free(rep->after.residual);
	deid_engine_free(rep->e);
	deid_dataset_free(rep->ds);
	memset(rep, 0, sizeof(*rep));
}
