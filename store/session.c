/*
 * store/session.c — provisioned sessions and the index of recordings.
 *
 *   created --start--> running --end--> ended | revoked | expired | failed
 *   created --end--> revoked | expired
 *
 * Only created and running are live; the rest are final.
 *
 * A session can only be provisioned on a mounted dataset for an enabled
 * recipient under its concurrency limit; the checks and the insert are
 * one transaction, so two custodians racing cannot pass the limit.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/store.h"
#include "store/store-int.h"

#define SESSION_COLS "id, recipient, dataset, state, created, expires," \
	" updated, cred_hash, reason, policy"
#define LIVE "state IN ('created', 'running')"

static const char *const state_names[] = {
	[STORE_SESSION_CREATED] = "created",
	[STORE_SESSION_RUNNING] = "running",
	[STORE_SESSION_ENDED] = "ended",
	[STORE_SESSION_REVOKED] = "revoked",
	[STORE_SESSION_EXPIRED] = "expired",
	[STORE_SESSION_FAILED] = "failed",
};
#define NSTATES (sizeof(state_names) / sizeof(state_names[0]))

const char *
store_session_state_name(enum store_session_state st)
{
	return (size_t)st < NSTATES ? state_names[st] : "unknown";
}

static enum store_session_state
state_of(const char *name)
{
	/* The schema's CHECK() makes the default unreachable. */
	return (enum store_session_state)store_name_index(state_names, NSTATES, name,
	    STORE_SESSION_ENDED);
}

void
store_session_clear(struct store_session *ss)
{
	free(ss->policy);
	ss->policy = NULL;
}

/* The provisioning checks, inside the caller's transaction. */
static int
session_admissible(struct store *s, const struct store_session *ss,
    int64_t now)
{
	struct store_recipient r;
	struct store_dataset d = { 0 };
	int64_t live;
	int rc;

	if ((rc = store_recipient_get(s, ss->recipient, &r)) != STORE_OK)
		return rc;
	if (r.disabled)
		return STORE_EDISABLED;
	if ((rc = store_dataset_get(s, ss->dataset, &d)) != STORE_OK)
		return rc;
	rc = d.state == STORE_DATASET_MOUNTED ? STORE_OK :
	    d.state == STORE_DATASET_PASSED ? STORE_ENOTMOUNTED : STORE_EGATE;
	store_dataset_clear(&d);
	if (rc != STORE_OK)
		return rc;
	live = store_count(s, "SELECT count(*) FROM sessions WHERE"
	    " recipient = ?1 AND " LIVE " AND expires > ?2;", ss->recipient,
	    now);
	if (live < 0)
		return STORE_EIO;
	return live < (int64_t)r.max_sessions ? STORE_OK : STORE_ELIMIT;
}

static int
session_insert(struct store *s, const struct store_session *ss, int64_t now)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = store_prepare(s, "INSERT INTO sessions (id, recipient,"
	    " dataset, state, policy, cred_hash, created, expires, updated)"
	    " VALUES (?1, ?2, ?3, 'created', ?4, ?5, ?6, ?7, ?6);", &st))
	    != STORE_OK)
		return rc;
	sqlite3_bind_text(st, 1, ss->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, ss->recipient, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, ss->dataset);
	sqlite3_bind_text(st, 4, ss->policy, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, ss->cred_hash, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 6, now);
	sqlite3_bind_int64(st, 7, ss->expires);
	return store_step_done(s, st);
}

int
store_session_create(struct store *s, const struct store_session *ss,
    int64_t now)
{
	int rc;

	if (!store_id_valid(ss->id) || ss->policy == NULL ||
	    ss->cred_hash[0] == '\0' || ss->expires <= now)
		return STORE_EINVAL;
	if ((rc = store_tx_begin(s)) != STORE_OK)
		return rc;
	if ((rc = session_admissible(s, ss, now)) == STORE_OK)
		rc = session_insert(s, ss, now);
	return store_tx_end(s, rc);
}

