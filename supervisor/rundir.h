/*
 * supervisor/rundir.h — the session run directory's helpers (root, in the
 * supervisor): exact-owner mkdir, symlink-safe tree removal, the sweep of
 * stale session directories.
 */
#ifndef GATEWAY_RUNDIR_H
#define GATEWAY_RUNDIR_H

#include <sys/types.h>

#define SESSION_ID_BYTES	8	/* the id is their hex: the dir name */
#define SESSION_LOCK_FILE	"supervisor.lock"	/* holds our pid */

/* dst (PATH_MAX bytes) = a/b; -1 if it does not fit. */
int	path_join(char *dst, const char *a, const char *b);
/* mkdir with an exact mode and owner; refuses to reuse anything. */
int	mkdir_owned(const char *path, mode_t mode, uid_t uid, gid_t gid);
/* Remove name under dirfd recursively, following no symlink. */
int	rm_tree_at(int dirfd, const char *name, int depth);
/* Make SESSION_RUN_DIR and its parent root's alone (0711), then remove
 * the directories of dead supervisors. */
int	run_dir_prepare(void);

#endif
