/*
 * tests/fuzz/fuzz-hierarchy.c — libFuzzer target for ARX hierarchies:
 * parse, validate, and on success look every value up again; every
 * merged row is warned (up to the cap) and "*" is found where it is.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "deid/hierarchy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct deid_hierarchy *h = NULL;
	struct deid_error err;
	uint32_t leaf;
	size_t i, said;

	if (deid_hierarchy_parse(data, size, "fuzz", NULL, &h, &err) != DEID_OK)
		return 0;
	for (i = 0; i < h->nleaves; i++)
		if (deid_hierarchy_lookup(h, h->values[0][h->map[0][i]],
		    &leaf) != DEID_OK || leaf != i)
			__builtin_trap();	/* a leaf must find itself */
	said = h->ndup < DEID_HIERARCHY_MAX_WARNINGS ? h->ndup :
	    DEID_HIERARCHY_MAX_WARNINGS;
	if (deid_hierarchy_nwarnings(h) != said)
		__builtin_trap();	/* every merged row is said */
	for (i = 0; i < h->nlevels; i++)
		if (h->star[i] != DEID_NO_CODE &&
		    strcmp(h->values[i][h->star[i]], DEID_SUPPRESSED) != 0)
			__builtin_trap();	/* "*" is where it says */
	deid_hierarchy_free(h);
	return 0;
}
