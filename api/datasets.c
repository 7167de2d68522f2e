/*
 * api/datasets.c — /v1/datasets: what went through the
 * de-identification gate, its verdict and report, and what is mounted.
 *
 * Import queues the gate (api/gate.c) on uploads from the spool and
 * records the verdict when the gate runner answers (the request waits
 * suspended; the loop keeps serving others); mount writes a passed
 * dataset into the embedded backend's mount dir (api/mount.c) or,
 * through the PostgreSQL mounter process (api/pgrunner.c), into the
 * analytics database.  Every step is audited before it is made, and the
 * store refuses a mount the verdict does not cover (its trigger, before
 * any backend is touched).
 *
 * Trust: unprivileged; ids from the path are checked by api/route.c.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/digest.h"

#include "api/api.h"
#include "api/gate.h"
#include "api/gaterunner.h"
#include "api/mount.h"
#include "api/pgrunner.h"
#include "common/log.h"
#include "mount/postgres.h"

#define IMPORTS_MAX	4	/* waiting at once: 4 RUNs fit the socket buffer */

static json_t *
dataset_json(const struct store_dataset *d, int with_report)
{
	json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:s, "
	    "s:s}", "id", (json_int_t)d->id, "name", d->name, "raw_sha256",
	    d->raw_sha256, "job_sha256", d->job_sha256, "state",
	    store_dataset_state_name(d->state), "created",
	    (json_int_t)d->created, "updated", (json_int_t)d->updated,
	    "mount_version", (json_int_t)d->mount_version, "reason",
	    d->reason, "mount_backend", d->mount_backend);

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

/* The {id} of the path as a dataset id; 0 (and a 404 reply) if not. */
static int64_t
param_id(struct api_req *r)
{
	char *end;
	long long id;

	errno = 0;
	id = strtoll(r->params[0], &end, 10);
	if (errno != 0 || *end != '\0' || id <= 0)
		return api_error(r, 404, "not_found", "no dataset '%s' "
		    "(dataset ids are positive integers)", r->params[0]), 0;
	return id;
}

/* Reply with the dataset as it is now, with its job and report. */
static int
reply_dataset(struct api_req *r, int64_t id, unsigned status)
{
	struct store_dataset d = { 0 };
	int st;

	if ((st = store_dataset_get(r->store, id, &d)) != STORE_OK)
		return api_store_error(r, st, "dataset");
	api_reply(r, status, dataset_json(&d, 1));
	store_dataset_clear(&d);
	return 0;
}

int
datasets_show(struct api_req *r)
{
	int64_t id = param_id(r);

	return id == 0 ? -1 : reply_dataset(r, id, 200);
}

/* The uploads a job names must be in the spool. */
static int
job_uploads_exist(struct api_req *r, json_t *job)
{
	const char *key;
	char p[4096];
	json_t *v;

	api_path(p, sizeof(p), "spool", json_string_value(json_object_get(job,
	    "data")));
	if (access(p, R_OK) != 0)
		return api_error(r, 422, "invalid", "field 'data': no upload "
		    "with that sha256"), -1;
	json_object_foreach(json_object_get(job, "hierarchies"), key, v) {
		api_path(p, sizeof(p), "spool", json_string_value(v));
		if (access(p, R_OK) != 0)
			return api_error(r, 422, "invalid", "hierarchy '%s': no "
			    "upload with that sha256", key), -1;
	}
	if (json_object_get(job, "attacker") != NULL && (api_path(p, sizeof(p),
	    "spool", json_string_value(json_object_get(job, "attacker"))) != 0
	    || access(p, R_OK) != 0))
		return api_error(r, 422, "invalid", "field 'attacker': no "
		    "upload with that sha256"), -1;
	return 0;
}

