/*
 * control/parent-session.c — the root parent's session table: pick a
 * port, write the session's secret files, fork a supervisor that runs
 * session_run(), answer the api when it is ready or gone, stop it.
 *
 * Root.  Trust: the SESSION_START fields come from the api child (which
 * may be taken over): every string is bounded and checked here again,
 * and the spec built from them goes through policy/spec.c's strict
 * checks.  The secret is written to a 0600 root file and wiped; it is
 * never logged.
 */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/grant.h"
#include "common/log.h"
#include "common/secret.h"
#include "control/parent.h"
#include "supervisor/session.h"
#include "policy/creds.h"
#include "sandbox/confine.h"
#include "sandbox/sandbox.h"


int64_t
parent_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct psession *
session_find(struct parent *p, const char *id)
{
	int i;

	for (i = 0; i < PARENT_MAX_SESSIONS; i++)
		if (p->s[i].pid > 0 && strcmp(p->s[i].id, id) == 0)
			return &p->s[i];
	return NULL;
}

/* Is addr:port free to bind right now (and not ours already)? */
static int
port_free(struct parent *p, unsigned port)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_PASSIVE,
	    .ai_socktype = SOCK_STREAM }, *ai = NULL;
	char ps[8];
	int fd, ok = 0, one = 1, i;

	for (i = 0; i < PARENT_MAX_SESSIONS; i++)
		if (p->s[i].pid > 0 && p->s[i].port == port)
			return 0;
	snprintf(ps, sizeof(ps), "%u", port);
	if (getaddrinfo(p->cfg.session_address, ps, &hints, &ai) != 0)
		return 0;
	if ((fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		ok = bind(fd, ai->ai_addr, ai->ai_addrlen) == 0;
		close(fd);
	}
	freeaddrinfo(ai);
	return ok;
}

static unsigned
port_pick(struct parent *p)
{
	unsigned port;

	for (port = p->cfg.port_lo; port <= p->cfg.port_hi; port++)
		if (port_free(p, port))
			return port;
	return 0;
}

static void
answer_failed(struct parent *p, const char *id, const char *why)
{
	struct pipc_failed f;

	memset(&f, 0, sizeof(f));
	snprintf(f.id, sizeof(f.id), "%s", id);
	snprintf(f.reason, sizeof(f.reason), "%s", why);
	if (p->ipc >= 0)
		ipc_send(p->ipc, &pipc_proto, PIPC_SESSION_FAILED, &f,
		    sizeof(f), -1);
}

/* "<secrets_dir>/<id>[/<name>]" */
static void
session_path(const struct parent *p, const char *id, const char *name,
    char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s%s%s", p->cfg.secrets_dir, id,
	    name != NULL ? "/" : "", name != NULL ? name : "");
}

/* Write one 0600 root file (O_EXCL: never through a planted link). */
static int
write_secret(const char *path, const char *text)
{
	size_t n = strlen(text);
	int fd, ok;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd < 0)
		return -1;
	ok = write(fd, text, n) == (ssize_t)n && write(fd, "\n", 1) == 1;
	return close(fd) == 0 && ok ? 0 : -1;
}

/* Remove a session's directory of secret files (flat: three files). */
static void
session_files_remove(const struct parent *p, const char *id)
{
	static const char *const names[] = { "password", "ws-token",
	    "credentials", "grant", "postgres" };
	char path[CONFIG_STR_MAX + 2 * STORE_ID_MAX];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		session_path(p, id, names[i], path, sizeof(path));
		unlink(path);
	}
	session_path(p, id, NULL, path, sizeof(path));
	rmdir(path);
}

/*
 * The secret files: the VNC password (8 bytes, the RFB limit: the
 * secret itself without TLS, a random unused one with TLS), the
 * websocket token, and with TLS a credentials line "recipient:$scrypt$".
 */
