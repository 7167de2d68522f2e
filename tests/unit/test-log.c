/*
 * tests/unit/test-log.c — common/log.c: the escaping of untrusted bytes
 * (control bytes, newlines, malformed UTF-8; the result valid JSON text
 * by jansson's judgement), lines cut safely, the
 * process name in each line, the levels, and fatal's exit.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "common/log.h"
#include "tests/tap.h"

static int cap_fd = -1;
static char cap[4 * LOG_LINE_MAX];

/* Escape s (n bytes) with flags; compare with want. */
static void
esc_is(const char *s, size_t n, int flags, const char *want,
    const char *what)
{
	char out[256];
	size_t used = log_escape(out, sizeof(out), s, n, flags);

	if (!tap_ok(used == n && strcmp(out, want) == 0, "escape %s", what))
		tap_diag("got %zu bytes used, \"%s\"", used, out);
}

/* What the logger wrote since the last call. */
static const char *
captured(void)
{
	ssize_t n = pread(cap_fd, cap, sizeof(cap) - 1, 0);

	cap[n > 0 ? n : 0] = '\0';
	if (ftruncate(cap_fd, 0) != 0)
		abort();
	return cap;
}

static void
test_escape(void)
{
	char out[16];
	size_t used;

	esc_is("plain text, 100%", 16, 0, "plain text, 100%", "printable");
	esc_is("a\x1b[2Jb", 6, 0, "a\\x1b[2Jb", "an ESC sequence");
	esc_is("one\ntwo\rthree\t", 14, 0, "one\\x0atwo\\x0dthree\\x09",
	    "newline, CR and tab");
	esc_is("one\ntwo\t\r", 9, LOG_ESC_LINES, "one\ntwo\t\\x0d",
	    "LOG_ESC_LINES keeps newline and tab, not CR");
	esc_is("nul\0del\x7f", 8, 0, "nul\\x00del\\x7f", "NUL and DEL");
	esc_is("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82", 14, 0,
	    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82",
	    "well-formed UTF-8 (2, 3 and 4 bytes) kept");
	esc_is("\xc2\x9b" "2J", 4, 0, "\\xc2\\x9b2J", "a C1 control (CSI)");
	esc_is("\x80x\xff", 3, 0, "\\x80x\\xff", "stray bytes");
	esc_is("\xc0\xaf", 2, 0, "\\xc0\\xaf", "an overlong '/'");
	esc_is("\xe0\x80\xaf", 3, 0, "\\xe0\\x80\\xaf", "an overlong 3-byte");
	esc_is("\xed\xa0\x80", 3, 0, "\\xed\\xa0\\x80", "a surrogate");
	esc_is("\xf4\x90\x80\x80", 4, 0, "\\xf4\\x90\\x80\\x80",
	    "past U+10FFFF");
	esc_is("ab\xe2\x82", 4, 0, "ab\\xe2\\x82", "a sequence cut by the end");
	esc_is("\\x41", 4, 0, "\\x41", "a backslash is kept as it is");

	/* whole characters only: a cut never splits an escape or UTF-8 */
	used = log_escape(out, 6, "ab\x1b" "cd", 5, 0);
	tap_ok(used == 2 && strcmp(out, "ab") == 0,
	    "a \\xNN that does not fit is left out whole (used %zu)", used);
	used = log_escape(out, 5, "abc\xe2\x82\xac", 6, 0);
	tap_ok(used == 3 && strcmp(out, "abc") == 0,
	    "a UTF-8 character that does not fit is left out whole");
	used = log_escape(out, 1, "abc", 3, 0);
	tap_ok(used == 0 && out[0] == '\0', "a 1-byte buffer holds the NUL");
}

