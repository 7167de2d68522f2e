/*
 * cli/cmd-audit.c — `cdsgate audit keygen|verify|list|show` for auditors:
 * check a hash-chained, signed audit log (audit/audit.h) and read it.
 *
 * Runs as the invoking user; the log is untrusted input (it may have
 * been edited) and is read through audit/verify.c or line by line with
 * jansson, bounded.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "audit/audit.h"
#include "cli/cli.h"

#define USAGE_KEYGEN	"audit keygen --private FILE --public FILE"
#define USAGE_VERIFY	"audit verify LOG --key PUBLIC.pem [--recordings DIR | " \
			"--no-recordings] [--strict] [--json]"
#define USAGE_LIST	"audit list LOG [--type TYPE] [--recipient R] [--dataset ID] " \
			"[--session ID] [--since TIME] [--until TIME] [--json]"
#define USAGE_SHOW	"audit show LOG SEQ"

/* --opt VALUE pairs and up to two positionals; -1 on a usage error. */
static int
audit_args(int argc, char **argv, const char *usage, const char *const *names,
    const char **vals, const char **pos, int npos, int *json)
{
	int i, k, n = 0;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0 && json != NULL) {
			*json = 1;
			continue;
		}
		for (k = 0; names[k] != NULL; k++)
			if (strcmp(argv[i], names[k]) == 0)
				break;
		if (names[k] != NULL && i + 1 < argc)
			vals[k] = argv[++i];
		else if (argv[i][0] != '-' && n < npos)
			pos[n++] = argv[i];
		else
			return cli_usage_error(usage, "unexpected argument: %s",
			    argv[i]), -1;
	}
	if (n != npos)
		return cli_usage_error(usage, "missing arguments"), -1;
	return 0;
}

static int
cmd_keygen(int argc, char **argv)
{
	static const char *const names[] = { "--private", "--public", NULL };
	const char *vals[2] = { NULL, NULL };
	char err[512];

	if (audit_args(argc, argv, USAGE_KEYGEN, names, vals, NULL, 0, NULL) ||
	    vals[0] == NULL || vals[1] == NULL)
		return cli_usage_error(USAGE_KEYGEN, "both key files needed");
	if (audit_key_generate(vals[0], vals[1], err, sizeof(err)) != AUDIT_OK) {
		fprintf(stderr, "cdsgate: %s\n", err);
		return EXIT_BAD_INPUT;
	}
	return 0;
}

static void
verify_print(const char *log, int rc, const struct audit_report *r, int json)
{
	if (json) {
		json_t *o = json_pack("{s:s, s:b, s:I, s:I, s:I, s:I}", "log",
		    log, "intact", rc == AUDIT_OK, "records",
		    (json_int_t)r->records, "checkpoints",
		    (json_int_t)r->checkpoints, "unsigned_tail",
		    (json_int_t)r->unsigned_tail, "unsigned_line",
		    (json_int_t)r->unsigned_line);

		if (rc == AUDIT_ETAMPER)
			json_object_set_new(o, "problem", json_pack("{s:I, s:s}",
			    "line", (json_int_t)r->bad_line, "what", r->problem));
		json_object_set_new(o, "recordings", json_pack("{s:I, s:I, "
		    "s:I, s:s}", "rehashed", (json_int_t)r->files_checked,
		    "expired", (json_int_t)r->files_expired, "truncated",
		    (json_int_t)r->files_truncated, "truncated_first",
		    r->truncated_note));
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		printf("\n");
		json_decref(o);
	} else if (rc == AUDIT_OK) {
		printf("%s: intact: %" PRIu64 " records, %" PRIu64 " signed "
		    "checkpoints, %" PRIu64 " records after the last one\n", log,
		    r->records, r->checkpoints, r->unsigned_tail);
		if (r->unsigned_tail > 0)
			printf("note: the %" PRIu64 " records from line %lu on "
			    "are not signed: only the hash chain vouches for "
			    "them (--strict fails on them)\n", r->unsigned_tail,
			    r->unsigned_line);
	} else
		printf("%s: line %lu: %s\n", log, r->bad_line, r->problem);
	if (!json && (r->files_checked || r->files_expired ||
	    r->files_truncated))
		printf("recordings: %" PRIu64 " re-hashed (with network logs "
		    "and captures), %" PRIu64 " expired "
		    "by retention, %" PRIu64 " cut short%s%s\n",
		    r->files_checked, r->files_expired, r->files_truncated,
		    r->files_truncated ? "; first: " : "", r->truncated_note);
}

