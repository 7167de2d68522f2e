/*
 * gateway/vencrypt.c — the front door's state machine and relay (see
 * vencrypt.h for the protocol).  Everything is non-blocking and bounded:
 * two capped buffers per connection (client -> server, server ->
 * client), messages parsed through common/buf.h, at most one message of
 * pre-TLS plaintext read at a time (so a pipelined ClientHello is never
 * swallowed).  Trust: unprivileged; parses untrusted client bytes and
 * LibVNCServer's (trusted) replies on the internal socketpair.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <rfb/rfbproto.h>	/* rfbEncryptBytes */

#include "common/buf.h"
#include "gateway/slog.h"
#include "gateway/vencrypt.h"
#include "gateway/vncscreen.h"
#include "gateway/websocket.h"

#define VC_IO_CHUNK		16384
#define VC_PUMP_ROUNDS		32
#define VC_REASON_MAX		256	/* a failure reason we forward */
#define RFB_VERSION_LEN		12

enum vc_state {
	VC_CLIENT_VERSION,	/* sent ours; waiting for the client's */
	VC_SECTYPE,		/* sent the types; waiting for the choice */
	VC_VC_VERSION,		/* sent VeNCrypt 0.2 */
	VC_VC_SUBTYPE,		/* sent the subtypes */
	VC_TLS_START,		/* sent "accepted": flush, then TLS */
	VC_TLS,			/* handshaking */
	VC_PLAIN,		/* waiting for user name and password */
	VC_WS_REQUEST,		/* wss: waiting for the HTTP request */
	VC_WS_CHECK,		/* wss: the worker checks token, Origin */
	VC_WANT_INNER,		/* caller opens the library side */
	VC_INNER_VERSION,	/* library side: its version */
	VC_INNER_TYPES,
	VC_INNER_CHALLENGE,
	VC_INNER_RESULT,
	VC_RELAY,
	VC_CLOSING,		/* flushing a refusal */
	VC_DEAD
};

struct vencrypt {
	struct vencrypt_params	 prm;
	enum vencrypt_mode	 mode;
	enum vc_state		 state;
	int			 fd;		/* the client */
	int			 ifd;		/* the library's peer, -1 */
	struct tls_conn		*tls;		/* NULL before TLS */
	int			 tls_done;
	int			 block_r;	/* last client read status */
	int			 block_w;	/* last client write status */
	int			 minor;		/* client's RFB 3.x */
	int			 plain;		/* client chose VncAuth */
	int			 client_eof;
	int			 broken;	/* a buffer overflowed: end */
	uint64_t		 t0, close_at;
	enum vc_state		 stage;		/* state the stage timer is for */
	uint64_t		 stage_t0;
	struct preauth_addr	 src;		/* the client's, as counted */
	struct wbuf		 up;		/* client -> us / library */
	struct wbuf		 down;		/* us / library -> client */
	struct wbuf		 iin;		/* library -> us (handshake) */
	struct wbuf		 iout;		/* us -> library (handshake) */
	char			 addr[64];
	char			 user[CREDS_USER_MAX + 1];
	char			 session[80];	/* front door: where it goes */
	uint64_t		 relayed_up;	/* bytes client -> library */
	uint64_t		 relayed_down;	/* bytes library -> client */
	uint64_t		 relay_t0;
	int			 ws;		/* wss: RFB inside frames */
	struct ws_decoder	 wsd;
	struct wbuf		 wsin;		/* client frames, raw */
	struct wbuf		 wsout;		/* frames to the client */
};

/* ---- small helpers -------------------------------------------------- */

/* Drop n bytes from the front of w, wiping what is freed (passwords
 * pass through these buffers). */
static void
vc_consume(struct wbuf *w, size_t n)
{
	if (w->len == 0)
		return;		/* w->d may still be NULL */
	if (n >= w->len) {
		explicit_bzero(w->d, w->len);
		w->len = 0;
		return;
	}
	memmove(w->d, w->d + n, w->len - n);
	explicit_bzero(w->d + w->len - n, n);
	w->len -= n;
}

static json_t *
vc_fields(const struct vencrypt *c)
{
	json_t *j = json_pack("{s:s}", "client", c->addr);

	if (c->user[0] != '\0')
		json_object_set_new(j, "user", json_string(c->user));
	if (c->session[0] != '\0')
		json_object_set_new(j, "session", json_string(c->session));
	if (c->tls_done) {
		json_object_set_new(j, "tls_version",
		    json_string(tls_version(c->tls)));
		json_object_set_new(j, "tls_cipher",
		    json_string(tls_cipher(c->tls)));
	}
	return j;
}

/* Log an event with the connection's fields plus a reason.  Anything a
 * stranger can cause by connecting is rate limited (a flood of bad
 * handshakes must not flood the log); logins are always logged. */
static void
vc_log(const struct vencrypt *c, const char *event, const char *reason)
{
	json_t *j;

	if (strcmp(event, "auth_ok") != 0 && c->prm.log_bucket != NULL &&
	    !tbucket_take(c->prm.log_bucket, c->prm.clock())) {
		(*c->prm.log_quiet)++;
		return;
	}
	j = vc_fields(c);
	if (reason != NULL)
		json_object_set_new(j, "reason", json_string(reason));
	if (c->prm.log_quiet != NULL && *c->prm.log_quiet > 0) {
		json_object_set_new(j, "suppressed",
		    json_integer((json_int_t)*c->prm.log_quiet));
		*c->prm.log_quiet = 0;
	}
	slog_event(event, j);
}

