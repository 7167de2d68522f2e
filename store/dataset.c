/*
 * store/dataset.c — datasets and the de-identification verdict that
 * gates their mounting.
 *
 *   importing --finish--> passed | failed | error
 *   passed --mount--> mounted --unmount--> passed
 *   failed | error --remove--> (gone)
 *
 * failed and error are final (a new attempt is a new import); such an
 * import can be removed, a pass never is.  A mount
 * must name the raw file digest and job digest its verdict was for, so
 * a changed file or a changed job can never ride on an old pass.  The
 * schema's triggers (store/schema.c) enforce the same rules underneath.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/store.h"
#include "store/store-int.h"

#define DATASET_COLS "id, name, raw_sha256, job_sha256, state, created," \
	" updated, mount_version, output_path, reason, job_spec, report," \
	" mount_backend"

static const char *const state_names[] = {
	[STORE_DATASET_IMPORTING] = "importing",
	[STORE_DATASET_PASSED] = "passed",
	[STORE_DATASET_FAILED] = "failed",
	[STORE_DATASET_ERROR] = "error",
	[STORE_DATASET_MOUNTED] = "mounted",
};
#define NSTATES (sizeof(state_names) / sizeof(state_names[0]))

const char *
store_dataset_state_name(enum store_dataset_state st)
{
	return (size_t)st < NSTATES ? state_names[st] : "unknown";
}

static enum store_dataset_state
state_of(const char *name)
{
	/* The schema's CHECK() makes the default unreachable. */
	return (enum store_dataset_state)store_name_index(state_names,
	    NSTATES, name, STORE_DATASET_ERROR);
}

/* 64 lower-case hex digits. */
static int
sha256_hex_valid(const char *h)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f')))
			return 0;
	return h[64] == '\0';
}

void
store_dataset_clear(struct store_dataset *d)
{
	free(d->job_spec);
	free(d->report);
	d->job_spec = d->report = NULL;
}

int
store_dataset_begin(struct store *s, const char *name, const char *raw_sha256,
    const char *job_sha256, const char *job_spec, int64_t now, int64_t *id)
{
	sqlite3_stmt *st;
	int rc;

	if (name[0] == '\0' || strlen(name) >= 128 ||
	    !sha256_hex_valid(raw_sha256) || !sha256_hex_valid(job_sha256))
		return STORE_EINVAL;
	if ((rc = store_prepare(s, "INSERT INTO datasets (name, raw_sha256,"
	    " job_sha256, job_spec, state, created, updated) VALUES"
	    " (?1, ?2, ?3, ?4, 'importing', ?5, ?5);", &st)) != STORE_OK)
		return rc;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, raw_sha256, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, job_sha256, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, job_spec, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, now);
	if ((rc = store_step_done(s, st)) == STORE_OK)
		*id = sqlite3_last_insert_rowid(s->db);
	return rc;
}

/* After a conditional UPDATE changed nothing: missing or wrong state? */
static int
dataset_miss(struct store *s, int64_t id)
{
	int64_t n = store_count(s, "SELECT count(*) FROM datasets"
	    " WHERE id = ?1;", NULL, id);

	if (n < 0)
		return STORE_EIO;
	return n == 0 ? STORE_ENOTFOUND : STORE_ESTATE;
}

/* Step a conditional UPDATE on dataset `id`; 0 rows => dataset_miss. */
static int
dataset_update(struct store *s, sqlite3_stmt *st, int64_t id)
{
	int rc;

	if ((rc = store_step_done(s, st)) != STORE_OK)
		return rc;
	return sqlite3_changes(s->db) == 1 ? STORE_OK : dataset_miss(s, id);
}

int
store_dataset_finish(struct store *s, int64_t id,
    enum store_dataset_state verdict, const char *report,
    const char *output_path, const char *reason, int64_t now)
{
	sqlite3_stmt *st;
	int rc;

	if (verdict != STORE_DATASET_PASSED &&
	    verdict != STORE_DATASET_FAILED && verdict != STORE_DATASET_ERROR)
		return STORE_EINVAL;
	/* A pass without its report and output is no pass. */
	if (verdict == STORE_DATASET_PASSED && (report == NULL ||
	    output_path == NULL || output_path[0] == '\0'))
		return STORE_EINVAL;
	if ((rc = store_prepare(s, "UPDATE datasets SET state = ?2,"
	    " report = ?3, output_path = ?4, reason = ?5, updated = ?6"
	    " WHERE id = ?1 AND state = 'importing';", &st)) != STORE_OK)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, state_names[verdict], -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, report, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, output_path != NULL ? output_path : "", -1,
	    SQLITE_STATIC);
	sqlite3_bind_text(st, 5, reason != NULL ? reason : "", -1,
	    SQLITE_STATIC);
	sqlite3_bind_int64(st, 6, now);
	return dataset_update(s, st, id);
}

/* Why a mount of `id` for these digests is refused (in a transaction). */
static int
mount_refusal(struct store *s, int64_t id, const char *raw, const char *job)
{
	struct store_dataset d = { 0 };
	int rc;

	if ((rc = store_dataset_get(s, id, &d)) != STORE_OK)
		return rc;
	if (d.state == STORE_DATASET_MOUNTED)
		rc = STORE_ESTATE;
	else if (d.state != STORE_DATASET_PASSED ||
	    strcmp(d.raw_sha256, raw) != 0 || strcmp(d.job_sha256, job) != 0)
		rc = STORE_EGATE;
	store_dataset_clear(&d);
	return rc;
}

