/*
 * mount/postgres.c — mount and unmount released datasets in PostgreSQL
 * for an external BI tool (Superset, Metabase, RStudio).
 *
 * Trust level: runs with the custodian's admin role (conninfo) and
 * decides what the reader role may see, so it fails closed: a reader
 * role that could see or do more than SELECT (check_reader) is refused,
 * every step runs in one transaction that is rolled back on the first
 * error (a killed connection rolls back on the server by itself), and
 * identifiers are always quoted with PQescapeIdentifier.  Library code:
 * no logging, no exit; status codes and the caller's err buffer.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "mount/pg-int.h"
#include "mount/postgres.h"

#define SQL_MAX		(1024u * 1024)	/* CREATE TABLE with 4096 columns */
#define LOCK_TIMEOUT_MS	30000		/* default wait for BI queries */

/* The quoted names one mount touches. */
struct names {
	char	*schema;	/* "cdsgate_<id>" */
	char	*table;		/* "<name>_v<version>" */
	char	*view;		/* "<name>" */
	char	*reader;	/* the reader role */
	char	 schema_raw[PGM_NAME_MAX + 1];
};

static const char *const pgm_errors[] = {
	[PGM_OK] = "success",
	[PGM_EINPUT] = "invalid input",
	[PGM_ECONNECT] = "cannot connect to the database",
	[PGM_ESQL] = "database error",
	[PGM_EROLE] = "reader role refused",
	[PGM_EEXIST] = "version already mounted",
	[PGM_ENOTMOUNTED] = "dataset not mounted",
	[PGM_ENOMEM] = "out of memory",
	[PGM_EIO] = "cannot read the dataset file",
};

const char *
pgm_strerror(int status)
{
	if (status < 0 || (size_t)status >= sizeof(pgm_errors) /
	    sizeof(pgm_errors[0]) || pgm_errors[status] == NULL)
		return "unknown status";
	return pgm_errors[status];
}

int
pgm_ds_valid(const struct pgm_ds *ds)
{
	return ds != NULL && ds->id >= 1 && pgm_dataset_valid(ds->name);
}

int
pgm_dataset_valid(const char *name)
{
	size_t n;

	if (name == NULL)
		return 0;
	n = strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_");
	return n > 0 && n <= PGM_DATASET_MAX && name[n] == '\0';
}