/* A refusal that is its address's doing: logged once per burst of that
 * address, with the count the previous burst left unwritten. */
static void
vc_log_burst(const struct vencrypt *c, const char *event, const char *reason,
    uint64_t now)
{
	unsigned long quiet = 0;
	char why[160];

	if (c->prm.preauth != NULL &&
	    !preauth_refusal(c->prm.preauth, &c->src, now, &quiet))
		return;
	snprintf(why, sizeof(why), "%s (and %lu more from this address since "
	    "the last line)", reason, quiet);
	vc_log(c, event, quiet > 0 ? why : reason);
}

/* Every write to a buffer goes through these: one that does not fit
 * marks the connection broken, and vc_finished() ends it. */
static void
vc_put(struct vencrypt *c, struct wbuf *w, const void *p, size_t n)
{
	if (wbuf_put(w, p, n) == BUF_OK || c->broken)
		return;
	c->broken = 1;
	vc_log(c, "client_refused", "a handshake buffer overflowed");
}

static void
vc_put_u8(struct vencrypt *c, struct wbuf *w, uint8_t v)
{
	vc_put(c, w, &v, 1);
}

static void
vc_put_u32(struct vencrypt *c, struct wbuf *w, uint32_t v)
{
	uint8_t b[4] = { v >> 24, v >> 16, v >> 8, v };

	vc_put(c, w, b, sizeof(b));
}

/* Take n bytes from the front of w through common/buf.h (the caller
 * waited for them; short is a bug, and ends the connection). */
static int
vc_get(struct vencrypt *c, struct wbuf *w, void *dst, size_t n)
{
	struct buf b;

	buf_init(&b, w->d, w->len);
	if (buf_get_bytes(&b, dst, n) != BUF_OK) {
		if (!c->broken)
			vc_log(c, "client_refused", "a handshake read was short");
		c->broken = 1;
		return -1;
	}
	vc_consume(w, n);
	return 0;
}

/* Queue an RFB failure for the client (what it can parse in the state
 * it is in), then close once it is flushed. */
static void
vc_fail(struct vencrypt *c, const char *reason, uint64_t now)
{
	size_t len = strlen(reason);

	wbuf_reset(&c->down);
	if (c->state == VC_CLIENT_VERSION) {
		vc_put_u32(c, &c->down, 0);	/* 3.3: "security type 0" */
		vc_put_u32(c, &c->down, (uint32_t)len);
		vc_put(c, &c->down, reason, len);
	} else if (c->state == VC_SECTYPE || c->state == VC_PLAIN ||
	    (c->state >= VC_WANT_INNER && c->state <= VC_INNER_RESULT &&
	    !c->plain)) {
		vc_put_u32(c, &c->down, 1);	/* SecurityResult failed */
		if (c->minor >= 8) {
			vc_put_u32(c, &c->down, (uint32_t)len);
			vc_put(c, &c->down, reason, len);
		}
	}
	c->state = VC_CLOSING;
	c->close_at = now + VENCRYPT_CLOSE_US;
}

/* ---- client I/O (plain socket before TLS, TLS after) --------------- */

static int
vc_sock_status(ssize_t n, int want)
{
	if (n > 0)
		return TLS_OK;
	if (n == 0)
		return TLS_EOF;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return want;
	return TLS_ERROR;
}

static int
vc_cread(struct vencrypt *c, void *b, size_t n, size_t *got)
{
	ssize_t r;

	if (c->tls != NULL)
		return tls_read(c->tls, b, n, got);
	r = recv(c->fd, b, n, MSG_DONTWAIT);
	*got = r > 0 ? (size_t)r : 0;
	return vc_sock_status(r, TLS_WANT_READ);
}