/* The report's reasons for failing, joined with "; " into out. */
static void
report_reasons(json_t *report, char *out, size_t len)
{
	json_t *v;
	size_t i, o = 0;
	int n;

	out[0] = '\0';
	json_array_foreach(json_object_get(json_object_get(report, "gate"),
	    "reasons"), i, v) {
		n = snprintf(out + o, len - o, "%s%s", i > 0 ? "; " : "",
		    json_is_string(v) ? json_string_value(v) : "");
		if (n < 0 || (size_t)n >= len - o) {
			out[o] = '\0';	/* whole reasons only */
			break;
		}
		o += (size_t)n;
	}
}

/* The gate's exit status as a verdict, and why: bad input and a failed
 * gate are failed imports, anything else the gate could not decide. */
static enum store_dataset_state
verdict_of(int rc, const struct gate_said *gs, json_t *report, char *reason,
    size_t len)
{
	json_t *headline;
	char why[900];

	if (rc == GATE_PASSED)
		return snprintf(reason, len, "%s", ""), STORE_DATASET_PASSED;
	if (rc == GATE_FAILED) {
		headline = json_array_get(json_object_get(report,
		    "explanation"), 0);	/* the why, in the verdict's words */
		if (json_is_string(headline))
			snprintf(why, sizeof(why), "%s",
			    json_string_value(headline));
		else
			report_reasons(report, why, sizeof(why));
		return snprintf(reason, len, "%s", why[0] ? why : "the report "
		    "says it must not be released"), STORE_DATASET_FAILED;
	}
	if (rc == GATE_BAD_INPUT)
		return snprintf(reason, len, "bad input: %s", gs->text),
		    STORE_DATASET_FAILED;
	snprintf(reason, len, "the gate could not decide (exit %d): %s", rc,
	    gs->text);
	return STORE_DATASET_ERROR;
}

/* 422 for an import the gate refused as bad input: where, in the
 * custodian's names, and the dataset that records it. */
static int
reply_bad_input(struct api_req *r, int64_t id, const struct gate_said *gs)
{
	char msg[sizeof(gs->text) + 48];

	snprintf(msg, sizeof(msg), "%s (dataset %lld: a failed import)",
	    gs->text, (long long)id);
	return api_reply(r, 422, json_pack("{s:{s:i, s:s, s:s, s:I, s:s, "
	    "s:I, s:I}}", "error", "status", 422, "code", "input", "message",
	    msg, "dataset", (json_int_t)id, "file", gs->file, "line",
	    (json_int_t)gs->line, "column", (json_int_t)gs->column));
}

/* The report the gate wrote (bounded), or NULL. */
static json_t *
report_load(const char *dir)
{
	char p[4096 + 16];

	snprintf(p, sizeof(p), "%s/report.json", dir);
	return json_load_file(p, JSON_REJECT_DUPLICATES, NULL);
}

/* A passed release's digest into its report ("release_sha256"): what a
 * mount must find byte for byte.  -1: the file is not there. */
static int
release_digest(json_t *report, const char *out, char sha[DIGEST_HEX_SIZE])
{
	if (report == NULL || digest_file_hex(out, sha) != DIGEST_OK)
		return -1;
	json_object_set_new(report, "release_sha256", json_string(sha));
	return 0;
}

/* Record the gate's answer for dataset id (audit first) and reply: the
 * verdict, the figures the gate re-derived from the released file and
 * that file's digest. */
