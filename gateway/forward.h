/*
 * gateway/forward.h — the browser's only way out: a TCP forwarder from
 * a socket listening inside the jail's network namespace to the one
 * configured backend.
 *
 * Its own small process (role "forward" in gateway/session.c), as the
 * browser's user, in the host's network namespace: it holds the
 * listening socket (made by the supervisor inside the jail's namespace,
 * sandbox/namespace.c) and connects each accepted connection to the
 * backend address it was given — never anywhere else.  One poll loop,
 * fixed buffers per direction, a cap on connections, and per-connection
 * byte counters in the session log (the start of the network log).
 * Untrusted input: the bytes of the browser's connections, which it
 * only copies, never parses.
 */
#ifndef GATEWAY_FORWARD_H
#define GATEWAY_FORWARD_H

#include <sys/socket.h>

#define FORWARD_MAX_CONNS	64	/* the browser opens ~6 per origin */
#define FORWARD_BUF		16384	/* per direction, per connection */

struct forward_config {
	int			 listen_fd;	/* in the jail's netns */
	struct sockaddr_storage	 backend;	/* the only destination */
	socklen_t		 backend_len;
	const char		*backend_desc;	/* "addr:port" for logs */
	unsigned		 max_conns;	/* <= FORWARD_MAX_CONNS */
};

/*
 * Run until SIGTERM/SIGINT/SIGHUP.  Logs net_open, net_close (bytes each
 * way, duration, why), net_refused (over the cap).  Returns the process
 * exit status: 0 after a signal, 1 if the loop failed.
 */
int	forward_main(const struct forward_config *cfg);

/*
 * The one place a socket is made and connected (to cfg->backend, non-
 * blocking): a seccomp profile for this process allows exactly
 * socket(backend family, SOCK_STREAM) and connect.  Returns the fd
 * (connect in progress) or -1 with errno.
 */
int	forward_backend_socket(const struct forward_config *cfg);

#endif
