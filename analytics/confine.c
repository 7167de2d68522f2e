/*
 * analytics/confine.c — shutting cdsgate-analytics in before it reads a
 * byte of HTTP.  Order (docs/analytics.md; sandbox/confine.c applies it):
 *
 *   as root:  private mount namespace; static dir and mount dir bound
 *             read-only (nosuid, nodev, noexec); both opened; chroot into
 *             the static dir
 *   always:   confine_apply (sandbox/confine.h): rlimits; as root the
 *             drop to AN_USER and chdir to the chroot's /; no-new-privs;
 *             non-dumpable; the seccomp profile "analytics"
 *
 * Afterwards the process sees the front end's files as its whole file
 * system and reaches datasets only through the mount dir's fd (opened
 * read-only; analytics/files.c refuses `..` and symlinks).  Started by a
 * non-root user it cannot do the first half and says so.
 *
 * Trust: runs before any untrusted input; paths come from the operator.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "analytics/analytics.h"
#include "common/log.h"
#include "common/privdrop.h"
#include "sandbox/confine.h"
#include "sandbox/sandbox.h"

#define RO_FLAGS	(MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | \
			 MS_NODEV | MS_NOEXEC)

/* Bind dir onto itself, read-only, in our private namespace. */
static int
bind_ro(const char *dir, char *err, size_t errlen)
{
	if (mount(dir, dir, NULL, MS_BIND | MS_REC, NULL) != 0 ||
	    mount(NULL, dir, NULL, RO_FLAGS, NULL) != 0) {
		snprintf(err, errlen, "read-only bind of %s: %s", dir,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/* One of the two directories, read-only, held for the process's life. */
static int
open_dir(const char *dir, int *fd, char *err, size_t errlen)
{
	if ((*fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* Root only: the private read-only view, then chroot into static. */
static int
private_view(const char *st, const char *mnt, char *err, size_t errlen)
{
	if (unshare(CLONE_NEWNS) != 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		snprintf(err, errlen, "private mount namespace: %s",
		    strerror(errno));
		return -1;
	}
	return bind_ro(st, err, errlen) != 0 || bind_ro(mnt, err, errlen) !=
	    0 ? -1 : 0;
}

/* As root: view, dirs, chroot.  The limits and the drop are
 * confine_apply's (an_confine). */
static int
confine_root(const char *st, const char *mnt, struct an_dirs *dirs,
    char *err, size_t errlen)
{
	if (private_view(st, mnt, err, errlen) != 0 ||
	    open_dir(st, &dirs->static_fd, err, errlen) != 0 ||
	    open_dir(mnt, &dirs->mount_fd, err, errlen) != 0)
		return -1;
	if (chroot(st) != 0) {
		snprintf(err, errlen, "chroot %s: %s", st, strerror(errno));
		return -1;
	}
	return 0;
}

/* The seccomp mode: the filter when built in, "none" said out loud. */
static int
sandbox_mode(int debug, char *err, size_t errlen)
{
#ifdef HAVE_SECCOMP
	return sandbox_init(SANDBOX_MODE_SECCOMP, debug, err, errlen);
#else
	log_warnx("built with --with-sandbox=none: no seccomp filter");
	return sandbox_init(SANDBOX_MODE_NONE, debug, err, errlen);
#endif
}

int
an_confine(const struct an_confine *c, struct an_dirs *dirs, char *err,
    size_t errlen)
{
	char st[PATH_MAX], mnt[PATH_MAX];
	struct privdrop_user u;
	struct confine cf;

	dirs->static_fd = dirs->mount_fd = -1;
	if (realpath(c->static_dir, st) == NULL) {
		snprintf(err, errlen, "%s: %s", c->static_dir, strerror(errno));
		return -1;
	}
	if (realpath(c->mount_dir, mnt) == NULL) {
		snprintf(err, errlen, "%s: %s", c->mount_dir, strerror(errno));
		return -1;
	}
	if (sandbox_mode(c->sandbox_debug, err, errlen) != 0)
		return -1;
	/* No processes made, no core dumps of data, bounded fds.  (No
	   RLIMIT_FSIZE: stdout/stderr may be log files; seccomp refuses
	   opening anything for writing.) */
	confine_init(&cf, "cdsgate-analytics");
	confine_rlimit(&cf, RLIMIT_CORE, 0);
	confine_rlimit(&cf, RLIMIT_NPROC, 0);
	confine_rlimit(&cf, RLIMIT_NOFILE, 4 * AN_MAX_CONNECTIONS + 32);
	cf.profile = SANDBOX_PROFILE_ANALYTICS;
	if (getuid() == 0 || geteuid() == 0) {
		if (privdrop_lookup(AN_USER, NULL, &u, err, errlen) != 0 ||
		    confine_root(st, mnt, dirs, err, errlen) != 0)
			return -1;
		cf.user = &u;
		cf.dir = "/";	/* the chroot's */
	} else {
		log_warnx("not started as root: no private read-only view, no "
		    "chroot, no user of its own (seccomp only)");
		if (open_dir(st, &dirs->static_fd, err, errlen) != 0 ||
		    open_dir(mnt, &dirs->mount_fd, err, errlen) != 0)
			return -1;
	}
	if (confine_apply(&cf, err, errlen) != CONFINE_OK)
		return -1;
	log_info("confined: uid %u, seccomp %s (profile %s)",
	    (unsigned)getuid(), sandbox_mode_name(),
	    sandbox_profile_name(SANDBOX_PROFILE_ANALYTICS));
	return 0;
}