static int
import_finish(struct api_req *r, int64_t id, const char *dir, int rc,
    const char *said, json_t *job, json_t *sources)
{
	char out[4096 + 16], reason[1024], rsha[65] = "", osha[65] = "";
	enum store_dataset_state v;
	json_t *report, *verified;
	struct gate_said gs;
	char *text = NULL;
	int st;

	gate_said_parse(r->cfg, job, sources, said, &gs);
	report = report_load(dir);
	if (report != NULL && gate_report_rename(r->cfg, job, sources, report))
		json_decref(report), report = NULL;
	v = verdict_of(rc, &gs, report, reason, sizeof(reason));
	snprintf(out, sizeof(out), "%s/data.csv", dir);
	if (v == STORE_DATASET_PASSED && release_digest(report, out, osha))
		v = STORE_DATASET_ERROR;
	if (report != NULL && (text = json_dumps(report, JSON_COMPACT |
	    JSON_SORT_KEYS)) != NULL)
		digest_buf_hex(text, strlen(text), rsha);
	verified = json_object_get(report, "verified");
	if (api_audit(r, "dataset.verdict", json_pack("{s:I, s:s, s:s, s:s, "
	    "s:s, s:O}", "id", (json_int_t)id, "verdict",
	    store_dataset_state_name(v), "reason", reason, "report_sha256",
	    rsha, "release_sha256", osha, "verified", verified ? verified :
	    json_null())) != 0) {
		free(text);
		json_decref(report);
		return -1;	/* stays "importing": recovery makes it an error */
	}
	st = store_dataset_finish(r->store, id, v, text, v ==
	    STORE_DATASET_PASSED ? out : "", reason, (int64_t)time(NULL));
	free(text);
	json_decref(report);
	if (st != STORE_OK)
		return api_store_error(r, st, "recording the verdict");
	if (rc == GATE_BAD_INPUT)	/* recorded as failed; refused */
		return reply_bad_input(r, id, &gs);
	return reply_dataset(r, id, 201);
}

/*
 * Imports waiting for the gate runner, oldest first (it answers in
 * order).  Each holds its suspended request: the verdict is recorded
 * when the answer comes, whether or not the client is still there.
 */
struct import_job {
	struct api_req		*r;
	int64_t			 id;
	char			 dir[4096];
	json_t			*job, *sources;	/* owned */
	struct import_job	*next;
};

static void
import_job_free(struct import_job *j)
{
	if (j == NULL)
		return;
	json_decref(j->job);
	json_decref(j->sources);
	free(j);
}
static struct import_job *jobs_head, **jobs_tail = &jobs_head;
static unsigned njobs;

/* Queue the gate for dataset id; the request waits for its verdict. */
static void
import_gate(struct api_req *r, int64_t id, json_t *job, json_t *sources)
{
	struct import_job *j;
	char said[2048];
	int rc;

	if ((j = calloc(1, sizeof(*j))) == NULL) {
		import_finish(r, id, "", -1, "out of memory", job, sources);
		return;
	}
	j->job = json_incref(job);
	j->sources = json_incref(sources);
	snprintf(said, sizeof(said), "%lld", (long long)id);
	if (api_path(j->dir, sizeof(j->dir), "released", said) != 0 ||
	    (mkdir(j->dir, 0700) != 0 && errno != EEXIST)) {
		import_finish(r, id, "", -1, strerror(errno), job, sources);
		import_job_free(j);
		return;
	}
	if ((rc = gate_start(r->cfg, job, j->dir, said, sizeof(said))) != 0) {
		import_finish(r, id, j->dir, rc, said, job, sources);
		import_job_free(j);
		return;
	}
	j->r = r;
	j->id = id;
	*jobs_tail = j;
	jobs_tail = &j->next;
	njobs++;
	api_suspend(r);
}

/* Take the oldest waiting import off the queue. */
static struct import_job *
jobs_pop(void)
{
	struct import_job *j = jobs_head;

	if (j != NULL && (jobs_head = j->next) == NULL)
		jobs_tail = &jobs_head;
	if (j != NULL)
		njobs--;
	return j;
}

void
datasets_gate_input(const struct api_config *cfg, struct store *st)
{
	struct import_job *j;
	char said[2048];
	int rc = -1, gone, ws;

	(void)st;
	gone = gaterunner_recv(cfg->gate, &rc, said, sizeof(said)) != 0;
	if (gone) {
		/* every import it had is lost: each becomes an error */
		ws = gaterunner_stop(cfg->gate);
		log_warnx("%s (%s %d); imports fail from "
		    "now on", said, WIFSIGNALED(ws) ? "killed by signal" :
		    "exit status", WIFSIGNALED(ws) ? WTERMSIG(ws) :
		    WEXITSTATUS(ws));
	}
	while ((j = jobs_pop()) != NULL) {
		import_finish(j->r, j->id, j->dir, rc, said, j->job,
		    j->sources);
		api_resume(j->r);
		import_job_free(j);
		if (!gone)
			break;
	}
}

