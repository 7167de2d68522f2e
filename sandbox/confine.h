/*
 * sandbox/confine.h — how one process is shut in, as data, and the one
 * function that applies it.
 *
 * Every cdsgate process confines itself through confine_apply(): the
 * session's children (the roles table in supervisor/roles.c fills the
 * description), the session supervisor, the browser jail's init, the
 * api and its helpers, the audit key holder, the CLI's deid worker and
 * cdsgate-analytics.  The steps, in this order, each one checked:
 *
 *   1. rlimits        lowered, never raised above the hard limit
 *   2. user           groups, gid, uid dropped for good (common/privdrop)
 *   3. chdir          into a directory (as the new user)
 *   4. no-new-privs   PR_SET_NO_NEW_PRIVS (always: the filter needs it)
 *   5. death signal   PR_SET_PDEATHSIG, then the parent checked: if
 *                     getppid() is no longer the expected pid, the
 *                     parent died before the signal was armed
 *   6. non-dumpable   PR_SET_DUMPABLE 0 (after the drop, which resets it)
 *   7. filter         the seccomp profile (sandbox/sandbox.h), with its
 *                     directory fd when the profile has dirfd rules
 *
 * A step whose field is left at its confine_init() default is skipped;
 * step 4 never is, step 6 only when dumpable is set.  A role that
 * must open things between the drop and its filter (the worker connects
 * to X, the key holder loads its key) applies its description in two
 * calls: the first without a profile, the second with only the profile;
 * steps 4 and 6 are idempotent.
 *
 * Library-style: no logging, no exit.  Returns CONFINE_OK or the failed
 * step's code, with "STEP: detail" in err: without the process's name,
 * which the one logger (common/log.h) puts in each line, and which a
 * parent reporting a child's failure says itself.
 */
#ifndef SANDBOX_CONFINE_H
#define SANDBOX_CONFINE_H

#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "common/privdrop.h"
#include "sandbox/sandbox.h"

#define CONFINE_RLIMITS_MAX	8
#define CONFINE_NO_PROFILE	(-1)	/* no seccomp filter of ours */

enum confine_error {
	CONFINE_OK = 0,
	CONFINE_ERR_INVALID,		/* the description itself */
	CONFINE_ERR_RLIMIT,
	CONFINE_ERR_USER,
	CONFINE_ERR_CHDIR,
	CONFINE_ERR_NO_NEW_PRIVS,
	CONFINE_ERR_DEATHSIG,
	CONFINE_ERR_PARENT,		/* the parent died before step 5 */
	CONFINE_ERR_DUMPABLE,
	CONFINE_ERR_FILTER
};

struct confine_rlimit {
	int		 resource;	/* RLIMIT_* */
	rlim_t		 limit;		/* soft and hard; capped at the hard */
};

struct confine {
	const char			*name;	/* the process described; not
						   in err (see above) */
	struct confine_rlimit		 rlimit[CONFINE_RLIMITS_MAX];
	size_t				 nrlimit;
	const struct privdrop_user	*user;	/* NULL: stay who we are */
	const char			*dir;	/* chdir; NULL: stay */
	int				 deathsig;	/* 0: none */
	pid_t				 parent;	/* > 0: must be getppid() */
	int				 dumpable;	/* 0: made non-dumpable */
	int				 profile;	/* enum sandbox_profile or
						   CONFINE_NO_PROFILE */
	int				 dirfd;	/* the profile's dirfd, or -1 */
};

/* Defaults: nothing but no-new-privs and non-dumpable. */
void		 confine_init(struct confine *c, const char *name);
/* Add one limit; CONFINE_ERR_INVALID when the table is full. */
int		 confine_rlimit(struct confine *c, int resource, rlim_t limit);
/* Apply c in the order above; CONFINE_OK or the failed step's code. */
int		 confine_apply(const struct confine *c, char *err, size_t errlen);
/*
 * A forked worker's descriptors, before confine_apply: keep stderr, *keep
 * (its socket to the parent, moved above 2 if it is not) and, when
 * keep_stdout, stdout; stdin (and stdout otherwise) become /dev/null so
 * a stray read or print touches nothing handed over later; close every
 * other descriptor.  0, or -1 with "descriptors: why" in err.
 */
int		 confine_fds(int *keep, int keep_stdout, char *err,
		    size_t errlen);
/* "rlimit", "user", "chdir", "no-new-privs", "death signal", "parent",
 * "non-dumpable", "filter", "description"; "ok" for CONFINE_OK. */
const char	*confine_step_name(int code);

#endif