int
store_dataset_mount(struct store *s, int64_t id, const char *raw_sha256,
    const char *job_sha256, int64_t now, int64_t *version)
{
	return store_dataset_mount_on(s, id, raw_sha256, job_sha256,
	    "embedded", now, version);
}

int
store_dataset_mount_on(struct store *s, int64_t id, const char *raw_sha256,
    const char *job_sha256, const char *backend, int64_t now,
    int64_t *version)
{
	sqlite3_stmt *st;
	int rc;

	if (strcmp(backend, "embedded") != 0 && strcmp(backend, "postgres"))
		return STORE_EINVAL;
	if ((rc = store_tx_begin(s)) != STORE_OK)
		return rc;
	if ((rc = mount_refusal(s, id, raw_sha256, job_sha256)) != STORE_OK)
		return store_tx_end(s, rc);
	if ((rc = store_prepare(s, "UPDATE datasets SET state = 'mounted',"
	    " mount_version = mount_version + 1, updated = ?2,"
	    " mount_backend = ?3 WHERE id = ?1 AND state = 'passed';", &st))
	    != STORE_OK)
		return store_tx_end(s, rc);
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, now);
	sqlite3_bind_text(st, 3, backend, -1, SQLITE_STATIC);
	rc = dataset_update(s, st, id);
	if (rc == STORE_OK)
		*version = store_count(s, "SELECT mount_version FROM datasets"
		    " WHERE id = ?1;", NULL, id);
	return store_tx_end(s, rc);
}

int
store_dataset_unmount(struct store *s, int64_t id, int64_t now)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = store_prepare(s, "UPDATE datasets SET state = 'passed',"
	    " updated = ?2, mount_backend = '' WHERE id = ?1 AND"
	    " state = 'mounted';", &st))
	    != STORE_OK)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, now);
	return dataset_update(s, st, id);
}

int
store_dataset_remove(struct store *s, int64_t id)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = store_prepare(s, "DELETE FROM datasets WHERE id = ?1 AND"
	    " state IN ('failed', 'error');", &st)) != STORE_OK)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	return dataset_update(s, st, id);
}

int64_t
store_dataset_uses(struct store *s, const char *sha256)
{
	if (!sha256_hex_valid(sha256))
		return -1;
	return store_count(s, "SELECT count(*) FROM datasets WHERE"
	    " raw_sha256 = ?1 OR instr(job_spec, ?1) > 0;", sha256, 0);
}

/* Fill d from a DATASET_COLS row; STORE_EIO when a copy fails. */
static int
dataset_row(sqlite3_stmt *st, struct store_dataset *d)
{
	char state[16];

	memset(d, 0, sizeof(*d));
	d->id = sqlite3_column_int64(st, 0);
	store_col_text(st, 1, d->name, sizeof(d->name));
	store_col_text(st, 2, d->raw_sha256, sizeof(d->raw_sha256));
	store_col_text(st, 3, d->job_sha256, sizeof(d->job_sha256));
	store_col_text(st, 4, state, sizeof(state));
	d->state = state_of(state);
	d->created = sqlite3_column_int64(st, 5);
	d->updated = sqlite3_column_int64(st, 6);
	d->mount_version = sqlite3_column_int64(st, 7);
	store_col_text(st, 8, d->output_path, sizeof(d->output_path));
	store_col_text(st, 9, d->reason, sizeof(d->reason));
	store_col_text(st, 12, d->mount_backend, sizeof(d->mount_backend));
	d->job_spec = store_col_dup(st, 10);
	d->report = store_col_dup(st, 11);
	if (d->job_spec == NULL || (d->report == NULL &&
	    sqlite3_column_type(st, 11) != SQLITE_NULL)) {
		store_dataset_clear(d);
		return STORE_EIO;
	}
	return STORE_OK;
}

int
store_dataset_get(struct store *s, int64_t id, struct store_dataset *d)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = store_prepare(s, "SELECT " DATASET_COLS
	    " FROM datasets WHERE id = ?1;", &st)) != STORE_OK)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		rc = dataset_row(st, d);
	else
		rc = rc == SQLITE_DONE ? STORE_ENOTFOUND : store_status_of(rc);
	sqlite3_finalize(st);
	return rc;
}

int
store_dataset_list(struct store *s,
    int (*fn)(const struct store_dataset *, void *), void *arg)
{
	struct store_dataset d;
	sqlite3_stmt *st;
	int rc, stop = 0;

	if ((rc = store_prepare(s, "SELECT " DATASET_COLS
	    " FROM datasets ORDER BY id;", &st)) != STORE_OK)
		return rc;
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (dataset_row(st, &d) != STORE_OK) {
			sqlite3_finalize(st);
			return STORE_EIO;
		}
		stop = fn(&d, arg);
		store_dataset_clear(&d);
	}
	sqlite3_finalize(st);
	if (stop)
		return STORE_OK;
	return rc == SQLITE_DONE ? STORE_OK : store_status_of(rc);
}
