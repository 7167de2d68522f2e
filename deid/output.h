/*
 * deid/output.h — write files all-or-nothing, and the de-identified CSV.
 *
 * Every file goes to a temporary name in the target's directory, is
 * flushed and fsync'd, then renamed over the target: a reader sees the
 * old file or the whole new one, never a partial write.
 */
#ifndef DEID_OUTPUT_H
#define DEID_OUTPUT_H

#include <stdint.h>
#include <stdio.h>

#include "deid/error.h"
#include "deid/groupify.h"

struct deid_atomic {
	FILE	*f;
	char	*tmp;
	char	*path;
};

int	deid_atomic_open(struct deid_atomic *a, const char *path,
	    struct deid_error *err);
/* Flush, fsync, rename; removes the temporary file on failure. */
int	deid_atomic_commit(struct deid_atomic *a, struct deid_error *err);
/* Discard: remove the temporary file. */
void	deid_atomic_abort(struct deid_atomic *a);

/* Write s to path atomically. */
int	deid_write_file(const char *path, const char *s, struct deid_error *err);

/* Write the de-identified table for the node grouped in c: identifying
 * columns dropped, QIs generalized, suppressed records' QIs as "*". */
int	deid_output_write(const char *path, const struct deid_engine *e,
	    const struct deid_classes *c, const uint8_t *suppressed,
	    struct deid_error *err);

/* The same into an open stream (flushed; name is for errors): the
 * sandboxed worker writes to a descriptor the parent opened. */
int	deid_output_write_fp(FILE *f, const char *name,
	    const struct deid_engine *e, const struct deid_classes *c,
	    const uint8_t *suppressed, struct deid_error *err);

/* One CSV field, quoted per RFC 4180 when it needs to be. */
int	deid_csv_put_field(FILE *f, const char *s, char sep);

#endif