static int
vc_cwrite(struct vencrypt *c, const void *b, size_t n, size_t *put)
{
	ssize_t r;

	if (c->tls != NULL)
		return tls_write(c->tls, b, n, put);
	r = send(c->fd, b, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	*put = r > 0 ? (size_t)r : 0;
	return vc_sock_status(r, TLS_WANT_WRITE);
}

/* How many client bytes to read now: before TLS only the rest of the
 * current message; during the TLS handshake none (OpenSSL reads). */
static size_t
vc_read_room(const struct vencrypt *c)
{
	static const size_t msg[] = {
		[VC_CLIENT_VERSION] = RFB_VERSION_LEN, [VC_SECTYPE] = 1,
		[VC_VC_VERSION] = 2, [VC_VC_SUBTYPE] = 4,
	};

	if (c->client_eof || c->state == VC_TLS_START || c->state == VC_TLS ||
	    c->state == VC_WS_CHECK || c->state >= VC_CLOSING)
		return 0;
	if (c->ws)	/* frames: read while their payload has room */
		return c->up.len < c->up.max ? c->wsin.max - c->wsin.len : 0;
	if (c->tls == NULL && c->state <= VC_VC_SUBTYPE)
		return msg[c->state] > c->up.len ? msg[c->state] - c->up.len : 0;
	if (c->tls == NULL && c->state != VC_RELAY &&
	    c->state != VC_WS_REQUEST)
		return 0;	/* plain VncAuth: nothing before the relay */
	if (c->up.len >= c->up.max)
		return 0;
	return c->up.max - c->up.len;
}

/* wss: unwrap the client's frames into up (pings answered). */
static int
vc_ws_in(struct vencrypt *c)
{
	enum ws_status st;
	size_t used = 0;

	if (!c->ws || c->wsin.len == 0 || c->client_eof)
		return 0;
	st = ws_decode(&c->wsd, c->wsin.d, c->wsin.len, &c->up, &c->wsout,
	    &used);
	vc_consume(&c->wsin, used);
	if (st == WS_EBAD && c->state != VC_RELAY)
		vc_log(c, "client_refused", c->wsd.why);
	if (st != WS_OK)
		c->client_eof = 1;	/* a close frame, or a bad one */
	return used > 0 || st != WS_OK;
}

static int
vc_client_in(struct vencrypt *c)
{
	uint8_t b[VC_IO_CHUNK];
	size_t room = vc_read_room(c), got;
	int st, moved = vc_ws_in(c);

	if (room == 0)
		return moved;
	st = vc_cread(c, b, room < sizeof(b) ? room : sizeof(b), &got);
	c->block_r = st;
	if (st == TLS_OK) {
		vc_put(c, c->ws ? &c->wsin : &c->up, b, got);
		explicit_bzero(b, got);
		(void)vc_ws_in(c);
		return 1;
	}
	if (st == TLS_EOF || st == TLS_ERROR) {
		c->client_eof = 1;
		if (st == TLS_ERROR && c->state != VC_RELAY)
			vc_log(c, "client_refused", c->tls != NULL ?
			    tls_error(c->tls) : "connection error");
		return 1;
	}
	return moved;
}

/* wss: wrap what goes to the client in binary frames (whole frames
 * only, so a pong may follow any of them). */
static int
vc_ws_frame(struct vencrypt *c)
{
	size_t n;
	int moved = 0;

	while (c->ws && c->down.len > 0 &&
	    (n = ws_encode(c->down.d, c->down.len, &c->wsout)) > 0) {
		if (c->state == VC_RELAY)
			c->relayed_down += n;
		vc_consume(&c->down, n);
		moved = 1;
	}
	return moved;
}

/* Bytes still to go to the client. */
static size_t
vc_out_pending(const struct vencrypt *c)
{
	return c->down.len + c->wsout.len;
}

static int
vc_client_out(struct vencrypt *c)
{
	struct wbuf *out = c->ws || c->wsout.len > 0 ? &c->wsout : &c->down;
	size_t put;
	int st, moved = vc_ws_frame(c);

	if (out->len == 0 || c->state == VC_TLS || c->client_eof)
		return moved;
	st = vc_cwrite(c, out->d, out->len, &put);
	c->block_w = st;
	if (st == TLS_OK) {
		vc_consume(out, put);
		if (c->state == VC_RELAY && out == &c->down)
			c->relayed_down += put;
		return 1;
	}
	if (st == TLS_EOF || st == TLS_ERROR) {
		c->client_eof = 1;
		return 1;
	}
	return moved;
}

/* ---- library side I/O ------------------------------------------------ */

static int
vc_inner_in(struct vencrypt *c)
{
	uint8_t b[VC_IO_CHUNK];
	struct wbuf *to = c->state == VC_RELAY ? &c->down : &c->iin;
	size_t room;
	ssize_t n;

	if (c->ifd < 0 || c->state < VC_INNER_VERSION ||
	    c->state > VC_RELAY || (room = to->max - to->len) == 0)
		return 0;
	n = recv(c->ifd, b, room < sizeof(b) ? room : sizeof(b),
	    MSG_DONTWAIT);
	if (n > 0) {
		vc_put(c, to, b, (size_t)n);
		return 1;
	}
	if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK &&
	    errno != EINTR)) {
		close(c->ifd);		/* the library closed the client */
		c->ifd = -1;
		return 1;
	}
	return 0;
}

static int
vc_inner_out(struct vencrypt *c)
{
	struct wbuf *from = c->iout.len > 0 ? &c->iout :
	    c->state == VC_RELAY ? &c->up : NULL;
	ssize_t n;

	if (c->ifd < 0 || from == NULL || from->len == 0)
		return 0;
	n = send(c->ifd, from->d, from->len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n > 0) {
		vc_consume(from, (size_t)n);
		if (from == &c->up)
			c->relayed_up += (uint64_t)n;
		return 1;
	}
	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
		close(c->ifd);
		c->ifd = -1;
		return 1;
	}
	return 0;
}

/* ---- the client-facing handshake ----------------------------------- */

/* VncAuth is offered where plain VNC is allowed, and never inside wss:
 * its password would be the session's internal one, which nobody is
 * given (noVNC prefers VncAuth when it is offered). */
static int
vc_plain_offered(const struct vencrypt *c)
{
	return c->prm.allow_plain && !c->ws;
}

/* "RFB 003.00x\n": 3.7 and 3.8 (VeNCrypt needs a security-type list). */
static int
vc_client_version(struct vencrypt *c, uint64_t now)
{
	char v[RFB_VERSION_LEN + 1];
	int major, minor;
	char nl;

	if (vc_get(c, &c->up, v, RFB_VERSION_LEN) != 0)
		return 1;
	v[RFB_VERSION_LEN] = '\0';
	if (sscanf(v, "RFB %3d.%3d%c", &major, &minor, &nl) != 3 ||
	    nl != '\n' || major != 3) {
		vc_log(c, "client_refused", "not an RFB client");
		c->state = VC_DEAD;
		return 1;
	}
	if (minor < 7) {
		vc_log(c, "client_refused", "RFB 3.3 client: TLS needs 3.7+");
		vc_fail(c, "this server needs RFB 3.7 or later (VeNCrypt)",
		    now);
		return 1;
	}
	c->minor = minor >= 8 ? 8 : 7;
	vc_put_u8(c, &c->down, vc_plain_offered(c) ? 2 : 1);
	vc_put_u8(c, &c->down, RFB_SEC_VENCRYPT);
	if (vc_plain_offered(c))
		vc_put_u8(c, &c->down, RFB_SEC_VNCAUTH);
	c->state = VC_SECTYPE;
	return 1;
}

