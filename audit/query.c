/*
 * audit/query.c — reading the audit log for auditors: every record in
 * order (audit_each), the record types the daemon writes, ISO-8601 times,
 * and the filter of `cdsgate audit list` (type or family, recipient,
 * dataset, session, time), which follows a session's records to its
 * recipient and dataset through its session.create.
 *
 * Library code: no logging, no exit.  Trust: the log is untrusted input,
 * read line by line, bounded (AUDIT_LINE_MAX), each line parsed by
 * jansson; whether the chain holds is audit_verify's word.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "audit/audit.h"

/* Every record type the daemon writes (api/, audit/); each may also be
 * written as "<type>.refused".  A new type is added here: 079-audit-types
 * fails while the api writes a type this list lacks. */
static const char *const known_types[] = {
	"checkpoint",
	"dataset.import", "dataset.verdict", "dataset.mount",
	"dataset.unmount", "dataset.remove",
	"recipient.add", "recipient.disable", "recipient.hours",
	"record_closed", "record_expired", "record_node_removed",
	"session.create", "session.end", "session.expire", "session.extend",
	"session.failed", "session.revoke", "session.pg_role",
	"session.pg_role_drop", "session.pg_role_drop.failed",
	"upload",
	NULL
};

/* The families --type also takes: "session" is every session.* record. */
static const char *const families[] = { "dataset", "recipient", "record",
	"session", NULL };

/* Does type belong to family f ("session" -> "session.create",
 * "record" -> "record_closed")? */
static int
in_family(const char *type, const char *f)
{
	size_t n = strlen(f);

	return strncmp(type, f, n) == 0 && (type[n] == '.' || type[n] == '_');
}

int
audit_type_known(const char *t)
{
	size_t i, n = strlen(t);

	for (i = 0; families[i] != NULL; i++)
		if (strcmp(t, families[i]) == 0)
			return 1;
	for (i = 0; known_types[i] != NULL; i++)
		if (strcmp(t, known_types[i]) == 0 ||
		    (n == strlen(known_types[i]) + 8 &&
		    strncmp(t, known_types[i], n - 8) == 0 &&
		    strcmp(t + n - 8, ".refused") == 0))
			return 1;
	return 0;
}

void
audit_types_list(char *buf, size_t len)
{
	size_t i, o = 0;
	int n;

	buf[0] = '\0';
	for (i = 0; families[i] != NULL; i++)
		if ((n = snprintf(buf + o, len - o, "%s%s", o ? ", " : "",
		    families[i])) < 0 || (size_t)n >= len - o)
			return;
		else
			o += (size_t)n;
	for (i = 0; known_types[i] != NULL; i++)
		if ((n = snprintf(buf + o, len - o, ", %s", known_types[i])) <
		    0 || (size_t)n >= len - o)
			return;
		else
			o += (size_t)n;
}

/* n digits of s as a number in [lo, hi]; -1 if not. */
static int
digits(const char *s, int n, int lo, int hi)
{
	int i, v = 0;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v >= lo && v <= hi ? v : -1;
}

/* "Z", "+HH:MM", "-HH:MM" or "" (UTC) at s: the offset in seconds. */
static int
zone(const char *s, long *off)
{
	int h, m;

	*off = 0;
	if (s[0] == '\0' || strcmp(s, "Z") == 0)
		return 0;
	if ((s[0] != '+' && s[0] != '-') || strlen(s) != 6 || s[3] != ':' ||
	    (h = digits(s + 1, 2, 0, 23)) < 0 ||
	    (m = digits(s + 4, 2, 0, 59)) < 0)
		return -1;
	*off = (s[0] == '-' ? -1 : 1) * (h * 3600L + m * 60L);
	return 0;
}

