/*
 * tests/unit/test-store-migrate.c — a database as schema version 3 made
 * it (its DDL written out here, as released, not taken from
 * store/schema.c), with rows in it, opened by today's store: migrated
 * to "failed" as a session state with every row, foreign key and index
 * kept; and a migration that cannot hold rolls back whole.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/store.h"
#include "tests/tap.h"

#define SHA "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"

/* Schema version 3, as cdsgate wrote it (migrations 1, 2 and 3). */
static const char v3_ddl[] =
	"CREATE TABLE recipients (id TEXT PRIMARY KEY, name TEXT NOT NULL,"
	" created INTEGER NOT NULL, disabled INTEGER NOT NULL DEFAULT 0"
	" CHECK (disabled IN (0, 1)), max_sessions INTEGER NOT NULL"
	" DEFAULT 1 CHECK (max_sessions >= 1), allowed_hours TEXT NOT NULL"
	" DEFAULT '' CHECK (length(allowed_hours) < 256), tz TEXT NOT NULL"
	" DEFAULT 'UTC' CHECK (length(tz) BETWEEN 1 AND 63));"
	"CREATE TABLE datasets (id INTEGER PRIMARY KEY, name TEXT NOT NULL,"
	" raw_sha256 TEXT NOT NULL CHECK (length(raw_sha256) = 64),"
	" job_sha256 TEXT NOT NULL CHECK (length(job_sha256) = 64),"
	" job_spec TEXT NOT NULL, state TEXT NOT NULL CHECK (state IN"
	" ('importing', 'passed', 'failed', 'error', 'mounted')), report TEXT,"
	" output_path TEXT NOT NULL DEFAULT '', reason TEXT NOT NULL"
	" DEFAULT '', mount_version INTEGER NOT NULL DEFAULT 0, created"
	" INTEGER NOT NULL, updated INTEGER NOT NULL, mount_backend TEXT NOT"
	" NULL DEFAULT '' CHECK (mount_backend IN ('', 'embedded',"
	" 'postgres')));"
	"CREATE TRIGGER datasets_born_importing BEFORE INSERT ON datasets"
	" WHEN NEW.state <> 'importing' BEGIN SELECT RAISE(ABORT,"
	" 'gate: a dataset starts as importing'); END;"
	"CREATE TRIGGER datasets_mount_needs_pass BEFORE UPDATE OF state ON"
	" datasets WHEN NEW.state = 'mounted' AND OLD.state <> 'passed' BEGIN"
	" SELECT RAISE(ABORT, 'gate: only a dataset that passed can be"
	" mounted'); END;"
	"CREATE TRIGGER datasets_verdict_final BEFORE UPDATE OF state ON"
	" datasets WHEN OLD.state IN ('failed', 'error') AND NEW.state <>"
	" OLD.state BEGIN SELECT RAISE(ABORT, 'gate: a failed verdict is"
	" final'); END;"
	"CREATE TRIGGER datasets_verdict_fixed BEFORE UPDATE OF raw_sha256,"
	" job_sha256, job_spec ON datasets WHEN OLD.state <> 'importing' BEGIN"
	" SELECT RAISE(ABORT, 'gate: a verdict is for one file and one job');"
	" END;"
	"CREATE TABLE sessions (id TEXT PRIMARY KEY, recipient TEXT NOT NULL"
	" REFERENCES recipients(id), dataset INTEGER NOT NULL REFERENCES"
	" datasets(id), state TEXT NOT NULL CHECK (state IN ('created',"
	" 'running', 'ended', 'revoked', 'expired')), policy TEXT NOT NULL,"
	" cred_hash TEXT NOT NULL, created INTEGER NOT NULL, expires INTEGER"
	" NOT NULL, updated INTEGER NOT NULL, reason TEXT NOT NULL DEFAULT"
	" '');"
	"CREATE INDEX sessions_by_recipient ON sessions(recipient, state);"
	"CREATE TABLE recordings (id INTEGER PRIMARY KEY, session TEXT NOT"
	" NULL REFERENCES sessions(id), path TEXT NOT NULL, sha256 TEXT CHECK"
	" (sha256 IS NULL OR length(sha256) = 64), bytes INTEGER, started"
	" INTEGER NOT NULL, ended INTEGER, expired INTEGER);"
	"CREATE INDEX recordings_by_session ON recordings(session);"
	"CREATE INDEX recordings_by_path ON recordings(path);"
	"PRAGMA user_version = 3;";

