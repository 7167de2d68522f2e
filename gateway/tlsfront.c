/*
 * gateway/tlsfront.c — the tls process (see tlsfront.h): set-up, its
 * poll loop, and its side of the worker protocol (gateway/tlsipc.h).
 *
 * Trust: unprivileged, under the seccomp profile TLS from before its
 * first read.  Untrusted: every client byte (OpenSSL and vencrypt.c parse
 * them) and every worker message (the worker parses untrusted RFB; one
 * that breaks the protocol is treated as taken over: we exit).
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "gateway/preauth.h"
#include "gateway/ratelimit.h"
#include "gateway/slog.h"
#include "gateway/tls.h"
#include "gateway/tlsfront.h"
#include "gateway/tlsipc.h"
#include "gateway/vencrypt.h"
#include "gateway/vncscreen.h"
#include "sandbox/confine.h"
#include "sandbox/sandbox.h"

#define TF_MAX_PFD	(2 + 2 * TIPC_SLOTS)
#define TF_MAX_WAIT_MS	3600000

struct tf_conn {
	struct vencrypt	*c;		/* NULL: slot free */
	int		 want;		/* asked the worker, no answer yet */
	int		 wss;		/* https + websocket, not RFB */
};

struct tlsfront {
	const struct tlsfront_config *cfg;
	struct tls_ctx		*tls;
	struct tf_conn		 conn[TIPC_SLOTS];
	struct preauth		*pa;		/* failed logins per address */
	struct tbucket		 auth_bucket;	/* VeNCrypt logins, all
						   addresses: last resort */
	struct tbucket		 log_bucket;	/* refusal lines */
	unsigned long		 log_quiet;
	struct ipc_peer		 peer;		/* the worker */
	int			 sigfd;
	int			 stop;
	const char		*fatal;		/* why we end, for the log */
};

/* ---- talking to the worker ------------------------------------------ */

/* A message we cannot deliver means the worker is gone: end. */
static void
tf_send(struct tlsfront *tf, uint32_t type, const void *p, size_t len)
{
	if (ipc_send(tf->peer.sock, &tipc_proto, type, p, len, -1) != IPC_OK &&
	    tf->fatal == NULL)
		tf->fatal = "cannot write to the worker";
}

/* The connection is over: free it and give the worker its slot back. */
static void
tf_drop(struct tlsfront *tf, uint32_t slot)
{
	struct tipc_slot m = { slot };

	vencrypt_free(tf->conn[slot].c);
	tf->conn[slot].c = NULL;
	tf->conn[slot].want = tf->conn[slot].wss = 0;
	tf_send(tf, TIPC_CLOSED, &m, sizeof(m));
}

/* Logged in: ask the worker for the library; or (wss, before any
 * login) ask it to check the request's token and Origin. */
static void
tf_want(struct tlsfront *tf, uint32_t slot, int ws_request)
{
	struct vencrypt *c = tf->conn[slot].c;
	struct tipc_want *m;
	const char *req = NULL;
	static struct tipc_want buf;	/* 4 KiB: not on the stack */

	m = &buf;
	memset(m, 0, sizeof(*m));
	m->slot = slot;
	m->encrypted = (uint32_t)vencrypt_encrypted(c);
	snprintf(m->user, sizeof(m->user), "%s", vencrypt_user(c));
	if (ws_request && (req = vencrypt_request(c)) == NULL) {
		vencrypt_refuse(c, "bad websocket request", vencrypt_clock());
		return;
	}
	if (req != NULL &&
	    strlen(req) >= sizeof(m->request)) {
		vencrypt_refuse(c, "websocket request too long", vencrypt_clock());
		return;
	}
	if (req != NULL)
		memcpy(m->request, req, strlen(req) + 1);
	tf->conn[slot].want = 1;
	tf_send(tf, TIPC_WANT, m, sizeof(*m));
	explicit_bzero(m, sizeof(*m));
}

/* Act on what the front door asks for, until it asks for nothing. */
static void
tf_event(struct tlsfront *tf, uint32_t slot, enum vencrypt_event ev)
{
	struct vencrypt *c = tf->conn[slot].c;

	while (ev != VENCRYPT_CONTINUE) {
		if (ev == VENCRYPT_CLOSED) {
			tf_drop(tf, slot);
			return;
		}
		tf_want(tf, slot, ev == VENCRYPT_WS_REQUEST);
		if (tf->conn[slot].want)
			return;		/* the worker answers */
		ev = vencrypt_handle(c, vencrypt_clock());
	}
}

