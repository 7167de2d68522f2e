/*
 * gateway/http.c — incremental HTTP/1.1 framing (see http.h).
 *
 * Parses untrusted bytes from both the browser and the backend; runs in
 * the unprivileged, seccomp'd forwarder.  Heads are parsed whole, from
 * the caller's input, through struct buf cursors (common/buf.h); bodies
 * are only counted, chunk framing byte by byte, data in runs.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/grant.h"
#include "gateway/http.h"

enum http_state {
	ST_HEAD,		/* collecting a head */
	ST_BODY,		/* Content-Length: remain bytes */
	ST_CHUNK_SIZE,		/* chunk-size [ext] CRLF */
	ST_CHUNK_DATA,		/* remain bytes of a chunk */
	ST_CHUNK_END,		/* the CRLF after a chunk's data */
	ST_TRAILER,		/* trailer lines up to the empty one */
	ST_UNTIL_CLOSE,		/* a response body that ends at FIN */
	ST_UPGRADE_WAIT,	/* request side: the Upgrade's answer */
	ST_OPAQUE		/* after 101: bytes only */
};

enum body_kind { BODY_NONE, BODY_LENGTH, BODY_CHUNKED, BODY_CLOSE };

struct side_state {
	enum http_state	 st;
	uint64_t	 remain;
	size_t		 scanned;	/* head bytes searched for its end */
	size_t		 linelen;	/* chunk-size or trailer line */
	size_t		 trailer;	/* trailer bytes so far */
	int		 cr;		/* the last byte was CR */
	int		 hex;		/* chunk-size digits; -1 in an ext */
};

struct http_conn {
	struct side_state s[2];
	struct http_exchange q[HTTP_PIPELINE_MAX];
	unsigned	 qhead, qlen;
	int		 req_live;	/* the request side is sending the
					   last queued exchange */
	int		 opaque;
	struct http_exchange last;	/* what st->done points to */
	const char	*req_line;	/* added to every request head */
};

/* What a head says about framing and content. */
struct head {
	int		 status;
	size_t		 first_len;	/* the first line with its LF */
	int		 have_cl;
	uint64_t	 cl;
	int		 te, te_chunked;	/* TE; it ends in chunked */
	int		 conn_upgrade, has_upgrade;
	int		 ntype, type_doc;
	int		 csp;		/* a response that gets the CSP */
	int		 sw_script;	/* a request with Service-Worker: */
	int		 grant;		/* this line is a Cdsgate-Grant */
	unsigned	 ndrop;		/* grant lines: where they are */
	size_t		 drop_off[HTTP_DROP_MAX], drop_len[HTTP_DROP_MAX];
};

#define CL_MAX		(UINT64_C(1) << 62)
#define CHUNK_HEX_MAX	15		/* 15 hex digits: < 2^60 */

static uint8_t stop_lf[256], stop_ctl[256], stop_nottchar[256];
static uint8_t stop_target[256];

/* The byte classes of RFC 9110/9112, as buf_span() stop tables. */
static void
tables_init(void)
{
	static int done;
	const char *tspecial = "!#$%&'*+-.^_`|~";
	int c;

	if (done)
		return;
	for (c = 0; c < 256; c++) {
		stop_lf[c] = c == '\n';
		/* CTLs but HT: CR, LF and NUL among them */
		stop_ctl[c] = (c < 0x20 && c != '\t') || c == 0x7f;
		stop_nottchar[c] = !((c >= '0' && c <= '9') ||
		    (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c != 0 && strchr(tspecial, c) != NULL));
		stop_target[c] = c <= 0x20 || c >= 0x7f;
	}
	done = 1;
}

struct http_conn *
http_conn_alloc(void)
{
	tables_init();
	return calloc(1, sizeof(struct http_conn));
}

void
http_conn_free(struct http_conn *hc)
{
	free(hc);
}

int
http_conn_request_line(struct http_conn *hc, const char *line)
{
	if (strlen(line) > HTTP_REQ_INSERT_MAX)
		return -1;
	hc->req_line = line;
	return 0;
}

