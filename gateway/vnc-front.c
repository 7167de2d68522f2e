/*
 * gateway/vnc-front.c — the worker's side of the TLS front door: a
 * connection the door (vnc-door.c) hands to the tls process
 * (gateway/tlsfront.c, the protocol in gateway/tlsipc.h) by slot, the
 * tls process's questions (a wss request to check, a login that wants
 * a role) and the relay socketpair whose far end it serves.  Trust:
 * unprivileged; the tls process's messages are checked like a peer's.
 */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>
#include <rfb/rfb.h>

#include "common/ipc.h"
#include "gateway/preauth.h"
#include "gateway/slog.h"
#include "gateway/tlsipc.h"
#include "gateway/vnc-int.h"
#include "gateway/websocket.h"

/* ---- the TLS front door: handed to the tls process -------------------- */

/*
 * A connection that must speak TLS (or, a ws:// request on a TLS session
 * where plain VNC is allowed, log in with the credentials) goes,
 * descriptor and all, to the tls
 * process (gateway/tlsfront.c, the protocol in gateway/tlsipc.h), which
 * holds the key and the credentials; this process never does.  It asks
 * back when a wss request is complete (we check the token and Origin,
 * before any login) and once the user has logged in (we check that a
 * role is free) and answer with one end of a socketpair whose other end
 * the library serves: plain RFB, also for wss (the tls process does the
 * websocket).  Its send buffer holds a whole raw frame, so the library
 * rarely waits on the relay.
 */
_Static_assert(VNC_MAX_FRONT <= TIPC_SLOTS, "one tls slot per front entry");

/* The tls process broke the protocol or is gone: the worker must end
 * (the supervisor ends the session when the tls process exits). */
static void
vnc_tls_fatal(struct vnc *v, const char *why)
{
	if (v->tls_fatal == NULL)
		v->tls_fatal = why;
}

/* The door hands a connection to the tls process (VeNCrypt or wss). */
void
vnc_front_take(struct vnc *v, struct vnc_door *d, enum tipc_mode mode)
{
	struct tipc_client m;
	int i;

	for (i = 0; i < VNC_MAX_FRONT && v->front[i].state != FRONT_FREE; i++)
		;
	if (i == VNC_MAX_FRONT || v->tls_fatal != NULL) {
		vnc_refused(v, d->addr, "session busy");
		vnc_door_close(v, d);
		return;
	}
	memset(&m, 0, sizeof(m));
	m.slot = (uint32_t)i;
	m.mode = (uint32_t)mode;
	snprintf(m.addr, sizeof(m.addr), "%s", d->addr);
	if (ipc_send(v->prm.tls_ipc, &tipc_proto, TIPC_CLIENT, &m, sizeof(m),
	    d->fd) != IPC_OK) {
		vnc_tls_fatal(v, "cannot reach the tls process");
		vnc_refused(v, d->addr, "TLS front door unavailable");
		vnc_door_close(v, d);
		return;
	}
	v->front[i].state = FRONT_TLS;
	v->front[i].wss = mode != TIPC_MODE_RFB;	/* ws or wss */
	snprintf(v->front[i].addr, sizeof(v->front[i].addr), "%s", d->addr);
	v->front[i].src = d->src;
	v->front[i].preauth_id = d->preauth_id;	/* still pre-auth there */
	d->preauth_id = 0;
	vnc_door_close(v, d);	/* the tls process has its own copy */
}

/* Say no to the tls process; it tells the client and closes. */
void
vnc_front_refuse(struct vnc *v, uint32_t slot, const char *why)
{
	struct tipc_refuse r;

	memset(&r, 0, sizeof(r));
	r.slot = slot;
	snprintf(r.reason, sizeof(r.reason), "%s", why);
	if (ipc_send(v->prm.tls_ipc, &tipc_proto, TIPC_REFUSE, &r, sizeof(r),
	    -1) != IPC_OK)
		vnc_tls_fatal(v, "cannot reach the tls process");
}

/* The library's side for a logged-in client: a socketpair; the far end
 * goes to the tls process, ours waits for its first bytes. */
