/*
 * cli/cmd-deid-assess.c — `cdsgate deid assess`: population-uniqueness
 * risk of a table as it is, for one or more population sizes, by every
 * model.  Untrusted input, parsed in the deid worker (cli/deid-worker.c);
 * prints JSON (--json) or a readable summary.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/deid-args.h"
#include "cli/deid-worker.h"
#include "deid/explain.h"
#include "deid/report.h"
#include "deid/summary.h"

static void
assess_print(FILE *f, const struct deid_hist *h, json_t *pops)
{
	static const char *m[] = { "pitman", "zayatz", "snb", "dankar" };
	char line[512];
	size_t i, k;
	json_t *p, *fr;

	fprintf(f, "records %llu, classes %llu, sample uniques %llu "
	    "(%.2f%%)\n", (unsigned long long)h->n, (unsigned long long)h->u,
	    (unsigned long long)h->c1, 100.0 * (double)h->c1 / (double)h->n);
	json_array_foreach(pops, i, p) {
		fprintf(f, "population %.6g:\n", json_real_value(
		    json_object_get(p, "population")));
		for (k = 0; k < 4; k++) {
			fr = json_object_get(json_object_get(p, m[k]),
			    "fraction");
			if (json_is_real(fr))
				fprintf(f, "  %-7s PU fraction %.6g\n", m[k],
				    json_real_value(fr));
			else
				fprintf(f, "  %-7s failed: %s\n", m[k],
				    json_string_value(json_object_get(
				    json_object_get(p, m[k]), "error")));
		}
		deid_explain_population(p, line, sizeof(line));
		fprintf(f, "  %s\n", line);
	}
}

/* The assessment as JSON, or NULL when out of memory. */
static json_t *
assess_json(const struct deid_args *a, const struct deid_hist *h)
{
	json_t *o = json_object(), *pops = json_array();
	size_t i;

	if (o == NULL || pops == NULL) {
		json_decref(o);
		json_decref(pops);
		return NULL;
	}
	json_object_set_new(o, "records", json_integer((json_int_t)h->n));
	json_object_set_new(o, "classes", json_integer((json_int_t)h->u));
	json_object_set_new(o, "sample_uniques", json_integer((json_int_t)h->c1));
	for (i = 0; i < a->npop; i++)
		json_array_append_new(pops, deid_report_population(h, a->pop[i]));
	json_object_set_new(o, "populations", pops);
	return o;
}

/* The job, in the deid worker: read the table, estimate, say it. */
static void
assess_job(struct deid_args *a, struct deid_inputs *in,
    struct deid_result *res)
{
	struct deid_dataset *ds = NULL;
	struct deid_engine *e = NULL;
	struct deid_hist *h = NULL;
	json_t *o = NULL;
	char *text = NULL, *s;
	size_t len = 0;
	FILE *f;
	int r;

	if ((r = dargs_load(a, in, &ds, &e, &res->err)) != DEID_OK) {
		dres_fail(res, r, 1);
		goto out;
	}
	if ((h = deid_hist_alloc(64)) == NULL ||
	    deid_summary_bottom_hist(e, h) != DEID_OK ||
	    (o = assess_json(a, h)) == NULL ||
	    (f = open_memstream(&text, &len)) == NULL) {
		dres_fail(res, DEID_ENOMEM, 0);
		goto out;
	}
	if (a->json) {
		s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
		fprintf(f, "%s\n", s ? s : "");
		free(s);
	} else
		assess_print(f, h, json_object_get(o, "populations"));
	fclose(f);
	if ((r = dres_take(&res->out, text, len)) != DEID_OK)
		dres_fail(res, r, 0);
	res->exit_code = 0;
out:
	json_decref(o);
	deid_hist_free(h);
	deid_engine_free(e);
	deid_dataset_free(ds);
}

static int
cmd_deid_assess(int argc, char **argv)
{
	struct deid_args a = { .usage = cmd_deid_assess_entry.usage };
	int rc;

	if ((rc = dargs_parse(&a, argc, argv)) != 0)
		return rc;
	if (a.attacker != NULL)
		return cli_usage_error(a.usage, "assess takes no --attacker: "
		    "`deid verify --attacker FILE` gives the adversarial risk "
		    "of a table as it is");
	if (a.poptable != NULL)
		return cli_usage_error(a.usage, "assess takes no "
		    "--population-table: it is the game's journalist's "
		    "(deid anonymize, deid verify)");
	return dw_run_print(&a, assess_job);
}

const struct cmd_entry cmd_deid_assess_entry = {
	"deid", "assess",
	"deid assess --data F.csv --qi A,B,C [--hierarchies DIR | "
	"--hierarchy A=FILE ...] [--separator C] --population N "
	"[--population N2 ...] [--json]",
	"population-uniqueness risk of a table as it is",
	cmd_deid_assess
};
