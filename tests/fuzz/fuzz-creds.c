/*
 * tests/fuzz/fuzz-creds.c — libFuzzer target for the credentials file
 * parser (policy/creds.c): any bytes must parse or fail with a status,
 * never crash or leak.  (creds_check is not run: every check costs one
 * scrypt by design; tests/unit/test-creds covers it.)
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "policy/creds.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy_error e;
	struct creds *c = NULL;

	(void)creds_parse(&c, (const char *)data, size, "fuzz", &e);
	creds_free(c);
	return 0;
}
