/*
 * tests/unit/test-hours.c — a recipient's allowed hours (store/hours.c):
 * the strict parser names the offending character; evaluation in a real
 * zone follows the system zoneinfo, daylight saving time included.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "store/hours.h"
#include "tests/tap.h"

/* UTC y-m-d h:m as time_t. */
static time_t
utc(int y, int mo, int d, int h, int mi)
{
	struct tm tm = { .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d,
	    .tm_hour = h, .tm_min = mi };

	return timegm(&tm);
}

static void
bad(const char *text, const char *want)
{
	struct hours h;
	char err[200] = "";
	int rc = hours_parse(text, &h, err, sizeof(err));

	if (strstr(err, want) == NULL)
		tap_diag("'%s': got '%s', want '%s'", text, err, want);
	tap_ok(rc == HOURS_EINVAL && strstr(err, want) != NULL,
	    "'%s' is refused: %s", text, err);
}

static int
at(const char *text, const char *tz, time_t t, char *local, size_t len)
{
	struct hours h;
	char err[200];

	if (hours_parse(text, &h, err, sizeof(err)) != HOURS_OK) {
		tap_diag("'%s': %s", text, err);
		return -1;
	}
	return hours_allowed(&h, tz, t, local, len);
}

int
main(void)
{
	const char *biz = "Mon-Fri 08:00-18:00";
	char err[200], local[96];
	struct hours h;

	tap_ok(hours_parse("", &h, err, sizeof(err)) == HOURS_OK && h.always,
	    "the empty schedule means any time");
	tap_ok(hours_parse("Mon-Fri 08:00-18:00; Sat 09:00-12:00", &h, err,
	    sizeof(err)) == HOURS_OK, "two rules parse");
	tap_ok(hours_parse("Mon,Wed,Fri-Sun 00:00-24:00", &h, err,
	    sizeof(err)) == HOURS_OK, "day lists, a wrapping span and 24:00");
	bad("Mon-Fry 08:00-18:00", "column 5 ('F'): expected a day");
	bad("Mon-Fri 8:00-18:00", "column 10 (':')");
	bad("Mon-Fri 08.00-18:00", "column 11 ('.'): expected ':'");
	bad("Mon-Fri 08:00-18:00,Tue", "column 20 (','): expected ';'");
	bad("Mon 18:00-08:00", "column 11 ('0'): the end must be after");
	bad("Mon 25:00-26:00", "column 5 ('2'): time out of range");
	bad("Mon 24:30-24:45", "out of range");
	bad("Mon08:00-18:00", "column 4 ('0'): expected a space");
	bad("mon 08:00-18:00", "column 1 ('m'): expected a day");
	bad("Mon 08:00-18:00;", "column 17 (end of text): expected a day");
	bad("Mon 08:00-18:00\n", "column 16 (byte 0x0a)");
	bad("Mon 08:00", "column 10 (end of text): expected '-'");

	tap_ok(hours_tz_check("UTC", err, sizeof(err)) == HOURS_OK,
	    "UTC is always a zone");
	if (hours_tz_check("Europe/Berlin", err, sizeof(err)) != HOURS_OK) {
		tap_diag("no system zoneinfo: %s", err);
		return tap_done();
	}
	tap_ok(1, "Europe/Berlin is in the system zoneinfo");
	tap_ok(hours_tz_check("Europe/Nowhere", err, sizeof(err)) ==
	    HOURS_ENOZONE, "an unknown zone: %s", err);
	tap_ok(hours_tz_check("../../etc/passwd", err, sizeof(err)) ==
	    HOURS_EINVAL && hours_tz_check("/etc/localtime", err,
	    sizeof(err)) == HOURS_EINVAL && hours_tz_check("Europe//Berlin",
	    err, sizeof(err)) == HOURS_EINVAL, "paths are not zone names");

	/* Wednesday 2026-11-25: CET (UTC+1) */
	tap_ok(at(biz, "Europe/Berlin", utc(2026, 11, 25, 7, 30), local,
	    sizeof(local)) == 1 && strcmp(local, "Wed 08:30 CET") == 0,
	    "07:30 UTC is 08:30 in Berlin in November: inside (%s)", local);
	tap_ok(at(biz, "Europe/Berlin", utc(2026, 11, 25, 6, 59), NULL, 0) ==
	    0, "06:59 UTC is 07:59 CET: outside");
	tap_ok(at(biz, "Europe/Berlin", utc(2026, 11, 25, 16, 59), NULL, 0) ==
	    1 && at(biz, "Europe/Berlin", utc(2026, 11, 25, 17, 0), NULL,
	    0) == 0, "the window ends at 18:00 CET (17:00 UTC)");
	tap_ok(at(biz, "UTC", utc(2026, 11, 25, 17, 30), NULL, 0) == 1,
	    "the same instant in UTC is inside");
	/* Wednesday 2026-07-01: CEST (UTC+2) */
	tap_ok(at(biz, "Europe/Berlin", utc(2026, 7, 1, 15, 59), local,
	    sizeof(local)) == 1 && strcmp(local, "Wed 17:59 CEST") == 0 &&
	    at(biz, "Europe/Berlin", utc(2026, 7, 1, 16, 0), NULL, 0) == 0,
	    "in summer it ends at 16:00 UTC (%s)", local);
	/* Sunday 2026-03-29: 02:00 CET becomes 03:00 CEST at 01:00 UTC */
	tap_ok(at("Sun 02:00-03:00", "Europe/Berlin", utc(2026, 3, 29, 0, 59),
	    NULL, 0) == 0 && at("Sun 02:00-03:00", "Europe/Berlin",
	    utc(2026, 3, 29, 1, 0), local, sizeof(local)) == 0,
	    "the hour skipped by DST is never inside (%s)", local);
	tap_ok(at("Fri-Mon 10:00-11:00", "UTC", utc(2026, 11, 29, 10, 0),
	    local, sizeof(local)) == 1 && at("Fri-Mon 10:00-11:00", "UTC",
	    utc(2026, 11, 25, 10, 0), NULL, 0) == 0,
	    "Fri-Mon takes in Sunday (%s), not Wednesday", local);
	tap_ok(at("Sat 09:00-12:00", "Asia/Kolkata", utc(2026, 11, 28, 3, 30),
	    local, sizeof(local)) == 1 && strcmp(local, "Sat 09:00 IST") == 0,
	    "a half-hour offset zone (%s)", local);
	return tap_done();
}
