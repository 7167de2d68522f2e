/*
 * deid/report.c — build the assessment and anonymization reports.
 * Trusted data; jansson does the escaping and number formatting.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "deid/dataset.h"
#include "deid/explain.h"
#include "deid/report.h"

json_t *
deid_json_real(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

json_t *
deid_report_estimate(const struct deid_estimate *est)
{
	json_t *o = json_object();

	if (est->status != DEID_OK) {
		json_object_set_new(o, "fraction", json_null());
		json_object_set_new(o, "error", json_string(est->error[0] ?
		    est->error : deid_strerror(est->status)));
		return o;
	}
	json_object_set_new(o, "fraction", deid_json_real(est->fraction));
	json_object_set_new(o, "uniques", deid_json_real(est->pu));
	json_object_set_new(o, "path", json_string(deid_path_name(est->path)));
	return o;
}

/* Pitman adds its parameters to the common fields. */
static json_t *
report_pitman(const struct deid_hist *h, double N)
{
	struct deid_estimate est;
	json_t *o;

	deid_pitman_estimate(h, N, &est);
	o = deid_report_estimate(&est);
	if (est.status == DEID_OK) {
		json_object_set_new(o, "theta", deid_json_real(est.theta));
		json_object_set_new(o, "alpha", deid_json_real(est.alpha));
	}
	return o;
}

/* The Dankar rule also names the model it chose. */
static json_t *
report_dankar(const struct deid_hist *h, double N)
{
	struct deid_estimate est;
	json_t *o;

	deid_dankar_estimate(h, N, &est);
	o = deid_report_estimate(&est);
	json_object_set_new(o, "model", json_string(
	    deid_model_name(est.model)));
	if (est.status == DEID_OK && est.note[0] != '\0')
		json_object_set_new(o, "note", json_string(est.note));
	return o;
}

json_t *
deid_report_population(const struct deid_hist *h, double N)
{
	struct deid_estimate est;
	json_t *o = json_object();

	json_object_set_new(o, "population", json_real(N));
	json_object_set_new(o, "sampling_fraction",
	    json_real((double)h->n / N));
	json_object_set_new(o, "pitman", report_pitman(h, N));
	deid_zayatz_estimate(h, N, &est);
	json_object_set_new(o, "zayatz", deid_report_estimate(&est));
	deid_snb_estimate(h, N, &est);
	json_object_set_new(o, "snb", deid_report_estimate(&est));
	json_object_set_new(o, "dankar", report_dankar(h, N));
	return o;
}

static json_t *
report_residual(const struct deid_residual *rs)
{
	json_t *o = json_object();

	json_object_set_new(o, "population", json_real(rs->population));
	json_object_set_new(o, "pu", deid_json_real(rs->pu_fraction));
	json_object_set_new(o, "su", json_real(rs->su_fraction));
	json_object_set_new(o, "ratio", deid_json_real(rs->ratio));
	json_object_set_new(o, "bound", json_real(rs->bound));
	json_object_set_new(o, "passed", json_boolean(rs->passed));
	json_object_set_new(o, "model", json_string(
	    deid_model_name(rs->est.model)));
	if (rs->est.status != DEID_OK)
		json_object_set_new(o, "error", json_string(rs->est.error));
	return o;
}

/* [{min, max, classes, records, share}] by class size (max null: no
 * upper end); share is of the side's records. */
static json_t *
report_bins(const struct deid_risk_side *s)
{
	json_t *a = json_array(), *b;
	size_t i;

	for (i = 0; i < DEID_SIZE_BINS; i++) {
		b = json_object();
		json_object_set_new(b, "min",
		    json_integer((json_int_t)deid_size_bin_min[i]));
		json_object_set_new(b, "max", i + 1 < DEID_SIZE_BINS ?
		    json_integer((json_int_t)deid_size_bin_min[i + 1] - 1) :
		    json_null());
		json_object_set_new(b, "classes",
		    json_integer((json_int_t)s->bin_classes[i]));
		json_object_set_new(b, "records",
		    json_integer((json_int_t)s->bin_records[i]));
		json_object_set_new(b, "share", json_real(s->records ?
		    (double)s->bin_records[i] / (double)s->records : 0));
		json_array_append_new(a, b);
	}
	return a;
}

