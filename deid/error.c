/*
 * deid/error.c — status strings and error detail for the de-identifier.
 * Trusted code; formats only, never logs.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "deid/error.h"

static const char *const status_names[] = {
	[DEID_OK] = "success",
	[DEID_EINPUT] = "bad input",
	[DEID_ENOMEM] = "out of memory",
	[DEID_EIO] = "input/output error",
	[DEID_ENOSOLUTION] = "model has no solution",
	[DEID_EUNAVAILABLE] = "model unavailable for this data",
	[DEID_ENOCONV] = "solver did not converge",
	[DEID_ELIMIT] = "limit exceeded",
	[DEID_EINTERNAL] = "internal error",
};

const char *
deid_strerror(int status)
{
	if (status < 0 || (size_t)status >= sizeof(status_names) /
	    sizeof(status_names[0]) || status_names[status] == NULL)
		return "unknown status";
	return status_names[status];
}

int
deid_error_set(struct deid_error *err, int status, const char *file,
    unsigned long line, unsigned long column, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return status;
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
	err->line = line;
	err->column = column;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return status;
}

/* "file:line:column: msg", leaving out the parts that are unknown. */
static void
where_format(const char *file, unsigned long line, unsigned long column,
    const char *msg, char *buf, size_t len)
{
	if (file[0] == '\0')
		snprintf(buf, len, "%s", msg);
	else if (line == 0)
		snprintf(buf, len, "%s: %s", file, msg);
	else if (column == 0)
		snprintf(buf, len, "%s:%lu: %s", file, line, msg);
	else
		snprintf(buf, len, "%s:%lu:%lu: %s", file, line, column, msg);
}

void
deid_error_format(const struct deid_error *err, char *buf, size_t len)
{
	where_format(err->file, err->line, err->column, err->msg, buf, len);
}

void
deid_warning_format(const struct deid_warning *w, char *buf, size_t len)
{
	where_format(w->file, w->line, w->column, w->msg, buf, len);
}
