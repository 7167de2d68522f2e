/*
 * tests/fuzz/fuzz-api.c — libFuzzer target for the admin API's request
 * bodies: the bytes go through api_body_load (api/http.c) as the server
 * collected them, then through the route's body parser (api/body.c), the
 * same functions the handlers call before they touch the store.
 *
 * Input: byte 0 picks the route (and, for a mount, the configured
 * default backend); the rest is the body.  What must hold: every call
 * ends in 0 with no reply set, or -1 with a 4xx (503 only for memory)
 * JSON error naming a code; what a parser accepts is within its bounds
 * (an id store_id_valid accepts, a name [a-z][a-z0-9_]{0,39}, hours
 * hours_parse accepts, the config's ceilings).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)	do { if (!(c)) abort(); } while (0)

static const struct api_config cfg = {
	.expires_default = 3600, .expires_max = 7 * 86400,
	.memory_limit_max = 4096,
};
static const struct api_config cfg_pg = {
	.expires_default = 3600, .expires_max = 7 * 86400,
	.memory_limit_max = 4096, .mount_backend = "postgres",
};

/* A refusal is a JSON {"error": {"status", "code", "message"}}. */
static void
check_refusal(const struct api_req *r)
{
	json_t *j, *e;

	CHECK(r->reply != NULL);
	CHECK((r->status >= 400 && r->status < 500) || r->status == 503);
	CHECK((j = json_loads(r->reply, 0, NULL)) != NULL);
	e = json_object_get(j, "error");
	CHECK(json_integer_value(json_object_get(e, "status")) ==
	    (json_int_t)r->status);
	CHECK(json_string_length(json_object_get(e, "code")) > 0);
	CHECK(json_is_string(json_object_get(e, "message")));
	json_decref(j);
}

static void
check_hours(const char *hours, const char *tz)
{
	struct hours h;
	char err[200];

	CHECK(hours_parse(hours, &h, err, sizeof(err)) == HOURS_OK);
	CHECK(hours_tz_check(tz, err, sizeof(err)) == HOURS_OK);
}

/* Run route `which` on r's body; 0 accepted (and checked), -1 refused. */
static int
route(struct api_req *r, unsigned which)
{
	struct store_recipient rc;
	struct body_hours bh;
	struct body_session bs;
	struct body_import bi;
	unsigned long exp;
	char backend[16];

	switch (which % 6) {
	case 0:
		if (body_recipient_add(r, &rc) != 0)
			return -1;
		CHECK(store_id_valid(rc.id) && rc.name[0] != '\0');
		CHECK(rc.max_sessions >= 1 && rc.max_sessions <= 100);
		check_hours(rc.allowed_hours, rc.tz);
		return 0;
	case 1:
		if (body_recipient_hours(r, &bh) != 0)
			return -1;
		CHECK(bh.has_hours || bh.has_tz);
		check_hours(bh.hours, bh.tz);
		return 0;
	case 2:
		if (body_session_create(r, &bs) != 0)
			return -1;
		CHECK(store_id_valid(bs.recipient) && bs.dataset >= 1);
		CHECK(bs.expires_in >= 1 && bs.expires_in <= cfg.expires_max);
		CHECK(bs.memory_limit_mb >= 512 &&
		    bs.memory_limit_mb <= cfg.memory_limit_max);
		return 0;
	case 3:
		if (body_session_extend(r, &exp) != 0)
			return -1;
		CHECK(exp >= 1 && exp <= cfg.expires_max);
		return 0;
	case 4:
		if (body_dataset_import(r, &bi) != 0)
			return -1;
		CHECK(bi.name[0] >= 'a' && bi.name[0] <= 'z' &&
		    strlen(bi.name) <= 40 && json_is_object(bi.job));
		CHECK(json_object_get(bi.job, "name") == NULL &&
		    json_object_get(bi.job, "sources") == NULL);
		CHECK(json_is_string(json_object_get(bi.job, "data")));
		body_import_clear(&bi);
		return 0;
	default:
		if (body_dataset_mount(r, backend, sizeof(backend)) != 0)
			return -1;
		CHECK(strcmp(backend, "embedded") == 0);
		return 0;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct api_req r;
	unsigned which;

	if (size < 1)
		return 0;
	which = data[0];
	memset(&r, 0, sizeof(r));
	r.cfg = (which / 6) % 2 ? &cfg_pg : &cfg;
	if (api_body_load(&r, data + 1, size - 1) != 0)
		check_refusal(&r);
	else if (r.body == NULL)
		CHECK(size == 1 && r.reply == NULL);
	else if (route(&r, which) != 0)
		check_refusal(&r);
	else
		CHECK(r.reply == NULL && r.status == 0);
	json_decref(r.body);
	free(r.reply);
	return 0;
}