static json_t *
report_side(const struct deid_risk_side *s)
{
	json_t *o = json_object(), *a = json_array(), *atk = json_object();
	size_t i;

	json_object_set_new(o, "records", json_integer((json_int_t)s->records));
	json_object_set_new(o, "classes", json_integer((json_int_t)s->classes));
	json_object_set_new(o, "sample_uniques",
	    json_integer((json_int_t)s->sample_uniques));
	json_object_set_new(o, "population", s->has_pu ?
	    json_real(s->population) : json_null());
	if (s->has_pu) {
		json_object_set_new(o, "pu_fraction", s->pu.status == DEID_OK ?
		    deid_json_real(s->pu.fraction) : json_null());
		json_object_set_new(o, "pu_model", json_string(
		    deid_model_name(s->pu.model)));
		if (s->pu.status != DEID_OK)
			json_object_set_new(o, "pu_error",
			    json_string(s->pu.error));
	} else {
		json_object_set_new(o, "pu_fraction", json_null());
		json_object_set_new(o, "pu_model", json_null());
	}
	for (i = 0; i < s->nresidual; i++)
		json_array_append_new(a, report_residual(&s->residual[i]));
	json_object_set_new(o, "residual", a);
	json_object_set_new(atk, "prosecutor", json_real(s->attack.prosecutor));
	json_object_set_new(atk, "prosecutor_max",
	    json_real(s->attack.prosecutor_max));
	json_object_set_new(atk, "journalist",
	    deid_json_real(s->attack.journalist));
	json_object_set_new(atk, "marketer", json_real(s->attack.marketer));
	json_object_set_new(o, "attack", atk);
	json_object_set_new(o, "class_sizes", report_bins(s));
	return o;
}

/* The options the search ran with, so a report is self-describing. */
static json_t *
report_criteria(const struct deid_search_opts *opts)
{
	const struct deid_criteria *c = &opts->crit;
	json_t *o = json_object();

	json_object_set_new(o, "k", c->k > 1 ? json_integer(c->k) :
	    json_null());
	if (c->pu) {
		json_object_set_new(o, "pu_threshold",
		    json_real(c->pu_threshold));
		json_object_set_new(o, "population", json_real(c->population));
		json_object_set_new(o, "pu_model",
		    json_string(deid_model_name(c->pu_model)));
	}
	json_object_set_new(o, "suppression_limit",
	    json_real(c->suppression_limit));
	json_object_set_new(o, "quality_model",
	    json_string(deid_quality_name(opts->quality)));
	json_object_set_new(o, "game", c->game.variant == DEID_GAME_OFF ?
	    json_null() : json_string(deid_game_variant_name(c->game.variant)));
	return o;
}

/* Is the game-theoretic model part of this run (criterion or quality)? */
static int
report_has_game(const struct deid_search_opts *opts)
{
	return opts->crit.game.variant != DEID_GAME_OFF ||
	    opts->quality == DEID_QUALITY_PAYOUT;
}

/* The Safe Harbor floor {qi: level}, or null when none is set. */
static json_t *
report_floor(const struct deid_anon_report *r)
{
	const struct deid_engine *e = r->e;
	json_t *o;
	size_t j;

	if (e == NULL || !deid_criteria_has_floor(&r->opts.crit, e->nqi))
		return json_null();
	o = json_object();
	for (j = 0; j < e->nqi; j++)
		json_object_set_new(o, e->ds->cols[e->qi[j].col].name,
		    json_integer(r->opts.crit.min_level[j]));
	return o;
}

/* The journalist's population table: its file, rows, and the released
 * records of classes it lacks (SP = 1 for them); null without one. */
static json_t *
report_poptable(const struct deid_anon_report *r)
{
	json_t *o;

	if (r->pop == NULL)
		return json_null();
	o = json_object();
	json_object_set_new(o, "file", json_string(r->pop->name));
	json_object_set_new(o, "rows", json_integer((json_int_t)r->pop->rows));
	json_object_set_new(o, "absent_records",
	    json_integer((json_int_t)r->pop_absent));
	return o;
}

