/*
 * deid/lattice.h — the generalization lattice: one level per QI.
 *
 * Nodes are numbered in mixed radix over the QI heights, so a node is
 * just an index; successors differ by +1 on one QI.  The search visits
 * nodes in increasing order of a lower bound of their information loss
 * (ties: smaller sum of levels, then index), which puts every node after
 * all of its predecessors.
 */
#ifndef DEID_LATTICE_H
#define DEID_LATTICE_H

#include <stddef.h>
#include <stdint.h>

#include "deid/error.h"
#include "deid/groupify.h"

#define DEID_MAX_NODES	(64ULL * 1024 * 1024)

struct deid_lattice {
	size_t		 nqi;
	unsigned	 height[DEID_MAX_QI];	/* levels per QI */
	uint64_t	 stride[DEID_MAX_QI];
	uint64_t	 nnodes;
	double		*bound;		/* [nnodes] loss lower bound */
	uint64_t	*order;		/* [nnodes] node indices, visit order */
};

int	deid_lattice_alloc(const struct deid_engine *e,
	    struct deid_lattice **out, struct deid_error *err);
void	deid_lattice_free(struct deid_lattice *l);

void	deid_lattice_levels(const struct deid_lattice *l, uint64_t node,
	    unsigned *levels);
uint64_t deid_lattice_node(const struct deid_lattice *l,
	    const unsigned *levels);
unsigned deid_lattice_sum(const struct deid_lattice *l, uint64_t node);

/* Fill bound[] from per-QI per-level terms term[j][level] combined by
 * combine(), then sort order[]. */
typedef double (*deid_bound_combine)(const double *terms, size_t nqi);
void	deid_lattice_order(struct deid_lattice *l, double *const *term,
	    deid_bound_combine combine);

#endif
