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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "deid/anonymize.h"
#include "deid/output.h"
#include "deid/summary.h"

/* Clock c now, in ms: the wall (CLOCK_MONOTONIC), or the CPU time of
 * the process (every thread) or of the calling thread. */
static double
clock_ms(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double
now_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
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
	if (c->game.variant == DEID_GAME_SH_FRIENDLY &&
	    !deid_criteria_has_floor(c, job->nqi))
		return deid_error_set(err, DEID_EINPUT, NULL, 0, 0, "the "
		    "SH-Friendly game needs the Safe Harbor levels "
		    "(--safe-harbor QI=LEVEL,...)");
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

/* ---- the search's figures ------------------------------------------ */

/* Risk figures of one histogram for the report. */
static int
anon_side(const struct deid_job *job, const struct deid_hist *h,
    struct deid_risk_side *s)
{
	const struct deid_criteria *c = &job->sopts.crit;
	size_t i;

	s->records = h->n;
	s->classes = h->u;
	s->sample_uniques = h->c1;
	if (c->pu || job->npopulation > 0) {	/* 0 with no sample unique */
		s->has_pu = 1;
		s->population = job->population[0];
		deid_model_estimate(c->pu_model, h, job->population[0], &s->pu);
	}
	if (deid_residual_list(job->population, job->npopulation,
	    job->residual_population, job->residual_bound, job->nresidual,
	    &s->residual, &s->nresidual) != DEID_OK)
		return DEID_ENOMEM;
	for (i = 0; i < s->nresidual; i++)	/* PU's population: known */
		deid_residual_with(h, c->pu_model, s->residual[i].population,
		    s->residual[i].bound, s->has_pu &&
		    s->residual[i].population == job->population[0] ? &s->pu :
		    NULL, &s->residual[i]);
	deid_attack_risk(h, job->npopulation ? job->population[0] : 0,
	    &s->attack);
	deid_summary_bins(h, s->bin_classes, s->bin_records);
	return DEID_OK;
}

/* The released records of classes the population table lacks: the
 * game takes SP = 1 for them (fail closed) and the report says so. */
static int
anon_pop_absent(struct deid_anon_report *rep, const struct deid_node_ws *ws)
{
	const struct deid_classes *c = ws->classes;
	struct deid_warning *w;
	size_t k;

	if (!deid_game_uses_table(&rep->opts.crit.game))
		return DEID_OK;
	for (k = 0; k < c->n; k++)
		if (!ws->supp->suppressed[k] && ws->supp->popsize[k] == 0)
			rep->pop_absent += c->count[k];
	if (rep->pop_absent == 0)
		return DEID_OK;
	if ((w = realloc(rep->warnings, (rep->nwarnings + 1) *
	    sizeof(*w))) == NULL)
		return DEID_ENOMEM;
	rep->warnings = w;
	w += rep->nwarnings++;
	memset(w, 0, sizeof(*w));
	snprintf(w->file, sizeof(w->file), "%s", rep->pop->name);
	snprintf(w->msg, sizeof(w->msg), "%llu released records are in "
	    "classes the population table lacks, so the data is not a "
	    "sample of it; the game takes SP = 1 for them (fail closed)",
	    (unsigned long long)rep->pop_absent);
	return DEID_OK;
}

/* Group the chosen node again; its losses, payout and risk as the
 * search sees them. */
static int
anon_finish(const struct deid_job *job, struct deid_anon_report *rep,
    struct deid_node_ws *ws, struct deid_hist *h)
{
	const struct deid_engine *e = rep->e;
	struct deid_quality_tables *t = NULL;
	struct deid_node_eval ev;
	struct deid_loss unused;
	int r;

	if ((r = deid_node_ws_alloc(e, ws)) != DEID_OK ||
	    (r = deid_quality_tables_alloc(e, &t)) != DEID_OK)
		goto out;
	deid_node_check(e, t, &rep->opts, rep->res.levels, ws, &ev, &unused);
	rep->suppressed_records = ev.suppressed_records;
	deid_quality_node(e, t, ws->classes, ws->supp->suppressed,
	    DEID_WANT_LOSS | DEID_WANT_ENTROPY, ws->scratch, &rep->loss);
	deid_quality_node_terms(e, t, ws->classes, ws->supp->suppressed,
	    ws->scratch, rep->qi_loss, rep->qi_entropy);
	deid_game_node(e, &rep->opts.crit.game, t->game, ws->classes,
	    ws->supp->suppressed, ws->supp->popsize, &rep->payout);
	rep->loss.payout = deid_game_loss(&rep->payout);
	if ((r = anon_pop_absent(rep, ws)) != DEID_OK)
		goto out;
	if ((r = deid_summary_hist(ws->classes, ws->supp->suppressed, h)) !=
	    DEID_OK)
		goto out;
	r = anon_side(job, h, &rep->after);
out:
	deid_quality_tables_free(t);
	return r;
}

/* ---- the released table ------------------------------------------- */

/* Write the node grouped in ws to f. */
static int
anon_write_fp(FILE *f, const char *name, const struct deid_engine *e,
    const struct deid_node_ws *ws, struct deid_error *err)
{
	int r;

	r = deid_output_write_fp(f, name, e, ws->classes, ws->supp->suppressed,
	    err);
	if (fclose(f) != 0 && r == DEID_OK)
		r = deid_error_set(err, DEID_EIO, name, 0, 0, "write failed: %s",
		    strerror(errno));
	return r;
}

/* The file behind fd, to be read again from its start. */
static int
anon_rewind(int fd, const char *name, struct deid_error *err)
{
	if (lseek(fd, 0, SEEK_SET) != 0)
		return deid_error_set(err, DEID_EIO, name, 0, 0, "cannot read "
		    "the release back: %s", strerror(errno));
	return DEID_OK;
}

/* Test hook: the last row once more at the end of the file. */
static int
anon_tamper(int fd, const char *name, struct deid_error *err)
{
	size_t len, start;
	char *bytes;
	int r;

	if ((r = anon_rewind(fd, name, err)) != DEID_OK ||
	    (r = deid_fd_read(fd, name, &bytes, &len, err)) != DEID_OK)
		return r;
	for (start = len > 1 ? len - 1 : 0; start > 0 &&
	    bytes[start - 1] != '\n'; start--)
		;
	r = pwrite(fd, bytes + start, len - start, (off_t)len) ==
	    (ssize_t)(len - start) ? DEID_OK : DEID_EIO;
	free(bytes);
	return r;
}

/* The table to the caller's descriptor (read back from there by the
 * verification), or to memory (*bytes) without one. */
static int
anon_write(const struct deid_job *job, const struct deid_engine *e,
    const struct deid_node_ws *ws, char **bytes, size_t *len,
    struct deid_error *err)
{
	const char *name = job->out_name ? job->out_name : "(output)";
	FILE *f;
	int dfd, r;

	*bytes = NULL;
	if (job->out_fd < 0) {
		if ((f = open_memstream(bytes, len)) == NULL)
			return DEID_ENOMEM;
		return anon_write_fp(f, name, e, ws, err);
	}
	if ((dfd = fcntl(job->out_fd, F_DUPFD_CLOEXEC, 0)) < 0)
		return deid_error_set(err, DEID_EIO, name, 0, 0, "%s",
		    strerror(errno));
	if ((f = fdopen(dfd, "w")) == NULL) {
		close(dfd);
		return DEID_ENOMEM;
	}
	if ((r = anon_write_fp(f, name, e, ws, err)) != DEID_OK ||
	    !job->test_tamper)
		return r;
	return anon_tamper(job->out_fd, name, err);
}

/* ---- the verdict ---------------------------------------------------- */

/* Two figures agree: equal, or within 1e-9 relative for reals. */
static int
anon_same(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	return fabs(a - b) <= 1e-9 * fmax(1, fmax(fabs(a), fabs(b)));
}

/* The search's figures against the ones re-derived from the bytes. */
static int
anon_compare(const struct deid_anon_report *rep, struct deid_error *err)
{
	const struct deid_verified *v = &rep->verified;
	const struct deid_risk_side *s = &rep->after;
	struct { const char *what; double search, file; } f[] = {
		{ "records", (double)rep->ds->nrows, (double)v->records },
		{ "suppressed records", (double)rep->suppressed_records,
		    (double)v->suppressed },
		{ "classes", (double)s->classes, (double)v->classes },
		{ "sample uniques", (double)s->sample_uniques,
		    (double)v->sample_uniques },
		{ "PU", s->has_pu ? s->pu.fraction : 0,
		    v->has_pu ? v->pu.fraction : 0 },
		{ "information loss", rep->loss.geometric, v->loss },
		{ "attacked records", (double)rep->payout.attacked,
		    (double)v->attacked },
	};
	size_t i, n = sizeof(f) / sizeof(f[0]);

	if (rep->opts.crit.game.variant == DEID_GAME_OFF)
		n--;		/* no game: attacks are not re-derived */
	for (i = 0; i < n; i++)
		if (!anon_same(f[i].search, f[i].file))
			goto differ;
	for (i = 0; i < s->nresidual && i < v->nresidual; i++)
		if (!anon_same(s->residual[i].ratio, v->residual[i].ratio))
			return deid_error_set(err, DEID_EINTERNAL, NULL, 0, 0,
			    "the released table disagrees with the search: "
			    "PU/SU for population %.6g is %.17g in the file, "
			    "%.17g in the search", s->residual[i].population,
			    v->residual[i].ratio, s->residual[i].ratio);
	return DEID_OK;
differ:
	return deid_error_set(err, DEID_EINTERNAL, NULL, 0, 0, "the released "
	    "table disagrees with the search: %s is %.17g in the file, %.17g "
	    "in the search", f[i].what, f[i].file, f[i].search);
}

/* Verify the bytes written for the chosen node (bytes[len], or the
 * file behind the job's descriptor when bytes is NULL), then compare. */
static int
anon_verify(const struct deid_job *job, struct deid_anon_report *rep,
    const char *bytes, size_t len, struct deid_error *err)
{
	const struct deid_hierarchy *h[DEID_MAX_QI];
	const char *name = job->out_name ? job->out_name : "(output)";
	struct deid_verify_opts o;
	char msg[sizeof(err->msg)];
	size_t j;
	int r;

	memset(&o, 0, sizeof(o));
	o.nqi = rep->e->nqi;
	o.crit = rep->opts.crit;	/* the floor in the engine's order */
	o.population = job->population;
	o.npopulation = job->npopulation;
	o.residual_population = job->residual_population;
	o.residual_bound = job->residual_bound;
	o.nresidual = job->nresidual;
	o.warn_suppressed = job->warn_suppressed;
	o.csv.separator = rep->ds->separator ? rep->ds->separator : ',';
	for (j = 0; j < rep->e->nqi; j++) {	/* the engine's QI order */
		h[j] = rep->e->qi[j].h;
		rep->qi_names[j] = rep->ds->cols[rep->e->qi[j].col].name;
	}
	o.qi = rep->qi_names;
	o.h = h;
	o.levels = rep->res.levels;
	o.attacker = rep->attacker;
	o.population_table = rep->popds;
	o.adversary_seed = job->adversary_seed;
	o.adversary_workers = job->sopts.threads;
	o.max_adversarial_risk = job->max_adversarial_risk;
	o.classes_hint = rep->after.classes;	/* the table's size only */
	rep->has_verified = 1;
	if (bytes != NULL)
		r = deid_verify_release(bytes, len, name, &o, &rep->verified,
		    err);
	else if ((r = anon_rewind(job->out_fd, name, err)) == DEID_OK)
		r = deid_verify_fd(job->out_fd, name, &o, &rep->verified, err);
	if (r == DEID_EINPUT) {		/* we wrote it: not the input's fault */
		snprintf(msg, sizeof(msg), "%s", err ? err->msg : "");
		return deid_error_set(err, DEID_EINTERNAL, NULL, 0, 0, "the "
		    "released table cannot be verified: %s", msg);
	}
	return r != DEID_OK ? r : anon_compare(rep, err);
}

/* "k = 5 and PU <= 1%": the criteria in words, for a reason. */
static void
anon_criteria_text(const struct deid_criteria *c, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	if (c->k > 1)
		n += (size_t)snprintf(buf + n, len - n, "k = %u", c->k);
	if (c->pu && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%sPU <= %g%%",
		    n ? " and " : "", 100 * c->pu_threshold);
	if (c->game.variant != DEID_GAME_OFF && n < len)
		snprintf(buf + n, len - n, "%sthe game's %s criterion",
		    n ? " and " : "", deid_game_variant_name(c->game.variant));
}

/* One more reason (while there is room), ending in "..." when it is
 * longer than a reason can be. */
static void __attribute__((format(printf, 2, 3)))
anon_reason(struct deid_anon_report *rep, const char *fmt, ...)
{
	size_t max = sizeof(rep->reasons[0]);
	char *r;
	va_list ap;
	int n;

	if (rep->nreasons == DEID_MAX_REASONS)
		return;
	r = rep->reasons[rep->nreasons++];
	va_start(ap, fmt);
	n = vsnprintf(r, max, fmt, ap);
	va_end(ap);
	if (n < 0)
		snprintf(r, max, "(a reason could not be formatted)");
	else if ((size_t)n >= max)
		memcpy(r + max - 4, "...", 4);
}

/* No feasible node: how close the search came, in words. */
static void
anon_no_solution(struct deid_anon_report *rep)
{
	const struct deid_criteria *c = &rep->opts.crit;
	char crit[160];

	anon_criteria_text(c, crit, sizeof(crit));
	if (rep->res.closest_found)
		anon_reason(rep, "no transformation reaches %s within the "
		    "suppression limit of %g%%; the closest suppresses %.1f%%",
		    crit, 100 * c->suppression_limit,
		    100 * rep->res.closest_suppressed);
	else
		anon_reason(rep, "no transformation reaches %s, even "
		    "suppressing every record it would need to", crit);
}

/* The verdict is the verified figures' (the search's agree with them). */
static void
anon_gate(struct deid_anon_report *rep, double warn)
{
	const struct deid_verified *v = &rep->verified;
	size_t i;

	if (!rep->res.found) {
		rep->gate_passed = 0;
		anon_no_solution(rep);
		return;
	}
	rep->gate_passed = v->passed;
	if (v->over_warn && !v->nothing_released)
		snprintf(rep->callout, sizeof(rep->callout), "%.1f%% of the "
		    "records are suppressed (more than the %g%% to call out)",
		    100 * v->suppressed_share, 100 * warn);
	for (i = 0; i < v->nreasons; i++)
		anon_reason(rep, "%s", v->reasons[i]);
}

/* Every QI hierarchy's warnings (repeated rows, ...), in QI order. */
static int
anon_warnings(struct deid_anon_report *rep)
{
	const struct deid_hierarchy *h;
	size_t j, i, n = 0;

	for (j = 0; j < rep->e->nqi; j++)
		n += deid_hierarchy_nwarnings(rep->e->qi[j].h);
	if (n == 0)
		return DEID_OK;
	if ((rep->warnings = calloc(n, sizeof(*rep->warnings))) == NULL)
		return DEID_ENOMEM;
	for (j = 0; j < rep->e->nqi; j++) {
		h = rep->e->qi[j].h;
		for (i = 0; i < deid_hierarchy_nwarnings(h); i++)
			rep->warnings[rep->nwarnings++] =
			    *deid_hierarchy_warning(h, i);
	}
	return DEID_OK;
}

/* ---- the call ------------------------------------------------------- */

/* The Safe Harbor floor, given in the job's QI order, in the engine's
 * (column) order for the search, the verification and the report; each
 * level must exist in its QI's hierarchy. */
static int
anon_floor(const struct deid_job *job, struct deid_anon_report *rep,
    struct deid_error *err)
{
	const struct deid_engine *e = rep->e;
	const char *name;
	unsigned l;
	size_t i, j;

	for (j = 0; j < e->nqi; j++) {
		name = e->ds->cols[e->qi[j].col].name;
		for (i = 0; i < job->nqi && strcmp(job->qi[i], name) != 0; i++)
			;
		l = i < job->nqi ? job->sopts.crit.min_level[i] : 0;
		if (l >= e->qi[j].h->nlevels)
			return deid_error_set(err, DEID_EINPUT, NULL, 0, 0,
			    "Safe Harbor level %u of %s is above its "
			    "hierarchy's top level %zu", l, name,
			    e->qi[j].h->nlevels - 1);
		rep->opts.crit.min_level[j] = l;
	}
	return DEID_OK;
}

/* The journalist's sampling fraction: the table's records over the
 * first population. */
static int
anon_fraction(const struct deid_job *job, struct deid_anon_report *rep,
    struct deid_error *err)
{
	char msg[256];

	if (deid_game_set_fraction(&rep->opts.crit.game, rep->ds->nrows,
	    job->npopulation > 0 ? job->population[0] : 0, msg,
	    sizeof(msg)) != DEID_OK)
		return deid_error_set(err, DEID_EINPUT, NULL, 0, 0, "%s", msg);
	return DEID_OK;
}

/* Search, write the chosen node, verify it, decide. */
static int
anon_run(const struct deid_job *job, struct deid_anon_report *rep,
    struct deid_hist *h, struct deid_error *err)
{
	struct deid_node_ws ws = { 0 };
	char *bytes = NULL;
	size_t len = 0;
	double t1, c1;
	int r;

	if ((r = deid_summary_bottom_hist(rep->e, h)) != DEID_OK ||
	    (r = anon_side(job, h, &rep->before)) != DEID_OK)
		return r;
	t1 = now_ms();
	if ((r = deid_search(rep->e, &rep->opts, &rep->res, err)) != DEID_OK)
		return r;
	rep->search_ms = now_ms() - t1;
	rep->loss.geometric = rep->loss.arithmetic = rep->loss.entropy = NAN;
	if (rep->res.found) {
		if ((r = anon_finish(job, rep, &ws, h)) != DEID_OK ||
		    (r = anon_write(job, rep->e, &ws, &bytes, &len, err)) !=
		    DEID_OK)
			goto out;
		t1 = now_ms();	/* reading the release back included */
		c1 = clock_ms(CLOCK_THREAD_CPUTIME_ID);	/* one thread */
		if ((r = anon_verify(job, rep, bytes, len, err)) != DEID_OK)
			goto out;
		rep->verify_ms = now_ms() - t1;
		rep->verify_cpu_ms = clock_ms(CLOCK_THREAD_CPUTIME_ID) - c1;
	}
	anon_gate(rep, job->warn_suppressed);
	rep->released = rep->gate_passed && job->out_fd >= 0;
out:
	free(bytes);
	deid_node_ws_free(&ws);
	return r;
}

int
deid_job_population_table(const struct deid_job *job,
    struct deid_dataset **ds, struct deid_error *err)
{
	const struct deid_job_file *f = &job->population_table;

	*ds = NULL;
	if (f->status != DEID_OK) {
		if (err != NULL)
			*err = f->err;
		return f->status;
	}
	return f->data == NULL ? DEID_OK : deid_dataset_parse(f->data,
	    f->len, f->name, &job->csv, ds, err);
}

/* The population table: the journalist's SP from its class sizes. */
static int
anon_poptable(const struct deid_job *job, struct deid_anon_report *rep,
    struct deid_error *err)
{
	struct deid_game *g = &rep->opts.crit.game;
	int r;

	if ((r = deid_job_population_table(job, &rep->popds, err)) !=
	    DEID_OK || rep->popds == NULL)
		return r;
	if (g->risk != DEID_GAME_JOURNALIST || g->variant == DEID_GAME_OFF)
		return deid_error_set(err, DEID_EINPUT, NULL, 0, 0, "a "
		    "population table is for the game's journalist "
		    "(--game VARIANT --game-risk journalist)");
	if ((r = deid_poptable_alloc(rep->popds, rep->e, &rep->pop, err)) !=
	    DEID_OK)
		return r;
	g->table = 1;
	g->pop = rep->pop;
	return DEID_OK;
}

int
deid_job_attacker(const struct deid_job_file *f, struct deid_attacker **a,
    struct deid_error *err)
{
	*a = NULL;
	if (f->status != DEID_OK) {
		if (err != NULL)
			*err = f->err;
		return f->status;
	}
	return f->data == NULL ? DEID_OK : deid_attacker_parse(f->data, f->len,
	    f->name, a, err);
}

int
deid_anonymize(const struct deid_job *job, struct deid_anon_report *rep,
    struct deid_error *err)
{
	struct deid_hist *h = NULL;
	double t0 = now_ms(), c0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
	int r;

	rep->opts = job->sopts;
	if ((r = deid_job_check(job, err)) != DEID_OK ||
	    (r = deid_job_load(job, 1, &rep->ds, &rep->e, err)) != DEID_OK ||
	    (r = deid_job_attacker(&job->attacker, &rep->attacker, err)) !=
	    DEID_OK || (rep->attacker != NULL && (r = deid_attacker_qi(
	    rep->attacker, job->qi, job->nqi, NULL, NULL, err)) !=
	    DEID_OK))
		goto out;
	if ((r = anon_warnings(rep)) != DEID_OK ||
	    (r = anon_poptable(job, rep, err)) != DEID_OK ||
	    (r = anon_floor(job, rep, err)) != DEID_OK ||
	    (r = anon_fraction(job, rep, err)) != DEID_OK)
		goto out;
	if ((h = deid_hist_alloc(64)) == NULL) {
		r = DEID_ENOMEM;
		goto out;
	}
	if ((r = anon_run(job, rep, h, err)) != DEID_OK)
		goto out;
	rep->elapsed_ms = now_ms() - t0;
	rep->cpu_ms = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
	rep->output = rep->released ? job->out_name : NULL;
out:
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
	deid_verified_free(&rep->verified);
	deid_attacker_free(rep->attacker);
	deid_poptable_free(rep->pop);
	deid_dataset_free(rep->popds);
	free(rep->warnings);
	deid_engine_free(rep->e);
	deid_dataset_free(rep->ds);
	memset(rep, 0, sizeof(*rep));
}