int
audit_time_parse(const char *s, int end_of_day, int64_t *out)
{
	struct tm tm;
	int y, mo, d, h = 0, mi = 0, se = 0, date_only;
	const char *z;
	long off;

	memset(&tm, 0, sizeof(tm));
	if (strlen(s) < 10 || s[4] != '-' || s[7] != '-' ||
	    (y = digits(s, 4, 1970, 9999)) < 0 ||
	    (mo = digits(s + 5, 2, 1, 12)) < 0 ||
	    (d = digits(s + 8, 2, 1, 31)) < 0)
		return -1;
	date_only = s[10] == '\0';
	z = s + 10;
	if (!date_only) {
		if ((s[10] != 'T' && s[10] != ' ') || strlen(s) < 16 ||
		    s[13] != ':' || (h = digits(s + 11, 2, 0, 23)) < 0 ||
		    (mi = digits(s + 14, 2, 0, 59)) < 0)
			return -1;
		z = s + 16;
		if (*z == ':') {
			if ((se = digits(z + 1, 2, 0, 60)) < 0)
				return -1;
			z += 3;
		}
	}
	if (zone(z, &off) != 0)
		return -1;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	*out = (int64_t)timegm(&tm) - off;
	if (tm.tm_mday != d)
		return -1;	/* 2026-02-30 */
	if (date_only && end_of_day)
		*out += 86399;
	return 0;
}

int
audit_each(const char *log, int (*fn)(json_t *, unsigned long, void *),
    void *arg, char *err, size_t errlen)
{
	char *line;
	unsigned long n = 0;
	struct stat st;
	json_t *o;
	FILE *f;
	int rc = AUDIT_OK, stop = 0;

	if ((f = fopen(log, "re")) == NULL)
		return snprintf(err, errlen, "%s: %s", log, strerror(errno)),
		    AUDIT_EIO;
	/* only a regular file: a FIFO would never end */
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
		fclose(f);
		return snprintf(err, errlen, "%s: not a regular file", log),
		    AUDIT_EIO;
	}
	if ((line = malloc(AUDIT_LINE_MAX + 2)) == NULL) {
		fclose(f);
		return snprintf(err, errlen, "out of memory"), AUDIT_EIO;
	}
	while (!stop && fgets(line, AUDIT_LINE_MAX + 2, f) != NULL) {
		o = json_loads(line, 0, NULL);
		stop = fn(json_is_object(o) ? o : NULL, ++n, arg);
		json_decref(o);
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: %s", log, strerror(errno));
		rc = AUDIT_EIO;
	}
	free(line);
	fclose(f);
	return rc;
}

/* ---- the filter ---- */

struct sess_map {
	char	*id, *recipient, *dataset;
};

struct audit_filter {
	struct audit_query	 q;
	int64_t			 since, until;
	struct sess_map		*s;
	size_t			 ns, caps;
};

int
audit_filter_alloc(const struct audit_query *q, struct audit_filter **out,
    char *err, size_t errlen)
{
	struct audit_filter *f;
	char types[1024];

	*out = NULL;
	if (q->type != NULL && !audit_type_known(q->type)) {
		audit_types_list(types, sizeof(types));
		return snprintf(err, errlen, "unknown record type '%s' (known: "
		    "%s; each also as <type>.refused)", q->type, types),
		    AUDIT_EINVAL;
	}
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return snprintf(err, errlen, "out of memory"), AUDIT_EIO;
	f->q = *q;
	f->since = INT64_MIN;
	f->until = INT64_MAX;
	if (q->since != NULL && audit_time_parse(q->since, 0, &f->since) != 0)
		snprintf(err, errlen, "--since: not an ISO-8601 time: '%s' "
		    "(2026-11-27, 2026-11-27T09:30, 2026-11-27T09:30:00Z, "
		    "...+01:00)", q->since);
	else if (q->until != NULL && audit_time_parse(q->until, 1,
	    &f->until) != 0)
		snprintf(err, errlen, "--until: not an ISO-8601 time: '%s' "
		    "(2026-11-27 is the whole day, 2026-11-27T17:00, "
		    "2026-11-27T17:00:00Z, ...+01:00)", q->until);
	else {
		*out = f;
		return AUDIT_OK;
	}
	free(f);
	return AUDIT_EINVAL;
}

