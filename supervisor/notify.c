/*
 * supervisor/notify.c — sd_notify without libsystemd (see notify.h for
 * why): one SOCK_DGRAM datagram to the socket in $NOTIFY_SOCKET.
 * Trust: root supervisor; sends only fixed state strings.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "supervisor/notify.h"

static struct sockaddr_un notify_addr;
static socklen_t notify_len;		/* 0: not configured */

/* Once, before any fork: remember the address, drop the variable. */
int
notify_init(void)
{
	const char *v = getenv("NOTIFY_SOCKET");
	size_t n;

	notify_len = 0;
	if (v == NULL)
		return 0;
	n = strlen(v);
	/* "/path" or "@abstract"; anything else (e.g. "vsock:") is not
	   ours to guess at. */
	if (n < 2 || n >= sizeof(notify_addr.sun_path) ||
	    (v[0] != '/' && v[0] != '@')) {
		unsetenv("NOTIFY_SOCKET");
		return -1;
	}
	memset(&notify_addr, 0, sizeof(notify_addr));
	notify_addr.sun_family = AF_UNIX;
	memcpy(notify_addr.sun_path, v, n);
	if (v[0] == '@')
		notify_addr.sun_path[0] = '\0';	/* abstract namespace */
	notify_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
	    (v[0] == '/'));
	unsetenv("NOTIFY_SOCKET");
	return 1;
}

/* A fresh socket per message: two messages a session, nothing to keep. */
int
notify_send(const char *state)
{
	ssize_t r;
	int fd, saved;

	if (notify_len == 0)
		return 0;
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	r = sendto(fd, state, strlen(state), MSG_NOSIGNAL,
	    (const struct sockaddr *)&notify_addr, notify_len);
	saved = errno;
	close(fd);
	errno = saved;
	return r == (ssize_t)strlen(state) ? 0 : -1;
}

/* STATUS tells `systemctl status` where clients connect. */
int
notify_ready(const char *listen)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "READY=1\nSTATUS=ready %s", listen);
	return notify_send(msg);
}
