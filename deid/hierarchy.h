/*
 * deid/hierarchy.h — ARX-format generalization hierarchies (DEID.md §1).
 *
 * A hierarchy file has no header and one row per leaf (original) value:
 * column 0 is the leaf, column i its generalization at level i, the last
 * column the root.  Loading validates it (equal row lengths, unique
 * leaves, one parent per value per level) and materializes small
 * per-level arrays so generalizing a cell is one array lookup.
 */
#ifndef DEID_HIERARCHY_H
#define DEID_HIERARCHY_H

#include <stddef.h>
#include <stdint.h>

#include "deid/csv.h"
#include "deid/error.h"

struct deid_hierarchy_table;	/* private string -> code table */

struct deid_hierarchy {
	char		*attribute;	/* may be NULL; malloc'd, freed by _free */
	size_t		 nleaves;	/* distinct leaves = |D| (level 0) */
	size_t		 nlevels;	/* columns = height incl. level 0 */
	size_t		*ndomain;	/* [nlevels] distinct values per level */
	char		***values;	/* [level][code] -> value string */
	uint32_t	**map;		/* [level][leaf] -> code at level */
	uint32_t	**up;		/* [level][code] -> code at level+1,
					   for level < nlevels-1 */
	uint64_t	**leaves;	/* [level][code] -> # leaves under it */
	struct deid_hierarchy_table *index;	/* leaf string -> leaf */
	/* Rows repeating an earlier row verbatim are collapsed (the real
	 * FARS int-recoded iage hierarchy lists leaf 99 twice); callers may
	 * warn.  A repeated leaf with a different row is an error. */
	size_t		 ndup;		/* rows collapsed */
	unsigned long	 dup_line;	/* line of the first one, 0 = none */
};

/* Parse a hierarchy from bytes; name is used in errors.  opts may be
 * NULL (separator detected). */
int	deid_hierarchy_parse(const void *data, size_t len, const char *name,
	    const struct deid_csv_opts *opts, struct deid_hierarchy **out,
	    struct deid_error *err);
int	deid_hierarchy_read(const char *path, const struct deid_csv_opts *opts,
	    struct deid_hierarchy **out, struct deid_error *err);
void	deid_hierarchy_free(struct deid_hierarchy *h);

/* Leaf index of value, or DEID_EINPUT if the value is not a leaf. */
int	deid_hierarchy_lookup(const struct deid_hierarchy *h, const char *value,
	    uint32_t *leaf);

/* Build the flat two-level hierarchy (value -> "*") for a quasi-identifier
 * that has no hierarchy file: it can only be kept or suppressed. */
int	deid_hierarchy_flat(const char *const *values, size_t n,
	    struct deid_hierarchy **out, struct deid_error *err);

#endif