static void
ignore_notice(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

/* Why: one place that connects, silences libpq's stderr notices (a
 * library must not print) and pins encoding and search_path, so no
 * object in a writable schema can shadow what our statements name. */
static int
connect_db(const struct pg_target *t, PGconn **out, char *err, size_t errlen)
{
	PGconn *c;
	PGresult *res;
	int r = PGM_OK;

	*out = NULL;
	if (t == NULL || t->conninfo == NULL)
		return pgm_fail(err, errlen, PGM_EINPUT, "no conninfo");
	if ((c = PQconnectdb(t->conninfo)) == NULL)
		return pgm_fail(err, errlen, PGM_ENOMEM, "out of memory");
	if (PQstatus(c) != CONNECTION_OK) {
		r = pgm_fail_pq(c, NULL, "connect", err, errlen);
		PQfinish(c);
		return r == PGM_ESQL ? PGM_ECONNECT : r;
	}
	PQsetNoticeProcessor(c, ignore_notice, NULL);
	res = PQexec(c, "SET client_encoding = 'UTF8'; "
	    "SET search_path = pg_catalog, pg_temp");
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		r = pgm_fail_pq(c, res, "connect", err, errlen);
	PQclear(res);
	if (r != PGM_OK)
		PQfinish(c);
	else
		*out = c;
	return r;
}

/* Run one statement that returns no rows; name the step on failure. */
static int
exec_cmd(PGconn *c, const char *sql, const char *step, char *err,
    size_t errlen)
{
	PGresult *res = PQexec(c, sql);
	int r = PGM_OK;

	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		r = pgm_fail_pq(c, res, step, err, errlen);
	PQclear(res);
	return r;
}

/* Why: every statement is built from quoted names into a bounded
 * buffer; a name can never break out of its quotes or the buffer. */
static int
exec_fmt(PGconn *c, const char *step, char *err, size_t errlen,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int
exec_fmt(PGconn *c, const char *step, char *err, size_t errlen,
    const char *fmt, ...)
{
	char sql[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(sql))
		return pgm_fail(err, errlen, PGM_EINPUT, "%s: names too long",
		    step);
	return exec_cmd(c, sql, step, err, errlen);
}

/* Why: the reader role is the whole point of the mount; refuse one that
 * could see or do more: a superuser, BYPASSRLS, CREATEROLE (which can
 * grant itself other roles), the admin role or a member of it, or a
 * member of the predefined read-all/write-all roles. */
static int
check_reader(PGconn *c, const char *role, char *err, size_t errlen)
{
	const char *params[1] = { role };
	PGresult *res;
	int r = PGM_OK;

	res = PQexecParams(c, "SELECT r.rolsuper OR r.rolbypassrls "
	    "OR r.rolcreaterole OR pg_has_role(r.oid, current_user, 'MEMBER') "
	    "OR EXISTS (SELECT 1 FROM pg_roles g WHERE g.rolname IN "
	    "('pg_read_all_data', 'pg_write_all_data') "
	    "AND pg_has_role(r.oid, g.oid, 'MEMBER')) "
	    "FROM pg_roles r WHERE r.rolname = $1", 1, NULL, params, NULL,
	    NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		r = pgm_fail_pq(c, res, "reader role", err, errlen);
	else if (PQntuples(res) != 1)
		r = pgm_fail(err, errlen, PGM_EROLE,
		    "reader role \"%.63s\" does not exist", role);
	else if (strcmp(PQgetvalue(res, 0, 0), "f") != 0)
		r = pgm_fail(err, errlen, PGM_EROLE, "reader role \"%.63s\" "
		    "is too powerful (superuser, BYPASSRLS, CREATEROLE, "
		    "read/write-all, or shares the admin role)",
		    role);
	PQclear(res);
	return r;
}

static void
names_free(struct names *n)
{
	PQfreemem(n->schema);
	PQfreemem(n->table);
	PQfreemem(n->view);
	PQfreemem(n->reader);
	memset(n, 0, sizeof(*n));
}

/* Why: derive every identifier from the validated dataset in one place,
 * each quoted by libpq: the schema by the store's id (two datasets of
 * one name never share it), the view and tables by the name (a label
 * the BI tool shows). */
static int
names_make(PGconn *c, const struct pgm_ds *ds, int64_t version,
    const char *reader, struct names *n, char *err, size_t errlen)
{
	char table[PGM_NAME_MAX + 1];

	memset(n, 0, sizeof(*n));
	snprintf(n->schema_raw, sizeof(n->schema_raw), "cdsgate_%" PRId64,
	    ds->id);
	snprintf(table, sizeof(table), "%s_v%" PRId64, ds->name, version);
	n->schema = PQescapeIdentifier(c, n->schema_raw, strlen(n->schema_raw));
	n->table = PQescapeIdentifier(c, table, strlen(table));
	n->view = PQescapeIdentifier(c, ds->name, strlen(ds->name));
	if (reader != NULL)
		n->reader = PQescapeIdentifier(c, reader, strlen(reader));
	if (n->schema == NULL || n->table == NULL || n->view == NULL ||
	    (reader != NULL && n->reader == NULL)) {
		names_free(n);
		return pgm_fail_pq(c, NULL, "quote identifier", err, errlen);
	}
	return PGM_OK;
}

/* Why: mounts of one dataset are serialised (an advisory lock per
 * schema), and a BI query holding the view makes us fail after a bound
 * instead of queueing every later query behind our lock. */
static int
begin_tx(PGconn *c, const struct names *n, unsigned lock_ms, char *err,
    size_t errlen)
{
	const char *params[1] = { n->schema_raw };
	PGresult *res;
	int r;

	if ((r = exec_cmd(c, "BEGIN", "BEGIN", err, errlen)) != PGM_OK ||
	    (r = exec_fmt(c, "BEGIN", err, errlen,
	    "SET LOCAL lock_timeout = %u", lock_ms > 0 ? lock_ms :
	    LOCK_TIMEOUT_MS)) != PGM_OK)
		return r;
	res = PQexecParams(c, "SELECT pg_advisory_xact_lock(hashtext($1))",
	    1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		r = pgm_fail_pq(c, res, "lock", err, errlen);
	PQclear(res);
	return r;
}

/* Why: a COMMIT in an aborted transaction "succeeds" as ROLLBACK, so
 * check the command tag, not just the status. */
static int
commit_tx(PGconn *c, char *err, size_t errlen)
{
	PGresult *res = PQexec(c, "COMMIT");
	int r = PGM_OK;

	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		r = pgm_fail_pq(c, res, "COMMIT", err, errlen);
	else if (strcmp(PQcmdStatus(res), "COMMIT") != 0)
		r = pgm_fail(err, errlen, PGM_ESQL, "COMMIT: rolled back");
	PQclear(res);
	return r;
}

/* Why: one schema serves one reader role; a schema another role can
 * use means the configuration changed, and that needs an unmount. */
static int
check_grantees(PGconn *c, const struct names *n, const char *reader,
    char *err, size_t errlen)
{
	const char *params[2] = { n->schema_raw, reader };
	PGresult *res;
	int r = PGM_OK;

	res = PQexecParams(c, "SELECT r.rolname FROM pg_namespace s "
	    "CROSS JOIN LATERAL aclexplode(s.nspacl) a "
	    "JOIN pg_roles r ON r.oid = a.grantee "
	    "WHERE s.nspname = $1 AND a.grantee <> s.nspowner "
	    "AND r.rolname <> $2 LIMIT 1", 2, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		r = pgm_fail_pq(c, res, "grantees", err, errlen);
	else if (PQntuples(res) > 0)
		r = pgm_fail(err, errlen, PGM_EROLE, "%s is mounted for "
		    "reader role \"%.63s\"; unmount it first", n->schema_raw,
		    PQgetvalue(res, 0, 0));
	PQclear(res);
	return r;
}

/* Schema exists, PUBLIC has nothing on it, the reader may look inside. */
static int
make_schema(PGconn *c, const struct names *n, char *err, size_t errlen)
{
	return exec_fmt(c, "schema", err, errlen,
	    "CREATE SCHEMA IF NOT EXISTS %s; "
	    "REVOKE ALL ON SCHEMA %s FROM PUBLIC; "
	    "GRANT USAGE ON SCHEMA %s TO %s",
	    n->schema, n->schema, n->schema, n->reader);
}

/* Why: the column list is quoted once and used for both CREATE TABLE
 * (with " text" after each name) and COPY (without). */
static int
column_list(PGconn *c, const struct pgm_csv *csv, const char *suffix,
    struct wbuf *w, char *err, size_t errlen)
{
	char *q;
	size_t i;
	int bad = 0;

	for (i = 0; i < csv->ncols && !bad; i++) {
		if ((q = PQescapeIdentifier(c, csv->cols[i],
		    strlen(csv->cols[i]))) == NULL)
			return pgm_fail_pq(c, NULL, "quote column", err, errlen);
		bad = (i > 0 && wbuf_put(w, ", ", 2) != BUF_OK) ||
		    wbuf_put(w, q, strlen(q)) != BUF_OK ||
		    wbuf_put(w, suffix, strlen(suffix)) != BUF_OK;
		PQfreemem(q);
	}
	return bad ? pgm_fail(err, errlen, PGM_EINPUT, "too many columns") :
	    PGM_OK;
}

/* CREATE TABLE (all TEXT) or COPY ... FROM STDIN, into a bounded buffer. */
static int
table_sql(PGconn *c, const struct names *n, const struct pgm_csv *csv,
    int copy, struct wbuf *w, const char **sql, char *err, size_t errlen)
{
	char head[512];
	int r;

	wbuf_reset(w);
	snprintf(head, sizeof(head), copy ? "COPY %s.%s (" :
	    "CREATE TABLE %s.%s (", n->schema, n->table);
	if (wbuf_put(w, head, strlen(head)) != BUF_OK)
		return pgm_fail(err, errlen, PGM_ENOMEM, "out of memory");
	if ((r = column_list(c, csv, copy ? "" : " text", w, err, errlen))
	    != PGM_OK)
		return r;
	snprintf(head, sizeof(head), copy ? ") FROM STDIN WITH (FORMAT csv)"
	    : ")");
	if (wbuf_put(w, head, strlen(head)) != BUF_OK ||
	    wbuf_cstr(w, sql) != BUF_OK)
		return pgm_fail(err, errlen, PGM_EINPUT, "too many columns");
	return PGM_OK;
}

/* The new version's table, filled from the CSV. */
static int
make_table(PGconn *c, const struct names *n, const struct pgm_csv *csv,
    unsigned long *rows, char *err, size_t errlen)
{
	struct wbuf w;
	const char *sql;
	int r;

	wbuf_init(&w, SQL_MAX);
	if ((r = table_sql(c, n, csv, 0, &w, &sql, err, errlen)) == PGM_OK &&
	    (r = exec_cmd(c, sql, "create table", err, errlen)) == PGM_OK &&
	    (r = table_sql(c, n, csv, 1, &w, &sql, err, errlen)) == PGM_OK)
		r = pgm_copy_rows(c, csv, sql, rows, err, errlen);
	wbuf_free(&w);
	return r;
}

/* Why: DROP + CREATE rather than CREATE OR REPLACE, which refuses a new
 * version whose columns differ; then SELECT on the newest version only
 * (a superseded release may be why there is a new one). */
static int
point_view(PGconn *c, const struct names *n, char *err, size_t errlen)
{
	return exec_fmt(c, "view", err, errlen, "DROP VIEW IF EXISTS %s.%s; "
	    "CREATE VIEW %s.%s AS SELECT * FROM %s.%s; "
	    "REVOKE ALL ON ALL TABLES IN SCHEMA %s FROM PUBLIC, %s; "
	    "GRANT SELECT ON %s.%s, %s.%s TO %s",
	    n->schema, n->view, n->schema, n->view, n->schema, n->table,
	    n->schema, n->reader,
	    n->schema, n->view, n->schema, n->table, n->reader);
}

/* Why: unmount and inspect start alike: a valid name, a connection and
 * the dataset's quoted names. */
static int
open_dataset(const struct pg_target *t, const struct pgm_ds *ds, PGconn **c,
    struct names *n, char *err, size_t errlen)
{
	int r;

	if (!pgm_ds_valid(ds))
		return pgm_fail(err, errlen, PGM_EINPUT, "bad dataset id or "
		    "name");
	if ((r = connect_db(t, c, err, errlen)) != PGM_OK)
		return r;
	return names_make(*c, ds, 1, NULL, n, err, errlen);
}

/* Why: every entry point ends alike: a failed transaction is rolled
 * back explicitly (a dead connection was rolled back by the server). */
static int
close_dataset(PGconn *c, struct names *n, int r)
{
	if (r != PGM_OK && c != NULL && PQstatus(c) == CONNECTION_OK &&
	    PQtransactionStatus(c) != PQTRANS_IDLE)
		PQclear(PQexec(c, "ROLLBACK"));
	names_free(n);
	PQfinish(c);
	return r;
}

/* Why: reject bad arguments before anything touches the database. */
static int
mount_args(const struct pg_target *t, const struct pgm_ds *ds,
    int64_t version, char *err, size_t errlen)
{
	if (t == NULL || t->conninfo == NULL || t->reader_role == NULL ||
	    *t->reader_role == '\0' || strlen(t->reader_role) > PGM_NAME_MAX)
		return pgm_fail(err, errlen, PGM_EINPUT,
		    "target needs a conninfo and a reader role");
	if (!pgm_ds_valid(ds))
		return pgm_fail(err, errlen, PGM_EINPUT, "a dataset needs an id "
		    ">= 1 and a name of 1-%d characters of [a-z0-9_]",
		    PGM_DATASET_MAX);
	if (version < 1)
		return pgm_fail(err, errlen, PGM_EINPUT,
		    "version must be >= 1");
	return PGM_OK;
}

/* The transaction body: every step or none. */
static int
mount_tx(PGconn *c, const struct pg_target *t, const struct names *n,
    const struct pgm_csv *csv, char *err, size_t errlen)
{
	unsigned long rows;
	int r;

	if ((r = begin_tx(c, n, t->lock_timeout_ms, err, errlen)) != PGM_OK ||
	    (r = check_reader(c, t->reader_role, err, errlen)) != PGM_OK ||
	    (r = check_grantees(c, n, t->reader_role, err, errlen)) !=
	    PGM_OK ||
	    (r = make_schema(c, n, err, errlen)) != PGM_OK ||
	    (r = make_table(c, n, csv, &rows, err, errlen)) != PGM_OK ||
	    (r = point_view(c, n, err, errlen)) != PGM_OK)
		return r;
	return commit_tx(c, err, errlen);
}

int
pg_mount(const struct pg_target *t, const struct pgm_ds *ds, int64_t version,
    const char *csv_path, const char *const *columns, size_t ncols,
    char *err, size_t errlen)
{
	struct pgm_csv csv = { 0 };
	struct names n = { 0 };
	PGconn *c = NULL;
	int r;

	if ((r = mount_args(t, ds, version, err, errlen)) != PGM_OK ||
	    (r = pgm_csv_open(&csv, csv_path, columns, ncols, err, errlen))
	    != PGM_OK ||
	    (r = connect_db(t, &c, err, errlen)) != PGM_OK ||
	    (r = names_make(c, ds, version, t->reader_role, &n, err,
	    errlen)) != PGM_OK)
		goto out;
	r = mount_tx(c, t, &n, &csv, err, errlen);
out:
	pgm_csv_close(&csv);
	return close_dataset(c, &n, r);
}

/* Why: NULL from to_regnamespace means the dataset isn't mounted. */
static int
schema_exists(PGconn *c, const struct names *n, char *err, size_t errlen)
{
	const char *params[1] = { n->schema };
	PGresult *res;
	int r = PGM_OK;

	res = PQexecParams(c, "SELECT to_regnamespace($1) IS NOT NULL", 1,
	    NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		r = pgm_fail_pq(c, res, "lookup", err, errlen);
	else if (strcmp(PQgetvalue(res, 0, 0), "t") != 0)
		r = pgm_fail(err, errlen, PGM_ENOTMOUNTED,
		    "dataset not mounted (no schema %s)", n->schema);
	PQclear(res);
	return r;
}

int
pg_unmount(const struct pg_target *t, const struct pgm_ds *ds, char *err,
    size_t errlen)
{
	struct names n = { 0 };
	PGconn *c = NULL;
	int r;

	if ((r = open_dataset(t, ds, &c, &n, err, errlen)) == PGM_OK &&
	    (r = begin_tx(c, &n, t->lock_timeout_ms, err, errlen)) ==
	    PGM_OK &&
	    (r = schema_exists(c, &n, err, errlen)) == PGM_OK &&
	    (r = exec_fmt(c, "drop schema", err, errlen,
	    "DROP SCHEMA %s CASCADE", n.schema)) == PGM_OK)
		r = commit_tx(c, err, errlen);
	return close_dataset(c, &n, r);
}

/* Why: the view's one base table names the version; parse its suffix. */
static int
view_version(PGconn *c, const char *dataset, const struct names *n,
    int64_t *version, char *err, size_t errlen)
{
	const char *params[2] = { n->schema_raw, dataset };
	PGresult *res;
	char *end;
	const char *tn;
	size_t dl = strlen(dataset);
	int r = PGM_OK;

	res = PQexecParams(c, "SELECT table_name::text FROM "
	    "information_schema.view_table_usage "
	    "WHERE view_schema = $1 AND view_name = $2", 2, NULL, params,
	    NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		r = pgm_fail_pq(c, res, "lookup", err, errlen);
	else if (PQntuples(res) != 1)
		r = pgm_fail(err, errlen, PGM_ENOTMOUNTED,
		    "dataset not mounted (no view %s.%s)", n->schema, n->view);
	else if (tn = PQgetvalue(res, 0, 0), strncmp(tn, dataset, dl) != 0 ||
	    strncmp(tn + dl, "_v", 2) != 0 ||
	    (*version = strtoll(tn + dl + 2, &end, 10)) < 1 || *end != '\0')
		r = pgm_fail(err, errlen, PGM_ESQL,
		    "view serves unexpected table \"%.63s\"", tn);
	PQclear(res);
	return r;
}

/* The row count a reader sees through the view. */
static int
view_rows(PGconn *c, const struct names *n, int64_t *rows, char *err,
    size_t errlen)
{
	char sql[512];
	PGresult *res;
	int r = PGM_OK;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s.%s", n->schema,
	    n->view);	/* two quoted names of <= 63 bytes each fit */
	res = PQexec(c, sql);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		r = pgm_fail_pq(c, res, "count", err, errlen);
	else
		*rows = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return r;
}

int
pg_mounted_version(const struct pg_target *t, const struct pgm_ds *ds,
    int64_t *version, int64_t *rows, char *err, size_t errlen)
{
	struct names n = { 0 };
	PGconn *c = NULL;
	int r;

	*version = 0;
	if ((r = open_dataset(t, ds, &c, &n, err, errlen)) == PGM_OK &&
	    (r = exec_cmd(c, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY",
	    "BEGIN", err, errlen)) == PGM_OK &&
	    (r = schema_exists(c, &n, err, errlen)) == PGM_OK &&
	    (r = view_version(c, ds->name, &n, version, err, errlen)) ==
	    PGM_OK && rows != NULL)
		r = view_rows(c, &n, rows, err, errlen);
	return close_dataset(c, &n, r);
}

/* ---- a reader role per session ---- */

/* "cdsgate_<session>": a session id is 1-55 of [A-Za-z0-9._-]. */
static int
session_role_name(const char *session, char *role, size_t len)
{
	size_t n = strspn(session, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789._-");

	if (n == 0 || session[n] != '\0' || n > PGM_NAME_MAX - 8)
		return -1;
	snprintf(role, len, "cdsgate_%s", session);
	return 0;
}

/* One query's single value into out ("" if none); PGM_OK or why not. */
static int
query_value(PGconn *c, const char *sql, const char *param, const char *step,
    char *out, size_t outlen, char *err, size_t errlen)
{
	const char *params[1] = { param };
	PGresult *res;
	int r = PGM_OK;

	res = PQexecParams(c, sql, param != NULL ? 1 : 0, NULL, params, NULL,
	    NULL, 0);
	out[0] = '\0';
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		r = pgm_fail_pq(c, res, step, err, errlen);
	else if (PQntuples(res) == 1)
		snprintf(out, outlen, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	return r;
}

/* Why: the role's grants, and nothing else: CONNECT on this database,
 * USAGE on the dataset's schema, SELECT on its view (the view reads its
 * table as its owner); read-only by default; valid until the session's
 * backstop.  The password reaches the server only as a SCRAM verifier.
 * The admin role becomes a member so that it may DROP OWNED later. */
static int
role_create_tx(PGconn *c, const struct names *n, const char *qrole,
    const char *role, const char *pw, int64_t until, char *err,
    size_t errlen)
{
	char db[PGM_NAME_MAX + 1], *qdb = NULL, *verifier = NULL, *lit = NULL;
	char exists[8], when[40];
	time_t tu = (time_t)until;
	struct tm tm;
	int r;

	/* ISO 8601 in UTC: read alike under every DateStyle */
	if (gmtime_r(&tu, &tm) == NULL || strftime(when, sizeof(when),
	    "%Y-%m-%d %H:%M:%S+00", &tm) == 0)
		return pgm_fail(err, errlen, PGM_EINPUT, "bad expiry");

	if ((r = query_value(c, "SELECT current_database()", NULL, "database",
	    db, sizeof(db), err, errlen)) != PGM_OK ||
	    (r = query_value(c, "SELECT 1 FROM pg_roles WHERE rolname = $1",
	    role, "role lookup", exists, sizeof(exists), err, errlen)) !=
	    PGM_OK)
		return r;
	if (exists[0] != '\0')
		return pgm_fail(err, errlen, PGM_EEXIST, "role %s exists", qrole);
	if ((qdb = PQescapeIdentifier(c, db, strlen(db))) == NULL ||
	    (verifier = PQencryptPasswordConn(c, pw, role, "scram-sha-256"))
	    == NULL || (lit = PQescapeLiteral(c, verifier, strlen(verifier)))
	    == NULL) {
		r = pgm_fail_pq(c, NULL, "session role", err, errlen);
		goto out;
	}
	r = exec_fmt(c, "session role", err, errlen,
	    "CREATE ROLE %s LOGIN NOINHERIT CONNECTION LIMIT 4 PASSWORD %s "
	    "VALID UNTIL '%s'"
	    "; GRANT %s TO CURRENT_USER"
	    "; ALTER ROLE %s SET default_transaction_read_only = on"
	    "; GRANT CONNECT ON DATABASE %s TO %s"
	    "; GRANT USAGE ON SCHEMA %s TO %s"
	    "; GRANT SELECT ON %s.%s TO %s",
	    qrole, lit, when, qrole, qrole, qdb, qrole, n->schema, qrole,
	    n->schema, n->view, qrole);
out:
	PQfreemem(qdb);
	PQfreemem(verifier);
	PQfreemem(lit);
	return r;
}

int
pg_session_role_create(const struct pg_target *t, const char *session,
    const struct pgm_ds *ds, int64_t valid_until, const char *password,
    char *role, size_t rolelen, char *err, size_t errlen)
{
	struct names n = { 0 };
	PGconn *c = NULL;
	char *qrole = NULL;
	int r;

	if (session_role_name(session, role, rolelen) != 0 ||
	    strlen(role) >= rolelen || valid_until < 1 || password == NULL ||
	    strlen(password) < 16)
		return pgm_fail(err, errlen, PGM_EINPUT, "bad session id, "
		    "expiry or password");
	if ((r = open_dataset(t, ds, &c, &n, err, errlen)) != PGM_OK)
		return close_dataset(c, &n, r);
	if ((qrole = PQescapeIdentifier(c, role, strlen(role))) == NULL)
		r = pgm_fail_pq(c, NULL, "quote identifier", err, errlen);
	else if ((r = begin_tx(c, &n, t->lock_timeout_ms, err, errlen)) ==
	    PGM_OK && (r = schema_exists(c, &n, err, errlen)) == PGM_OK &&
	    (r = role_create_tx(c, &n, qrole, role, password, valid_until, err,
	    errlen)) == PGM_OK)
		r = commit_tx(c, err, errlen);
	PQfreemem(qrole);
	return close_dataset(c, &n, r);
}

int
pg_session_role_drop(const struct pg_target *t, const char *session,
    char *err, size_t errlen)
{
	char role[PGM_NAME_MAX + 1], exists[8], *qrole = NULL;
	PGconn *c = NULL;
	int r;

	if (session_role_name(session, role, sizeof(role)) != 0)
		return pgm_fail(err, errlen, PGM_EINPUT, "bad session id");
	if ((r = connect_db(t, &c, err, errlen)) != PGM_OK)
		return r;
	if ((qrole = PQescapeIdentifier(c, role, strlen(role))) == NULL)
		r = pgm_fail_pq(c, NULL, "quote identifier", err, errlen);
	else if ((r = exec_cmd(c, "BEGIN", "BEGIN", err, errlen)) == PGM_OK &&
	    (r = query_value(c, "SELECT 1 FROM pg_roles WHERE rolname = $1",
	    role, "role lookup", exists, sizeof(exists), err, errlen)) ==
	    PGM_OK) {
		if (exists[0] == '\0')
			r = pgm_fail(err, errlen, PGM_ENOTMOUNTED,
			    "no role %s", qrole);
		else if ((r = exec_fmt(c, "drop session role", err, errlen,
		    "DROP OWNED BY %s; DROP ROLE %s", qrole, qrole)) ==
		    PGM_OK)
			r = commit_tx(c, err, errlen);
	}
	if (r != PGM_OK && PQstatus(c) == CONNECTION_OK &&
	    PQtransactionStatus(c) != PQTRANS_IDLE)
		PQclear(PQexec(c, "ROLLBACK"));
	PQfreemem(qrole);
	PQfinish(c);
	return r;
}
