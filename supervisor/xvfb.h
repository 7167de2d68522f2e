/*
 * supervisor/xvfb.h — the session's X server: a private Xvfb with its own
 * MIT-MAGIC-COOKIE-1, no TCP, its display number picked by Xvfb itself.
 *
 * The supervisor makes the cookie (OpenSSL's CSPRNG) and writes it as an
 * Xauthority file for each reader; the child half (xvfb_exec) runs after
 * fork() and the drop to the worker's user.  Xvfb reports readiness by
 * writing its display number to -displayfd; xvfb_wait_ready waits for
 * that with a timeout, and anything else (exit, garbage, time-out) is a
 * failed start: the session does not run without its display.
 */
#ifndef GATEWAY_XVFB_H
#define GATEWAY_XVFB_H

#include <stddef.h>
#include <sys/types.h>

#define XVFB_PATH		"/usr/bin/Xvfb"
#define XVFB_COOKIE_LEN		16
#define XVFB_READY_TIMEOUT_MS	10000
/* The fd the child hands Xvfb for -displayfd. */
#define XVFB_DISPLAYFD		3

struct xvfb_params {
	unsigned	 width, height;
	const char	*auth;		/* Xauthority file Xvfb reads */
};

/* A fresh cookie from RAND_bytes.  0, or -1 if the CSPRNG failed. */
int	xvfb_cookie_new(unsigned char cookie[XVFB_COOKIE_LEN]);

/*
 * Write an Xauthority file (the libXau binary format) holding the cookie
 * for any display on any host (FamilyWild, empty display number: the
 * number is not known before Xvfb picks it).  Created mode 0600 with
 * O_EXCL|O_NOFOLLOW and owned by uid:gid.  0, or -1 with errno.
 */
int	xvfb_write_xauth(const char *path,
	    const unsigned char cookie[XVFB_COOKIE_LEN], uid_t uid,
	    gid_t gid);

/*
 * In the child, as root, before the drop: give Xvfb a private
 * /tmp/.X11-unix (a bind of `dir`, owned by its user) in a mount
 * namespace of its own.  Why: with -displayfd an X server probes display
 * numbers by binding sockets, and xtrans unlinks the socket path before
 * each bind — so another X server starting on the host would delete a
 * running session's socket file (its abstract socket survives, the file
 * the browser's jail binds does not).  In a private directory nobody
 * else's probe can reach it.  0, or -1 with errno and *what.
 */
int	xvfb_private_socket_dir(const char *dir, const char **what);

/* In the child: exec Xvfb with fd XVFB_DISPLAYFD as -displayfd.
 * Returns only on failure (-1, errno set). */
int	xvfb_exec(const struct xvfb_params *p);

/* The argv xvfb_exec uses (for tests and logs); strings live in buf. */
size_t	xvfb_argv(const struct xvfb_params *p, const char **argv,
	    size_t max, char *buf, size_t buflen);

enum xvfb_wait {
	XVFB_READY = 0,
	XVFB_TIMEOUT,
	XVFB_DIED,		/* closed the pipe without a display number */
	XVFB_INTERRUPTED	/* intr_fd became readable (a signal) */
};

/* Wait until Xvfb writes "N\n" to the pipe fd.  intr_fd (-1 = none) is
 * polled too, so a SIGTERM during start-up is not held back. */
int	xvfb_wait_ready(int fd, int timeout_ms, int intr_fd, int *display);

/* After Xvfb was killed hard: remove its lock file (if it names pid)
 * and its socket file (if no server answers there any more and, given
 * sock_fd >= 0, an fd of the socket file it made, if the path still
 * holds that inode: an Xvfb of another network namespace may have
 * taken the number and the path since). */
void	xvfb_remove_stale(int display, pid_t pid, int sock_fd);

#endif
