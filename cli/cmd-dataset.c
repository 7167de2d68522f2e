/*
 * cli/cmd-dataset.c — `cdsgate dataset list|show`: what went through
 * the de-identification gate, its verdict and report, over the admin
 * API.  (Import, mount and unmount come with the custodian workflow.)
 */
#include "config.h"

#include <stdio.h>

#include "cli/apiclient.h"
#include "cli/cli.h"

#define USAGE_LIST	"dataset list [--json] [--socket PATH]"
#define USAGE_SHOW	"dataset show ID [--json] [--socket PATH]"

static const char *
str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s != NULL ? s : "";
}

static void
print_row(json_t *d)
{
	printf("%5lld %-10s v%-3lld %.12s  %s\n", (long long)json_integer_value(
	    json_object_get(d, "id")), str(d, "state"),
	    (long long)json_integer_value(json_object_get(d, "mount_version")),
	    str(d, "raw_sha256"), str(d, "name"));
}

static void
print_list(json_t *j)
{
	json_t *d;
	size_t i;

	printf("%5s %-10s %-4s %-12s  %s\n", "ID", "STATE", "MNT", "RAW SHA256",
	    "NAME");
	json_array_foreach(json_object_get(j, "datasets"), i, d)
		print_row(d);
}

static void
print_one(json_t *d)
{
	json_t *gate = json_object_get(json_object_get(d, "report"), "gate");
	json_t *one = json_pack("{s:[O]}", "datasets", d);

	print_list(one);
	json_decref(one);
	printf("raw sha256: %s\njob sha256: %s\n", str(d, "raw_sha256"),
	    str(d, "job_sha256"));
	if (str(d, "reason")[0] != '\0')
		printf("reason: %s\n", str(d, "reason"));
	if (gate != NULL)
		printf("gate: %s\n", json_is_true(json_object_get(gate,
		    "passed")) ? "passed" : "FAILED");
}

static int
cmd_list(int argc, char **argv)
{
	return apiclient_get_cmd(argc, argv, USAGE_LIST, "/v1/datasets",
	    print_list);
}

static int
cmd_show(int argc, char **argv)
{
	struct apiclient_opts o;
	struct apiclient_reply r;
	char err[512], path[160];
	int rc;

	if ((rc = apiclient_opts(argc, argv, USAGE_SHOW, NULL, NULL, &o)) != 0)
		return rc;
	if (o.npos != 1 || apiclient_path(path, sizeof(path),
	    "/v1/datasets/", o.pos[0], "") != 0)
		return cli_usage_error(USAGE_SHOW, "one dataset ID expected");
	rc = apiclient_call(o.socket, "GET", path, NULL, &r, err, sizeof(err));
	return apiclient_finish(rc, &r, err, o.json, print_one);
}

const struct cmd_entry cmd_dataset_list_entry = { "dataset", "list",
    USAGE_LIST, "list datasets and their gate verdicts", cmd_list };
const struct cmd_entry cmd_dataset_show_entry = { "dataset", "show",
    USAGE_SHOW, "show a dataset with its job and report", cmd_show };