size_t
http_step_output(const struct http_step *st, const uint8_t *in,
    uint8_t *out)
{
	size_t at = st->action == HTTP_HEAD ? st->insert_at : st->consume;
	size_t n, from, i;

	memcpy(out, in, at);
	n = at;
	if (st->insert != NULL) {
		memcpy(out + n, st->insert, st->insert_len);
		n += st->insert_len;
	}
	for (from = at, i = 0; i < st->ndrop; i++) {	/* sorted, >= at */
		if (st->drop[i].off < from ||
		    st->drop[i].off + st->drop[i].len > st->consume)
			continue;
		memcpy(out + n, in + from, st->drop[i].off - from);
		n += st->drop[i].off - from;
		from = st->drop[i].off + st->drop[i].len;
	}
	memcpy(out + n, in + from, st->consume - from);
	return n + st->consume - from;
}

int
http_opaque(const struct http_conn *hc)
{
	return hc->opaque;
}

const struct http_exchange *
http_pending(const struct http_conn *hc, unsigned i)
{
	if (i >= hc->qlen)
		return NULL;
	return &hc->q[(hc->qhead + i) % HTTP_PIPELINE_MAX];
}

const char *
http_strerror(enum http_status s)
{
	static const char *const msg[] = {
		[HTTP_OK] = "ok",
		[HTTP_EHEADLONG] = "head too long",
		[HTTP_EMALFORMED] = "malformed head",
		[HTTP_EVERSION] = "unsupported HTTP version",
		[HTTP_EMETHOD] = "method not allowed (CONNECT)",
		[HTTP_ELENGTH] = "bad Content-Length or Transfer-Encoding",
		[HTTP_ECHUNK] = "bad chunked framing",
		[HTTP_EUNSOLICITED] = "response without a matching request",
		[HTTP_ETRUNCATED] = "closed inside a message",
		[HTTP_ENOMEM] = "out of memory",
		[HTTP_ESWSCRIPT] = "service worker script refused",
		[HTTP_EGRANT] = "too many " GRANT_HEADER " lines",
	};

	if ((unsigned)s >= sizeof(msg) / sizeof(msg[0]) || msg[s] == NULL)
		return "unknown HTTP error";
	return msg[s];
}

/* Case-insensitive match of a length-delimited token. */
static int
tok_is(const uint8_t *p, size_t n, const char *word)
{
	return n == strlen(word) && strncasecmp((const char *)p, word, n) == 0;
}

static enum http_action
fail(struct http_step *st, enum http_status s, const char *side,
    const char *what)
{
	st->action = HTTP_FAIL;
	st->status = s;
	snprintf(st->detail, sizeof(st->detail), "%s: %s%s%.64s", side,
	    http_strerror(s), what != NULL ? ": " : "",
	    what != NULL ? what : "");
	return HTTP_FAIL;
}

/*
 * Where the head in d[0..len) ends (just past its empty line), or 0 if
 * it does not yet; *scanned remembers how far we looked so a head that
 * trickles in byte by byte is not searched from its start every time.
 */
static size_t
head_end(const uint8_t *d, size_t len, size_t *scanned)
{
	struct buf b;
	uint8_t c;
	size_t at;

	buf_init(&b, d, len);
	if (buf_skip(&b, *scanned) != BUF_OK)
		return 0;
	for (;;) {
		buf_skip(&b, buf_span(&b, stop_lf, buf_remaining(&b)));
		at = b.off;
		if (buf_skip(&b, 1) != BUF_OK || buf_peek_u8(&b, &c) != BUF_OK)
			break;
		if (c == '\n')
			return b.off + 1;
		if (c == '\r' && buf_skip(&b, 1) == BUF_OK &&
		    buf_peek_u8(&b, &c) == BUF_OK) {
			if (c == '\n')
				return b.off + 1;
			continue;
		}
		if (c == '\r')
			break;		/* CR at the end: wait for more */
	}
	*scanned = at;
	return 0;
}

/* The next line of a head into *line (without CR LF); -1 on a control
 * byte (bare CR, NUL, ...) inside it. */
