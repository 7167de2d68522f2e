/*
 * gateway/websocket.h — the server side of RFC 6455 for the front door's
 * wss path (gateway/vencrypt.c): the 101 answer to a request the worker
 * has checked, and binary framing both ways.  The front door runs RFB
 * (and the researcher's VeNCrypt login) inside the frames itself, so
 * LibVNCServer behind it only ever sees plain RFB.
 * Trust: unprivileged; decodes untrusted client frames.  Pure: no I/O.
 */
#ifndef GATEWAY_WEBSOCKET_H
#define GATEWAY_WEBSOCKET_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

#define WS_RESPONSE_MAX		256
#define WS_CONTROL_MAX		125	/* RFC 6455 5.5 */
#define WS_FRAME_MAX		(1u << 30) /* a longer data frame is refused */

enum ws_status {
	WS_OK = 0,	/* consumed what it could; call again with more */
	WS_CLOSE,	/* the client sent a close frame */
	WS_EBAD		/* not a frame a client may send: end */
};

/* A client frame being decoded (streamed: payloads may be long). */
struct ws_decoder {
	uint64_t	 left;		/* payload bytes of the data frame */
	uint8_t		 mask[4];
	unsigned	 mpos;
	const char	*why;		/* WS_EBAD's reason */
};

/* Copy header `name`'s value (trimmed) out of a complete HTTP request;
 * 1 if found and it fit. */
int	 ws_header(const char *req, const char *name, char *out, size_t size);
/* The 101 answer to a complete request (already checked for token and
 * Origin): NULL, or why it is not a websocket request we serve. */
const char *ws_response(const char *req, char *out, size_t size);
/* Decode client frames from in[0..len) into out (unmasked payload);
 * pings are answered into reply.  *used: bytes of `in` consumed. */
enum ws_status ws_decode(struct ws_decoder *d, const uint8_t *in,
	    size_t len, struct wbuf *out, struct wbuf *reply, size_t *used);
/* Frame up to n bytes of data as one binary frame into to; returns how
 * many bytes it took (0 if to has no room for a frame). */
size_t	 ws_encode(const uint8_t *data, size_t n, struct wbuf *to);

#endif
