/*
 * api/recipients.c — /v1/recipients: the researchers sessions are for.
 *
 * Trust: unprivileged; the body is untrusted JSON checked by api/field.c.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "store/hours.h"

static json_t *
recipient_json(const struct store_recipient *rc)
{
	return json_pack("{s:s, s:s, s:I, s:b, s:i, s:s, s:s}", "id", rc->id,
	    "name", rc->name, "created", (json_int_t)rc->created, "disabled",
	    rc->disabled, "max_sessions", (int)rc->max_sessions,
	    "allowed_hours", rc->allowed_hours, "tz", rc->tz[0] != '\0' ?
	    rc->tz : "UTC");
}

static int
list_one(const struct store_recipient *rc, void *arg)
{
	return json_array_append_new(arg, recipient_json(rc));
}

int
recipients_list(struct api_req *r)
{
	json_t *a = json_array();
	int st;

	if ((st = store_recipient_list(r->store, list_one, a)) != STORE_OK) {
		json_decref(a);
		return api_store_error(r, st, "listing recipients");
	}
	return api_reply(r, 200, json_pack("{s:o}", "recipients", a));
}

int
recipients_add(struct api_req *r)
{
	struct store_recipient rc;
	int st;

	if (body_recipient_add(r, &rc) != 0)
		return -1;
	rc.created = (int64_t)time(NULL);
	if (api_audit(r, "recipient.add", recipient_json(&rc)) != 0)
		return -1;
	if ((st = store_recipient_add(r->store, &rc)) != STORE_OK) {
		api_audit_refused(r, "recipient.add", st);
		return api_store_error(r, st, "adding the recipient");
	}
	return api_reply(r, 201, recipient_json(&rc));
}

int
recipients_show(struct api_req *r)
{
	struct store_recipient rc;
	int st;

	if ((st = store_recipient_get(r->store, r->params[0], &rc)) !=
	    STORE_OK)
		return api_store_error(r, st, "recipient");
	return api_reply(r, 200, recipient_json(&rc));
}

int
recipients_disable(struct api_req *r)
{
	struct store_recipient rc;
	int st;

	/* unknown: 404 before the audit (a request about nothing) */
	if ((st = store_recipient_get(r->store, r->params[0], &rc)) !=
	    STORE_OK)
		return api_store_error(r, st, "recipient");
	if (api_audit(r, "recipient.disable", json_pack("{s:s}", "id",
	    r->params[0])) != 0)
		return -1;
	if ((st = store_recipient_disable(r->store, r->params[0])) !=
	    STORE_OK ||
	    (st = store_recipient_get(r->store, r->params[0], &rc)) !=
	    STORE_OK) {
		api_audit_refused(r, "recipient.disable", st);
		return api_store_error(r, st, "disabling the recipient");
	}
	return api_reply(r, 200, recipient_json(&rc));
}

/* POST /v1/recipients/{id}/hours {"allowed_hours"?, "tz"?}: a new
 * schedule, zone or both; what the body does not name stays as it was.
 * The tick ends live sessions that fall outside the new window. */
int
recipients_hours(struct api_req *r)
{
	struct store_recipient rc;
	struct body_hours b;
	char hours[HOURS_TEXT_MAX], tz[HOURS_TZ_MAX];
	int st;

	if (body_recipient_hours(r, &b) != 0)
		return -1;
	if ((st = store_recipient_get(r->store, r->params[0], &rc)) !=
	    STORE_OK)
		return api_store_error(r, st, "recipient");
	snprintf(hours, sizeof(hours), "%s", b.has_hours ? b.hours :
	    rc.allowed_hours);
	snprintf(tz, sizeof(tz), "%s", b.has_tz ? b.tz : rc.tz[0] != '\0' ?
	    rc.tz : "UTC");
	if (api_audit(r, "recipient.hours", json_pack("{s:s, s:s, s:s}",
	    "id", r->params[0], "allowed_hours", hours, "tz", tz)) != 0)
		return -1;
	if ((st = store_recipient_set_hours(r->store, r->params[0], hours,
	    tz)) != STORE_OK ||
	    (st = store_recipient_get(r->store, r->params[0], &rc)) !=
	    STORE_OK) {
		api_audit_refused(r, "recipient.hours", st);
		return api_store_error(r, st, "setting the allowed hours");
	}
	return api_reply(r, 200, recipient_json(&rc));
}

time_t
api_hours_now(void)
{
	time_t now = time(NULL);
#ifdef ENABLE_TEST_HOOKS
	/* CDSGATE_TEST_CLOCK=FILE: FILE holds seconds to add to the clock
	   allowed hours are judged by, so a test can step out of a window
	   without waiting for the wall clock.  Read on every call. */
	const char *path = getenv("CDSGATE_TEST_CLOCK");
	char buf[32];
	ssize_t n;
	int fd;

	if (path != NULL && (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			now += (time_t)strtoll(buf, NULL, 10);
		}
	}
#endif
	return now;
}

int
api_recipient_in_hours(struct store *st, const char *recipient, char *why,
    size_t whylen)
{
	struct store_recipient rc;
	struct hours h;
	char err[200], local[96];

	if (store_recipient_get(st, recipient, &rc) != STORE_OK)
		return snprintf(why, whylen, "recipient %s: not readable",
		    recipient), -1;
	if (hours_parse(rc.allowed_hours, &h, err, sizeof(err)) != HOURS_OK)
		return snprintf(why, whylen, "allowed hours: %s", err), 0;
	if (hours_allowed(&h, rc.tz, api_hours_now(), local, sizeof(local)))
		return 1;
	snprintf(why, whylen, "recipient %s may have sessions %s (%s); it is "
	    "%s there", recipient, rc.allowed_hours, rc.tz, local);
	return 0;
}