static int
head_line(struct buf *h, struct buf *line)
{
	const uint8_t *p = buf_ptr(h);
	size_t n = buf_span(h, stop_lf, buf_remaining(h));
	uint8_t last = 0;

	if (buf_skip(h, n + 1) != BUF_OK)
		return -1;
	buf_init(line, p, n);
	if (n > 0 && buf_skip(line, n - 1) == BUF_OK &&
	    buf_get_u8(line, &last) == BUF_OK && last == '\r')
		n--;
	buf_init(line, p, n);
	return buf_span(line, stop_ctl, n) == n ? 0 : -1;
}

/* "HTTP/1.0" or "HTTP/1.1" from l. */
static enum http_status
parse_version(struct buf *l)
{
	uint8_t v[8];

	if (buf_get_bytes(l, v, sizeof(v)) != BUF_OK ||
	    memcmp(v, "HTTP/", 5) != 0)
		return HTTP_EMALFORMED;
	if (memcmp(v + 5, "1.1", 3) != 0 && memcmp(v + 5, "1.0", 3) != 0)
		return HTTP_EVERSION;
	return HTTP_OK;
}

static int
expect_u8(struct buf *b, uint8_t want)
{
	uint8_t c;

	return buf_get_u8(b, &c) == BUF_OK && c == want ? 0 : -1;
}

/* method SP request-target SP HTTP-version, into x. */
static enum http_status
parse_request_line(struct buf *l, struct http_exchange *x)
{
	enum http_status s;
	size_t n, keep;

	n = buf_span(l, stop_nottchar, HTTP_METHOD_MAX + 1);
	if (n == 0 || n > HTTP_METHOD_MAX)
		return HTTP_EMALFORMED;
	buf_get_bytes(l, x->method, n);
	x->method[n] = '\0';
	if (expect_u8(l, ' ') != 0)
		return HTTP_EMALFORMED;
	n = buf_span(l, stop_target, buf_remaining(l));
	if (n == 0)
		return HTTP_EMALFORMED;
	keep = n > HTTP_TARGET_MAX ? HTTP_TARGET_MAX : n;
	buf_get_bytes(l, x->target, keep);
	x->target[keep] = '\0';
	x->target_truncated = keep < n;
	buf_skip(l, n - keep);
	if (expect_u8(l, ' ') != 0)
		return HTTP_EMALFORMED;
	if ((s = parse_version(l)) != HTTP_OK)
		return s;
	return buf_eof(l) ? HTTP_OK : HTTP_EMALFORMED;
}

/* HTTP-version SP 3DIGIT [SP reason-phrase]. */
static enum http_status
parse_status_line(struct buf *l, struct head *h)
{
	enum http_status s;
	uint8_t d[3];
	int i;

	if ((s = parse_version(l)) != HTTP_OK)
		return s;
	if (expect_u8(l, ' ') != 0 || buf_get_bytes(l, d, 3) != BUF_OK)
		return HTTP_EMALFORMED;
	for (i = 0, h->status = 0; i < 3; i++) {
		if (d[i] < '0' || d[i] > '9')
			return HTTP_EMALFORMED;
		h->status = h->status * 10 + (d[i] - '0');
	}
	if (h->status < 100 || (!buf_eof(l) && expect_u8(l, ' ') != 0))
		return HTTP_EMALFORMED;
	return HTTP_OK;	/* the reason phrase was checked by head_line */
}

/* Skip spaces and tabs. */
static void
skip_ows(struct buf *b)
{
	uint8_t c;

	while (buf_peek_u8(b, &c) == BUF_OK && (c == ' ' || c == '\t'))
		buf_skip(b, 1);
}

/* The next token of a comma-separated header list: 1 with *tok and *n,
 * 0 at the end, -1 on anything that is not a token. */
static int
list_next(struct buf *v, const uint8_t **tok, size_t *n)
{
	uint8_t c;

	for (;;) {
		skip_ows(v);
		if (buf_peek_u8(v, &c) != BUF_OK)
			return 0;
		if (c != ',')
			break;
		buf_skip(v, 1);		/* empty list elements are allowed */
	}
	*tok = buf_ptr(v);
	if ((*n = buf_span(v, stop_nottchar, buf_remaining(v))) == 0)
		return -1;
	buf_skip(v, *n);
	skip_ows(v);
	if (buf_peek_u8(v, &c) == BUF_OK && c != ',')
		return -1;
	return 1;
}

