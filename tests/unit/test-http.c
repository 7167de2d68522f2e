/*
 * tests/unit/test-http.c — the forwarder's HTTP/1.1 framing (gateway/http.c):
 * output identical to the input but for the CSP line, at every split of
 * the input; chunked, pipelining, HEAD/1xx/204/304, Upgrade; hostile heads
 * from both sides fail closed; random mutations never crash.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/http.h"
#include "tests/tap.h"

#define OUT_MAX	(1 << 17)

/* One side: its input (fed up to `avail`), what came out, what failed. */
struct side {
	const uint8_t	*d;
	size_t		 len, avail, off;
	uint8_t		 out[OUT_MAX];
	size_t		 outlen;
	int		 failed, eof_passed;
	enum http_status status;
	char		 detail[128];
};

struct run {
	struct http_conn *hc;
	struct side	 s[2];
	struct http_exchange done[32];
	int		 ndone;
	size_t		 room;
};

static struct run R;

static void
run_init(struct run *r, const char *req, size_t reqlen, const char *resp,
    size_t resplen)
{
	http_conn_free(r->hc);
	memset(r, 0, sizeof(*r));
	r->hc = http_conn_alloc();
	r->s[HTTP_REQ].d = (const uint8_t *)req;
	r->s[HTTP_REQ].len = reqlen;
	r->s[HTTP_RESP].d = (const uint8_t *)resp;
	r->s[HTTP_RESP].len = resplen;
	r->room = OUT_MAX;
}

/* Step one side until it waits; copy what it passes. */
static void
pump(struct run *r, enum http_side side)
{
	struct side *p = &r->s[side];
	struct http_step st;
	size_t room;
	int eof;

	while (!p->failed) {
		eof = p->avail == p->len;
		/* r->room caps the side's total output */
		room = r->room > p->outlen ? r->room - p->outlen : 0;
		if (room > OUT_MAX - p->outlen)
			room = OUT_MAX - p->outlen;
		http_step(r->hc, side, p->d + p->off, p->avail - p->off, eof,
		    room, 1000, &st);
		if (st.done != NULL && r->ndone < 32)
			r->done[r->ndone++] = *st.done;
		if (st.done != NULL && side == HTTP_RESP)
			pump(r, HTTP_REQ);	/* as the forwarder does */
		switch (st.action) {
		case HTTP_HEAD:
		case HTTP_PASS:
			p->outlen += http_step_output(&st, p->d + p->off,
			    p->out + p->outlen);
			p->off += st.consume;
			break;
		case HTTP_FAIL:
			p->failed = 1;
			p->status = st.status;
			memcpy(p->detail, st.detail, sizeof(p->detail));
			return;
		case HTTP_EOF:
			p->eof_passed = 1;
			return;
		case HTTP_WAIT:
			return;
		}
	}
}

/* Feed the request up to k1, the response up to k2, then everything. */
static void
run_split(struct run *r, size_t k1, size_t k2)
{
	r->s[HTTP_REQ].avail = k1;
	pump(r, HTTP_REQ);
	r->s[HTTP_REQ].avail = r->s[HTTP_REQ].len;
	pump(r, HTTP_REQ);
	r->s[HTTP_RESP].avail = k2;
	pump(r, HTTP_RESP);
	pump(r, HTTP_REQ);
	r->s[HTTP_RESP].avail = r->s[HTTP_RESP].len;
	pump(r, HTTP_RESP);
	pump(r, HTTP_REQ);
	pump(r, HTTP_RESP);
}

static void
run_all(struct run *r, const char *req, const char *resp)
{
	run_init(r, req, strlen(req), resp, strlen(resp));
	run_split(r, strlen(req), strlen(resp));
}

/* An insert after offset `at` of a response (just past a final status
 * line): Cache-Control: no-store, and the CSP line if csp.  Arrays of
 * them are ascending and end with at = -1. */
struct ins {
	int	 at;
	int	 csp;
};

/* resp with its inserts: the output the browser must see. */
static size_t
with_csp(char *dst, const char *resp, const struct ins *in)
{
	size_t n = 0, from = 0, len = strlen(resp), il;
	const char *line;

	for (; in->at >= 0; in++) {
		memcpy(dst + n, resp + from, (size_t)in->at - from);
		n += (size_t)in->at - from;
		line = in->csp ? HTTP_DOC_LINES : HTTP_NOSTORE_LINE;
		il = strlen(line);
		memcpy(dst + n, line, il);
		n += il;
		from = (size_t)in->at;
	}
	memcpy(dst + n, resp + from, len - from);
	return n + len - from;
}