static const char *
vnc_front_inner(struct vnc *v, uint32_t slot)
{
	struct tipc_slot m = { slot };
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
	    sv) != 0)
		return "socketpair failed";
	(void)setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &v->relay_sndbuf,
	    sizeof(v->relay_sndbuf));
	if (sv[1] >= FD_SETSIZE) {
		close(sv[0]);
		close(sv[1]);
		return "descriptor limit";
	}
	if (ipc_send(v->prm.tls_ipc, &tipc_proto, TIPC_INNER, &m, sizeof(m),
	    sv[0]) != IPC_OK) {
		close(sv[0]);
		close(sv[1]);
		vnc_tls_fatal(v, "cannot reach the tls process");
		return "TLS front door unavailable";
	}
	close(sv[0]);
	v->front[slot].ifd = sv[1];
	v->front[slot].state = FRONT_INNER;
	return NULL;
}

/* A wss request, before any login: its token and Origin.  The slot
 * stays pre-authentication (and evictable) while the user logs in. */
static void
vnc_front_ws_check(struct vnc *v, uint32_t slot, char *req)
{
	struct tipc_slot m = { slot };
	struct ws_request r;
	const char *why;

	switch (ws_request_parse(req, strlen(req), &r)) {
	case WS_REQ_OK:
		why = vnc_ws_check(v, &r);
		break;
	case WS_REQ_BAD:
		why = r.why;
		break;
	default:
		why = "not a websocket request";
	}
	if (why != NULL) {
		vnc_front_refuse(v, slot, why);
		return;
	}
	v->front[slot].ws_ok = 1;
	if (ipc_send(v->prm.tls_ipc, &tipc_proto, TIPC_WS_OK, &m, sizeof(m),
	    -1) != IPC_OK)
		vnc_tls_fatal(v, "cannot reach the tls process");
}

/* TIPC_WANT: a client logged in, or (wss) sent a whole request.  A wss
 * login without a checked request, or a request twice, or one from a
 * native client, is a violation. */
static int
vnc_answer_want(void *ctx, struct ipc_msg *msg)
{
	struct vnc *v = ctx;
	static struct tipc_want m;	/* 4 KiB: not on the stack */
	struct vnc_front *f;
	const char *why = NULL;

	memcpy(&m, msg->data, sizeof(m));
	if (m.slot < VNC_MAX_FRONT && v->front[m.slot].state == FRONT_EVICTED)
		return 0;	/* crossed our refusal: it closes */
	if (m.slot >= VNC_MAX_FRONT || v->front[m.slot].state != FRONT_TLS ||
	    memchr(m.user, '\0', sizeof(m.user)) == NULL ||
	    memchr(m.request, '\0', sizeof(m.request)) == NULL ||
	    strlen(m.user) > CREDS_USER_MAX)
		return -1;
	f = &v->front[m.slot];
	if (m.request[0] != '\0') {
		if (!f->wss || f->ws_ok || m.user[0] != '\0')
			return -1;
		vnc_front_ws_check(v, m.slot, m.request);
		explicit_bzero(&m, sizeof(m));
		return 0;
	}
	if (f->wss && (!f->ws_ok || m.user[0] == '\0'))
		return -1;
	memcpy(f->user, m.user, strlen(m.user) + 1);
	if (f->user[0] != '\0') {	/* logged in at the front door */
		preauth_release(v->pa, f->preauth_id);
		f->preauth_id = 0;
	}			/* else VncAuth: the library's peer counts */
	f->encrypted = m.encrypted != 0;
	if (!vnc_role_free(v))
		why = "session busy";
	if (why == NULL)
		why = vnc_front_inner(v, m.slot);
	if (why != NULL)
		vnc_front_refuse(v, m.slot, why);
	explicit_bzero(&m, sizeof(m));
	return 0;
}

/* On the timeline (and so in the recording and `session report`): a
 * connection that never logged in; within the refusals' budget, as a
 * stranger causes it by connecting. */
