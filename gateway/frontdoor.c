/*
 * gateway/frontdoor.c — the front door (see frontdoor.h): set-up, the
 * table of live sessions the parent keeps it told of, the credentials
 * table built from it, the connections, and its poll loop.
 *
 * Trust: unprivileged, under the seccomp profile FRONTDOOR from before
 * its first read.  Untrusted: every client byte (OpenSSL, vencrypt.c
 * and websocket.c parse them).  The parent's messages are checked in
 * form; one that breaks the protocol ends us (the parent then stops every
 * session).  The workers behind us are trusted as a session's tls
 * process trusts its worker: their RFB replies are parsed bounded.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "common/secret.h"
#include "gateway/dooripc.h"
#include "gateway/frontdoor.h"
#include "gateway/preauth.h"
#include "gateway/ratelimit.h"
#include "gateway/slog.h"
#include "gateway/tls.h"
#include "gateway/vencrypt.h"
#include "gateway/vncscreen.h"
#include "gateway/websocket.h"
#include "sandbox/confine.h"
#include "sandbox/sandbox.h"

#define FD_MAX_PFD	(3 + 2 * FRONTDOOR_MAX_CONNS)
#define FD_MAX_WAIT_MS	3600000
#define FD_NONE		(-1)

struct fd_session {
	int		 live;
	char		 id[STORE_ID_MAX];
	char		 recipient[STORE_ID_MAX];
	char		 hash[DOOR_HASH_MAX];
	char		 inner[DOOR_PASSWORD_MAX];
	char		 token[PIPC_TOKEN_MAX];
	struct sockaddr_storage up;
	socklen_t	 uplen;
};

enum fd_stage {
	FD_FREE,
	FD_SNIFF,		/* accepted: RFB (silence) or a ClientHello? */
	FD_DOOR,		/* vencrypt runs the handshake */
	FD_CONNECTING,		/* logged in: connecting to the worker */
	FD_RELAY		/* attached: vencrypt relays */
};

struct fd_conn {
	enum fd_stage	 stage;
	int		 fd;		/* the client, until vencrypt has it */
	int		 upfd;		/* FD_CONNECTING: the worker */
	uint64_t	 t0;
	char		 addr[64];
	struct vencrypt	*c;
	int		 session;	/* index, or FD_NONE */
	int		 ws_session;	/* wss: the token's session */
	uint32_t	 preauth_id;	/* counted until the login, or 0 */
};

struct frontdoor {
	const struct frontdoor_config *cfg;
	struct tls_ctx		*tls;
	struct fd_session	 s[FRONTDOOR_MAX_SESSIONS];
	struct creds		*creds;		/* every live session's users */
	char			 nobody[48];	/* the placeholder's password */
	struct fd_conn		 conn[FRONTDOOR_MAX_CONNS];
	struct preauth		*pa;
	struct tbucket		 auth_bucket;
	struct tbucket		 log_bucket;
	unsigned long		 log_quiet;
	struct vencrypt_params	 prm;
	struct ipc_peer		 peer;		/* the parent */
	int			 sigfd;
	int			 stop;
	const char		*fatal;
};

/* ---- the credentials: every live session's users, one table ----------- */

/* Does the recipient have exactly one live session (and is it no session's
 * id)?  Then its name logs in to that session, as without the door. */
static int
fd_recipient_alias(const struct frontdoor *d, const struct fd_session *s)
{
	int i, n = 0;

	for (i = 0; i < FRONTDOOR_MAX_SESSIONS; i++) {
		if (!d->s[i].live)
			continue;
		if (strcmp(d->s[i].id, s->recipient) == 0)
			return 0;
		n += strcmp(d->s[i].recipient, s->recipient) == 0;
	}
	return n == 1;
}

/* Rebuild the table and hand it to every connection (vencrypt checks
 * against it); a placeholder user nobody can know keeps an empty door
 * as slow to refuse as a full one. */