/* Content-Length: 1*DIGIT; a repeat must say the same. */
static enum http_status
hdr_content_length(struct buf *v, struct head *h)
{
	uint64_t n = 0;
	uint8_t c;

	if (buf_eof(v))
		return HTTP_ELENGTH;
	while (buf_get_u8(v, &c) == BUF_OK) {
		if (c < '0' || c > '9' || n > CL_MAX / 10)
			return HTTP_ELENGTH;
		n = n * 10 + (uint64_t)(c - '0');
	}
	if (n > CL_MAX || (h->have_cl && h->cl != n))
		return HTTP_ELENGTH;
	h->have_cl = 1;
	h->cl = n;
	return HTTP_OK;
}

/* Transfer-Encoding: a list whose last coding must be the only chunked. */
static enum http_status
hdr_transfer_encoding(struct buf *v, struct head *h)
{
	const uint8_t *t;
	size_t n;
	int r;

	while ((r = list_next(v, &t, &n)) == 1) {
		if (h->te_chunked)
			return HTTP_ELENGTH;	/* something after chunked */
		h->te_chunked = tok_is(t, n, "chunked");
		h->te = 1;
	}
	return r == 0 && h->te ? HTTP_OK : HTTP_ELENGTH;
}

static enum http_status
hdr_connection(struct buf *v, struct head *h)
{
	const uint8_t *t;
	size_t n;
	int r;

	while ((r = list_next(v, &t, &n)) == 1)
		if (tok_is(t, n, "upgrade"))
			h->conn_upgrade = 1;
	return r == 0 ? HTTP_OK : HTTP_EMALFORMED;
}

/*
 * Essences Chromium never renders as a document, whatever the body: it
 * shows them as an image, a text view or a download, runs no script in
 * them and does not sniff them into HTML (it sniffs only a missing type,
 * unknown/unknown, application/unknown, the wildcard type, text/plain
 * for binary, XML for feeds and octet-stream for extensions).  Everything
 * else -- every text type, any XML or XSL type, image/svg+xml, multipart
 * types, application/pdf, an unknown type -- gets the CSP (docs/jail.md).
 */
static const char *const safe_types[] = {
	"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif",
	"image/bmp", "image/x-icon", "image/vnd.microsoft.icon",
	"font/woff", "font/woff2", "font/ttf", "font/otf", "font/collection",
	"application/font-woff",
	"application/json", "application/javascript",
	"application/x-javascript", "application/ecmascript",
	"application/wasm", "application/octet-stream",
	"application/vnd.apache.arrow.stream",
	"application/vnd.apache.arrow.file",
};

/* 1 if essence t[0..n) is one of safe_types[], or application/...+json
 * (Chromium shows JSON types as text). */
static int
type_is_safe(const uint8_t *t, size_t n)
{
	size_t i;

	for (i = 0; i < sizeof(safe_types) / sizeof(safe_types[0]); i++)
		if (tok_is(t, n, safe_types[i]))
			return 1;
	return n > 17 && strncasecmp((const char *)t, "application/", 12) ==
	    0 && strncasecmp((const char *)t + n - 5, "+json", 5) == 0;
}

int
http_type_is_document(const char *value, size_t len)
{
	const uint8_t *t;
	struct buf b;
	size_t tn, sn;

	if (value == NULL)
		return 1;	/* none: Chromium sniffs the body */
	tables_init();
	/* A list: Fetch takes the last type, other parsers the first. */
	if (memchr(value, ',', len) != NULL)
		return 1;
	buf_init(&b, value, len);
	skip_ows(&b);
	t = buf_ptr(&b);
	tn = buf_span(&b, stop_nottchar, buf_remaining(&b));
	if (tn == 0 || buf_skip(&b, tn) != BUF_OK || expect_u8(&b, '/') != 0)
		return 1;
	sn = buf_span(&b, stop_nottchar, buf_remaining(&b));
	if (sn == 0 || buf_skip(&b, sn) != BUF_OK)
		return 1;
	skip_ows(&b);
	/* Only parameters may follow: "text/html x" and "text/html(c)"
	 * are not MIME syntax, whatever a browser makes of them. */
	if (!buf_eof(&b) && expect_u8(&b, ';') != 0)
		return 1;
	return !type_is_safe(t, tn + 1 + sn);
}

