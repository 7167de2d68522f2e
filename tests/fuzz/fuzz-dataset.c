/*
 * tests/fuzz/fuzz-dataset.c — libFuzzer target for dataset loading: the
 * input is a CSV table; every column is bound flat and the engine built
 * and grouped, so encoding and grouping see hostile shapes too.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "deid/dataset.h"
#include "deid/groupify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct deid_dataset *ds = NULL;
	struct deid_engine *e = NULL;
	struct deid_classes *c = NULL;
	struct deid_error err;
	unsigned levels[DEID_MAX_QI] = { 0 };
	size_t i;

	if (deid_dataset_parse(data, size, "fuzz", NULL, &ds, &err) != DEID_OK)
		return 0;
	for (i = 0; i < ds->ncols && i < 8; i++)
		if (deid_dataset_bind_flat(ds, i, &err) != DEID_OK)
			goto out;
	if (deid_engine_alloc(ds, &e, &err) != DEID_OK)
		goto out;
	if ((c = deid_classes_alloc(e)) != NULL) {
		deid_groupify(e, levels, c);
		for (i = 0; i < e->nqi; i++)
			levels[i] = 1;
		deid_groupify(e, levels, c);
		if (c->n != 1)
			__builtin_trap();	/* all at the root: one class */
	}
out:
	deid_classes_free(c);
	deid_engine_free(e);
	deid_dataset_free(ds);
	return 0;
}
