/*
 * cli/deid-args.h — what the `deid` commands share: their options and
 * the loading of data, hierarchies and engine.
 */
#ifndef CLI_DEID_ARGS_H
#define CLI_DEID_ARGS_H

#include <stdint.h>
#include <stdio.h>

#include "deid/anonymize.h"
#include "deid/dataset.h"
#include "deid/groupify.h"
#include "deid/risk.h"
#include "deid/search.h"

#define MAX_LIST	64
#define DEID_NAME_MAX	512	/* a path as carried to the worker */
#define DARGS_NBUFS	(3 + MAX_LIST)	/* dargs_job's buffers */

/* One input file the parent opened for the worker, or why it could not:
 * an error is kept and reported where the worker would have read the
 * file, so messages come in the same order as when reading directly. */
struct deid_input {
	int			fd;		/* -1: none (see status) */
	int			status;		/* DEID_OK or the open error */
	struct deid_error	err;
	char			name[DEID_NAME_MAX];	/* path, for messages */
};

/* Everything the worker reads or writes, opened by the parent. */
struct deid_inputs {
	struct deid_input	data;
	struct deid_input	hier[MAX_LIST];	/* [i] belongs to qi[i]; fd -1
						   and DEID_OK: no file (flat) */
	struct deid_input	attacker;	/* --attacker; fd -1: none */
	struct deid_input	poptable;	/* --population-table; fd -1:
						   none */
	int			out_fd;		/* anonymize: the temp file of
						   --output, or -1 */
};

struct deid_args {
	const char		*data;
	char			*qi[MAX_LIST];
	size_t			 nqi;
	char			*ident[MAX_LIST];
	size_t			 nident;
	char			*sens[MAX_LIST];
	size_t			 nsens;
	char			*insens[MAX_LIST];
	size_t			 ninsens;
	const char		*hdir;
	char			*hattr[MAX_LIST], *hfile[MAX_LIST];
	size_t			 nhier;
	struct deid_csv_opts	 csv;
	double			 pop[MAX_LIST];
	size_t			 npop;
	int			 json;
	const char		*output, *report;
	const char		*report_html;	/* anonymize */
	struct deid_search_opts	 sopts;
	int			 pu_set;
	double			 resid_n[MAX_LIST], resid_b[MAX_LIST];
	size_t			 nresid;
	double			 warn_suppressed;
	char			*sh_attr[MAX_LIST];	/* --safe-harbor */
	unsigned		 sh_level[MAX_LIST];
	size_t			 nsh;
	const char		*attacker;	/* --attacker FILE */
	const char		*poptable;	/* --population-table */
	double			 max_adversarial_risk;	/* 0: none */
	uint64_t		 seed;		/* --seed, Monte Carlo */
	const char		*usage;
	int			 in_process;	/* hidden --in-process: no worker */
	int			 sandbox_debug;	/* hidden --sandbox-debug */
};

int	dargs_parse(struct deid_args *a, int argc, char **argv);
/* The criteria make sense together (PU with its population, at least
 * one criterion, the game's amounts): 0 or a usage error's exit code. */
int	dargs_criteria(struct deid_args *a);
/* Write n bytes that came from the input (or the worker) to a terminal's
 * stream: control bytes, C1 controls and malformed UTF-8 become \xHH so
 * a CSV cannot drive the terminal; keep_lines keeps newlines and tabs. */
void	dargs_put_safe(FILE *f, const char *s, size_t n, int keep_lines);
/* Print a library error as "cdsgate: file:line: msg"; map to the exit
 * code (an unreadable input file is bad input while reading). */
int	dargs_error(int r, const struct deid_error *err, int reading);
/* In the parent: open the data file (an error is returned at once: it is
 * read first) and each QI's hierarchy (errors kept in in->hier[i]). */
int	dargs_open(const struct deid_args *a, int need_hier,
	    struct deid_inputs *in, struct deid_error *err);
/* Close every descriptor in `in` that is still open. */
void	dargs_close(struct deid_inputs *in);
/* In the worker: read the data and hierarchies from the descriptors in
 * `in` (no open()), type the columns, bind the hierarchies (a QI without
 * a file gets the flat one), build the engine. */
int	dargs_load(const struct deid_args *a, struct deid_inputs *in,
	    struct deid_dataset **dsp, struct deid_engine **ep,
	    struct deid_error *err);
/* In the worker: the library's job over the inputs: every file read into
 * memory (bufs[0] the data, bufs[1 + i] QI i's hierarchy, the
 * population table next to last, the attacker file last, DARGS_NBUFS
 * in all; free them with dargs_job_free), read errors kept for the
 * library to report in order; the job points into a and in. */
void	dargs_job(const struct deid_args *a, struct deid_inputs *in,
	    struct deid_job *job, char **bufs);
void	dargs_job_free(char **bufs);

#endif