void
datasets_abandon(void)
{
	struct import_job *j;

	while ((j = jobs_pop()) != NULL) {
		api_error(j->r, 503, "stopping", "the api is stopping; "
		    "dataset %lld stays 'importing' until the next start "
		    "records it as an error", (long long)j->id);
		api_resume(j->r);
		import_job_free(j);
	}
}

int
datasets_import(struct api_req *r)
{
	struct body_import b;
	char job_sha[65], *canon = NULL;
	const char *raw;
	int64_t id = 0;
	int st;

	if (body_dataset_import(r, &b) != 0)
		return -1;
	if (njobs >= IMPORTS_MAX) {
		api_error(r, 503, "busy", "%u imports are waiting for the "
		    "gate; try again later", njobs);
		goto out;
	}
	if (job_uploads_exist(r, b.job) != 0)
		goto out;
	if ((canon = json_dumps(b.job, JSON_COMPACT | JSON_SORT_KEYS)) ==
	    NULL) {
		api_error(r, 503, "memory", "out of memory");
		goto out;
	}
	digest_buf_hex(canon, strlen(canon), job_sha);
	raw = json_string_value(json_object_get(b.job, "data"));
	if (api_audit(r, "dataset.import", json_pack("{s:s, s:s, s:s, s:O, "
	    "s:O}", "name", b.name, "raw_sha256", raw, "job_sha256", job_sha,
	    "job", b.job, "sources", b.sources != NULL ? b.sources :
	    json_null())) != 0)
		goto out;
	st = store_dataset_begin(r->store, b.name, raw, job_sha, canon,
	    (int64_t)time(NULL), &id);
	if (st != STORE_OK) {
		api_audit_refused(r, "dataset.import", st);
		api_store_error(r, st, "starting the import");
		goto out;
	}
	import_gate(r, id, b.job, b.sources);
out:
	free(canon);
	body_import_clear(&b);
	return 0;
}

/* records of a report, or -1. */
static long
report_records(const char *report)
{
	json_t *j = report != NULL ? json_loads(report, 0, NULL) : NULL;
	long n = json_is_integer(json_object_get(j, "records")) ?
	    (long)json_integer_value(json_object_get(j, "records")) : -1;

	json_decref(j);
	return n;
}

/* The released file is byte for byte the one the gate verified (its
 * digest was recorded with the verdict, in the report): 1 yes, 0 no. */
static int
release_unchanged(const struct store_dataset *d)
{
	json_t *j = d->report != NULL ? json_loads(d->report, 0, NULL) : NULL;
	const char *want = json_string_value(json_object_get(j,
	    "release_sha256"));
	char got[DIGEST_HEX_SIZE];
	int ok = want != NULL && digest_file_hex(d->output_path, got) ==
	    DIGEST_OK && strcmp(want, got) == 0;

	json_decref(j);
	return ok;
}

