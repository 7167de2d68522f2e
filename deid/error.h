/*
 * deid/error.h — status codes and the caller-supplied error detail.
 *
 * Library code in deid/ never logs and never exits: every fallible call
 * returns one of these codes and, where the caller passed a struct
 * deid_error, fills in where (file:line:column) and what went wrong.
 */
#ifndef DEID_ERROR_H
#define DEID_ERROR_H

#include <stddef.h>

enum deid_status {
	DEID_OK = 0,
	DEID_EINPUT,		/* malformed input: CSV, hierarchy, options */
	DEID_ENOMEM,		/* allocation failed */
	DEID_EIO,		/* read/write/rename failed */
	DEID_ENOSOLUTION,	/* model has no solution for this data */
	DEID_EUNAVAILABLE,	/* model not defined for this data (u = n, ...) */
	DEID_ENOCONV,		/* solver did not converge within its bound */
	DEID_ELIMIT,		/* a configured or built-in limit was hit */
	DEID_EINTERNAL		/* broken invariant: a bug */
};

struct deid_error {
	char		file[512];	/* input file, "" when not about a file */
	unsigned long	line;		/* 1-based, 0 when unknown */
	unsigned long	column;		/* 1-based, 0 when unknown */
	char		msg[512];
};

/* Something in an input that does not stop the run but changes what is
 * counted (a hierarchy row repeated verbatim, ...): where and what, for
 * the caller to show as "file:line:column: msg". */
struct deid_warning {
	char		file[512];
	unsigned long	line;		/* 1-based, 0 when unknown */
	unsigned long	column;		/* 1-based, 0 when unknown */
	char		msg[256];
};

const char	*deid_strerror(int status);

/* Fill *err (if non-NULL) and return status; printf-checked. */
int		 deid_error_set(struct deid_error *err, int status,
		    const char *file, unsigned long line, unsigned long column,
		    const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* "file:line:column: msg" (omitting parts that are unknown) into buf. */
void		 deid_error_format(const struct deid_error *err, char *buf,
		    size_t len);
/* The same for a warning. */
void		 deid_warning_format(const struct deid_warning *w, char *buf,
		    size_t len);

#endif
