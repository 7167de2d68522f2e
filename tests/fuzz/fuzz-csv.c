/*
 * tests/fuzz/fuzz-csv.c — libFuzzer target for the CSV reader: any bytes
 * must parse or fail with a status, never crash or leak; the span reader
 * (deid_csv_scan) must see the same records and fail at the same place.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* Fields and bytes seen through spans (the count_cb's n, and more). */
struct spans_seen {
	size_t	 n;
	size_t	 bytes;
};

static int
span_cb(void *ctx, const struct deid_csv_span *f, size_t nf,
    unsigned long line, struct deid_error *err)
{
	struct spans_seen *s = ctx;
	size_t i;

	(void)line; (void)err;
	s->n += nf;
	for (i = 0; i < nf; i++)
		s->bytes += f[i].len;
	return DEID_OK;
}

static int
bytes_cb(void *ctx, const char *const *f, size_t nf, unsigned long line,
    struct deid_error *err)
{
	struct spans_seen *s = ctx;
	size_t i;

	(void)line; (void)err;
	s->n += nf;
	for (i = 0; i < nf; i++)
		s->bytes += strlen(f[i]);
	return DEID_OK;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct deid_csv_opts o = { 0, 256 };
	struct deid_error err, e1, e2;
	struct spans_seen a = { 0, 0 }, b = { 0, 0 };
	size_t n = 0;
	char sep;
	int r1, r2;

	deid_csv_parse(data, size, "fuzz", &o, count_cb, &n, &sep, &err);
	r1 = deid_csv_parse(data, size, "fuzz", &o, bytes_cb, &a, NULL, &e1);
	r2 = deid_csv_scan(data, size, "fuzz", &o, span_cb, &b, NULL, &e2);
	if (r1 != r2 || a.n != b.n || a.bytes != b.bytes ||
	    (r1 != DEID_OK && (e1.line != e2.line || e1.column != e2.column ||
	    strcmp(e1.msg, e2.msg) != 0)))
		abort();	/* the two readers disagree */
	return 0;
}