static void
fd_creds_rebuild(struct frontdoor *d)
{
	struct policy_error e;
	struct creds *nc = NULL;
	size_t cap = 64 + 2 * FRONTDOOR_MAX_SESSIONS *
	    (STORE_ID_MAX + DOOR_HASH_MAX + 2), n;
	char *text;
	int i;

	if ((text = malloc(cap)) == NULL) {
		d->fatal = "out of memory";
		return;
	}
	n = (size_t)snprintf(text, cap, ".:%s\n", d->nobody);
	for (i = 0; i < FRONTDOOR_MAX_SESSIONS; i++) {
		if (!d->s[i].live)
			continue;
		n += (size_t)snprintf(text + n, cap - n, "%s:%s\n", d->s[i].id,
		    d->s[i].hash);
		if (fd_recipient_alias(d, &d->s[i]))
			n += (size_t)snprintf(text + n, cap - n, "%s:%s\n",
			    d->s[i].recipient, d->s[i].hash);
	}
	if (creds_parse(&nc, text, n, "front door", &e) != POLICY_OK) {
		slog_event("door_table", json_pack("{s:s}", "error", e.msg));
		d->fatal = "the sessions' credentials do not parse";
	}
	explicit_bzero(text, cap);
	free(text);
	if (nc == NULL)
		return;
	for (i = 0; i < FRONTDOOR_MAX_CONNS; i++)
		if (d->conn[i].c != NULL)
			vencrypt_set_creds(d->conn[i].c, nc);
	creds_free(d->creds);
	d->creds = nc;
	d->prm.creds = nc;
}

/* The session a logged-in user name names: its id, or its recipient's
 * while unambiguous (the table had it only then). */
static int
fd_session_of_user(const struct frontdoor *d, const char *user)
{
	int i, hit = FD_NONE, n = 0;

	for (i = 0; i < FRONTDOOR_MAX_SESSIONS; i++) {
		if (!d->s[i].live)
			continue;
		if (strcmp(d->s[i].id, user) == 0)
			return i;
		if (strcmp(d->s[i].recipient, user) == 0) {
			hit = i;
			n++;
		}
	}
	return n == 1 ? hit : FD_NONE;
}

/* ---- connections -------------------------------------------------------- */

static void
fd_conn_free(struct frontdoor *d, struct fd_conn *k)
{
	preauth_release(d->pa, k->preauth_id);
	if (k->c != NULL)
		vencrypt_free(k->c);	/* logs relay_end, closes both */
	else if (k->fd >= 0)
		close(k->fd);
	if (k->upfd >= 0)
		close(k->upfd);
	memset(k, 0, sizeof(*k));
	k->fd = k->upfd = -1;
	k->session = k->ws_session = FD_NONE;
}

/* Count a new client as unauthenticated by its address (a share per
 * address, the oldest evicted when the table is full, as at a session's
 * own door: gateway/preauth.h); 0 = admitted. */
static int
fd_admit(struct frontdoor *d, struct fd_conn *k, const struct sockaddr *sa,
    socklen_t len, uint64_t now)
{
	struct preauth_addr src;
	uint32_t victim = 0;
	int i;

	(void)preauth_addr_of(&src, sa, len);
	if (preauth_admit(d->pa, &src, now, &k->preauth_id, &victim) !=
	    PREAUTH_ADMIT) {
		if (tbucket_take(&d->log_bucket, now))
			slog_event("client_refused", json_pack("{s:s, s:s}",
			    "client", k->addr, "reason", "too many "
			    "unauthenticated connections from this address"));
		return -1;
	}
	for (i = 0; victim != 0 && i < FRONTDOOR_MAX_CONNS; i++)
		if (d->conn[i].preauth_id == victim) {
			d->conn[i].preauth_id = 0;	/* no longer counted */
			fd_conn_free(d, &d->conn[i]);
		}
	return 0;
}

/* A new client: one whose address waits out a back-off, or holds its
 * share of unauthenticated connections, is closed at once. */
