/*
 * tests/unit/test-vencrypt.c — the front door's state machine in one
 * process: an in-memory certificate, an OpenSSL client on one end of a
 * socketpair, a fake LibVNCServer on the library side.  Checks the
 * VeNCrypt bytes, the TLS handshake, Plain with right and wrong
 * passwords, the VncAuth answer to the library, a 1 MB relay both ways
 * through the bounded buffers, and that garbage at any step closes the
 * connection instead of crashing.  The websocket path (ws mode: the same
 * as wss without the TLS) logs in with VeNCrypt Plain inside the frames
 * and relays through them.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <rfb/rfbproto.h>

#include "gateway/slog.h"
#include "gateway/vencrypt.h"
#include "tests/tap.h"
#include "tests/testcert.h"

#define SPINS	20000

static struct tls_ctx	*tls;
static struct creds	*creds;
static struct tbucket	 bucket;

static uint64_t
clk(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

struct door {
	struct vencrypt		*c;
	enum vencrypt_event	 ev;
	int			 cfd;		/* the client's end */
	int			 lfd;		/* the fake library's end */
	SSL			*ssl;
};

/* A connection from addr in mode, failed logins counted in pa (or not:
 * NULL). */
static void
door_open_mode(struct door *d, int allow_plain, const char *addr,
    struct preauth *pa, enum vencrypt_mode mode)
{
	struct vencrypt_params prm = { .tls = tls, .creds = creds,
	    .inner_password = "innerpw", .allow_plain = allow_plain,
	    .preauth = pa, .auth_bucket = &bucket, .clock = clk };
	int sv[2];

	memset(d, 0, sizeof(*d));
	d->lfd = -1;
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv);
	d->cfd = sv[0];
	vencrypt_alloc(&d->c, sv[1], addr, mode, &prm, clk());
}

static void
door_open_from(struct door *d, int allow_plain, const char *addr,
    struct preauth *pa)
{
	door_open_mode(d, allow_plain, addr, pa, VENCRYPT_MODE_RFB);
}

static void
door_open(struct door *d, int allow_plain)
{
	door_open_from(d, allow_plain, "test", NULL);
}

static void
door_close(struct door *d)
{
	SSL_free(d->ssl);
	if (d->c != NULL)
		vencrypt_free(d->c);
	close(d->cfd);
	if (d->lfd >= 0)
		close(d->lfd);
}

/* One round of the door; remember the first event that is not CONTINUE. */
static void
spin(struct door *d)
{
	enum vencrypt_event ev;

	if (d->c == NULL)
		return;
	ev = vencrypt_handle(d->c, clk());
	if (ev == VENCRYPT_CLOSED) {
		vencrypt_free(d->c);
		d->c = NULL;
	}
	if (ev != VENCRYPT_CONTINUE && d->ev == VENCRYPT_CONTINUE)
		d->ev = ev;
}

/* Read exactly n bytes from fd (plain) or the client's TLS, spinning. */
static int
get(struct door *d, int fd, void *buf, size_t n)
{
	size_t have = 0;
	ssize_t r;
	int i;

	for (i = 0; i < SPINS && have < n; i++) {
		spin(d);
		if (fd == d->cfd && d->ssl != NULL) {
			size_t got = 0;

			if (SSL_read_ex(d->ssl, (char *)buf + have, n - have,
			    &got) == 1)
				have += got;
			else if (SSL_get_error(d->ssl, 0) == SSL_ERROR_ZERO_RETURN)
				return -1;
			ERR_clear_error();
			continue;
		}
		r = recv(fd, (char *)buf + have, n - have, MSG_DONTWAIT);
		if (r == 0)
			return -1;
		if (r > 0)
			have += (size_t)r;
	}
	return have == n ? 0 : -1;
}

static int
put(struct door *d, int fd, const void *buf, size_t n)
{
	size_t done = 0, w;
	ssize_t r;
	int i;

	for (i = 0; i < SPINS && done < n; i++) {
		if (fd == d->cfd && d->ssl != NULL) {
			if (SSL_write_ex(d->ssl, (const char *)buf + done,
			    n - done, &w) == 1)
				done += w;
			ERR_clear_error();
		} else if ((r = send(fd, (const char *)buf + done, n - done,
		    MSG_DONTWAIT | MSG_NOSIGNAL)) > 0)
			done += (size_t)r;
		spin(d);
	}
	return done == n ? 0 : -1;
}

