/*
 * audit/report.c — what one session was, for `cdsgate session report`:
 * who (recipient) with what (dataset, its name), when (created, started,
 * ended), how it ended, every connection to it and its login result, what
 * was typed, which URLs the browser asked the backend for, and the
 * recording's digest.  Built from the audit log (session.*, record_closed,
 * dataset.mount), the recording (its header, its connection events and
 * keys: record/) and the network log beside it (gateway/forward.c).
 *
 * Library code: no logging, no exit.  Trust: all three files are read as
 * untrusted input through the bounded readers (audit_each, the recording
 * reader, jansson line by line); whether the chain holds is
 * audit_verify's word, whether the files are the chained ones is said
 * here (their digests against record_closed).  A file that cannot be read
 * is named in the report's "problems", never skipped silently.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "record/record.h"

#define NETLOG_LINE_MAX	(64 * 1024)

/* The report being built, and the audit log facts it needs. */
struct rep {
	json_t		*o;		/* the report */
	const char	*id;
	const char	*dir;		/* recordings looked up here, or NULL */
	char		 dataset[32];	/* its id, for dataset.mount's name */
	int		 found;		/* a session.create of id */
};

/* A problem the auditor must hear about (an unreadable file, a digest
 * that is not the chained one). */
static void
problem(struct rep *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
problem(struct rep *r, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_array_append_new(json_object_get(r->o, "problems"),
	    json_string(buf));
}

/* Unix seconds (or µs / 1e6) as ISO-8601 UTC. */
static json_t *
iso_time(int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	char buf[32];

	if (gmtime_r(&tt, &tm) == NULL)
		return json_null();
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(buf);
}

/* The record's data member key, copied into the report as name. */
static void
copy(json_t *dst, const char *name, json_t *data, const char *key)
{
	json_t *v = json_object_get(data, key);

	if (v != NULL)
		json_object_set(dst, name, v);
}

/* session.create: recipient, dataset, created, expires. */
static void
on_create(struct rep *r, json_t *rec, json_t *d)
{
	json_t *ds = json_object_get(d, "dataset");

	r->found = 1;
	copy(r->o, "recipient", d, "recipient");
	copy(r->o, "dataset", d, "dataset");
	copy(r->o, "created", rec, "time");
	if (json_is_integer(json_object_get(d, "expires")))
		json_object_set_new(r->o, "expires", iso_time(
		    json_integer_value(json_object_get(d, "expires"))));
	if (json_is_integer(ds))
		snprintf(r->dataset, sizeof(r->dataset), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(ds));
}

/* record_closed: the recording, its digest, how the session ended. */
static void
on_closed(struct rep *r, json_t *rec, json_t *d, unsigned long line)
{
	json_t *x = json_pack("{s:I}", "audit_line", (json_int_t)line);

	copy(x, "file", d, "file");
	copy(x, "sha256", d, "sha256");
	copy(x, "size", d, "size");
	copy(x, "truncated", d, "truncated");
	if (json_is_integer(json_object_get(d, "duration_us")))
		json_object_set_new(x, "duration_s", json_real((double)
		    json_integer_value(json_object_get(d, "duration_us")) / 1e6));
	copy(x, "network_log", d, "network");
	copy(x, "capture", d, "capture");
	json_object_set_new(r->o, "recording", x);
	copy(r->o, "ended", rec, "time");
	copy(r->o, "end", d, "end");
}

/* session.revoke, .expire, .end, .failed, .extend: what the API did. */
static void
on_session(struct rep *r, json_t *rec, json_t *d, const char *type)
{
	json_t *e = json_pack("{s:s}", "type", type);

	copy(e, "time", rec, "time");
	copy(e, "reason", d, "reason");
	copy(e, "by_uid", d, "by_uid");
	copy(e, "by_token", d, "by_token");
	copy(e, "expires", d, "expires");
	json_array_append_new(json_object_get(r->o, "api_events"), e);
	if (strcmp(type, "session.failed") == 0)
		copy(r->o, "end", d, "reason");
}

/* What both passes read of a record. */
struct recview {
	const char	*type;
	json_t		*d;		/* its data */
	int		 ours;		/* data.id is our session's */
	int		 created;	/* our session's session.create */
};

/* Fill v; 0 when the record has no type (skip it). */
static int
rec_view(const struct rep *r, json_t *rec, struct recview *v)
{
	const char *id;

	v->type = json_string_value(json_object_get(rec, "type"));
	v->d = json_object_get(rec, "data");
	id = json_string_value(json_object_get(v->d, "id"));
	v->ours = id != NULL && strcmp(id, r->id) == 0;
	v->created = v->type != NULL && v->ours &&
	    strcmp(v->type, "session.create") == 0;
	return v->type != NULL;
}

/* One audit record about the session (or the dataset's name). */
static int
report_record(json_t *rec, unsigned long line, void *arg)
{
	struct rep *r = arg;
	struct recview v;
	const char *s;

	if (!rec_view(r, rec, &v))
		return 0;
	s = json_string_value(json_object_get(v.d, "session"));
	if (v.created)
		on_create(r, rec, v.d);
	else if (strcmp(v.type, "record_closed") == 0 && s != NULL &&
	    strcmp(s, r->id) == 0)
		on_closed(r, rec, v.d, line);
	else if (strncmp(v.type, "session.", 8) == 0 && v.ours)
		on_session(r, rec, v.d, v.type);
	return 0;
}

/* The dataset's name: the last dataset.mount of its id before the
 * session (a second pass, now that the id is known). */
static int
report_dataset(json_t *rec, unsigned long line, void *arg)
{
	struct rep *r = arg;
	struct recview v;

	(void)line;
	if (!rec_view(r, rec, &v))
		return 0;
	if (v.created)
		return 1;
	if (strcmp(v.type, "dataset.mount") == 0 &&
	    json_is_integer(json_object_get(v.d, "id")) &&
	    json_integer_value(json_object_get(v.d, "id")) ==
	    strtoll(r->dataset, NULL, 10))
		copy(r->o, "dataset_name", v.d, "name");
	return 0;
}

/* Where a logged file is: its path, or its name in r->dir. */
static void
where(const struct rep *r, const char *file, char *buf, size_t len)
{
	const char *b = strrchr(file, '/');

	if (r->dir != NULL)
		snprintf(buf, len, "%s/%s", r->dir, b != NULL ? b + 1 : file);
	else
		snprintf(buf, len, "%s", file);
}

/* Is the file at path the one whose digest the chain holds? */
static int
digest_matches(struct rep *r, const char *path, const char *want)
{
	char got[65], err[512];

	if (audit_sha256_file(path, got, err, sizeof(err)) != AUDIT_OK) {
		problem(r, "%s", err);
		return 0;
	}
	if (want == NULL || strcmp(got, want) != 0) {
		problem(r, "%s is not the file whose digest is in the audit "
		    "log (sha256 %.16s...): replaced or modified", path, got);
		return 0;
	}
	return 1;
}

/* A worker event of the recording that is about a connection. */
static void
on_event(struct rep *r, const struct record_item *it, uint64_t start_us)
{
	/* each connection event and what it says of the login */
	static const char *const kinds[][2] = { { "connect", "ok" },
	    { "auth_fail", "failed" }, { "client_refused", "refused" },
	    { "front_closed", "none" }, { "disconnect", "-" }, { NULL, NULL } };
	json_t *e = json_loads(it->data, 0, NULL), *c;
	const char *ev = json_string_value(json_object_get(e, "event"));
	size_t i;

	for (i = 0; ev != NULL && kinds[i][0] != NULL; i++)
		if (strcmp(ev, kinds[i][0]) == 0)
			break;
	if (ev != NULL && kinds[i][0] != NULL) {
		c = json_pack("{s:o, s:f, s:s, s:s}", "time", iso_time((int64_t)
		    ((start_us + it->t_us) / 1000000)), "t", it->t_us / 1e6,
		    "event", ev, "login", kinds[i][1]);
		copy(c, "client", e, "client");
		copy(c, "role", e, "role");
		copy(c, "tls", e, "tls");
		copy(c, "websocket", e, "websocket");
		copy(c, "user", e, "user");
		copy(c, "reason", e, "reason");
		copy(c, "seconds", e, "seconds");
		json_array_append_new(json_object_get(r->o, "connections"), c);
	}
	json_decref(e);
}

/* Walk the recording: connection events and the typed text. */
static void
report_recording(struct rep *r, const char *path)
{
	struct record_reader *rd = NULL;
	struct record_text *x = NULL;
	struct record_item it;
	uint64_t start;
	size_t i, n[3] = { 0, 0, 0 };
	char err[512], *shown;

	if (record_reader_open(path, &rd, err, sizeof(err)) != RECORD_OK ||
	    (x = record_text_alloc()) == NULL) {
		problem(r, "%s: %s", path, err);
		record_reader_free(rd);
		return;
	}
	start = record_reader_header(rd)->start_unix_us;
	json_object_set_new(r->o, "started", iso_time((int64_t)(start /
	    1000000)));
	for (i = 0; i < record_reader_nchunks(rd); i++) {
		uint32_t t = record_reader_chunk(rd, i)->type;

		if ((t != RECORD_CH_KEY && t != RECORD_CH_EVNT) ||
		    record_reader_item(rd, i, &it) != RECORD_OK)
			continue;
		if (t == RECORD_CH_EVNT)
			on_event(r, &it, start);
		else {
			record_text_feed(x, it.t_us, it.keysym, it.down,
			    it.verdict);
			if (it.down && it.verdict < 3)
				n[it.verdict]++;
		}
	}
	if ((shown = record_text_shown(x)) != NULL)
		json_object_set_new(r->o, "typed", json_string(shown));
	free(shown);
	json_object_set_new(r->o, "keys", json_pack("{s:I, s:I, s:I}",
	    "delivered", (json_int_t)n[0], "filtered", (json_int_t)n[1],
	    "rate_limited", (json_int_t)n[2]));
	if (record_reader_info(rd)->truncated)
		problem(r, "%s is cut at %.3f s: %s", path,
		    record_reader_info(rd)->trunc_t_us / 1e6,
		    record_reader_info(rd)->trunc_reason);
	record_text_free(x);
	record_reader_free(rd);
}

/* fopen for reading, a regular file only (a FIFO must not hang us). */
static FILE *
open_regular(const char *path)
{
	struct stat st;
	FILE *f;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	if ((f = fdopen(fd, "r")) == NULL)
		close(fd);
	return f;
}

/* The network log: every HTTP request the browser made. */
static void
report_requests(struct rep *r, const char *path)
{
	json_t *reqs = json_object_get(r->o, "requests"), *o, *q;
	char *line;
	FILE *f;

	if ((f = open_regular(path)) == NULL) {
		problem(r, "%s: %s", path, strerror(errno));
		return;
	}
	if ((line = malloc(NETLOG_LINE_MAX)) == NULL) {
		fclose(f);
		return;
	}
	while (fgets(line, NETLOG_LINE_MAX, f) != NULL) {
		o = json_loads(line, 0, NULL);
		if (json_is_object(o) && json_string_value(json_object_get(o,
		    "event")) != NULL && strcmp(json_string_value(
		    json_object_get(o, "event")), "http") == 0) {
			q = json_object();
			copy(q, "time", o, "ts");
			copy(q, "method", o, "method");
			copy(q, "url", o, "target");
			copy(q, "status", o, "status");
			json_array_append_new(reqs, q);
		}
		json_decref(o);
	}
	free(line);
	fclose(f);
}

/* The files record_closed names, each checked against its digest. */
static void
report_files(struct rep *r)
{
	json_t *rec = json_object_get(r->o, "recording"), *net;
	const char *file = json_string_value(json_object_get(rec, "file"));
	char path[4096];

	if (file == NULL) {
		problem(r, "no record_closed for %s in the audit log: the "
		    "session is still running, never started, or its "
		    "recording was not chained", r->id);
		return;
	}
	where(r, file, path, sizeof(path));
	json_object_set_new(rec, "sha256_matches", json_boolean(
	    digest_matches(r, path, json_string_value(json_object_get(rec,
	    "sha256")))));
	report_recording(r, path);
	net = json_object_get(rec, "network_log");
	file = json_string_value(json_object_get(net, "file"));
	if (file == NULL)
		return problem(r, "record_closed names no network log");
	where(r, file, path, sizeof(path));
	json_object_set_new(net, "sha256_matches", json_boolean(
	    digest_matches(r, path, json_string_value(json_object_get(net,
	    "sha256")))));
	report_requests(r, path);
}

int
audit_session_facts(const char *log, const char *id, json_t **out,
    char *err, size_t errlen)
{
	struct rep r = { NULL, id, NULL, "", 0 };
	int rc;

	*out = NULL;
	r.o = json_pack("{s:s, s:[], s:[], s:[], s:[]}", "session", id,
	    "api_events", "connections", "requests", "problems");
	if (r.o == NULL)
		return snprintf(err, errlen, "out of memory"), AUDIT_EIO;
	if ((rc = audit_each(log, report_record, &r, err, errlen)) ==
	    AUDIT_OK && r.found)
		rc = audit_each(log, report_dataset, &r, err, errlen);
	if (rc == AUDIT_OK && !r.found) {
		snprintf(err, errlen, "%s has no session.create for session "
		    "%s", log, id);
		rc = AUDIT_EINVAL;
	}
	if (rc != AUDIT_OK) {
		json_decref(r.o);
		return rc;
	}
	*out = r.o;
	return AUDIT_OK;
}

int
audit_session_report(const char *log, const char *id, const char *dir,
    json_t **out, char *err, size_t errlen)
{
	struct rep r = { NULL, id, dir, "", 1 };
	int rc;

	if ((rc = audit_session_facts(log, id, &r.o, err, errlen)) !=
	    AUDIT_OK)
		return rc;
	report_files(&r);
	*out = r.o;
	return AUDIT_OK;
}
