/*
 * cli/deid-worker.h — running a `deid` command's work in the deid worker:
 * a forked child that gives up everything it can (rlimits, the cdsgate
 * user, PR_SET_NO_NEW_PRIVS, seccomp SANDBOX_PROFILE_DEID) before it
 * reads a byte of the untrusted CSV.  The parent keeps argument parsing,
 * opening files, atomic renames and printing (docs/processes.md).
 *
 * A command splits into a job (in the worker: parse, compute, write the
 * released table to the descriptor it was handed, collect what to print)
 * and the parent's part before and after.  The job's outcome comes back
 * as a struct deid_result, the same whether it ran in the worker or, with
 * the hidden --in-process, in the CLI process itself.
 */
#ifndef CLI_DEID_WORKER_H
#define CLI_DEID_WORKER_H

#include "cli/deid-args.h"
#include "common/buf.h"

/* Most bytes of report JSON, of its HTML page and of text to print a
 * job may return. */
#define DEID_RESULT_TEXT_MAX	(16u << 20)

struct deid_result {
	int			status;		/* DEID_OK, or why the job failed */
	int			reading;	/* it failed reading the input */
	struct deid_error	err;
	int			exit_code;	/* status DEID_OK: the command's */
	int			wrote_output;	/* the output fd holds the table */
	struct wbuf		report;		/* the report JSON (anonymize) */
	struct wbuf		out;		/* what to print on stdout */
	struct wbuf		html;		/* the report's HTML page
						   (anonymize --report-html) */
};

void	dres_init(struct deid_result *res);
void	dres_free(struct deid_result *res);
/* The job failed with status (res->err filled by the library or empty);
 * reading: bad input while reading (exit 2 rather than 1). */
void	dres_fail(struct deid_result *res, int status, int reading);
/* Append a buffer (e.g. from open_memstream, freed here) to w. */
int	dres_take(struct wbuf *w, char *s, size_t n);

typedef void (*deid_job_fn)(struct deid_args *a, struct deid_inputs *in,
    struct deid_result *res);

/*
 * Run job over the inputs the parent opened, in the deid worker (or here
 * with a->in_process), and fill res.  The worker's death, a protocol
 * violation or a failure to confine it become res->status DEID_EINTERNAL
 * with a message ("deid worker killed by signal 31 (SIGSYS: seccomp
 * violation?)").  Closes the input descriptors (not in->out_fd).
 */
void	dw_run(struct deid_args *a, struct deid_inputs *in, deid_job_fn job,
	    struct deid_result *res);

/* A command that only prints: open the inputs (hierarchies optional),
 * run job in the worker, print its text or its error; the exit code. */
int	dw_run_print(struct deid_args *a, deid_job_fn job);

#endif
