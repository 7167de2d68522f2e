/*
 * tests/fuzz/fuzz-policy.c — libFuzzer target for session policy files
 * (`--policy FILE`, policy/spec.c): any bytes as the file's text must
 * load or be refused with a message naming the file, never crash,
 * overrun or leak; what loaded must print as JSON.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "policy/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct session_spec s;
	struct policy_error err;
	json_t *j;

	memset(&err, 0, sizeof(err));
	if (spec_init(&s, &err) != POLICY_OK)
		return 0;
	if (spec_load_text(&s, (const char *)data, size, "fuzz.json",
	    &err) == POLICY_OK) {
		if ((j = spec_to_json(&s)) == NULL)
			abort();
		json_decref(j);
		(void)spec_allow_plain(&s);
	} else if (strncmp(err.msg, "fuzz.json", 9) != 0)
		abort();	/* a refusal names the file */
	spec_free(&s);
	return 0;
}