/* The slot a worker message names, if it is in the state it must be. */
static int
tf_slot(struct tlsfront *tf, uint32_t slot, int busy, int want)
{
	if (slot >= TIPC_SLOTS || (tf->conn[slot].c != NULL) != busy ||
	    tf->conn[slot].want != want) {
		tf->fatal = "worker named a slot in the wrong state";
		return -1;
	}
	return 0;
}

/* TIPC_CLIENT: a new connection that must speak TLS. */
static int
tf_answer_client(void *ctx, struct ipc_msg *msg)
{
	struct tlsfront *tf = ctx;
	struct tipc_client m;
	char addr[TIPC_ADDR_MAX];
	struct vencrypt_params prm = {
		.tls = tf->tls, .creds = tf->cfg->creds,
		.inner_password = tf->cfg->inner_password,
		.allow_plain = tf->cfg->allow_plain, .preauth = tf->pa,
		.auth_bucket = &tf->auth_bucket, .log_bucket = &tf->log_bucket,
		.log_quiet = &tf->log_quiet, .clock = vencrypt_clock,
	};
	uint64_t now = vencrypt_clock();

	memcpy(&m, msg->data, sizeof(m));
	if (tf_slot(tf, m.slot, 0, 0) != 0 || m.mode > TIPC_MODE_WS ||
	    ipc_str_get(addr, sizeof(addr), m.addr, sizeof(m.addr)) != 0) {
		tf->fatal = "bad client message from the worker";
		close(msg->fd);
		return -1;
	}
	if (vencrypt_backed_off(&prm, addr, now) ||
	    vencrypt_alloc(&tf->conn[m.slot].c, msg->fd, addr,
	    m.mode == TIPC_MODE_WSS ? VENCRYPT_MODE_WSS :
	    m.mode == TIPC_MODE_WS ? VENCRYPT_MODE_WS : VENCRYPT_MODE_RFB,
	    &prm, now) != 0) {
		close(msg->fd);
		tf_drop(tf, m.slot);
		return 0;
	}
	tf->conn[m.slot].wss = m.mode != TIPC_MODE_RFB;	/* ws or wss */
	tf_event(tf, m.slot, vencrypt_handle(tf->conn[m.slot].c, now));
	return 0;
}

/* The worker's answer to our TIPC_WANT on a slot: the connection, its
 * wait over; NULL (a violation) if we asked nothing there. */
static struct vencrypt *
tf_answered(struct tlsfront *tf, const struct ipc_msg *msg, uint32_t *slot)
{
	struct tipc_slot m;

	memcpy(&m, msg->data, sizeof(m));
	if (tf_slot(tf, m.slot, 1, 1) != 0)
		return NULL;
	tf->conn[m.slot].want = 0;
	*slot = m.slot;
	return tf->conn[m.slot].c;
}

/* The worker's answer to our TIPC_WANT on a slot: TIPC_INNER (the
 * library's end: relay from now on) or TIPC_WS_OK (the wss request's
 * token and Origin are good: answer the websocket handshake; the login
 * runs inside it). */
static int
tf_answer_want(struct tlsfront *tf, struct ipc_msg *msg, uint32_t type)
{
	struct vencrypt *c;
	uint32_t slot;
	uint64_t now = vencrypt_clock();

	if ((c = tf_answered(tf, msg, &slot)) == NULL) {
		if (msg->fd >= 0)
			close(msg->fd);
		return -1;
	}
	if (type == TIPC_INNER) {
		if (vencrypt_attach(c, msg->fd) != 0) {
			close(msg->fd);
			vencrypt_refuse(c, "the session's socket failed", now);
		}
	} else if (!tf->conn[slot].wss) {
		tf->fatal = "worker accepted a websocket request never sent";
		return -1;
	} else
		vencrypt_ws_accept(c, now);
	tf_event(tf, slot, vencrypt_handle(c, now));
	return 0;
}

static int
tf_answer_inner(void *ctx, struct ipc_msg *msg)
{
	return tf_answer_want(ctx, msg, TIPC_INNER);
}

