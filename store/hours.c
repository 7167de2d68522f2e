/*
 * store/hours.c — parse and evaluate a recipient's allowed hours
 * (store/hours.h has the grammar).
 *
 * Trust: the schedule text and zone name are untrusted (API bodies,
 * CLI arguments).  The text is read through the bounded buffer; a zone
 * name is checked character by character before it becomes a path
 * under the system zoneinfo, and the file must start with "TZif".
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "store/hours.h"

#define ZONEINFO	"/usr/share/zoneinfo"

static const char *const day_names[7] = {
	"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"
};

const char *
hours_strerror(int status)
{
	switch (status) {
	case HOURS_OK:		return "ok";
	case HOURS_EINVAL:	return "malformed allowed hours or zone";
	case HOURS_ENOZONE:	return "unknown time zone";
	}
	return "unknown hours status";
}

/* "column N ('c'): what" — or "column N (end): what" at the end. */
static int
bad(const struct buf *b, char *err, size_t errlen, const char *what)
{
	uint8_t c;

	if (buf_peek_u8(b, &c) != BUF_OK)
		snprintf(err, errlen, "column %zu (end of text): %s",
		    b->off + 1, what);
	else if (c >= 0x20 && c < 0x7f)
		snprintf(err, errlen, "column %zu ('%c'): %s", b->off + 1, c,
		    what);
	else
		snprintf(err, errlen, "column %zu (byte 0x%02x): %s",
		    b->off + 1, c, what);
	return HOURS_EINVAL;
}

/* A three-letter day name into 0 (Mon) .. 6 (Sun). */
static int
get_day(struct buf *b, int *day)
{
	int i;

	if (buf_remaining(b) < 3)
		return -1;
	for (i = 0; i < 7; i++)
		if (memcmp(buf_ptr(b), day_names[i], 3) == 0) {
			buf_skip(b, 3);
			*day = i;
			return 0;
		}
	return -1;
}

/* Two ASCII digits. */
static int
get_2digits(struct buf *b, int *v)
{
	uint8_t a, c;

	if (buf_peek_u8(b, &a) != BUF_OK || a < '0' || a > '9')
		return -1;
	buf_skip(b, 1);
	if (buf_peek_u8(b, &c) != BUF_OK || c < '0' || c > '9')
		return -1;
	buf_skip(b, 1);
	*v = (a - '0') * 10 + (c - '0');
	return 0;
}

/* Is the next byte c?  Consumes it if so. */
static int
accept_u8(struct buf *b, uint8_t c)
{
	uint8_t x;

	if (buf_peek_u8(b, &x) != BUF_OK || x != c)
		return 0;
	buf_skip(b, 1);
	return 1;
}

static void
skip_spaces(struct buf *b)
{
	while (accept_u8(b, ' '))
		;
}

/* HH:MM into minutes of the day, 0 .. 1440. */
static int
get_time(struct buf *b, int *min, char *err, size_t errlen)
{
	int h, m;

	if (get_2digits(b, &h) != 0)
		return bad(b, err, errlen, "expected HH:MM (two digits)");
	if (!accept_u8(b, ':'))
		return bad(b, err, errlen, "expected ':' between hours and "
		    "minutes");
	if (get_2digits(b, &m) != 0)
		return bad(b, err, errlen, "expected two digits of minutes");
	if (h > 24 || m > 59 || (h == 24 && m != 0)) {
		b->off -= 5;
		return bad(b, err, errlen, "time out of range (00:00 .. "
		    "24:00)");
	}
	*min = h * 60 + m;
	return HOURS_OK;
}

/* days := span *("," span): a 7-bit set into *set. */
static int
get_days(struct buf *b, unsigned *set, char *err, size_t errlen)
{
	int d0, d1;

	*set = 0;
	do {
		if (get_day(b, &d0) != 0)
			return bad(b, err, errlen, "expected a day (Mon, Tue, "
			    "Wed, Thu, Fri, Sat, Sun)");
		d1 = d0;
		if (accept_u8(b, '-') && get_day(b, &d1) != 0)
			return bad(b, err, errlen, "expected a day after '-'");
		for (;;) {	/* Fri-Mon wraps over the weekend */
			*set |= 1u << d0;
			if (d0 == d1)
				break;
			d0 = (d0 + 1) % 7;
		}
	} while (accept_u8(b, ','));
	return HOURS_OK;
}

/* One rule: set its minutes in h. */
static int
get_rule(struct buf *b, struct hours *h, char *err, size_t errlen)
{
	unsigned days;
	int from, to, d, m, rc;

	if ((rc = get_days(b, &days, err, errlen)) != HOURS_OK)
		return rc;
	if (!accept_u8(b, ' '))
		return bad(b, err, errlen, "expected a space before the "
		    "times");
	skip_spaces(b);
	if ((rc = get_time(b, &from, err, errlen)) != HOURS_OK)
		return rc;
	if (!accept_u8(b, '-'))
		return bad(b, err, errlen, "expected '-' between the times");
	if ((rc = get_time(b, &to, err, errlen)) != HOURS_OK)
		return rc;
	if (to <= from) {
		b->off -= 5;
		return bad(b, err, errlen, "the end must be after the start "
		    "(split a window over midnight into two rules)");
	}
	for (d = 0; d < 7; d++)
		for (m = from; (days & (1u << d)) && m < to; m++)
			h->bits[(d * 1440 + m) / 8] |= 1u << ((d * 1440 + m) % 8);
	return HOURS_OK;
}

