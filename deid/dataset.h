/*
 * deid/dataset.h — a CSV dataset, dictionary-encoded column by column.
 *
 * Every column becomes an array of integer codes plus a dictionary of
 * its distinct strings (codes in first-appearance order).  A quasi-
 * identifier is then bound to its hierarchy: its codes are replaced by
 * hierarchy leaf indices, and a value missing from the hierarchy is an
 * input error naming the data file, line and value.
 */
#ifndef DEID_DATASET_H
#define DEID_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "deid/csv.h"
#include "deid/error.h"
#include "deid/hierarchy.h"

enum deid_attr_type {
	DEID_ATTR_INSENSITIVE = 0,	/* kept as is */
	DEID_ATTR_IDENTIFYING,		/* dropped from output */
	DEID_ATTR_QUASI,		/* generalized */
	DEID_ATTR_SENSITIVE		/* kept as is, reported */
};

struct deid_dict;	/* private string -> code table */

struct deid_column {
	char			*name;
	enum deid_attr_type	 type;
	uint32_t		*codes;		/* [nrows] dictionary codes */
	size_t			 ndict;		/* distinct values */
	char			**dict;		/* [ndict] value strings */
	unsigned long		*first_line;	/* [ndict] first input line */
	struct deid_hierarchy	*h;		/* QI only; owned */
	uint32_t		*leaf;		/* QI only: [nrows] leaf index */
	struct deid_dict	*index;
};

struct deid_dataset {
	char			*path;
	char			 separator;
	size_t			 nrows;
	size_t			 ncols;
	struct deid_column	*cols;
};

int	deid_dataset_read(const char *path, const struct deid_csv_opts *opts,
	    struct deid_dataset **out, struct deid_error *err);
int	deid_dataset_parse(const void *data, size_t len, const char *name,
	    const struct deid_csv_opts *opts, struct deid_dataset **out,
	    struct deid_error *err);
void	deid_dataset_free(struct deid_dataset *ds);

/* Column index by exact name, or -1. */
long	deid_dataset_column(const struct deid_dataset *ds, const char *name);

/* Mark column col as a QI generalized by h (ownership of h passes to
 * the dataset, also on error).  Fails naming the first data value that
 * is not a leaf of h. */
int	deid_dataset_bind(struct deid_dataset *ds, size_t col,
	    struct deid_hierarchy *h, struct deid_error *err);
/* Bind col to the flat hierarchy (value -> "*") built from its values. */
int	deid_dataset_bind_flat(struct deid_dataset *ds, size_t col,
	    struct deid_error *err);

/* ---- the string -> code dictionary, shared with other parsers ---- */
struct deid_dict	*deid_dict_alloc(size_t hint);
void			 deid_dict_free(struct deid_dict *d);
/* Code of s, inserting it with code = current size if new; *isnew set. */
int			 deid_dict_intern(struct deid_dict *d, const char *s,
			    uint32_t *code, int *isnew);
int			 deid_dict_find(const struct deid_dict *d,
			    const char *s, uint32_t *code);
size_t			 deid_dict_size(const struct deid_dict *d);
const char		*deid_dict_string(const struct deid_dict *d,
			    uint32_t code);

#endif