/* One non-blocking read or write on fd (TLS for the client's end). */
static ssize_t
io(struct door *d, int fd, void *buf, size_t n, int wr)
{
	size_t k = 0;
	int ok;

	if (fd != d->cfd || d->ssl == NULL)
		return wr ? send(fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL) :
		    recv(fd, buf, n, MSG_DONTWAIT);
	ok = wr ? SSL_write_ex(d->ssl, buf, n, &k) : SSL_read_ex(d->ssl, buf,
	    n, &k);
	ERR_clear_error();
	return ok == 1 ? (ssize_t)k : -1;
}

/* Send n bytes into wfd while reading them from rfd (the buffers in
 * between are smaller than n, so both must go on at once). */
static int
xfer(struct door *d, int wfd, int rfd, const uint8_t *src, uint8_t *dst,
    size_t n)
{
	size_t sent = 0, got = 0;
	ssize_t r;
	int i;

	for (i = 0; i < 100 * SPINS && got < n; i++) {
		if (sent < n && (r = io(d, wfd, (void *)(src + sent),
		    n - sent < 16384 ? n - sent : 16384, 1)) > 0)
			sent += (size_t)r;
		spin(d);
		if ((r = io(d, rfd, dst + got, n - got, 0)) > 0)
			got += (size_t)r;
	}
	return got == n && memcmp(src, dst, n) == 0 ? 0 : -1;
}

/* The client's side up to the TLS handshake (VeNCrypt X509Plain). */
static int
to_tls(struct door *d)
{
	SSL_CTX *cc = SSL_CTX_new(TLS_client_method());
	uint8_t b[16];
	const uint8_t sub[] = { 0, 0, 1, 6 };
	int i, r = 0;

	if (get(d, d->cfd, b, 12) || memcmp(b, "RFB 003.008\n", 12) ||
	    put(d, d->cfd, "RFB 003.008\n", 12) || get(d, d->cfd, b, 2) ||
	    b[0] != 1 || b[1] != 19 || put(d, d->cfd, "\x13", 1) ||
	    get(d, d->cfd, b, 2) || b[0] != 0 || b[1] != 2 ||
	    put(d, d->cfd, "\0\2", 2) || get(d, d->cfd, b, 6) || b[0] != 0 ||
	    b[1] != 1 || memcmp(b + 2, sub, 4) || put(d, d->cfd, sub, 4) ||
	    get(d, d->cfd, b, 1) || b[0] != 1)
		goto out;
	d->ssl = SSL_new(cc);
	SSL_set_fd(d->ssl, d->cfd);
	SSL_set_connect_state(d->ssl);
	for (i = 0; i < SPINS && SSL_do_handshake(d->ssl) != 1; i++) {
		ERR_clear_error();
		spin(d);
	}
	r = SSL_is_init_finished(d->ssl);
out:
	SSL_CTX_free(cc);
	return r;
}

/* VeNCrypt Plain's message into m[300]; its length. */
static size_t
plain_msg(uint8_t *m, const char *user, const char *pw)
{
	uint32_t ul = htonl((uint32_t)strlen(user)), pl = htonl((uint32_t)strlen(pw));

	memcpy(m, &ul, 4);
	memcpy(m + 4, &pl, 4);
	memcpy(m + 8, user, strlen(user));
	memcpy(m + 8 + strlen(user), pw, strlen(pw));
	return 8 + strlen(user) + strlen(pw);
}

static int
plain(struct door *d, const char *user, const char *pw)
{
	uint8_t m[300];

	return put(d, d->cfd, m, plain_msg(m, user, pw));
}

/* The library's side after NEED_INNER: version, VncAuth, result 0. */
static int
fake_library(struct door *d)
{
	unsigned char ch[16], resp[16], want[16];
	char pw[] = "innerpw";
	uint8_t b[12];
	int sv[2];

	socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv);
	d->lfd = sv[1];
	if (vencrypt_attach(d->c, sv[0]) != 0)
		return -1;
	memset(ch, 0x5a, sizeof(ch));
	memcpy(want, ch, sizeof(want));
	rfbEncryptBytes(want, pw);
	if (get(d, d->lfd, b, 12) || memcmp(b, "RFB 003.008\n", 12) ||
	    put(d, d->lfd, "RFB 003.008\n\1\2", 14) || get(d, d->lfd, b, 1) ||
	    b[0] != 2 || put(d, d->lfd, ch, 16) || get(d, d->lfd, resp, 16) ||
	    memcmp(resp, want, 16) || put(d, d->lfd, "\0\0\0\0", 4))
		return -1;
	return 0;
}

