/*
 * deid/poptable.h — the journalist's population table (the game's
 * model: SP(r) from a population table).  The table is a CSV whose
 * header names at least the quasi-identifiers; its rows are the
 * population the released table is a sample of.  At a node of the
 * lattice the population's rows are generalized with the same
 * hierarchies and counted per class of the sample: SP(r) = 1 / F, F the
 * population's records in r's class.
 */
#ifndef DEID_POPTABLE_H
#define DEID_POPTABLE_H

#include <stddef.h>
#include <stdint.h>

#include "deid/dataset.h"
#include "deid/error.h"
#include "deid/groupify.h"

struct deid_poptable {
	const char	*name;			/* the dataset's path */
	uint64_t	 rows;
	size_t		 nqi;
	uint32_t	*leaf[DEID_MAX_QI];	/* [rows] leaf of QI j */
};

/* Map every row of pop (parsed, not bound) to the leaves of e's QI
 * hierarchies.  DEID_EINPUT: a QI column missing from pop's header, or
 * a value not a leaf of its hierarchy (err names file:line:column). */
int	deid_poptable_alloc(const struct deid_dataset *pop,
	    const struct deid_engine *e, struct deid_poptable **out,
	    struct deid_error *err);
void	deid_poptable_free(struct deid_poptable *p);

/* popsize[k] = the population's records in class k of the grouped node
 * c (0: the class has none).  No allocation. */
void	deid_poptable_count(const struct deid_poptable *p,
	    const struct deid_engine *e, const struct deid_classes *c,
	    uint64_t *popsize);

#endif