/* Take a boolean flag out of argv (audit_args knows only --json). */
static int
verify_flag(int *argc, char **argv, const char *flag)
{
	int i, j, found = 0;

	for (i = j = 0; i < *argc; i++)
		if (i > 0 && strcmp(argv[i], flag) == 0)
			found = 1;
		else
			argv[j++] = argv[i];
	*argc = j;
	return found;
}

static int
cmd_verify(int argc, char **argv)
{
	static const char *const names[] = { "--key", "--recordings", NULL };
	const char *vals[2] = { NULL, NULL }, *pos[1];
	struct audit_verify_opts o = { AUDIT_FILES_CHECK, NULL, 0 };
	struct audit_key *pub;
	struct audit_report r;
	char err[512];
	int json = 0, rc;

	if (verify_flag(&argc, argv, "--no-recordings"))
		o.files = AUDIT_FILES_SKIP;
	o.strict = verify_flag(&argc, argv, "--strict");
	if (audit_args(argc, argv, USAGE_VERIFY, names, vals, pos, 1, &json) ||
	    vals[0] == NULL)
		return cli_usage_error(USAGE_VERIFY, "a LOG and --key needed");
	if (vals[1] != NULL && o.files == AUDIT_FILES_SKIP)
		return cli_usage_error(USAGE_VERIFY, "--recordings or "
		    "--no-recordings, not both");
	o.dir = vals[1];
	if (audit_key_load_public(vals[0], &pub, err, sizeof(err)) != AUDIT_OK) {
		fprintf(stderr, "cdsgate: %s\n", err);
		return EXIT_BAD_INPUT;
	}
	rc = audit_verify_with(pos[0], pub, &o, &r, err, sizeof(err));
	audit_key_free(pub);
	if (rc != AUDIT_OK && rc != AUDIT_ETAMPER) {
		/* not tampering: a file this user cannot read (exit 2) */
		fprintf(stderr, "cdsgate: cannot verify: %s\n", err);
		if (json) {
			json_t *e = json_pack("{s:s, s:n, s:s}", "log", pos[0],
			    "intact", "error", err);

			json_dumpf(e, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
			printf("\n");
			json_decref(e);
		}
		return EXIT_BAD_INPUT;
	}
	verify_print(pos[0], rc, &r, json);
	return rc == AUDIT_OK ? 0 : EXIT_GATE_FAILED;
}

/* What a walk over the log calls for each record that parses. */
struct each_ctx {
	const char	*log;
	int		(*fn)(json_t *, void *);
	void		*arg;
};

static int
each_one(json_t *o, unsigned long n, void *arg)
{
	struct each_ctx *c = arg;

	if (o == NULL) {
		fprintf(stderr, "cdsgate: %s: line %lu is not JSON (run "
		    "`cdsgate audit verify`)\n", c->log, n);
		return 0;
	}
	return c->fn(o, c->arg);
}

/* Call fn on each record of the log that parses; 0 or an exit code. */
static int
each_record(const char *log, int (*fn)(json_t *, void *), void *arg)
{
	struct each_ctx c = { log, fn, arg };
	char err[512];

	if (audit_each(log, each_one, &c, err, sizeof(err)) == AUDIT_OK)
		return 0;
	fprintf(stderr, "cdsgate: %s\n", err);
	return EXIT_BAD_INPUT;
}

struct list_ctx {
	struct audit_filter	*f;
	int			 json;
};

/* One record: the whole of it, never cut (--json: as it is in the log). */
static int
list_one(json_t *o, void *arg)
{
	struct list_ctx *c = arg;
	const char *type = json_string_value(json_object_get(o, "type"));
	char *data;

	if (type == NULL || !audit_filter_match(c->f, o))
		return 0;
	if (c->json) {
		json_dumpf(o, stdout, JSON_COMPACT | JSON_SORT_KEYS);
		printf("\n");
		return 0;
	}
	data = json_dumps(json_object_get(o, "data"), JSON_COMPACT |
	    JSON_SORT_KEYS);
	printf("%6lld  %s  %-18s %s\n", (long long)json_integer_value(
	    json_object_get(o, "seq")), json_string_value(json_object_get(o,
	    "time")), type, data != NULL ? data : "");
	free(data);
	return 0;
}

static int
cmd_list(int argc, char **argv)
{
	static const char *const names[] = { "--type", "--recipient",
	    "--dataset", "--session", "--since", "--until", NULL };
	const char *vals[6] = { NULL }, *pos[1];
	struct list_ctx c = { NULL, 0 };
	struct audit_query q;
	char err[1536];
	int rc;

	if (audit_args(argc, argv, USAGE_LIST, names, vals, pos, 1, &c.json))
		return EXIT_BAD_INPUT;
	q = (struct audit_query){ vals[0], vals[1], vals[2], vals[3], vals[4],
	    vals[5] };
	if (audit_filter_alloc(&q, &c.f, err, sizeof(err)) != AUDIT_OK)
		return cli_usage_error(USAGE_LIST, "%s", err);
	rc = each_record(pos[0], list_one, &c);
	audit_filter_free(c.f);
	return rc;
}

struct show_ctx {
	long long	 seq;
	int		 found;
};

static int
show_one(json_t *o, void *arg)
{
	struct show_ctx *c = arg;

	if (json_integer_value(json_object_get(o, "seq")) != c->seq)
		return 0;
	json_dumpf(o, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
	printf("\n");
	c->found = 1;
	return 1;
}

static int
cmd_show(int argc, char **argv)
{
	static const char *const names[] = { NULL };
	const char *pos[2];
	struct show_ctx c = { 0, 0 };
	char *end;
	int rc;

	if (audit_args(argc, argv, USAGE_SHOW, names, NULL, pos, 2, NULL))
		return EXIT_BAD_INPUT;
	c.seq = strtoll(pos[1], &end, 10);
	if (*end != '\0' || end == pos[1] || c.seq < 0)
		return cli_usage_error(USAGE_SHOW, "SEQ: not a number: %s",
		    pos[1]);
	if ((rc = each_record(pos[0], show_one, &c)) != 0)
		return rc;
	if (!c.found) {
		fprintf(stderr, "cdsgate: %s: no record with seq %lld\n",
		    pos[0], c.seq);
		return EXIT_BAD_INPUT;
	}
	return 0;
}

const struct cmd_entry cmd_audit_keygen_entry = { "audit", "keygen",
    USAGE_KEYGEN, "make the audit log's Ed25519 signing key", cmd_keygen };
const struct cmd_entry cmd_audit_verify_entry = { "audit", "verify",
    USAGE_VERIFY, "check the log's chain, signatures, head and recordings "
    "(exit 3: tampered, 2: unreadable)", cmd_verify };
const struct cmd_entry cmd_audit_list_entry = { "audit", "list", USAGE_LIST,
    "list the log's records, whole, by type, recipient, dataset, session "
    "and time", cmd_list };
const struct cmd_entry cmd_audit_show_entry = { "audit", "show", USAGE_SHOW,
    "show one record", cmd_show };