static enum vencrypt_event
vc_sectype(struct vencrypt *c, uint64_t now)
{
	uint8_t t;
	char why[128];

	if (vc_get(c, &c->up, &t, 1) != 0)
		return VENCRYPT_CONTINUE;
	if (t == RFB_SEC_VENCRYPT) {
		vc_put(c, &c->down, "\0\2", 2);	/* VeNCrypt 0.2 */
		c->state = VC_VC_VERSION;
		return VENCRYPT_CONTINUE;
	}
	if (t == RFB_SEC_VNCAUTH && vc_plain_offered(c)) {
		c->plain = 1;
		c->state = VC_WANT_INNER;
		return VENCRYPT_NEED_INNER;
	}
	snprintf(why, sizeof(why), "security type %u refused: only VeNCrypt "
	    "(TLS) is offered on this listener", t);
	vc_log(c, "auth_fail", why);
	vc_fail(c, why, now);
	return VENCRYPT_CONTINUE;
}

static void
vc_vc_version(struct vencrypt *c, uint64_t now)
{
	uint8_t v[2];
	int ok;

	if (vc_get(c, &c->up, v, sizeof(v)) != 0)
		return;
	ok = v[0] == 0 && v[1] == 2;
	vc_put_u8(c, &c->down, ok ? 0 : 0xff);
	if (!ok) {
		vc_log(c, "client_refused", "VeNCrypt version not 0.2");
		c->state = VC_CLOSING;
		c->close_at = now + VENCRYPT_CLOSE_US;
		return;
	}
	vc_put_u8(c, &c->down, 1);	/* inside wss, TLS is already up */
	vc_put_u32(c, &c->down, c->ws ? VENCRYPT_PLAIN : VENCRYPT_X509PLAIN);
	c->state = VC_VC_SUBTYPE;
}

static void
vc_vc_subtype(struct vencrypt *c, uint64_t now)
{
	uint8_t b[4];
	uint32_t st;

	if (vc_get(c, &c->up, b, sizeof(b)) != 0)
		return;
	st = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	    (uint32_t)b[2] << 8 | b[3];
	if (c->ws && st == VENCRYPT_PLAIN) {
		c->state = VC_PLAIN;	/* Plain has no acknowledgement */
		return;
	}
	if (c->ws || st != VENCRYPT_X509PLAIN) {
		vc_put_u8(c, &c->down, 0);
		vc_log(c, "auth_fail", "VeNCrypt subtype not offered");
		c->state = VC_CLOSING;
		c->close_at = now + VENCRYPT_CLOSE_US;
		return;
	}
	vc_put_u8(c, &c->down, 1);
	c->state = VC_TLS_START;
}

/* Start or continue the TLS handshake (after our plaintext is out). */
static int
vc_tls(struct vencrypt *c, uint64_t now)
{
	int st;

	if (c->state == VC_TLS_START) {
		if (c->down.len > 0)
			return 0;
		if (tls_conn_alloc(&c->tls, c->prm.tls, c->fd) != TLS_OK) {
			vc_log(c, "client_refused", "out of memory");
			c->state = VC_DEAD;
			return 1;
		}
		c->state = VC_TLS;
	}
	st = tls_handshake(c->tls);
	c->block_r = c->block_w = st;
	if (st == TLS_WANT_READ || st == TLS_WANT_WRITE)
		return 0;
	if (st != TLS_OK) {
		vc_log(c, "client_refused", tls_error(c->tls));
		c->state = VC_DEAD;
		return 1;
	}
	c->tls_done = 1;
	c->state = c->mode == VENCRYPT_MODE_WSS ? VC_WS_REQUEST : VC_PLAIN;
	vc_log(c, "tls_handshake", NULL);
	(void)now;
	return 1;
}