/* name ":" OWS value OWS; only framing and Content-Type matter here. */
static enum http_status
parse_header(struct buf *l, struct head *h)
{
	const uint8_t *name = buf_ptr(l), *val;
	size_t n = buf_span(l, stop_nottchar, buf_remaining(l)), vn;
	struct buf v;
	uint8_t c;

	/* also refuses obs-fold and a space before the colon */
	if (n == 0 || buf_skip(l, n) != BUF_OK || expect_u8(l, ':') != 0)
		return HTTP_EMALFORMED;
	skip_ows(l);
	val = buf_ptr(l);
	vn = buf_remaining(l);
	for (;;) {	/* trailing OWS */
		buf_init(&v, val, vn);
		if (vn == 0 || buf_skip(&v, vn - 1) != BUF_OK ||
		    buf_get_u8(&v, &c) != BUF_OK || (c != ' ' && c != '\t'))
			break;
		vn--;
	}
	buf_init(&v, val, vn);
	if (tok_is(name, n, "content-length"))
		return hdr_content_length(&v, h);
	if (tok_is(name, n, "transfer-encoding"))
		return hdr_transfer_encoding(&v, h);
	if (tok_is(name, n, "connection"))
		return hdr_connection(&v, h);
	if (tok_is(name, n, "upgrade"))
		h->has_upgrade = 1;
	else if (tok_is(name, n, "service-worker"))
		h->sw_script = 1;
	else if (tok_is(name, n, GRANT_HEADER))
		h->grant = 1;
	else if (tok_is(name, n, "content-type")) {
		h->ntype++;
		h->type_doc |= http_type_is_document((const char *)val, vn);
	}
	return HTTP_OK;
}

/* The whole head d[0..len): its first line into x (requests) or h
 * (responses), then every header line. */
static enum http_status
parse_head(enum http_side side, const uint8_t *d, size_t len,
    struct head *h, struct http_exchange *x)
{
	enum http_status s;
	struct buf b, l;

	memset(h, 0, sizeof(*h));
	buf_init(&b, d, len);
	if (head_line(&b, &l) != 0)
		return HTTP_EMALFORMED;
	h->first_len = b.off;
	s = side == HTTP_REQ ? parse_request_line(&l, x) :
	    parse_status_line(&l, h);
	if (s != HTTP_OK)
		return s;
	for (;;) {
		size_t at = b.off;

		if (head_line(&b, &l) != 0)
			return HTTP_EMALFORMED;
		if (buf_eof(&l))
			break;		/* the empty line: the end */
		h->grant = 0;
		if ((s = parse_header(&l, h)) != HTTP_OK)
			return s;
		if (h->grant && side == HTTP_REQ) {	/* never passed on */
			if (h->ndrop == HTTP_DROP_MAX)
				return HTTP_EGRANT;
			h->drop_off[h->ndrop] = at;
			h->drop_len[h->ndrop++] = b.off - at;
		}
	}
	if (h->te && h->have_cl)
		return HTTP_ELENGTH;	/* both: a smuggling attempt */
	return HTTP_OK;
}

static struct http_exchange *
q_last(struct http_conn *hc)
{
	return &hc->q[(hc->qhead + hc->qlen - 1) % HTTP_PIPELINE_MAX];
}

/* Enter the body state for a message framed as `kind`. */
static void
side_body(struct side_state *ss, enum body_kind kind, uint64_t len)
{
	static const enum http_state st[] = { ST_HEAD, ST_BODY,
	    ST_CHUNK_SIZE, ST_UNTIL_CLOSE };

	memset(ss, 0, sizeof(*ss));
	ss->st = st[kind];
	ss->remain = len;
}

/* A message of `side` ended: the request side moves on to the next
 * request (or waits for an Upgrade's answer); the response side closes
 * the oldest exchange and hands it to the caller. */
static void
message_end(struct http_conn *hc, enum http_side side, long now,
    struct http_step *st)
{
	struct http_exchange *x;

