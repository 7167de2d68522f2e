/*
 * tests/unit/test-store.c — the state store: migrations, the state
 * machines of datasets and sessions, the gate (in the API and in the
 * schema's triggers), limits, crash recovery, and a SIGKILL in the
 * middle of writes.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/store.h"
#include "tests/tap.h"

#define RAW "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define RAW2 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define JOB "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"

static char dbpath[256];

static struct store *
open_or_die(void)
{
	struct store *s;
	char err[256];

	if (store_open(dbpath, &s, err, sizeof(err)) != STORE_OK) {
		printf("Bail out! store_open: %s\n", err);
		exit(1);
	}
	return s;
}

/* Raw SQL on a separate connection: to poke past the API. */
static int
raw_sql(const char *sql)
{
	sqlite3 *db;
	int rc;

	sqlite3_open(dbpath, &db);
	sqlite3_extended_result_codes(db, 1);
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_close(db);
	return rc;
}

static void
test_migrations(void)
{
	struct store *s = open_or_die();
	char err[256] = "";

	tap_ok(store_schema_version(s) == STORE_SCHEMA_VERSION,
	    "a new database is at schema version %d", STORE_SCHEMA_VERSION);
	store_close(s);
	s = open_or_die();
	tap_ok(store_schema_version(s) == STORE_SCHEMA_VERSION,
	    "reopening keeps the version");
	store_close(s);
	raw_sql("PRAGMA user_version = 99;");
	tap_ok(store_open(dbpath, &s, err, sizeof(err)) == STORE_ESCHEMA &&
	    strstr(err, "newer") != NULL, "a newer schema is refused (%s)", err);
	snprintf(err, sizeof(err), "PRAGMA user_version = %d;",
	    STORE_SCHEMA_VERSION);
	raw_sql(err);
	tap_ok(store_open("/nonexistent/dir/x.db", &s, err, sizeof(err)) ==
	    STORE_EIO && s == NULL, "an unopenable path is a clear error (%s)",
	    err);
}

static void
test_recipients(struct store *s)
{
	struct store_recipient r = { "alice", "Alice A.", 100, 0, 1 }, g;
	struct store_recipient bad = { "../x", "x", 1, 0, 1 };
	struct store_recipient two = { "bob", "Bob", 100, 0, 2 };

	tap_ok(store_recipient_add(s, &r) == STORE_OK, "add a recipient");
	tap_ok(store_recipient_add(s, &r) == STORE_EEXIST,
	    "the same id again: EEXIST");
	tap_ok(store_recipient_add(s, &bad) == STORE_EINVAL,
	    "an id with / is refused");
	bad.max_sessions = 0;
	snprintf(bad.id, sizeof(bad.id), "zero");
	tap_ok(store_recipient_add(s, &bad) == STORE_EINVAL,
	    "max_sessions 0 is refused");
	tap_ok(store_recipient_add(s, &two) == STORE_OK, "add a second one");
	tap_ok(store_recipient_get(s, "alice", &g) == STORE_OK &&
	    strcmp(g.name, "Alice A.") == 0 && g.max_sessions == 1 &&
	    !g.disabled, "get returns what was added");
	tap_ok(store_recipient_get(s, "carol", &g) == STORE_ENOTFOUND,
	    "an unknown recipient: ENOTFOUND");
	tap_ok(store_recipient_disable(s, "carol") == STORE_ENOTFOUND,
	    "disabling an unknown recipient: ENOTFOUND");
	tap_ok(g.allowed_hours[0] == '\0' && strcmp(g.tz, "UTC") == 0,
	    "allowed hours default to any time, UTC");
	tap_ok(store_recipient_set_hours(s, "alice", "Mon-Fri 08:00-18:00",
	    "Europe/Berlin") == STORE_OK && store_recipient_get(s, "alice",
	    &g) == STORE_OK && strcmp(g.allowed_hours, "Mon-Fri 08:00-18:00")
	    == 0 && strcmp(g.tz, "Europe/Berlin") == 0, "set allowed hours");
	tap_ok(store_recipient_set_hours(s, "alice", "Mon-Fri 8-18", "UTC") ==
	    STORE_EINVAL && store_recipient_set_hours(s, "alice", "", "") ==
	    STORE_EINVAL && store_recipient_get(s, "alice", &g) == STORE_OK &&
	    strcmp(g.allowed_hours, "Mon-Fri 08:00-18:00") == 0,
	    "malformed hours or an empty zone change nothing");
	tap_ok(store_recipient_set_hours(s, "carol", "", "UTC") ==
	    STORE_ENOTFOUND, "hours for an unknown recipient: ENOTFOUND");
}

