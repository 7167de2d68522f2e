/*
 * cli/deid-args.h — what the `deid` commands share: their options and
 * the loading of data, hierarchies and engine.
 */
#ifndef CLI_DEID_ARGS_H
#define CLI_DEID_ARGS_H

#include "deid/dataset.h"
#include "deid/groupify.h"
#include "deid/risk.h"
#include "deid/search.h"

#define MAX_LIST	64

struct deid_args {
	const char		*data;
	char			*qi[MAX_LIST];
	size_t			 nqi;
	char			*ident[MAX_LIST];
	size_t			 nident;
	char			*sens[MAX_LIST];
	size_t			 nsens;
	const char		*hdir;
	char			*hattr[MAX_LIST], *hfile[MAX_LIST];
	size_t			 nhier;
	struct deid_csv_opts	 csv;
	double			 pop[MAX_LIST];
	size_t			 npop;
	int			 json;
	const char		*output, *report;
	struct deid_search_opts	 sopts;
	int			 pu_set;
	double			 resid_n[MAX_LIST], resid_b[MAX_LIST];
	size_t			 nresid;
	const char		*usage;
};

int	dargs_parse(struct deid_args *a, int argc, char **argv);
/* Print a library error as "cdsgate: file:line: msg"; map to the exit
 * code (an unreadable input file is bad input while reading). */
int	dargs_error(int r, const struct deid_error *err, int reading);
/* Load the data, type its columns, bind hierarchies, build the engine;
 * need_hier: every QI must have a hierarchy. */
int	dargs_load(const struct deid_args *a, int need_hier,
	    struct deid_dataset **dsp, struct deid_engine **ep,
	    struct deid_error *err);
/* Histogram of the bottom classes: the table as it is. */
int	dargs_bottom_hist(const struct deid_engine *e, struct deid_hist *h);

#endif
