/*
 * mount/pgcopy.c — stream a released CSV into PostgreSQL with COPY.
 *
 * Trust level: runs as the custodian's admin role on the database and
 * parses the CSV as untrusted bytes through deid/csv.h (RFC 4180,
 * strict UTF-8, no NUL, bounded fields).  Every record is checked
 * against the header (a ragged row fails the whole mount) and re-quoted
 * for COPY's CSV format, so nothing in the file is ever interpreted by
 * the server as anything but a value.  Rows go out in ~64 KiB chunks.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "deid/csv.h"
#include "mount/pg-int.h"
#include "mount/postgres.h"

#define CHUNK		(64u * 1024)
#define PENDING_MAX	(64u * 1024 * 1024)	/* one chunk + one record */

struct copy_ctx {
	PGconn			*conn;
	const struct pgm_csv	*csv;
	struct wbuf		 out;
	unsigned long		 rows;
	int			 header_seen;
	int			 status;	/* PGM_*: set by DB failures */
	char			*err;
	size_t			 errlen;
};

struct header_ctx {
	char	**names;
	size_t	  n;
	int	  got;
};

int
pgm_fail(char *err, size_t errlen, int status, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return status;
}

/* Why: the server's message ends in a newline and may span lines; the
 * caller wants one line naming the step that failed. */
int
pgm_fail_pq(PGconn *c, const PGresult *res, const char *step, char *err,
    size_t errlen)
{
	const char *m = res != NULL ? PQresultErrorMessage(res) : "";
	const char *state = res != NULL ?
	    PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	int status = PGM_ESQL;
	char line[512];

	if (*m == '\0' && c != NULL)
		m = PQerrorMessage(c);
	if (*m == '\0')
		m = "unknown error";
	snprintf(line, sizeof(line), "%s", m);
	line[strcspn(line, "\r\n")] = '\0';
	if (state != NULL && strcmp(state, "42P07") == 0)
		status = PGM_EEXIST;	/* duplicate_table */
	return pgm_fail(err, errlen, status, "%s: %s", step, line);
}

/* Why: a deid_error carries file:line:column; keep all of it. */
static int
fail_csv(const struct deid_error *de, int status, char *err, size_t errlen)
{
	char msg[1200];

	deid_error_format(de, msg, sizeof(msg));
	return pgm_fail(err, errlen, status == DEID_ENOMEM ? PGM_ENOMEM :
	    status == DEID_EIO ? PGM_EIO : PGM_EINPUT, "%s", msg);
}

/* Why: with no column list given, the header is the list; copy it out
 * and stop the parser after the first record. */
static int
header_cb(void *vctx, const char *const *fields, size_t n,
    unsigned long line, struct deid_error *err)
{
	struct header_ctx *h = vctx;
	size_t i;

	if ((h->names = calloc(n + 1, sizeof(*h->names))) == NULL)
		return deid_error_set(err, DEID_ENOMEM, "", line, 0,
		    "out of memory");
	for (i = 0; i < n; i++)
		if ((h->names[i] = strdup(fields[i])) == NULL)
			return deid_error_set(err, DEID_ENOMEM, "", line, 0,
			    "out of memory");
	h->n = n;
	h->got = 1;
	return DEID_ELIMIT;	/* stop: the rest is read by the COPY */
}

static void
free_names(char **names)
{
	size_t i;

	if (names == NULL)
		return;
	for (i = 0; names[i] != NULL; i++)
		free(names[i]);
	free(names);
}

/* Why: the column list comes from the caller or the header, and either
 * way every name must be one PostgreSQL keeps whole. */