/* Write d at version v into its backend; on failure undo the store. */
static int
mount_write(struct api_req *r, struct store_dataset *d, int64_t v,
    const char *backend)
{
	struct mount_info mi = { d->name, v, d->id, d->raw_sha256,
	    d->output_path, report_records(d->report), d->report };
	char err[PGRUNNER_ERR_MAX];
	int rc = PGM_OK;

	if (!release_unchanged(d)) {
		store_dataset_unmount(r->store, d->id, (int64_t)time(NULL));
		api_audit_refused(r, "dataset.mount", STORE_EGATE);
		return api_error(r, 409, "gate", "dataset %lld: the released "
		    "file is not the one the de-identification gate verified",
		    (long long)d->id), -1;
	}
	if (strcmp(backend, "postgres") == 0) {
		if ((rc = pgrunner_mount(r->cfg->pg, d->name, d->id, v, err,
		    sizeof(err))) == PGM_OK)
			return 0;
	} else if (r->cfg->mount_dir == NULL ||
	    mount_embedded(r->cfg->mount_dir, &mi, err, sizeof(err)) == 0)
		return 0;
	store_dataset_unmount(r->store, d->id, (int64_t)time(NULL));
	api_audit_refused(r, "dataset.mount", STORE_EIO);
	if (strcmp(backend, "postgres") == 0)
		return api_error(r, 502, "postgres", "PostgreSQL: %s: %s",
		    rc < 0 ? "no mounter" : pgm_strerror(rc), err), -1;
	return api_error(r, 507, "mount", "%s", err), -1;
}

/* Take d out of its backend's sight: 0, or -1 with the reply set. */
static int
unmount_backend(struct api_req *r, const struct store_dataset *d)
{
	char err[PGRUNNER_ERR_MAX];
	int rc;

	if (d->state != STORE_DATASET_MOUNTED)
		return 0;
	if (strcmp(d->mount_backend, "postgres") == 0) {
		rc = pgrunner_unmount(r->cfg->pg, d->name, d->id, err,
		    sizeof(err));
		if (rc == PGM_OK || rc == PGM_ENOTMOUNTED)
			return 0;
		return api_error(r, 502, "postgres", "PostgreSQL: %s: %s",
		    rc < 0 ? "no mounter" : pgm_strerror(rc), err), -1;
	}
	if (r->cfg->mount_dir != NULL && unmount_embedded(r->cfg->mount_dir,
	    d->id, err, sizeof(err)) != 0)
		return api_error(r, 507, "mount", "%s", err), -1;
	return 0;
}

int
datasets_mount(struct api_req *r)
{
	struct store_dataset d = { 0 };
	int64_t id = param_id(r), v = 0;
	char backend[16];
	int st;

	if (id == 0 || body_dataset_mount(r, backend, sizeof(backend)) != 0)
		return -1;
	if ((st = store_dataset_get(r->store, id, &d)) != STORE_OK)
		return api_store_error(r, st, "dataset");
	if (api_audit(r, "dataset.mount", json_pack("{s:I, s:s, s:s, s:s, "
	    "s:s}", "id", (json_int_t)id, "name", d.name, "raw_sha256",
	    d.raw_sha256, "job_sha256", d.job_sha256, "backend", backend)) !=
	    0)
		goto out;
	st = store_dataset_mount_on(r->store, id, d.raw_sha256, d.job_sha256,
	    backend, (int64_t)time(NULL), &v);
	if (st != STORE_OK) {
		api_audit_refused(r, "dataset.mount", st);
		api_error(r, 409, st == STORE_EGATE ? "gate" : "state",
		    "dataset %lld is %s%s%s: %s", (long long)id,
		    store_dataset_state_name(d.state), d.reason[0] ? " — " : "",
		    d.reason, st == STORE_EGATE ? "only a dataset that passed "
		    "the de-identification gate can be mounted" :
		    store_strerror(st));
		goto out;
	}
	if (mount_write(r, &d, v, backend) == 0)
		reply_dataset(r, id, 200);
out:
	store_dataset_clear(&d);
	return 0;
}