static void
test_login_and_relay(void)
{
	static uint8_t big[1 << 20], back[1 << 20];
	struct door d;
	uint8_t r[4];
	size_t i;

	door_open(&d, 0);
	tap_ok(to_tls(&d), "version, VeNCrypt 0.2, X509Plain, TLS handshake");
	tap_ok(plain(&d, "alice", "pw1") == 0 && (get(&d, d.cfd, r, 0), 1) &&
	    d.ev == VENCRYPT_NEED_INNER, "right password: the door asks for "
	    "the library side");
	tap_ok(fake_library(&d) == 0, "the door answers the library's "
	    "VncAuth challenge with the internal password");
	tap_ok(get(&d, d.cfd, r, 4) == 0 && memcmp(r, "\0\0\0\0", 4) == 0,
	    "the client gets SecurityResult OK");
	for (i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7 + 3);
	tap_ok(xfer(&d, d.lfd, d.cfd, big, back, sizeof(big)) == 0,
	    "1 MB library -> client arrives intact through the relay");
	tap_ok(xfer(&d, d.cfd, d.lfd, big, back, sizeof(big)) == 0,
	    "1 MB client -> library arrives intact");
	close(d.lfd);
	d.lfd = -1;
	for (i = 0; i < 50 && d.c != NULL; i++)
		spin(&d);
	tap_ok(d.c == NULL, "the library closing ends the relay");
	door_close(&d);
}

static void
test_refusals(void)
{
	struct door d;
	uint8_t r[64];
	uint32_t len;
	size_t i;

	door_open(&d, 0);
	to_tls(&d);
	plain(&d, "alice", "wrong");
	tap_ok(get(&d, d.cfd, r, 8) == 0 && memcmp(r, "\0\0\0\1", 4) == 0 &&
	    d.ev != VENCRYPT_NEED_INNER, "wrong password: SecurityResult failed");
	memcpy(&len, r + 4, 4);
	tap_ok(get(&d, d.cfd, r + 8, ntohl(len)) == 0 &&
	    memcmp(r + 8, "authentication failed", 21) == 0,
	    "... with the reason");
	door_close(&d);

	door_open(&d, 0);
	get(&d, d.cfd, r, 12);
	put(&d, d.cfd, "RFB 003.008\n", 12);
	get(&d, d.cfd, r, 2);
	put(&d, d.cfd, "\2", 1);
	tap_ok(get(&d, d.cfd, r, 8) == 0 && memcmp(r, "\0\0\0\1", 4) == 0,
	    "VncAuth where it is not offered: SecurityResult failed");
	for (i = 0; i < 50 && d.c != NULL; i++)
		spin(&d);
	tap_ok(d.c == NULL, "... and closed");
	door_close(&d);
}

/* One VeNCrypt login from addr; the SecurityResult's reason, "" if OK. */
static const char *
login_from(const char *addr, struct preauth *pa, const char *pw, int *asked)
{
	static char why[64];
	struct door d;
	uint8_t r[8];
	uint32_t len;

	why[0] = '\0';
	*asked = 0;
	door_open_from(&d, 0, addr, pa);
	to_tls(&d);
	plain(&d, "alice", pw);
	if (get(&d, d.cfd, r, 0), d.ev == VENCRYPT_NEED_INNER)
		*asked = 1;
	else if (get(&d, d.cfd, r, 8) == 0 && memcmp(r, "\0\0\0\1", 4) == 0) {
		memcpy(&len, r + 4, 4);
		len = ntohl(len) < sizeof(why) - 1 ? ntohl(len) : sizeof(why) - 1;
		if (get(&d, d.cfd, why, len) != 0)
			snprintf(why, sizeof(why), "?");
		why[len] = '\0';
	}
	door_close(&d);
	return why;
}

/* Failed logins back off per address: the right password from that
 * address is not even checked meanwhile; another address gets in. */
