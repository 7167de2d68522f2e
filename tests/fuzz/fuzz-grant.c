/*
 * tests/fuzz/fuzz-grant.c — libFuzzer target for the Cdsgate-Grant
 * header value (common/grant.c), which cdsgate-analytics reads from every
 * request: grant_parse and grant_verify on hostile bytes.  Whatever the
 * input, a value that verifies must be one grant_sign makes for its own
 * fields (no second spelling of a grant), and a refused one names
 * nothing.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/grant.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t key[GRANT_KEY_LEN] = { 7, 1, 2, 3 };
	char v[GRANT_VALUE_MAX];
	struct grant g;

	grant_parse((const char *)data, size, &g);
	if (grant_verify(key, (const char *)data, size, 1000, &g) != GRANT_OK) {
		if (g.dataset != 0 || g.session[0] != '\0')
			__builtin_trap();
		return 0;
	}
	if (grant_sign(key, &g, v) != GRANT_OK || strlen(v) != size ||
	    memcmp(v, data, size) != 0)
		__builtin_trap();
	return 0;
}
