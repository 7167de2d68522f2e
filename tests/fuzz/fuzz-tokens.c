/*
 * tests/fuzz/fuzz-tokens.c — libFuzzer target for the TCP admin API's
 * tokens file parser (api/tcp.c): any bytes must parse or fail with
 * "path:line: why", never crash; a parsed file then answers a bearer
 * header made of the same bytes.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct api_tokens k;
	char err[512], *auth;

	if (api_tokens_parse("fuzz", data, size, &k, err, sizeof(err)) != 0 ||
	    (auth = malloc(size + 8)) == NULL)
		return 0;
	memcpy(auth, "Bearer ", 7);
	memcpy(auth + 7, data, size);
	auth[size + 7] = '\0';
	(void)api_token_check(&k, auth);
	free(auth);
	return 0;
}
