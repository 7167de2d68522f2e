/*
 * gateway/websocket.c — RFC 6455, server side, as much as the front door
 * needs (see websocket.h): the handshake answer and binary frames.  The
 * client's frames are parsed through common/buf.h and streamed (a data
 * frame's payload never has to fit in a buffer); control frames are
 * bounded by the RFC (125 bytes).  Text frames are refused: RFB is
 * binary and noVNC sends binary frames.
 */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "gateway/websocket.h"

#define WS_GUID		"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#define WS_KEY_LEN	24	/* base64 of 16 bytes */
#define WS_SEC_ORIGIN	((size_t)-1)	/* ws_fields: into origin if no Origin */

/* ---- the upgrade request, through common/buf.h ------------------------ */

/* The headers kept, each once; the rest are checked for form, skipped. */
static const struct {
	const char	*name;
	size_t		 off;
} ws_fields[] = {
	{ "Host",			offsetof(struct ws_request, host) },
	{ "Origin",			offsetof(struct ws_request, origin) },
	{ "Sec-WebSocket-Origin",	WS_SEC_ORIGIN },
	{ "Upgrade",			offsetof(struct ws_request, upgrade) },
	{ "Sec-WebSocket-Version",	offsetof(struct ws_request, version) },
	{ "Sec-WebSocket-Key",		offsetof(struct ws_request, key) },
	{ "Sec-WebSocket-Protocol",	offsetof(struct ws_request, protocol) },
};

static uint8_t ws_stop_path[256], ws_stop_name[256], ws_stop_value[256],
    ws_stop_query[256], ws_stop_param[256];

/* Which bytes end a path (anything not visible ASCII), a header name
 * (anything not an RFC 9110 token character), a value (controls but
 * tab; obs-text is allowed in values), the path before its query and a
 * query parameter. */
static void
ws_stops(void)
{
	static const char tchar[] = "!#$%&'*+-.^_`|~";
	unsigned i;

	if (ws_stop_path[0])
		return;
	for (i = 0; i < 256; i++) {
		ws_stop_path[i] = i <= 0x20 || i >= 0x7f;
		ws_stop_name[i] = !((i >= '0' && i <= '9') ||
		    (i >= 'a' && i <= 'z') || (i >= 'A' && i <= 'Z') ||
		    (i != 0 && strchr(tchar, (int)i) != NULL));
		ws_stop_value[i] = (i < 0x20 && i != '\t') || i == 0x7f;
	}
	ws_stop_query['?'] = 1;
	ws_stop_param['&'] = 1;
}

/* The literal `lit` next: WS_REQ_OK (consumed), _PARTIAL or _BAD. */
static enum ws_req_status
ws_expect(struct buf *b, const char *lit)
{
	uint8_t c;

	for (; *lit != '\0'; lit++) {
		if (buf_get_u8(b, &c) != BUF_OK)
			return WS_REQ_PARTIAL;
		if (c != (uint8_t)*lit)
			return WS_REQ_BAD;
	}
	return WS_REQ_OK;
}

/* A run of bytes up to a stop byte, copied NUL-terminated into out
 * (size bytes); *n its length.  _PARTIAL if the input ends first. */
static enum ws_req_status
ws_run(struct buf *b, const uint8_t stop[256], char *out, size_t size,
    size_t *n)
{
	*n = buf_span(b, stop, buf_remaining(b));
	if (*n == buf_remaining(b))
		return WS_REQ_PARTIAL;
	if (out == NULL)
		return buf_skip(b, *n) == BUF_OK ? WS_REQ_OK : WS_REQ_BAD;
	if (*n >= size || buf_get_bytes(b, out, *n) != BUF_OK)
		return WS_REQ_BAD;
	out[*n] = '\0';
	return WS_REQ_OK;
}

static enum ws_req_status
ws_fail(struct ws_request *r, enum ws_req_status st, const char *why)
{
	if (st == WS_REQ_BAD)
		r->why = why;
	return st;
}

/* "GET " path " HTTP/1.1" CRLF */
static enum ws_req_status
ws_request_line(struct buf *b, struct ws_request *r)
{
	enum ws_req_status st;
	size_t n;

	if ((st = ws_expect(b, "GET ")) != WS_REQ_OK)
		return st == WS_REQ_BAD ? WS_REQ_NOTGET : st;
	st = ws_run(b, ws_stop_path, r->path, sizeof(r->path), &n);
	if (st == WS_REQ_OK && n == 0)
		st = WS_REQ_BAD;
	if (st != WS_REQ_OK)
		return ws_fail(r, st, "bad request line");
	return ws_fail(r, ws_expect(b, " HTTP/1.1\r\n"), "bad request line");
}