static void
fd_accept(struct frontdoor *d, uint64_t now)
{
	struct sockaddr_storage ss;
	char host[NI_MAXHOST], serv[NI_MAXSERV];
	socklen_t len = sizeof(ss);
	struct fd_conn *k = NULL;
	int fd, i;

	fd = accept4(d->cfg->listen_fd, (struct sockaddr *)&ss, &len,
	    SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	for (i = 0; i < FRONTDOOR_MAX_CONNS && k == NULL; i++)
		if (d->conn[i].stage == FD_FREE)
			k = &d->conn[i];
	if (getnameinfo((struct sockaddr *)&ss, len, host, sizeof(host), serv,
	    sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		snprintf(host, sizeof(host), "?");
	if (k == NULL) {
		if (tbucket_take(&d->log_bucket, now))
			slog_event("client_refused", json_pack("{s:s, s:s}",
			    "client", host, "reason", "front door busy"));
		close(fd);
		return;
	}
	snprintf(k->addr, sizeof(k->addr), ss.ss_family == AF_INET6 ?
	    "[%s]:%s" : "%s:%s", host, serv);
	if (vencrypt_backed_off(&d->prm, k->addr, now) ||
	    fd_admit(d, k, (struct sockaddr *)&ss, len, now) != 0) {
		close(fd);
		return;
	}
	k->stage = FD_SNIFF;
	k->fd = fd;
	k->t0 = now;
}

/* Silence (RFB: the server speaks first) or a ClientHello (wss)? */
static void
fd_sniff(struct frontdoor *d, struct fd_conn *k, uint64_t now)
{
	enum vencrypt_mode mode = VENCRYPT_MODE_RFB;
	const int one = 1;
	uint8_t b;
	ssize_t n;

	n = recv(k->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		if (now - k->t0 < FRONTDOOR_SNIFF_US)
			return;
	} else if (n == 1 && b == 0x16)
		mode = VENCRYPT_MODE_WSS;
	else {
		if (n == 1 && tbucket_take(&d->log_bucket, now))
			slog_event("client_refused", json_pack("{s:s, s:s}",
			    "client", k->addr, "reason", "neither RFB nor "
			    "TLS (plain websockets are not served here)"));
		fd_conn_free(d, k);
		return;
	}
	setsockopt(k->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (vencrypt_alloc(&k->c, k->fd, k->addr, mode, &d->prm, now) != 0) {
		fd_conn_free(d, k);
		return;
	}
	k->fd = -1;	/* vencrypt's now */
	k->stage = FD_DOOR;
}

/* wss: the token names a session, whose Origin rule the request must
 * pass; then the websocket, and the login inside it. */
static void
fd_ws_request(struct frontdoor *d, struct fd_conn *k, uint64_t now)
{
	const char *req = vencrypt_request(k->c);
	const char *why = "websocket token missing or wrong";
	struct ws_request r;
	int i;

	if (req == NULL || ws_request_parse(req, strlen(req), &r) != WS_REQ_OK) {
		vencrypt_refuse(k->c, "bad websocket request", now);
		return;
	}
	for (i = 0; i < FRONTDOOR_MAX_SESSIONS; i++)
		if (d->s[i].live && ws_path_has_token(r.path, d->s[i].token)) {
			why = ws_request_check(&r, d->s[i].token,
			    d->cfg->ws_origins);
			k->ws_session = i;
			break;
		}
	if (why != NULL) {
		vencrypt_refuse(k->c, why, now);
		return;
	}
	vencrypt_ws_accept(k->c, now);
}

/* Logged in: connect to the session's worker (non-blocking, from the
 * source address the workers accept). */
static void
fd_connect(struct frontdoor *d, struct fd_conn *k, uint64_t now)
{
	const struct fd_session *s;
	const int one = 1;
	int i;

	i = fd_session_of_user(d, vencrypt_user(k->c));
	if (i == FD_NONE || (k->ws_session != FD_NONE && k->ws_session != i)) {
		/* the table changed under the login, or the wss token is
		   another session's: the password proved nothing here */
		vencrypt_refuse(k->c, "authentication failed", now);
		return;
	}
	s = &d->s[i];
	k->session = i;
	preauth_release(d->pa, k->preauth_id);	/* logged in */
	k->preauth_id = 0;
	vencrypt_set_session(k->c, s->inner, s->id);
	k->upfd = socket(s->up.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (k->upfd < 0 || (d->cfg->source_len > 0 &&
	    d->cfg->source.ss_family == s->up.ss_family &&
	    bind(k->upfd, (const struct sockaddr *)&d->cfg->source,
	    d->cfg->source_len) != 0) ||
	    (connect(k->upfd, (const struct sockaddr *)&s->up, s->uplen) != 0 &&
	    errno != EINPROGRESS)) {
		slog_event("upstream_failed", json_pack("{s:s, s:s, s:s}",
		    "client", k->addr, "session", s->id, "error",
		    strerror(errno)));
		vencrypt_refuse(k->c, "the session cannot be reached", now);
		return;
	}
	setsockopt(k->upfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	k->stage = FD_CONNECTING;
}

/* "addr:port" of the session's worker, for the log. */
static const char *
fd_upstream_str(const struct fd_session *s, char *buf, size_t len)
{
	char host[NI_MAXHOST], serv[NI_MAXSERV];

	if (getnameinfo((const struct sockaddr *)&s->up, s->uplen, host,
	    sizeof(host), serv, sizeof(serv), NI_NUMERICHOST |
	    NI_NUMERICSERV) != 0)
		return "?";
	snprintf(buf, len, s->up.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s",
	    host, serv);
	return buf;
}

/* The worker's connection is up (or failed): hand it to vencrypt, which
 * answers the worker's VncAuth and then relays. */
static void
fd_connected(struct frontdoor *d, struct fd_conn *k, uint64_t now)
{
	char up[NI_MAXHOST + NI_MAXSERV + 4];
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(k->upfd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
		err = errno;
	if (err == 0 && vencrypt_attach(k->c, k->upfd) == 0) {
		k->upfd = -1;	/* vencrypt's now */
		k->stage = FD_RELAY;
		slog_event("door_relay", json_pack("{s:s, s:s, s:s, s:s}",
		    "client", vencrypt_addr(k->c), "user", vencrypt_user(k->c),
		    "session", d->s[k->session].id, "upstream",
		    fd_upstream_str(&d->s[k->session], up, sizeof(up))));
		return;
	}
	slog_event("upstream_failed", json_pack("{s:s, s:s, s:s}", "client",
	    k->addr, "session", d->s[k->session].id, "error",
	    strerror(err != 0 ? err : EPIPE)));
	close(k->upfd);
	k->upfd = -1;
	k->stage = FD_DOOR;
	vencrypt_refuse(k->c, "the session cannot be reached", now);
}

/* Act on what vencrypt asks for, until it asks for nothing. */
static void
fd_event(struct frontdoor *d, struct fd_conn *k, enum vencrypt_event ev,
    uint64_t now)
{
	while (ev != VENCRYPT_CONTINUE && k->stage == FD_DOOR) {
		if (ev == VENCRYPT_CLOSED) {
			fd_conn_free(d, k);
			return;
		}
		if (ev == VENCRYPT_WS_REQUEST)
			fd_ws_request(d, k, now);
		else
			fd_connect(d, k, now);
		if (k->stage != FD_DOOR)
			return;
		ev = vencrypt_handle(k->c, now);
	}
	if (ev == VENCRYPT_CLOSED)
		fd_conn_free(d, k);
}

/* ---- the parent's messages --------------------------------------------- */

static int
fd_find(const struct frontdoor *d, const char *id)
{
	int i;

	for (i = 0; i < FRONTDOOR_MAX_SESSIONS; i++)
		if (d->s[i].live && strcmp(d->s[i].id, id) == 0)
			return i;
	return FD_NONE;
}

/* DOOR_ADD: a session is ready behind us. */
static int
fd_answer_add(void *ctx, struct ipc_msg *msg)
{
	static struct door_add mbuf;	/* secrets: wiped below */
	struct frontdoor *d = ctx;
	struct door_add *m = &mbuf;
	struct fd_session t;
	int i;

	memcpy(m, msg->data, sizeof(*m));
	explicit_bzero(msg->data, sizeof(*m));

	memset(&t, 0, sizeof(t));
	if (ipc_str_get(t.id, sizeof(t.id), m->id, sizeof(m->id)) != 0 ||
	    ipc_str_get(t.recipient, sizeof(t.recipient), m->recipient,
	    sizeof(m->recipient)) != 0 ||
	    ipc_str_get(t.hash, sizeof(t.hash), m->hash, sizeof(m->hash)) != 0 ||
	    ipc_str_get(t.inner, sizeof(t.inner), m->inner_password,
	    sizeof(m->inner_password)) != 0 ||
	    ipc_str_get(t.token, sizeof(t.token), m->ws_token,
	    sizeof(m->ws_token)) != 0 || t.id[0] == '\0' ||
	    strlen(t.token) < 16 || m->upstream_len == 0 ||
	    m->upstream_len > sizeof(m->upstream) ||
	    fd_find(d, t.id) != FD_NONE) {
		explicit_bzero(m, sizeof(*m));
		explicit_bzero(&t, sizeof(t));
		d->fatal = "bad session from the parent";
		return -1;
	}
	memcpy(&t.up, &m->upstream, sizeof(t.up));
	t.uplen = m->upstream_len;
	t.live = 1;
	explicit_bzero(m, sizeof(*m));
	for (i = 0; i < FRONTDOOR_MAX_SESSIONS && d->s[i].live; i++)
		;
	if (i == FRONTDOOR_MAX_SESSIONS) {
		explicit_bzero(&t, sizeof(t));
		d->fatal = "more sessions than the front door holds";
		return -1;
	}
	d->s[i] = t;
	explicit_bzero(&t, sizeof(t));
	fd_creds_rebuild(d);
	slog_event("door_add", json_pack("{s:s, s:s}", "session", d->s[i].id,
	    "recipient", d->s[i].recipient));
	return 0;
}

/* DOOR_REMOVE: the session ends; its connections end now. */
static int
fd_answer_remove(void *ctx, struct ipc_msg *msg)
{
	struct frontdoor *d = ctx;
	struct door_remove m;
	char id[STORE_ID_MAX];
	int i, j, dropped = 0;

	memcpy(&m, msg->data, sizeof(m));
	if (ipc_str_get(id, sizeof(id), m.id, sizeof(m.id)) != 0) {
		d->fatal = "bad removal from the parent";
		return -1;
	}
	if ((i = fd_find(d, id)) == FD_NONE)
		return 0;	/* never ready: nothing to forget */
	for (j = 0; j < FRONTDOOR_MAX_CONNS; j++)
		if (d->conn[j].stage != FD_FREE && (d->conn[j].session == i ||
		    d->conn[j].ws_session == i)) {
			fd_conn_free(d, &d->conn[j]);
			dropped++;
		}
	explicit_bzero(&d->s[i], sizeof(d->s[i]));
	fd_creds_rebuild(d);
	slog_event("door_remove", json_pack("{s:s, s:i}", "session", id,
	    "connections_dropped", dropped));
	return 0;
}

static const struct ipc_handler fd_permit[] = {
	{ DOOR_ADD, fd_answer_add },
	{ DOOR_REMOVE, fd_answer_remove },
};

/* ---- the loop ---------------------------------------------------------- */

/* Sleep until the nearest sniff, handshake or flush deadline. */
static int
fd_timeout(const struct frontdoor *d, uint64_t now)
{
	uint64_t t = 0, x;
	size_t i;

	for (i = 0; i < FRONTDOOR_MAX_CONNS; i++) {
		const struct fd_conn *k = &d->conn[i];

		x = k->stage == FD_SNIFF ? k->t0 + FRONTDOOR_SNIFF_US :
		    k->c != NULL ? vencrypt_deadline(k->c) : 0;
		if (x != 0 && (t == 0 || x < t))
			t = x;
	}
	if (t == 0)
		return FD_MAX_WAIT_MS;
	return t <= now ? 0 : (int)((t - now + 999) / 1000);
}

/* Deadlines (a handshake too slow, a refusal flushed, a connect that
 * never completes: vencrypt's stage timer covers it) and OpenSSL's
 * buffered bytes. */
static void
fd_tick(struct frontdoor *d, uint64_t now)
{
	size_t i;

	for (i = 0; i < FRONTDOOR_MAX_CONNS; i++) {
		struct fd_conn *k = &d->conn[i];

		if (k->stage == FD_SNIFF)
			fd_sniff(d, k, now);
		else if (k->c != NULL) {
			enum vencrypt_event ev = vencrypt_tick(k->c, now);

			if (ev == VENCRYPT_CLOSED)
				fd_conn_free(d, k);
			else
				fd_event(d, k, ev, now);
		}
	}
}

static size_t
fd_pollfds(const struct frontdoor *d, struct pollfd *pfd, int *owner)
{
	size_t n = 3, k, j;
	int i;

	pfd[0] = (struct pollfd){ d->sigfd, POLLIN, 0 };
	pfd[1] = (struct pollfd){ d->peer.sock, POLLIN, 0 };
	pfd[2] = (struct pollfd){ d->cfg->listen_fd, POLLIN, 0 };
	for (i = 0; i < FRONTDOOR_MAX_CONNS; i++) {
		const struct fd_conn *c = &d->conn[i];

		if (c->stage == FD_SNIFF) {
			owner[n] = i;
			pfd[n++] = (struct pollfd){ c->fd, POLLIN, 0 };
			continue;
		}
		if (c->c == NULL)
			continue;
		k = vencrypt_pollfds(c->c, pfd + n, FD_MAX_PFD - n);
		if (c->stage == FD_CONNECTING && n + k < FD_MAX_PFD)
			pfd[n + k++] = (struct pollfd){ c->upfd, POLLOUT, 0 };
		for (j = 0; j < k; j++)
			owner[n + j] = i;
		n += k;
	}
	return n;
}

/* One connection's poll results (the worker's connect aside). */
static void
fd_serve(struct frontdoor *d, struct fd_conn *k, uint64_t now)
{
	if (k->stage == FD_SNIFF) {
		fd_sniff(d, k, now);
		return;
	}
	fd_event(d, k, vencrypt_handle(k->c, now), now);
}

static int
fd_loop(struct frontdoor *d)
{
	struct pollfd pfd[FD_MAX_PFD];
	int owner[FD_MAX_PFD], done[FRONTDOOR_MAX_CONNS], st;
	struct signalfd_siginfo si;
	uint64_t now;
	size_t n, i;

	while (!d->stop && d->fatal == NULL) {
		now = vencrypt_clock();
		fd_tick(d, now);
		n = fd_pollfds(d, pfd, owner);
		if (poll(pfd, n, fd_timeout(d, now)) < 0 && errno != EINTR)
			return -1;
		now = vencrypt_clock();
		if (pfd[0].revents & POLLIN)
			while (read(d->sigfd, &si, sizeof(si)) ==
			    (ssize_t)sizeof(si))
				d->stop = 1;
		/* the parent first: a session removed ends its connections
		   before another byte of theirs is relayed */
		if (pfd[1].revents != 0 &&
		    (st = ipc_dispatch(&d->peer, d, NULL)) != IPC_OK &&
		    d->fatal == NULL)
			d->fatal = st == IPC_EOF ? "the parent went away" :
			    ipc_strerror(st);
		memset(done, 0, sizeof(done));
		for (i = 3; i < n; i++) {
			struct fd_conn *k = &d->conn[owner[i]];

			if (pfd[i].revents == 0 || k->stage == FD_FREE)
				continue;
			if (k->stage == FD_CONNECTING && pfd[i].fd == k->upfd) {
				fd_connected(d, k, now);
				fd_event(d, k, vencrypt_handle(k->c, now), now);
				continue;
			}
			if (done[owner[i]])
				continue;
			done[owner[i]] = 1;
			fd_serve(d, k, now);
		}
		if (pfd[2].revents & POLLIN)
			fd_accept(d, now);
	}
	return 0;
}

/* ---- set-up ---------------------------------------------------------------- */

/* Signals, the key, the tables; then the drop and the filter (fail
 * closed: any error ends us before a byte is read). */
static int
fd_setup(struct frontdoor *d, const struct frontdoor_config *cfg)
{
	char err[256] = "";
	struct confine c;
	int st;

	d->cfg = cfg;
	d->peer = (struct ipc_peer){ cfg->ipc_fd, "parent", &door_proto,
	    fd_permit, sizeof(fd_permit) / sizeof(fd_permit[0]) };
	if ((d->sigfd = vencrypt_signals()) < 0)
		return vencrypt_setup_failed("signals", strerror(errno));
	st = tls_ctx_alloc(&d->tls, cfg->tls_cert, cfg->tls_cert_len,
	    cfg->tls_key, cfg->tls_key_len, err, sizeof(err));
	explicit_bzero(cfg->tls_key, cfg->tls_key_len);
	if (st != TLS_OK)
		return vencrypt_setup_failed("tls", err[0] ? err :
		    tls_strerror(st));
	if (preauth_alloc(&d->pa) != PREAUTH_OK ||
	    secret_text(d->nobody, 40) != 0)
		return vencrypt_setup_failed("preauth", "out of memory or "
		    "randomness");
	tbucket_init(&d->auth_bucket, PREAUTH_LOGIN_RATE, PREAUTH_LOGIN_BURST,
	    vencrypt_clock());
	tbucket_init(&d->log_bucket, 5, 20, vencrypt_clock());
	d->prm = (struct vencrypt_params){ .tls = d->tls, .allow_plain = 0,
	    .preauth = d->pa, .auth_bucket = &d->auth_bucket,
	    .log_bucket = &d->log_bucket, .log_quiet = &d->log_quiet,
	    .clock = vencrypt_clock };
	fd_creds_rebuild(d);
	if (d->fatal != NULL)
		return vencrypt_setup_failed("credentials", d->fatal);
	vencrypt_prewarm(d->creds);
	confine_init(&c, "frontdoor");
	c.user = cfg->user;
	c.deathsig = SIGTERM;
	c.parent = cfg->parent;
	c.profile = SANDBOX_PROFILE_FRONTDOOR;
	if (confine_rlimit(&c, RLIMIT_NOFILE, FRONTDOOR_NOFILE) != CONFINE_OK ||
	    confine_rlimit(&c, RLIMIT_NPROC, 0) != CONFINE_OK ||
	    confine_rlimit(&c, RLIMIT_CORE, 0) != CONFINE_OK ||
	    confine_apply(&c, err, sizeof(err)) != CONFINE_OK)
		return vencrypt_setup_failed("sandbox", err[0] ? err : "rlimits");
	slog_event("door_start", json_pack("{s:s}", "sandbox",
	    sandbox_mode_name()));
	return 0;
}

int
frontdoor_main(const struct frontdoor_config *cfg)
{
	static struct frontdoor d;	/* the tables: not on the stack */
	int i, st = 1;

	memset(&d, 0, sizeof(d));
	d.sigfd = -1;
	for (i = 0; i < FRONTDOOR_MAX_CONNS; i++)
		fd_conn_free(&d, &d.conn[i]);
	slog_open(NULL, "", "frontdoor");
	if (cfg == NULL || fd_setup(&d, cfg) != 0) {
		if (d.fatal == NULL)
			d.fatal = "set-up failed";
	} else if (fd_loop(&d) == 0 && d.fatal == NULL)
		st = 0;
	slog_event("door_stop", json_pack("{s:s}", "why", d.fatal != NULL ?
	    d.fatal : "stopped"));
	for (i = 0; i < FRONTDOOR_MAX_CONNS; i++)
		fd_conn_free(&d, &d.conn[i]);
	creds_free(d.creds);
	tls_ctx_free(d.tls);
	preauth_free(d.pa);
	explicit_bzero(&d, sizeof(d));
	return st;
}
