/*
 * store/schema.c — the store's schema as an ordered list of migrations,
 * and the runner that brings a database file up to date.
 *
 * Trusted input only (our own SQL).  Migration i takes PRAGMA
 * user_version from i to i + 1 inside one transaction: a crash mid-way
 * leaves the old version intact.  Never edit a released migration; add
 * one (and bump STORE_SCHEMA_VERSION in store.h).
 */
#include "config.h"

#include <stdio.h>

#include <sqlite3.h>

#include "store/store.h"
#include "store/store-int.h"

static const char *const migrations[] = {
	/* 0 -> 1: the first schema. */
	"CREATE TABLE recipients ("
	" id TEXT PRIMARY KEY,"
	" name TEXT NOT NULL,"
	" created INTEGER NOT NULL,"
	" disabled INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),"
	" max_sessions INTEGER NOT NULL DEFAULT 1 CHECK (max_sessions >= 1));"

	"CREATE TABLE datasets ("
	" id INTEGER PRIMARY KEY,"
	" name TEXT NOT NULL,"
	" raw_sha256 TEXT NOT NULL CHECK (length(raw_sha256) = 64),"
	" job_sha256 TEXT NOT NULL CHECK (length(job_sha256) = 64),"
	" job_spec TEXT NOT NULL,"
	" state TEXT NOT NULL CHECK (state IN"
	"  ('importing', 'passed', 'failed', 'error', 'mounted')),"
	" report TEXT,"
	" output_path TEXT NOT NULL DEFAULT '',"
	" reason TEXT NOT NULL DEFAULT '',"
	" mount_version INTEGER NOT NULL DEFAULT 0,"
	" created INTEGER NOT NULL,"
	" updated INTEGER NOT NULL);"

	/* The gate, enforced by the database itself. */
	"CREATE TRIGGER datasets_born_importing BEFORE INSERT ON datasets"
	" WHEN NEW.state <> 'importing' BEGIN"
	"  SELECT RAISE(ABORT, 'gate: a dataset starts as importing'); END;"
	"CREATE TRIGGER datasets_mount_needs_pass BEFORE UPDATE OF state"
	" ON datasets WHEN NEW.state = 'mounted' AND OLD.state <> 'passed'"
	" BEGIN SELECT RAISE(ABORT,"
	"  'gate: only a dataset that passed can be mounted'); END;"
	"CREATE TRIGGER datasets_verdict_final BEFORE UPDATE OF state"
	" ON datasets WHEN OLD.state IN ('failed', 'error')"
	" AND NEW.state <> OLD.state BEGIN SELECT RAISE(ABORT,"
	"  'gate: a failed verdict is final'); END;"
	"CREATE TRIGGER datasets_verdict_fixed BEFORE UPDATE OF raw_sha256,"
	" job_sha256, job_spec ON datasets WHEN OLD.state <> 'importing'"
	" BEGIN SELECT RAISE(ABORT,"
	"  'gate: a verdict is for one file and one job'); END;"

	"CREATE TABLE sessions ("
	" id TEXT PRIMARY KEY,"
	" recipient TEXT NOT NULL REFERENCES recipients(id),"
	" dataset INTEGER NOT NULL REFERENCES datasets(id),"
	" state TEXT NOT NULL CHECK (state IN"
	"  ('created', 'running', 'ended', 'revoked', 'expired')),"
	" policy TEXT NOT NULL,"
	" cred_hash TEXT NOT NULL,"
	" created INTEGER NOT NULL,"
	" expires INTEGER NOT NULL,"
	" updated INTEGER NOT NULL,"
	" reason TEXT NOT NULL DEFAULT '');"
	"CREATE INDEX sessions_by_recipient ON sessions(recipient, state);"

	"CREATE TABLE recordings ("
	" id INTEGER PRIMARY KEY,"
	" session TEXT NOT NULL REFERENCES sessions(id),"
	" path TEXT NOT NULL,"
	" sha256 TEXT CHECK (sha256 IS NULL OR length(sha256) = 64),"
	" bytes INTEGER,"
	" started INTEGER NOT NULL,"
	" ended INTEGER);"
	"CREATE INDEX recordings_by_session ON recordings(session);",

	/* 1 -> 2: a recipient's allowed hours (store/hours.h), in a zone
	   ('' = any time) ... */
	"ALTER TABLE recipients ADD COLUMN allowed_hours TEXT NOT NULL"
	" DEFAULT '' CHECK (length(allowed_hours) < 256);"
	"ALTER TABLE recipients ADD COLUMN tz TEXT NOT NULL DEFAULT 'UTC'"
	" CHECK (length(tz) BETWEEN 1 AND 63);"
	/* ... and which backend a mounted dataset is in ('' unmounted;
	   rows mounted before this migration were in the embedded one) */
	"ALTER TABLE datasets ADD COLUMN mount_backend TEXT NOT NULL"
	" DEFAULT '' CHECK (mount_backend IN ('', 'embedded', 'postgres'));"
	"UPDATE datasets SET mount_backend = 'embedded'"
	" WHERE state = 'mounted';",

	/* 2 -> 3: retention removes recordings; the index keeps when. */
	"ALTER TABLE recordings ADD COLUMN expired INTEGER;"
	"CREATE INDEX recordings_by_path ON recordings(path);",

	/* 3 -> 4: a running session can end "failed" (its compute node
	   died).  The states are a CHECK of the table, which SQLite cannot
	   alter: the table is rebuilt as SQLite documents it (a new table,
	   the rows copied, the old one dropped, the new one renamed, its
	   index made again), with foreign keys off around the transaction
	   and checked before it commits (migrate_one).  recordings still
	   names sessions(id). */
	"CREATE TABLE sessions_new ("
	" id TEXT PRIMARY KEY,"
	" recipient TEXT NOT NULL REFERENCES recipients(id),"
	" dataset INTEGER NOT NULL REFERENCES datasets(id),"
	" state TEXT NOT NULL CHECK (state IN"
	"  ('created', 'running', 'ended', 'revoked', 'expired', 'failed')),"
	" policy TEXT NOT NULL,"
	" cred_hash TEXT NOT NULL,"
	" created INTEGER NOT NULL,"
	" expires INTEGER NOT NULL,"
	" updated INTEGER NOT NULL,"
	" reason TEXT NOT NULL DEFAULT '');"
	"INSERT INTO sessions_new (id, recipient, dataset, state, policy,"
	" cred_hash, created, expires, updated, reason)"
	" SELECT id, recipient, dataset, state, policy, cred_hash, created,"
	" expires, updated, reason FROM sessions;"
	"DROP TABLE sessions;"
	"ALTER TABLE sessions_new RENAME TO sessions;"
	"CREATE INDEX sessions_by_recipient ON sessions(recipient, state);",
};

