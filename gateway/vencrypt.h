/*
 * gateway/vencrypt.h — the front door: one TLS-protected connection
 * between a client and the session's RFB server (LibVNCServer), driven
 * by the tls process's poll loop (gateway/tlsfront.c); the library is in
 * the worker, reached through a socketpair the worker hands over.
 *
 * LibVNCServer 0.9.14 has no server-side TLS for native RFB, so for a
 * native client the door speaks the start of RFB itself: version 3.8,
 * security type VeNCrypt (19) only (plus VncAuth (2) where plain VNC is
 * allowed), VeNCrypt 0.2, subtype X509Plain (262), the TLS handshake,
 * then the user name and password, checked against the session's
 * credentials (policy/creds.h).  Only then is a socketpair opened to the
 * library, where the door plays the RFB *client*: it answers the
 * library's VncAuth challenge with the session's internal VNC password,
 * forwards the library's verdict (a busy session, say) as the
 * SecurityResult, and from then on relays bytes both ways (ClientInit,
 * ServerInit and everything after pass through untouched).  For wss
 * (noVNC over https) the door terminates TLS and reads the HTTP request
 * so that the caller can check the token and Origin; once it has, the
 * door answers the websocket handshake itself (gateway/websocket.h) and
 * runs the same RFB start inside the frames, with VeNCrypt subtype Plain
 * (256: the TLS is the wss connection's) — so noVNC logs in with the
 * same user name and password as a native client, and the library sees
 * plain RFB.  A client that picks VncAuth where plain VNC is off gets a
 * SecurityResult failure with the reason, and the attempt is logged.
 * Trust: unprivileged; everything the client sends is untrusted.
 */
#ifndef GATEWAY_VENCRYPT_H
#define GATEWAY_VENCRYPT_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "gateway/preauth.h"
#include "gateway/ratelimit.h"
#include "gateway/tls.h"
#include "policy/creds.h"

#define VENCRYPT_STAGE_US	5000000	/* each handshake message, the TLS
					   handshake, the wss request */
#define VENCRYPT_PASSWORD_US	30000000 /* the Plain user name and password
					    (a person may type them) */
#define VENCRYPT_HANDSHAKE_US	40000000 /* accept to relaying */
#define VENCRYPT_CLOSE_US	1000000	/* flushing a refusal */
#define VENCRYPT_UP_MAX		(64 * 1024)	/* client -> server buffer */
#define VENCRYPT_DOWN_MAX	(256 * 1024)	/* server -> client buffer */
#define VENCRYPT_REQUEST_MAX	4096	/* a wss HTTP request */
#define VENCRYPT_WS_OUT_MAX	(128 * 1024)	/* frames to a wss client */

#define RFB_SEC_NONE		1
#define RFB_SEC_VNCAUTH		2
#define RFB_SEC_VENCRYPT	19
#define VENCRYPT_PLAIN		256	/* only inside wss (TLS below) */
#define VENCRYPT_X509PLAIN	262
#define VENCRYPT_TLSPLAIN	259	/* anonymous TLS: never offered */

enum vencrypt_mode {
	VENCRYPT_MODE_RFB,	/* a native client: we speak RFB first */
	VENCRYPT_MODE_WSS,	/* a TLS ClientHello: https + websocket */
	VENCRYPT_MODE_WS	/* ws:// where plain VNC is allowed: the
				   same as wss without the TLS */
};

/* What the caller must do after vencrypt_handle/vencrypt_tick. */
enum vencrypt_event {
	VENCRYPT_CONTINUE = 0,
	VENCRYPT_NEED_INNER,	/* authenticated: open the library side */
	VENCRYPT_WS_REQUEST,	/* check vencrypt_request(), then
				   vencrypt_ws_accept (or refuse) */
	VENCRYPT_CLOSED		/* done (logged): vencrypt_free it */
};

