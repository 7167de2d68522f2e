/*
 * policy/paths.h — can the daemon's processes use the places its config
 * names?  Each path belongs to the one process that writes it, and so to
 * one system user (docs/processes.md):
 *
 *   store, state_dir, mount_dir   the api          cdsgate-api
 *   audit_log (its directory)     the key holder   cdsgate-audit
 *   audit_key                     the key holder   cdsgate-audit (reads)
 *   record_dir, secrets_dir,      the root parent  root, made if missing
 *   socket (its directory)
 *
 * The check reads owners and mode bits as the kernel would for that user
 * (search on every ancestor, write+search on the directory), without
 * CAP_DAC_OVERRIDE: the daemon's unit has none, so a root-owned 0700
 * directory is no more writable by "root" the api than by anyone else.
 * ACLs are not read.  A path the caller itself may not look at (EACCES:
 * serve has no CAP_DAC_OVERRIDE either) is not judged: its user's own
 * start-up reports it.  Library code: no output, no exit.
 */
#ifndef POLICY_PATHS_H
#define POLICY_PATHS_H

#include <stddef.h>

#include "policy/config.h"

#define PATHS_MSG_MAX	320

struct paths_problem {
	char	key[32];		/* the config key */
	char	msg[PATHS_MSG_MAX];	/* "PATH: not writable by U (...)" */
};

/*
 * Check every path of c for the user that uses it (with `split`, the
 * root session helper owns secrets_dir: not checked here).  Up to max
 * problems go to out; returns how many there were (0: all usable), or -1
 * when a system user is missing (out[0] says which).
 */
int	paths_check(const struct gw_config *c, int split,
	    struct paths_problem *out, size_t max);

#endif