/* Printable user name for the log ("?" for anything odd). */
static void
vc_set_user(struct vencrypt *c, const uint8_t *u, uint32_t ulen)
{
	static const char ok[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
	    "qrstuvwxyz0123456789._@+-";
	uint32_t i;

	if (ulen == 0 || ulen > CREDS_USER_MAX) {
		snprintf(c->user, sizeof(c->user), "?");
		return;
	}
	for (i = 0; i < ulen; i++)
		if (u[i] == 0 || strchr(ok, u[i]) == NULL) {
			snprintf(c->user, sizeof(c->user), "?");
			return;
		}
	memcpy(c->user, u, ulen);
	c->user[ulen] = '\0';
}

/* May a password from this client be checked now?  Failed logins back
 * off per address (logged once per burst of refusals); the shared
 * bucket is the last resort against many addresses. */
static int
vc_may_try(struct vencrypt *c, uint64_t now)
{
	uint64_t wait;

	if (c->prm.preauth != NULL &&
	    !preauth_login_allowed(c->prm.preauth, &c->src, now, &wait)) {
		vc_log_burst(c, "auth_fail", "throttled: too many failed "
		    "logins from this address", now);
		return 0;
	}
	if (!tbucket_take(c->prm.auth_bucket, now)) {
		vc_log(c, "auth_fail", "throttled (all addresses)");
		return 0;
	}
	return 1;
}

/* VeNCrypt Plain: u32 ulen, u32 plen, user, password. */
static enum vencrypt_event
vc_plain(struct vencrypt *c, uint64_t now)
{
	uint8_t u[CREDS_USER_MAX], p[CREDS_PASS_MAX];
	uint32_t ulen, plen;
	struct buf b;
	int ok;

	buf_init(&b, c->up.d, c->up.len);
	if (buf_get_u32(&b, &ulen) != BUF_OK || buf_get_u32(&b, &plen) != BUF_OK)
		return VENCRYPT_CONTINUE;
	if (ulen > CREDS_USER_MAX || plen > CREDS_PASS_MAX) {
		vc_log(c, "auth_fail", "user name or password too long");
		vc_fail(c, "authentication failed", now);
		return VENCRYPT_CONTINUE;
	}
	if (buf_get_bytes(&b, u, ulen) != BUF_OK ||
	    buf_get_bytes(&b, p, plen) != BUF_OK)
		return VENCRYPT_CONTINUE;	/* not all here yet */
	vc_consume(&c->up, 8 + ulen + plen);	/* wipes the copy */
	vc_set_user(c, u, ulen);
	if (!vc_may_try(c, now)) {
		explicit_bzero(p, sizeof(p));
		vc_fail(c, "too many attempts; try again later", now);
		return VENCRYPT_CONTINUE;
	}
	ok = creds_check(c->prm.creds, (const char *)u, ulen,
	    (const char *)p, plen);
	explicit_bzero(p, sizeof(p));
	if (!ok) {
		if (c->prm.preauth != NULL)
			preauth_login_failed(c->prm.preauth, &c->src, now);
		vc_log(c, "auth_fail", "wrong user name or password");
		vc_fail(c, "authentication failed", now);
		return VENCRYPT_CONTINUE;
	}
	if (c->prm.preauth != NULL)
		preauth_login_ok(c->prm.preauth, &c->src);
	vc_log(c, "auth_ok", NULL);
	c->state = VC_WANT_INNER;
	return VENCRYPT_NEED_INNER;
}

/* wss: the whole HTTP request must arrive (and fit) first. */
static enum vencrypt_event
vc_ws_request(struct vencrypt *c)
{
	struct ws_request r;
	const char *why;

	if (c->up.len == 0)
		return VENCRYPT_CONTINUE;
	switch (ws_request_parse(c->up.d, c->up.len, &r)) {
	case WS_REQ_OK:
		if (r.len == c->up.len) {
			c->state = VC_WS_CHECK;
			return VENCRYPT_WS_REQUEST;
		}
		why = "bytes after the websocket request";
		break;
	case WS_REQ_PARTIAL:
		if (c->up.len < VENCRYPT_REQUEST_MAX)
			return VENCRYPT_CONTINUE;
		why = "websocket request too long";
		break;
	case WS_REQ_NOTGET:
		why = "not a websocket request";
		break;
	default:
		why = r.why;
		break;
	}
	vc_log(c, "client_refused", why);
	c->state = VC_DEAD;
	return VENCRYPT_CONTINUE;
}

/* ---- the library-facing handshake (we are its client) ---------------- */

/* The library's own failure (u32 length + reason), forwarded. */
static void
vc_inner_failed(struct vencrypt *c, struct buf *b, uint64_t now)
{
	char why[VC_REASON_MAX + 1] = "refused by the session";
	uint32_t len;

	if (buf_get_u32(b, &len) == BUF_OK && len > 0 && len <= VC_REASON_MAX &&
	    buf_get_bytes(b, why, len) == BUF_OK)
		why[len] = '\0';
	for (char *p = why; *p != '\0'; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
	vc_log(c, "client_refused", why);
	vc_fail(c, why, now);
}

/* Relaying from now on; what the library sent beyond the handshake
 * goes to the client. */
static void
vc_start_relay(struct vencrypt *c)
{
	c->relay_t0 = c->prm.clock();
	vc_put(c, &c->down, c->iin.d, c->iin.len);
	vc_consume(&c->iin, c->iin.len);
	c->state = VC_RELAY;
}

static void
vc_inner_types(struct vencrypt *c, uint64_t now)
{
	struct buf b;
	uint8_t n, t, vncauth = 0;
	size_t i;

	buf_init(&b, c->iin.d, c->iin.len);
	if (buf_get_u8(&b, &n) != BUF_OK)
		return;
	if (n == 0) {
		if (buf_remaining(&b) >= 4)
			vc_inner_failed(c, &b, now);
		return;
	}
	if (buf_remaining(&b) < n)
		return;
	for (i = 0; i < n; i++)
		if (buf_get_u8(&b, &t) == BUF_OK && t == RFB_SEC_VNCAUTH)
			vncauth = 1;
	vc_consume(&c->iin, 1 + (size_t)n);
	if (!vncauth) {
		vc_log(c, "client_refused", "session offers no VNC auth");
		vc_fail(c, "internal error", now);
		return;
	}
	vc_put_u8(c, &c->iout, RFB_SEC_VNCAUTH);
	if (c->plain)
		vc_start_relay(c);	/* the client answers the challenge */
	else
		c->state = VC_INNER_CHALLENGE;
}

static void
vc_inner_challenge(struct vencrypt *c)
{
	unsigned char ch[CHALLENGESIZE];
	char pw[9] = { 0 };

	if (vc_get(c, &c->iin, ch, sizeof(ch)) != 0)
		return;
	strncpy(pw, c->prm.inner_password, 8);
	rfbEncryptBytes(ch, pw);
	explicit_bzero(pw, sizeof(pw));
	vc_put(c, &c->iout, ch, sizeof(ch));
	c->state = VC_INNER_RESULT;
}

static void
vc_inner_result(struct vencrypt *c, uint64_t now)
{
	struct buf b;
	uint32_t r;

	buf_init(&b, c->iin.d, c->iin.len);
	if (buf_get_u32(&b, &r) != BUF_OK)
		return;
	if (r != 0) {
		if (buf_remaining(&b) >= 4)
			vc_inner_failed(c, &b, now);
		return;
	}
	vc_consume(&c->iin, 4);
	vc_put_u32(c, &c->down, 0);	/* SecurityResult: OK */
	vc_start_relay(c);
}

/* One step of whichever handshake is running; 1 if something changed. */
static int
vc_inner_step(struct vencrypt *c, uint64_t now)
{
	enum vc_state s0 = c->state;

	switch (c->state) {
	case VC_INNER_VERSION:
		if (c->iin.len < RFB_VERSION_LEN)
			break;
		vc_consume(&c->iin, RFB_VERSION_LEN);
		c->state = VC_INNER_TYPES;
		break;
	case VC_INNER_TYPES:
		vc_inner_types(c, now);
		break;
	case VC_INNER_CHALLENGE:
		if (c->iin.len >= CHALLENGESIZE)
			vc_inner_challenge(c);
		break;
	case VC_INNER_RESULT:
		vc_inner_result(c, now);
		break;
	default:
		break;
	}
	return c->state != s0;
}

static enum vencrypt_event
vc_client_step(struct vencrypt *c, uint64_t now)
{
	switch (c->state) {
	case VC_CLIENT_VERSION:
		if (c->up.len >= RFB_VERSION_LEN)
			vc_client_version(c, now);
		break;
	case VC_SECTYPE:
		if (c->up.len >= 1)
			return vc_sectype(c, now);
		break;
	case VC_VC_VERSION:
		if (c->up.len >= 2)
			vc_vc_version(c, now);
		break;
	case VC_VC_SUBTYPE:
		if (c->up.len >= 4)
			vc_vc_subtype(c, now);
		break;
	case VC_TLS_START:
	case VC_TLS:
		(void)vc_tls(c, now);
		break;
	case VC_PLAIN:
		return vc_plain(c, now);
	case VC_WS_REQUEST:
		return vc_ws_request(c);
	default:
		break;
	}
	return VENCRYPT_CONTINUE;
}

/* End of the connection: either side gone, or a refusal flushed. */
static int
vc_finished(struct vencrypt *c, uint64_t now)
{
	if (c->state == VC_DEAD || c->client_eof || c->broken)
		return 1;	/* nobody to talk to (or relay for) */
	if (c->state == VC_CLOSING)
		return vc_out_pending(c) == 0;
	if (c->state == VC_RELAY && c->ifd < 0) {
		if (c->close_at == 0)	/* a client that never reads */
			c->close_at = now + VENCRYPT_CLOSE_US;
		return vc_out_pending(c) == 0;	/* flushed what it said */
	}
	if (c->state >= VC_INNER_VERSION && c->ifd < 0) {
		vc_log(c, "client_refused", "the session closed the "
		    "connection");
		vc_fail(c, "session busy", now);
	}
	return 0;
}

/* The handshake stage's deadline (each message, the TLS handshake, the
 * password a person types), never past the whole handshake's. */
static uint64_t
vc_stage_deadline(const struct vencrypt *c)
{
	uint64_t d = c->stage_t0 + (c->stage == VC_PLAIN ?
	    VENCRYPT_PASSWORD_US : VENCRYPT_STAGE_US);

	return d < c->t0 + VENCRYPT_HANDSHAKE_US ? d :
	    c->t0 + VENCRYPT_HANDSHAKE_US;
}

static const char *
vc_timeout_reason(enum vc_state s)
{
	switch (s) {
	case VC_CLIENT_VERSION:	return "handshake timeout (RFB version)";
	case VC_SECTYPE:	return "handshake timeout (security type)";
	case VC_VC_VERSION:
	case VC_VC_SUBTYPE:	return "handshake timeout (VeNCrypt)";
	case VC_TLS_START:
	case VC_TLS:		return "handshake timeout (TLS)";
	case VC_PLAIN:		return "handshake timeout (user name and "
				    "password)";
	case VC_WS_REQUEST:	return "handshake timeout (websocket request)";
	case VC_WS_CHECK:	return "handshake timeout (websocket check)";
	default:		return "handshake timeout (session)";
	}
}

static enum vencrypt_event vc_handle(struct vencrypt *c, uint64_t now);

enum vencrypt_event
vencrypt_handle(struct vencrypt *c, uint64_t now)
{
	enum vencrypt_event ev = vc_handle(c, now);

	if (c->state != c->stage) {	/* a new stage: its own deadline */
		c->stage = c->state;
		c->stage_t0 = now;
	}
	return ev;
}

static enum vencrypt_event
vc_handle(struct vencrypt *c, uint64_t now)
{
	enum vencrypt_event ev = VENCRYPT_CONTINUE;
	enum vc_state s0;
	int moved, i;

	for (i = 0; i < VC_PUMP_ROUNDS; i++) {
		s0 = c->state;
		moved = vc_client_out(c);
		moved |= vc_client_in(c);
		if (c->state < VC_WANT_INNER)
			ev = vc_client_step(c, now);
		moved |= vc_inner_out(c);
		moved |= vc_inner_in(c);
		moved |= vc_inner_step(c, now);
		if (vc_finished(c, now)) {
			if (c->tls != NULL && !c->client_eof)
				tls_shutdown(c->tls);
			c->state = VC_DEAD;
			return VENCRYPT_CLOSED;
		}
		if (ev != VENCRYPT_CONTINUE)
			return ev;
		if (!moved && c->state == s0)
			break;
	}
	return VENCRYPT_CONTINUE;
}

/* ---- the caller's side ------------------------------------------------ */

int
vencrypt_alloc(struct vencrypt **cp, int fd, const char *addr,
    enum vencrypt_mode mode, const struct vencrypt_params *prm, uint64_t now)
{
	struct vencrypt *c;

	*cp = NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return -1;
	c->prm = *prm;
	c->mode = mode;
	c->fd = fd;
	c->ifd = -1;
	c->t0 = c->stage_t0 = now;
	snprintf(c->addr, sizeof(c->addr), "%s", addr);
	(void)preauth_addr_parse(&c->src, addr);	/* else "unknown" */
	wbuf_init(&c->up, VENCRYPT_UP_MAX);
	wbuf_init(&c->down, VENCRYPT_DOWN_MAX);
	wbuf_init(&c->iin, 4096);
	wbuf_init(&c->iout, 64);
	wbuf_init(&c->wsin, VENCRYPT_UP_MAX);
	wbuf_init(&c->wsout, VENCRYPT_WS_OUT_MAX);
	if (mode == VENCRYPT_MODE_WSS)
		c->state = VC_TLS_START;
	else if (mode == VENCRYPT_MODE_WS)
		c->state = VC_WS_REQUEST;	/* no TLS: the request first */
	else {
		c->state = VC_CLIENT_VERSION;
		vc_put(c, &c->down, "RFB 003.008\n", RFB_VERSION_LEN);
	}
	c->stage = c->state;
	*cp = c;
	return 0;
}

void
vencrypt_free(struct vencrypt *c)
{
	json_t *j;

	if (c == NULL)
		return;
	if (c->relay_t0 != 0) {	/* what passed, for the audit trail */
		j = vc_fields(c);
		json_object_set_new(j, "bytes_up", json_integer(
		    (json_int_t)c->relayed_up));
		json_object_set_new(j, "bytes_down", json_integer(
		    (json_int_t)c->relayed_down));
		json_object_set_new(j, "seconds", json_real((double)(
		    c->prm.clock() - c->relay_t0) / 1e6));
		slog_event("relay_end", j);
	}
	tls_conn_free(c->tls);
	if (c->fd >= 0)
		close(c->fd);
	if (c->ifd >= 0)
		close(c->ifd);
	wbuf_free(&c->up);
	wbuf_free(&c->down);
	wbuf_free(&c->iin);
	wbuf_free(&c->iout);
	wbuf_free(&c->wsin);
	wbuf_free(&c->wsout);
	explicit_bzero(c, sizeof(*c));
	free(c);
}

/* Client events: what the last blocked TLS call waits for. */
static short
vc_client_events(const struct vencrypt *c)
{
	short ev = 0;

	if (c->client_eof)
		return 0;
	if (c->state == VC_TLS)
		return c->block_r == TLS_WANT_WRITE ? POLLOUT : POLLIN;
	if (vc_read_room(c) > 0)
		ev |= c->block_r == TLS_WANT_WRITE ? POLLOUT : POLLIN;
	if (vc_out_pending(c) > 0 || c->state == VC_TLS_START)
		ev |= c->block_w == TLS_WANT_READ ? POLLIN : POLLOUT;
	return ev;
}

size_t
vencrypt_pollfds(const struct vencrypt *c, struct pollfd *pfd, size_t max)
{
	size_t n = 0;
	short ev;

	if (n < max && (ev = vc_client_events(c)) != 0)
		pfd[n++] = (struct pollfd){ c->fd, ev, 0 };
	if (c->ifd >= 0 && n < max) {
		ev = 0;
		if (c->state != VC_RELAY || c->down.len < c->down.max)
			ev |= POLLIN;
		if (c->iout.len > 0 || (c->state == VC_RELAY && c->up.len > 0))
			ev |= POLLOUT;
		pfd[n++] = (struct pollfd){ c->ifd, ev, 0 };
	}
	return n;
}

int
vencrypt_owns(const struct vencrypt *c, int fd)
{
	return fd >= 0 && (fd == c->fd || fd == c->ifd);
}

uint64_t
vencrypt_deadline(const struct vencrypt *c)
{
	if (c->state == VC_CLOSING || c->close_at != 0)
		return c->close_at;
	if (c->state == VC_RELAY)
		return c->tls != NULL && tls_pending(c->tls) &&
		    vc_read_room(c) > 0 ? c->t0 : 0;
	return vc_stage_deadline(c);
}

enum vencrypt_event
vencrypt_tick(struct vencrypt *c, uint64_t now)
{
	if ((c->state == VC_CLOSING || c->close_at != 0) && now >= c->close_at)
		return VENCRYPT_CLOSED;
	if (c->state < VC_RELAY && now >= vc_stage_deadline(c)) {
		vc_log_burst(c, "client_refused", vc_timeout_reason(c->stage),
		    now);
		return VENCRYPT_CLOSED;
	}
	/* OpenSSL may hold decrypted bytes poll(2) cannot see. */
	if (c->tls != NULL && tls_pending(c->tls) && vc_read_room(c) > 0)
		return vencrypt_handle(c, now);
	return VENCRYPT_CONTINUE;
}

int
vencrypt_attach(struct vencrypt *c, int fd)
{
	ssize_t n;

	c->ifd = fd;
	vc_put(c, &c->iout, "RFB 003.008\n", RFB_VERSION_LEN);
	c->state = VC_INNER_VERSION;
	n = send(fd, c->iout.d, c->iout.len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n < 0 || (size_t)n != c->iout.len) {
		c->ifd = -1;		/* still the caller's */
		c->state = VC_WANT_INNER;
		wbuf_reset(&c->iout);
		return -1;
	}
	vc_consume(&c->iout, (size_t)n);
	return 0;
}

void
vencrypt_ws_accept(struct vencrypt *c, uint64_t now)
{
	static const char bad[] = "HTTP/1.1 400 Bad Request\r\n"
	    "Connection: close\r\n\r\n";
	char resp[WS_RESPONSE_MAX];
	struct ws_request r;
	const char *why = "bad websocket request";

	if (c->state == VC_WS_CHECK &&
	    ws_request_parse(c->up.d, c->up.len, &r) == WS_REQ_OK)
		why = ws_response(&r, resp, sizeof(resp));
	vc_consume(&c->up, c->up.len);
	if (why != NULL) {
		vc_log(c, "client_refused", why);
		vc_put(c, &c->down, bad, sizeof(bad) - 1);
		c->state = VC_CLOSING;
		c->close_at = now + VENCRYPT_CLOSE_US;
		return;
	}
	vc_put(c, &c->wsout, resp, strlen(resp));
	c->ws = 1;
	c->state = VC_CLIENT_VERSION;	/* RFB, in frames from now on */
	vc_put(c, &c->down, "RFB 003.008\n", RFB_VERSION_LEN);
}

void
vencrypt_refuse(struct vencrypt *c, const char *reason, uint64_t now)
{
	vc_log(c, "client_refused", reason);
	if ((c->mode == VENCRYPT_MODE_RFB || c->ws) && !c->plain &&
	    c->ifd < 0)
		vc_fail(c, reason, now);	/* SecurityResult + reason */
	else
		c->state = VC_DEAD;
}

char *
vencrypt_request(struct vencrypt *c)
{
	const char *s;

	if (c->state != VC_WS_CHECK || wbuf_cstr(&c->up, &s) != BUF_OK)
		return NULL;
	return (char *)c->up.d;
}

const char *
vencrypt_addr(const struct vencrypt *c)
{
	return c->addr;
}

const char *
vencrypt_user(const struct vencrypt *c)
{
	return c->user;
}

int
vencrypt_attached(const struct vencrypt *c)
{
	return c->ifd >= 0 || c->state >= VC_INNER_VERSION;
}

int
vencrypt_encrypted(const struct vencrypt *c)
{
	return c->tls != NULL;
}

void
vencrypt_set_creds(struct vencrypt *c, const struct creds *creds)
{
	c->prm.creds = creds;
}

void
vencrypt_set_session(struct vencrypt *c, const char *inner_password,
    const char *session)
{
	c->prm.inner_password = inner_password;
	snprintf(c->session, sizeof(c->session), "%s", session);
}

int
vencrypt_backed_off(const struct vencrypt_params *prm, const char *addr,
    uint64_t now)
{
	struct preauth_addr src;
	unsigned long quiet;
	uint64_t wait;
	char a[PREAUTH_ADDR_STR];

	(void)preauth_addr_parse(&src, addr);
	if (preauth_login_allowed(prm->preauth, &src, now, &wait))
		return 0;
	if (preauth_refusal(prm->preauth, &src, now, &quiet) &&
	    tbucket_take(prm->log_bucket, now)) {
		preauth_addr_str(&src, a, sizeof(a));
		slog_event("client_refused", json_pack("{s:s, s:s, s:s, s:I, "
		    "s:I, s:f}", "client", addr, "address", a, "reason",
		    "too many failed logins from this address: it must wait",
		    "suppressed", (json_int_t)*prm->log_quiet,
		    "address_suppressed", (json_int_t)quiet,
		    "wait_seconds", (double)wait / 1e6));
		*prm->log_quiet = 0;
	}
	return 1;
}

/* ---- what the two front door processes share ------------------------- */

uint64_t
vencrypt_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int
vencrypt_signals(void)
{
	sigset_t set;

	/* OpenSSL writes to client sockets with write(2): a client that
	   vanished must cost us EPIPE, not the process. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return -1;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
		return -1;
	return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

void
vencrypt_prewarm(const struct creds *creds)
{
	vnc_des_warm_up();
	json_object_seed(0);
	(void)creds_check(creds, "", 0, "", 0);
}

int
vencrypt_setup_failed(const char *what, const char *why)
{
	slog_event("setup_failed", json_pack("{s:s, s:s}", "what", what,
	    "error", why));
	return -1;
}
