/*
 * api/body.c — the request bodies of the routes that take one, parsed
 * into structs.  Each function is pure: it reads the body (and the
 * config's limits), never the store, the audit log or the clock, so the
 * handlers act only on what passed here and tests/fuzz/fuzz-api.c can
 * run every one of them on any bytes.
 *
 * Trust: the body is untrusted JSON (parsed by api_body_load).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "api/gate.h"

/* POST /v1/recipients {"id", "name", "max_sessions"?, "allowed_hours"?,
 * "tz"?} */
int
body_recipient_add(struct api_req *r, struct store_recipient *rc)
{
	static const char *const keys[] = { "id", "name", "max_sessions",
	    "allowed_hours", "tz", NULL };
	unsigned long max = 1;

	memset(rc, 0, sizeof(*rc));
	snprintf(rc->tz, sizeof(rc->tz), "UTC");
	if (field_only(r, keys) != 0 || field_id(r, "id", 1, rc->id) != 0 ||
	    field_string(r, "name", 1, sizeof(rc->name) - 1, rc->name,
	    sizeof(rc->name)) != 0 ||
	    field_uint(r, "max_sessions", 0, 1, 100, &max) != 0 ||
	    field_hours(r, 0, rc->allowed_hours, rc->tz) != 0)
		return -1;
	rc->max_sessions = (unsigned)max;
	return 0;
}

/* POST /v1/recipients/{id}/hours {"allowed_hours"?, "tz"?}, at least
 * one; b says which were given (the rest stays as stored). */
int
body_recipient_hours(struct api_req *r, struct body_hours *b)
{
	static const char *const keys[] = { "allowed_hours", "tz", NULL };

	memset(b, 0, sizeof(*b));
	snprintf(b->tz, sizeof(b->tz), "UTC");
	if (field_only(r, keys) != 0)
		return -1;
	b->has_hours = json_object_get(r->body, "allowed_hours") != NULL;
	b->has_tz = json_object_get(r->body, "tz") != NULL;
	if (!b->has_hours && !b->has_tz)
		return api_error(r, 400, "missing", "give 'allowed_hours', "
		    "'tz' or both"), -1;
	return field_hours(r, 0, b->hours, b->tz);
}

/* POST /v1/sessions {"recipient", "dataset", "expires_in"?,
 * "memory_limit_mb"?}: defaults and ceilings from r->cfg. */
int
body_session_create(struct api_req *r, struct body_session *b)
{
	static const char *const keys[] = { "recipient", "dataset",
	    "expires_in", "memory_limit_mb", NULL };
	unsigned long ds = 0;

	memset(b, 0, sizeof(*b));
	b->expires_in = r->cfg->expires_default;
	b->memory_limit_mb = r->cfg->memory_limit_max;
	if (field_only(r, keys) != 0 ||
	    field_id(r, "recipient", 1, b->recipient) != 0 ||
	    field_uint(r, "dataset", 1, 1, (unsigned long)INT64_MAX / 2,
	    &ds) != 0 ||
	    field_uint(r, "expires_in", 0, 1, r->cfg->expires_max,
	    &b->expires_in) != 0 ||
	    field_uint(r, "memory_limit_mb", 0, 512, r->cfg->memory_limit_max,
	    &b->memory_limit_mb) != 0)
		return -1;
	b->dataset = (int64_t)ds;
	return 0;
}

/* POST /v1/sessions/{id}/extend {"expires_in"}: seconds from now. */
int
body_session_extend(struct api_req *r, unsigned long *expires_in)
{
	static const char *const keys[] = { "expires_in", NULL };

	*expires_in = 0;
	if (field_only(r, keys) != 0 || field_uint(r, "expires_in", 1, 1,
	    r->cfg->expires_max, expires_in) != 0)
		return -1;
	return 0;
}

/* A dataset name: [a-z][a-z0-9_]{0,39} (a directory and a SQL name). */
static int
name_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= 40 && s[0] >= 'a' && s[0] <= 'z' &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

/* POST /v1/datasets {"name", "sources"?, ...the gate's job}: the job is
 * what the gate runs; name and sources only label it. */
int
body_dataset_import(struct api_req *r, struct body_import *b)
{
	char msg[512];

	memset(b, 0, sizeof(*b));
	if (field_string(r, "name", 1, 40, b->name, sizeof(b->name)) != 0)
		return -1;
	if (!name_ok(b->name))
		return api_error(r, 422, "invalid", "field 'name': "
		    "[a-z][a-z0-9_]{0,39}"), -1;
	if ((b->job = json_deep_copy(r->body)) == NULL)
		return api_error(r, 503, "memory", "out of memory"), -1;
	json_object_del(b->job, "name");
	b->sources = json_incref(json_object_get(b->job, "sources"));
	json_object_del(b->job, "sources");
	if (gate_sources_check(b->sources, msg, sizeof(msg)) != 0 ||
	    gate_job_check(b->job, msg, sizeof(msg)) != 0) {
		body_import_clear(b);
		return api_error(r, 400, "job", "%s", msg), -1;
	}
	if (gate_job_values(b->job, msg, sizeof(msg)) != 0) {
		body_import_clear(b);
		return api_error(r, 422, "input", "%s", msg), -1;
	}
	return 0;
}

void
body_import_clear(struct body_import *b)
{
	json_decref(b->job);
	json_decref(b->sources);
	b->job = b->sources = NULL;
}

/* POST /v1/datasets/{id}/mount {"backend"?}: the backend it names, else
 * the config's default; "postgres" only when one is configured. */
int
body_dataset_mount(struct api_req *r, char *out, size_t len)
{
	static const char *const keys[] = { "backend", NULL };

	snprintf(out, len, "%s", r->cfg->mount_backend != NULL ?
	    r->cfg->mount_backend : "embedded");
	if (r->body != NULL && (field_only(r, keys) != 0 ||
	    field_string(r, "backend", 0, len - 1, out, len) != 0))
		return -1;
	if (strcmp(out, "embedded") != 0 && strcmp(out, "postgres") != 0)
		return api_error(r, 422, "invalid", "field 'backend': "
		    "\"embedded\" or \"postgres\""), -1;
	if (strcmp(out, "postgres") == 0 && r->cfg->pg == NULL)
		return api_error(r, 409, "backend", "no PostgreSQL backend is "
		    "configured (pg_conninfo, pg_reader_role)"), -1;
	return 0;
}
