/*
 * deid/suppress.h — privacy criteria and record suppression (docs/deid.md,
 * last part, §5).
 *
 * For a grouped transformation, decide which classes to suppress so the
 * criteria hold.  A class whose every QI value is written as
 * DEID_SUPPRESSED ("*": at the top of the usual hierarchies) reads as
 * suppressed in the release, so it is suppressed and counted so at any
 * node; no node is feasible for being at the top.  Then every class
 * smaller than k (k-anonymity), then the
 * smallest prefix of the classes ordered by (size ascending, own loss
 * descending, first record) whose removal brings population uniqueness
 * to <= t, found by binary search (risk only falls as classes go).  The
 * transformation is infeasible if that needs more records than the
 * suppression limit allows.  The game-theoretic criterion (game.h) then
 * suppresses every class its variant does not release; with PU on, the
 * released part is checked again (fail closed if it no longer holds).
 */
#ifndef DEID_SUPPRESS_H
#define DEID_SUPPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "deid/game.h"
#include "deid/groupify.h"
#include "deid/risk.h"

struct deid_criteria {
	unsigned	 k;		/* k-anonymity; 0 or 1 = off */
	int		 pu;		/* population uniqueness on? */
	double		 pu_threshold;	/* t, fraction of N */
	double		 population;	/* N */
	enum deid_model	 pu_model;
	double		 suppression_limit;	/* fraction of records */
	int		 linear;	/* test hook: linear, not binary, search */
	struct deid_game game;		/* variant OFF: not a criterion */
	/* Per QI the lowest level a release may use (the Safe Harbor
	 * floor; all 0: none): the search skips every node below it. */
	unsigned	 min_level[DEID_MAX_QI];
};

/* Is no QI of `levels` below the criteria's floor? */
int	deid_criteria_floor_ok(const struct deid_criteria *c,
	    const unsigned *levels, size_t nqi);
/* Is any floor set? */
int	deid_criteria_has_floor(const struct deid_criteria *c, size_t nqi);

struct deid_suppress_ws {
	size_t			 cap;
	uint32_t		*order;		/* [cap] classes of the cut size */
	double			*ownloss;	/* [cap] */
	uint8_t			*suppressed;	/* [cap] per class */
	uint64_t		*gstart;	/* [cap+1] size-group starts */
	uint64_t		*gsize;		/* [cap] size of each group */
	uint64_t		*gcount;	/* [cap] classes of each size */
	size_t			 ngroups;
	uint64_t		*popsize;	/* [cap] per class: the
					   population table's records (the
					   game with a table only) */
	struct deid_hist	*hist;
};

struct deid_node_eval {
	int			 feasible;	/* criteria_met, within limit */
	int			 criteria_met;	/* with unlimited suppression */
	size_t			 suppressed_classes;
	uint64_t		 suppressed_records;
	unsigned		 model_calls;
	struct deid_estimate	 est;		/* PU of the released part */
};

struct deid_suppress_ws	*deid_suppress_ws_alloc(size_t cap);
void			 deid_suppress_ws_free(struct deid_suppress_ws *w);

/* Decide suppression for the node grouped in c; fills w->suppressed. */
void	deid_suppress(const struct deid_engine *e, const struct deid_classes *c,
	    const struct deid_criteria *crit, const struct deid_game_tables *gt,
	    struct deid_suppress_ws *w, struct deid_node_eval *ev);

/* Is the released histogram within the PU threshold?  A failed model
 * with c1 > 0 is not (conservative rule); an empty one is. */
int	deid_pu_fulfilled(const struct deid_hist *h,
	    const struct deid_criteria *crit, struct deid_estimate *est);

#endif