/* A dataset through the gate with the given verdict. */
static int64_t
imported(struct store *s, const char *raw, enum store_dataset_state v)
{
	int64_t id = 0;

	store_dataset_begin(s, "sample", raw, JOB, "{\"k\":5}", 200, &id);
	store_dataset_finish(s, id, v, "{\"gate\":{}}", "/srv/out.csv",
	    v == STORE_DATASET_PASSED ? "" : "PU above threshold", 201);
	return id;
}

static void
test_dataset_gate(struct store *s)
{
	struct store_dataset d = { 0 };
	int64_t id = 0, bad, twin, v = 0;

	tap_ok(store_dataset_begin(s, "sample", "xyz", JOB, "{}", 1, &id) ==
	    STORE_EINVAL, "a malformed digest is refused");
	tap_ok(store_dataset_begin(s, "sample", RAW, JOB, "{}", 200, &id) ==
	    STORE_OK, "begin an import");
	tap_ok(store_dataset_mount(s, id, RAW, JOB, 202, &v) == STORE_EGATE,
	    "mounting while the gate runs: EGATE");
	tap_ok(store_dataset_finish(s, id, STORE_DATASET_PASSED, NULL,
	    "/srv/x.csv", "", 201) == STORE_EINVAL,
	    "a pass without a report is refused");
	tap_ok(store_dataset_finish(s, id, STORE_DATASET_PASSED, "{}",
	    "/srv/x.csv", "", 201) == STORE_OK, "the gate passes it");
	tap_ok(store_dataset_finish(s, id, STORE_DATASET_FAILED, "{}", "",
	    "x", 201) == STORE_ESTATE, "a verdict cannot be given twice");
	tap_ok(store_dataset_mount(s, id, RAW2, JOB, 202, &v) == STORE_EGATE,
	    "mounting for another raw file: EGATE");
	tap_ok(store_dataset_mount(s, id, RAW, RAW2, 202, &v) == STORE_EGATE,
	    "mounting for another job spec: EGATE");
	tap_ok(store_dataset_mount(s, id, RAW, JOB, 202, &v) == STORE_OK &&
	    v == 1, "mounting with the verdict's digests: version 1");
	tap_ok(store_dataset_mount(s, id, RAW, JOB, 203, &v) == STORE_ESTATE,
	    "mounting twice: ESTATE");
	tap_ok(store_dataset_unmount(s, id, 204) == STORE_OK &&
	    store_dataset_mount(s, id, RAW, JOB, 205, &v) == STORE_OK && v == 2,
	    "unmount and mount again: version 2");
	tap_ok(store_dataset_get(s, id, &d) == STORE_OK &&
	    d.state == STORE_DATASET_MOUNTED && d.report != NULL &&
	    strcmp(d.job_spec, "{}") == 0, "get shows it mounted with its report");
	store_dataset_clear(&d);

	twin = imported(s, RAW, STORE_DATASET_PASSED);	/* also "sample" */
	tap_ok(store_dataset_mount(s, twin, RAW, JOB, 206, &v) == STORE_OK &&
	    store_dataset_unmount(s, twin, 206) == STORE_OK,
	    "a second dataset of a mounted one's name is mounted beside it "
	    "(backends know datasets by id; names are labels)");
	tap_ok(store_dataset_unmount(s, id, 206) == STORE_OK &&
	    store_dataset_mount(s, id, RAW, JOB, 206, &v) == STORE_OK,
	    "and the first unmounts and mounts again on its own");

	bad = imported(s, RAW, STORE_DATASET_FAILED);
	tap_ok(store_dataset_mount(s, bad, RAW, JOB, 206, &v) == STORE_EGATE,
	    "a dataset that failed the gate cannot be mounted");
	tap_ok(raw_sql("UPDATE datasets SET state = 'mounted' WHERE state ="
	    " 'failed';") == SQLITE_CONSTRAINT_TRIGGER,
	    "nor by SQL past the API: the schema's trigger refuses");
	tap_ok(raw_sql("UPDATE datasets SET raw_sha256 = '" RAW2 "' WHERE"
	    " state = 'mounted';") == SQLITE_CONSTRAINT_TRIGGER,
	    "a verdict's digests cannot be changed afterwards");
	tap_ok(raw_sql("INSERT INTO datasets (name, raw_sha256, job_sha256,"
	    " job_spec, state, created, updated) VALUES ('x', '" RAW "', '"
	    JOB "', '{}', 'passed', 1, 1);") == SQLITE_CONSTRAINT_TRIGGER,
	    "a dataset cannot be born passed");
	tap_ok(store_dataset_finish(s, 9999, STORE_DATASET_PASSED, "{}", "/x",
	    "", 1) == STORE_ENOTFOUND, "a verdict for an unknown id: ENOTFOUND");
}

