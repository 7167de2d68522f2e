/*
 * deid/anonymize.h — the gate as one library call: load the table and
 * its hierarchies, find the optimal transformation, write the released
 * table, re-derive every figure from the bytes written (deid/verify.h)
 * and decide whether it may be released.
 *
 * The caller supplies the bytes of its inputs (it may not be allowed to
 * open files: the CLI runs this in its seccomp'd deid worker) and a
 * descriptor for the released table; it prints and renames.  Nothing
 * here logs, opens a path or exits.
 */
#ifndef DEID_ANONYMIZE_H
#define DEID_ANONYMIZE_H

#include <stddef.h>

#include "deid/dataset.h"
#include "deid/error.h"
#include "deid/groupify.h"
#include "deid/report.h"
#include "deid/search.h"
#include "deid/verify.h"

#define DEID_DEFAULT_WARN_SUPPRESSED	0.50	/* the verdict's call-out */

/* One input file as bytes, or why the caller could not read it: status
 * != DEID_OK is reported (with err) where the file would have been
 * parsed, so errors come in the order of reading. */
struct deid_job_file {
	const char		*name;		/* for messages; never opened */
	const void		*data;		/* NULL: no file (see below) */
	size_t			 len;
	int			 status;	/* DEID_OK, or the read error */
	struct deid_error	 err;
};

struct deid_job {
	struct deid_job_file	 data;		/* the table: CSV with header */
	struct deid_csv_opts	 csv;		/* separator 0: detected */
	/* Every column must be in exactly one of these four lists
	 * (deid_job_classify); quasi-identifiers in any order. */
	const char *const	*qi;
	size_t			 nqi;		/* 1..DEID_MAX_QI */
	const char *const	*identifying;
	size_t			 nidentifying;
	const char *const	*sensitive;
	size_t			 nsensitive;
	const char *const	*insensitive;
	size_t			 ninsensitive;
	/* hier[i] belongs to qi[i]; data NULL with status DEID_OK: the
	 * flat hierarchy (value -> "*") built from the column's values. */
	struct deid_job_file	 hier[DEID_MAX_QI];
	struct deid_search_opts	 sopts;		/* criteria, objective, threads */
	const double		*population;	/* risk figures; [0] is PU's */
	size_t			 npopulation;
	/* PU/SU checks; none given: each population with bound 0.25. */
	const double		*residual_population, *residual_bound;
	size_t			 nresidual;
	/* The verdict calls out a release suppressing more than this
	 * share of the records (DEID_DEFAULT_WARN_SUPPRESSED usually). */
	double			 warn_suppressed;
	/* Xia 2021's adversarial risk of the release (deid/adversary.h):
	 * the attacker file (data NULL: none), the Monte Carlo seed, and a
	 * bound on the mean overall risk (0: none). */
	struct deid_job_file	 attacker;
	uint64_t		 adversary_seed;
	/* The journalist's population table (data NULL: none): a CSV with
	 * a header naming every QI; with --game-risk journalist the game's
	 * SP(r) = 1 / (r's class size in it), deid/poptable.h. */
	struct deid_job_file	 population_table;
	double			 max_adversarial_risk;
	/* The released table: a descriptor open for reading and writing
	 * on an empty regular file (mkstemp, memfd_create, tmpfile), or -1
	 * for none (the figures are then derived from the table as it
	 * would be written, in memory).  out_name is for messages. */
	int			 out_fd;
	const char		*out_name;
	/* Test hook: append the table's last row to out_fd again after
	 * writing it, as a corrupted write would (the verification must
	 * catch it: DEID_EINTERNAL naming "records"). */
	int			 test_tamper;
};

/*
 * Run the gate.  The caller zeroes *rep first and frees it with
 * deid_anon_report_free() whatever the return; job and the bytes it
 * points to are only read, and may go once the call returns.
 *
 * What it guarantees: the verdict rests on figures re-derived from the
 * bytes written to out_fd, read back through it (deid/verify.h), and
 * they agree with the search's own figures, else the call fails.
 *
 * DEID_OK: rep holds the search's figures (rep->after, loss, payout,
 * suppressed_records), the re-derived ones (rep->verified, when a node
 * was found: rep->has_verified), the verdict (rep->gate_passed,
 * deid_verdict(), rep->reasons, rep->callout) and the hierarchies'
 * warnings (rep->warnings).  rep->released is 1 iff the gate passed
 * and out_fd holds the complete released table (flushed, not fsync'd:
 * the caller commits it, e.g. renames its temporary file into place).
 * Otherwise out_fd may hold a table that must not be published: the
 * caller discards it.
 *
 * Any other status: err says why (DEID_EINPUT: bad input or options,
 * naming file, line and column, or the unclassified column; DEID_EIO:
 * an input the caller could not read, or out_fd; DEID_EINTERNAL: the
 * released bytes disagree with the search, naming the figure); the
 * caller discards out_fd; rep is only good for freeing.
 */
int	deid_anonymize(const struct deid_job *job,
	    struct deid_anon_report *rep, struct deid_error *err);
void	deid_anon_report_free(struct deid_anon_report *rep);
/* The job's attacker file parsed (*a NULL when there is none), or the
 * error reading or parsing it. */
/* The job's population table parsed (*ds NULL when there is none), or
 * the error reading or parsing it. */
int	deid_job_population_table(const struct deid_job *job,
	    struct deid_dataset **ds, struct deid_error *err);
int	deid_job_attacker(const struct deid_job_file *f,
	    struct deid_attacker **a, struct deid_error *err);

/* The options alone make sense (criteria, ranges, lists): DEID_EINPUT
 * with a message, before any input is read. */
int	deid_job_check(const struct deid_job *job, struct deid_error *err);

/*
 * Parse the table, type its columns from the job's lists, parse and
 * bind each QI's hierarchy, build the engine.  classify: every column
 * must be in one of the lists (else DEID_EINPUT naming it); without it
 * unlisted columns are insensitive (`deid assess`).
 */
int	deid_job_load(const struct deid_job *job, int classify,
	    struct deid_dataset **dsp, struct deid_engine **ep,
	    struct deid_error *err);

#endif
