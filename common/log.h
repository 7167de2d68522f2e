/*
 * common/log.h — the daemons' one logger: operator diagnostics, one line
 * each, "NAME: message", on stderr (or a descriptor the process names).
 *
 * Diagnostics are not evidence.  What a session did goes to its JSON
 * session log (gateway/slog.h) and what a user was allowed to do to the
 * hash-chained audit log (audit/audit.h); this logger says what a
 * process itself saw go wrong or change, for the operator.  The CLI's
 * answers to its user (an error naming file:line:col, a usage line) are
 * output, not diagnostics, and do not come through here either.
 *
 * In the style of OpenBSD's relayd and OpenSSH: log_warn appends
 * strerror(errno), log_warnx does not; fatal and fatalx are for broken
 * invariants and protocol violations only.  Every message is escaped
 * (log_esc_char) before it is written, so an untrusted byte in an
 * argument cannot end the line, drive a terminal, or forge another
 * process's line.  Each line is one write(2) of at most LOG_LINE_MAX
 * bytes: no stdio buffer, so a forked child's lines never repeat its
 * parent's, and lines from several processes sharing a descriptor do
 * not interleave.
 *
 * Levels: warnings always; log_info at verbosity 1 (the default) and
 * up; log_debug at 2.  A process sets its verbosity from its own flag
 * (log_set_verbose); CDSGATE_LOG_DEBUG=1 in the environment raises any
 * process to 2.
 */
#ifndef COMMON_LOG_H
#define COMMON_LOG_H

#include <stddef.h>

#define LOG_LINE_MAX	1024	/* bytes in one line, newline included */
#define LOG_NAME_MAX	48	/* bytes in the process name */
#define LOG_FATAL_EXIT	1	/* fatal's exit status */
#define LOG_ESC_MAX	5	/* log_esc_char's out: "\xNN" or 4 UTF-8 bytes, NUL */

#define LOG_ESC_LINES	0x1	/* keep newline and tab (text for a terminal) */

/* Name this process in every line from now on ("cdsgated api"); the
 * verbosity goes back to 1 (or 2 under CDSGATE_LOG_DEBUG), the output to
 * stderr.  A forked child calls it again with its own name. */
void	log_init(const char *name);
/* 0: warnings only; 1: and log_info; 2: and log_debug.  The environment
 * can raise it, never lower it. */
void	log_set_verbose(int verbose);
int	log_verbose(void);
/* Write lines to fd instead (a session's log descriptor); not closed
 * here.  -1 goes back to stderr. */
void	log_set_fd(int fd);
const char *log_name(void);

void	log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Log "fatal: ..." and _exit(LOG_FATAL_EXIT): no atexit handlers and no
 * stdio flush run, so it is as safe in a forked child (whose copies of
 * the parent's buffers and handlers are not its own) as in a daemon's
 * main loop.  A process that writes stdout flushes it where it writes. */
void	fatal(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

/* The one escaping step for untrusted bytes.  Takes one character from
 * s (n > 0 bytes): printable ASCII and well-formed UTF-8 other than the
 * C1 controls are copied; every other byte (control bytes, DEL, stray
 * or overlong UTF-8, surrogates, a sequence cut by the end of s) is
 * written as \xNN, one byte at a time; with LOG_ESC_LINES, newline and
 * tab are kept.  Writes out (NUL-terminated) and returns how many bytes
 * of s it used (at least 1). */
size_t	log_esc_char(const unsigned char *s, size_t n, int flags,
	    char out[LOG_ESC_MAX]);
/* src (n bytes) escaped into dst (size bytes, NUL-terminated), whole
 * characters only; returns how many bytes of src fit (n when all). */
size_t	log_escape(char *dst, size_t size, const void *src, size_t n,
	    int flags);

#endif