static int
csv_columns(struct pgm_csv *csv, const char *const *cols, size_t ncols,
    char *err, size_t errlen)
{
	struct deid_csv_opts o = { .separator = csv->sep };
	struct header_ctx h = { NULL, 0, 0 };
	struct deid_error de = { .msg = "" };
	size_t i;
	int r;

	if (cols == NULL) {
		r = deid_csv_parse(csv->data, csv->len, csv->path, &o,
		    header_cb, &h, NULL, &de);
		csv->owned = h.names;
		if (!h.got)
			return r == DEID_OK ? pgm_fail(err, errlen, PGM_EINPUT,
			    "%s: empty file, no header", csv->path) :
			    fail_csv(&de, r, err, errlen);
		cols = (const char *const *)h.names;
		ncols = h.n;
	}
	if (ncols == 0)
		return pgm_fail(err, errlen, PGM_EINPUT, "no columns");
	for (i = 0; i < ncols; i++)
		if (cols[i] == NULL || *cols[i] == '\0' ||
		    strlen(cols[i]) > PGM_NAME_MAX)
			return pgm_fail(err, errlen, PGM_EINPUT,
			    "column %zu: name empty or longer than %d bytes",
			    i + 1, PGM_NAME_MAX);
	csv->cols = cols;
	csv->ncols = ncols;
	return PGM_OK;
}

int
pgm_csv_open(struct pgm_csv *csv, const char *path, const char *const *cols,
    size_t ncols, char *err, size_t errlen)
{
	struct deid_error de = { .msg = "" };
	int r;

	memset(csv, 0, sizeof(*csv));
	csv->path = path;
	if ((r = deid_file_read(path, &csv->data, &csv->len, &de)) != DEID_OK)
		return fail_csv(&de, r, err, errlen);
	csv->sep = deid_csv_detect(csv->data, csv->len);
	return csv_columns(csv, cols, ncols, err, errlen);
}

void
pgm_csv_close(struct pgm_csv *csv)
{
	if (csv->data != NULL)
		explicit_bzero(csv->data, csv->len);
	free(csv->data);
	free_names(csv->owned);
	memset(csv, 0, sizeof(*csv));
}

/* Why: COPY's CSV format reads an unquoted empty field as NULL and a
 * bare \. line as the end; quoting every field keeps each value a plain
 * string, exactly as it was in the file. */
static int
put_quoted(struct wbuf *w, const char *s)
{
	size_t n;

	if (wbuf_put_u8(w, '"') != BUF_OK)
		return -1;
	for (;;) {
		n = strcspn(s, "\"");
		if (wbuf_put(w, s, n) != BUF_OK)
			return -1;
		if (s[n] == '\0')
			break;
		if (wbuf_put(w, "\"\"", 2) != BUF_OK)
			return -1;
		s += n + 1;
	}
	return wbuf_put_u8(w, '"') == BUF_OK ? 0 : -1;
}

/* Why: send what is pending once it is a chunk (or at the end), so
 * memory stays bounded by one chunk plus one record. */
static int
flush(struct copy_ctx *c, size_t min)
{
	if (c->out.len == 0 || c->out.len < min)
		return 0;
	if (PQputCopyData(c->conn, (const char *)c->out.d,
	    (int)c->out.len) != 1) {
		c->status = pgm_fail_pq(c->conn, NULL, "COPY", c->err,
		    c->errlen);
		return -1;
	}
	wbuf_reset(&c->out);
	return 0;
}

/* Why: the header must be exactly the columns the table was made with. */
static int
check_header(struct copy_ctx *c, const char *const *f, size_t n,
    unsigned long line, struct deid_error *err)
{
	const struct pgm_csv *csv = c->csv;
	size_t i;

	if (n != csv->ncols)
		return deid_error_set(err, DEID_EINPUT, csv->path, line, 0,
		    "header has %zu columns, expected %zu", n, csv->ncols);
	for (i = 0; i < n; i++)
		if (strcmp(f[i], csv->cols[i]) != 0)
			return deid_error_set(err, DEID_EINPUT, csv->path,
			    line, 0, "header column %zu is \"%.64s\", "
			    "expected \"%.64s\"", i + 1, f[i], csv->cols[i]);
	return DEID_OK;
}

