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
};

_Static_assert(sizeof(migrations) / sizeof(migrations[0]) ==
    STORE_SCHEMA_VERSION, "one migration per schema version");

/* Run migration `from` (-> from + 1) in its own transaction. */
static int
migrate_one(struct store *s, int from, char *err, size_t errlen)
{
	char bump[64];

	snprintf(bump, sizeof(bump), "PRAGMA user_version = %d;", from + 1);
	if (store_exec(s, "BEGIN IMMEDIATE;") != STORE_OK)
		goto fail;
	if (store_exec(s, migrations[from]) != STORE_OK ||
	    store_exec(s, bump) != STORE_OK) {
		snprintf(err, errlen, "migration %d -> %d: %s", from, from + 1,
		    sqlite3_errmsg(s->db));
		store_exec(s, "ROLLBACK;");
		return STORE_ESCHEMA;
	}
	if (store_exec(s, "COMMIT;") != STORE_OK)
		goto fail;
	return STORE_OK;
fail:
	snprintf(err, errlen, "migration %d: %s", from, sqlite3_errmsg(s->db));
	return STORE_EIO;
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
