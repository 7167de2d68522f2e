/*
 * api/datasets.c — /v1/datasets: what went through the
 * de-identification gate, its verdict and report, and what is mounted.
 *
 * Import, mount and unmount (the gate run in the sandboxed deid worker)
 * are not served yet: the table in api/route.c has no such routes, so a
 * client gets 404/405, never a half-done import.
 *
 * Trust: unprivileged; ids from the path are checked by api/route.c.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "api/api.h"

static json_t *
dataset_json(const struct store_dataset *d, int with_report)
{
	json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:s}",
	    "id", (json_int_t)d->id, "name", d->name, "raw_sha256",
	    d->raw_sha256, "job_sha256", d->job_sha256, "state",
	    store_dataset_state_name(d->state), "created",
	    (json_int_t)d->created, "updated", (json_int_t)d->updated,
	    "mount_version", (json_int_t)d->mount_version, "reason",
	    d->reason);

	if (o != NULL && with_report) {
		json_object_set_new(o, "job", json_loads(d->job_spec, 0, NULL));
		json_object_set_new(o, "report", d->report != NULL ?
		    json_loads(d->report, 0, NULL) : json_null());
	}
	return o;
}

static int
list_one(const struct store_dataset *d, void *arg)
{
	return json_array_append_new(arg, dataset_json(d, 0));
}

int
datasets_list(struct api_req *r)
{
	json_t *a = json_array();
	int st;

	if ((st = store_dataset_list(r->store, list_one, a)) != STORE_OK) {
		json_decref(a);
		return api_store_error(r, st, "listing datasets");
	}
	return api_reply(r, 200, json_pack("{s:o}", "datasets", a));
}

int
datasets_show(struct api_req *r)
{
	struct store_dataset d = { 0 };
	char *end;
	long long id;
	int st;

	errno = 0;
	id = strtoll(r->params[0], &end, 10);
	if (errno != 0 || *end != '\0' || id <= 0)
		return api_error(r, 404, "not_found", "no dataset '%s' "
		    "(dataset ids are positive integers)", r->params[0]);
	if ((st = store_dataset_get(r->store, id, &d)) != STORE_OK)
		return api_store_error(r, st, "dataset");
	api_reply(r, 200, dataset_json(&d, 1));
	store_dataset_clear(&d);
	return 0;
}
