/*
 * tests/fuzz/fuzz-config.c — libFuzzer target for the daemon's
 * configuration file (policy/config.c): any bytes as the file's text
 * must load or be refused with a message, never crash, overrun or
 * leak; a loaded configuration must print.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	static struct gw_config c;
	struct policy_error err;

	if (null == NULL && (null = fopen("/dev/null", "w")) == NULL)
		return 0;
	memset(&err, 0, sizeof(err));
	if (config_parse(&c, (const char *)data, size, "fuzz.json", &err) ==
	    POLICY_OK)
		config_print(&c, null);
	else if (err.msg[0] == '\0')
		abort();	/* a refusal must say why */
	return 0;
}