void
audit_filter_free(struct audit_filter *f)
{
	size_t i;

	if (f == NULL)
		return;
	for (i = 0; i < f->ns; i++) {
		free(f->s[i].id);
		free(f->s[i].recipient);
		free(f->s[i].dataset);
	}
	free(f->s);
	free(f);
}

/* A string member, or an integer one as text, into buf ("" if none). */
static const char *
member_text(json_t *d, const char *key, char *buf, size_t len)
{
	json_t *v = json_object_get(d, key);

	if (json_is_string(v))
		snprintf(buf, len, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT,
		    json_integer_value(v));
	else
		buf[0] = '\0';
	return buf;
}

/* Remember a session.create's recipient and dataset. */
static void
learn(struct audit_filter *f, json_t *d)
{
	char id[128], rc[128], ds[32];
	struct sess_map *n;

	if (member_text(d, "id", id, sizeof(id))[0] == '\0')
		return;
	if (f->ns == f->caps) {
		f->caps = f->caps ? 2 * f->caps : 64;
		if ((n = realloc(f->s, f->caps * sizeof(*n))) == NULL) {
			f->caps = f->ns;
			return;
		}
		f->s = n;
	}
	n = &f->s[f->ns];
	n->id = strdup(id);
	n->recipient = strdup(member_text(d, "recipient", rc, sizeof(rc)));
	n->dataset = strdup(member_text(d, "dataset", ds, sizeof(ds)));
	if (n->id != NULL && n->recipient != NULL && n->dataset != NULL)
		f->ns++;
	else {
		free(n->id);
		free(n->recipient);
		free(n->dataset);
	}
}

static const struct sess_map *
session_of(const struct audit_filter *f, const char *id)
{
	size_t i;

	for (i = f->ns; i-- > 0;)
		if (strcmp(f->s[i].id, id) == 0)
			return &f->s[i];
	return NULL;
}

/* What a record is about: its session, recipient and dataset ("" when
 * it names none), the session's from its session.create. */
static void
about(const struct audit_filter *f, const char *type, json_t *d,
    char sess[128], char rcpt[128], char ds[128])
{
	const struct sess_map *m;
	char id[128];

	member_text(d, "id", id, sizeof(id));
	member_text(d, "session", sess, 128);
	member_text(d, "recipient", rcpt, 128);
	member_text(d, "dataset", ds, 128);
	if (sess[0] == '\0' && in_family(type, "session"))
		snprintf(sess, 128, "%s", id);
	if (rcpt[0] == '\0' && in_family(type, "recipient"))
		snprintf(rcpt, 128, "%s", id);
	if (ds[0] == '\0' && in_family(type, "dataset"))
		snprintf(ds, 128, "%s", id);
	if (sess[0] != '\0' && (m = session_of(f, sess)) != NULL) {
		if (rcpt[0] == '\0')
			snprintf(rcpt, 128, "%s", m->recipient);
		if (ds[0] == '\0')
			snprintf(ds, 128, "%s", m->dataset);
	}
}

int
audit_filter_match(struct audit_filter *f, json_t *rec)
{
	const char *type = json_string_value(json_object_get(rec, "type"));
	const char *time = json_string_value(json_object_get(rec, "time"));
	json_t *d = json_object_get(rec, "data");
	char sess[128], rcpt[128], ds[128];
	int64_t t;

	if (type == NULL)
		return 0;
	if (strcmp(type, "session.create") == 0)
		learn(f, d);
	if (f->q.type != NULL && strcmp(type, f->q.type) != 0 &&
	    !in_family(type, f->q.type))
		return 0;
	if ((f->since != INT64_MIN || f->until != INT64_MAX) &&
	    (time == NULL || audit_time_parse(time, 0, &t) != 0 ||
	    t < f->since || t > f->until))
		return 0;
	about(f, type, d, sess, rcpt, ds);
	return (f->q.session == NULL || strcmp(sess, f->q.session) == 0) &&
	    (f->q.recipient == NULL || strcmp(rcpt, f->q.recipient) == 0) &&
	    (f->q.dataset == NULL || strcmp(ds, f->q.dataset) == 0);
}
