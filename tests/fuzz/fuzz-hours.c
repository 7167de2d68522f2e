/*
 * tests/fuzz/fuzz-hours.c — libFuzzer target for the allowed-hours
 * parser (store/hours.c): any bytes a custodian's client sends as
 * "allowed_hours" are parsed into a schedule or refused with a message
 * naming a column inside the text — never a crash or an overread.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/hours.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hours h;
	char *text, err[200];
	int rc;

	if ((text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	rc = hours_parse(text, &h, err, sizeof(err));
	if (rc != HOURS_OK && rc != HOURS_EINVAL)
		abort();
	if (rc == HOURS_OK)
		(void)hours_allowed(&h, "UTC", (time_t)size * 7919, err,
		    sizeof(err));
	free(text);
	return 0;
}