	if (side == HTTP_REQ) {
		side_body(&hc->s[HTTP_REQ], BODY_NONE, 0);
		if (hc->req_live && q_last(hc)->upgrade)
			hc->s[HTTP_REQ].st = ST_UPGRADE_WAIT;
		hc->req_live = 0;
		return;
	}
	x = &hc->q[hc->qhead];
	x->t_end_ms = now;
	hc->last = *x;
	st->done = &hc->last;
	hc->qhead = (hc->qhead + 1) % HTTP_PIPELINE_MAX;
	if (--hc->qlen == 0)
		hc->req_live = 0;
	side_body(&hc->s[HTTP_RESP], BODY_NONE, 0);
	if (hc->s[HTTP_REQ].st == ST_UPGRADE_WAIT && hc->last.status != 101)
		hc->s[HTTP_REQ].st = ST_HEAD;	/* no switch: HTTP goes on */
}

/* A request head: queue its exchange, frame its body. */
static enum http_status
request_head(struct http_conn *hc, const struct head *h,
    struct http_exchange *x, size_t len, long now, struct http_step *st)
{
	if (strcmp(x->method, "CONNECT") == 0)
		return HTTP_EMETHOD;
	if (h->sw_script)
		return HTTP_ESWSCRIPT;
	if (h->te && !h->te_chunked)
		return HTTP_ELENGTH;	/* a request's length must be known */
	x->req_bytes = len;
	x->t_req_ms = now;
	x->t_first_ms = -1;
	x->is_head = strcmp(x->method, "HEAD") == 0;
	x->upgrade = h->conn_upgrade && h->has_upgrade;
	x->grant_dropped = h->ndrop;
	hc->q[(hc->qhead + hc->qlen) % HTTP_PIPELINE_MAX] = *x;
	hc->qlen++;
	hc->req_live = 1;
	if (h->te)
		side_body(&hc->s[HTTP_REQ], BODY_CHUNKED, 0);
	else if (h->have_cl && h->cl > 0)
		side_body(&hc->s[HTTP_REQ], BODY_LENGTH, h->cl);
	else
		message_end(hc, HTTP_REQ, now, st);
	return HTTP_OK;
}

/* A response head for the oldest open exchange x. */
static enum http_status
response_head(struct http_conn *hc, const struct head *h,
    struct http_exchange *x, size_t len, long now, struct http_step *st)
{
	x->resp_bytes += len;
	if (h->status == 101) {
		if (!x->upgrade)
			return HTTP_EUNSOLICITED;
		x->status = 101;
		message_end(hc, HTTP_RESP, now, st);
		hc->opaque = 1;
		hc->s[HTTP_REQ].st = hc->s[HTTP_RESP].st = ST_OPAQUE;
		return HTTP_OK;
	}
	if (h->status < 200) {		/* 100, 103: the final one follows */
		side_body(&hc->s[HTTP_RESP], BODY_NONE, 0);
		return HTTP_OK;
	}
	x->status = h->status;
	x->csp_added = h->csp;
	if (x->is_head || h->status == 204 || h->status == 304)
		message_end(hc, HTTP_RESP, now, st);
	else if (h->te)
		side_body(&hc->s[HTTP_RESP], h->te_chunked ? BODY_CHUNKED :
		    BODY_CLOSE, 0);
	else if (h->have_cl && h->cl == 0)
		message_end(hc, HTTP_RESP, now, st);
	else if (h->have_cl)
		side_body(&hc->s[HTTP_RESP], BODY_LENGTH, h->cl);
	else
		side_body(&hc->s[HTTP_RESP], BODY_CLOSE, 0);
	return HTTP_OK;
}

static const char *const side_name[] = { "request", "response" };

/* A request head loses every grant line it came with and gets the
 * connection's own after its request line. */
static void
request_edits(struct http_conn *hc, const struct head *h,
    struct http_step *st)
{
	unsigned i;

	for (i = 0; i < h->ndrop; i++) {
		st->drop[i].off = h->drop_off[i];
		st->drop[i].len = h->drop_len[i];
	}
	st->ndrop = h->ndrop;
	if (hc->req_line != NULL) {
		st->insert = hc->req_line;
		st->insert_len = strlen(hc->req_line);
		st->insert_at = h->first_len;
	}
}

