/*
 * cli/cmd-dataset.c — `cdsgate dataset import|list|show|mount|unmount`:
 * datasets through the de-identification gate into the analytics
 * backend, over the admin API.  Import uploads the raw file and the
 * hierarchies into the daemon's spool, then asks it to run the gate.
 */
#include "config.h"

#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/apiclient.h"
#include "cli/cli.h"
#include "deid/error.h"
#include "deid/explain.h"
#include "deid/html.h"
#include "deid/output.h"

#define USAGE_LIST	"dataset list [--failed] [--json] [--socket PATH]"
#define USAGE_REMOVE	"dataset remove ID [--json] [--socket PATH]"
#define USAGE_SHOW	"dataset show ID [--html FILE] [--json] [--socket PATH]"
#define USAGE_MOUNT	"dataset mount ID [--backend embedded|postgres] [--json] [--socket PATH]"
#define USAGE_UNMOUNT	"dataset unmount ID [--json] [--socket PATH]"
#define USAGE_IMPORT	"dataset import FILE --name NAME --qi A,B,... " \
	"[--hierarchies DIR | --hierarchy A=FILE ...] [--identifying A,...] " \
	"[--sensitive A,...] [--insensitive A,...] [--separator C] " \
	"[--population N ...] [--pu-threshold T] [--pu-model M] [--k K] " \
	"[--suppression-limit S] [--warn-suppressed S] " \
	"[--quality loss|entropy|payout] " \
	"[--game payout|no-attack|sh-friendly [--game-cost C] [--game-gain G] " \
	"[--game-loss L] [--game-benefit B] [--game-risk prosecutor|journalist]] " \
	"[--safe-harbor QI=LEVEL,...] " \
	"[--attacker FILE [--max-adversarial-risk R] [--seed S]] " \
	"[--residual N=BOUND ...] [--json] " \
	"[--socket PATH]"

static const char *
str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s != NULL ? s : "";
}

/* A failed import: the gate failed it or refused its input ("failed"),
 * or could not decide ("error").  Only these can be removed. */
static int
is_failed(json_t *d)
{
	return strcmp(str(d, "state"), "failed") == 0 ||
	    strcmp(str(d, "state"), "error") == 0;
}

/* One dataset; a failed import with its reason, in full, unless
 * print_one says it below. */
static void
print_row(json_t *d, int with_reason)
{
	printf("%5lld %-10s v%-3lld %.12s  %s", (long long)json_integer_value(
	    json_object_get(d, "id")), str(d, "state"),
	    (long long)json_integer_value(json_object_get(d, "mount_version")),
	    str(d, "raw_sha256"), str(d, "name"));
	if (with_reason && is_failed(d) && str(d, "reason")[0] != '\0')
		printf("  (%s)", str(d, "reason"));
	putchar('\n');
}

static void
print_header(void)
{
	printf("%5s %-10s %-4s %-12s  %s\n", "ID", "STATE", "MNT", "RAW SHA256",
	    "NAME");
}

static void
print_list(json_t *j)
{
	json_t *d;
	size_t i;

	print_header();
	json_array_foreach(json_object_get(j, "datasets"), i, d)
		print_row(d, 1);
}

/* What else the gate re-derived: the adversarial risk under the
 * custodian's attacker, the levels of the job's QIs qis against the
 * Safe Harbor floor. */
static void
print_verified_more(json_t *report, json_t *v, json_t *qis)
{
	json_t *adv = json_object_get(v, "adversarial"), *q, *floor;
	const char *qi;
	json_int_t lv;
	size_t i;

	if (json_is_object(adv)) {
		printf("verified adversarial risk: %.4g", json_number_value(
		    json_object_get(adv, "risk")));
		if (json_is_number(json_object_get(adv, "bound")))
			printf(" (bound %g)", json_number_value(
			    json_object_get(adv, "bound")));
		printf(" under attacker %s, seed %lld\n", str(adv, "attacker"),
		    (long long)json_integer_value(json_object_get(adv,
		    "seed")));
	}
	floor = json_object_get(report, "safe_harbor");
	if (!json_is_object(floor) || !json_is_object(json_object_get(v,
	    "levels")))
		return;
	printf("verified Safe Harbor levels:");
	json_array_foreach(qis, i, q) {	/* in the job's QI order */
		qi = json_string_value(q);
		if (qi != NULL && (lv = json_integer_value(json_object_get(
		    floor, qi))) > 0)
			printf(" %s %lld (at least %lld)", qi, (long long)
			    json_integer_value(json_object_get(
			    json_object_get(v, "levels"), qi)), (long long)lv);
	}
	putchar('\n');
}