static void
test_backoff(void)
{
	struct preauth *pa;
	const char *why = "";
	int i, asked = 0, failed = 0;

	if (preauth_alloc(&pa) != PREAUTH_OK)
		return;
	for (i = 0; i <= PREAUTH_FREE_FAILS; i++)
		failed += strcmp(login_from("192.0.2.9:1000", pa, "wrong",
		    &asked), "authentication failed") == 0;
	tap_ok(failed == PREAUTH_FREE_FAILS + 1,
	    "%d wrong passwords from one address: each checked and refused",
	    failed);
	why = login_from("192.0.2.9:1001", pa, "pw1", &asked);
	tap_ok(!asked && strstr(why, "try again later") != NULL,
	    "then the right one from that address is refused unchecked (%s)",
	    why);
	why = login_from("192.0.2.10:1000", pa, "pw1", &asked);
	tap_ok(asked, "another address logs in at once");
	preauth_free(pa);
}

/* Random bytes after k correct steps: the door must close, never crash. */
static void
test_garbage(void)
{
	uint8_t junk[512], r[64];
	struct door d;
	int k, n, closed = 0, runs = 0;
	size_t i;

	srand(7);
	for (k = 0; k < 4; k++)
		for (n = 0; n < 25; n++, runs++) {
			door_open(&d, n % 2);
			get(&d, d.cfd, r, 12);
			if (k >= 1)
				put(&d, d.cfd, "RFB 003.008\n", 12);
			if (k >= 2) {
				get(&d, d.cfd, r, n % 2 ? 3 : 2);
				put(&d, d.cfd, "\x13", 1);
			}
			if (k >= 3) {
				get(&d, d.cfd, r, 2);
				put(&d, d.cfd, "\0\2", 2);
			}
			for (i = 0; i < sizeof(junk); i++)
				junk[i] = (uint8_t)rand();
			put(&d, d.cfd, junk, 1 + (size_t)rand() % sizeof(junk));
			shutdown(d.cfd, SHUT_WR);
			for (i = 0; i < 200 && d.c != NULL; i++)
				spin(&d);
			closed += d.c == NULL || d.ev == VENCRYPT_NEED_INNER;
			door_close(&d);
		}
	tap_ok(closed == runs, "random bytes at 4 handshake steps: %d of %d "
	    "connections closed cleanly", closed, runs);
}

/* ---- the websocket path ---------------------------------------------- */

/* One masked binary frame from the client. */
static int
ws_put(struct door *d, const void *p, size_t n)
{
	static uint8_t f[20000];
	const uint8_t m[4] = { 1, 2, 3, 4 };
	size_t h = 2, i;

	f[0] = 0x82;
	if (n < 126)
		f[1] = 0x80 | (uint8_t)n;
	else {
		f[1] = 0x80 | 126;
		f[2] = (uint8_t)(n >> 8);
		f[3] = (uint8_t)n;
		h = 4;
	}
	memcpy(f + h, m, 4);
	for (i = 0; i < n; i++)
		f[h + 4 + i] = ((const uint8_t *)p)[i] ^ m[i & 3];
	return put(d, d->cfd, f, h + 4 + n);
}

/* n payload bytes from the door's frames (however it cut them). */
static int
ws_get(struct door *d, uint8_t *out, size_t n)
{
	static size_t left;	/* payload of the current frame not read */
	uint8_t h[8];
	size_t k;

	while (n > 0) {
		if (left == 0) {
			if (get(d, d->cfd, h, 2) || h[0] != 0x82 || (h[1] & 0x80))
				return -1;
			left = h[1] & 0x7f;
			if (left == 126) {
				if (get(d, d->cfd, h, 2))
					return -1;
				left = (size_t)h[0] << 8 | h[1];
			}
			continue;
		}
		k = n < left ? n : left;
		if (get(d, d->cfd, out, k))
			return -1;
		out += k;
		n -= k;
		left -= k;
	}
	return 0;
}

/* ws mode up to the VeNCrypt Plain message: the request, the worker's
 * check (here: accepted), the 101, version, types, VeNCrypt, subtype. */