/* ST_HEAD: wait for the whole head, parse it, pass it on (a final
 * response with Cache-Control: no-store, and the CSP line unless its type
 * is one Chromium never renders, after its status line). */
static enum http_action
head_step(struct http_conn *hc, enum http_side side, const uint8_t *in,
    size_t len, int eof, size_t room, long now, struct http_step *st)
{
	struct side_state *ss = &hc->s[side];
	struct http_exchange req, *x = &req;
	enum http_status s;
	struct head h;
	size_t end;

	if (len == 0 && !eof)
		return HTTP_WAIT;
	if (len == 0)
		return side == HTTP_RESP && hc->qlen > 0 ? fail(st,
		    HTTP_ETRUNCATED, side_name[side], "no response") :
		    (st->action = HTTP_EOF);
	if (side == HTTP_RESP) {
		if (hc->qlen == 0)
			return fail(st, HTTP_EUNSOLICITED, side_name[side],
			    NULL);
		x = &hc->q[hc->qhead];
		if (x->t_first_ms < 0)
			x->t_first_ms = now;
	} else if (hc->qlen == HTTP_PIPELINE_MAX)
		return HTTP_WAIT;	/* let the responses catch up */
	if ((end = head_end(in, len, &ss->scanned)) == 0) {
		if (len >= HTTP_HEAD_MAX)
			return fail(st, HTTP_EHEADLONG, side_name[side], NULL);
		return eof ? fail(st, HTTP_ETRUNCATED, side_name[side],
		    "inside the head") : HTTP_WAIT;
	}
	if (end > HTTP_HEAD_MAX)
		return fail(st, HTTP_EHEADLONG, side_name[side], NULL);
	if (side == HTTP_REQ)
		memset(&req, 0, sizeof(req));
	if ((s = parse_head(side, in, end, &h, &req)) != HTTP_OK)
		return fail(st, s, side_name[side], NULL);
	if (side == HTTP_RESP && h.status >= 200 && h.status != 101) {
		/* one Content-Type, and one Chromium never renders */
		h.csp = h.ntype != 1 || h.type_doc;
		st->insert = h.csp ? HTTP_DOC_LINES : HTTP_NOSTORE_LINE;
		st->insert_len = strlen(st->insert);
		st->insert_at = h.first_len;
	}
	if (side == HTTP_REQ)
		request_edits(hc, &h, st);
	if (room < end + st->insert_len) {
		st->insert = NULL;
		st->insert_len = 0;
		return HTTP_WAIT;	/* it goes out whole or not at all */
	}
	s = side == HTTP_REQ ? request_head(hc, &h, &req, end, now, st) :
	    response_head(hc, &h, x, end, now, st);
	if (s != HTTP_OK)
		return fail(st, s, side_name[side], s == HTTP_ESWSCRIPT ?
		    req.target : NULL);
	st->consume = end;
	return st->action = HTTP_HEAD;
}