/* A control byte or DEL in s? */
static int
has_control(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

/* Whatever the bytes, the escaped text is what a JSON event may carry
 * (the session log's vnc_log takes it): jansson, not our code, judges
 * it valid UTF-8, and no control byte is left.  Every 2-byte string,
 * and every 3-byte one that starts with a 3- or 4-byte UTF-8 lead. */
static void
test_json_safe(void)
{
	unsigned char in[3];
	char out[3 * LOG_ESC_MAX];
	unsigned a, b, c, bad = 0, n = 0;
	json_t *j;

	for (a = 0; a < 256; a++)
		for (b = 0; b < 256; b++)
			for (c = 0; c < 256; c += a >= 0xe0 && a <= 0xf4 ? 1 :
			    256) {
				in[0] = (unsigned char)a;
				in[1] = (unsigned char)b;
				in[2] = (unsigned char)c;
				log_escape(out, sizeof(out), in, 3, 0);
				j = json_string(out);
				if ((j == NULL || has_control(out)) &&
				    bad++ == 0)
					tap_diag("not JSON-safe: %02x %02x "
					    "%02x -> %s", a, b, c, out);
				json_decref(j);
				n++;
			}
	tap_ok(bad == 0 && n > 65536, "escaped text is valid UTF-8 for "
	    "jansson, without control bytes, for all %u inputs tried", n);
}

static void
test_lines(void)
{
	char big[3 * LOG_LINE_MAX];
	const char *c;
	size_t len;

	tap_ok(strcmp(log_name(), "test-log") == 0,
	    "before log_init the program's name (%s)", log_name());
	log_init("cdsgated test");
	log_set_fd(cap_fd);
	log_warnx("session %s: refused", "abc");
	tap_ok(strcmp(captured(), "cdsgated test: session abc: refused\n") ==
	    0, "log_warnx: NAME: message");
	errno = ENOENT;
	log_warn("open %s", "/x");
	tap_ok(strcmp(captured(), "cdsgated test: open /x: No such file or "
	    "directory\n") == 0, "log_warn appends strerror(errno)");
	tap_ok(errno == ENOENT, "errno survives a log line");
	log_warnx("path %s", "/a\n" "cdsgated: forged line");
	tap_ok(strcmp(captured(), "cdsgated test: path /a\\x0acdsgated: "
	    "forged line\n") == 0, "an argument's newline cannot start a "
	    "line");

	log_info("info at 1");
	tap_ok(strcmp(captured(), "cdsgated test: info at 1\n") == 0,
	    "log_info speaks by default");
	log_debug("debug at 1");
	tap_ok(captured()[0] == '\0', "log_debug is quiet by default");
	log_set_verbose(0);
	log_info("info at 0");
	tap_ok(captured()[0] == '\0', "log_info is quiet at verbosity 0");
	log_warnx("warn at 0");
	tap_ok(strcmp(captured(), "cdsgated test: warn at 0\n") == 0,
	    "warnings always speak");
	log_set_verbose(2);
	log_debug("x=%d", 3);
	tap_ok(strcmp(captured(), "cdsgated test: debug: x=3\n") == 0,
	    "log_debug at verbosity 2");
	setenv("CDSGATE_LOG_DEBUG", "1", 1);
	log_set_verbose(0);
	tap_ok(log_verbose() == 2, "CDSGATE_LOG_DEBUG raises verbosity 0 "
	    "to 2");
	unsetenv("CDSGATE_LOG_DEBUG");
	log_set_verbose(1);

	/* a long line: cut at LOG_LINE_MAX, marked, still one line */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	log_warnx("%s", big);
	c = captured();
	len = strlen(c);
	tap_ok(len == LOG_LINE_MAX - 1 && strcmp(c + len - 4, "...\n") == 0 &&
	    strchr(c, '\n') == c + len - 1, "a long line is cut to %d bytes "
	    "with \"...\" and one newline (%zu)", LOG_LINE_MAX, len);
	memset(big, '\x1b', sizeof(big) - 1);
	errno = EACCES;
	log_warn("%s", big);
	c = captured();
	len = strlen(c);
	tap_ok(len < LOG_LINE_MAX && strstr(c, "...: Permission denied\n") !=
	    NULL && strstr(c, "\\x1b\\x1b...") != NULL, "a long escaped line "
	    "keeps whole escapes and its strerror (%zu bytes)", len);
}

/* fatal in a forked child: the line, the exit status, no atexit. */
static void
on_exit_handler(void)
{
	(void)!write(cap_fd, "ATEXIT\n", 7);
}

static void
test_fatal(int with_errno)
{
	int st = 0;
	pid_t pid;

	if ((pid = fork()) == 0) {
		log_init("cdsgated child");
		log_set_fd(cap_fd);
		atexit(on_exit_handler);
		errno = EPIPE;
		if (with_errno)
			fatal("write to %s", "peer");
		fatalx("peer broke the protocol (%d)", 7);
	}
	waitpid(pid, &st, 0);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == LOG_FATAL_EXIT,
	    "%s exits %d", with_errno ? "fatal" : "fatalx", LOG_FATAL_EXIT);
	tap_ok(strcmp(captured(), with_errno ? "cdsgated child: fatal: write "
	    "to peer: Broken pipe\n" : "cdsgated child: fatal: peer broke the "
	    "protocol (7)\n") == 0, "... saying so in the child's name, and no "
	    "atexit handler ran");
}

int
main(void)
{
	char path[] = "/tmp/test-log.XXXXXX";

	if ((cap_fd = mkstemp(path)) < 0)
		return 99;
	unlink(path);
	if (fcntl(cap_fd, F_SETFL, O_APPEND) != 0)
		return 99;
	unsetenv("CDSGATE_LOG_DEBUG");
	test_escape();
	test_json_safe();
	test_lines();
	test_fatal(0);
	test_fatal(1);
	return tap_done();
}