/* Why: one record in, one re-quoted COPY line out, ragged rows refused. */
static int
row_cb(void *vctx, const char *const *f, size_t n, unsigned long line,
    struct deid_error *err)
{
	struct copy_ctx *c = vctx;
	size_t i;

	if (!c->header_seen) {
		c->header_seen = 1;
		return check_header(c, f, n, line, err);
	}
	if (n != c->csv->ncols)
		return deid_error_set(err, DEID_EINPUT, c->csv->path, line, 0,
		    "ragged row: %zu fields, the header has %zu", n,
		    c->csv->ncols);
	for (i = 0; i < n; i++)
		if ((i > 0 && wbuf_put_u8(&c->out, ',') != BUF_OK) ||
		    put_quoted(&c->out, f[i]) != 0)
			return deid_error_set(err, DEID_ELIMIT, c->csv->path,
			    line, 0, "record too large");
	if (wbuf_put_u8(&c->out, '\n') != BUF_OK)
		return deid_error_set(err, DEID_ELIMIT, c->csv->path, line, 0,
		    "record too large");
	c->rows++;
	if (flush(c, CHUNK) != 0)
		return DEID_EIO;
	return DEID_OK;
}

/* Why: end the COPY — with a reason if we failed, so the server aborts
 * it — and collect the server's verdict and row count. */
static int
copy_finish(struct copy_ctx *c, const char *why, unsigned long *rows)
{
	PGresult *res;
	int r = PGM_OK;
	unsigned long got;

	if (PQputCopyEnd(c->conn, why) != 1 && why == NULL)
		r = pgm_fail_pq(c->conn, NULL, "COPY end", c->err, c->errlen);
	while ((res = PQgetResult(c->conn)) != NULL) {
		if (r == PGM_OK && why == NULL) {
			if (PQresultStatus(res) != PGRES_COMMAND_OK)
				r = pgm_fail_pq(c->conn, res, "COPY", c->err,
				    c->errlen);
			else if ((got = strtoul(PQcmdTuples(res), NULL, 10))
			    != c->rows)
				r = pgm_fail(c->err, c->errlen, PGM_ESQL,
				    "COPY: server stored %lu of %lu rows",
				    got, c->rows);
		}
		PQclear(res);
	}
	*rows = c->rows;
	return r;
}

int
pgm_copy_rows(PGconn *conn, const struct pgm_csv *csv, const char *copy_sql,
    unsigned long *rows, char *err, size_t errlen)
{
	struct copy_ctx c = { conn, csv, { 0 }, 0, 0, PGM_OK, err, errlen };
	struct deid_csv_opts o = { .separator = csv->sep };
	struct deid_error de = { .msg = "" };
	PGresult *res;
	int r;

	*rows = 0;
	res = PQexec(conn, copy_sql);
	if (PQresultStatus(res) != PGRES_COPY_IN) {
		r = pgm_fail_pq(conn, res, "COPY", err, errlen);
		PQclear(res);
		return r;
	}
	PQclear(res);
	wbuf_init(&c.out, PENDING_MAX);
	r = deid_csv_parse(csv->data, csv->len, csv->path, &o, row_cb, &c,
	    NULL, &de);
	if (r == DEID_OK && !c.header_seen)
		r = deid_error_set(&de, DEID_EINPUT, csv->path, 0, 0,
		    "empty file, no header");
	if (r != DEID_OK) {
		if (c.status == PGM_OK)
			c.status = fail_csv(&de, r, err, errlen);
		copy_finish(&c, "cdsgate: mount aborted", rows);
		r = c.status;
	} else if (flush(&c, 0) != 0)
		r = (copy_finish(&c, "cdsgate: mount aborted", rows), c.status);
	else
		r = copy_finish(&c, NULL, rows);
	wbuf_free(&c.out);
	return r;
}