/* The verdict, explained in plain language (deid/explain.h: the same
 * words as `deid anonymize`), and what the gate re-derived from the
 * released file. */
static void
print_gate(json_t *report, json_t *gate, json_t *v, json_t *qis)
{
	const char *verdict = str(gate, "verdict");
	json_t *x, *lines = deid_explain(report);
	size_t i;

	printf("gate: %s\n", json_is_true(json_object_get(gate, "passed")) ?
	    "passed" : strcmp(verdict, "nothing released") == 0 ?
	    "FAILED (nothing released)" : "FAILED");
	json_array_foreach(lines, i, x)
		printf("  %s\n", json_string_value(x));
	json_decref(lines);
	if (json_is_object(v))
		printf("verified from the released file: %lld records, %lld "
		    "suppressed, %lld classes, smallest %lld\n",
		    (long long)json_integer_value(json_object_get(v, "records")),
		    (long long)json_integer_value(json_object_get(v,
		    "suppressed_records")),
		    (long long)json_integer_value(json_object_get(v, "classes")),
		    (long long)json_integer_value(json_object_get(v,
		    "smallest_class")));
	print_verified_more(report, v, qis);
}

/* The reason is the explanation's first line (print_gate prints it). */
static int
is_headline(json_t *report, const char *reason)
{
	json_t *lines;
	int same;

	if (!json_is_object(json_object_get(report, "gate")))
		return 0;
	lines = deid_explain(report);
	same = json_is_string(json_array_get(lines, 0)) && strcmp(
	    json_string_value(json_array_get(lines, 0)), reason) == 0;
	json_decref(lines);
	return same;
}

static void
print_one(json_t *d)
{
	json_t *gate = json_object_get(json_object_get(d, "report"), "gate");

	print_header();
	print_row(d, 0);
	printf("raw sha256: %s\njob sha256: %s\n", str(d, "raw_sha256"),
	    str(d, "job_sha256"));
	if (str(d, "reason")[0] != '\0' && !is_headline(json_object_get(d,
	    "report"), str(d, "reason")))
		printf("reason: %s\n", str(d, "reason"));
	if (gate != NULL)
		print_gate(json_object_get(d, "report"), gate, json_object_get(
		    json_object_get(d, "report"), "verified"), json_object_get(
		    json_object_get(d, "job"), "qi"));
	if (str(json_object_get(d, "report"), "release_sha256")[0] != '\0')
		printf("release sha256: %s\n", str(json_object_get(d,
		    "report"), "release_sha256"));
}

/* Keep only the failed imports of a list reply. */
static void
keep_failed(json_t *j)
{
	json_t *a = json_object_get(j, "datasets");
	size_t i = 0;

	while (i < json_array_size(a))
		if (is_failed(json_array_get(a, i)))
			i++;
		else
			json_array_remove(a, i);
}

static int
cmd_list(int argc, char **argv)
{
	struct apiclient_opts o;
	struct apiclient_reply r;
	char err[512], *args[64];
	int i, n = 0, failed = 0, rc;

	for (i = 0; i < argc && n < 63; i++)
		if (strcmp(argv[i], "--failed") == 0)
			failed = 1;
		else
			args[n++] = argv[i];
	args[n] = NULL;
	if ((rc = apiclient_opts(n, args, USAGE_LIST, NULL, NULL, &o)) != 0)
		return rc;
	if (o.npos != 0)
		return cli_usage_error(USAGE_LIST, "no arguments expected");
	rc = apiclient_call(o.socket, "GET", "/v1/datasets", NULL, &r, err,
	    sizeof(err));
	if (rc == 0 && failed && r.status == 200)
		keep_failed(r.json);
	return apiclient_finish(rc, &r, err, o.json, print_list);
}

