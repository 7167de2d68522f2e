/*
 * gateway/frontdoor.h — the front door: one listening address for every
 * session (`front_door_listen`), the only process that holds the TLS
 * private key when it is on, and the researchers' way in.
 *
 * A child of the parent (`cdsgated serve`), running as `cdsgate`, not
 * dumpable, under the seccomp profile FRONTDOOR from before it reads a
 * byte.  The parent tells it, over gateway/dooripc.h, which sessions are
 * live: where each one's worker accepts, the scrypt line of its
 * researcher's password, its internal VNC password and its websocket
 * token.  For each client it runs the same front door as a session's tls
 * process (gateway/vencrypt.c: RFB version, VeNCrypt X509Plain, TLS,
 * Plain; or wss: TLS, the HTTP request, the websocket, VeNCrypt Plain
 * inside), checks the password with the same scrypt and back-off, picks
 * the session by the user name (the session id, or the recipient id
 * while that recipient has one session; for wss also the token, which
 * must name the same session), connects to that session's worker, answers
 * its VncAuth with the internal password and relays bytes both ways.
 * An unknown user costs the same scrypt and gets the same refusal as a
 * wrong password.  Trust: unprivileged; parses untrusted TLS, VeNCrypt
 * and HTTP request bytes; the parent's messages are trusted in content
 * but checked in form (a malformed one ends us).
 */
#ifndef GATEWAY_FRONTDOOR_H
#define GATEWAY_FRONTDOOR_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "common/privdrop.h"

#define FRONTDOOR_MAX_SESSIONS	256	/* PARENT_MAX_SESSIONS */
#define FRONTDOOR_MAX_CONNS	96	/* clients at once, any stage */
#define FRONTDOOR_SNIFF_US	100000	/* wait for a TLS ClientHello */
#define FRONTDOOR_NOFILE	256	/* 2 a client + ours */

struct frontdoor_config {
	int			 ipc_fd;	/* from the parent */
	int			 listen_fd;	/* bound and listening */
	char			*tls_cert;	/* PEM */
	size_t			 tls_cert_len;
	char			*tls_key;	/* PEM; wiped once loaded */
	size_t			 tls_key_len;
	struct sockaddr_storage	 source;	/* bound before each connect */
	socklen_t		 source_len;
	const char *const	*ws_origins;	/* session policy's, or NULL */
	const struct privdrop_user *user;	/* cdsgate */
	pid_t			 parent;	/* dies with it */
};

/* Run until SIGTERM or the parent goes away.  Returns the exit status:
 * 0 on SIGTERM, 1 when set-up failed or the parent broke the protocol
 * or vanished. */
int	frontdoor_main(const struct frontdoor_config *cfg);

#endif
