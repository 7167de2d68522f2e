/*
 * gateway/vnc.h — the session's RFB server (LibVNCServer), driven from
 * the worker's own poll loop.
 *
 * It serves the listening socket the supervisor handed over.  Every new
 * connection first waits at a small door of our own (non-blocking, in the
 * poll loop): websocket clients must show the session token in the
 * request path and an allowed Origin, a TLS hello or any other bytes
 * sent before the server greeting are refused, and unauthenticated
 * connections are counted per source address (gateway/preauth.h: a
 * share per address, the greediest address's oldest evicted when the
 * table is full, failed logins backing off per address), so a flood of
 * connections never reaches the library and one address cannot lock
 * another out.  Each handshake stage has its own deadline.  An unauthenticated
 * peer is only handed to the library's reader once its whole (fixed
 * size) handshake message has arrived, so a truncated handshake cannot
 * stall the loop.  With a TLS certificate, native RFB clients and wss
 * connections are handed to the tls process (gateway/tlsfront.h, which
 * holds the key and credentials), which reaches the library through a
 * socketpair we give it once the user has logged in; unencrypted VNC and
 * ws:// are refused unless allowed.
 * Behind the door:
 * VNC password authentication, one interactive client, optionally one
 * view-only observer.  Key and pointer events go to the callbacks in
 * struct vnc_ops; cut text goes to gateway/clipboard.c and is dropped;
 * every other client message has a refusing hook or is the library's
 * own business (docs/gateway.md, "Client messages").  The only cursor
 * shape a client is sent is a fixed 5x5 dot: the real pointer is drawn
 * into the frames (gateway/cursor.h).
 * Trust: unprivileged; parses untrusted network input.
 */
#ifndef GATEWAY_VNC_H
#define GATEWAY_VNC_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "gateway/kiosk.h"
#include "gateway/preauth.h"
#include "policy/creds.h"

#define VNC_MAX_PREAUTH		PREAUTH_MAX_CONNS /* before authentication */
#define VNC_SNIFF_US		100000	/* wait for a websocket request */
#define VNC_WS_HEADER_US	2000000	/* ... for the whole request */
#define VNC_STAGE_US		5000000	/* each handshake message */
#define VNC_PASSWORD_US		30000000 /* ... the VncAuth response (a
					    person may type the password) */
#define VNC_HANDSHAKE_US	40000000 /* connect to authenticated */
#define VNC_CLIENT_WAIT_MS	2000	/* library: max stall on one peer */
#define VNC_WS_MAX_REQUEST	4096
/* TLS front-door connections: the pre-auth ones, as many evicted ones
 * still closing, plus the two relays. */
#define VNC_MAX_FRONT		(2 * VNC_MAX_PREAUTH + 2)
/* Descriptors vnc_pollfds may return (listen, door, clients, front). */
#define VNC_MAX_POLLFDS		(1 + 2 * VNC_MAX_PREAUTH + 4 + \
				 2 * VNC_MAX_FRONT)

enum vnc_status {
	VNC_OK = 0,
	VNC_ENOMEM,
	VNC_ECONFIG,		/* no password, bad geometry, bad fd */
	VNC_ELIB		/* LibVNCServer refused to set up */
};

enum vnc_role {
	VNC_ROLE_PENDING = 0,	/* not yet authenticated */
	VNC_ROLE_INTERACTIVE,
	VNC_ROLE_OBSERVER	/* view-only */
};

struct vnc_peer {
	void			*cl;		/* rfbClientPtr */
	char			 addr[64];	/* "ip:port" */
	enum vnc_role		 role;
	int			 websocket;
	int			 tls;		/* through the TLS front door */
	char			 user[CREDS_USER_MAX + 1]; /* VeNCrypt user */
	uint64_t		 accepted;	/* us, monotonic */
	uint64_t		 authed;	/* us, 0 = not yet */
	int			 partial;	/* pre-auth message incomplete */
	uint64_t		 recheck;	/* us: look at it again */
	struct kiosk		 kiosk;		/* per-client modifier state */
	int			 cursor_due;	/* this update may carry the dot */
	const char		*close_reason;	/* set when we close it */
	/* pre-authentication (gateway/preauth.h) */
	struct preauth_addr	 src;		/* as counted */
	uint32_t		 preauth_id;	/* 0: not (or no longer) counted */
	int			 stage;		/* library state last seen */
	uint64_t		 stage_t0;	/* us: since when */
	struct vnc_peer		*next;
};

struct vnc_ops {
	void	*arg;
	/* A client authenticated and got a role. */
	void	(*connected)(void *arg, struct vnc_peer *p);
	/* An authenticated client is gone (called before it is freed). */
	void	(*gone)(void *arg, struct vnc_peer *p);
	/* Input from the interactive client only. */
	void	(*key)(void *arg, struct vnc_peer *p, uint32_t keysym,
		    int down);
	void	(*pointer)(void *arg, struct vnc_peer *p, int mask, int x,
		    int y);
};

struct vnc_params {
	int			 listen_fd;
	const char		*password;
	const char		*ws_token;	/* NULL: websockets refused */
	const char *const	*ws_origins;	/* NULL: same host only */
	int			 allow_observer;
	int			 tls_ipc;	/* socket to the tls process
						   (gateway/tlsipc.h); -1: no
						   TLS front door */
	unsigned		 tls_users;	/* VeNCrypt users (for the log) */
	int			 allow_plain;	/* unencrypted VNC/ws allowed */
	const char		*accept_from;	/* the only peer address served
						   (the front door), or NULL */
	unsigned		 width, height;
	int			 red_shift, green_shift, blue_shift;
	char			*framebuffer;	/* width * height * 4 */
	uint64_t		 (*clock)(void);	/* monotonic us */
};

struct vnc;

int	 vnc_open(struct vnc **vp, const struct vnc_params *prm,
	    const struct vnc_ops *ops);
/* Disconnect everybody (logging each), close the listening socket. */
void	 vnc_close(struct vnc *v);
const char *vnc_strerror(int status);

/* The descriptors to poll (listen socket, door, clients); returns the
 * count written (never more than max). */
size_t	 vnc_pollfds(struct vnc *v, struct pollfd *pfd, size_t max);
/* Handle poll results for the descriptors vnc_pollfds gave. */
void	 vnc_handle(struct vnc *v, const struct pollfd *pfd, size_t n,
	    uint64_t now);
/* Timers: door and handshake deadlines, log summaries. */
void	 vnc_tick(struct vnc *v, uint64_t now);
uint64_t vnc_next_deadline(const struct vnc *v);

/* Framebuffer rows changed: tell the clients. */
void	 vnc_mark(struct vnc *v, int x, int y, int w, int h);
/* Send pending updates now (runs the library's event processing). */
void	 vnc_update(struct vnc *v);
/* Close one client (takes effect at the next vnc_update).  reason must
 * outlive the client (a string constant): its disconnect event names it. */
void	 vnc_disconnect(struct vnc *v, struct vnc_peer *p,
	    const char *reason);
/* Why the worker must end (the tls process broke the protocol or went
 * away), or NULL. */
const char *vnc_fatal(const struct vnc *v);
/* Authenticated clients right now. */
int	 vnc_viewers(const struct vnc *v);

#endif