/* After a removal: which dataset went. */
static void
print_removed(json_t *j)
{
	printf("removed dataset %lld (%s) and its files\n", (long long)
	    json_integer_value(json_object_get(j, "removed")), str(j, "name"));
}

static int
cmd_remove(int argc, char **argv)
{
	return apiclient_id_cmd(argc, argv, USAGE_REMOVE, "POST",
	    "/v1/datasets/", "/remove", print_removed);
}

/* The dataset's report as an HTML page (deid/html.h) at path,
 * written atomically; 0 or an exit code. */
static int
show_html(json_t *d, const char *path)
{
	struct deid_error err = { .msg = "" };
	char title[512], *page = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	if (!json_is_object(json_object_get(json_object_get(d, "report"),
	    "gate"))) {
		fprintf(stderr, "cdsgate: dataset %lld has no gate report "
		    "(state %s)\n", (long long)json_integer_value(
		    json_object_get(d, "id")), str(d, "state"));
		return EXIT_BAD_INPUT;
	}
	snprintf(title, sizeof(title), "dataset %lld: %s",
	    (long long)json_integer_value(json_object_get(d, "id")),
	    str(d, "name"));
	if ((f = open_memstream(&page, &len)) == NULL)
		return EXIT_INTERNAL;
	r = deid_html_report(json_object_get(d, "report"), title, f);
	if (fclose(f) != 0 && r == DEID_OK)
		r = DEID_ENOMEM;
	if (r == DEID_OK)
		r = deid_write_file(path, page, &err);
	free(page);
	if (r == DEID_OK)
		return 0;
	fprintf(stderr, "cdsgate: %s: %s\n", path, err.msg[0] ? err.msg :
	    deid_strerror(r));
	return EXIT_INTERNAL;
}

static int
cmd_show(int argc, char **argv)
{
	static const char *const extra[] = { "--html", NULL };
	const char *html = NULL;
	struct apiclient_opts o;
	struct apiclient_reply r;
	char err[512], path[160];
	int rc;

	if ((rc = apiclient_opts(argc, argv, USAGE_SHOW, extra, &html, &o)) !=
	    0)
		return rc;
	if (o.npos != 1 || apiclient_path(path, sizeof(path), "/v1/datasets/",
	    o.pos[0], "") != 0)
		return cli_usage_error(USAGE_SHOW, "one dataset ID expected");
	rc = apiclient_call(o.socket, "GET", path, NULL, &r, err, sizeof(err));
	if (rc == 0 && html != NULL && r.status >= 200 && r.status < 300 &&
	    (rc = show_html(r.json, html)) != 0) {
		apiclient_reply_free(&r);
		return rc;
	}
	return apiclient_finish(rc, &r, err, o.json, print_one);
}

const struct cmd_entry cmd_dataset_list_entry = { "dataset", "list",
    USAGE_LIST, "list datasets and their gate verdicts (--failed: the "
    "failed imports, with why)", cmd_list };
const struct cmd_entry cmd_dataset_show_entry = { "dataset", "show",
    USAGE_SHOW, "show a dataset with its job and report", cmd_show };
const struct cmd_entry cmd_dataset_remove_entry = { "dataset", "remove",
    USAGE_REMOVE, "remove a failed import and its files", cmd_remove };

/* POST /v1/datasets/ID/<verb>: mount (--backend: its body) and unmount. */
static int
post_verb(int argc, char **argv, const char *usage, const char *verb)
{
	static const char *const mount_opts[] = { "--backend", NULL };
	const char *backend = NULL;
	struct apiclient_opts o;
	struct apiclient_reply r;
	char err[1024], path[160], suffix[32];
	json_t *body = NULL;
	int rc, mount = strcmp(verb, "mount") == 0;

	if ((rc = apiclient_opts(argc, argv, usage, mount ? mount_opts : NULL,
	    &backend, &o)) != 0)
		return rc;
	snprintf(suffix, sizeof(suffix), "/%s", verb);
	if (o.npos != 1 || apiclient_path(path, sizeof(path), "/v1/datasets/",
	    o.pos[0], suffix) != 0)
		return cli_usage_error(usage, "one dataset ID expected");
	if (backend != NULL)
		body = json_pack("{s:s}", "backend", backend);
	rc = apiclient_call(o.socket, "POST", path, body, &r, err, sizeof(err));
	json_decref(body);
	return apiclient_finish(rc, &r, err, o.json, print_one);
}

