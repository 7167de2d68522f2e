/*
 * api/recipients.c — /v1/recipients: the researchers sessions are for.
 *
 * Trust: unprivileged; the body is untrusted JSON checked by api/field.c.
 */
#include "config.h"

#include <string.h>
#include <time.h>

#include "api/api.h"

static json_t *
recipient_json(const struct store_recipient *rc)
{
	return json_pack("{s:s, s:s, s:I, s:b, s:i}", "id", rc->id, "name",
	    rc->name, "created", (json_int_t)rc->created, "disabled",
	    rc->disabled, "max_sessions", (int)rc->max_sessions);
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
	static const char *const keys[] = { "id", "name", "max_sessions",
	    NULL };
	struct store_recipient rc = { .max_sessions = 1 };
	unsigned long max = 1;
	int st;

	if (field_only(r, keys) != 0 || field_id(r, "id", 1, rc.id) != 0 ||
	    field_string(r, "name", 1, sizeof(rc.name) - 1, rc.name,
	    sizeof(rc.name)) != 0 ||
	    field_uint(r, "max_sessions", 0, 1, 100, &max) != 0)
		return -1;
	rc.max_sessions = (unsigned)max;
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
