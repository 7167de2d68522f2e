/*
 * tests/unit/test-audit-query.c — audit/query.c: ISO-8601 times (zones,
 * a date as its first or last second, impossible dates refused), known
 * record types and families, and the filter of `audit list` (a session's
 * records followed to its recipient and dataset), over records as the
 * api writes them; audit_each on a log with a line that is not JSON.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit.h"
#include "tests/tap.h"

/* A record line as the log holds it (type, time, data). */
static json_t *
rec(const char *type, const char *time, const char *data)
{
	return json_pack("{s:s, s:s, s:o}", "type", type, "time", time, "data",
	    json_loads(data, 0, NULL));
}

static const char *const log_recs[][3] = {
	{ "recipient.add", "2026-11-26T08:00:00Z", "{\"id\":\"alice\"}" },
	{ "dataset.mount", "2026-11-26T09:00:00Z", "{\"id\":3,\"name\":\"p\"}" },
	{ "session.create", "2026-11-27T10:00:00Z",
	  "{\"id\":\"s-1\",\"recipient\":\"alice\",\"dataset\":3}" },
	{ "session.create", "2026-11-27T11:00:00Z",
	  "{\"id\":\"s-2\",\"recipient\":\"bob\",\"dataset\":4}" },
	{ "session.revoke", "2026-11-27T12:00:00Z", "{\"id\":\"s-1\"}" },
	{ "record_closed", "2026-11-27T12:00:01Z",
	  "{\"session\":\"s-1\",\"file\":\"/r/s-1.cdsrec\"}" },
	{ "record_closed", "2026-11-28T00:00:00Z",
	  "{\"session\":\"s-2\",\"file\":\"/r/s-2.cdsrec\"}" },
	{ "checkpoint", "2026-11-28T00:00:01Z", "{\"key\":\"k\"}" },
};
#define NRECS	(sizeof(log_recs) / sizeof(log_recs[0]))

/* Which of log_recs q keeps, as a bit mask; -1 if q is refused. */
static long
kept(struct audit_query q)
{
	struct audit_filter *f;
	char err[1024];
	long mask = 0;
	size_t i;

	if (audit_filter_alloc(&q, &f, err, sizeof(err)) != AUDIT_OK)
		return -1;
	for (i = 0; i < NRECS; i++) {
		json_t *o = rec(log_recs[i][0], log_recs[i][1],
		    log_recs[i][2]);

		if (audit_filter_match(f, o))
			mask |= 1L << i;
		json_decref(o);
	}
	audit_filter_free(f);
	return mask;
}

static void
test_times(void)
{
	int64_t t = 0;

	tap_ok(audit_time_parse("2026-11-27T09:30:00Z", 0, &t) == 0 &&
	    t == 1795771800, "a Z time");
	tap_ok(audit_time_parse("2026-11-27T10:30:00+01:00", 0, &t) == 0 &&
	    t == 1795771800, "+01:00 is the same instant");
	tap_ok(audit_time_parse("2026-11-27T09:30", 0, &t) == 0 &&
	    t == 1795771800, "no seconds, no zone: UTC");
	tap_ok(audit_time_parse("2026-11-27", 0, &t) == 0 && t == 1795737600,
	    "a date: its first second");
	tap_ok(audit_time_parse("2026-11-27", 1, &t) == 0 &&
	    t == 1795737600 + 86399, "a date as --until: its last second");
	tap_ok(audit_time_parse("2026-02-30", 0, &t) != 0 &&
	    audit_time_parse("2026-11-27T25:00", 0, &t) != 0 &&
	    audit_time_parse("yesterday", 0, &t) != 0 &&
	    audit_time_parse("2026-11-27T09:30:00+1", 0, &t) != 0 &&
	    audit_time_parse("2026-11-27X", 0, &t) != 0,
	    "impossible dates, bad zones and words are refused");
}

static void
test_types(void)
{
	char list[1024];

	tap_ok(audit_type_known("session") && audit_type_known("record") &&
	    audit_type_known("session.create") &&
	    audit_type_known("session.create.refused") &&
	    audit_type_known("checkpoint"), "types, families, .refused known");
	tap_ok(!audit_type_known("sesion") && !audit_type_known("session.") &&
	    !audit_type_known(".refused") && !audit_type_known(""),
	    "typos are not");
	audit_types_list(list, sizeof(list));
	tap_ok(strstr(list, "session.create") != NULL &&
	    strstr(list, "record_closed") != NULL, "the list names them");
}

static void
test_filter(void)
{
	struct audit_query q;

	memset(&q, 0, sizeof(q));
	tap_ok(kept(q) == 0xff, "no filter: all");
	q.type = "session";
	tap_ok(kept(q) == 0x1c, "--type session: the session.* records "
	    "(%#lx)", kept(q));
	q.type = "record";
	tap_ok(kept(q) == 0x60, "--type record: record_closed");
	q.type = "sesion";
	tap_ok(kept(q) == -1, "--type sesion: refused");
	memset(&q, 0, sizeof(q));
	q.recipient = "alice";
	tap_ok(kept(q) == 0x35, "--recipient alice: recipient.add and s-1's "
	    "records (%#lx)", kept(q));
	q.recipient = NULL;
	q.dataset = "3";
	tap_ok(kept(q) == 0x36, "--dataset 3: its mount and s-1's (%#lx)",
	    kept(q));
	q.dataset = NULL;
	q.session = "s-2";
	tap_ok(kept(q) == 0x48, "--session s-2 (%#lx)", kept(q));
	q.session = NULL;
	q.since = "2026-11-27";
	q.until = "2026-11-27";
	tap_ok(kept(q) == 0x3c, "--since/--until one day (%#lx)", kept(q));
	q.since = "2026-11-27T11:00:00+01:00";
	q.until = "2026-11-27T11:00:00Z";
	q.recipient = "bob";
	tap_ok(kept(q) == 0x08, "times with zones, and a recipient");
	q.until = "tomorrow";
	tap_ok(kept(q) == -1, "--until tomorrow: refused");
}

static int
count(json_t *o, unsigned long n, void *arg)
{
	int *c = arg;

	c[o == NULL ? 1 : 0]++;
	c[2] = (int)n;
	return 0;
}

static void
test_each(void)
{
	char path[] = "/tmp/cdsgate-query-XXXXXX", err[512];
	int fd = mkstemp(path), c[3] = { 0, 0, 0 };

	if (fd < 0 || write(fd, "{\"a\":1}\nnot json\n{\"b\":2}\n", 25) != 25) {
		tap_skip("cannot write a temporary log");
		return;
	}
	close(fd);
	tap_ok(audit_each(path, count, c, err, sizeof(err)) == AUDIT_OK &&
	    c[0] == 2 && c[1] == 1 && c[2] == 3, "audit_each: 2 records, "
	    "1 bad line handed over as NULL, 3 lines");
	chmod(path, 0);
	unlink(path);
	tap_ok(audit_each(path, count, c, err, sizeof(err)) == AUDIT_EIO &&
	    strstr(err, "No such file") != NULL, "a missing log: %s", err);
}

int
main(void)
{
	test_times();
	test_types();
	test_filter();
	test_each();
	return tap_done();
}