static int
cmd_mount(int argc, char **argv)
{
	return post_verb(argc, argv, USAGE_MOUNT, "mount");
}

static int
cmd_unmount(int argc, char **argv)
{
	return post_verb(argc, argv, USAGE_UNMOUNT, "unmount");
}

/* What `dataset import` collects before it talks to the daemon. */
struct import_args {
	const char	*file, *name, *hdir, *socket, *attacker;
	const char	*hier[64];	/* "A=FILE" */
	size_t		 nhier;
	json_t		*job;
	json_t		*sources;	/* the custodian's names of the files */
	int		 json;
};

/* A list option "a,b" as a JSON array of strings. */
static json_t *
split_list(const char *s)
{
	json_t *a = json_array();
	char *copy = strdup(s), *p, *save = NULL;

	for (p = strtok_r(copy, ",", &save); p != NULL;
	    p = strtok_r(NULL, ",", &save))
		json_array_append_new(a, json_string(p));
	free(copy);
	return a;
}

/* obj[key] as an object, made when missing. */
static json_t *
object_at(json_t *obj, const char *key)
{
	if (json_object_get(obj, key) == NULL)
		json_object_set_new(obj, key, json_object());
	return json_object_get(obj, key);
}

/* --safe-harbor QI=LEVEL[,QI=LEVEL...] into the job's "safe_harbor"
 * {QI: level}; the api checks the levels and the QIs.  0 or -1. */
static int
import_safe_harbor(struct import_args *ia, const char *val)
{
	json_t *sh = object_at(ia->job, "safe_harbor");
	char *copy = strdup(val), *p, *save = NULL, *eq, *end;
	long l;
	int rc = copy != NULL ? 0 : -1;

	for (p = copy != NULL ? strtok_r(copy, ",", &save) : NULL;
	    p != NULL && rc == 0; p = strtok_r(NULL, ",", &save)) {
		if ((eq = strchr(p, '=')) == NULL || eq == p || eq[1] < '0' ||
		    eq[1] > '9' || (l = strtol(eq + 1, &end, 10), *end != '\0'))
			rc = -1;
		else
			*eq = '\0', json_object_set_new(sh, p, json_integer(l));
	}
	free(copy);
	return rc;
}

/* One "--opt VALUE" of import into the job; 0, 1 (not ours) or -1. */
static int
import_opt(struct import_args *ia, const char *opt, const char *val)
{
	static const char *const lists[] = { "--qi", "--identifying",
	    "--sensitive", "--insensitive", NULL };
	static const char *const nums[] = { "--pu-threshold", "--k",
	    "--suppression-limit", "--warn-suppressed", "--game-cost",
	    "--game-gain", "--game-loss", "--game-benefit",
	    "--max-adversarial-risk", "--seed", NULL };
	static const char *const strs[] = { "--separator", "--pu-model",
	    "--quality", "--game", "--game-risk", NULL };
	char key[32], *end;
	double d;
	size_t i;

	snprintf(key, sizeof(key), "%s", opt + 2);
	for (i = 0; key[i] != '\0'; i++)
		if (key[i] == '-')
			key[i] = '_';
	for (i = 0; lists[i] != NULL; i++)
		if (strcmp(opt, lists[i]) == 0)
			return json_object_set_new(ia->job, key,
			    split_list(val)), 0;
	for (i = 0; strs[i] != NULL; i++)
		if (strcmp(opt, strs[i]) == 0)
			return json_object_set_new(ia->job, key,
			    json_string(val)), 0;
	for (i = 0; nums[i] != NULL; i++)
		if (strcmp(opt, nums[i]) == 0) {
			if (cli_parse_number(val, &d) != 0)
				return -1;
			return json_object_set_new(ia->job, key, (strcmp(opt,
			    "--k") == 0 || strcmp(opt, "--seed") == 0) &&
			    d == floor(d) && fabs(d) <= 9007199254740992.0 ?
			    json_integer((json_int_t)d) : json_real(d)), 0;
		}
	if (strcmp(opt, "--safe-harbor") == 0)
		return import_safe_harbor(ia, val);
	if (strcmp(opt, "--population") == 0) {
		if (cli_parse_number(val, &d) != 0)
			return -1;
		if (json_object_get(ia->job, "population") == NULL)
			json_object_set_new(ia->job, "population", json_array());
		return json_array_append_new(json_object_get(ia->job,
		    "population"), json_real(d)), 0;
	}
	if (strcmp(opt, "--residual") == 0) {
		double n = strtod(val, &end), b;

		if (*end != '=' || cli_parse_number(end + 1, &b) != 0)
			return -1;
		if (json_object_get(ia->job, "residual") == NULL)
			json_object_set_new(ia->job, "residual", json_array());
		return json_array_append_new(json_object_get(ia->job,
		    "residual"), json_pack("{s:f, s:f}", "population", n,
		    "bound", b)), 0;
	}
	return 1;
}

