/*
 * mount/pg-int.h — what mount/postgres.c and mount/pgcopy.c share:
 * the error helpers and the CSV-to-COPY streamer.  Not an API.
 */
#ifndef MOUNT_PG_INT_H
#define MOUNT_PG_INT_H

#include <stddef.h>

#include <libpq-fe.h>

#define PGM_NAME_MAX	63	/* NAMEDATALEN - 1: longer names are cut */

/* Write a reason into err and return status; printf-checked. */
int	pgm_fail(char *err, size_t errlen, int status, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));

/* The server's reason for a failed step (from res, else from the
 * connection), as PGM_ESQL, or PGM_EEXIST for a duplicate table. */
int	pgm_fail_pq(PGconn *c, const PGresult *res, const char *step,
	    char *err, size_t errlen);

/* The CSV to mount, read whole, with the columns it must have. */
struct pgm_csv {
	const char		 *path;
	char			 *data;
	size_t			  len;
	char			  sep;
	const char *const	 *cols;
	size_t			  ncols;
	char			**owned;	/* header names when cols was NULL */
};

/* Read path; take the columns from cols or, if NULL, from the header. */
int	pgm_csv_open(struct pgm_csv *csv, const char *path,
	    const char *const *cols, size_t ncols, char *err, size_t errlen);
void	pgm_csv_close(struct pgm_csv *csv);

/* Run copy_sql (a COPY ... FROM STDIN (FORMAT csv)) and stream every
 * data row of csv to it; *rows gets the count the server confirmed. */
int	pgm_copy_rows(PGconn *c, const struct pgm_csv *csv,
	    const char *copy_sql, unsigned long *rows, char *err,
	    size_t errlen);

#endif