/* Rows as a running version 3 left them. */
static const char v3_rows[] =
	"INSERT INTO recipients (id, name, created) VALUES ('alice', 'A', 1);"
	"INSERT INTO datasets (id, name, raw_sha256, job_sha256, job_spec,"
	" state, created, updated) VALUES (1, 'd', '" SHA "', '" SHA "',"
	" '{}', 'importing', 1, 1);"
	"UPDATE datasets SET state = 'passed' WHERE id = 1;"
	"UPDATE datasets SET state = 'mounted', mount_backend = 'embedded'"
	" WHERE id = 1;"
	"INSERT INTO sessions VALUES ('s-run', 'alice', 1, 'running',"
	" '{\"tls\":false}', '$scrypt$x', 10, 5000, 11, '');"
	"INSERT INTO sessions VALUES ('s-old', 'alice', 1, 'revoked', '{}',"
	" '$scrypt$y', 5, 900, 20, 'revoked by uid 0');"
	"INSERT INTO recordings (session, path, sha256, bytes, started, ended)"
	" VALUES ('s-old', '/r/s-old.cdsrec', '" SHA "', 77, 6, 20);";

static char path[256];

/* Raw SQL on a connection of its own (foreign keys off, as SQLite's
 * default): the old cdsgate's writes, and the inspection. */
static int
raw(const char *sql)
{
	sqlite3 *db;
	int rc;

	if (sqlite3_open(path, &db) != SQLITE_OK)
		return -1;
	sqlite3_extended_result_codes(db, 1);
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_close(db);
	return rc;
}

