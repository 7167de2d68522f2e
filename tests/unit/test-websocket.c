/*
 * tests/unit/test-websocket.c — the front door's websocket layer
 * (gateway/websocket.c): the upgrade request's parser (whole, partial,
 * malformed), the handshake answer against RFC 6455's own example, refusals of requests it must not serve, masked client frames
 * decoded whether they arrive whole or a byte at a time, pings answered,
 * bad frames refused, and our frames' three length forms.
 */
#include "config.h"

#include <string.h>

#include "gateway/websocket.h"
#include "tests/tap.h"

#define REQ(extra) "GET /websockify?token=t HTTP/1.1\r\nHost: h\r\n" \
	"Upgrade: websocket\r\nConnection: Upgrade\r\n" \
	"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" \
	"Sec-WebSocket-Version: 13\r\n" extra "\r\n"

/* The answer to a request given as text (NULL: it did not parse). */
static const char *
answer(const char *req, char *out, size_t size)
{
	struct ws_request r;

	if (ws_request_parse(req, strlen(req), &r) != WS_REQ_OK)
		return "did not parse";
	return ws_response(&r, out, size);
}

static void
test_response(void)
{
	char out[WS_RESPONSE_MAX];
	const char *why;

	why = answer(REQ(""), out, sizeof(out));
	tap_ok(why == NULL, "a websocket request is answered (%s)",
	    why ? why : "ok");
	tap_ok(strstr(out, "HTTP/1.1 101 ") == out &&
	    strstr(out, "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n")
	    != NULL, "... with RFC 6455's example accept value");
	tap_ok(strstr(out, "Sec-WebSocket-Protocol") == NULL,
	    "... and no subprotocol when none was asked for");
	why = answer(REQ("Sec-WebSocket-Protocol: base64, binary\r\n"),
	    out, sizeof(out));
	tap_ok(why == NULL && strstr(out, "Sec-WebSocket-Protocol: binary\r\n"),
	    "binary is chosen from the offered subprotocols");
	tap_ok(answer(REQ("Sec-WebSocket-Protocol: base64\r\n"), out,
	    sizeof(out)) != NULL, "base64 alone is refused");
	tap_ok(answer("GET / HTTP/1.1\r\nHost: h\r\n\r\n", out,
	    sizeof(out)) != NULL, "a request without Upgrade is refused");
	tap_ok(answer("GET / HTTP/1.1\r\nUpgrade: websocket\r\n"
	    "Sec-WebSocket-Version: 8\r\nSec-WebSocket-Key: "
	    "dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", out, sizeof(out)) != NULL,
	    "version 8 is refused");
	tap_ok(answer("GET / HTTP/1.1\r\nUpgrade: websocket\r\n"
	    "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short\r\n\r\n",
	    out, sizeof(out)) != NULL, "a malformed key is refused");
}

/* ws_request_parse on text: its status, r filled. */
static enum ws_req_status
parse(const char *req, struct ws_request *r)
{
	return ws_request_parse(req, strlen(req), r);
}

static void
test_request(void)
{
	static const char *const bad[] = {
		"GET  HTTP/1.1\r\n\r\n",		/* no path */
		"GET /a b HTTP/1.1\r\n\r\n",		/* space in the path */
		"GET / HTTP/1.0\r\n\r\n",
		"GET / HTTP/1.1\nHost: h\n\n",		/* bare LF */
		"GET / HTTP/1.1\r\nHost h\r\n\r\n",	/* no colon */
		"GET / HTTP/1.1\r\n: v\r\n\r\n",		/* no name */
		"GET / HTTP/1.1\r\nHo st: h\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n",	/* CR in a value */
		"GET / HTTP/1.1\r\nOrigin: a\r\norigin: b\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h\r\n\rX",
	};
	struct ws_request r;
	const char *req = REQ("Origin: https://h:8443 \r\n"), *whole;
	size_t i, n;
	int partial = 1;

	tap_ok(parse(req, &r) == WS_REQ_OK && r.len == strlen(req),
	    "a whole request parses, to its blank line");
	tap_ok(strcmp(r.path, "/websockify?token=t") == 0 &&
	    strcmp(r.host, "h") == 0 &&
	    strcmp(r.origin, "https://h:8443") == 0 &&
	    strcmp(r.key, "dGhlIHNhbXBsZSBub25jZQ==") == 0 &&
	    strcmp(r.version, "13") == 0, "its path and headers, trimmed");
	whole = "GET / HTTP/1.1\r\nHOST:\th\r\nX-Long-Header-Name-That-"
	    "Is-Longer-Than-Any-Header-We-Keep-By-Far-Really: 1\r\n\r\nrest";
	tap_ok(parse(whole, &r) == WS_REQ_OK && strcmp(r.host, "h") == 0 &&
	    r.len == strlen(whole) - 4,
	    "names match in any case; long unknown names are skipped; "
	    "bytes after the blank line are not the request's");
	for (n = 0; n < strlen(req); n++)
		if (ws_request_parse(req, n, &r) != WS_REQ_PARTIAL)
			partial = 0;
	tap_ok(partial, "every proper prefix is partial");
	tap_ok(parse("PUT / HTTP/1.1\r\n\r\n", &r) == WS_REQ_NOTGET &&
	    parse("\x16\x03\x01", &r) == WS_REQ_NOTGET,
	    "other methods and TLS are not GET");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		tap_ok(parse(bad[i], &r) == WS_REQ_BAD && r.why != NULL,
		    "refused (%s): %.*s", r.why ? r.why : "-",
		    (int)strcspn(bad[i], "\r\n"), bad[i]);
	tap_ok(parse("GET / HTTP/1.1\r\nSec-WebSocket-Origin: a\r\n"
	    "Origin: b\r\n\r\n", &r) == WS_REQ_OK &&
	    strcmp(r.origin, "b") == 0, "Origin wins over "
	    "Sec-WebSocket-Origin");
	tap_ok(ws_request_parse("GET / HTTP/1.1\r\nHost: a\0b\r\n\r\n",
	    29, &r) == WS_REQ_BAD, "a NUL in a value is refused");
}