static int
ws_to_plain(struct door *d, int allow_plain)
{
	static const char req[] = "GET /websockify?token=t HTTP/1.1\r\n"
	    "Host: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
	    "Sec-WebSocket-Version: 13\r\nOrigin: http://h\r\n\r\n";
	char resp[512] = "";
	uint8_t b[16];
	size_t n = 0;

	door_open_mode(d, allow_plain, "test", NULL, VENCRYPT_MODE_WS);
	if (put(d, d->cfd, req, sizeof(req) - 1) || (spin(d), 0) ||
	    d->ev != VENCRYPT_WS_REQUEST || vencrypt_request(d->c) == NULL ||
	    strncmp(vencrypt_request(d->c), "GET /websockify", 15) != 0)
		return 0;
	d->ev = VENCRYPT_CONTINUE;
	vencrypt_ws_accept(d->c, clk());
	while (n < sizeof(resp) - 1 && strstr(resp, "\r\n\r\n") == NULL &&
	    get(d, d->cfd, resp + n, 1) == 0)
		n++;
	if (strstr(resp, "HTTP/1.1 101 ") != resp || strstr(resp,
	    "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=") == NULL)
		return 0;
	return ws_get(d, b, 12) == 0 && memcmp(b, "RFB 003.008\n", 12) == 0 &&
	    ws_put(d, "RFB 003.008\n", 12) == 0 && ws_get(d, b, 2) == 0 &&
	    b[0] == 1 && b[1] == 19 && ws_put(d, "\x13", 1) == 0 &&
	    ws_get(d, b, 2) == 0 && b[0] == 0 && b[1] == 2 &&
	    ws_put(d, "\0\2", 2) == 0 && ws_get(d, b, 6) == 0 && b[0] == 0 &&
	    b[1] == 1 && memcmp(b + 2, "\0\0\1\0", 4) == 0 &&
	    ws_put(d, "\0\0\1\0", 4) == 0;
}

/* VeNCrypt Plain inside one frame. */
static int
ws_plain(struct door *d, const char *user, const char *pw)
{
	uint8_t m[300];

	return ws_put(d, m, plain_msg(m, user, pw));
}

static void
test_websocket(void)
{
	static uint8_t big[100000], back[100000];
	struct door d;
	uint8_t r[64];
	size_t i, k;
	int ok = 1;

	tap_ok(ws_to_plain(&d, 1), "ws: request, 101, then RFB in frames: "
	    "VeNCrypt only (no VncAuth, plain allowed or not), subtype Plain");
	tap_ok(ws_plain(&d, "alice", "pw1") == 0 && (get(&d, d.cfd, r, 0), 1) &&
	    d.ev == VENCRYPT_NEED_INNER, "ws: the right password asks for "
	    "the library side");
	tap_ok(fake_library(&d) == 0 && ws_get(&d, r, 4) == 0 &&
	    memcmp(r, "\0\0\0\0", 4) == 0, "ws: the library gets the internal "
	    "password, the client SecurityResult OK in a frame");
	for (i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 13 + 1);
	tap_ok(put(&d, d.lfd, big, sizeof(big)) == 0 &&
	    ws_get(&d, back, sizeof(big)) == 0 &&
	    memcmp(big, back, sizeof(big)) == 0,
	    "ws: 100 kB library -> client arrive intact in frames");
	for (i = 0; i < sizeof(big) && ok; i += k) {
		k = sizeof(big) - i < 9000 ? sizeof(big) - i : 9000;
		ok = ws_put(&d, big + i, k) == 0 &&
		    get(&d, d.lfd, back + i, k) == 0;
	}
	tap_ok(ok && memcmp(big, back, sizeof(big)) == 0,
	    "ws: 100 kB client -> library in masked frames arrive unmasked");
	ok = put(&d, d.cfd, "\x81\x80\0\0\0\0", 6) == 0;	/* text */
	for (i = 0; i < 50 && d.c != NULL; i++)
		spin(&d);
	tap_ok(ok && d.c == NULL, "ws: a text frame ends the connection");
	door_close(&d);

	tap_ok(ws_to_plain(&d, 0) && ws_plain(&d, "alice", "wrong") == 0 &&
	    ws_get(&d, r, 8) == 0 && memcmp(r, "\0\0\0\1\0\0\0\x15", 8) == 0 &&
	    ws_get(&d, r, 21) == 0 && memcmp(r, "authentication failed", 21) == 0,
	    "ws: a wrong password gets SecurityResult failed with the reason");
	door_close(&d);
}

int
main(void)
{
	struct policy_error e;
	char err[256];
	const char *cr = "alice:pw1\n";

	signal(SIGPIPE, SIG_IGN);	/* as LibVNCServer sets it in the worker */
	slog_open("/dev/null", "test", "worker");
	tbucket_init(&bucket, 1000, 1000, clk());
	if (testcert_tls(&tls, err, sizeof(err)) != 0 ||
	    creds_parse(&creds, cr, strlen(cr), "t", &e) != POLICY_OK)
		tap_skip_all("cannot make a test certificate");
	test_login_and_relay();
	test_refusals();
	test_backoff();
	test_garbage();
	test_websocket();
	tls_ctx_free(tls);
	creds_free(creds);
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
