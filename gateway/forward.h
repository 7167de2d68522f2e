/*
 * gateway/forward.h — the browser's only way out: a TCP forwarder from
 * a socket listening inside the jail's network namespace to the one
 * configured backend.
 *
 * Its own small process (role "forward" in supervisor/roles.c), as the
 * browser's user, in the host's network namespace: it holds the
 * listening socket (made by the supervisor inside the jail's namespace,
 * sandbox/namespace.c) and connects each accepted connection to the
 * backend address it was given — never anywhere else.  One poll loop,
 * fixed buffers per direction, a cap on connections, and per-connection
 * byte counters in the session log.  For an http:// backend it also
 * follows HTTP/1.1 framing (gateway/http.h): every response gets
 * Cache-Control: no-store and, unless its type is one Chromium never
 * renders as a document, a Content-Security-Policy sandbox line; a
 * service-worker script request is refused; every request loses any
 * Cdsgate-Grant line the browser sent and gets the session's own (the
 * dataset grant the backend checks); every exchange gets a line
 * in the network log; an https:// backend stays an opaque relay with
 * connection-level lines only.
 * Untrusted input: the bytes of the browser's connections (parsed only
 * through gateway/http.c, bounded) and of the backend's.
 */
#ifndef GATEWAY_FORWARD_H
#define GATEWAY_FORWARD_H

#include <sys/socket.h>

#define FORWARD_MAX_CONNS	64	/* the browser opens ~6 per origin */
/* per direction, per connection; an HTTP head (16 KiB) and the line
   the forwarder adds must fit in one */
#define FORWARD_BUF		(16384 + 256)
/* request heads with the grant, framed but not yet sent, per connection
   (the capture masks their MACs); more wait */
#define FORWARD_MACS		64

struct forward_config {
	int			 listen_fd;	/* in the jail's netns */
	struct sockaddr_storage	 backend;	/* the only destination */
	socklen_t		 backend_len;
	const char		*backend_desc;	/* "addr:port" for logs */
	unsigned		 max_conns;	/* <= FORWARD_MAX_CONNS */
	int			 http;		/* http:// backend: parse */
	int			 netlog_fd;	/* network.jsonl, or -1 */
	int			 pcap_fd;	/* <id>.pcapng, or -1 */
	/* http: "Cdsgate-Grant: VALUE\r\n" added to every request
	   (common/grant.h), or NULL; any the browser sends is removed */
	const char		*grant_line;
};

/*
 * Run until SIGTERM/SIGINT/SIGHUP.  Logs net_open, net_close (bytes each
 * way, duration, why: an HTTP framing error says which side and what),
 * net_refused (over the cap) to the session log; to netlog_fd one JSON
 * line per HTTP exchange ("http") and per closed connection ("conn")
 * (docs/recording-format.md); to pcap_fd a pcapng capture of every byte
 * it sends each way (record/pcapng.h).  Returns the process exit status: 0 after
 * a signal, 1 if the loop failed or the network log or the capture could
 * not be written (fail closed: no forwarding without them).
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
