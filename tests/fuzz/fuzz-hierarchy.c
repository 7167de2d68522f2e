/*
 * tests/fuzz/fuzz-hierarchy.c — libFuzzer target for ARX hierarchies:
 * parse, validate, and on success look every value up again.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "deid/hierarchy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct deid_hierarchy *h = NULL;
	struct deid_error err;
	uint32_t leaf;
	size_t i;

	if (deid_hierarchy_parse(data, size, "fuzz", NULL, &h, &err) != DEID_OK)
		return 0;
	for (i = 0; i < h->nleaves; i++)
		if (deid_hierarchy_lookup(h, h->values[0][h->map[0][i]],
		    &leaf) != DEID_OK || leaf != i)
			__builtin_trap();	/* a leaf must find itself */
	deid_hierarchy_free(h);
	return 0;
}
