/*
 * store/store.c — opening the state database, statement helpers, the
 * mapping from SQLite results to STORE_* statuses, and crash recovery.
 *
 * Trusted input: the operator's database path; values come from the
 * daemon's own (already validated) requests and are always bound as
 * parameters, never formatted into SQL.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/store.h"
#include "store/store-int.h"

#define BUSY_TIMEOUT_MS	5000

static const char *const status_names[] = {
	[STORE_OK] = "success",
	[STORE_ENOTFOUND] = "no such object",
	[STORE_EEXIST] = "already exists",
	[STORE_EINVAL] = "invalid argument",
	[STORE_EGATE] = "refused by the de-identification gate",
	[STORE_ESTATE] = "not allowed in the current state",
	[STORE_ELIMIT] = "the recipient's max_sessions is reached",
	[STORE_ESCHEMA] = "incompatible or broken database schema",
	[STORE_EIO] = "database error",
	[STORE_ENOTMOUNTED] = "the dataset passed the gate but is not mounted",
	[STORE_EDISABLED] = "the recipient is disabled",
};

const char *
store_strerror(int status)
{
	if (status < 0 || (size_t)status >= sizeof(status_names) /
	    sizeof(status_names[0]) || status_names[status] == NULL)
		return "unknown store error";
	return status_names[status];
}

int
store_status_of(int rc)
{
	switch (rc) {
	case SQLITE_OK:
	case SQLITE_DONE:
	case SQLITE_ROW:
		return STORE_OK;
	case SQLITE_CONSTRAINT_PRIMARYKEY:
	case SQLITE_CONSTRAINT_UNIQUE:
		return STORE_EEXIST;
	case SQLITE_CONSTRAINT_TRIGGER:
		return STORE_EGATE;
	case SQLITE_CONSTRAINT_FOREIGNKEY:
		return STORE_ENOTFOUND;
	case SQLITE_CONSTRAINT_CHECK:
	case SQLITE_CONSTRAINT_NOTNULL:
		return STORE_EINVAL;
	default:
		return STORE_EIO;
	}
}

int
store_exec(struct store *s, const char *sql)
{
	return store_status_of(sqlite3_exec(s->db, sql, NULL, NULL, NULL));
}

int
store_prepare(struct store *s, const char *sql, sqlite3_stmt **st)
{
	*st = NULL;
	if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK)
		return STORE_EIO;
	return STORE_OK;
}

int
store_step_done(struct store *s, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	(void)s;
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? STORE_OK : store_status_of(rc);
}

int64_t
store_count(struct store *s, const char *sql, const char *txt, int64_t num)
{
	sqlite3_stmt *st;
	int64_t n = -1;

	if (store_prepare(s, sql, &st) != STORE_OK)
		return -1;
	if (txt != NULL) {
		sqlite3_bind_text(st, 1, txt, -1, SQLITE_STATIC);
		if (sqlite3_bind_parameter_count(st) >= 2)
			sqlite3_bind_int64(st, 2, num);
	} else
		sqlite3_bind_int64(st, 1, num);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

int
store_tx_begin(struct store *s)
{
	return store_exec(s, "BEGIN IMMEDIATE;");
}

int
store_tx_end(struct store *s, int rc)
{
	if (rc == STORE_OK) {
		if (store_exec(s, "COMMIT;") == STORE_OK)
			return STORE_OK;
		rc = STORE_EIO;
	}
	store_exec(s, "ROLLBACK;");
	return rc;
}

void
store_col_text(sqlite3_stmt *st, int col, char *dst, size_t len)
{
	const unsigned char *t = sqlite3_column_text(st, col);

	snprintf(dst, len, "%s", t != NULL ? (const char *)t : "");
}

char *
store_col_dup(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);

	return t != NULL ? strdup((const char *)t) : NULL;
}

/* Pragmas for durability and integrity, set on every connection. */
static int
store_configure(struct store *s, char *err, size_t errlen)
{
	char *msg = NULL;
	int rc;

	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
	rc = sqlite3_exec(s->db, "PRAGMA journal_mode = WAL;"
	    "PRAGMA synchronous = FULL;"
	    "PRAGMA foreign_keys = ON;"
	    "PRAGMA trusted_schema = OFF;", NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "configuring the database: %s",
		    msg != NULL ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
		return STORE_EIO;
	}
	return STORE_OK;
}

int
store_open(const char *path, struct store **out, char *err, size_t errlen)
{
	struct store *s;
	int rc;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return STORE_EIO;
	}
	rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path, s->db != NULL ?
		    sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
		store_close(s);
		return STORE_EIO;
	}
	if ((rc = store_configure(s, err, errlen)) != STORE_OK ||
	    (rc = store_migrate(s, err, errlen)) != STORE_OK) {
		store_close(s);
		return rc;
	}
	*out = s;
	return STORE_OK;
}

void
store_close(struct store *s)
{
	if (s == NULL)
		return;
	sqlite3_close(s->db);
	free(s);
}

int
store_schema_version(struct store *s)
{
	sqlite3_stmt *st;
	int v = -1;

	if (store_prepare(s, "PRAGMA user_version;", &st) != STORE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

const char *
store_errmsg(struct store *s)
{
	return sqlite3_errmsg(s->db);
}

/* Run one "UPDATE ... SET updated = ?1 ..." and count the rows changed. */
static int
recover_update(struct store *s, const char *sql, int64_t now, int *n)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = store_prepare(s, sql, &st)) != STORE_OK)
		return rc;
	sqlite3_bind_int64(st, 1, now);
	if ((rc = store_step_done(s, st)) == STORE_OK && n != NULL)
		*n = sqlite3_changes(s->db);
	return rc;
}

int
store_recover(struct store *s, int64_t now, int *imports, int *sessions)
{
	int rc;

	if ((rc = store_tx_begin(s)) != STORE_OK)
		return rc;
	rc = recover_update(s, "UPDATE datasets SET state = 'error',"
	    " reason = 'interrupted: the daemon stopped during the import',"
	    " updated = ?1 WHERE state = 'importing';", now, imports);
	if (rc == STORE_OK)
		rc = recover_update(s, "UPDATE sessions SET state = 'ended',"
		    " reason = 'daemon restarted', updated = ?1"
		    " WHERE state = 'running';", now, sessions);
	return store_tx_end(s, rc);
}

int
store_id_valid(const char *id)
{
	size_t i, n = strlen(id);

	if (n == 0 || n >= STORE_ID_MAX || id[0] == '.' || id[0] == '-')
		return 0;
	for (i = 0; i < n; i++) {
		char c = id[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		    c == '-'))
			return 0;
	}
	return 1;
}

int
store_name_index(const char *const *names, size_t n, const char *name,
    int dflt)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (names[i] != NULL && strcmp(name, names[i]) == 0)
			return (int)i;
	return dflt;
}
