/*
 * tests/tap.h — a tiny TAP producer for the unit tests (automake's TAP
 * driver reads it).  Each check prints "ok N - ..." or "not ok N - ...";
 * tap_done() prints the plan and returns the exit status.
 */
#ifndef TESTS_TAP_H
#define TESTS_TAP_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int tap_n, tap_failed;

static inline int
tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		tap_failed++;
	fflush(stdout);
	return cond;
}

static inline void
tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* One check that cannot run here: "ok N # SKIP why". */
static inline void
tap_skip(const char *fmt, ...)
{
	va_list ap;

	printf("ok %d # SKIP ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static inline void
tap_skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	exit(0);
}

/* |got - want| <= rel * max(|want|, tiny) */
static inline int
tap_close(double got, double want, double rel, const char *what)
{
	double scale = fabs(want) > 1e-300 ? fabs(want) : 1.0;
	int ok = isfinite(got) && fabs(got - want) <= rel * scale;

	if (!ok)
		tap_diag("%s: got %.17g want %.17g (rel %.3g)", what, got, want,
		    fabs(got - want) / scale);
	return tap_ok(ok, "%s", what);
}

static inline int
tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