static int
tf_answer_ws_ok(void *ctx, struct ipc_msg *msg)
{
	return tf_answer_want(ctx, msg, TIPC_WS_OK);
}

/* TIPC_REFUSE: the worker says no (session busy, websocket check), to
 * what we asked, or unasked (evicted from its pre-authentication
 * table, gateway/preauth.h). */
static int
tf_answer_refuse(void *ctx, struct ipc_msg *msg)
{
	struct tlsfront *tf = ctx;
	struct tipc_refuse m;
	char why[TIPC_REASON_MAX];
	struct vencrypt *c;
	uint64_t now = vencrypt_clock();

	memcpy(&m, msg->data, sizeof(m));
	if (m.slot < TIPC_SLOTS && tf->conn[m.slot].c == NULL)
		return 0;	/* an eviction crossed our TIPC_CLOSED */
	if (m.slot >= TIPC_SLOTS ||
	    tf_slot(tf, m.slot, 1, tf->conn[m.slot].want) != 0 ||
	    ipc_str_get(why, sizeof(why), m.reason, sizeof(m.reason)) != 0) {
		tf->fatal = "bad refusal from the worker";
		return -1;
	}
	c = tf->conn[m.slot].c;
	tf->conn[m.slot].want = 0;
	vencrypt_refuse(c, why, now);
	tf_event(tf, m.slot, vencrypt_handle(c, now));
	return 0;
}

/* What the worker may send us: one handler per type. */
static const struct ipc_handler tf_permit[] = {
	{ TIPC_CLIENT, tf_answer_client },
	{ TIPC_INNER, tf_answer_inner },
	{ TIPC_REFUSE, tf_answer_refuse },
	{ TIPC_WS_OK, tf_answer_ws_ok },
};

/* One message from the worker; anything wrong ends us. */
static void
tf_dispatch(struct tlsfront *tf)
{
	int st = ipc_dispatch(&tf->peer, tf, NULL);

	if (st == IPC_OK || tf->fatal != NULL)
		return;
	tf->fatal = st == IPC_EOF ? "the worker closed its socket" :
	    ipc_strerror(st);
}

/* ---- the loop ---------------------------------------------------------- */

/* Sleep until the nearest handshake or flush deadline (or an hour). */
static int
tf_timeout(const struct tlsfront *tf, uint64_t now)
{
	uint64_t t = 0, d;
	size_t i;

	for (i = 0; i < TIPC_SLOTS; i++)
		if (tf->conn[i].c != NULL &&
		    (d = vencrypt_deadline(tf->conn[i].c)) != 0 &&
		    (t == 0 || d < t))
			t = d;
	if (t == 0)
		return TF_MAX_WAIT_MS;
	return t <= now ? 0 : (int)((t - now + 999) / 1000);
}

/* Deadlines, and bytes OpenSSL holds that poll(2) cannot see. */
static void
tf_tick(struct tlsfront *tf, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < TIPC_SLOTS; i++)
		if (tf->conn[i].c != NULL)
			tf_event(tf, i, vencrypt_tick(tf->conn[i].c, now));
}

/* Poll the signalfd, the worker and every connection's descriptors;
 * owner[] says which slot each entry belongs to. */
static size_t
tf_pollfds(const struct tlsfront *tf, struct pollfd *pfd, int *owner)
{
	size_t n = 2, k, j;
	uint32_t i;

	pfd[0] = (struct pollfd){ tf->sigfd, POLLIN, 0 };
	pfd[1] = (struct pollfd){ tf->peer.sock, POLLIN, 0 };
	for (i = 0; i < TIPC_SLOTS; i++) {
		if (tf->conn[i].c == NULL)
			continue;
		k = vencrypt_pollfds(tf->conn[i].c, pfd + n, TF_MAX_PFD - n);
		for (j = 0; j < k; j++)
			owner[n + j] = (int)i;
		n += k;
	}
	return n;
}

/* One poll(2) for everything; connections first, then the worker, so a
 * slot the worker fills anew is never served with the old one's events. */
