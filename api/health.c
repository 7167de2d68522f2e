/*
 * api/health.c — /v1/health (is the store usable?) and /v1/metrics
 * (Prometheus text format: replies by class, objects by state).
 *
 * Trust: unprivileged; no request input is used.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "api/api.h"

int
health_show(struct api_req *r)
{
	int v = store_schema_version(r->store);

	if (v != STORE_SCHEMA_VERSION)
		return api_error(r, 503, "store", "store unusable (schema "
		    "version %d): %s", v, store_errmsg(r->store));
	return api_reply(r, 200, json_pack("{s:s, s:i}", "status", "ok",
	    "schema_version", v));
}

struct tally {
	unsigned long	datasets[STORE_DATASET_MOUNTED + 1];
	unsigned long	recipients, disabled;
};

static int
tally_dataset(const struct store_dataset *d, void *arg)
{
	struct tally *t = arg;

	if ((unsigned)d->state <= STORE_DATASET_MOUNTED)
		t->datasets[d->state]++;
	return 0;
}

static int
tally_recipient(const struct store_recipient *rc, void *arg)
{
	struct tally *t = arg;

	t->recipients++;
	t->disabled += rc->disabled != 0;
	return 0;
}

int
metrics_show(struct api_req *r)
{
	struct tally t = { { 0 }, 0, 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	unsigned i;

	if (store_dataset_list(r->store, tally_dataset, &t) != STORE_OK ||
	    store_recipient_list(r->store, tally_recipient, &t) != STORE_OK)
		return api_error(r, 503, "store", "store unusable: %s",
		    store_errmsg(r->store));
	if ((f = open_memstream(&text, &len)) == NULL)
		return api_error(r, 500, "internal", "out of memory");
	fprintf(f, "# HELP cdsgate_api_replies_total API replies by status "
	    "class.\n# TYPE cdsgate_api_replies_total counter\n");
	for (i = 2; i <= 5; i++)
		fprintf(f, "cdsgate_api_replies_total{class=\"%uxx\"} %lu\n",
		    i, api_replies(i));
	fprintf(f, "# HELP cdsgate_datasets Datasets by state.\n"
	    "# TYPE cdsgate_datasets gauge\n");
	for (i = 0; i <= STORE_DATASET_MOUNTED; i++)
		fprintf(f, "cdsgate_datasets{state=\"%s\"} %lu\n",
		    store_dataset_state_name(i), t.datasets[i]);
	fprintf(f, "# HELP cdsgate_recipients Recipients (disabled: of "
	    "them disabled).\n# TYPE cdsgate_recipients gauge\n"
	    "cdsgate_recipients %lu\ncdsgate_recipients_disabled %lu\n",
	    t.recipients, t.disabled);
	if (fclose(f) != 0) {
		free(text);
		return api_error(r, 500, "internal", "out of memory");
	}
	return api_reply_text(r, 200, text, "text/plain; version=0.0.4");
}
