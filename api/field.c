/*
 * api/field.c — typed access to the fields of a request body.  Every
 * check names the field and what was expected, so a custodian's typo
 * gets a clear 400/422 and never a half-applied change.
 *
 * Trust: the body is untrusted JSON (already parsed by jansson).
 */
#include "config.h"

#include <string.h>

#include "api/api.h"
#include "store/hours.h"

/* The field, or NULL (and a 400 if it is required). */
static json_t *
field_get(struct api_req *r, const char *key, int required, int *failed)
{
	json_t *v = json_object_get(r->body, key);

	*failed = 0;
	if (v == NULL && required) {
		api_error(r, 400, "missing", "field '%s' is required", key);
		*failed = 1;
	}
	return v;
}

int
field_string(struct api_req *r, const char *key, int required,
    size_t maxlen, char *out, size_t outlen)
{
	json_t *v;
	size_t n;
	int failed;

	if ((v = field_get(r, key, required, &failed)) == NULL)
		return failed ? -1 : 0;
	if (!json_is_string(v))
		return api_error(r, 400, "type", "field '%s': expected a "
		    "string", key), -1;
	n = json_string_length(v);
	if (n == 0 || n > maxlen || n >= outlen ||
	    memchr(json_string_value(v), '\0', n) != NULL)
		return api_error(r, 422, "invalid", "field '%s': expected "
		    "1..%zu characters without NUL", key, maxlen), -1;
	memcpy(out, json_string_value(v), n + 1);
	return 0;
}

int
field_id(struct api_req *r, const char *key, int required, char *out)
{
	char tmp[STORE_ID_MAX];

	tmp[0] = '\0';
	if (field_string(r, key, required, STORE_ID_MAX - 1, tmp,
	    sizeof(tmp)) != 0)
		return -1;
	if (tmp[0] == '\0')
		return 0;
	if (!store_id_valid(tmp))
		return api_error(r, 422, "invalid", "field '%s': an id is "
		    "1..%d characters of A-Z a-z 0-9 . _ - and does not "
		    "start with . or -", key, STORE_ID_MAX - 1), -1;
	memcpy(out, tmp, strlen(tmp) + 1);
	return 0;
}

int
field_uint(struct api_req *r, const char *key, int required,
    unsigned long min, unsigned long max, unsigned long *out)
{
	json_t *v;
	json_int_t i;
	int failed;

	if ((v = field_get(r, key, required, &failed)) == NULL)
		return failed ? -1 : 0;
	if (!json_is_integer(v))
		return api_error(r, 400, "type", "field '%s': expected an "
		    "integer", key), -1;
	i = json_integer_value(v);
	if (i < 0 || (unsigned long long)i < min ||
	    (unsigned long long)i > max)
		return api_error(r, 422, "invalid", "field '%s': expected "
		    "%lu..%lu", key, min, max), -1;
	*out = (unsigned long)i;
	return 0;
}

int
field_only(struct api_req *r, const char *const *allowed)
{
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach(r->body, key, v) {
		for (i = 0; allowed[i] != NULL; i++)
			if (strcmp(key, allowed[i]) == 0)
				break;
		if (allowed[i] == NULL)
			return api_error(r, 400, "unknown_field",
			    "unknown field '%s'", key), -1;
	}
	return 0;
}

/* "allowed_hours" may be "" (any time), unlike field_string's 1..n. */
static int
field_hours_text(struct api_req *r, int required, char *out)
{
	json_t *v;
	size_t n;
	int failed;

	if ((v = field_get(r, "allowed_hours", required, &failed)) == NULL)
		return failed ? -1 : 0;
	if (!json_is_string(v))
		return api_error(r, 400, "type", "field 'allowed_hours': "
		    "expected a string"), -1;
	n = json_string_length(v);
	if (n >= HOURS_TEXT_MAX || memchr(json_string_value(v), '\0', n))
		return api_error(r, 400, "hours", "field 'allowed_hours': at "
		    "most %d characters without NUL", HOURS_TEXT_MAX - 1), -1;
	memcpy(out, json_string_value(v), n + 1);
	return 0;
}

int
field_hours(struct api_req *r, int required, char *hours, char *tz)
{
	struct hours h;
	char err[200];

	if (field_hours_text(r, required, hours) != 0 ||
	    field_string(r, "tz", 0, HOURS_TZ_MAX - 1, tz, HOURS_TZ_MAX) != 0)
		return -1;
	if (hours_parse(hours, &h, err, sizeof(err)) != HOURS_OK)
		return api_error(r, 400, "hours", "field 'allowed_hours': %s",
		    err), -1;
	if (hours_tz_check(tz, err, sizeof(err)) != HOURS_OK)
		return api_error(r, 400, "hours", "field 'tz': %s", err), -1;
	return 0;
}
