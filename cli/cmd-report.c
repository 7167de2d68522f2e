/*
 * cli/cmd-report.c — `cdsgate session report ID`: what one session was,
 * for an auditor (audit/report.c builds it; this prints it as text or
 * JSON): recipient, dataset, times, how it ended, every connection and
 * its login result, the typed text, the URLs the browser requested, the
 * recording's digest, and any file that could not be read.
 *
 * Runs as the invoking auditor (a member of cdsgate-auditor reads the
 * audit log, the recordings and their network logs without root).  The
 * report carries untrusted text (typed keys, URLs, addresses): it is
 * printed with control characters replaced.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "audit/audit.h"
#include "cli/cli.h"

#define USAGE_REPORT	"session report ID [--audit-log LOG] " \
			"[--recordings DIR] [--json]"

/* s with every control character (but a newline when nl) as '?'. */
static void
put_safe(const char *s, int nl)
{
	for (; s != NULL && *s != '\0'; s++)
		putchar(((unsigned char)*s < 0x20 && !(nl && *s == '\n')) ||
		    *s == 0x7f ? '?' : *s);
}

/* A member as text: a string (made safe), a number, or "-". */
static void
put_member(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (json_is_string(v))
		put_safe(json_string_value(v), 0);
	else if (json_is_integer(v))
		printf("%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_boolean(v))
		printf("%s", json_is_true(v) ? "yes" : "no");
	else
		printf("-");
}

/* "label: value\n" for one member. */
static void
line(const char *label, json_t *o, const char *key)
{
	printf("%-12s ", label);
	put_member(o, key);
	printf("\n");
}

static void
print_head(json_t *r)
{
	json_t *e;
	size_t i;

	line("session:", r, "session");
	line("recipient:", r, "recipient");
	printf("%-12s ", "dataset:");
	put_member(r, "dataset");
	printf(" (");
	put_member(r, "dataset_name");
	printf(")\n");
	line("created:", r, "created");
	line("expires:", r, "expires");
	line("started:", r, "started");
	line("ended:", r, "ended");
	line("end:", r, "end");
	json_array_foreach(json_object_get(r, "api_events"), i, e) {
		printf("%-12s ", "api:");
		put_member(e, "time");
		printf(" ");
		put_member(e, "type");
		if (json_object_get(e, "reason") != NULL) {
			printf(": ");
			put_member(e, "reason");
		}
		if (json_object_get(e, "by_uid") != NULL) {
			printf(" (by uid ");
			put_member(e, "by_uid");
			printf(")");
		}
		printf("\n");
	}
}

static void
print_files(json_t *r)
{
	json_t *rec = json_object_get(r, "recording");
	json_t *net = json_object_get(rec, "network_log");

	if (rec == NULL)
		return;
	line("recording:", rec, "file");
	printf("%-12s ", "  sha256:");
	put_member(rec, "sha256");
	printf(" (audit log line ");
	put_member(rec, "audit_line");
	printf("; the file %s)\n", json_is_true(json_object_get(rec,
	    "sha256_matches")) ? "matches" : "does NOT match");
	printf("%-12s %.3f s%s\n", "  duration:", json_real_value(
	    json_object_get(rec, "duration_s")), json_is_true(
	    json_object_get(rec, "truncated")) ? ", cut short" : "");
	if (net == NULL)
		return;
	line("network log:", net, "file");
	printf("%-12s ", "  sha256:");
	put_member(net, "sha256");
	printf(" (the file %s)\n", json_is_true(json_object_get(net,
	    "sha256_matches")) ? "matches" : "does NOT match");
}

static void
print_connections(json_t *r)
{
	json_t *c;
	size_t i;

	printf("connections:\n");
	json_array_foreach(json_object_get(r, "connections"), i, c) {
		printf("  ");
		put_member(c, "time");
		printf("  %-14s ", json_string_value(json_object_get(c,
		    "event")));
		put_member(c, "client");
		printf("  login ");
		put_member(c, "login");
		if (json_object_get(c, "user") != NULL) {
			printf("  user ");
			put_member(c, "user");
		}
		if (json_object_get(c, "role") != NULL) {
			printf("  ");
			put_member(c, "role");
		}
		if (json_object_get(c, "reason") != NULL) {
			printf("  (");
			put_member(c, "reason");
			printf(")");
		}
		printf("\n");
	}
}

static void
print_activity(json_t *r)
{
	json_t *k = json_object_get(r, "keys"), *q;
	const char *typed = json_string_value(json_object_get(r, "typed"));
	size_t i;

	printf("keys:        ");
	put_member(k, "delivered");
	printf(" delivered, ");
	put_member(k, "filtered");
	printf(" filtered, ");
	put_member(k, "rate_limited");
	printf(" rate-limited\n--- typed text ---\n");
	put_safe(typed, 1);
	printf("\n--- end of typed text ---\nrequests:    %zu\n",
	    json_array_size(json_object_get(r, "requests")));
	json_array_foreach(json_object_get(r, "requests"), i, q) {
		printf("  ");
		put_member(q, "time");
		printf("  ");
		put_member(q, "method");
		printf(" ");
		put_member(q, "url");
		printf("  ");
		put_member(q, "status");
		printf("\n");
	}
}

static int
cmd_report(int argc, char **argv)
{
	const char *id = NULL, *log = NULL, *dir = NULL;
	json_t *r, *p;
	char err[1024];
	int i, json = 0;
	size_t k;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--audit-log") == 0 && i + 1 < argc)
			log = argv[++i];
		else if (strcmp(argv[i], "--recordings") == 0 && i + 1 < argc)
			dir = argv[++i];
		else if (argv[i][0] != '-' && id == NULL)
			id = argv[i];
		else
			return cli_usage_error(USAGE_REPORT, "unexpected "
			    "argument: %s", argv[i]);
	if (id == NULL)
		return cli_usage_error(USAGE_REPORT, "no session ID");
	if (log == NULL && (log = cli_default_audit_log()) == NULL)
		return cli_usage_error(USAGE_REPORT, "no --audit-log LOG");
	if (audit_session_report(log, id, dir, &r, err, sizeof(err)) !=
	    AUDIT_OK)
		return cli_usage_error(NULL, "%s", err);
	if (json) {
		json_dumpf(r, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		printf("\n");
	} else {
		print_head(r);
		print_files(r);
		print_connections(r);
		print_activity(r);
	}
	json_array_foreach(json_object_get(r, "problems"), k, p)
		fprintf(stderr, "cdsgate: warning: %s\n", json_string_value(p));
	k = json_array_size(json_object_get(r, "problems"));
	json_decref(r);
	return k == 0 ? 0 : EXIT_BAD_INPUT;	/* the report is not whole */
}

const struct cmd_entry cmd_session_report_entry = { "session", "report",
    USAGE_REPORT, "what a session was, from the audit log, its recording "
    "and network log (auditors)", cmd_report };
