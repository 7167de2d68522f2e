/*
 * store/hours.h — a recipient's allowed hours: a weekly schedule such as
 * "Mon-Fri 08:00-18:00; Sat 09:00-12:00" in an IANA time zone
 * ("Europe/Berlin", default "UTC").
 *
 * Library code: never logs, never exits.  The schedule text is
 * untrusted (it comes through the API); the parser is strict and names
 * the offending character.  Local time comes from the system zoneinfo
 * through TZ-aware libc calls (tzset + localtime_r), so daylight saving
 * time is the C library's business, not ours.
 *
 * Grammar (ASCII):
 *   schedule := "" | rule *( *SP ";" *SP rule )      "" = any time
 *   rule     := days 1*SP time "-" time
 *   days     := span *( "," span )     span := day [ "-" day ]  (wraps)
 *   day      := "Mon" | "Tue" | "Wed" | "Thu" | "Fri" | "Sat" | "Sun"
 *   time     := HH ":" MM   (00:00 .. 24:00; the end after the start)
 */
#ifndef STORE_HOURS_H
#define STORE_HOURS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define HOURS_TEXT_MAX	256	/* bytes of schedule text, with the NUL */
#define HOURS_TZ_MAX	64	/* bytes of a zone name, with the NUL */
#define HOURS_WEEK_MIN	(7 * 1440)

enum hours_status {
	HOURS_OK = 0,
	HOURS_EINVAL,		/* the schedule or zone is malformed */
	HOURS_ENOZONE		/* no such zone in the system zoneinfo */
};

/* One bit per minute of the week, Monday 00:00 first. */
struct hours {
	int	always;		/* the empty schedule */
	uint8_t	bits[HOURS_WEEK_MIN / 8];
};

const char	*hours_strerror(int status);
/* Parse text into *h; on error err says "column N ('c'): what". */
int	hours_parse(const char *text, struct hours *h, char *err,
	    size_t errlen);
/* Is tz a zone the system knows ("UTC" always is)?  HOURS_* status. */
int	hours_tz_check(const char *tz, char *err, size_t errlen);
/*
 * Is time t inside the schedule, in zone tz?  1 yes, 0 no.  `local`
 * (may be NULL) gets the local time as "Sat 10:02 CET".  Temporarily
 * sets TZ: call from one thread only.
 */
int	hours_allowed(const struct hours *h, const char *tz, time_t t,
	    char *local, size_t locallen);

#endif
