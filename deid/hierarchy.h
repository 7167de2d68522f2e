/*
 * deid/hierarchy.h — ARX-format generalization hierarchies (docs/deid.md).
 *
 * A hierarchy file has no header and one row per leaf (original) value:
 * column 0 is the leaf, column i its generalization at level i, the last
 * column the root.  Loading validates it (equal row lengths, unique
 * leaves, one parent per value per level) and materializes small
 * per-level arrays so generalizing a cell is one array lookup.  Any
 * number of columns is a hierarchy: one column is a QI that is only
 * ever kept as it is; the last level may hold several values.
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
	char		*name;		/* the file it was read from, for
					   errors; NULL for a flat one */
	size_t		 nleaves;	/* distinct leaves = |D| (level 0) */
	size_t		 nlevels;	/* columns = height incl. level 0 */
	size_t		*ndomain;	/* [nlevels] distinct values per level */
	char		***values;	/* [level][code] -> value string */
	uint32_t	**map;		/* [level][leaf] -> code at level */
	uint32_t	**up;		/* [level][code] -> code at level+1,
					   for level < nlevels-1 */
	uint64_t	**leaves;	/* [level][code] -> # leaves under it */
	uint32_t	*star;		/* [level] code of DEID_SUPPRESSED
					   there, DEID_NO_CODE if none */
	struct deid_hierarchy_table *index;	/* leaf string -> leaf */
	/* A row repeating an earlier row verbatim is merged into it: the
	 * leaf counts once in |D| and in every share (the real FARS
	 * int-recoded iage hierarchy lists leaf 99 twice).  Each repeat is
	 * a warning naming its line; a repeated leaf with a different row
	 * is an error. */
	size_t		 ndup;		/* rows merged */
	size_t		 nwarnings;
	struct deid_warning *warnings;	/* [nwarnings] */
};

/* What a suppressed QI cell is written as.  A record whose every QI
 * reads this way is indistinguishable from a suppressed one in the
 * release, so it counts as suppressed whatever the transformation. */
#define DEID_SUPPRESSED		"*"
#define DEID_NO_CODE		UINT32_MAX
/* At most this many warnings per hierarchy; the last one says how many
 * more repeats there were. */
#define DEID_HIERARCHY_MAX_WARNINGS	16

/* Parse a hierarchy from bytes; name is used in errors.  opts may be
 * NULL (separator detected). */
int	deid_hierarchy_parse(const void *data, size_t len, const char *name,
	    const struct deid_csv_opts *opts, struct deid_hierarchy **out,
	    struct deid_error *err);
int	deid_hierarchy_read(const char *path, const struct deid_csv_opts *opts,
	    struct deid_hierarchy **out, struct deid_error *err);
void	deid_hierarchy_free(struct deid_hierarchy *h);

/* The warnings loading raised, in line order. */
size_t	deid_hierarchy_nwarnings(const struct deid_hierarchy *h);
const struct deid_warning *deid_hierarchy_warning(
	    const struct deid_hierarchy *h, size_t i);

/* Leaf index of value, or DEID_EINPUT if the value is not a leaf. */
int	deid_hierarchy_lookup(const struct deid_hierarchy *h, const char *value,
	    uint32_t *leaf);

/* Build the flat two-level hierarchy (value -> "*") for a quasi-identifier
 * that has no hierarchy file: it can only be kept or suppressed. */
int	deid_hierarchy_flat(const char *const *values, size_t n,
	    struct deid_hierarchy **out, struct deid_error *err);

#endif