static int
session_files(const struct parent *p, const struct pipc_start *m,
    const char *secret, const char *token)
{
	char path[CONFIG_STR_MAX + 2 * STORE_ID_MAX], pw[16];
	char line[STORE_ID_MAX + 256], hash[256];
	struct policy_error e;
	int tls = p->cfg.tls_cert[0] != '\0', r = -1;

	session_path(p, m->id, NULL, path, sizeof(path));
	if (mkdir(path, 0700) != 0)
		return -1;
	if (tls ? secret_text(pw, 8) : (snprintf(pw, sizeof(pw), "%.8s",
	    secret), 0))
		goto out;
	session_path(p, m->id, "password", path, sizeof(path));
	if (write_secret(path, pw) != 0)
		goto out;
	session_path(p, m->id, "ws-token", path, sizeof(path));
	if (write_secret(path, token) != 0)
		goto out;
	/* the session's PostgreSQL reader role, libpq conninfo keywords */
	if (m->pg_role[0] != '\0') {
		snprintf(line, sizeof(line), "user=%s password=%s", m->pg_role,
		    m->pg_password);
		session_path(p, m->id, "postgres", path, sizeof(path));
		if (write_secret(path, line) != 0)
			goto out;
	}
	if (tls) {
		if (creds_hash(secret, strlen(secret), hash, sizeof(hash),
		    &e) != POLICY_OK)
			goto out;
		snprintf(line, sizeof(line), "%s:%s", m->recipient, hash);
		session_path(p, m->id, "credentials", path, sizeof(path));
		if (write_secret(path, line) != 0)
			goto out;
	}
	r = 0;
out:
	explicit_bzero(pw, sizeof(pw));
	explicit_bzero(line, sizeof(line));
	return r;
}

/* The session's dataset grant (common/grant.h), signed with the
 * config's grant_key (made on first use), valid as long as the
 * supervisor's backstop.  NULL, or why not. */
static const char *
session_grant_file(const struct parent *p, const struct pipc_start *m)
{
	char path[CONFIG_STR_MAX + 2 * STORE_ID_MAX], v[GRANT_VALUE_MAX];
	uint8_t key[GRANT_KEY_LEN];
	struct grant g;
	const char *why = NULL;

	memset(&g, 0, sizeof(g));
	snprintf(g.session, sizeof(g.session), "%s", m->id);
	g.dataset = m->dataset;
	g.expires = (int64_t)time(NULL) + (int64_t)p->cfg.session_expires_max +
	    60;
	if (grant_key_load(p->cfg.grant_key, 1, key) != GRANT_OK)
		why = "grant_key cannot be read or made (a regular file of "
		    "root's, 0600, 64 hex digits)";
	else if (grant_sign(key, &g, v) != GRANT_OK)
		why = "the session's dataset grant cannot be signed";
	else {
		session_path(p, m->id, "grant", path, sizeof(path));
		if (write_secret(path, v) != 0)
			why = "cannot write the session's grant file";
	}
	explicit_bzero(key, sizeof(key));
	return why;
}

/* argv for spec_from_args(): the config plus this request. */
static int
session_argv(const struct parent *p, const struct pipc_start *m,
    unsigned port, char bufs[][CONFIG_STR_MAX + 2 * STORE_ID_MAX],
    char **argv)
{
	const struct gw_config *c = &p->cfg;
	int n = 0, v6 = strchr(c->session_address, ':') != NULL;

#define ARG(flag, ...) do { argv[n++] = (char *)(flag);			\
	snprintf(bufs[n], sizeof(bufs[0]), __VA_ARGS__);		\
	argv[n] = bufs[n]; n++; } while (0)
	ARG("--backend", "%s", c->backend_url);
	ARG("--listen", v6 ? "[%s]:%u" : "%s:%u", c->session_address, port);
	ARG("--password-file", "%s/%s/password", c->secrets_dir,
	    m->id);
	ARG("--ws-token-file", "%s/%s/ws-token", c->secrets_dir,
	    m->id);
	ARG("--recipient", "%s", m->recipient);
	ARG("--grant-file", "%s/%s/grant", c->secrets_dir, m->id);
	ARG("--idle-timeout", "%lu", c->session_idle_timeout);
	/* the api's (at most the config's), or the config's */
	ARG("--memory-limit-mb", "%lu", m->memory_limit_mb != 0 ?
	    (unsigned long)m->memory_limit_mb : c->session_memory_limit_mb);
	/* a backstop: the api ends the session at its (extendable) expiry */
	ARG("--max-duration", "%lu", c->session_expires_max);
	if (c->session_policy[0] != '\0')
		ARG("--policy", "%s", c->session_policy);
	ARG("--record-dir", "%s", c->record_dir);
	ARG("--record-name", "%s", m->id);
	ARG("--record-min-free-mb", "%lu", c->record_min_free_mb);
	/* TLS is the door's (a node's: the control node's front door) */
	if (c->front_door_listen[0] != '\0' || c->control_address[0] != '\0')
		ARG("--accept-from", "%s", c->front_door_source);
	else if (c->tls_cert[0] != '\0') {
		ARG("--tls-cert", "%s", c->tls_cert);
		ARG("--tls-key", "%s", c->tls_key);
		ARG("--credentials-file", "%s/%s/credentials",
		    c->secrets_dir, m->id);
	}