static void
vnc_front_closed(struct vnc *v, const char *addr)
{
	if (!tbucket_take(&v->refuse_bucket, vnc_now(v))) {
		v->refused_quiet++;
		return;
	}
	slog_event("front_closed", json_pack("{s:s, s:s, s:I}", "client", addr,
	    "reason", "closed at the TLS front door before a login (the tls "
	    "process's auth_fail, if any, says why)", "suppressed",
	    (json_int_t)v->refused_quiet));
	v->refused_quiet = 0;
}

/* TIPC_CLOSED: the tls process is done with a connection. */
static int
vnc_answer_closed(void *ctx, struct ipc_msg *msg)
{
	struct vnc *v = ctx;
	struct tipc_slot m;
	struct vnc_front *f;

	memcpy(&m, msg->data, sizeof(m));
	if (m.slot >= VNC_MAX_FRONT || v->front[m.slot].state == FRONT_FREE)
		return -1;
	f = &v->front[m.slot];
	if (f->state == FRONT_TLS)
		vnc_front_closed(v, f->addr);
	if (f->ifd >= 0)
		close(f->ifd);
	preauth_release(v->pa, f->preauth_id);
	memset(f, 0, sizeof(*f));
	f->ifd = -1;
	return 0;
}

/* What the tls process may send us: one handler per type. */
static const struct ipc_handler vnc_tls_permit[] = {
	{ TIPC_WANT, vnc_answer_want },
	{ TIPC_CLOSED, vnc_answer_closed },
};

/* One message from the tls process; anything wrong ends the worker. */
void
vnc_tls_dispatch(struct vnc *v)
{
	const struct ipc_peer peer = { v->prm.tls_ipc, "tls", &tipc_proto,
	    vnc_tls_permit, sizeof(vnc_tls_permit) / sizeof(vnc_tls_permit[0]) };
	int st = ipc_dispatch(&peer, v, NULL);

	if (st == IPC_EOF)
		vnc_tls_fatal(v, "the tls process closed its socket");
	else if (st == IPC_EHANDLER)
		vnc_tls_fatal(v, "the tls process named a slot in the wrong "
		    "state");
	else if (st != IPC_OK)
		vnc_tls_fatal(v, ipc_strerror(st));
}

/* The tls process wrote its first bytes into the pair (our RFB version
 * or the wss request): LibVNCServer's websocket sniff finds them at
 * once, so rfbNewClient never waits. */
void
vnc_front_attach(struct vnc *v, struct vnc_front *f)
{
	int fd = f->ifd;

	f->ifd = -1;
	f->state = FRONT_LIBRARY;
	v->handing_addr = f->addr;
	v->handing_user = f->user;
	v->handing_tls = f->encrypted;
	v->handing_ws = f->wss;
	v->handing_src = &f->src;
	v->handing_pa = f->preauth_id;	/* wss, VncAuth: still pre-auth */
	f->preauth_id = 0;
	(void)rfbNewClient(v->screen, fd);	/* closes fd on refusal */
	preauth_release(v->pa, v->handing_pa);	/* if refused */
	v->handing_addr = v->handing_user = NULL;
	v->handing_tls = v->handing_ws = 0;
	v->handing_src = NULL;
	v->handing_pa = 0;
}

/* Size the relays' library-side send buffer: a raw full frame. */
void
vnc_front_setup(struct vnc *v)
{
	size_t frame = (size_t)v->prm.width * v->prm.height * 4 + 65536;
	int sv[2], got = 0, i;
	socklen_t len = sizeof(got);

	for (i = 0; i < VNC_MAX_FRONT; i++)
		v->front[i].ifd = -1;
	v->relay_sndbuf = frame > INT32_MAX / 2 ? INT32_MAX / 2 : (int)frame;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0) {
		(void)setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &v->relay_sndbuf,
		    sizeof(v->relay_sndbuf));
		(void)getsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &got, &len);
		close(sv[0]);
		close(sv[1]);
	}
	slog_event("front_door", json_pack("{s:b, s:b, s:I, s:I, s:I, s:b, "
	    "s:s}", "tls", 1, "allow_plain", v->prm.allow_plain,
	    "users", (json_int_t)v->prm.tls_users,
	    "frame_bytes", (json_int_t)frame, "relay_sndbuf", (json_int_t)got,
	    "relay_fits_frame", (size_t)got >= frame, "key_holder", "tls"));
}