static int
session_row(sqlite3_stmt *st, struct store_session *ss)
{
	char state[16];

	memset(ss, 0, sizeof(*ss));
	store_col_text(st, 0, ss->id, sizeof(ss->id));
	store_col_text(st, 1, ss->recipient, sizeof(ss->recipient));
	ss->dataset = sqlite3_column_int64(st, 2);
	store_col_text(st, 3, state, sizeof(state));
	ss->state = state_of(state);
	ss->created = sqlite3_column_int64(st, 4);
	ss->expires = sqlite3_column_int64(st, 5);
	ss->updated = sqlite3_column_int64(st, 6);
	store_col_text(st, 7, ss->cred_hash, sizeof(ss->cred_hash));
	store_col_text(st, 8, ss->reason, sizeof(ss->reason));
	ss->policy = store_col_dup(st, 9);
	return ss->policy != NULL ? STORE_OK : STORE_EIO;
}

int
store_session_get(struct store *s, const char *id, struct store_session *ss)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = store_prepare(s, "SELECT " SESSION_COLS
	    " FROM sessions WHERE id = ?1;", &st)) != STORE_OK)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		rc = session_row(st, ss);
	else
		rc = rc == SQLITE_DONE ? STORE_ENOTFOUND : store_status_of(rc);
	sqlite3_finalize(st);
	return rc;
}

/* Step a conditional UPDATE of session `id`; 0 rows: missing or state. */
static int
session_update(struct store *s, sqlite3_stmt *st, const char *id)
{
	int64_t n;
	int rc;

	if ((rc = store_step_done(s, st)) != STORE_OK)
		return rc;
	if (sqlite3_changes(s->db) == 1)
		return STORE_OK;
	n = store_count(s, "SELECT count(*) FROM sessions WHERE id = ?1;",
	    id, 0);
	if (n < 0)
		return STORE_EIO;
	return n == 0 ? STORE_ENOTFOUND : STORE_ESTATE;
}

int
store_session_start(struct store *s, const char *id, int64_t now)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = store_prepare(s, "UPDATE sessions SET state = 'running',"
	    " updated = ?2 WHERE id = ?1 AND state = 'created'"
	    " AND expires > ?2;", &st)) != STORE_OK)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, now);
	return session_update(s, st, id);
}

int
store_session_end(struct store *s, const char *id,
    enum store_session_state to, const char *reason, int64_t now)
{
	sqlite3_stmt *st;
	int rc;

	if (to != STORE_SESSION_ENDED && to != STORE_SESSION_REVOKED &&
	    to != STORE_SESSION_EXPIRED && to != STORE_SESSION_FAILED)
		return STORE_EINVAL;
	/* A session that never ran did not "end" or "fail": it was
	   revoked or expired. */
	if ((rc = store_prepare(s, "UPDATE sessions SET state = ?2,"
	    " reason = ?3, updated = ?4 WHERE id = ?1 AND (state = 'running'"
	    " OR (state = 'created' AND ?2 NOT IN ('ended', 'failed')));",
	    &st)) != STORE_OK)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, state_names[to], -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, reason != NULL ? reason : "", -1,
	    SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, now);
	return session_update(s, st, id);
}

int
store_session_extend(struct store *s, const char *id, int64_t expires,
    int64_t now)
{
	sqlite3_stmt *st;
	int rc;

	if (expires <= now)
		return STORE_EINVAL;
	if ((rc = store_prepare(s, "UPDATE sessions SET expires = ?2,"
	    " updated = ?3 WHERE id = ?1 AND " LIVE " AND expires > ?3;",
	    &st)) != STORE_OK)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, expires);
	sqlite3_bind_int64(st, 3, now);
	return session_update(s, st, id);
}

int
store_session_expire(struct store *s, int64_t now, int *n)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = store_prepare(s, "UPDATE sessions SET state = 'expired',"
	    " reason = 'expired', updated = ?1 WHERE " LIVE
	    " AND expires <= ?1;", &st)) != STORE_OK)
		return rc;
	sqlite3_bind_int64(st, 1, now);
	if ((rc = store_step_done(s, st)) == STORE_OK && n != NULL)
		*n = sqlite3_changes(s->db);
	return rc;
}