#undef ARG
	argv[n] = NULL;
	return n;
}

/* The supervisor: a fresh signal mask, then session_run() (root). */
static void
supervisor_child(struct parent *p, pid_t parent, const struct pipc_start *m,
    unsigned port, int out)
{
	static char bufs[40][CONFIG_STR_MAX + 2 * STORE_ID_MAX];
	struct session_spec s;
	struct policy_error e;
	char *argv[40], err[256];
	struct confine c;
	sigset_t none;
	FILE *f;
	int argc, r, i;

	log_init("cdsgated");		/* as `cdsgated run-session` says */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	/* the parent gone: this session goes too (and if it went before
	   the signal was set, now); root, no filter yet: session_run loads
	   SUPERVISOR once the session's namespaces are made */
	confine_init(&c, "supervisor");
	c.deathsig = SIGTERM;
	c.parent = parent;
	if (confine_apply(&c, err, sizeof(err)) != CONFINE_OK) {
		log_warnx("session %s: %s", m->id, err);
		_exit(SESSION_EXIT_FAILED);
	}
	close(p->ipc);
	close(p->sigfd);
	if (p->listen_fd >= 0)		/* sessiond's */
		close(p->listen_fd);
	parent_helpers_close(p);
	for (i = 0; i < PARENT_MAX_SESSIONS; i++)	/* the others' pipes */
		if (p->s[i].pid > 0 && p->s[i].ready_fd >= 0)
			close(p->s[i].ready_fd);
	argc = session_argv(p, m, port, bufs, argv);
	f = fdopen(out, "w");
#ifdef HAVE_SECCOMP
	r = sandbox_init(SANDBOX_MODE_SECCOMP, 0, err, sizeof(err));
#else
	r = sandbox_init(SANDBOX_MODE_NONE, 0, err, sizeof(err));
#endif
	if (f == NULL || r != 0 || spec_init(&s, &e) != POLICY_OK ||
	    spec_from_args(&s, argc, argv, &e) != POLICY_OK ||
	    spec_check(&s, &e) != POLICY_OK) {
		log_warnx("session %s: %s", m->id, r != 0 ? err :
		    e.msg);
		_exit(SESSION_EXIT_CONFIG);
	}
	r = session_run(&s, f);
	spec_free(&s);
	session_files_remove(p, m->id);
	_exit(r < 0 ? 0 : r);
}

