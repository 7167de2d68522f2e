/*
 * control/cmdrun.h — run one command with a bounded stdin and a bounded
 * stdout, for the Slurm runner's helpers (Slurm's and MUNGE's commands).
 *
 * The child dies with the caller (PR_SET_PDEATHSIG), its stderr's first
 * bytes are kept for the error message, and it is killed when it runs
 * past the time limit.
 */
#ifndef GATEWAY_CMDRUN_H
#define GATEWAY_CMDRUN_H

#include <stddef.h>

#define CMDRUN_OUT_MAX	8192
#define CMDRUN_ERR_MAX	512

struct cmdrun {
	char	out[CMDRUN_OUT_MAX];	/* stdout, NUL-terminated (cut) */
	size_t	outlen;
	char	err[CMDRUN_ERR_MAX];	/* stderr's start, or why it did
					   not run */
	int	status;			/* exit status; -1: did not run or
					   was killed */
};

/* Run argv (argv[0] a path) with env (NULL: none) and in[0..inlen) on
 * its stdin; wait at most ms.  Returns r->status. */
int	cmdrun(struct cmdrun *r, char *const *argv, char *const *env,
	    const char *in, size_t inlen, int ms);

#endif
