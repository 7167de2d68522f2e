/*
 * deid/adversary-report.c — the report's "adversarial" object: Xia
 * 2021's figures (deid/adversary.h) as JSON, for the report, the
 * explanation and the HTML page, which read nothing else.
 */
#include "config.h"

#include "deid/report.h"

/* {mean, q1, median, q3} of one risk. */
static json_t *
adv_risk(double mean, const struct deid_quartiles *q)
{
	json_t *o = json_object();

	json_object_set_new(o, "mean", deid_json_real(mean));
	json_object_set_new(o, "q1", deid_json_real(q->q1));
	json_object_set_new(o, "median", deid_json_real(q->median));
	json_object_set_new(o, "q3", deid_json_real(q->q3));
	return o;
}

/* {risk: {...}} for each of the four risks. */
static json_t *
adv_side(const double *mean, const struct deid_quartiles *q)
{
	json_t *o = json_object();
	int k;

	for (k = 0; k < DEID_ADV_NRISKS; k++)
		json_object_set_new(o, deid_adv_risk_name(k),
		    adv_risk(mean[k], &q[k]));
	return o;
}

static json_t *
adv_reduction(const struct deid_adversary *a)
{
	json_t *o = json_object(), *r;
	int k;

	for (k = 0; k < DEID_ADV_NRISKS; k++) {
		r = json_object();
		json_object_set_new(r, "q1", deid_json_real(a->reduction[k].q1));
		json_object_set_new(r, "median",
		    deid_json_real(a->reduction[k].median));
		json_object_set_new(r, "q3", deid_json_real(a->reduction[k].q3));
		json_object_set_new(r, "subjects",
		    json_integer((json_int_t)a->reduction_subjects[k]));
		json_object_set_new(o, deid_adv_risk_name(k), r);
	}
	return o;
}

json_t *
deid_report_adversary(const struct deid_adversary *a, double bound)
{
	json_t *o = json_object();

	json_object_set_new(o, "attacker", json_string(a->attacker));
	json_object_set_new(o, "seed", json_integer((json_int_t)a->seed));
	json_object_set_new(o, "trials", json_integer(a->trials));
	json_object_set_new(o, "population", deid_json_real(a->population));
	json_object_set_new(o, "coverage", deid_json_real(a->coverage));
	json_object_set_new(o, "p_m", deid_json_real(a->p_m));
	json_object_set_new(o, "p_fm", deid_json_real(a->p_fm));
	json_object_set_new(o, "p_c", deid_json_real(a->p_c));
	json_object_set_new(o, "p_cu", deid_json_real(a->p_cu));
	json_object_set_new(o, "records", json_integer((json_int_t)a->records));
	json_object_set_new(o, "subjects",
	    json_integer((json_int_t)a->subjects));
	json_object_set_new(o, "patterns", json_integer(a->patterns));
	json_object_set_new(o, "pitman_failed",
	    json_integer(a->pitman_failed));
	json_object_set_new(o, "risk", deid_json_real(a->mean[DEID_ADV_OVERALL]));
	json_object_set_new(o, "bound", bound > 0 ? deid_json_real(bound) :
	    json_null());
	json_object_set_new(o, "attacker_risks", adv_side(a->mean, a->risk));
	json_object_set_new(o, "worst_case", adv_side(a->worst_mean, a->worst));
	json_object_set_new(o, "reduction", adv_reduction(a));
	return o;
}
