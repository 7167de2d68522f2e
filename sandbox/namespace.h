/*
 * sandbox/namespace.h — Linux namespaces for the browser jail: a
 * loopback-only network namespace with one listening socket in it, a
 * fresh pid namespace whose first process is a tiny init, and a root
 * file system built from an allow-list table (everything not listed is
 * simply not there) and entered with pivot_root.
 *
 * Library-style: no logging, no exit.  Errors come back as -1 with errno
 * set and *what naming the step (or a message in the caller's buffer),
 * so the caller can fail closed with a clear log line.  All of it needs
 * root (CAP_SYS_ADMIN, CAP_NET_ADMIN) and a single-threaded caller.
 */
#ifndef SANDBOX_NAMESPACE_H
#define SANDBOX_NAMESPACE_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

/* ---- network ---- */

/*
 * Make a new network namespace with only `lo`, up; if addr is not a
 * loopback address, add it to `lo` (rtnetlink) so the browser reaches
 * the backend by its own address and the URL and Origin stay the same.
 * Then create a TCP socket listening there on addr's port.  The calling
 * thread switches into the new namespace for this and back before it
 * returns (a socket keeps the namespace it was made in).  Returns 0 with
 * *netns_fd (to setns into) and *listen_fd (non-blocking), both
 * close-on-exec; -1 with errno and *what.  *stuck is set if switching
 * back failed: the caller is in the wrong namespace and must stop.
 */
int	ns_net_create(const struct sockaddr *addr, socklen_t addrlen,
	    int *netns_fd, int *listen_fd, int *stuck, const char **what);

/* ---- pid ---- */

/*
 * Make the caller's next fork() start a new pid namespace (its child is
 * pid 1 there), and undo that right after the fork.  begin returns 0 and
 * *saved (the caller's own pid namespace), or -1 with errno; end must be
 * called in the parent after fork() whatever its result, and returns -1
 * if the caller could not be switched back (its next child would land
 * in the namespace; the caller must stop).
 */
int	ns_pid_begin(int *saved);
int	ns_pid_end(int saved);

/*
 * Pid 1 of the jail: fork; the child gets 0 (and goes on to exec the
 * real program); the parent stays as init — applies init_confine (NULL:
 * nothing; the session gives it the JAILINIT profile, which the child,
 * forked before, does not inherit), forwards SIGTERM, SIGINT and SIGHUP
 * to the child, reaps every orphan, and when the child ends gets 1 and
 * its wait status as an exit code (128 + signal if killed).  When init
 * exits the kernel kills whatever is left in the namespace.  child_fd
 * (-1: none) is the child's alone: init closes its copy (the supervisor
 * waits for EOF on it).  -1 (errno) if the fork failed, or if
 * init_confine failed (its message in err; the child is killed).
 */
struct confine;
int	ns_init_fork(int child_fd, const struct confine *init_confine,
	    int *exit_code, char *err, size_t errlen);

/* ---- mounts ---- */

enum ns_mount_kind {
	NS_RO,		/* bind src read-only (recursive), nosuid, nodev */
	NS_RW,		/* bind src read-write, nosuid, nodev */
	NS_DEV,		/* bind a device node (nosuid, noexec) */
	NS_MIRROR,	/* src is a symlink: same link; a dir: NS_RO */
	NS_TMPFS,	/* a fresh tmpfs, opts = "mode=...,size=..." */
	NS_PROC,	/* proc of the caller's (new) pid namespace */
	NS_DIR,		/* an empty directory, opts = octal mode */
	NS_SYMLINK,	/* a symlink dst -> src */
	NS_TREE		/* src = the number of an fd from ns_tree_clone()
			   (made before unshare(CLONE_NEWNS)): attached at
			   dst, nosuid, nodev (noexec with NS_NOEXEC) */
};

#define NS_OPTIONAL	1	/* a missing src is skipped, not an error */
#define NS_NOEXEC	2	/* NS_RO/NS_RW/NS_TMPFS: also noexec */
#define NS_SEAL		4	/* NS_TMPFS: read-only once the table is
				   mounted (its submounts keep their own) */

struct ns_mount {
	enum ns_mount_kind kind;
	const char	*src;	/* host path (NS_SYMLINK: the link's text) */
	const char	*dst;	/* absolute path inside the jail */
	const char	*opts;
	int		 flags;	/* NS_OPTIONAL | NS_NOEXEC */
};

/*
 * A detached copy of the mount of what fd (any fd, O_PATH is enough)
 * refers to, even if its path was unlinked since: for a file that must
 * reach the jail as that inode (Xvfb's socket), not as whatever its path
 * holds later.  Call it *before* unshare(CLONE_NEWNS): a mount of another
 * namespace cannot be copied from inside the new one.  The tree's fd
 * (close-on-exec), or -1 with errno.
 */
int	ns_tree_clone(int fd);

/*
 * In the caller's mount namespace, which must be private to it
 * (unshare(CLONE_NEWNS) first): a tmpfs on `staging` (an existing,
 * root-owned directory) becomes the new root, the table is mounted into
 * it in order (parents before children), then pivot_root, the old root
 * detached, and the new root's own tmpfs made read-only.  Host paths in
 * src are resolved before anything is hidden.  0, or -1 with errno and
 * a message naming the entry.
 */
int	ns_root_build(const char *staging, const struct ns_mount *m,
	    size_t n, char *err, size_t errlen);

#endif
