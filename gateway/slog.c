/*
 * gateway/slog.c — append JSON-lines session events.  Runs in every
 * session process; the strings it writes come from jansson's encoder, so
 * untrusted bytes that reach a field are escaped, never raw.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "gateway/slog.h"

static int	 slog_fdesc = -1;
static char	 slog_session[64];
static char	 slog_proc[32];

int
slog_open(const char *path, const char *session, const char *proc)
{
	snprintf(slog_session, sizeof(slog_session), "%s", session);
	snprintf(slog_proc, sizeof(slog_proc), "%s", proc);
	if (path == NULL) {
		slog_fdesc = STDERR_FILENO;
		return 0;
	}
	slog_fdesc = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
	    0600);
	return slog_fdesc < 0 ? -1 : 0;
}

void
slog_set_proc(const char *proc)
{
	snprintf(slog_proc, sizeof(slog_proc), "%s", proc);
}

int
slog_fd(void)
{
	return slog_fdesc;
}

/* RFC 3339 UTC timestamp with microseconds. */
void
slog_ts(char *buf, size_t len)
{
	struct timeval tv;
	struct tm tm;

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, (long)tv.tv_usec);
}

static slog_tap_fn slog_tap;
static void *slog_tap_arg;
static int slog_tapping;

void
slog_set_tap(slog_tap_fn fn, void *arg)
{
	slog_tap = fn;
	slog_tap_arg = arg;
}

int
slog_event(const char *event, json_t *fields)
{
	json_t *o = json_object();
	char ts[80], *line = NULL;
	size_t len;
	ssize_t n;
	int r = -1;

	slog_ts(ts, sizeof(ts));
	json_object_set_new(o, "ts", json_string(ts));
	json_object_set_new(o, "session", json_string(slog_session));
	json_object_set_new(o, "proc", json_string(slog_proc));
	json_object_set_new(o, "event", json_string(event));
	if (fields != NULL)
		json_object_update(o, fields);
	json_decref(fields);
	if (slog_tap != NULL && !slog_tapping) {
		slog_tapping = 1;
		slog_tap(slog_tap_arg, event, o);
		slog_tapping = 0;
	}
	if (slog_fdesc >= 0 &&
	    (line = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII)) != NULL) {
		len = strlen(line);
		line[len] = '\n';	/* replaces the NUL; one write() */
		do
			n = write(slog_fdesc, line, len + 1);
		while (n < 0 && errno == EINTR);
		r = n == (ssize_t)(len + 1) ? 0 : -1;
	}
	free(line);
	json_decref(o);
	return r;
}

void
slog_close(void)
{
	if (slog_fdesc > STDERR_FILENO)
		close(slog_fdesc);
	slog_fdesc = -1;
}