/* The game's parameters and the chosen node's payout figures. */
static json_t *
report_game(const struct deid_anon_report *r)
{
	const struct deid_game *g = &r->opts.crit.game;
	const struct deid_payout *p = &r->payout;
	json_t *o = json_object();

	json_object_set_new(o, "variant",
	    json_string(deid_game_variant_name(g->variant)));
	json_object_set_new(o, "risk", json_string(deid_game_risk_name(g->risk)));
	json_object_set_new(o, "sampling_fraction",
	    json_real(deid_game_fraction(g)));
	json_object_set_new(o, "sp_source", json_string(
	    g->risk != DEID_GAME_JOURNALIST ? "class size" :
	    deid_game_uses_table(g) ? "population table" : "estimated"));
	json_object_set_new(o, "population_table", report_poptable(r));
	json_object_set_new(o, "cost", json_real(g->cost));
	json_object_set_new(o, "gain", json_real(g->gain));
	json_object_set_new(o, "loss", json_real(g->loss));
	json_object_set_new(o, "benefit", json_real(g->benefit));
	json_object_set_new(o, "payout", json_real(p->payout));
	json_object_set_new(o, "payout_max", json_real(p->max));
	json_object_set_new(o, "payout_share",
	    deid_json_real(1 - deid_game_loss(p)));
	json_object_set_new(o, "attacked_records",
	    json_integer((json_int_t)p->attacked));
	json_object_set_new(o, "unprofitable_records",
	    json_integer((json_int_t)p->unprofitable));
	json_object_set_new(o, "expected_loss", json_real(p->expected_loss));
	return o;
}

static json_t *
report_transformation(const struct deid_anon_report *r)
{
	const struct deid_engine *e = r->e;
	json_t *o = json_object();
	size_t j;

	for (j = 0; j < e->nqi; j++)
		json_object_set_new(o, e->ds->cols[e->qi[j].col].name,
		    json_integer(r->res.levels[j]));
	return o;
}

/* The leaf to show as an example: from the middle of the hierarchy on,
 * the first whose label at the chosen level differs from its own. */
static size_t
report_example_leaf(const struct deid_hierarchy *h, unsigned level)
{
	size_t i, leaf;

	for (i = 0; i < h->nleaves; i++) {
		leaf = (h->nleaves / 2 + i) % h->nleaves;
		if (strcmp(h->values[level][h->map[level][leaf]],
		    h->values[0][h->map[0][leaf]]) != 0)
			return leaf;
	}
	return h->nleaves / 2;
}

/* One QI's hierarchy in the report's words: at each level how many
 * values it has and what one leaf (report_example_leaf) reads as there;
 * the level chosen and the losses of the QI. */
static json_t *
report_generalization_qi(const struct deid_anon_report *r, size_t j)
{
	const struct deid_qi *q = &r->e->qi[j];
	const struct deid_hierarchy *h = q->h;
	json_t *o = json_object(), *lv = json_array();
	size_t l, ex = report_example_leaf(h, r->res.found ?
	    r->res.levels[j] : 0);

	json_object_set_new(o, "attribute",
	    json_string(r->ds->cols[q->col].name));
	json_object_set_new(o, "level", r->res.found ?
	    json_integer(r->res.levels[j]) : json_null());
	json_object_set_new(o, "distinct_values",
	    json_integer((json_int_t)r->ds->cols[q->col].ndict));
	for (l = 0; h->nleaves > 0 && l < h->nlevels; l++)
		json_array_append_new(lv, json_pack("{s:I, s:s}", "values",
		    (json_int_t)h->ndomain[l], "example",
		    h->values[l][h->map[l][ex]]));
	json_object_set_new(o, "levels", lv);
	json_object_set_new(o, "loss", r->res.found ?
	    deid_json_real(r->qi_loss[j]) : json_null());
	json_object_set_new(o, "nu_entropy", r->res.found ?
	    deid_json_real(r->qi_entropy[j]) : json_null());
	return o;
}

