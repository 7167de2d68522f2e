/*
 * deid/csv.h — streaming CSV reader for datasets and ARX hierarchies.
 *
 * Parses untrusted bytes through struct buf: RFC 4180 quoting, CRLF or
 * LF, ';' or ',' (detected from the first line, or given), strict UTF-8,
 * no NUL bytes, bounded field length.  Each record is handed to a
 * callback as an array of NUL-terminated fields, or of spans of bytes
 * (deid_csv_scan); nothing is kept.
 */
#ifndef DEID_CSV_H
#define DEID_CSV_H

#include <stddef.h>

#include "deid/error.h"

#define DEID_CSV_MAX_FIELD_DEFAULT	(64u * 1024)	/* bytes */
#define DEID_CSV_MAX_COLUMNS		4096
#define DEID_CSV_CHUNK			(128u * 1024)	/* a file is read
							   so many bytes at a
							   time */

struct deid_csv_opts {
	char	separator;	/* ';' or ',' (or any byte); 0 = detect */
	size_t	max_field;	/* 0 = DEID_CSV_MAX_FIELD_DEFAULT */
};

/*
 * Called once per record (the header too, as record 1).  line is the
 * 1-based physical line where the record starts.  Return DEID_OK to go
 * on; any other status stops parsing and is returned by the parser (the
 * callback fills err itself).
 */
typedef int (*deid_csv_record_cb)(void *ctx, const char *const *fields,
    size_t nfields, unsigned long line, struct deid_error *err);

/* Parse len bytes; name is used in error messages.  *sep_out (may be
 * NULL) gets the separator used. */
int	deid_csv_parse(const void *data, size_t len, const char *name,
	    const struct deid_csv_opts *opts, deid_csv_record_cb cb,
	    void *ctx, char *sep_out, struct deid_error *err);

/*
 * The same grammar, checks and errors, for a reader that wants no copy:
 * each field is a span of bytes (not NUL-terminated).  An unquoted
 * field's span points into the input itself; a quoted one's, unescaped,
 * into the reader's own buffer.  Spans are valid during the call only.
 */
struct deid_csv_span {
	const char	*p;
	size_t		 len;
};
typedef int (*deid_csv_span_cb)(void *ctx, const struct deid_csv_span *f,
    size_t nfields, unsigned long line, struct deid_error *err);

int	deid_csv_scan(const void *data, size_t len, const char *name,
	    const struct deid_csv_opts *opts, deid_csv_span_cb cb, void *ctx,
	    char *sep_out, struct deid_error *err);
/* A regular file streamed from fd's offset in chunks of DEID_CSV_CHUNK
 * (a longer record, the length of the record), never held whole; the
 * separator, when detected, is the first record's. */
int	deid_csv_scan_fd(int fd, const char *name,
	    const struct deid_csv_opts *opts, deid_csv_span_cb cb, void *ctx,
	    char *sep_out, struct deid_error *err);

/* Separator detection, exposed so loaders can apply their own rule:
 * counts of ';' and ',' outside quotes on the first record (after a
 * BOM), and the default choice (more frequent; tie -> ';' if present,
 * else ',' for a one-column file). */
void	deid_csv_sep_counts(const void *data, size_t len, size_t *semicolons,
	    size_t *commas);
char	deid_csv_detect(const void *data, size_t len);

/* Read a whole file into memory (malloc'd, NUL-terminated; *lenp excludes
 * the NUL).  Errors name the path. */
int	deid_file_read(const char *path, char **datap, size_t *lenp,
	    struct deid_error *err);
/* The two halves: open a regular file read-only (close-on-exec, never
 * blocking on a FIFO), and read a whole regular file from a descriptor
 * (left open; name is for errors) — what a sandboxed reader that may not
 * open() gets handed. */
int	deid_file_open(const char *path, int *fdp, struct deid_error *err);
int	deid_fd_read(int fd, const char *name, char **datap, size_t *lenp,
	    struct deid_error *err);

#endif