/* Where header `name` goes (NULL: not kept); -1 if seen before. */
static char *
ws_field(struct ws_request *r, const char *name, int *dup)
{
	size_t i;

	*dup = 0;
	for (i = 0; i < sizeof(ws_fields) / sizeof(ws_fields[0]); i++) {
		if (strcasecmp(name, ws_fields[i].name) != 0)
			continue;
		*dup = (r->seen & (1u << i)) != 0;
		r->seen |= 1u << i;
		if (ws_fields[i].off == WS_SEC_ORIGIN)	/* Origin wins */
			return r->seen & (1u << 1) ? NULL : r->origin;
		return (char *)r + ws_fields[i].off;
	}
	return NULL;
}

/* name ":" OWS value OWS CRLF */
static enum ws_req_status
ws_header_line(struct buf *b, struct ws_request *r)
{
	char name[64], value[WS_FIELD_MAX], *to;
	enum ws_req_status st;
	size_t n;
	int dup;

	n = buf_span(b, ws_stop_name, sizeof(name));
	if (n < sizeof(name))		/* a name we keep is never longer */
		st = ws_run(b, ws_stop_name, name, sizeof(name), &n);
	else {
		name[0] = '\0';
		st = ws_run(b, ws_stop_name, NULL, 0, &n);
	}
	if (st == WS_REQ_OK && n == 0)
		st = WS_REQ_BAD;
	if (st != WS_REQ_OK || (st = ws_expect(b, ":")) != WS_REQ_OK)
		return ws_fail(r, st, "malformed header line");
	to = ws_field(r, name, &dup);
	if (dup)
		return ws_fail(r, WS_REQ_BAD, "a websocket header is repeated");
	st = ws_run(b, ws_stop_value, to != NULL ? value : NULL,
	    sizeof(value), &n);
	if (st != WS_REQ_OK)
		return ws_fail(r, st, "header value too long or malformed");
	if ((st = ws_expect(b, "\r\n")) != WS_REQ_OK)
		return ws_fail(r, st, "malformed header line");
	if (to != NULL) {
		while (n > 0 && (value[n - 1] == ' ' || value[n - 1] == '\t'))
			value[--n] = '\0';
		snprintf(to, WS_FIELD_MAX, "%s", value + strspn(value, " \t"));
	}
	return WS_REQ_OK;
}

enum ws_req_status
ws_request_parse(const void *d, size_t len, struct ws_request *r)
{
	struct buf b;
	enum ws_req_status st;
	uint8_t c;

	ws_stops();
	memset(r, 0, sizeof(*r));
	buf_init(&b, d, len);
	if ((st = ws_request_line(&b, r)) != WS_REQ_OK)
		return st;
	for (;;) {
		if (buf_peek_u8(&b, &c) != BUF_OK)
			return WS_REQ_PARTIAL;
		if (c == '\r')
			break;
		if ((st = ws_header_line(&b, r)) != WS_REQ_OK)
			return st;
	}
	if ((st = ws_expect(&b, "\r\n")) != WS_REQ_OK)
		return ws_fail(r, st, "malformed header line");
	r->len = len - buf_remaining(&b);
	return WS_REQ_OK;
}