/* Only a failed import can be removed; what other datasets name stays. */
static void
test_dataset_remove(struct store *s)
{
	static const char raw3[] = "3333333333333333333333333333333333333333"
	    "333333333333333333333333";
	int64_t failed, error, passed, mounted, v = 0, uses;

	failed = imported(s, raw3, STORE_DATASET_FAILED);
	error = imported(s, raw3, STORE_DATASET_ERROR);
	passed = imported(s, raw3, STORE_DATASET_PASSED);
	store_dataset_begin(s, "other", raw3, JOB, "{}", 300, &mounted);
	store_dataset_finish(s, mounted, STORE_DATASET_PASSED, "{}", "/o.csv",
	    "", 300);
	tap_ok(store_dataset_mount(s, mounted, raw3, JOB, 301, &v) == STORE_OK,
	    "(a fourth import of the file is mounted)");
	tap_ok(store_dataset_uses(s, raw3) == 4, "four datasets name the file");
	tap_ok(store_dataset_remove(s, passed) == STORE_ESTATE &&
	    store_dataset_remove(s, mounted) == STORE_ESTATE,
	    "a pass, mounted or not, cannot be removed: ESTATE");
	tap_ok(store_dataset_remove(s, failed) == STORE_OK &&
	    store_dataset_remove(s, error) == STORE_OK,
	    "a failed import and one the gate could not decide are removed");
	uses = store_dataset_uses(s, raw3);
	tap_ok(uses == 2, "the file is still named by the two passes (%lld)",
	    (long long)uses);
	tap_ok(store_dataset_remove(s, failed) == STORE_ENOTFOUND,
	    "removing it again: ENOTFOUND");
	tap_ok(store_dataset_uses(s, JOB) == 0 &&
	    store_dataset_uses(s, "x") == -1, "a digest nobody names: 0; not "
	    "a digest: -1");
	store_dataset_unmount(s, mounted, 302);
}

static int
count_cb(const struct store_session *ss, void *arg)
{
	(void)ss;
	++*(int *)arg;
	return 0;
}

static void
session_fill(struct store_session *ss, const char *id, const char *who,
    int64_t dataset, int64_t expires)
{
	memset(ss, 0, sizeof(*ss));
	snprintf(ss->id, sizeof(ss->id), "%s", id);
	snprintf(ss->recipient, sizeof(ss->recipient), "%s", who);
	snprintf(ss->cred_hash, sizeof(ss->cred_hash), "$scrypt$test");
	ss->dataset = dataset;
	ss->expires = expires;
	ss->policy = "{}";
}