int
hours_parse(const char *text, struct hours *h, char *err, size_t errlen)
{
	struct buf b;
	size_t len = strnlen(text, HOURS_TEXT_MAX);
	int rc;

	memset(h, 0, sizeof(*h));
	if (len >= HOURS_TEXT_MAX)
		return snprintf(err, errlen, "longer than %d bytes",
		    HOURS_TEXT_MAX - 1), HOURS_EINVAL;
	buf_init(&b, text, len);
	if (len == 0) {
		h->always = 1;
		return HOURS_OK;
	}
	for (;;) {
		if ((rc = get_rule(&b, h, err, errlen)) != HOURS_OK)
			return rc;
		skip_spaces(&b);
		if (buf_eof(&b))
			return HOURS_OK;
		if (!accept_u8(&b, ';'))
			return bad(&b, err, errlen, "expected ';' before the "
			    "next rule, or the end");
		skip_spaces(&b);
	}
}

/* A zone name: [A-Za-z0-9_+-] segments separated by single '/'. */
static int
tz_name_ok(const char *tz)
{
	size_t i, seg = 0;

	if (tz[0] == '\0' || strlen(tz) >= HOURS_TZ_MAX)
		return 0;
	for (i = 0; tz[i] != '\0'; i++) {
		char c = tz[i];

		if (c == '/') {
			if (seg == 0)
				return 0;
			seg = 0;
			continue;
		}
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '+' ||
		    (c == '-' && seg > 0)))
			return 0;
		seg++;
	}
	return seg > 0;
}

int
hours_tz_check(const char *tz, char *err, size_t errlen)
{
	char path[sizeof(ZONEINFO) + HOURS_TZ_MAX + 1], magic[4];
	int fd, ok;

	if (strcmp(tz, "UTC") == 0)
		return HOURS_OK;
	if (!tz_name_ok(tz))
		return snprintf(err, errlen, "time zone: want an IANA name "
		    "like Europe/Berlin ([A-Za-z0-9_+-] and '/')"),
		    HOURS_EINVAL;
	snprintf(path, sizeof(path), "%s/%s", ZONEINFO, tz);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0 &&
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return snprintf(err, errlen, "time zone %s: not in %s", tz,
		    ZONEINFO), HOURS_ENOZONE;
	ok = read(fd, magic, 4) == 4 && memcmp(magic, "TZif", 4) == 0;
	close(fd);
	if (!ok)
		return snprintf(err, errlen, "time zone %s: not a zoneinfo "
		    "file", tz), HOURS_ENOZONE;
	return HOURS_OK;
}

/* localtime_r(t) in zone tz, and the zone's abbreviation into abbr;
 * the caller's TZ is put back. */
static int
local_tm(const char *tz, time_t t, struct tm *tm, char *abbr, size_t alen)
{
	char *old = getenv("TZ"), saved[HOURS_TZ_MAX + 2] = "";
	char want[HOURS_TZ_MAX + 2];
	int had = old != NULL && strlen(old) < sizeof(saved), ok;

	if (had)
		snprintf(saved, sizeof(saved), "%s", old);
	/* ":" + name: the file under zoneinfo, never a POSIX rule */
	snprintf(want, sizeof(want), ":%s", tz);
	setenv("TZ", want, 1);
	tzset();
	ok = localtime_r(&t, tm) != NULL;
	snprintf(abbr, alen, "%s", ok && tm->tm_zone != NULL ? tm->tm_zone :
	    tz);
	if (had)
		setenv("TZ", saved, 1);
	else
		unsetenv("TZ");
	tzset();
	return ok ? 0 : -1;
}

int
hours_allowed(const struct hours *h, const char *tz, time_t t,
    char *local, size_t locallen)
{
	char abbr[HOURS_TZ_MAX];
	struct tm tm;
	int m;

	if (local != NULL && locallen > 0)
		local[0] = '\0';
	if (local_tm(tz, t, &tm, abbr, sizeof(abbr)) != 0)
		return 0;	/* fail closed */
	m = ((tm.tm_wday + 6) % 7) * 1440 + tm.tm_hour * 60 + tm.tm_min;
	if (local != NULL)
		snprintf(local, locallen, "%s %02d:%02d %s", day_names[m / 1440],
		    tm.tm_hour, tm.tm_min, abbr);
	if (h->always)
		return 1;
	return (h->bits[m / 8] >> (m % 8)) & 1;
}
