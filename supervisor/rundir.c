/*
 * supervisor/rundir.c — the session run directory (SESSION_RUN_DIR): make
 * directories with an exact mode and owner, remove a session's tree
 * without following symlinks, and sweep the directories of supervisors
 * that died without cleaning up.
 *
 * Trust: runs as root in the supervisor.  The trees it removes hold
 * directories owned by the unprivileged session users, so nothing in
 * them is followed or trusted.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "supervisor/rundir.h"
#include "supervisor/session.h"
#include "supervisor/supervise-log.h"

#define STALE_AGE_S		10	/* unlocked and this old: stale */

/* a/b into a PATH_MAX buffer; -1 if it does not fit. */
int
path_join(char *dst, const char *a, const char *b)
{
	int n = snprintf(dst, PATH_MAX, "%s/%s", a, b);

	return n < 0 || n >= PATH_MAX ? -1 : 0;
}

/*
 * Remove name under dirfd recursively without following symlinks at
 * any level: the tree holds directories owned by the browser user, and
 * the same user runs other sessions' browsers.
 */
int
rm_tree_at(int dirfd, const char *name, int depth)
{
	struct dirent *de;
	DIR *d;
	int fd, r = 0;

	if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if ((errno != EISDIR && errno != EPERM) || depth > 64)
		return -1;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd < 0 || (d = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (rm_tree_at(fd, de->d_name, depth + 1) != 0)
			r = -1;
	}
	closedir(d);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
		r = -1;
	return r;
}

/* mkdir with an exact mode and owner; refuses to reuse anything. */
int
mkdir_owned(const char *path, mode_t mode, uid_t uid, gid_t gid)
{
	if (mkdir(path, mode) != 0 || chmod(path, mode) != 0 ||
	    chown(path, uid, gid) != 0) {
		log_warn("%s", path);
		return -1;
	}
	return 0;
}

/*
 * Remove session directories whose supervisor died without cleaning up
 * (SIGKILL, power loss): each live supervisor holds an flock on the
 * lock file in its directory, so an unlocked one that is not brand new
 * marks a stale directory.
 */
static void
run_dir_sweep(void)
{
	char lock[300];
	struct dirent *de;
	struct stat st;
	int dfd, fd;
	DIR *d;

	if ((dfd = open(SESSION_RUN_DIR, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) < 0 || (d = fdopendir(dfd)) == NULL) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strlen(de->d_name) != SESSION_ID_BYTES * 2 ||
		    strspn(de->d_name, "0123456789abcdef") !=
		    SESSION_ID_BYTES * 2)
			continue;
		snprintf(lock, sizeof(lock), "%s/" SESSION_LOCK_FILE,
		    de->d_name);
		fd = openat(dfd, lock, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;	/* not ours to judge */
		if (fstat(fd, &st) == 0 &&
		    time(NULL) - st.st_ctime > STALE_AGE_S &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0) {
			log_warnx("removing stale session directory %s/%s",
			    SESSION_RUN_DIR, de->d_name);
			rm_tree_at(dfd, de->d_name, 0);
		}
		close(fd);
	}
	closedir(d);
}

/* The run directory's ancestors must be root's alone. */
int
run_dir_prepare(void)
{
	static const char *const dirs[] = { "/run/cdsgate", SESSION_RUN_DIR };
	struct stat st;
	size_t i;

	for (i = 0; i < 2; i++) {
		if (mkdir(dirs[i], 0711) != 0 && errno != EEXIST) {
			log_warn("%s", dirs[i]);
			return -1;
		}
		if (lstat(dirs[i], &st) != 0 || !S_ISDIR(st.st_mode) ||
		    st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
			log_warnx("%s must be a directory owned by root and "
			    "writable only by it", dirs[i]);
			return -1;
		}
		/* mkdir's mode went through the umask: the session users
		   must still be able to traverse to their own directories. */
		if ((st.st_mode & 07777) != 0711 && chmod(dirs[i], 0711) != 0) {
			log_warn("chmod %s", dirs[i]);
			return -1;
		}
	}
	run_dir_sweep();
	return 0;
}