int
store_session_list(struct store *s,
    int (*fn)(const struct store_session *, void *), void *arg)
{
	struct store_session ss;
	sqlite3_stmt *st;
	int rc, stop = 0;

	if ((rc = store_prepare(s, "SELECT " SESSION_COLS
	    " FROM sessions ORDER BY created, id;", &st)) != STORE_OK)
		return rc;
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (session_row(st, &ss) != STORE_OK) {
			sqlite3_finalize(st);
			return STORE_EIO;
		}
		stop = fn(&ss, arg);
		store_session_clear(&ss);
	}
	sqlite3_finalize(st);
	if (stop)
		return STORE_OK;
	return rc == SQLITE_DONE ? STORE_OK : store_status_of(rc);
}

int
store_recording_add(struct store *s, const char *session, const char *path,
    int64_t now, int64_t *id)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = store_prepare(s, "INSERT INTO recordings (session, path,"
	    " started) VALUES (?1, ?2, ?3);", &st)) != STORE_OK)
		return rc;
	sqlite3_bind_text(st, 1, session, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, now);
	if ((rc = store_step_done(s, st)) == STORE_OK)
		*id = sqlite3_last_insert_rowid(s->db);
	return rc;
}

int
store_recording_close(struct store *s, int64_t id, const char *sha256,
    int64_t bytes, int64_t now)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = store_prepare(s, "UPDATE recordings SET sha256 = ?2,"
	    " bytes = ?3, ended = ?4 WHERE id = ?1 AND ended IS NULL;", &st))
	    != STORE_OK)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, sha256, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, bytes);
	sqlite3_bind_int64(st, 4, now);
	if ((rc = store_step_done(s, st)) != STORE_OK)
		return rc;
	return sqlite3_changes(s->db) == 1 ? STORE_OK : STORE_ESTATE;
}

/* One row of recordings into *out. */
static void
recording_row(sqlite3_stmt *st, struct store_recording *out)
{
	const unsigned char *t;

	memset(out, 0, sizeof(*out));
	out->id = sqlite3_column_int64(st, 0);
	t = sqlite3_column_text(st, 1);
	snprintf(out->session, sizeof(out->session), "%s", t ? (const char *)t :
	    "");
	t = sqlite3_column_text(st, 2);
	snprintf(out->path, sizeof(out->path), "%s", t ? (const char *)t : "");
	t = sqlite3_column_text(st, 3);
	snprintf(out->sha256, sizeof(out->sha256), "%s", t ? (const char *)t :
	    "");
	out->bytes = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 :
	    sqlite3_column_int64(st, 4);
	out->started = sqlite3_column_int64(st, 5);
	out->ended = sqlite3_column_int64(st, 6);
	out->expired = sqlite3_column_int64(st, 7);
}

int
store_recording_find(struct store *s, const char *session,
    const char *by_path, struct store_recording *out)
{
	sqlite3_stmt *st;
	int rc;

	if ((session == NULL) == (by_path == NULL))
		return STORE_EINVAL;
	if ((rc = store_prepare(s, session != NULL ?
	    "SELECT id, session, path, sha256, bytes, started, ended, expired"
	    " FROM recordings WHERE session = ?1 ORDER BY id DESC LIMIT 1;" :
	    "SELECT id, session, path, sha256, bytes, started, ended, expired"
	    " FROM recordings WHERE path = ?1 ORDER BY id DESC LIMIT 1;",
	    &st)) != STORE_OK)
		return rc;
	sqlite3_bind_text(st, 1, session != NULL ? session : by_path, -1,
	    SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		recording_row(st, out);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return STORE_OK;
	return rc == SQLITE_DONE ? STORE_ENOTFOUND : store_status_of(rc);
}

int
store_recording_expire(struct store *s, int64_t id, int64_t now)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = store_prepare(s, "UPDATE recordings SET expired = ?2"
	    " WHERE id = ?1 AND ended IS NOT NULL AND expired IS NULL;", &st))
	    != STORE_OK)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, now);
	if ((rc = store_step_done(s, st)) != STORE_OK)
		return rc;
	return sqlite3_changes(s->db) == 1 ? STORE_OK : STORE_ESTATE;
}