static json_t *
report_generalization(const struct deid_anon_report *r)
{
	json_t *a = json_array();
	size_t j;

	for (j = 0; j < r->e->nqi; j++)
		json_array_append_new(a, report_generalization_qi(r, j));
	return a;
}

/* The information loss under each model (0: nothing lost). */
static json_t *
report_loss(double geometric, double arithmetic, double entropy)
{
	json_t *o = json_object();

	json_object_set_new(o, "loss", deid_json_real(geometric));
	json_object_set_new(o, "loss_arithmetic", deid_json_real(arithmetic));
	if (!isnan(entropy))
		json_object_set_new(o, "nu_entropy", deid_json_real(entropy));
	return o;
}

static json_t *
report_strings(const char (*s)[256], size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_string(s[i]));
	return a;
}

/* The counts and risk of a verified release into o. */
static void
report_verified_risk(json_t *o, const struct deid_verified *v)
{
	json_t *a = json_array();
	size_t i;

	json_object_set_new(o, "records", json_integer((json_int_t)v->records));
	json_object_set_new(o, "suppressed_records",
	    json_integer((json_int_t)v->suppressed));
	json_object_set_new(o, "released_records",
	    json_integer((json_int_t)(v->records - v->suppressed)));
	json_object_set_new(o, "suppressed_share",
	    json_real(v->suppressed_share));
	json_object_set_new(o, "classes", json_integer((json_int_t)v->classes));
	json_object_set_new(o, "sample_uniques",
	    json_integer((json_int_t)v->sample_uniques));
	json_object_set_new(o, "smallest_class",
	    json_integer((json_int_t)v->smallest_class));
	json_object_set_new(o, "pu_fraction", v->has_pu && v->pu.status ==
	    DEID_OK ? deid_json_real(v->pu.fraction) : json_null());
	json_object_set_new(o, "pu_model", v->has_pu ?
	    json_string(deid_model_name(v->pu.model)) : json_null());
	if (v->has_pu && v->pu.status != DEID_OK)
		json_object_set_new(o, "pu_error", json_string(v->pu.error));
	for (i = 0; i < v->nresidual; i++)
		json_array_append_new(a, report_residual(&v->residual[i]));
	json_object_set_new(o, "residual", a);
}

/* The levels found and the information loss (null without the
 * hierarchies), the game's counts when it is a criterion. */
static void
report_verified_quality(json_t *o, const struct deid_verified *v,
    const char *const *qi)
{
	json_t *lv = json_object();
	size_t i;

	for (i = 0; v->has_quality && qi != NULL && i < DEID_MAX_QI &&
	    qi[i] != NULL; i++)
		json_object_set_new(lv, qi[i], json_integer(v->levels[i]));
	json_object_set_new(o, "levels", v->has_quality ? json_incref(lv) :
	    json_null());
	json_decref(lv);
	json_object_set_new(o, "information_loss", v->has_quality ?
	    report_loss(v->loss, v->loss_arithmetic, NAN) : json_null());
	if (v->has_game) {
		json_object_set_new(o, "attacked_records",
		    json_integer((json_int_t)v->attacked));
		json_object_set_new(o, "unreleasable_records",
		    json_integer((json_int_t)v->unreleasable));
	}
	if (v->has_population_table) {
		json_object_set_new(o, "population_table_rows",
		    json_integer((json_int_t)v->population_rows));
		json_object_set_new(o, "population_absent_records",
		    json_integer((json_int_t)v->population_absent));
	}
}

json_t *
deid_report_verified(const struct deid_verified *v, const char *const *qi)
{
	json_t *o = json_object();

	report_verified_risk(o, v);
	report_verified_quality(o, v, qi);
	json_object_set_new(o, "adversarial", v->has_adversary ?
	    deid_report_adversary(&v->adversary, v->max_adversarial_risk) :
	    json_null());
	json_object_set_new(o, "passed", json_boolean(v->passed));
	json_object_set_new(o, "reasons", report_strings(v->reasons,
	    v->nreasons));
	return o;
}

