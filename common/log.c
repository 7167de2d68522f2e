/*
 * common/log.c — the daemons' one logger (common/log.h): a line is
 * formatted, escaped character by character, cut to LOG_LINE_MAX at a
 * character boundary, and written with one write(2).
 *
 * Trust: runs in every daemon process, privileged or not; its arguments
 * may hold untrusted bytes (paths, names, peers' words), which is why
 * the whole message is escaped rather than the pieces a caller thought
 * of.  Needs no syscall beyond write(2), so any seccomp profile that
 * lets a process write stderr lets it log.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

#define LOG_CUT	"..."	/* marks a message cut to fit the line */

static struct {
	char	name[LOG_NAME_MAX];
	int	fd;		/* -1: stderr */
	int	verbose;
} lg = { "", -1, 1 };

/* CDSGATE_LOG_DEBUG=1 (anything but empty or "0") asks for debug. */
static int
env_verbose(void)
{
	const char *v = getenv("CDSGATE_LOG_DEBUG");

	return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0 ? 2 : 0;
}

void
log_init(const char *name)
{
	snprintf(lg.name, sizeof(lg.name), "%s", name);
	lg.fd = -1;
	log_set_verbose(1);
}

void
log_set_verbose(int verbose)
{
	int env = env_verbose();

	lg.verbose = verbose > env ? verbose : env;
}

int
log_verbose(void)
{
	return lg.verbose;
}

void
log_set_fd(int fd)
{
	lg.fd = fd;
}

/* Before log_init, the program's own name. */
const char *
log_name(void)
{
	return lg.name[0] != '\0' ? lg.name : program_invocation_short_name;
}

/* ---- escaping ---- */

/* The length of the well-formed UTF-8 sequence at s (a lead byte of 2
 * to 4), or 0: overlong forms, surrogates, past U+10FFFF, a C1 control
 * (U+0080 to U+009F: terminals obey some) and a cut sequence are not. */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (s[0] == 0xc2)
		lo = 0xa0;		/* not a C1 control */
	else if (s[0] == 0xe0)
		lo = 0xa0;		/* not overlong */
	else if (s[0] == 0xed)
		hi = 0x9f;		/* not a surrogate */
	else if (s[0] == 0xf0)
		lo = 0x90;		/* not overlong */
	else if (s[0] == 0xf4)
		hi = 0x8f;		/* not past U+10FFFF */
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* One character of s, escaped into out; the bytes of s used. */
size_t
log_esc_char(const unsigned char *s, size_t n, int flags,
    char out[LOG_ESC_MAX])
{
	size_t len;

	if ((s[0] >= 0x20 && s[0] < 0x7f) || ((flags & LOG_ESC_LINES) &&
	    (s[0] == '\n' || s[0] == '\t'))) {
		out[0] = (char)s[0];
		out[1] = '\0';
		return 1;
	}
	if (s[0] >= 0x80 && (len = utf8_len(s, n)) != 0) {
		memcpy(out, s, len);
		out[len] = '\0';
		return len;
	}
	snprintf(out, LOG_ESC_MAX, "\\x%02x", s[0]);
	return 1;
}

/* src escaped into dst, whole characters while they fit. */
size_t
log_escape(char *dst, size_t size, const void *src, size_t n, int flags)
{
	const unsigned char *s = src;
	char c[LOG_ESC_MAX];
	size_t in = 0, out = 0, used, len;

	if (size == 0)
		return 0;
	while (in < n) {
		used = log_esc_char(s + in, n - in, flags, c);
		len = strlen(c);
		if (out + len >= size)
			break;
		memcpy(dst + out, c, len);
		out += len;
		in += used;
	}
	dst[out] = '\0';
	return in;
}

/* ---- lines ---- */

/* All of the line, retrying what a signal or a short write left. */
static void
write_line(const char *line, size_t len)
{
	int fd = lg.fd >= 0 ? lg.fd : STDERR_FILENO;
	ssize_t w;

	while (len > 0) {
		w = write(fd, line, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;		/* nowhere left to say it */
		line += w;
		len -= (size_t)w;
	}
}

/* "NAME: [what: ]message[: strerror(errnum)]\n"; errnum < 0 for none.
 * The message is escaped and cut (LOG_CUT) so that the tail fits. */
static void
log_vline(const char *what, int errnum, const char *fmt, va_list ap)
{
	char msg[LOG_LINE_MAX], line[LOG_LINE_MAX], tail[128];
	size_t off, room, mlen, used;
	int saved = errno, len;

	len = vsnprintf(msg, sizeof(msg), fmt, ap);
	mlen = len < 0 ? 0 : (size_t)len < sizeof(msg) ? (size_t)len :
	    sizeof(msg) - 1;
	if (errnum >= 0)
		snprintf(tail, sizeof(tail), ": %.100s\n", strerror(errnum));
	else
		snprintf(tail, sizeof(tail), "\n");
	off = (size_t)snprintf(line, sizeof(line), "%s: %s", log_name(),
	    what);
	room = sizeof(line) - off - strlen(tail) - strlen(LOG_CUT);
	used = log_escape(line + off, room, msg, mlen, 0);
	off += strlen(line + off);
	if (used < mlen || (len > 0 && (size_t)len > mlen))
		off += (size_t)snprintf(line + off, sizeof(line) - off, "%s",
		    LOG_CUT);
	off += (size_t)snprintf(line + off, sizeof(line) - off, "%s", tail);
	write_line(line, off);
	errno = saved;
}

void
log_warn(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	log_vline("", saved, fmt, ap);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline("", -1, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	if (lg.verbose < 1)
		return;
	va_start(ap, fmt);
	log_vline("", -1, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	if (lg.verbose < 2)
		return;
	va_start(ap, fmt);
	log_vline("debug: ", -1, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	log_vline("fatal: ", saved, fmt, ap);
	va_end(ap);
	_exit(LOG_FATAL_EXIT);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline("fatal: ", -1, fmt, ap);
	va_end(ap);
	_exit(LOG_FATAL_EXIT);
}