_Static_assert(sizeof(migrations) / sizeof(migrations[0]) ==
    STORE_SCHEMA_VERSION, "one migration per schema version");

/* Run migration `from` (-> from + 1) in its own transaction, foreign
 * keys off around it (a table rebuild drops a table others name; the
 * pragma is a no-op inside a transaction) and checked before COMMIT. */
static int
migrate_one(struct store *s, int from, char *err, size_t errlen)
{
	char bump[64];
	int rc = STORE_OK;

	snprintf(bump, sizeof(bump), "PRAGMA user_version = %d;", from + 1);
	if (store_exec(s, "PRAGMA foreign_keys = OFF;") != STORE_OK ||
	    store_exec(s, "BEGIN IMMEDIATE;") != STORE_OK) {
		rc = STORE_EIO;
		goto out;
	}
	if (store_exec(s, migrations[from]) != STORE_OK ||
	    store_exec(s, bump) != STORE_OK) {
		snprintf(err, errlen, "migration %d -> %d: %s", from, from + 1,
		    sqlite3_errmsg(s->db));
		rc = STORE_ESCHEMA;
	} else if (store_count(s, "SELECT count(*) FROM"
	    " pragma_foreign_key_check;", NULL, 0) != 0) {
		snprintf(err, errlen, "migration %d -> %d: rows would name "
		    "rows that are not there (foreign keys)", from, from + 1);
		rc = STORE_ESCHEMA;
	}
	if (rc == STORE_ESCHEMA)
		store_exec(s, "ROLLBACK;");
	else if (store_exec(s, "COMMIT;") != STORE_OK)
		rc = STORE_EIO;
out:
	if (rc == STORE_EIO)
		snprintf(err, errlen, "migration %d: %s", from,
		    sqlite3_errmsg(s->db));
	if (store_exec(s, "PRAGMA foreign_keys = ON;") != STORE_OK &&
	    rc == STORE_OK) {
		snprintf(err, errlen, "foreign keys back on: %s",
		    sqlite3_errmsg(s->db));
		rc = STORE_EIO;
	}
	return rc;
}

int
store_migrate(struct store *s, char *err, size_t errlen)
{
	int v = store_schema_version(s), rc;

	if (v < 0) {
		snprintf(err, errlen, "reading the schema version: %s",
		    sqlite3_errmsg(s->db));
		return STORE_EIO;
	}
	if (v > STORE_SCHEMA_VERSION) {
		snprintf(err, errlen, "schema version %d is newer than this "
		    "cdsgate's (%d)", v, STORE_SCHEMA_VERSION);
		return STORE_ESCHEMA;
	}
	for (; v < STORE_SCHEMA_VERSION; v++)
		if ((rc = migrate_one(s, v, err, errlen)) != STORE_OK)
			return rc;
	return STORE_OK;
}