static void
test_token(void)
{
	static const char *const yes[] = { "/tok", "/websockify?token=tok",
	    "/?a=b&token=tok", "/x?token=tok&", "/?token=&token=tok" };
	static const char *const no[] = { "/", "/to", "/tokk", "tok",
	    "/?token=to", "/?token=tokk", "/?xtoken=tok", "/tok?token=x",
	    "/?", "/?token=", "/x/tok" };
	size_t i;
	int ok = 1;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!ws_path_has_token(yes[i], "tok"))
			ok = 0, tap_diag("not found in %s", yes[i]);
	tap_ok(ok, "the token as the path or a query parameter is found");
	for (ok = 1, i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (ws_path_has_token(no[i], "tok"))
			ok = 0, tap_diag("found in %s", no[i]);
	tap_ok(ok, "a prefix, a longer token, another parameter or a "
	    "relative path is not the token");
	tap_ok(!ws_path_has_token("/tok", "") &&
	    !ws_path_has_token(NULL, "tok"), "no token, no path: no");
}

/* A masked client frame: op, payload, mask. */
static size_t
frame(uint8_t *f, uint8_t op, const uint8_t *p, size_t n, int mask)
{
	static const uint8_t m[4] = { 0x37, 0xfa, 0x21, 0x3d };
	size_t h = 2, i;

	f[0] = 0x80 | op;
	if (n < 126)
		f[1] = (uint8_t)n;
	else {
		f[1] = 126;
		f[2] = (uint8_t)(n >> 8);
		f[3] = (uint8_t)n;
		h = 4;
	}
	if (mask) {
		f[1] |= 0x80;
		memcpy(f + h, m, 4);
		h += 4;
	}
	for (i = 0; i < n; i++)
		f[h + i] = p[i] ^ (mask ? m[i & 3] : 0);
	return h + n;
}

/* Feed in[] to a fresh decoder `step` bytes at a time (as a socket
 * would), keeping what it did not consume; the decoded bytes in out. */
static enum ws_status
feed(const uint8_t *in, size_t len, size_t step, struct wbuf *out,
    struct wbuf *reply)
{
	struct ws_decoder d;
	uint8_t pend[4096];
	size_t have = 0, off = 0, used, n;
	enum ws_status st = WS_OK;

	memset(&d, 0, sizeof(d));
	while (off < len && st == WS_OK) {
		n = len - off < step ? len - off : step;
		memcpy(pend + have, in + off, n);
		have += n;
		off += n;
		st = ws_decode(&d, pend, have, out, reply, &used);
		memmove(pend, pend + used, have - used);
		have -= used;
	}
	return st;
}