static int
side_is(const struct side *p, const void *want, size_t n)
{
	return !p->failed && p->outlen == n && memcmp(p->out, want, n) == 0;
}

static const char REQ1[] = "GET /x/?a=1 HTTP/1.1\r\nHost: h\r\n\r\n";
static const char RESP1[] = "HTTP/1.1 200 OK\r\n"
    "Content-Type: text/html; charset=utf-8\r\nContent-Length: 5\r\n\r\nhello";

static void
test_simple(void)
{
	static char want[512];
	static const struct ins at[] = { { 17, 1 }, { -1, 0 } };
	size_t n = with_csp(want, RESP1, at);

	run_all(&R, REQ1, RESP1);
	tap_ok(side_is(&R.s[HTTP_REQ], REQ1, strlen(REQ1)),
	    "a request passes unchanged");
	tap_ok(side_is(&R.s[HTTP_RESP], want, n), "an HTML response gets "
	    "the CSP line right after its status line, nothing else changes");
	tap_ok(R.ndone == 1 && strcmp(R.done[0].method, "GET") == 0 &&
	    strcmp(R.done[0].target, "/x/?a=1") == 0 &&
	    R.done[0].status == 200 && R.done[0].csp_added &&
	    R.done[0].req_bytes == strlen(REQ1) &&
	    R.done[0].resp_bytes == strlen(RESP1),
	    "one exchange: GET /x/?a=1 200, csp_added, bytes both ways");
	tap_ok(R.s[HTTP_REQ].eof_passed && R.s[HTTP_RESP].eof_passed,
	    "FIN at a message boundary is passed on, both ways");
}

/* Every split of request and response gives the same bytes and log. */
static void
test_splits(const char *name, const char *req, const char *resp,
    const struct ins *at, int nexch)
{
	static char want[8192];
	size_t n = with_csp(want, resp, at), k, bad = 0, total = 0;
	size_t rl = strlen(req), sl = strlen(resp);

	for (k = 0; k <= rl; k++, total++) {
		run_init(&R, req, rl, resp, sl);
		run_split(&R, k, 0);
		if (!side_is(&R.s[HTTP_REQ], req, rl) ||
		    !side_is(&R.s[HTTP_RESP], want, n) || R.ndone != nexch)
			bad++;
	}
	for (k = 0; k <= sl; k++, total++) {
		run_init(&R, req, rl, resp, sl);
		run_split(&R, rl, k);
		if (!side_is(&R.s[HTTP_REQ], req, rl) ||
		    !side_is(&R.s[HTTP_RESP], want, n) || R.ndone != nexch)
			bad++;
	}
	tap_ok(bad == 0, "%s: identical at all %zu splits (%zu differ)", name,
	    total, bad);
}

/* Offset just past the line of resp that starts with `start`. */
static int
after_line(const char *resp, const char *start)
{
	const char *p = strstr(resp, start);

	return (int)(strchr(p, '\n') + 1 - resp);
}

