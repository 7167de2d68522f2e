/*
 * audit/lookup.c — what the audit log says about one recording, for
 * `cdsgate replay FILE`: the record_closed that vouches for its digest,
 * or failing that the one that names it (its path, its file name or its
 * header's session id) with another digest; and whether a
 * record_expired removed it since.
 *
 * Trust: the log is untrusted input, read line by line, bounded
 * (AUDIT_LINE_MAX), each line parsed by jansson.  This only finds the
 * record; that the chain and its signatures hold is audit_verify's word.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "audit/audit.h"

/* The last part of a path. */
static const char *
base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b != NULL ? b + 1 : path;
}

/* Does a record's data name the recording: its path, its file name (a
 * copy keeps it) or the session id in its header? */
static int
vouch_names(json_t *d, const char *path, const char *session)
{
	const char *f = json_string_value(json_object_get(d, "file"));
	const char *s = json_string_value(json_object_get(d, "session"));

	return (f != NULL && (strcmp(f, path) == 0 ||
	    strcmp(base_name(f), base_name(path)) == 0)) ||
	    (s != NULL && session != NULL && session[0] != '\0' &&
	    strcmp(s, session) == 0);
}

/* What audit_vouch_find is after, for each record. */
struct vouch_ctx {
	const char		*path, *sha256, *session;
	struct audit_vouch	*v;
};

/* One record: a record_closed of this very digest wins; failing that,
 * the last one naming the recording.  A later record_expired of the
 * digest and file found marks it removed. */
static int
vouch_line(json_t *o, unsigned long n, void *arg)
{
	struct vouch_ctx *c = arg;
	struct audit_vouch *v = c->v;
	json_t *d = json_object_get(o, "data");
	const char *type = json_string_value(json_object_get(o, "type"));
	const char *sha = json_string_value(json_object_get(d, "sha256"));
	const char *s = json_string_value(json_object_get(d, "session"));
	const char *f = json_string_value(json_object_get(d, "file"));
	int same = sha != NULL && strcmp(sha, c->sha256) == 0;

	if (type == NULL || sha == NULL || strlen(sha) != 64)
		return 0;
	if (strcmp(type, "record_closed") == 0 &&
	    (same || (!v->same && vouch_names(d, c->path, c->session)))) {
		v->found = 1;
		v->same = same;
		v->line = n;
		v->expired = 0;
		memcpy(v->sha256, sha, 65);
		snprintf(v->session, sizeof(v->session), "%s", s ? s : "");
		snprintf(v->file, sizeof(v->file), "%s", f ? f : "");
	} else if (strcmp(type, "record_expired") == 0 && v->found &&
	    strcmp(v->sha256, sha) == 0 && f != NULL &&
	    strcmp(v->file, f) == 0)
		v->expired = 1;
	return 0;
}

int
audit_vouch_find(const char *log, const char *path, const char *sha256,
    const char *session, struct audit_vouch *v, char *err, size_t errlen)
{
	struct vouch_ctx c = { path, sha256, session, v };

	memset(v, 0, sizeof(*v));
	return audit_each(log, vouch_line, &c, err, errlen);
}
