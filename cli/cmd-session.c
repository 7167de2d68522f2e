/*
 * cli/cmd-session.c — `cdsgate session create|list|show|extend|revoke`: a
 * researcher's session, provisioned over the admin API (the root parent
 * of `cdsgated serve` runs it).
 *
 * Trust: the invoking custodian's arguments; the reply is the API's.
 * The one-time secret is printed once, to stdout, and nowhere else.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli/apiclient.h"
#include "cli/cli.h"

#define USAGE_CREATE	"session create --recipient R --dataset ID " \
			"[--expires-in S] [--memory-limit-mb MIB] [--json] " \
			"[--socket PATH]"
#define USAGE_LIST	"session list [--json] [--socket PATH]"
#define USAGE_SHOW	"session show ID [--json] [--socket PATH]"
#define USAGE_EXTEND	"session extend ID --expires-in S [--json] [--socket PATH]"
#define USAGE_REVOKE	"session revoke ID [--json] [--socket PATH]"

static const char *
str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "-";
}

static void
print_session(json_t *s)
{
	printf("%-20s %-12s %6lld %-8s %12lld  %s\n", str(s, "id"),
	    str(s, "recipient"), (long long)json_integer_value(
	    json_object_get(s, "dataset")), str(s, "state"),
	    (long long)json_integer_value(json_object_get(s, "expires")),
	    str(s, "reason"));
}

static void
print_list(json_t *j)
{
	json_t *s;
	size_t i;

	printf("%-20s %-12s %6s %-8s %12s  %s\n", "ID", "RECIPIENT", "DATA",
	    "STATE", "EXPIRES", "REASON");
	json_array_foreach(json_object_get(j, "sessions"), i, s)
		print_session(s);
}

/* One session under the list's header. */
static void
print_list_one(json_t *s)
{
	printf("%-20s %-12s %6s %-8s %12s  %s\n", "ID", "RECIPIENT", "DATA",
	    "STATE", "EXPIRES", "REASON");
	print_session(s);
}

/* What the custodian hands the researcher: shown this once. */
static void
print_created(json_t *s)
{
	printf("session %s for %s (dataset %lld), expires at %lld\n",
	    str(s, "id"), str(s, "recipient"), (long long)json_integer_value(
	    json_object_get(s, "dataset")), (long long)json_integer_value(
	    json_object_get(s, "expires")));
	printf("vnc     %s\nnovnc   %s\n", str(s, "vnc"), str(s, "novnc"));
	if (json_is_string(json_object_get(s, "user")))
		printf("user    %s   (TLS: the user name for VNC and noVNC)\n",
		    str(s, "user"));
	printf("secret  %s   (shown once; it is not stored)\n",
	    str(s, "secret"));
}

/* "123" -> 123 into body[key]; -1 (usage error) when not a number. */
static int
set_number(json_t *body, const char *key, const char *flag, const char *v,
    const char *usage)
{
	char *end;
	long long n;

	if (v == NULL)
		return 0;
	n = strtoll(v, &end, 10);
	if (*end != '\0' || end == v || n <= 0)
		return cli_usage_error(usage, "%s: not a positive "
		    "number: %s", flag, v), -1;
	json_object_set_new(body, key, json_integer(n));
	return 0;
}

static int
cmd_create(int argc, char **argv)
{
	static const char *const extra[] = { "--recipient", "--dataset",
	    "--expires-in", "--memory-limit-mb", NULL };
	const char *vals[4] = { NULL, NULL, NULL, NULL };
	struct apiclient_opts o;
	struct apiclient_reply r;
	char err[512];
	json_t *body;
	int rc;

	if ((rc = apiclient_opts(argc, argv, USAGE_CREATE, extra, vals, &o))
	    != 0)
		return rc;
	if (o.npos != 0 || vals[0] == NULL || vals[1] == NULL)
		return cli_usage_error(USAGE_CREATE, "--recipient and "
		    "--dataset are needed");
	body = json_pack("{s:s}", "recipient", vals[0]);
	if (set_number(body, "dataset", "--dataset", vals[1],
	    USAGE_CREATE) != 0 || set_number(body, "expires_in",
	    "--expires-in", vals[2], USAGE_CREATE) != 0 ||
	    set_number(body, "memory_limit_mb", "--memory-limit-mb",
	    vals[3], USAGE_CREATE) != 0) {
		json_decref(body);
		return 2;
	}
	rc = apiclient_call(o.socket, "POST", "/v1/sessions", body, &r, err,
	    sizeof(err));
	json_decref(body);
	return apiclient_finish(rc, &r, err, o.json, print_created);
}

static int
cmd_list(int argc, char **argv)
{
	return apiclient_get_cmd(argc, argv, USAGE_LIST, "/v1/sessions",
	    print_list);
}

static int
cmd_show(int argc, char **argv)
{
	return apiclient_id_cmd(argc, argv, USAGE_SHOW, "GET", "/v1/sessions/",
	    "", print_list_one);
}

/* A new expiry, counted from now (the API bounds it by expires_max). */
static int
cmd_extend(int argc, char **argv)
{
	static const char *const extra[] = { "--expires-in", NULL };
	const char *vals[1] = { NULL };
	struct apiclient_opts o;
	struct apiclient_reply r;
	char err[512], path[160];
	json_t *body;
	int rc;

	if ((rc = apiclient_opts(argc, argv, USAGE_EXTEND, extra, vals, &o))
	    != 0)
		return rc;
	if (o.npos != 1 || vals[0] == NULL)
		return cli_usage_error(USAGE_EXTEND, "an ID and --expires-in "
		    "are needed");
	if (apiclient_path(path, sizeof(path), "/v1/sessions/", o.pos[0],
	    "/extend") != 0)
		return cli_usage_error(USAGE_EXTEND, "ID too long");
	body = json_object();
	if (set_number(body, "expires_in", "--expires-in", vals[0],
	    USAGE_EXTEND) != 0) {
		json_decref(body);
		return 2;
	}
	rc = apiclient_call(o.socket, "POST", path, body, &r, err,
	    sizeof(err));
	json_decref(body);
	return apiclient_finish(rc, &r, err, o.json, print_list_one);
}

static int
cmd_revoke(int argc, char **argv)
{
	return apiclient_id_cmd(argc, argv, USAGE_REVOKE, "POST",
	    "/v1/sessions/", "/revoke", print_session);
}

const struct cmd_entry cmd_session_create_entry = { "session", "create",
    USAGE_CREATE, "start a session for a recipient on a mounted dataset",
    cmd_create };
const struct cmd_entry cmd_session_list_entry = { "session", "list",
    USAGE_LIST, "list sessions (never their secrets)", cmd_list };
const struct cmd_entry cmd_session_show_entry = { "session", "show",
    USAGE_SHOW, "show one session (never its secret)", cmd_show };
const struct cmd_entry cmd_session_extend_entry = { "session", "extend",
    USAGE_EXTEND, "set a live session's expiry to S seconds from now",
    cmd_extend };
const struct cmd_entry cmd_session_revoke_entry = { "session", "revoke",
    USAGE_REVOKE, "end a session now", cmd_revoke };