static int
import_parse(int argc, char **argv, struct import_args *ia)
{
	int i, r;

	for (i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(argv[i], "--json") == 0) {
			ia->json = 1;
			continue;
		}
		if (argv[i][0] != '-') {
			if (ia->file != NULL)
				return cli_usage_error(USAGE_IMPORT, "one FILE");
			ia->file = argv[i];
			continue;
		}
		if (v == NULL)
			return cli_usage_error(USAGE_IMPORT, "%s needs a value",
			    argv[i]);
		i++;
		if (strcmp(argv[i - 1], "--name") == 0)
			ia->name = v;
		else if (strcmp(argv[i - 1], "--socket") == 0)
			ia->socket = v;
		else if (strcmp(argv[i - 1], "--hierarchies") == 0)
			ia->hdir = v;
		else if (strcmp(argv[i - 1], "--attacker") == 0)
			ia->attacker = v;
		else if (strcmp(argv[i - 1], "--hierarchy") == 0 &&
		    ia->nhier < 64 && strchr(v, '=') != NULL)
			ia->hier[ia->nhier++] = v;
		else if ((r = import_opt(ia, argv[i - 1], v)) != 0)
			return cli_usage_error(USAGE_IMPORT, r < 0 ?
			    "%s: bad value %s" : "%s: unknown option%.0s",
			    argv[i - 1], v);
	}
	if (ia->file == NULL || ia->name == NULL ||
	    json_object_get(ia->job, "qi") == NULL)
		return cli_usage_error(USAGE_IMPORT, "FILE, --name and --qi are "
		    "needed");
	return 0;
}

/* Upload one file; its sha into the job at job[key] ("data",
 * "attacker", or an attribute of "hierarchies"), its path as given into
 * the sources at src[key]: the gate's errors name it so.
 * EXIT_BAD_INPUT when it cannot be read, EXIT_INTERNAL when the upload
 * fails. */
static int
import_upload(struct import_args *ia, const char *path, json_t *job,
    json_t *src, const char *key)
{
	char sha[65], err[512];
	FILE *f;

	if ((f = fopen(path, "re")) == NULL) {
		fprintf(stderr, "cdsgate: %s: %s\n", path, strerror(errno));
		return EXIT_BAD_INPUT;
	}
	fclose(f);
	if (apiclient_upload(ia->socket, path, sha, err, sizeof(err)) != 0) {
		fprintf(stderr, "cdsgate: %s\n", err);
		return EXIT_INTERNAL;
	}
	json_object_set_new(job, key, json_string(sha));
	json_object_set_new(src, key, json_string(path));
	return 0;
}

/* A hierarchy file of attr to the spool (import_upload). */
static int
import_hierarchy(struct import_args *ia, const char *path, const char *attr)
{
	return import_upload(ia, path, object_at(ia->job, "hierarchies"),
	    object_at(ia->sources, "hierarchies"), attr);
}

