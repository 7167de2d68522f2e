/*
 * gateway/http.h — incremental HTTP/1.1 framing for the jail's forwarder.
 *
 * Finds where each request and response head and body ends, so the
 * forwarder (gateway/forward.c) can add its lines to every response (the
 * CSP sandbox unless Chromium never renders the response's type as a
 * document) and log each exchange, while bodies
 * stream through untouched.  It never buffers a body: it tells the caller
 * how many input bytes to copy, and holds only per-side framing state and
 * a short queue of open exchanges (pipelining).
 *
 * Library code: no I/O, no logging; statuses with http_strerror() and a
 * detail string.  Untrusted input both ways (the browser's requests, from
 * a possibly compromised renderer, and the backend's responses): anything
 * outside the strict grammar below is an error and the caller closes the
 * connection (fail closed), never a guess:
 *   - heads end at an empty line; lines end in CRLF or LF; a bare CR, a
 *     NUL or other control byte, obs-fold, a space before the colon, a
 *     head over HTTP_HEAD_MAX bytes are errors;
 *   - only HTTP/1.0 and HTTP/1.1; no CONNECT (no tunnels from the jail);
 *   - Content-Length: digits only, repeats must agree; with
 *     Transfer-Encoding it is an error (smuggling); a request's
 *     Transfer-Encoding must end in chunked;
 *   - a response needs an open request; 101 only after an Upgrade request,
 *     then both directions are an opaque relay;
 *   - a request with a Service-Worker header (Chromium's fetch of a
 *     service worker's script) is refused: a service worker could answer
 *     the app's navigations with documents that never pass here;
 *   - every Cdsgate-Grant line of a request head (common/grant.h) is
 *     removed, whoever sent it, and the connection's own grant line, if
 *     it has one, is added after the request line: the page can neither
 *     forge nor remove the session's identity.
 */
#ifndef GATEWAY_HTTP_H
#define GATEWAY_HTTP_H

#include <stddef.h>
#include <stdint.h>

#define HTTP_HEAD_MAX		16384	/* request or response head */
#define HTTP_TARGET_MAX		2048	/* logged part of a request target */
#define HTTP_METHOD_MAX		31
#define HTTP_PIPELINE_MAX	16	/* requests awaiting their response */
#define HTTP_CHUNK_LINE_MAX	1024	/* chunk-size line, with extensions */

/* Added after the status line of every response but those whose one
 * Content-Type Chromium never renders as a document: scripts, the app's
 * own origin and forms keep working; no popups, no top-level navigation,
 * no modals, no downloads (docs/jail.md). */
#define HTTP_CSP_SANDBOX	"sandbox allow-scripts allow-same-origin " \
	"allow-forms"
#define HTTP_CSP_LINE	"Content-Security-Policy: " HTTP_CSP_SANDBOX "\r\n"
/* Added to every final response: nothing the browser fetched can later
 * be served from its cache as a service-worker script, which would skip
 * the request check below (and no research data stays in its cache). */
#define HTTP_NOSTORE_LINE	"Cache-Control: no-store\r\n"
#define HTTP_DOC_LINES	HTTP_NOSTORE_LINE HTTP_CSP_LINE
#define HTTP_INSERT_MAX	(sizeof(HTTP_DOC_LINES) - 1)
/* The grant line added to every request head (with its CRLF). */
#define HTTP_REQ_INSERT_MAX	256
/* Client-sent grant lines removed from one request head; more: refused. */
#define HTTP_DROP_MAX		4

enum http_side { HTTP_REQ = 0, HTTP_RESP = 1 };

enum http_status {
	HTTP_OK = 0,
	HTTP_EHEADLONG,		/* head over HTTP_HEAD_MAX */
	HTTP_EMALFORMED,	/* request/status line, header line */
	HTTP_EVERSION,		/* not HTTP/1.0 or HTTP/1.1 */
	HTTP_EMETHOD,		/* CONNECT */
	HTTP_ELENGTH,		/* Content-Length / Transfer-Encoding */
	HTTP_ECHUNK,		/* chunked framing */
	HTTP_EUNSOLICITED,	/* a response without a request, a 101
				   without an Upgrade request */
	HTTP_ETRUNCATED,	/* the side closed inside a message */
	HTTP_ENOMEM,
	HTTP_ESWSCRIPT,		/* a request with a Service-Worker header:
				   Chromium fetching a service worker */
	HTTP_EGRANT		/* over HTTP_DROP_MAX grant lines */
};