static void
test_framing(void)
{
	static const char chunked[] = "HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: chunked\r\nContent-Type: text/html\r\n\r\n"
	    "5;ext=1\r\nhello\r\na\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n";
	static const char pipe_req[] = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n"
	    "HEAD /b HTTP/1.1\r\nHost: h\r\n\r\n"
	    "POST /c HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"
	    "PUT /d HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "3\r\nxyz\r\n0\r\n\r\n"
	    "GET /e HTTP/1.0\r\n\r\n";
	static const char pipe_resp[] = "HTTP/1.1 200 OK\r\n"
	    "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
	    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
	    "Content-Length: 100\r\n\r\n"
	    "HTTP/1.1 100 Continue\r\n\r\n"
	    "HTTP/1.1 204 No Content\r\n\r\n"
	    "HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n"
	    "HTTP/1.0 200 OK\r\nContent-Type: image/png\r\n\r\nPNG...";
	static const struct ins atc[] = { { 17, 1 }, { -1, 0 } };
	struct ins at_p[7];

	/* every final response: the HEAD's html one, 204 and 304 (no
	   Content-Type) with the CSP; json and png without */
	at_p[0] = (struct ins){ 17, 0 };
	at_p[1] = (struct ins){ after_line(pipe_resp, "HTTP/1.1 200 OK\r\n"
	    "Content-Type: text/html"), 1 };
	at_p[2] = (struct ins){ after_line(pipe_resp, "HTTP/1.1 204"), 1 };
	at_p[3] = (struct ins){ after_line(pipe_resp, "HTTP/1.1 304"), 1 };
	at_p[4] = (struct ins){ after_line(pipe_resp, "HTTP/1.0 200"), 0 };
	at_p[5] = (struct ins){ -1, 0 };
	test_splits("simple", REQ1, RESP1, atc, 1);
	test_splits("chunked with extension and trailer", REQ1, chunked, atc,
	    1);
	test_splits("5 pipelined requests (GET, HEAD, POST, chunked PUT, "
	    "HTTP/1.0), 100/204/304, until-close", pipe_req, pipe_resp, at_p,
	    5);
	run_all(&R, pipe_req, pipe_resp);
	tap_ok(R.ndone == 5 && strcmp(R.done[1].method, "HEAD") == 0 &&
	    R.done[1].csp_added && R.done[2].status == 204 &&
	    R.done[2].req_bytes == strlen("POST /c HTTP/1.1\r\n"
	    "Content-Length: 3\r\n\r\nabc") && R.done[3].status == 304 &&
	    R.done[4].status == 200 && !R.done[4].csp_added &&
	    !R.done[0].csp_added, "the five exchanges: HEAD has no body, "
	    "100 is interim, 204 and 304 have none, the last ends at FIN");
	tap_ok(R.done[4].resp_bytes == strlen("HTTP/1.0 200 OK\r\n"
	    "Content-Type: image/png\r\n\r\nPNG..."), "until-close body "
	    "counted (%llu)", (unsigned long long)R.done[4].resp_bytes);
}

/* A tight output: the body goes in pieces, the head whole or not at all. */
static void
test_room(void)
{
	static char want[512];
	static const struct ins at[] = { { 17, 1 }, { -1, 0 } };
	size_t n = with_csp(want, RESP1, at);

	run_init(&R, REQ1, strlen(REQ1), RESP1, strlen(RESP1));
	R.room = strlen(REQ1);
	run_split(&R, strlen(REQ1), strlen(RESP1));
	tap_ok(R.s[HTTP_REQ].outlen == strlen(REQ1) &&
	    R.s[HTTP_RESP].outlen == 0 && !R.s[HTTP_RESP].failed,
	    "a head bigger than the output room waits (no partial head)");
	R.room = n - 5;
	pump(&R, HTTP_RESP);
	tap_ok(R.s[HTTP_RESP].outlen == n - 5, "with room for it, the head "
	    "and the CSP line go out whole");
	while (R.s[HTTP_RESP].outlen < n && !R.s[HTTP_RESP].failed) {
		R.room = R.s[HTTP_RESP].outlen + 2;
		pump(&R, HTTP_RESP);
		if (R.s[HTTP_RESP].outlen < R.room && R.s[HTTP_RESP].outlen < n)
			break;
	}
	tap_ok(side_is(&R.s[HTTP_RESP], want, n) && R.ndone == 1,
	    "then 2 bytes at a time: the same output");
}

static int
csp_for(const char *ctype_lines)
{
	static char resp[1024];

	snprintf(resp, sizeof(resp), "HTTP/1.1 200 OK\r\n%sContent-Length: "
	    "0\r\n\r\n", ctype_lines);
	run_all(&R, REQ1, resp);
	return R.ndone == 1 && !R.s[HTTP_RESP].failed ? R.done[0].csp_added :
	    -1;
}