static void
test_sessions(struct store *s)
{
	struct store_session ss, g;
	int64_t mounted = 1, unmounted, v;
	int n = 0;

	unmounted = imported(s, RAW2, STORE_DATASET_PASSED);
	session_fill(&ss, "s1", "alice", unmounted, 1000);
	tap_ok(store_session_create(s, &ss, 300) == STORE_ENOTMOUNTED,
	    "no session on a dataset that passed but is not mounted: "
	    "ENOTMOUNTED");
	ss.dataset = imported(s, RAW2, STORE_DATASET_FAILED);
	tap_ok(store_session_create(s, &ss, 300) == STORE_EGATE,
	    "no session on a dataset that failed the gate: EGATE");
	ss.dataset = mounted;
	ss.expires = 300;
	tap_ok(store_session_create(s, &ss, 300) == STORE_EINVAL,
	    "no session that is already expired");
	ss.expires = 1000;
	tap_ok(store_session_create(s, &ss, 300) == STORE_OK,
	    "a session on the mounted dataset");
	session_fill(&ss, "s2", "alice", mounted, 1000);
	tap_ok(store_session_create(s, &ss, 300) == STORE_ELIMIT,
	    "alice's second live session is over her limit of 1");
	session_fill(&ss, "s2", "nobody", mounted, 1000);
	tap_ok(store_session_create(s, &ss, 300) == STORE_ENOTFOUND,
	    "an unknown recipient: ENOTFOUND");
	tap_ok(store_session_start(s, "s1", 301) == STORE_OK &&
	    store_session_start(s, "s1", 302) == STORE_ESTATE,
	    "start once; a second start: ESTATE");
	tap_ok(store_session_extend(s, "s1", 2000, 303) == STORE_OK,
	    "extend a live session");
	tap_ok(store_session_end(s, "s1", STORE_SESSION_REVOKED, "custodian",
	    304) == STORE_OK && store_session_get(s, "s1", &g) == STORE_OK &&
	    g.state == STORE_SESSION_REVOKED && strcmp(g.reason,
	    "custodian") == 0 && g.expires == 2000, "revoke it");
	store_session_clear(&g);
	tap_ok(store_session_end(s, "s1", STORE_SESSION_ENDED, "", 305) ==
	    STORE_ESTATE, "a revoked session stays revoked");

	session_fill(&ss, "s3", "alice", mounted, 400);
	tap_ok(store_session_create(s, &ss, 305) == STORE_OK,
	    "after the revocation alice may have a new one");
	tap_ok(store_session_expire(s, 400, &n) == STORE_OK && n == 1,
	    "at its expiry it becomes expired (%d)", n);
	tap_ok(store_session_start(s, "s3", 401) == STORE_ESTATE,
	    "an expired session cannot start");
	session_fill(&ss, "s4", "alice", mounted, 900);
	store_session_create(s, &ss, 500);
	tap_ok(store_dataset_unmount(s, mounted, 501) == STORE_OK &&
	    store_session_start(s, "s4", 502) == STORE_OK,
	    "unmounting does not touch sessions by itself (the daemon ends them)");
	store_dataset_mount(s, mounted, RAW, JOB, 503, &v);
	tap_ok(store_recipient_disable(s, "bob") == STORE_OK, "disable bob");
	session_fill(&ss, "s5", "bob", mounted, 1000);
	tap_ok(store_session_create(s, &ss, 504) == STORE_EDISABLED,
	    "a disabled recipient gets no session: EDISABLED");
	n = 0;
	store_session_list(s, count_cb, &n);
	tap_ok(n == 3, "three sessions listed (%d)", n);
}

