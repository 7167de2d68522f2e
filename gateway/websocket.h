/*
 * gateway/websocket.h — the server side of RFC 6455 for both doors: the
 * upgrade request's parser (the worker's ws:// door in gateway/vnc.c and
 * the wss path in gateway/vencrypt.c read requests with it alone), the
 * 101 answer to a request the worker has checked, and binary framing
 * both ways.  The front door runs RFB (and the researcher's VeNCrypt
 * login) inside the frames itself, so LibVNCServer behind it only ever
 * sees plain RFB.
 * Trust: unprivileged; parses untrusted requests and client frames.
 * Pure: no I/O.
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

#define WS_PATH_MAX		1024
#define WS_FIELD_MAX		256

/* The parts of a client's upgrade request anyone here looks at. */
struct ws_request {
	char		 path[WS_PATH_MAX];
	char		 host[WS_FIELD_MAX];
	char		 origin[WS_FIELD_MAX];	/* Origin, else Sec-WebSocket-Origin */
	char		 upgrade[WS_FIELD_MAX];
	char		 version[WS_FIELD_MAX];
	char		 key[WS_FIELD_MAX];
	char		 protocol[WS_FIELD_MAX];
	unsigned	 seen;		/* headers met (a second one is refused) */
	size_t		 len;		/* WS_REQ_OK: bytes up to the blank line */
	const char	*why;		/* WS_REQ_BAD's reason */
};

enum ws_req_status {
	WS_REQ_OK = 0,	/* a whole request, parsed into the struct */
	WS_REQ_PARTIAL,	/* a proper prefix of one: wait for more */
	WS_REQ_NOTGET,	/* does not begin with "GET " */
	WS_REQ_BAD	/* not a request we parse (why says what) */
};

/* Parse an HTTP/1.1 GET request (request line, headers, blank line;
 * CRLF line ends) from d[0..len) through common/buf.h. */
enum ws_req_status ws_request_parse(const void *d, size_t len,
	    struct ws_request *r);
/* Does the request path carry the token, as the whole path ("/T") or a
 * query parameter ("/websockify?token=T", "/?a=b&token=T")?  Compared
 * in constant time. */
int	 ws_path_has_token(const char *path, const char *token);
/* May this request open the session: the token in its path (NULL
 * token: websockets are off) and its Origin listed in origins
 * (NULL-terminated) or, with no list, naming the host the request was
 * sent to, so another web site cannot drive the session?  NULL, or why
 * not.  The worker's door and the front door both ask it. */
const char *ws_request_check(const struct ws_request *r, const char *token,
	    const char *const *origins);
/* The 101 answer to a parsed request (already checked for token and
 * Origin): NULL, or why it is not a websocket request we serve. */
const char *ws_response(const struct ws_request *r, char *out, size_t size);
/* Decode client frames from in[0..len) into out (unmasked payload);
 * pings are answered into reply.  *used: bytes of `in` consumed. */
enum ws_status ws_decode(struct ws_decoder *d, const uint8_t *in,
	    size_t len, struct wbuf *out, struct wbuf *reply, size_t *used);
/* Frame up to n bytes of data as one binary frame into to; returns how
 * many bytes it took (0 if to has no room for a frame). */
size_t	 ws_encode(const uint8_t *data, size_t n, struct wbuf *to);

#endif