static void
test_decode(void)
{
	uint8_t p[300], in[1024], pong[8];
	struct wbuf out, reply;
	size_t n, i, step;
	int good = 1;

	for (i = 0; i < sizeof(p); i++)
		p[i] = (uint8_t)(i * 7);
	n = frame(in, 0x2, p, 5, 1);
	n += frame(in + n, 0x9, (const uint8_t *)"hi", 2, 1);	/* ping */
	n += frame(in + n, 0x2, p + 5, 200, 1);			/* 16-bit */
	n += frame(in + n, 0x0, p + 205, 95, 1);		/* continuation */
	for (step = 1; step <= n; step += step < 8 ? 1 : 97) {
		wbuf_init(&out, 4096);
		wbuf_init(&reply, 64);
		good &= feed(in, n, step, &out, &reply) == WS_OK &&
		    out.len == 300 && memcmp(out.d, p, 300) == 0 &&
		    reply.len == 4 && memcmp(reply.d, "\x8a\x02hi", 4) == 0;
		wbuf_free(&out);
		wbuf_free(&reply);
	}
	tap_ok(good, "binary, ping, 16-bit and continuation frames decode "
	    "alike in pieces of 1..%zu bytes; the ping is answered", n);

	wbuf_init(&out, 100);
	wbuf_init(&reply, 64);
	n = frame(in, 0x2, p, 300, 1);
	tap_ok(feed(in, n, n, &out, &reply) == WS_OK && out.len == 100 &&
	    memcmp(out.d, p, 100) == 0, "a payload longer than the room "
	    "stops at the room (the rest waits)");
	wbuf_free(&out);

	wbuf_init(&out, 4096);
	n = frame(in, 0x2, p, 5, 0);
	tap_ok(feed(in, n, n, &out, &reply) == WS_EBAD, "an unmasked frame "
	    "is refused");
	n = frame(in, 0x1, p, 5, 1);
	tap_ok(feed(in, n, n, &out, &reply) == WS_EBAD, "a text frame is "
	    "refused");
	n = frame(in, 0x2, p, 5, 1);
	in[0] |= 0x40;
	tap_ok(feed(in, n, n, &out, &reply) == WS_EBAD, "reserved bits are "
	    "refused");
	n = frame(in, 0x9, p, 126, 1);
	tap_ok(feed(in, n, n, &out, &reply) == WS_EBAD, "a 126-byte ping is "
	    "refused");
	n = frame(in, 0x8, pong, 0, 1);
	tap_ok(feed(in, n, n, &out, &reply) == WS_CLOSE, "a close frame "
	    "says close");
	memcpy(in, "\x82\xff\x7f\xff\xff\xff\xff\xff\xff\xff" "abcd", 14);
	tap_ok(feed(in, 14, 14, &out, &reply) == WS_EBAD, "a 2^63-byte "
	    "frame is refused");
	wbuf_free(&out);
	wbuf_free(&reply);
}

static void
test_encode(void)
{
	static uint8_t p[70000];
	struct wbuf to;
	size_t n;

	wbuf_init(&to, 200000);
	n = ws_encode(p, 125, &to);
	tap_ok(n == 125 && to.len == 127 && to.d[0] == 0x82 && to.d[1] == 125,
	    "125 bytes: a 2-byte header");
	wbuf_reset(&to);
	n = ws_encode(p, 126, &to);
	tap_ok(n == 126 && to.len == 130 && to.d[1] == 126 && to.d[2] == 0 &&
	    to.d[3] == 126, "126 bytes: a 16-bit length");
	wbuf_reset(&to);
	n = ws_encode(p, sizeof(p), &to);
	tap_ok(n == 65535 && to.len == 65539, "at most 65535 bytes a frame");
	wbuf_free(&to);
	wbuf_init(&to, 10);
	n = ws_encode(p, 100, &to);
	tap_ok(n == 6 && to.len == 8, "a frame fits the room left");
	tap_ok(ws_encode(p, 100, &to) == 0, "no room, no frame");
	wbuf_free(&to);
}

/* The token and Origin rule both doors apply (ws_request_check). */
static void
test_check(void)
{
	static const char *const origins[] = { "http://novnc.example", NULL };
	struct ws_request r;
	const char *why;

	tap_ok(ws_request_parse(REQ("Origin: http://h\r\n"),
	    strlen(REQ("Origin: http://h\r\n")), &r) == WS_REQ_OK,
	    "check: a request from the same host parses");
	tap_ok(ws_request_check(&r, "t", NULL) == NULL,
	    "check: right token, Origin naming the host, no list: accepted");
	why = ws_request_check(&r, "u", NULL);
	tap_ok(why != NULL && strstr(why, "token") != NULL,
	    "check: another token is refused (%s)", why ? why : "accepted");
	why = ws_request_check(&r, NULL, NULL);
	tap_ok(why != NULL && strstr(why, "disabled") != NULL,
	    "check: no token at all: websockets off (%s)", why ? why : "-");
	why = ws_request_check(&r, "t", origins);
	tap_ok(why != NULL && strstr(why, "origin not allowed") != NULL,
	    "check: with a list, the host's own Origin is not enough (%s)",
	    why ? why : "accepted");
	tap_ok(ws_request_parse(REQ("Origin: HTTP://NOVNC.example\r\n"),
	    strlen(REQ("Origin: HTTP://NOVNC.example\r\n")), &r) == WS_REQ_OK &&
	    ws_request_check(&r, "t", origins) == NULL,
	    "check: a listed Origin is accepted (case-insensitive)");
	tap_ok(ws_request_parse(REQ(""), strlen(REQ("")), &r) == WS_REQ_OK &&
	    (why = ws_request_check(&r, "t", NULL)) != NULL &&
	    strstr(why, "origin missing") != NULL,
	    "check: no Origin is refused (%s)", why ? why : "accepted");
}

int
main(void)
{
	test_response();
	test_check();
	test_request();
	test_token();
	test_decode();
	test_encode();
	return tap_done();
}