/* Constant-time comparison of a's alen bytes with the string b. */
static int
ws_secret_eq(const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b), i;
	unsigned char d = alen != blen;

	for (i = 0; i < alen && i < blen; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

/* The next run up to a stop byte (or the end), copied into out, and the
 * stop byte skipped: its length, or -1 if it does not fit. */
static long
ws_take(struct buf *b, const uint8_t stop[256], char *out, size_t size)
{
	size_t n = buf_span(b, stop, buf_remaining(b));

	if (n >= size || buf_get_bytes(b, out, n) != BUF_OK)
		return -1;
	out[n] = '\0';
	(void)buf_skip(b, 1);	/* the stop byte; BUF_ESHORT at the end */
	return (long)n;
}

int
ws_path_has_token(const char *path, const char *token)
{
	char part[WS_PATH_MAX];
	struct buf b;
	size_t len;
	long n;
	int query;

	if (path == NULL || token == NULL || *token == '\0' || *path != '/' ||
	    (len = strlen(path)) >= sizeof(part))
		return 0;
	ws_stops();
	buf_init(&b, path + 1, len - 1);
	query = buf_span(&b, ws_stop_query, len) < len - 1;
	if ((n = ws_take(&b, ws_stop_query, part, sizeof(part))) < 0)
		return 0;
	if (!query)
		return ws_secret_eq(part, (size_t)n, token);
	while (!buf_eof(&b)) {
		if ((n = ws_take(&b, ws_stop_param, part, sizeof(part))) < 0)
			return 0;
		if (n > 6 && strncmp(part, "token=", 6) == 0 &&
		    ws_secret_eq(part + 6, (size_t)n - 6, token))
			return 1;
	}
	return 0;
}

/* Does the comma-separated header value list `token` (any case)? */
static int
ws_list_has(const char *list, const char *token)
{
	size_t n = strlen(token), len;

	while (*list != '\0') {
		list += strspn(list, " \t,");
		len = strcspn(list, " \t,");
		if (len == n && strncasecmp(list, token, n) == 0)
			return 1;
		list += len;
	}
	return 0;
}

/* Sec-WebSocket-Accept: base64(SHA-1(key + GUID)). */
static int
ws_accept(const char *key, char *out, size_t size)
{
	char in[WS_KEY_LEN + sizeof(WS_GUID)];
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	if (size < 4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1)
		return -1;
	snprintf(in, sizeof(in), "%s%s", key, WS_GUID);
	if (EVP_Digest(in, strlen(in), md, &mdlen, EVP_sha1(), NULL) != 1)
		return -1;
	(void)EVP_EncodeBlock((unsigned char *)out, md, (int)mdlen);
	return 0;
}

const char *
ws_response(const struct ws_request *r, char *out, size_t size)
{
	char acc[128];
	const char *proto = "";

	if (!ws_list_has(r->upgrade, "websocket"))
		return "not a websocket upgrade";
	if (strcmp(r->version, "13") != 0)
		return "websocket version not 13";
	if (strlen(r->key) != WS_KEY_LEN)
		return "websocket key missing or malformed";
	if (r->protocol[0] != '\0') {
		if (!ws_list_has(r->protocol, "binary"))
			return "websocket subprotocol not offered (binary only)";
		proto = "Sec-WebSocket-Protocol: binary\r\n";
	}
	if (ws_accept(r->key, acc, sizeof(acc)) != 0)
		return "out of memory";
	if ((size_t)snprintf(out, size, "HTTP/1.1 101 Switching Protocols\r\n"
	    "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Accept: %s\r\n%s\r\n", acc, proto) >= size)
		return "websocket answer too long";
	return NULL;
}

/* Unmask what was just appended to out (n bytes). */
static void
ws_unmask(struct ws_decoder *d, struct wbuf *out, size_t n)
{
	uint8_t *p = out->d + out->len - n;
	size_t i;

	for (i = 0; i < n; i++)
		p[i] ^= d->mask[(d->mpos + i) & 3];
	d->mpos = (unsigned)((d->mpos + n) & 3);
}

/* A ping's payload goes back as a pong (unmasked, as a server sends). */
static int
ws_pong(const uint8_t *mask, struct buf *b, uint8_t len, struct wbuf *reply)
{
	uint8_t p[WS_CONTROL_MAX];
	size_t i;

	if (reply->max - reply->len < 2u + len)
		return 0;		/* no room yet: try again later */
	(void)buf_get_bytes(b, p, len);
	for (i = 0; i < len; i++)
		p[i] ^= mask[i & 3];
	(void)wbuf_put_u8(reply, 0x8a);
	(void)wbuf_put_u8(reply, len);
	(void)wbuf_put(reply, p, len);
	return 1;
}

static enum ws_status
ws_bad(struct ws_decoder *d, const char *why)
{
	d->why = why;
	return WS_EBAD;
}

/* One frame header (and a whole control frame) at in[0..len): 1 if
 * consumed (*used set), 0 if more bytes are needed, -1 bad/close. */
static int
ws_header_step(struct ws_decoder *d, const uint8_t *in, size_t len,
    struct wbuf *reply, size_t *used, enum ws_status *st)
{
	struct buf b;
	uint8_t b0, b1, mask[4];
	uint16_t l16;
	uint32_t hi, lo;
	uint64_t plen;

	buf_init(&b, in, len);
	if (buf_get_u8(&b, &b0) != BUF_OK || buf_get_u8(&b, &b1) != BUF_OK)
		return 0;
	if ((b0 & 0x70) != 0 || (b1 & 0x80) == 0) {
		*st = ws_bad(d, (b1 & 0x80) == 0 ? "websocket frame not masked" :
		    "websocket reserved bits set");
		return -1;
	}
	plen = b1 & 0x7f;
	if (plen == 126) {
		if (buf_get_u16(&b, &l16) != BUF_OK)
			return 0;
		plen = l16;
	} else if (plen == 127) {
		if (buf_get_u32(&b, &hi) != BUF_OK ||
		    buf_get_u32(&b, &lo) != BUF_OK)
			return 0;
		plen = (uint64_t)hi << 32 | lo;
	}
	if (buf_get_bytes(&b, mask, sizeof(mask)) != BUF_OK)
		return 0;
	switch (b0 & 0x0f) {
	case 0x0:		/* continuation */
	case 0x2:		/* binary */
		if (plen > WS_FRAME_MAX) {
			*st = ws_bad(d, "websocket frame too long");
			return -1;
		}
		d->left = plen;
		memcpy(d->mask, mask, sizeof(mask));
		d->mpos = 0;
		*used = b.off;
		return 1;
	case 0x8:		/* close */
		*st = WS_CLOSE;
		return -1;
	case 0x9:		/* ping */
	case 0xa:		/* pong */
		if (plen > WS_CONTROL_MAX || (b0 & 0x80) == 0) {
			*st = ws_bad(d, "websocket control frame malformed");
			return -1;
		}
		if (buf_remaining(&b) < plen)
			return 0;
		*used = b.off + (size_t)plen;
		if ((b0 & 0x0f) == 0x9)
			return ws_pong(mask, &b, (uint8_t)plen, reply);
		return 1;
	default:
		*st = ws_bad(d, (b0 & 0x0f) == 0x1 ? "websocket text frame "
		    "(binary only)" : "websocket opcode unknown");
		return -1;
	}
}

enum ws_status
ws_decode(struct ws_decoder *d, const uint8_t *in, size_t len,
    struct wbuf *out, struct wbuf *reply, size_t *used)
{
	enum ws_status st = WS_OK;
	size_t off = 0, n, step;
	int r;

	while (off < len) {
		if (d->left == 0) {
			step = 0;
			r = ws_header_step(d, in + off, len - off, reply, &step,
			    &st);
			if (r < 0) {
				*used = off;
				return st;
			}
			if (r == 0)
				break;
			off += step;
			continue;
		}
		n = len - off;
		if (n > d->left)
			n = (size_t)d->left;
		if (n > out->max - out->len)
			n = out->max - out->len;
		if (n == 0 || wbuf_put(out, in + off, n) != BUF_OK)
			break;
		ws_unmask(d, out, n);
		d->left -= n;
		off += n;
	}
	*used = off;
	return WS_OK;
}

size_t
ws_encode(const uint8_t *data, size_t n, struct wbuf *to)
{
	size_t room = to->max - to->len;

	if (n > 65535)
		n = 65535;
	if (room < 5)
		return 0;
	if (n > room - 4)
		n = room - 4;
	if (n == 0)
		return 0;
	(void)wbuf_put_u8(to, 0x82);	/* FIN, binary */
	if (n < 126)
		(void)wbuf_put_u8(to, (uint8_t)n);
	else {
		(void)wbuf_put_u8(to, 126);
		(void)wbuf_put_u8(to, (uint8_t)(n >> 8));
		(void)wbuf_put_u8(to, (uint8_t)n);
	}
	(void)wbuf_put(to, data, n);
	return n;
}

/* Origin allowed: listed exactly, or (no list) naming the host. */
static int
ws_origin_ok(const char *const *origins, const char *origin,
    const char *host)
{
	const char *const *o;
	const char *auth;

	if (origins != NULL) {
		for (o = origins; *o != NULL; o++)
			if (strcasecmp(*o, origin) == 0)
				return 1;
		return 0;
	}
	if ((auth = strstr(origin, "://")) == NULL)
		return 0;
	auth += 3;
	return *host != '\0' && strcasecmp(auth, host) == 0;
}

const char *
ws_request_check(const struct ws_request *r, const char *token,
    const char *const *origins)
{
	if (token == NULL)
		return "websockets disabled";
	if (!ws_path_has_token(r->path, token))
		return "websocket token missing or wrong";
	if (r->origin[0] == '\0')
		return "websocket origin missing";
	if (!ws_origin_ok(origins, r->origin, r->host))
		return "websocket origin not allowed";
	return NULL;
}