struct vencrypt_params {
	struct tls_ctx		*tls;
	const struct creds	*creds;
	const char		*inner_password; /* the library's VncAuth */
	int			 allow_plain;	/* offer VncAuth too */
	struct preauth		*preauth;	/* per-address login back-off */
	struct tbucket		*auth_bucket;	/* all addresses: last resort */
	struct tbucket		*log_bucket;	/* refusal lines (auth_ok never
						   throttled) */
	unsigned long		*log_quiet;	/* lines not logged, reported
						   with the next one */
	uint64_t		 (*clock)(void);
};

struct vencrypt;

int	 vencrypt_alloc(struct vencrypt **cp, int fd, const char *addr,
	    enum vencrypt_mode mode, const struct vencrypt_params *prm,
	    uint64_t now);
/* Closes both descriptors, wipes the buffers. */
void	 vencrypt_free(struct vencrypt *c);

/* Descriptors to poll (at most 2). */
size_t	 vencrypt_pollfds(const struct vencrypt *c, struct pollfd *pfd,
	    size_t max);
/* Does fd belong to this connection? */
int	 vencrypt_owns(const struct vencrypt *c, int fd);
/* Move bytes and run the protocol as far as it goes without blocking. */
enum vencrypt_event vencrypt_handle(struct vencrypt *c, uint64_t now);
/* Deadlines: handshake too slow, refusal flushed. */
enum vencrypt_event vencrypt_tick(struct vencrypt *c, uint64_t now);
uint64_t vencrypt_deadline(const struct vencrypt *c);

/* The wss request passed the caller's checks: answer 101 and start RFB
 * inside the websocket (or refuse with 400 if it is not one we serve). */
void	 vencrypt_ws_accept(struct vencrypt *c, uint64_t now);
/* The library's end is fd's peer.  Writes the first bytes (our RFB
 * version) at once, so that LibVNCServer's websocket sniff finds them
 * without waiting: call it *before* rfbNewClient.  Returns 0 (fd is ours now), or -1 (fd stays the
 * caller's; refuse the connection). */
int	 vencrypt_attach(struct vencrypt *c, int fd);
/* Refuse (logged with reason; a native client that logged in gets it
 * as its SecurityResult), then close: keep calling vencrypt_handle. */
void	 vencrypt_refuse(struct vencrypt *c, const char *reason,
	    uint64_t now);

/* The front door (gateway/frontdoor.c): the credentials table of the
 * moment (it is rebuilt as sessions come and go; the old one is freed
 * right after), and once the user is known the session's internal VNC
 * password (it must outlive the connection's handshake) and its id, for
 * every event logged from then on. */
void	 vencrypt_set_creds(struct vencrypt *c, const struct creds *creds);
void	 vencrypt_set_session(struct vencrypt *c, const char *inner_password,
	    const char *session);
/* Does addr wait out a login back-off (prm's preauth table)?  Then its
 * connections are closed at once, before any TLS (logged once per
 * burst, through prm's log bucket).  1 = refuse, 0 = go on. */
int	 vencrypt_backed_off(const struct vencrypt_params *prm,
	    const char *addr, uint64_t now);

/* Shared by the session's tls process and the front door: the
 * monotonic clock in microseconds; SIGPIPE ignored and SIGTERM, SIGINT,
 * SIGHUP blocked into the returned signalfd (-1 on failure); what opens
 * files at first use warmed up before the filter (libgcrypt's DES for
 * the library's VncAuth we answer, one scrypt, jansson's seed); a
 * set-up failure logged (returns -1). */
uint64_t vencrypt_clock(void);
int	 vencrypt_signals(void);
void	 vencrypt_prewarm(const struct creds *creds);
int	 vencrypt_setup_failed(const char *what, const char *why);

/* The wss request, NUL-terminated (VENCRYPT_WS_REQUEST only). */
char	*vencrypt_request(struct vencrypt *c);
const char *vencrypt_addr(const struct vencrypt *c);
const char *vencrypt_user(const struct vencrypt *c);	/* "" if none */
/* Handed to the library (which then counts it as pre-auth, if so). */
int	 vencrypt_attached(const struct vencrypt *c);
int	 vencrypt_encrypted(const struct vencrypt *c);

#endif