enum http_action {
	HTTP_WAIT,	/* nothing until more input, output room or the
			   other side's progress */
	HTTP_PASS,	/* copy `consume` input bytes as they are */
	HTTP_HEAD,	/* copy `consume` input bytes, with `insert` put
			   after the first `insert_at` of them and the
			   `ndrop` ranges `drop` left out */
	HTTP_EOF,	/* input ended at a message boundary: pass FIN on */
	HTTP_FAIL	/* status and detail say why; close the connection */
};

/* One request and its response, as the network log shows it. */
struct http_exchange {
	char		 method[HTTP_METHOD_MAX + 1];
	char		 target[HTTP_TARGET_MAX + 1];
	int		 target_truncated;
	int		 status;	/* final status; 0 = none yet */
	uint64_t	 req_bytes;	/* head + body, as sent */
	uint64_t	 resp_bytes;	/* as the backend sent them (1xx
					   included, our header not) */
	long		 t_req_ms;	/* request head complete */
	long		 t_first_ms;	/* first response byte; -1 none */
	long		 t_end_ms;	/* response complete */
	int		 csp_added;
	int		 is_head;	/* HEAD: the response has no body */
	int		 upgrade;	/* Connection: upgrade + Upgrade */
	unsigned	 grant_dropped;	/* client-sent grant lines removed */
};

struct http_step {
	enum http_action action;
	size_t		 consume;
	size_t		 insert_at;
	const char	*insert;	/* NULL: nothing to add */
	size_t		 insert_len;
	struct {
		size_t	 off, len;	/* in the head, after insert_at */
	}		 drop[HTTP_DROP_MAX];
	unsigned	 ndrop;
	/* An exchange whose response ended with this step (valid until the
	   next call), or NULL. */
	const struct http_exchange *done;
	enum http_status status;
	char		 detail[128];
};

struct http_conn;

struct http_conn *http_conn_alloc(void);
void	 http_conn_free(struct http_conn *hc);	/* NULL: no-op */
/* The line (a whole header line with its CRLF, at most
 * HTTP_REQ_INSERT_MAX bytes; kept by pointer) added after the request
 * line of every request head from now on.  0, or -1 if too long. */
int	 http_conn_request_line(struct http_conn *hc, const char *line);

/*
 * One step of side `side` over its unconsumed input in[0..len) (eof: the
 * peer sent FIN after it), with `room` bytes free in the output.  Never
 * asks to emit more than `room` bytes; a head waits until it fits whole.
 * Call again while the action is PASS or HEAD.  now_ms stamps exchanges.
 * Returns st->action.
 */
enum http_action http_step(struct http_conn *hc, enum http_side side,
	    const uint8_t *in, size_t len, int eof, size_t room, long now_ms,
	    struct http_step *st);

/* The bytes a PASS or HEAD step sends on: in[0..st->consume) with the
 * insert put in and the dropped lines left out, written to out (room
 * for st->consume + st->insert_len).  Returns the bytes written. */
size_t	 http_step_output(const struct http_step *st, const uint8_t *in,
	    uint8_t *out);

/* 1 after a 101: both sides are an opaque relay from now on. */
int	 http_opaque(const struct http_conn *hc);
/* The i-th exchange still waiting for (the end of) its response, or
 * NULL: what a closing connection leaves unfinished. */
const struct http_exchange *http_pending(const struct http_conn *hc,
	    unsigned i);
const char *http_strerror(enum http_status s);

/* 0 only if value (NULL = missing) is one well-formed media type whose
 * essence Chromium never renders as a document (images, fonts, JSON,
 * JavaScript, WebAssembly, octet-stream, Arrow); 1 for everything else. */
int	 http_type_is_document(const char *value, size_t len);

#endif
