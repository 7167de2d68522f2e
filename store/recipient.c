/*
 * store/recipient.c — researchers a custodian may give sessions to.
 *
 * Recipients are never deleted (sessions and the audit trail refer to
 * them); they are disabled.
 */
#include "config.h"

#include <string.h>

#include <sqlite3.h>

#include "store/hours.h"
#include "store/store.h"
#include "store/store-int.h"

#define RECIPIENT_COLS "id, name, created, disabled, max_sessions, " \
	"allowed_hours, tz"

/* Allowed hours and zone as hours.c reads them (no zoneinfo lookup
 * here: the caller checks the zone exists, the store its form). */
static int
hours_ok(const char *allowed_hours, const char *tz)
{
	struct hours h;
	char err[128];

	return memchr(allowed_hours, '\0', HOURS_TEXT_MAX) != NULL &&
	    hours_parse(allowed_hours, &h, err, sizeof(err)) == HOURS_OK &&
	    tz[0] != '\0' && memchr(tz, '\0', HOURS_TZ_MAX) != NULL;
}

int
store_recipient_add(struct store *s, const struct store_recipient *r)
{
	sqlite3_stmt *st;
	int rc;

	const char *tz = r->tz[0] != '\0' ? r->tz : "UTC";

	if (!store_id_valid(r->id) || r->max_sessions < 1 ||
	    memchr(r->name, '\0', sizeof(r->name)) == NULL ||
	    !hours_ok(r->allowed_hours, tz))
		return STORE_EINVAL;
	if ((rc = store_prepare(s, "INSERT INTO recipients (" RECIPIENT_COLS
	    ") VALUES (?1, ?2, ?3, 0, ?4, ?5, ?6);", &st)) != STORE_OK)
		return rc;
	sqlite3_bind_text(st, 1, r->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, r->name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, r->created);
	sqlite3_bind_int64(st, 4, r->max_sessions);
	sqlite3_bind_text(st, 5, r->allowed_hours, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, tz, -1, SQLITE_STATIC);
	return store_step_done(s, st);
}

static void
recipient_row(sqlite3_stmt *st, struct store_recipient *r)
{
	memset(r, 0, sizeof(*r));
	store_col_text(st, 0, r->id, sizeof(r->id));
	store_col_text(st, 1, r->name, sizeof(r->name));
	r->created = sqlite3_column_int64(st, 2);
	r->disabled = sqlite3_column_int(st, 3);
	r->max_sessions = (unsigned)sqlite3_column_int64(st, 4);
	store_col_text(st, 5, r->allowed_hours, sizeof(r->allowed_hours));
	store_col_text(st, 6, r->tz, sizeof(r->tz));
}

int
store_recipient_get(struct store *s, const char *id, struct store_recipient *r)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = store_prepare(s, "SELECT " RECIPIENT_COLS
	    " FROM recipients WHERE id = ?1;", &st)) != STORE_OK)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		recipient_row(st, r);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return STORE_OK;
	return rc == SQLITE_DONE ? STORE_ENOTFOUND : store_status_of(rc);
}

int
store_recipient_disable(struct store *s, const char *id)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = store_prepare(s, "UPDATE recipients SET disabled = 1"
	    " WHERE id = ?1;", &st)) != STORE_OK)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	if ((rc = store_step_done(s, st)) != STORE_OK)
		return rc;
	return sqlite3_changes(s->db) == 1 ? STORE_OK : STORE_ENOTFOUND;
}

int
store_recipient_set_hours(struct store *s, const char *id,
    const char *allowed_hours, const char *tz)
{
	sqlite3_stmt *st;
	int rc;

	if (!hours_ok(allowed_hours, tz))
		return STORE_EINVAL;
	if ((rc = store_prepare(s, "UPDATE recipients SET allowed_hours = ?2,"
	    " tz = ?3 WHERE id = ?1;", &st)) != STORE_OK)
		return rc;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, allowed_hours, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, tz, -1, SQLITE_STATIC);
	if ((rc = store_step_done(s, st)) != STORE_OK)
		return rc;
	return sqlite3_changes(s->db) == 1 ? STORE_OK : STORE_ENOTFOUND;
}

int
store_recipient_list(struct store *s,
    int (*fn)(const struct store_recipient *, void *), void *arg)
{
	struct store_recipient r;
	sqlite3_stmt *st;
	int rc;

	if ((rc = store_prepare(s, "SELECT " RECIPIENT_COLS
	    " FROM recipients ORDER BY id;", &st)) != STORE_OK)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		recipient_row(st, &r);
		if (fn(&r, arg) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? STORE_OK : store_status_of(rc);
}