static void
test_types(void)
{
	static const struct { const char *h; int csp; } t[] = {
		/* documents, however spelled */
		{ "Content-Type: text/html\r\n", 1 },
		{ "content-type:TEXT/HTML ; charset=x\r\n", 1 },
		{ "Content-Type: text/html;charset=utf-8\r\n", 1 },
		{ "Content-Type: application/xhtml+xml\r\n", 1 },
		{ "Content-Type: image/svg+xml\r\n", 1 },
		{ "Content-Type: text/xml\r\n", 1 },
		{ "Content-Type: application/xml\r\n", 1 },
		{ "Content-Type: text/xsl\r\n", 1 },
		{ "Content-Type: application/xslt+xml\r\n", 1 },
		{ "Content-Type: application/rss+xml\r\n", 1 },
		{ "Content-Type: multipart/x-mixed-replace; boundary=b\r\n", 1 },
		{ "Content-Type: multipart/related\r\n", 1 },
		{ "Content-Type: application/pdf\r\n", 1 },
		{ "Content-Type: text/plain; charset=utf-8\r\n", 1 },
		{ "Content-Type: text/css\r\n", 1 },
		{ "Content-Type: text/javascript\r\n", 1 },
		/* what Chromium sniffs: missing, empty, invalid, wildcards */
		{ "", 1 },
		{ "Content-Type: \r\n", 1 },
		{ "Content-Type: html\r\n", 1 },
		{ "Content-Type: unknown/unknown\r\n", 1 },
		{ "Content-Type: application/unknown\r\n", 1 },
		{ "Content-Type: */*\r\n", 1 },
		/* not MIME syntax: junk after the subtype, comments, lists */
		{ "Content-Type: text/html x\r\n", 1 },
		{ "Content-Type: text/html(comment)\r\n", 1 },
		{ "Content-Type: image/png x\r\n", 1 },
		{ "Content-Type: image/png(comment)\r\n", 1 },
		{ "Content-Type: image/png, text/html\r\n", 1 },
		{ "Content-Type: text/html, image/png\r\n", 1 },
		{ "Content-Type: image/png; a=\"b,text/html\"\r\n", 1 },
		{ "Content-Type: image /png\r\n", 1 },
		{ "Content-Type: image/ png\r\n", 1 },
		{ "Content-Type: image/png/x\r\n", 1 },
		{ "Content-Type: image/pngx\r\n", 1 },
		{ "Content-Type: \"image/png\"\r\n", 1 },
		/* more than one Content-Type, even if both are safe */
		{ "Content-Type: text/plain\r\nContent-Type: text/html\r\n", 1 },
		{ "Content-Type: image/png\r\nContent-Type: text/html\r\n", 1 },
		{ "Content-Type: image/png\r\nContent-Type: image/png\r\n", 1 },
		/* the allow-list: never rendered as a document */
		{ "Content-Type: application/json\r\n", 0 },
		{ "Content-Type: Application/JSON; charset=utf-8\r\n", 0 },
		{ "Content-Type: application/manifest+json\r\n", 0 },
		{ "Content-Type: application/javascript\r\n", 0 },
		{ "Content-Type: image/png\r\n", 0 },
		{ "Content-Type: IMAGE/PNG\r\n", 0 },
		{ "Content-Type: image/jpeg ; q=1\r\n", 0 },
		{ "Content-Type: font/woff2\r\n", 0 },
		{ "Content-Type: application/wasm\r\n", 0 },
		{ "Content-Type: application/octet-stream\r\n", 0 },
		{ "Content-Type: application/vnd.apache.arrow.stream\r\n", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		tap_ok(csp_for(t[i].h) == t[i].csp, "CSP %s for [%.*s]",
		    t[i].csp ? "added" : "not added",
		    (int)strcspn(t[i].h, "\r"), t[i].h);
	tap_ok(csp_for("Content-Security-Policy: sandbox allow-popups\r\n"
	    "Content-Type: text/html\r\n") == 1, "the backend's own (weaker) "
	    "CSP does not stop ours: both are sent, browsers enforce both");
	csp_for("Content-Type: image/png\r\n");
	tap_ok(R.s[HTTP_RESP].outlen > 17 + strlen(HTTP_NOSTORE_LINE) &&
	    memcmp(R.s[HTTP_RESP].out + 17, HTTP_NOSTORE_LINE "Content-Type",
	    strlen(HTTP_NOSTORE_LINE) + 12) == 0, "a safe type gets "
	    "Cache-Control: no-store (and no CSP) after its status line");
}

/* Chromium's fetch of a service worker script is refused, whatever the
 * header's value; the detail names the target. */
static void
test_service_worker(void)
{
	static const char *const req[] = {
	    "GET /sw.js HTTP/1.1\r\nHost: h\r\nService-Worker: script\r\n\r\n",
	    "GET /sw.js HTTP/1.1\r\nservice-worker:x\r\n\r\n",
	    "GET /a HTTP/1.1\r\n\r\nGET /sw2.js HTTP/1.1\r\n"
	    "SERVICE-WORKER: script\r\n\r\n" };
	size_t i;

	for (i = 0; i < sizeof(req) / sizeof(req[0]); i++) {
		run_all(&R, req[i], "");
		tap_ok(R.s[HTTP_REQ].failed && R.s[HTTP_REQ].status ==
		    HTTP_ESWSCRIPT && strstr(R.s[HTTP_REQ].detail, "/sw") !=
		    NULL && strstr((const char *)R.s[HTTP_REQ].out, "/sw") ==
		    NULL, "service worker request %zu refused, not passed: "
		    "%s", i, R.s[HTTP_REQ].detail);
	}
	run_all(&R, "GET /sw.js HTTP/1.1\r\nService-Worker-Allowed: /\r\n"
	    "Service-Worker-Navigation-Preload: true\r\n\r\n", "");
	tap_ok(!R.s[HTTP_REQ].failed, "other Service-Worker-* headers pass");
}

/* Every request loses the grant lines it came with, in any case and
 * position, and gets the connection's own after its request line; its
 * body is untouched; more than HTTP_DROP_MAX of them: refused. */
static void
test_grant(void)
{
	static const char line[] = "Cdsgate-Grant: v1:s-1:7:99:abc\r\n";
	static const char req[] = "GET /data/2 HTTP/1.1\r\n"
	    "cdsgate-grant: v1:s-9:2:99:forged\r\nHost: h\r\n"
	    "CDSGATE-GRANT:v1:s-9:2:99:again\r\n\r\n"
	    "POST /api/event HTTP/1.1\r\nContent-Length: 22\r\n\r\n"
	    "Cdsgate-Grant: in body"
	    "GET / HTTP/1.0\r\nCdsgate-Grant: x\r\n\r\n";
	static const char want[] = "GET /data/2 HTTP/1.1\r\n"
	    "Cdsgate-Grant: v1:s-1:7:99:abc\r\nHost: h\r\n\r\n"
	    "POST /api/event HTTP/1.1\r\n"
	    "Cdsgate-Grant: v1:s-1:7:99:abc\r\nContent-Length: 22\r\n\r\n"
	    "Cdsgate-Grant: in body"
	    "GET / HTTP/1.0\r\nCdsgate-Grant: v1:s-1:7:99:abc\r\n\r\n";
	static const char five[] = "GET / HTTP/1.1\r\nCdsgate-Grant: 1\r\n"
	    "Cdsgate-Grant: 2\r\nCdsgate-Grant: 3\r\nCdsgate-Grant: 4\r\n"
	    "Cdsgate-Grant: 5\r\n\r\n";
	static const char resp[] = "HTTP/1.1 204 No\r\n\r\n"
	    "HTTP/1.1 204 No\r\n\r\nHTTP/1.1 204 No\r\n\r\n";
	struct side *q = &R.s[HTTP_REQ];

	run_init(&R, req, sizeof(req) - 1, resp, sizeof(resp) - 1);
	tap_ok(http_conn_request_line(R.hc, line) == 0, "grant line set");
	run_split(&R, sizeof(req) - 1, sizeof(resp) - 1);
	tap_ok(!q->failed && q->outlen == sizeof(want) - 1 &&
	    memcmp(q->out, want, q->outlen) == 0, "three requests: forged "
	    "grant lines removed, the connection's added, the body as sent");
	tap_ok(R.ndone == 3 && R.done[0].grant_dropped == 2 &&
	    R.done[1].grant_dropped == 0 && R.done[2].grant_dropped == 1,
	    "each exchange says how many lines it lost (%u %u %u)",
	    R.done[0].grant_dropped, R.done[1].grant_dropped,
	    R.done[2].grant_dropped);
	run_all(&R, req, resp);		/* no grant of its own */
	tap_ok(!q->failed && strstr((const char *)q->out, "forged") == NULL &&
	    strstr((const char *)q->out, "again") == NULL &&
	    strstr((const char *)q->out, "Grant: x") == NULL,
	    "without a grant line the browser's are still removed");
	run_all(&R, five, "");
	tap_ok(q->failed && q->status == HTTP_EGRANT && q->outlen == 0,
	    "five grant lines: refused, nothing passed (%s)", q->detail);
	run_all(&R, "GET / HTTP/1.1\r\nX-Cdsgate-Grant: y\r\n"
	    "Cdsgate-Grants: z\r\n\r\n", "");
	tap_ok(!q->failed && strstr((const char *)q->out, "X-Cdsgate-Grant: y")
	    != NULL && strstr((const char *)q->out, "Grants: z") != NULL,
	    "other header names that contain it pass");
	tap_ok(http_conn_request_line(R.hc, "Cdsgate-Grant: "
	    "0123456789012345678901234567890123456789012345678901234567890123"
	    "0123456789012345678901234567890123456789012345678901234567890123"
	    "0123456789012345678901234567890123456789012345678901234567890123"
	    "0123456789012345678901234567890123456789012345678901234567890123"
	    "\r\n") != 0, "a line over HTTP_REQ_INSERT_MAX is refused");
}

static void
test_upgrade(void)
{
	static const char req[] = "GET /ws HTTP/1.1\r\nHost: h\r\n"
	    "Connection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\n"
	    "\x81\x05hello not http\r\n\r\n";
	static const char resp[] = "HTTP/1.1 101 Switching Protocols\r\n"
	    "Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
	    "\x81\x02hi garbage \r\n\r\n\x00";
	static const char req2[] = "GET /ws HTTP/1.1\r\nConnection: upgrade\r\n"
	    "Upgrade: h2c\r\n\r\nGET /next HTTP/1.1\r\n\r\n";
	static const char resp2[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n"
	    "Content-Type: text/plain\r\n\r\n"
	    "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n"
	    "Content-Type: text/plain\r\n\r\n";
	static const char resp3[] = "HTTP/1.1 101 Switching Protocols\r\n\r\n";

	run_init(&R, req, sizeof(req) - 1, resp, sizeof(resp) - 1);
	R.s[HTTP_REQ].avail = R.s[HTTP_REQ].len;
	pump(&R, HTTP_REQ);
	tap_ok(R.s[HTTP_REQ].outlen == (size_t)(strchr(req, '\x81') - req) &&
	    !R.s[HTTP_REQ].failed, "after an Upgrade request the next bytes "
	    "wait for the answer");
	run_split(&R, R.s[HTTP_REQ].len, R.s[HTTP_RESP].len);
	tap_ok(side_is(&R.s[HTTP_REQ], req, sizeof(req) - 1) &&
	    side_is(&R.s[HTTP_RESP], resp, sizeof(resp) - 1) &&
	    http_opaque(R.hc) && R.ndone == 1 && R.done[0].status == 101,
	    "101: both sides become an opaque relay (frames, NUL, CRLFs pass)");
	run_all(&R, req2, resp2);
	tap_ok(R.ndone == 2 && !http_opaque(R.hc) &&
	    strcmp(R.done[1].target, "/next") == 0, "an Upgrade refused with "
	    "200: HTTP goes on with the next request");
	run_all(&R, REQ1, resp3);
	tap_ok(R.s[HTTP_RESP].failed && R.s[HTTP_RESP].status ==
	    HTTP_EUNSOLICITED && !http_opaque(R.hc), "101 without an Upgrade "
	    "request: refused, no opaque relay");
}

struct bad { const char *name, *req, *resp; enum http_side side;
	enum http_status st; };

static void
test_hostile(void)
{
	static const struct bad t[] = {
		{ "bare CR in a request header", "GET / HTTP/1.1\r\nA: b\rc\r\n\r\n",
		    "", HTTP_REQ, HTTP_EMALFORMED },
		{ "NUL in a header", "GET / HTTP/1.1\r\nA: b\0c\r\n\r\n", "",
		    HTTP_REQ, HTTP_EMALFORMED },
		{ "obs-fold", "GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n", "",
		    HTTP_REQ, HTTP_EMALFORMED },
		{ "space before the colon", "GET / HTTP/1.1\r\nHost : h\r\n\r\n",
		    "", HTTP_REQ, HTTP_EMALFORMED },
		{ "double space in the request line", "GET  / HTTP/1.1\r\n\r\n",
		    "", HTTP_REQ, HTTP_EMALFORMED },
		{ "non-ASCII in the target", "GET /\xc3\xa9 HTTP/1.1\r\n\r\n", "",
		    HTTP_REQ, HTTP_EMALFORMED },
		{ "empty request line", "\r\nGET / HTTP/1.1\r\n\r\n", "",
		    HTTP_REQ, HTTP_EMALFORMED },
		{ "HTTP/2.0", "GET / HTTP/2.0\r\n\r\n", "", HTTP_REQ,
		    HTTP_EVERSION },
		{ "HTTP/0.9-style line", "GET /\r\n\r\n", "", HTTP_REQ,
		    HTTP_EMALFORMED },
		{ "CONNECT", "CONNECT 1.1.1.1:443 HTTP/1.1\r\n\r\n", "",
		    HTTP_REQ, HTTP_EMETHOD },
		{ "Content-Length with Transfer-Encoding (smuggling)",
		    "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: "
		    "chunked\r\n\r\n", "", HTTP_REQ, HTTP_ELENGTH },
		{ "two different Content-Lengths", "POST / HTTP/1.1\r\n"
		    "Content-Length: 3\r\nContent-Length: 4\r\n\r\n", "",
		    HTTP_REQ, HTTP_ELENGTH },
		{ "Content-Length list", "POST / HTTP/1.1\r\nContent-Length: "
		    "3, 3\r\n\r\n", "", HTTP_REQ, HTTP_ELENGTH },
		{ "Content-Length +5", "POST / HTTP/1.1\r\nContent-Length: +5"
		    "\r\n\r\n", "", HTTP_REQ, HTTP_ELENGTH },
		{ "Content-Length 2^64", "POST / HTTP/1.1\r\nContent-Length: "
		    "18446744073709551616\r\n\r\n", "", HTTP_REQ, HTTP_ELENGTH },
		{ "request Transfer-Encoding gzip", "POST / HTTP/1.1\r\n"
		    "Transfer-Encoding: gzip\r\n\r\n", "", HTTP_REQ,
		    HTTP_ELENGTH },
		{ "Transfer-Encoding chunked, gzip", "POST / HTTP/1.1\r\n"
		    "Transfer-Encoding: chunked, gzip\r\n\r\n", "", HTTP_REQ,
		    HTTP_ELENGTH },
		{ "chunk size not hex", "POST / HTTP/1.1\r\nTransfer-Encoding: "
		    "chunked\r\n\r\nzz\r\n", "", HTTP_REQ, HTTP_ECHUNK },
		{ "chunk size of 16 hex digits", "POST / HTTP/1.1\r\n"
		    "Transfer-Encoding: chunked\r\n\r\n1000000000000000\r\n", "",
		    HTTP_REQ, HTTP_ECHUNK },
		{ "chunk data without its CRLF", "POST / HTTP/1.1\r\n"
		    "Transfer-Encoding: chunked\r\n\r\n1\r\nab\r\n", "",
		    HTTP_REQ, HTTP_ECHUNK },
		{ "request closed inside its body", "POST / HTTP/1.1\r\n"
		    "Content-Length: 9\r\n\r\nabc", "", HTTP_REQ,
		    HTTP_ETRUNCATED },
		{ "request closed inside its head", "GET / HTTP/1.1\r\nHo", "",
		    HTTP_REQ, HTTP_ETRUNCATED },
		{ "response without a request", "", "HTTP/1.1 200 OK\r\n\r\n",
		    HTTP_RESP, HTTP_EUNSOLICITED },
		{ "status 20", REQ1, "HTTP/1.1 20 OK\r\n\r\n", HTTP_RESP,
		    HTTP_EMALFORMED },
		{ "status 099", REQ1, "HTTP/1.1 099 x\r\n\r\n", HTTP_RESP,
		    HTTP_EMALFORMED },
		{ "HTTP/0.9 response (no status line)", REQ1, "<html>\r\n\r\n",
		    HTTP_RESP, HTTP_EMALFORMED },
		{ "bare CR splitting a response header (injection)", REQ1,
		    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\rContent-Type: "
		    "text/html\r\n\r\n", HTTP_RESP, HTTP_EMALFORMED },
		{ "response Content-Length with Transfer-Encoding", REQ1,
		    "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: "
		    "chunked\r\n\r\n", HTTP_RESP, HTTP_ELENGTH },
		{ "backend closed before its response", REQ1, "", HTTP_RESP,
		    HTTP_ETRUNCATED },
		{ "backend closed inside the body", REQ1, "HTTP/1.1 200 OK\r\n"
		    "Content-Length: 10\r\n\r\nabc", HTTP_RESP,
		    HTTP_ETRUNCATED },
		{ "trailer with a bare CR", REQ1, "HTTP/1.1 200 OK\r\n"
		    "Transfer-Encoding: chunked\r\n\r\n0\r\nA: b\rc\r\n\r\n",
		    HTTP_RESP, HTTP_ECHUNK },
	};
	size_t i, rl;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		rl = strlen(t[i].req);
		if (strstr(t[i].name, "NUL") != NULL)
			rl = 26;
		run_init(&R, t[i].req, rl, t[i].resp, strlen(t[i].resp));
		run_split(&R, rl, strlen(t[i].resp));
		tap_ok(R.s[t[i].side].failed && R.s[t[i].side].status ==
		    t[i].st, "%s: refused (%s)", t[i].name,
		    R.s[t[i].side].failed ? R.s[t[i].side].detail : "passed");
	}
}

/* Over-long heads both ways, a head of exactly the limit, 2 KiB targets,
 * the pipeline cap. */
static void
test_limits(void)
{
	static char big[HTTP_HEAD_MAX + 64], want[HTTP_HEAD_MAX + 256];
	static char pipe[20 * 32];
	static const char tail[] = "\r\n\r\n";
	size_t n, i;

	memset(big, 'a', sizeof(big));
	memcpy(big, "GET /", 5);
	run_init(&R, big, HTTP_HEAD_MAX + 1, "", 0);
	R.s[HTTP_REQ].avail = HTTP_HEAD_MAX + 1;
	R.s[HTTP_REQ].len = HTTP_HEAD_MAX + 2;	/* no FIN yet */
	pump(&R, HTTP_REQ);
	tap_ok(R.s[HTTP_REQ].failed && R.s[HTTP_REQ].status == HTTP_EHEADLONG,
	    "a request head over %d bytes is refused before its end",
	    HTTP_HEAD_MAX);

	n = HTTP_HEAD_MAX - strlen(" HTTP/1.1") - strlen(tail);
	memcpy(big + n, " HTTP/1.1\r\n\r\n", 13);
	run_init(&R, big, HTTP_HEAD_MAX, "", 0);
	run_split(&R, HTTP_HEAD_MAX, 0);
	tap_ok(!R.s[HTTP_REQ].failed && R.s[HTTP_REQ].outlen == HTTP_HEAD_MAX,
	    "a head of exactly %d bytes passes", HTTP_HEAD_MAX);
	tap_ok(R.hc != NULL && http_pending(R.hc, 0) != NULL &&
	    strlen(http_pending(R.hc, 0)->target) == HTTP_TARGET_MAX &&
	    http_pending(R.hc, 0)->target_truncated, "its target is kept "
	    "to %d bytes, marked truncated", HTTP_TARGET_MAX);

	memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
	memset(big + 20, 'b', sizeof(big) - 20);
	run_init(&R, REQ1, strlen(REQ1), big, sizeof(big));
	run_split(&R, strlen(REQ1), sizeof(big) - 1);
	tap_ok(R.s[HTTP_RESP].failed && R.s[HTTP_RESP].status ==
	    HTTP_EHEADLONG && R.s[HTTP_RESP].outlen == 0, "a response head "
	    "over the limit is refused, nothing of it passed");
	(void)want;

	for (i = 0, n = 0; i < 20; i++)
		n += (size_t)snprintf(pipe + n, sizeof(pipe) - n,
		    "GET /%02zu HTTP/1.1\r\n\r\n", i);
	run_init(&R, pipe, n, "", 0);
	R.s[HTTP_REQ].avail = n;
	R.s[HTTP_REQ].len = n + 1;
	pump(&R, HTTP_REQ);
	tap_ok(!R.s[HTTP_REQ].failed && http_pending(R.hc, HTTP_PIPELINE_MAX -
	    1) != NULL && http_pending(R.hc, HTTP_PIPELINE_MAX) == NULL &&
	    R.s[HTTP_REQ].outlen == HTTP_PIPELINE_MAX * 20, "20 pipelined "
	    "requests: %d pass, the rest wait for responses",
	    HTTP_PIPELINE_MAX);
}

/* Random mutations of valid traffic: every outcome is a status, never a
 * crash or an out-of-range read (run under ASan by ./dev sanitize). */
static void
test_mutations(void)
{
	static const char *const src[] = { RESP1, "HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n5;e\r\nhello\r\n0\r\nT: 1\r\n"
	    "\r\n", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 304 x\r\n\r\n" };
	static char buf[256];
	unsigned seed = 12345, i, crashes = 0, fails = 0;
	size_t len, j;

	for (i = 0; i < 30000; i++) {
		const char *s = src[i % 3];

		len = strlen(s);
		memcpy(buf, s, len);
		for (j = 0; j < 1 + i % 4; j++) {
			seed = seed * 1103515245u + 12345u;
			buf[(seed >> 8) % len] = (char)(seed >> 20);
		}
		run_init(&R, REQ1, strlen(REQ1), buf, len);
		seed = seed * 1103515245u + 12345u;
		run_split(&R, strlen(REQ1), (seed >> 8) % (len + 1));
		if (R.s[HTTP_RESP].outlen > len + HTTP_INSERT_MAX * 2)
			crashes++;
		fails += R.s[HTTP_RESP].failed;
	}
	tap_ok(crashes == 0, "30000 mutated responses: output never larger "
	    "than input + the CSP line (%u refused)", fails);
}

int
main(void)
{
	test_simple();
	test_framing();
	test_room();
	test_types();
	test_service_worker();
	test_grant();
	test_upgrade();
	test_hostile();
	test_limits();
	test_mutations();
	http_conn_free(R.hc);
	return tap_done();
}