static void
test_recover(struct store *s)
{
	int64_t id = 0, rec = 0;
	struct store_recording sr;
	int imports = -1, sessions = -1;
	struct store_dataset d = { 0 };

	store_dataset_begin(s, "cut", RAW, JOB, "{}", 600, &id);
	tap_ok(store_recover(s, 700, &imports, &sessions) == STORE_OK &&
	    imports == 1 && sessions == 1,
	    "recovery: 1 import and 1 running session were in flight");
	tap_ok(store_dataset_get(s, id, &d) == STORE_OK &&
	    d.state == STORE_DATASET_ERROR && strstr(d.reason, "interrupted"),
	    "the interrupted import is an error, never a pass");
	store_dataset_clear(&d);
	tap_ok(store_recording_add(s, "s4", "/var/rec/s4.cdsr", 701, &rec) ==
	    STORE_OK && store_recording_close(s, rec, RAW, 1234, 702) ==
	    STORE_OK && store_recording_close(s, rec, RAW, 1, 703) ==
	    STORE_ESTATE, "a recording is indexed and closed once");
	tap_ok(store_recording_find(s, "s4", NULL, &sr) == STORE_OK &&
	    sr.id == rec && strcmp(sr.path, "/var/rec/s4.cdsr") == 0 &&
	    strcmp(sr.sha256, RAW) == 0 && sr.bytes == 1234 && sr.ended == 702
	    && sr.expired == 0, "found by session id: path, digest, size");
	tap_ok(store_recording_find(s, NULL, "/var/rec/s4.cdsr", &sr) ==
	    STORE_OK && strcmp(sr.session, "s4") == 0 &&
	    store_recording_find(s, "s9", NULL, &sr) == STORE_ENOTFOUND,
	    "found by path; an unknown session: ENOTFOUND");
	tap_ok(store_recording_expire(s, rec, 800) == STORE_OK &&
	    store_recording_expire(s, rec, 801) == STORE_ESTATE &&
	    store_recording_find(s, "s4", NULL, &sr) == STORE_OK &&
	    sr.expired == 800, "a closed recording expires once");
	tap_ok(store_recording_add(s, "nope", "/x", 1, &rec) ==
	    STORE_ENOTFOUND, "a recording of an unknown session: ENOTFOUND");
}

/* A child writing imports as fast as it can; SIGKILL it. */
static void
test_sigkill(void)
{
	struct store *s;
	pid_t pid;
	int64_t bad;
	int imports = 0;
	char check[64] = "";
	sqlite3 *db;
	sqlite3_stmt *st;

	if ((pid = fork()) == 0) {
		s = open_or_die();
		for (;;)
			imported(s, RAW, STORE_DATASET_PASSED);
	}
	usleep(300 * 1000);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	s = open_or_die();
	store_recover(s, 800, &imports, NULL);
	tap_ok(imports <= 1, "after SIGKILL at most one import was in flight"
	    " (%d)", imports);
	store_close(s);
	sqlite3_open(dbpath, &db);
	sqlite3_prepare_v2(db, "PRAGMA integrity_check;", -1, &st, NULL);
	if (sqlite3_step(st) == SQLITE_ROW)
		snprintf(check, sizeof(check), "%s", sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_prepare_v2(db, "SELECT count(*) FROM datasets WHERE state ="
	    " 'passed' AND (report IS NULL OR output_path = '');", -1, &st,
	    NULL);
	bad = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
	sqlite3_finalize(st);
	sqlite3_close(db);
	tap_ok(strcmp(check, "ok") == 0, "integrity_check: %s", check);
	tap_ok(bad == 0, "no half-written verdict (%lld)", (long long)bad);
}

int
main(void)
{
	struct store *s;
	const char *tmp = getenv("TMPDIR");

	snprintf(dbpath, sizeof(dbpath), "%s/cdsgate-store-%ld.db",
	    tmp != NULL ? tmp : "/tmp", (long)getpid());
	test_migrations();
	s = open_or_die();
	test_recipients(s);
	test_dataset_gate(s);
	test_dataset_remove(s);
	test_sessions(s);
	test_recover(s);
	store_close(s);
	test_sigkill();
	tap_ok(strcmp(store_strerror(STORE_EGATE),
	    "refused by the de-identification gate") == 0 &&
	    strcmp(store_strerror(999), "unknown store error") == 0,
	    "store_strerror");
	unlink(dbpath);
	{
		char p[300];

		snprintf(p, sizeof(p), "%s-wal", dbpath);
		unlink(p);
		snprintf(p, sizeof(p), "%s-shm", dbpath);
		unlink(p);
	}
	return tap_done();
}
