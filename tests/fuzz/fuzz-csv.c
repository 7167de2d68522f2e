/*
 * tests/fuzz/fuzz-csv.c — libFuzzer target for the CSV reader: any bytes
 * must parse or fail with a status, never crash or leak.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "deid/csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
count_cb(void *ctx, const char *const *f, size_t nf, unsigned long line,
    struct deid_error *err)
{
	size_t *n = ctx;

	(void)f; (void)line; (void)err;
	*n += nf;
	return DEID_OK;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct deid_csv_opts o = { 0, 256 };
	struct deid_error err;
	size_t n = 0;
	char sep;

	deid_csv_parse(data, size, "fuzz", &o, count_cb, &n, &sep, &err);
	return 0;
}