static int
hexval(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* One byte of a chunk-size line: 1*HEXDIG [ext] (CR)LF.  -1: bad. */
static int
chunk_size_byte(struct side_state *ss, uint8_t c)
{
	if (++ss->linelen > HTTP_CHUNK_LINE_MAX)
		return -1;
	if (c == '\n') {
		if (ss->hex == 0)
			return -1;
		ss->st = ss->remain > 0 ? ST_CHUNK_DATA : ST_TRAILER;
		ss->hex = ss->cr = 0;
		ss->linelen = 0;
		return 0;
	}
	if (ss->cr)
		return -1;		/* bare CR */
	if (c == '\r')
		ss->cr = 1;
	else if (ss->hex >= 0 && hexval(c) >= 0) {
		if (ss->hex++ == CHUNK_HEX_MAX)
			return -1;
		ss->remain = ss->remain * 16 + (uint64_t)hexval(c);
	} else if (ss->hex == 0 || (ss->hex > 0 && c != ';' && c != ' ' &&
	    c != '\t') || stop_ctl[c])
		return -1;
	else
		ss->hex = -1;		/* in the extension */
	return 0;
}

/* One byte of the trailer section; *end at its empty line. */
static int
trailer_byte(struct side_state *ss, uint8_t c, int *end)
{
	if (++ss->trailer > HTTP_HEAD_MAX)
		return -1;
	if (c == '\n') {
		*end = ss->linelen == 0;
		ss->linelen = 0;
		ss->cr = 0;
		return 0;
	}
	if (ss->cr || (stop_ctl[c] && c != '\r'))
		return -1;
	if (c == '\r')
		ss->cr = 1;
	else
		ss->linelen++;
	return 0;
}

/* The CR LF after a chunk's data. */
static int
chunk_end_byte(struct side_state *ss, uint8_t c)
{
	if (c == '\r' && !ss->cr) {
		ss->cr = 1;
		return 0;
	}
	if (c != '\n')
		return -1;
	ss->cr = 0;
	ss->st = ST_CHUNK_SIZE;
	return 0;
}

/* Framing and body bytes from b, up to the end of the message (*end). */
static int
body_run(struct side_state *ss, struct buf *b, int *end)
{
	uint64_t k;
	uint8_t c;
	int r = 0;

	while (r == 0 && !*end && !buf_eof(b)) {
		switch (ss->st) {
		case ST_BODY:
		case ST_CHUNK_DATA:
			k = buf_remaining(b);
			if (k > ss->remain)
				k = ss->remain;
			buf_skip(b, (size_t)k);
			if ((ss->remain -= k) == 0 && ss->st == ST_BODY)
				*end = 1;
			else if (ss->remain == 0)
				ss->st = ST_CHUNK_END;
			break;
		case ST_CHUNK_SIZE:
			buf_get_u8(b, &c);
			r = chunk_size_byte(ss, c);
			break;
		case ST_CHUNK_END:
			buf_get_u8(b, &c);
			r = chunk_end_byte(ss, c);
			break;
		case ST_TRAILER:
			buf_get_u8(b, &c);
			r = trailer_byte(ss, c, end);
			break;
		default:	/* until close, opaque */
			buf_skip(b, buf_remaining(b));
			break;
		}
	}
	return r;
}

/* Bodies, chunk framing, opaque bytes: pass them, count them. */
static enum http_action
body_step(struct http_conn *hc, enum http_side side, const uint8_t *in,
    size_t len, int eof, size_t room, long now, struct http_step *st)
{
	struct side_state *ss = &hc->s[side];
	struct buf b;
	int end = 0;

	if (len == 0 && eof && ss->st == ST_UNTIL_CLOSE) {
		message_end(hc, side, now, st);	/* its FIN ends it */
		return st->action = HTTP_PASS;
	}
	if (len == 0 && eof)
		return ss->st == ST_OPAQUE ? (st->action = HTTP_EOF) :
		    fail(st, HTTP_ETRUNCATED, side_name[side],
		    "inside the body");
	if (len == 0 || room == 0)
		return HTTP_WAIT;
	buf_init(&b, in, len < room ? len : room);
	if (body_run(ss, &b, &end) != 0)
		return fail(st, HTTP_ECHUNK, side_name[side], NULL);
	if (side == HTTP_REQ && hc->req_live)
		q_last(hc)->req_bytes += b.off;
	else if (side == HTTP_RESP && !hc->opaque && hc->qlen > 0)
		hc->q[hc->qhead].resp_bytes += b.off;
	if (end)
		message_end(hc, side, now, st);
	st->consume = b.off;
	return st->action = HTTP_PASS;
}

enum http_action
http_step(struct http_conn *hc, enum http_side side, const uint8_t *in,
    size_t len, int eof, size_t room, long now_ms, struct http_step *st)
{
	memset(st, 0, sizeof(*st));
	st->action = HTTP_WAIT;
	switch (hc->s[side].st) {
	case ST_HEAD:
		return head_step(hc, side, in, len, eof, room, now_ms, st);
	case ST_UPGRADE_WAIT:
		return HTTP_WAIT;
	default:
		return body_step(hc, side, in, len, eof, room, now_ms, st);
	}
}
