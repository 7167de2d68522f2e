/*
 * cli/cmd-deid-assess.c — `cdsgate deid assess`: population-uniqueness
 * risk of a table as it is, for one or more population sizes, by every
 * model.  Untrusted input; prints JSON (--json) or a readable summary.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/deid-args.h"
#include "deid/report.h"

static void
assess_print(const struct deid_hist *h, json_t *pops)
{
	size_t i;
	json_t *p;

	printf("records %llu, classes %llu, sample uniques %llu (%.2f%%)\n",
	    (unsigned long long)h->n, (unsigned long long)h->u,
	    (unsigned long long)h->c1, 100.0 * (double)h->c1 / (double)h->n);
	json_array_foreach(pops, i, p) {
		printf("population %.6g:\n", json_real_value(
		    json_object_get(p, "population")));
		const char *m[] = { "pitman", "zayatz", "snb", "dankar" };
		for (size_t k = 0; k < 4; k++) {
			json_t *f = json_object_get(json_object_get(p, m[k]),
			    "fraction");
			if (json_is_real(f))
				printf("  %-7s PU fraction %.6g\n", m[k],
				    json_real_value(f));
			else
				printf("  %-7s failed: %s\n", m[k],
				    json_string_value(json_object_get(
				    json_object_get(p, m[k]), "error")));
		}
	}
}

static int
cmd_deid_assess(int argc, char **argv)
{
	struct deid_args a = { .usage = cmd_deid_assess_entry.usage };
	struct deid_error err = { .msg = "" };
	struct deid_dataset *ds = NULL;
	struct deid_engine *e = NULL;
	struct deid_hist *h = NULL;
	json_t *o = NULL, *pops;
	size_t i;
	int r, rc;

	if ((rc = dargs_parse(&a, argc, argv)) != 0)
		return rc;
	deid_risk_init();
	if ((r = dargs_load(&a, 0, &ds, &e, &err)) != DEID_OK) {
		rc = dargs_error(r, &err, 1);
		goto out;
	}
	if ((h = deid_hist_alloc(64)) == NULL || dargs_bottom_hist(e, h) != DEID_OK) {
		rc = dargs_error(DEID_ENOMEM, &err, 0);
		goto out;
	}
	o = json_object();
	json_object_set_new(o, "records", json_integer((json_int_t)h->n));
	json_object_set_new(o, "classes", json_integer((json_int_t)h->u));
	json_object_set_new(o, "sample_uniques", json_integer((json_int_t)h->c1));
	pops = json_array();
	for (i = 0; i < a.npop; i++)
		json_array_append_new(pops, deid_report_population(h, a.pop[i]));
	json_object_set_new(o, "populations", pops);
	if (a.json) {
		char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
		puts(s);
		free(s);
	} else
		assess_print(h, pops);
	rc = 0;
out:
	json_decref(o);
	deid_hist_free(h);
	deid_engine_free(e);
	deid_dataset_free(ds);
	return rc;
}

const struct cmd_entry cmd_deid_assess_entry = {
	"deid", "assess",
	"deid assess --data F.csv --qi A,B,C [--hierarchies DIR | "
	"--hierarchy A=FILE ...] [--separator C] --population N "
	"[--population N2 ...] [--json]",
	"population-uniqueness risk of a table as it is",
	cmd_deid_assess
};