/* Fork the supervisor with a pipe for its "ready" line. */
static int
session_fork(struct parent *p, struct psession *ps,
    const struct pipc_start *m)
{
	pid_t parent = getpid();	/* compared after the fork, not pid 1:
					   a subreaper may adopt the child */
	int pfd[2];

	if (pipe2(pfd, O_CLOEXEC) != 0)
		return -1;
	if ((ps->pid = fork()) < 0) {
		ps->pid = 0;
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (ps->pid == 0) {
		close(pfd[0]);
		supervisor_child(p, parent, m, ps->port, pfd[1]);
	}
	close(pfd[1]);
	ps->ready_fd = pfd[0];
	fcntl(ps->ready_fd, F_SETFL, O_NONBLOCK);
	return 0;
}

static struct psession *
slot_free(struct parent *p)
{
	int i;

	for (i = 0; i < PARENT_MAX_SESSIONS; i++)
		if (p->s[i].pid == 0)
			return &p->s[i];
	return NULL;
}

/* Check the api's request again; fill the slot; set up and fork. */
int
parent_session_start(struct parent *p, const struct pipc_start *m0)
{
	struct pipc_start m;
	struct psession *ps;
	char secret[PIPC_SECRET_MAX], room[CONFIG_STR_MAX + 100];
	const char *why = NULL;

	memcpy(&m, m0, sizeof(m));
	if (ipc_str_get(m.id, sizeof(m.id), m0->id, sizeof(m0->id)) != 0 ||
	    ipc_str_get(m.recipient, sizeof(m.recipient), m0->recipient,
	    sizeof(m0->recipient)) != 0 ||
	    ipc_str_get(secret, sizeof(secret), m0->secret,
	    sizeof(m0->secret)) != 0 || ipc_str_get(m.pg_role,
	    sizeof(m.pg_role), m0->pg_role, sizeof(m0->pg_role)) != 0 ||
	    ipc_str_get(m.pg_password, sizeof(m.pg_password),
	    m0->pg_password, sizeof(m0->pg_password)) != 0 ||
	    strspn(m.pg_role, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstu"
	    "vwxyz0123456789._-") != strlen(m.pg_role) ||
	    strspn(m.pg_password, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopq"
	    "rstuvwxyz0123456789-_") != strlen(m.pg_password) ||
	    !store_id_valid(m.id) ||
	    !store_id_valid(m.recipient) || strlen(secret) < 8 ||
	    m.dataset <= 0)
		return -1;	/* a protocol violation: fatal */
	if (session_find(p, m.id) != NULL)
		why = "a session with this id is running";
	else if (m.memory_limit_mb > p->cfg.session_memory_limit_mb)
		why = "memory_limit_mb is over the configured "
		    "session_memory_limit_mb";
	else if (parent_slurm_on(p))	/* a job; its node starts it */
		why = parent_slurm_start(p, &m, secret);
	else if ((ps = slot_free(p)) == NULL)
		why = "too many sessions";
	else if (!parent_record_room(p, room, sizeof(room)))
		why = room;	/* fail closed: it could not be recorded */
	else if ((ps->port = port_pick(p)) == 0)
		why = "no free port in session_ports";
	else if (secret_text(ps->ws_token, 32) != 0)
		why = "no randomness";
	else if (session_files(p, &m, secret, ps->ws_token) != 0) {
		why = "cannot write the session's secret files";
		session_files_remove(p, m.id);
	} else if ((why = session_grant_file(p, &m)) != NULL)
		session_files_remove(p, m.id);
	else {
		snprintf(ps->id, sizeof(ps->id), "%s", m.id);
		ps->linelen = 0;
		ps->stopping = 0;
		ps->started = 0;
		ps->deadline_ms = parent_now_ms() + PARENT_READY_MS;
		if (session_fork(p, ps, &m) != 0) {
			why = "fork failed";
			session_files_remove(p, m.id);
		}
	}
	explicit_bzero(secret, sizeof(secret));
	if (why != NULL) {
		log_warnx("session %s not started: %s", m.id, why);
		answer_failed(p, m.id, why);
	}
	explicit_bzero(&m, sizeof(m));
	return 0;
}

/* The supervisor printed something: "ready ADDR:PORT" => STARTED. */
void
parent_session_ready(struct parent *p, struct psession *ps)
{
	struct pipc_started st;
	ssize_t n;

	n = read(ps->ready_fd, ps->line + ps->linelen,
	    sizeof(ps->line) - 1 - ps->linelen);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n > 0)
		ps->linelen += (size_t)n;
	ps->line[ps->linelen] = '\0';
	if (strchr(ps->line, '\n') == NULL && n > 0 &&
	    ps->linelen < sizeof(ps->line) - 1)
		return;
	close(ps->ready_fd);
	ps->ready_fd = -1;
	if (strncmp(ps->line, "ready ", 6) != 0) {
		/* it is failing: its exit is answered as SESSION_FAILED */
		return;
	}
	ps->deadline_ms = 0;
	ps->started = 1;
	memset(&st, 0, sizeof(st));
	snprintf(st.id, sizeof(st.id), "%s", ps->id);
	st.port = ps->port;
	snprintf(st.ws_token, sizeof(st.ws_token), "%s", ps->ws_token);
	if (ps->upstream_len == 0)	/* a runner may have set it */
		parent_door_upstream(p, ps);
	parent_door_add(p, ps);		/* before the api hands it out */
	ipc_send(p->ipc, &pipc_proto, PIPC_SESSION_STARTED, &st,
	    sizeof(st), -1);
	explicit_bzero(&st, sizeof(st));
}

