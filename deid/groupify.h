/*
 * deid/groupify.h — equivalence classes of a transformation.
 *
 * The engine first collapses the records into "bottom" classes: the
 * distinct ungeneralized QI tuples with their counts.  Applying any
 * transformation then groups the bottom classes (work proportional to
 * distinct tuples, not rows): each QI's leaf code is generalized with
 * one array lookup, the codes are packed into W 64-bit words (a fixed
 * bit field per QI), and the packed keys go through an open-addressing
 * hash table.  A struct deid_classes is a reusable workspace: allocated
 * once, reset per transformation, never reallocated while searching.
 */
#ifndef DEID_GROUPIFY_H
#define DEID_GROUPIFY_H

#include <stddef.h>
#include <stdint.h>

#include "deid/dataset.h"
#include "deid/error.h"

#define DEID_MAX_QI		64
#define DEID_MAX_KEY_WORDS	8

struct deid_qi {
	size_t				 col;	/* dataset column */
	const struct deid_hierarchy	*h;
	unsigned			 shift;	/* bit offset in the key */
	unsigned			 bits;	/* bit width */
};

struct deid_engine {
	const struct deid_dataset	*ds;
	size_t				 nqi;
	struct deid_qi			*qi;		/* [nqi] */
	unsigned			 W;		/* key words */
	size_t				 nbottom;	/* distinct QI tuples */
	uint32_t			**bleaf;	/* [nqi][nbottom] */
	uint64_t			*bcount;	/* [nbottom] */
	uint32_t			*bfirst;	/* [nbottom] first row */
	uint32_t			*row_bottom;	/* [nrows] */
};

/* Build the engine for the dataset's QI columns (those bound to a
 * hierarchy), in column order. */
int	deid_engine_alloc(const struct deid_dataset *ds,
	    struct deid_engine **out, struct deid_error *err);
void	deid_engine_free(struct deid_engine *e);

struct deid_classes {
	unsigned	 W;
	size_t		 n;		/* classes of the current node */
	size_t		 cap;		/* = engine nbottom */
	uint64_t	*key;		/* [cap * W] packed generalized codes */
	uint64_t	*count;		/* [cap] records per class */
	uint32_t	*first;		/* [cap] first row (for ordering) */
	uint32_t	*of_bottom;	/* [nbottom] class of each bottom class */
	uint32_t	*slot;		/* [nslot] class+1, 0 = empty */
	size_t		 nslot;
	unsigned	 levels[DEID_MAX_QI];	/* the node grouped */
	int		 has_of_bottom;
	uint64_t	*scratch;	/* [nbottom * W] keys being grouped */
};

struct deid_classes	*deid_classes_alloc(const struct deid_engine *e);
void			 deid_classes_free(struct deid_classes *c);

/* Group the bottom classes under transformation levels[nqi]. */
void	deid_groupify(const struct deid_engine *e, const unsigned *levels,
	    struct deid_classes *c);

/* The class of the grouped node whose key is k, or -1. */
long	deid_classes_find(const struct deid_classes *c, const uint64_t *k);

/*
 * Roll-up: a node one level above a checked predecessor on QI j has as
 * classes unions of the predecessor's classes, so it can be grouped from
 * the predecessor's snapshot (work proportional to its classes, usually
 * far fewer than the bottom classes).  of_bottom is not filled then
 * (c->has_of_bottom = 0): the entropy model and the output regroup from
 * the bottom.
 */
struct deid_snapshot {
	size_t		 n;
	uint64_t	*key;	/* [n * W] */
	uint64_t	*count;
	uint32_t	*first;
	size_t		 bytes;
};

struct deid_snapshot	*deid_snapshot_take(const struct deid_classes *c);
void			 deid_snapshot_free(struct deid_snapshot *s);
void	deid_rollup(const struct deid_engine *e, const struct deid_snapshot *p,
	    size_t j, const unsigned *levels, struct deid_classes *c);

/* Generalized code of QI j in class k. */
static inline uint32_t
deid_class_code(const struct deid_engine *e, const struct deid_classes *c,
    size_t k, size_t j)
{
	const struct deid_qi *q = &e->qi[j];
	const uint64_t *key = c->key + k * c->W;
	uint64_t mask = q->bits == 64 ? ~0ULL : (1ULL << q->bits) - 1;

	return (uint32_t)((key[q->shift / 64] >> (q->shift % 64)) & mask);
}

#endif