json_t *
deid_report_warnings(const struct deid_warning *w, size_t n)
{
	json_t *a = json_array();
	char buf[1400];
	size_t i;

	for (i = 0; i < n; i++) {
		deid_warning_format(&w[i], buf, sizeof(buf));
		json_array_append_new(a, json_string(buf));
	}
	return a;
}

/* The verdict: passed, failed, or nothing released; its call-outs. */
static json_t *
report_gate(const struct deid_anon_report *r)
{
	json_t *gate = json_object(), *w = json_array();

	json_object_set_new(gate, "passed", json_boolean(r->gate_passed));
	json_object_set_new(gate, "verdict", json_string(deid_verdict(r)));
	json_object_set_new(gate, "reasons", report_strings(r->reasons,
	    r->nreasons));
	if (r->callout[0] != '\0')
		json_array_append_new(w, json_string(r->callout));
	json_object_set_new(gate, "warnings", w);
	return gate;
}

const char *
deid_verdict(const struct deid_anon_report *r)
{
	if (r->has_verified && r->verified.nothing_released)
		return "nothing released";
	return r->gate_passed ? "passed" : "failed";
}

json_t *
deid_report_anonymize(const struct deid_anon_report *r)
{
	json_t *o = json_object(), *q = json_object(), *risk = json_object();
	json_t *lat = json_object();

	json_object_set_new(o, "transformation", r->res.found ?
	    report_transformation(r) : json_null());
	json_object_set_new(o, "records",
	    json_integer((json_int_t)r->e->ds->nrows));
	json_object_set_new(o, "suppressed_records",
	    json_integer((json_int_t)r->suppressed_records));
	json_object_set_new(q, "loss", deid_json_real(1 - r->loss.geometric));
	json_object_set_new(q, "loss_arithmetic",
	    deid_json_real(1 - r->loss.arithmetic));
	json_object_set_new(q, "nu_entropy", deid_json_real(1 - r->loss.entropy));
	json_object_set_new(o, "quality", q);
	json_object_set_new(o, "information_loss", report_loss(
	    r->loss.geometric, r->loss.arithmetic, r->loss.entropy));
	json_object_set_new(risk, "before", report_side(&r->before));
	json_object_set_new(risk, "after", report_side(&r->after));
	json_object_set_new(o, "risk", risk);
	json_object_set_new(o, "warnings", deid_report_warnings(r->warnings,
	    r->nwarnings));
	json_object_set_new(o, "gate", report_gate(r));
	json_object_set_new(o, "verified", r->has_verified ?
	    deid_report_verified(&r->verified, r->qi_names) : json_null());
	json_object_set_new(o, "criteria", report_criteria(&r->opts));
	json_object_set_new(o, "safe_harbor", report_floor(r));
	json_object_set_new(o, "game", report_has_game(&r->opts) && r->res.found ?
	    report_game(r) : json_null());
	json_object_set_new(lat, "nodes", json_integer((json_int_t)r->res.nodes));
	json_object_set_new(lat, "evaluated",
	    json_integer((json_int_t)r->res.evaluated));
	json_object_set_new(lat, "pruned",
	    json_integer((json_int_t)(r->res.nodes - r->res.evaluated)));
	json_object_set_new(lat, "rollups",
	    json_integer((json_int_t)r->res.rollups));
	json_object_set_new(lat, "model_calls",
	    json_integer((json_int_t)r->res.model_calls));
	json_object_set_new(o, "lattice", lat);
	json_object_set_new(o, "elapsed_ms", json_real(r->elapsed_ms));
	json_object_set_new(o, "search_ms", json_real(r->search_ms));
	json_object_set_new(o, "verify_ms", json_real(r->verify_ms));
	json_object_set_new(o, "cpu_ms", json_real(r->cpu_ms));
	json_object_set_new(o, "verify_cpu_ms", json_real(r->verify_cpu_ms));
	json_object_set_new(o, "output", r->output ? json_string(r->output) :
	    json_null());
	json_object_set_new(o, "generalization", report_generalization(r));
	json_object_set_new(o, "explanation", deid_explain(o));
	json_object_set_new(o, "summary", deid_explain_summary(o));
	return o;
}