static int
tf_loop(struct tlsfront *tf)
{
	struct pollfd pfd[TF_MAX_PFD];
	int owner[TF_MAX_PFD], done[TIPC_SLOTS];
	struct signalfd_siginfo si;
	uint64_t now;
	size_t n, i;

	while (!tf->stop && tf->fatal == NULL) {
		now = vencrypt_clock();
		tf_tick(tf, now);
		n = tf_pollfds(tf, pfd, owner);
		if (poll(pfd, n, tf_timeout(tf, now)) < 0 && errno != EINTR)
			return -1;
		if (pfd[0].revents & POLLIN)
			while (read(tf->sigfd, &si, sizeof(si)) ==
			    (ssize_t)sizeof(si))
				tf->stop = 1;
		memset(done, 0, sizeof(done));
		for (i = 2; i < n; i++) {
			if (pfd[i].revents == 0 || done[owner[i]] ||
			    tf->conn[owner[i]].c == NULL)
				continue;
			done[owner[i]] = 1;
			tf_event(tf, (uint32_t)owner[i],
			    vencrypt_handle(tf->conn[owner[i]].c, vencrypt_clock()));
		}
		if (pfd[1].revents != 0)
			tf_dispatch(tf);
	}
	return 0;
}

/* ---- set-up ---------------------------------------------------------------- */

/* Everything that needs a file or the key, then the filter (fail
 * closed: any error ends us before a byte is read). */
static int
tf_setup(struct tlsfront *tf, const struct tlsfront_config *cfg)
{
	char err[256] = "";
	struct confine c;
	int st;

	tf->cfg = cfg;
	tf->peer = (struct ipc_peer){ cfg->ipc_fd, "worker", &tipc_proto,
	    tf_permit, sizeof(tf_permit) / sizeof(tf_permit[0]) };
	/* Nothing of our uid may read our memory (the worker runs as it):
	   non-dumpable since child_main's confine_apply. */
	/* (In the worker LibVNCServer ignored SIGPIPE for us.) */
	if ((tf->sigfd = vencrypt_signals()) < 0)
		return vencrypt_setup_failed("signals", strerror(errno));
	if (cfg->tls_cert == NULL || cfg->creds == NULL ||
	    cfg->inner_password == NULL)
		return vencrypt_setup_failed("tls", "no certificate or "
		    "credentials");
	st = tls_ctx_alloc(&tf->tls, cfg->tls_cert, cfg->tls_cert_len,
	    cfg->tls_key, cfg->tls_key_len, err, sizeof(err));
	explicit_bzero(cfg->tls_key, cfg->tls_key_len);
	if (st != TLS_OK)
		return vencrypt_setup_failed("tls", err[0] ? err : tls_strerror(st));
	if (preauth_alloc(&tf->pa) != PREAUTH_OK)
		return vencrypt_setup_failed("preauth", "out of memory");
	tbucket_init(&tf->auth_bucket, PREAUTH_LOGIN_RATE, PREAUTH_LOGIN_BURST,
	    vencrypt_clock());
	/* Four fifths of the session's refusal-line budget (5/s, bursts
	   of 20): the worker keeps the rest for its door. */
	tbucket_init(&tf->log_bucket, 4, 16, vencrypt_clock());
	vencrypt_prewarm(cfg->creds);
	confine_init(&c, "tls");
	c.profile = cfg->profile;
	if (confine_apply(&c, err, sizeof(err)) != CONFINE_OK)
		return vencrypt_setup_failed("sandbox", err);
	if (cfg->test_violate != NULL)
		sandbox_violate(cfg->test_violate);	/* test hook: dies */
	slog_event("tls_start", json_pack("{s:I, s:b, s:s}", "users",
	    (json_int_t)creds_count(cfg->creds), "allow_plain",
	    cfg->allow_plain, "sandbox", sandbox_mode_name()));
	return 0;
}

int
tlsfront_main(const struct tlsfront_config *cfg)
{
	struct tlsfront tf;
	uint32_t i;
	int st = 1;

	memset(&tf, 0, sizeof(tf));
	tf.sigfd = -1;
	slog_set_proc("tls");
	if (cfg != NULL && tf_setup(&tf, cfg) == 0 && tf_loop(&tf) == 0 &&
	    tf.fatal == NULL)
		st = 0;
	if (tf.fatal != NULL)
		slog_event("tls_stop", json_pack("{s:s}", "why", tf.fatal));
	for (i = 0; i < TIPC_SLOTS; i++)
		vencrypt_free(tf.conn[i].c);	/* logs relay_end */
	tls_ctx_free(tf.tls);
	preauth_free(tf.pa);
	return st;
}
