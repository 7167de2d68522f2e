/*
 * deid/search.h — globally optimal full-domain generalization with
 * record suppression (as ARX's search; docs/deid.md).
 *
 * Nodes are checked in increasing order of a lower bound of their loss
 * (generalization-only loss, which suppression can only raise); the
 * search stops at the first node whose bound cannot beat the best
 * feasible node found.  Ties: smaller sum of levels, then node index.
 * Two threads check two nodes at a time in bound order; the answer does
 * not depend on their timing.  The top node is checked like any other
 * (suppress.h): when no node is feasible, every node has been checked
 * and the result says how close the best one came.
 */
#ifndef DEID_SEARCH_H
#define DEID_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "deid/groupify.h"
#include "deid/lattice.h"
#include "deid/quality.h"
#include "deid/suppress.h"

struct deid_search_opts {
	struct deid_criteria	 crit;
	enum deid_quality_model	 quality;
	unsigned		 threads;	/* 0 = number of CPUs, max 8 */
	int			 exhaustive;	/* test hook: check every node */
	int			 no_rollup;	/* test hook: group from bottom */
	size_t			 snapshot_budget; /* bytes; 0 = 256 MiB */
};

struct deid_search_result {
	int			 found;
	uint64_t		 node;
	unsigned		 levels[DEID_MAX_QI];
	double			 objective;
	struct deid_loss	 loss;
	struct deid_node_eval	 eval;
	uint64_t		 nodes;
	uint64_t		 evaluated;
	uint64_t		 model_calls;
	uint64_t		 rollups;	/* nodes grouped by roll-up */
	/* The least-suppressing checked node that meets every criterion
	 * but the suppression limit: its share (0..1) of records
	 * suppressed.  With found == 0 every node was checked, so it is
	 * the least over the lattice; closest_found == 0 when no node
	 * meets the criteria even with unlimited suppression. */
	int			 closest_found;
	double			 closest_suppressed;
	uint64_t		 closest_node;
};

int	deid_search(const struct deid_engine *e,
	    const struct deid_search_opts *opts,
	    struct deid_search_result *res, struct deid_error *err);

/* Group one node and decide its suppression, as the search did. */
struct deid_node_ws {
	struct deid_classes	*classes;
	struct deid_suppress_ws	*supp;
	uint64_t		*scratch;
};
int	deid_node_ws_alloc(const struct deid_engine *e,
	    struct deid_node_ws *ws);
void	deid_node_ws_free(struct deid_node_ws *ws);
/* Evaluate the node already grouped in ws->classes. */
void	deid_node_evaluate(const struct deid_engine *e,
	    const struct deid_quality_tables *t,
	    const struct deid_search_opts *opts, struct deid_node_ws *ws,
	    struct deid_node_eval *ev, struct deid_loss *loss);
/* Group from the bottom, then evaluate. */
void	deid_node_check(const struct deid_engine *e,
	    const struct deid_quality_tables *t,
	    const struct deid_search_opts *opts, const unsigned *levels,
	    struct deid_node_ws *ws, struct deid_node_eval *ev,
	    struct deid_loss *loss);

#endif
