/*
 * gateway/websocket.c — RFC 6455, server side, as much as the front door
 * needs (see websocket.h): the handshake answer and binary frames.  The
 * client's frames are parsed through common/buf.h and streamed (a data
 * frame's payload never has to fit in a buffer); control frames are
 * bounded by the RFC (125 bytes).  Text frames are refused: RFB is
 * binary and noVNC sends binary frames.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "gateway/websocket.h"

#define WS_GUID		"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#define WS_KEY_LEN	24	/* base64 of 16 bytes */

int
ws_header(const char *req, const char *name, char *out, size_t size)
{
	const char *line = strstr(req, "\r\n"), *v, *e;
	size_t nlen = strlen(name);

	while (line != NULL && line[2] != '\r') {
		line += 2;
		e = strstr(line, "\r\n");
		if (e == NULL)
			return 0;
		if ((size_t)(e - line) > nlen && line[nlen] == ':' &&
		    strncasecmp(line, name, nlen) == 0) {
			for (v = line + nlen + 1; *v == ' ' || *v == '\t'; v++)
				;
			while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
				e--;
			if ((size_t)(e - v) >= size)
				return 0;
			memcpy(out, v, (size_t)(e - v));
			out[e - v] = '\0';
			return 1;
		}
		line = e;
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
ws_response(const char *req, char *out, size_t size)
{
	char v[256], key[WS_KEY_LEN + 1], acc[128];
	const char *proto = "";

	if (!ws_header(req, "Upgrade", v, sizeof(v)) ||
	    !ws_list_has(v, "websocket"))
		return "not a websocket upgrade";
	if (!ws_header(req, "Sec-WebSocket-Version", v, sizeof(v)) ||
	    strcmp(v, "13") != 0)
		return "websocket version not 13";
	if (!ws_header(req, "Sec-WebSocket-Key", key, sizeof(key)) ||
	    strlen(key) != WS_KEY_LEN)
		return "websocket key missing or malformed";
	if (ws_header(req, "Sec-WebSocket-Protocol", v, sizeof(v))) {
		if (!ws_list_has(v, "binary"))
			return "websocket subprotocol not offered (binary only)";
		proto = "Sec-WebSocket-Protocol: binary\r\n";
	}
	if (ws_accept(key, acc, sizeof(acc)) != 0)
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