/* One integer from a query on a connection of its own; -1 on error. */
static long long
raw_int(const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	long long v = -1;

	if (sqlite3_open(path, &db) != SQLITE_OK)
		return -1;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

static void
unlink_db(void)
{
	char p[300];

	unlink(path);
	snprintf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", path);
	unlink(p);
}

static void
test_old_rows_kept(void)
{
	struct store *s;
	struct store_session ss;
	struct store_recording sr;
	char err[256] = "";

	unlink_db();
	tap_ok(raw(v3_ddl) == SQLITE_OK && raw(v3_rows) == SQLITE_OK,
	    "a version 3 database with two sessions and a recording");
	tap_ok(raw("UPDATE sessions SET state = 'failed' WHERE id = 's-run';")
	    == SQLITE_CONSTRAINT_CHECK, "its CHECK refuses \"failed\"");
	tap_ok(store_open(path, &s, err, sizeof(err)) == STORE_OK,
	    "today's store opens it (%s)", err);
	if (s == NULL)
		return;
	tap_ok(store_schema_version(s) == 4 && STORE_SCHEMA_VERSION == 4,
	    "migrated to version 4");
	memset(&ss, 0, sizeof(ss));
	tap_ok(store_session_get(s, "s-old", &ss) == STORE_OK &&
	    ss.state == STORE_SESSION_REVOKED && strcmp(ss.reason,
	    "revoked by uid 0") == 0 && ss.created == 5 && ss.expires == 900 &&
	    ss.updated == 20 && strcmp(ss.cred_hash, "$scrypt$y") == 0 &&
	    strcmp(ss.recipient, "alice") == 0 && ss.dataset == 1,
	    "the revoked session is kept field by field");
	store_session_clear(&ss);
	tap_ok(store_session_get(s, "s-run", &ss) == STORE_OK &&
	    ss.state == STORE_SESSION_RUNNING && ss.policy != NULL &&
	    strcmp(ss.policy, "{\"tls\":false}") == 0,
	    "the running session is kept with its policy");
	store_session_clear(&ss);
	tap_ok(store_recording_find(s, "s-old", NULL, &sr) == STORE_OK &&
	    strcmp(sr.sha256, SHA) == 0 && sr.bytes == 77 && sr.ended == 20,
	    "its recording's index entry is kept");
	tap_ok(store_session_end(s, "s-run", STORE_SESSION_FAILED,
	    "its node died", 30) == STORE_OK && store_session_get(s, "s-run",
	    &ss) == STORE_OK && ss.state == STORE_SESSION_FAILED &&
	    strcmp(ss.reason, "its node died") == 0 &&
	    strcmp(store_session_state_name(ss.state), "failed") == 0,
	    "a running session now fails, with its reason");
	store_session_clear(&ss);
	tap_ok(store_session_extend(s, "s-run", 9000, 31) == STORE_ESTATE &&
	    store_session_end(s, "s-run", STORE_SESSION_REVOKED, "x", 32) ==
	    STORE_ESTATE && store_session_start(s, "s-run", 33) ==
	    STORE_ESTATE, "failed is final: no extend, revoke or start");
	tap_ok(store_recording_add(s, "nobody", "/r/x", 34, &sr.id) ==
	    STORE_ENOTFOUND, "foreign keys are on again: a recording of no "
	    "session is refused");
	store_close(s);
	tap_ok(raw_int("SELECT count(*) FROM pragma_foreign_key_list("
	    "'recordings') WHERE \"table\" = 'sessions';") == 1,
	    "recordings still names sessions(id)");
	tap_ok(raw_int("SELECT count(*) FROM sqlite_master WHERE name ="
	    " 'sessions_by_recipient' AND tbl_name = 'sessions';") == 1 &&
	    raw_int("SELECT count(*) FROM sqlite_master WHERE name ="
	    " 'sessions_new';") == 0, "its index is there, the new table's "
	    "name is gone");
	tap_ok(raw_int("SELECT count(*) FROM sessions;") == 2 &&
	    raw_int("SELECT count(*) FROM pragma_integrity_check WHERE"
	    " integrity_check = 'ok';") == 1, "two rows, integrity ok");
}

/* A version 3 database with a recording of no session (written with
 * foreign keys off): the migration's check refuses, nothing changes. */
static void
test_rollback(void)
{
	struct store *s;
	char err[256] = "";

	unlink_db();
	raw(v3_ddl);
	raw(v3_rows);
	raw("INSERT INTO recordings (session, path, started) VALUES"
	    " ('ghost', '/r/g', 1);");
	tap_ok(store_open(path, &s, err, sizeof(err)) == STORE_ESCHEMA &&
	    s == NULL && strstr(err, "3 -> 4") != NULL && strstr(err,
	    "foreign keys") != NULL, "a migration that would leave rows "
	    "naming nothing is refused (%s)", err);
	tap_ok(raw_int("PRAGMA user_version;") == 3 &&
	    raw_int("SELECT count(*) FROM sqlite_master WHERE name ="
	    " 'sessions_new';") == 0 && raw_int("SELECT count(*) FROM"
	    " sqlite_master WHERE sql LIKE '%''failed''%' AND name ="
	    " 'sessions';") == 0 && raw_int("SELECT count(*) FROM sessions;")
	    == 2, "and rolled back whole: version 3, the old table, its rows");
}

int
main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(path, sizeof(path), "%s/cdsgate-migrate-%ld.db",
	    tmp != NULL ? tmp : "/tmp", (long)getpid());
	test_old_rows_kept();
	test_rollback();
	unlink_db();
	return tap_done();
}