/* Revoke/expire (revoke = 1: SIGKILL after PARENT_REVOKE_MS). */
void
parent_session_stop(struct parent *p, const char *id, int revoke)
{
	struct psession *ps = session_find(p, id);

	if (parent_slurm_stop(p, id))
		return;
	if (ps == NULL || ps->stopping)
		return;
	parent_door_remove(p, ps->id);	/* its relayed connections end first */
	kill(ps->pid, SIGTERM);
	ps->stopping = 1;
	ps->deadline_ms = parent_now_ms() + (revoke ? PARENT_REVOKE_MS :
	    PARENT_STOP_MS);
}

/* Deadlines: not ready in time, or not gone in time after SIGTERM. */
void
parent_session_timers(struct parent *p)
{
	int64_t now = parent_now_ms();
	int i;

	parent_slurm_timers(p);
	for (i = 0; i < PARENT_MAX_SESSIONS; i++) {
		struct psession *ps = &p->s[i];

		if (ps->pid <= 0 || ps->deadline_ms == 0 ||
		    now < ps->deadline_ms)
			continue;
		if (!ps->stopping) {
			log_warnx("session %s: not ready in %d ms",
			    ps->id, PARENT_READY_MS);
			parent_session_stop(p, ps->id, 0);
		} else {
			/* its children die with it (PR_SET_PDEATHSIG) */
			kill(ps->pid, SIGKILL);
			ps->deadline_ms = 0;
		}
	}
}

/* A supervisor exited: SESSION_FAILED before ready, else ENDED. */
void
parent_session_reaped(struct parent *p, pid_t pid, int status)
{
	struct pipc_ended e;
	struct psession *ps = NULL;
	int i;

	for (i = 0; i < PARENT_MAX_SESSIONS; i++)
		if (p->s[i].pid == pid)
			ps = &p->s[i];
	if (ps == NULL)
		return;
	memset(&e, 0, sizeof(e));
	snprintf(e.id, sizeof(e.id), "%s", ps->id);
	e.status = WIFEXITED(status) ? WEXITSTATUS(status) :
	    128 + WTERMSIG(status);
	if (ps->ready_fd >= 0)
		close(ps->ready_fd);
	parent_record_closed(p, ps, status);
	if (!ps->started)
		answer_failed(p, ps->id, "its supervisor exited before it was "
		    "ready (the daemon's log says why)");
	else if (p->ipc >= 0)
		ipc_send(p->ipc, &pipc_proto, PIPC_SESSION_ENDED, &e,
		    sizeof(e), -1);
	if (ps->started && !ps->stopping)
		parent_door_remove(p, ps->id);
	session_files_remove(p, ps->id);
	explicit_bzero(ps, sizeof(*ps));
	ps->ready_fd = -1;
}

int
parent_sessions_live(const struct parent *p)
{
	int i, n = 0;

	for (i = 0; i < PARENT_MAX_SESSIONS; i++)
		n += p->s[i].pid > 0;
	return n;
}

/* Shutdown or fail-closed: every supervisor stopped and reaped. */
void
parent_sessions_stop_all(struct parent *p, int ms)
{
	int64_t end = parent_now_ms() + ms;
	int i, status;
	pid_t pid;

	parent_slurm_end_all(p, "its job was cancelled: the daemon stops");
	for (i = 0; i < PARENT_MAX_SESSIONS; i++)
		if (p->s[i].pid > 0)
			kill(p->s[i].pid, SIGTERM);
	while (parent_sessions_live(p) > 0) {
		for (i = 0; i < PARENT_MAX_SESSIONS; i++) {
			if (p->s[i].pid <= 0)
				continue;
			if (parent_now_ms() >= end)
				kill(p->s[i].pid, SIGKILL);
			pid = waitpid(p->s[i].pid, &status, WNOHANG);
			if (pid == p->s[i].pid)
				parent_session_reaped(p, pid, status);
		}
		usleep(20000);
	}
}
