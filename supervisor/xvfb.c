/*
 * supervisor/xvfb.c — start the session's Xvfb and wait until it is ready.
 *
 * Supervisor side (root): the cookie and the Xauthority files.  Child
 * side (already the worker's user): the exec.  No untrusted input; the
 * one thing read back from Xvfb, its display number, is parsed strictly.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "supervisor/xvfb.h"

#define FAMILY_WILD	0xffff		/* libXau: matches any address */
#define COOKIE_NAME	"MIT-MAGIC-COOKIE-1"

int
xvfb_cookie_new(unsigned char cookie[XVFB_COOKIE_LEN])
{
	return RAND_bytes(cookie, XVFB_COOKIE_LEN) == 1 ? 0 : -1;
}

/* Append a 16-bit big-endian length and the bytes (libXau's format). */
static size_t
xauth_put(unsigned char *p, const void *data, uint16_t len)
{
	p[0] = (unsigned char)(len >> 8);
	p[1] = (unsigned char)len;
	memcpy(p + 2, data, len);
	return 2 + (size_t)len;
}

int
xvfb_write_xauth(const char *path, const unsigned char cookie[XVFB_COOKIE_LEN],
    uid_t uid, gid_t gid)
{
	unsigned char rec[64];
	size_t n = 0;
	ssize_t w;
	int fd, saved;

	/*
	 * One record: family FamilyWild, empty address, empty display
	 * number (libXau treats both as "any"), the cookie.  Xvfb reads
	 * every record of its -auth file regardless of address.
	 */
	rec[n++] = FAMILY_WILD >> 8;
	rec[n++] = FAMILY_WILD & 0xff;
	n += xauth_put(rec + n, "", 0);
	n += xauth_put(rec + n, "", 0);
	n += xauth_put(rec + n, COOKIE_NAME, sizeof(COOKIE_NAME) - 1);
	n += xauth_put(rec + n, cookie, XVFB_COOKIE_LEN);

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd < 0)
		goto fail;
	if (fchown(fd, uid, gid) != 0 || fchmod(fd, 0600) != 0)
		goto fail;
	do
		w = write(fd, rec, n);
	while (w < 0 && errno == EINTR);
	if (w != (ssize_t)n)
		goto fail;
	explicit_bzero(rec, sizeof(rec));
	return close(fd);
fail:
	saved = errno != 0 ? errno : EIO;
	explicit_bzero(rec, sizeof(rec));
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	errno = saved;
	return -1;
}

size_t
xvfb_argv(const struct xvfb_params *p, const char **argv, size_t max,
    char *buf, size_t buflen)
{
	size_t n = 0;
	int len;

	len = snprintf(buf, buflen, "%ux%ux24", p->width, p->height);
	if (len < 0 || (size_t)len + 3 > buflen || max < 16)
		return 0;
	argv[n++] = XVFB_PATH;
	argv[n++] = "-displayfd";
	argv[n++] = "3";		/* XVFB_DISPLAYFD */
	argv[n++] = "-screen";
	argv[n++] = "0";
	argv[n++] = buf;
	argv[n++] = "-nolisten";	/* no TCP: only local clients ... */
	argv[n++] = "tcp";
	argv[n++] = "-auth";		/* ... holding the cookie */
	argv[n++] = p->auth;
	argv[n++] = "-noreset";		/* keep state when the browser
					   restarts and its last client goes */
	argv[n++] = "-nopn";		/* no partial network listeners */
	argv[n] = NULL;
	return n;
}

int
xvfb_exec(const struct xvfb_params *p)
{
	const char *argv[20];
	char geo[32];
	/* Xvfb needs nothing from the environment; give it nothing. */
	char *const envp[] = { "PATH=/usr/bin:/bin", NULL };

	if (xvfb_argv(p, argv, 20, geo, sizeof(geo)) == 0) {
		errno = EINVAL;
		return -1;
	}
	execve(XVFB_PATH, (char *const *)argv, envp);
	return -1;
}

static long
ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	    (t.tv_nsec - t0->tv_nsec) / 1000000;
}

int
xvfb_wait_ready(int fd, int timeout_ms, int intr_fd, int *display)
{
	struct pollfd pfd[2];
	struct timespec t0;
	char buf[16];
	size_t n = 0;
	ssize_t r;
	long left, v;
	char *end;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if ((left = timeout_ms - ms_since(&t0)) <= 0)
			return XVFB_TIMEOUT;
		pfd[0].fd = fd;
		pfd[0].events = POLLIN;
		pfd[1].fd = intr_fd;
		pfd[1].events = POLLIN;
		if (poll(pfd, intr_fd >= 0 ? 2 : 1, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			return XVFB_DIED;
		}
		if (intr_fd >= 0 && (pfd[1].revents & POLLIN))
			return XVFB_INTERRUPTED;
		if (pfd[0].revents == 0)
			continue;
		r = read(fd, buf + n, sizeof(buf) - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return XVFB_DIED;
		n += (size_t)r;
		buf[n] = '\0';
		if (memchr(buf, '\n', n) != NULL)
			break;
		if (n == sizeof(buf) - 1)
			return XVFB_DIED;	/* not a display number */
	}
	errno = 0;
	v = strtol(buf, &end, 10);
	if (end == buf || *end != '\n' || errno != 0 || v < 0 || v > 65535)
		return XVFB_DIED;
	*display = (int)v;
	return XVFB_READY;
}

/* A socket nobody listens on any more (connect is refused). */
static int
socket_is_dead(const char *path)
{
	struct sockaddr_un sun;
	struct stat st;
	int fd, r;

	if (lstat(path, &st) != 0 || !S_ISSOCK(st.st_mode))
		return 0;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return 0;
	r = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	close(fd);
	return r != 0 && errno == ECONNREFUSED;
}

void
xvfb_remove_stale(int display, pid_t pid, int sock_fd)
{
	struct stat now, ours;
	char lock[64], sock[64], buf[32];
	ssize_t n;
	int fd;

	/* With -displayfd Xvfb writes no lock file (the abstract socket is
	   the lock); without it, the lock names the server's pid. */
	snprintf(lock, sizeof(lock), "/tmp/.X%d-lock", display);
	if ((fd = open(lock, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			if (atol(buf) == (long)pid)
				unlink(lock);
		}
	}
	/* The path socket: only if no server (a new Xvfb that took the
	   number since) answers on it. */
	snprintf(sock, sizeof(sock), "/tmp/.X11-unix/X%d", display);
	if (sock_fd >= 0 && (lstat(sock, &now) != 0 ||
	    fstat(sock_fd, &ours) != 0 || now.st_dev != ours.st_dev ||
	    now.st_ino != ours.st_ino))
		return;		/* not the file our server made */
	if (socket_is_dead(sock))
		unlink(sock);
}

#define X11_SOCKET_DIR	"/tmp/.X11-unix"

int
xvfb_private_socket_dir(const char *dir, const char **what)
{
	/* Our view of the host: nothing we mount propagates back. */
	*what = "unshare(CLONE_NEWNS)";
	if (unshare(CLONE_NEWNS) != 0)
		return -1;
	*what = "making / private";
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		return -1;
	/* The mount point; a host without X servers may lack it. */
	*what = "mkdir " X11_SOCKET_DIR;
	if (mkdir(X11_SOCKET_DIR, 01777) != 0 && errno != EEXIST)
		return -1;
	*what = "bind of the session's X socket directory";
	if (mount(dir, X11_SOCKET_DIR, NULL, MS_BIND, NULL) != 0)
		return -1;
	return 0;
}