int
datasets_unmount(struct api_req *r)
{
	struct store_dataset d = { 0 };
	int64_t id = param_id(r);
	int st;

	if (id == 0)
		return -1;
	if ((st = store_dataset_get(r->store, id, &d)) != STORE_OK)
		return api_store_error(r, st, "dataset");
	if (api_audit(r, "dataset.unmount", json_pack("{s:I, s:s, s:s}", "id",
	    (json_int_t)id, "name", d.name, "backend", d.mount_backend)) != 0)
		goto out;
	/* Out of the backend's sight first: never served once unmounted. */
	if (unmount_backend(r, &d) != 0)
		goto out;
	if ((st = store_dataset_unmount(r->store, id, (int64_t)time(NULL))) !=
	    STORE_OK) {
		api_audit_refused(r, "dataset.unmount", st);
		api_store_error(r, st, "unmounting");
		goto out;
	}
	reply_dataset(r, id, 200);
out:
	store_dataset_clear(&d);
	return 0;
}

/* Remove path (a file, or the directory when dir) unless it is gone
 * already; else its name and why into why: 0 or -1. */
static int
remove_gone(const char *path, int dir, char *why, size_t len)
{
	if ((dir ? rmdir(path) : unlink(path)) == 0 || errno == ENOENT)
		return 0;
	return snprintf(why, len, "%s: %s", path, strerror(errno)), -1;
}

/* An upload of a removed import, unless another dataset names it. */
static int
remove_upload(struct api_req *r, const char *sha, char *why, size_t len)
{
	char p[4096 + 80];

	if (sha == NULL || store_dataset_uses(r->store, sha) != 0 ||
	    api_path(p, sizeof(p), "spool", sha) != 0)
		return 0;
	return remove_gone(p, 0, why, len);
}

/* A removed import's files: what the gate wrote and each upload no
 * other dataset names.  0, or -1 with what is left in why. */
static int
remove_files(struct api_req *r, const struct store_dataset *d, char *why,
    size_t len)
{
	json_t *job = json_loads(d->job_spec, 0, NULL), *v;
	char id[32], dir[4096], p[4096 + 32];
	const char *key;
	int rc = 0;

	snprintf(id, sizeof(id), "%lld", (long long)d->id);
	if (api_path(dir, sizeof(dir), "released", id) == 0) {
		snprintf(p, sizeof(p), "%s/data.csv", dir);
		rc |= remove_gone(p, 0, why, len);
		snprintf(p, sizeof(p), "%s/report.json", dir);
		rc |= remove_gone(p, 0, why, len);
		rc |= remove_gone(dir, 1, why, len);
	}
	rc |= remove_upload(r, d->raw_sha256, why, len);
	json_object_foreach(json_object_get(job, "hierarchies"), key, v)
		rc |= remove_upload(r, json_string_value(v), why, len);
	rc |= remove_upload(r, json_string_value(json_object_get(job,
	    "attacker")), why, len);
	json_decref(job);
	return rc;
}

int
datasets_remove(struct api_req *r)
{
	struct store_dataset d = { 0 };
	int64_t id = param_id(r);
	char why[4200];
	int st;

	if (id == 0)
		return -1;
	if ((st = store_dataset_get(r->store, id, &d)) != STORE_OK)
		return api_store_error(r, st, "dataset");
	if (api_audit(r, "dataset.remove", json_pack("{s:I, s:s, s:s, s:s}",
	    "id", (json_int_t)id, "name", d.name, "state",
	    store_dataset_state_name(d.state), "reason", d.reason)) != 0)
		goto out;
	if ((st = store_dataset_remove(r->store, id)) != STORE_OK) {
		api_audit_refused(r, "dataset.remove", st);
		if (st == STORE_ESTATE)
			api_error(r, 409, "state", "dataset %lld is %s: only a "
			    "failed import can be removed", (long long)id,
			    store_dataset_state_name(d.state));
		else
			api_store_error(r, st, "removing");
		goto out;
	}
	if (remove_files(r, &d, why, sizeof(why)) != 0)
		api_error(r, 500, "files", "dataset %lld is removed from the "
		    "store, but not all its files: %s", (long long)id, why);
	else
		api_reply(r, 200, json_pack("{s:I, s:s}", "removed",
		    (json_int_t)id, "name", d.name));
out:
	store_dataset_clear(&d);
	return 0;
}
