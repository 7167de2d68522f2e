/*
 * cli/cmd-recipient.c — `cdsgate recipient add|list|disable|set`: the
 * researchers a custodian may give sessions to, over the admin API.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli/apiclient.h"
#include "cli/cli.h"

#define USAGE_ADD	"recipient add ID --name NAME [--max-sessions N] [--allowed-hours 'Mon-Fri 08:00-18:00'] [--tz ZONE] [--json] [--socket PATH]"
#define USAGE_SET	"recipient set ID [--allowed-hours SCHEDULE] [--tz ZONE] [--json] [--socket PATH]"
#define USAGE_SHOW	"recipient show ID [--json] [--socket PATH]"
#define USAGE_LIST	"recipient list [--json] [--socket PATH]"
#define USAGE_DISABLE	"recipient disable ID [--json] [--socket PATH]"

/* One line; the allowed hours only where a recipient has them. */
static void
print_recipient(json_t *r)
{
	const char *h = json_string_value(json_object_get(r, "allowed_hours"));
	const char *tz = json_string_value(json_object_get(r, "tz"));

	printf("%-20s %-8s %3lld  %s", json_string_value(json_object_get(r,
	    "id")), json_is_true(json_object_get(r, "disabled")) ?
	    "disabled" : "enabled", (long long)json_integer_value(
	    json_object_get(r, "max_sessions")), json_string_value(
	    json_object_get(r, "name")));
	if (h != NULL && *h != '\0')
		printf("  [%s %s]", h, tz != NULL ? tz : "UTC");
	printf("\n");
}

static void
print_list(json_t *j)
{
	json_t *r;
	size_t i;

	printf("%-20s %-8s %3s  %s  [%s]\n", "ID", "STATE", "MAX", "NAME",
	    "ALLOWED HOURS, if limited");
	json_array_foreach(json_object_get(j, "recipients"), i, r)
		print_recipient(r);
}

static int
cmd_add(int argc, char **argv)
{
	static const char *const extra[] = { "--name", "--max-sessions",
	    "--allowed-hours", "--tz", NULL };
	const char *vals[4] = { NULL, NULL, NULL, NULL };
	struct apiclient_opts o;
	struct apiclient_reply r;
	char err[512];
	json_t *body;
	int rc;

	if ((rc = apiclient_opts(argc, argv, USAGE_ADD, extra, vals, &o)) != 0)
		return rc;
	if (o.npos != 1 || vals[0] == NULL)
		return cli_usage_error(USAGE_ADD, "an ID and --name are needed");
	body = json_pack("{s:s, s:s}", "id", o.pos[0], "name", vals[0]);
	if (vals[1] != NULL) {
		char *end;
		long n = strtol(vals[1], &end, 10);

		if (*end != '\0' || end == vals[1])
			return json_decref(body), cli_usage_error(USAGE_ADD,
			    "--max-sessions: not a number: %s", vals[1]);
		json_object_set_new(body, "max_sessions", json_integer(n));
	}
	if (vals[2] != NULL)
		json_object_set_new(body, "allowed_hours", json_string(vals[2]));
	if (vals[3] != NULL)
		json_object_set_new(body, "tz", json_string(vals[3]));
	rc = apiclient_call(o.socket, "POST", "/v1/recipients", body, &r, err,
	    sizeof(err));
	json_decref(body);
	return apiclient_finish(rc, &r, err, o.json, print_recipient);
}

static int
cmd_list(int argc, char **argv)
{
	return apiclient_get_cmd(argc, argv, USAGE_LIST, "/v1/recipients",
	    print_list);
}

static int
cmd_disable(int argc, char **argv)
{
	return apiclient_id_cmd(argc, argv, USAGE_DISABLE, "POST",
	    "/v1/recipients/", "/disable", print_recipient);
}

/* The API checks the schedule and zone (and names a bad character). */
static int
cmd_set(int argc, char **argv)
{
	static const char *const extra[] = { "--allowed-hours", "--tz", NULL };
	const char *vals[2] = { NULL, NULL };
	struct apiclient_opts o;
	struct apiclient_reply r;
	char err[512], path[160];
	json_t *body;
	int rc;

	if ((rc = apiclient_opts(argc, argv, USAGE_SET, extra, vals, &o)) != 0)
		return rc;
	if (o.npos != 1 || (vals[0] == NULL && vals[1] == NULL))
		return cli_usage_error(USAGE_SET, "an ID and --allowed-hours "
		    "('' for any time), --tz or both are needed");
	if (apiclient_path(path, sizeof(path), "/v1/recipients/", o.pos[0],
	    "/hours") != 0)
		return cli_usage_error(USAGE_SET, "ID too long");
	/* only what was given: the API keeps the rest as it is */
	body = json_object();
	if (vals[0] != NULL)
		json_object_set_new(body, "allowed_hours", json_string(vals[0]));
	if (vals[1] != NULL)
		json_object_set_new(body, "tz", json_string(vals[1]));
	rc = apiclient_call(o.socket, "POST", path, body, &r, err, sizeof(err));
	json_decref(body);
	return apiclient_finish(rc, &r, err, o.json, print_recipient);
}

static int
cmd_show(int argc, char **argv)
{
	return apiclient_id_cmd(argc, argv, USAGE_SHOW, "GET",
	    "/v1/recipients/", "", print_recipient);
}

const struct cmd_entry cmd_recipient_set_entry = { "recipient", "set",
    USAGE_SET, "change a recipient's allowed hours and/or time zone",
    cmd_set };
const struct cmd_entry cmd_recipient_show_entry = { "recipient", "show",
    USAGE_SHOW, "show one recipient", cmd_show };
const struct cmd_entry cmd_recipient_add_entry = { "recipient", "add",
    USAGE_ADD, "add a researcher sessions can be made for", cmd_add };
const struct cmd_entry cmd_recipient_list_entry = { "recipient", "list",
    USAGE_LIST, "list recipients", cmd_list };
const struct cmd_entry cmd_recipient_disable_entry = { "recipient",
    "disable", USAGE_DISABLE, "disable a recipient (no new sessions)",
    cmd_disable };
