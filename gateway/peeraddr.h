/*
 * gateway/peeraddr.h — numeric addresses for the front door and the
 * sessions behind it: "ADDR:PORT" into a sockaddr (where a session's
 * worker accepts), and "is this peer that one address?" (a session
 * behind the front door serves only the front door's connections).
 * Library code: no logging.  Host names are never resolved.
 */
#ifndef GATEWAY_PEERADDR_H
#define GATEWAY_PEERADDR_H

#include <sys/socket.h>

/* "127.0.0.1:5901" or "[::1]:5901" into ss; 0, or -1 if not numeric. */
int	peeraddr_parse(const char *text, struct sockaddr_storage *ss,
	    socklen_t *len);
/* addr (no port) into ss with port 0 (a source to bind); 0 or -1. */
int	peeraddr_host(const char *addr, struct sockaddr_storage *ss,
	    socklen_t *len);
/* 1 if sa's address (port ignored) equals the numeric addr, else 0. */
int	peeraddr_is(const struct sockaddr *sa, socklen_t len, const char *addr);

#endif