/* DIR/\*hierarchy_<attr>.csv for each QI, as `deid anonymize` finds
 * them.  A QI without one is left to the gate, which says whether the
 * column exists at all and names it. */
static int
import_hierarchy_dir(struct import_args *ia)
{
	json_t *qi = json_object_get(ia->job, "qi"), *v;
	char pat[4096];
	glob_t g;
	size_t i;
	int rc = 0, grc;

	json_array_foreach(qi, i, v) {
		snprintf(pat, sizeof(pat), "%s/*hierarchy_%s.csv", ia->hdir,
		    json_string_value(v));
		if ((grc = glob(pat, 0, NULL, &g)) == 0 && g.gl_pathc > 1) {
			fprintf(stderr, "cdsgate: %s: several files match "
			    "*hierarchy_%s.csv\n", ia->hdir,
			    json_string_value(v));
			rc = EXIT_BAD_INPUT;
		} else if (grc == 0)
			rc = import_hierarchy(ia, g.gl_pathv[0],
			    json_string_value(v));
		globfree(&g);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* Every file to the daemon's spool: 0 or an exit code. */
static int
import_uploads(struct import_args *ia)
{
	char attr[256];
	size_t i, n;
	int rc;

	if ((rc = import_upload(ia, ia->file, ia->job, ia->sources, "data"))
	    != 0 || (ia->attacker != NULL && (rc = import_upload(ia,
	    ia->attacker, ia->job, ia->sources, "attacker")) != 0))
		return rc;
	if (ia->hdir != NULL && (rc = import_hierarchy_dir(ia)) != 0)
		return rc;
	for (i = 0; i < ia->nhier; i++) {
		n = (size_t)(strchr(ia->hier[i], '=') - ia->hier[i]);
		snprintf(attr, sizeof(attr), "%.*s", (int)n, ia->hier[i]);
		if ((rc = import_hierarchy(ia, ia->hier[i] + n + 1, attr)) != 0)
			return rc;
	}
	return 0;
}

static int
cmd_import(int argc, char **argv)
{
	struct import_args ia = { 0 };
	struct apiclient_reply r;
	char err[512], state[16] = "";
	int rc;

	ia.job = json_object();
	ia.sources = json_object();
	if ((rc = import_parse(argc, argv, &ia)) != 0 ||
	    (rc = import_uploads(&ia)) != 0)
		goto out;
	json_object_set_new(ia.job, "name", json_string(ia.name));
	json_object_set(ia.job, "sources", ia.sources);
	if (!ia.json)
		fprintf(stderr, "  running the de-identification gate...\n");
	rc = apiclient_call(ia.socket, "POST", "/v1/datasets", ia.job, &r, err,
	    sizeof(err));
	if (rc == 0 && json_is_string(json_object_get(r.json, "state")))
		snprintf(state, sizeof(state), "%s", json_string_value(
		    json_object_get(r.json, "state")));
	rc = apiclient_finish(rc, &r, err, ia.json, print_one);
	/* Scripts: 0 passed, 2 bad input (the API's 4xx: the gate's 422
	 * names file:line:column), 3 failed the gate, as `deid anonymize`. */
	if (rc == 0 && strcmp(state, "passed") != 0)
		rc = strcmp(state, "failed") == 0 ? EXIT_GATE_FAILED :
		    EXIT_INTERNAL;
out:
	json_decref(ia.job);
	json_decref(ia.sources);
	return rc;
}

const struct cmd_entry cmd_dataset_import_entry = { "dataset", "import",
    USAGE_IMPORT, "import a dataset through the de-identification gate "
    "(exit 0 passed, 2 bad input naming FILE:LINE:COLUMN, 3 failed)",
    cmd_import };
const struct cmd_entry cmd_dataset_mount_entry = { "dataset", "mount",
    USAGE_MOUNT, "mount a dataset that passed into the analytics backend",
    cmd_mount };
const struct cmd_entry cmd_dataset_unmount_entry = { "dataset", "unmount",
    USAGE_UNMOUNT, "take a dataset out of the analytics backend",
    cmd_unmount };
