/*
 * control/parent-door.c — the parent's side of the front door
 * (gateway/frontdoor.h, `front_door_listen`): bind its address as root,
 * read the TLS certificate and key, fork it, and tell it over
 * gateway/dooripc.h which sessions are ready (and which ended).
 *
 * Root.  The key's PEM bytes pass through this process only until the
 * front door is forked (wiped right after); the sessions' secret files
 * are read back from secrets_dir when each session is ready.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gateway/dooripc.h"
#include "gateway/frontdoor.h"
#include "control/parent.h"
#include "gateway/peeraddr.h"
#include "common/log.h"
#include "common/secret.h"
#include "policy/creds.h"
#include "sandbox/sandbox.h"

_Static_assert(FRONTDOOR_MAX_SESSIONS >= PARENT_MAX_SESSIONS,
    "the front door holds every session");

/* The front door's listening socket, bound by root (a port below 1024
 * is allowed). */
static int
door_bind(const char *listen_at)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1;

	if (peeraddr_parse(listen_at, &ss, &len) != 0) {
		log_warnx("front_door_listen %s: not ADDR:PORT",
		    listen_at);
		return -1;
	}
	if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 64) != 0) {
		log_warn("front_door_listen %s", listen_at);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

struct door_fork {
	struct frontdoor_config	 fc;
	int			 close_fd[5];	/* the api's socket, signals,
						   the Slurm helper's, the
						   evidence receiver's,
						   sessiond's listener */
};

/* The child: none of the parent's descriptors but the listening one,
 * then frontdoor_main (which drops to cdsgate and confines itself). */
static void
door_child(int sock, void *arg)
{
	struct door_fork *df = arg;
	char err[256];
	sigset_t none;
	size_t i;

	log_init("cdsgated front door");
	for (i = 0; i < sizeof(df->close_fd) / sizeof(df->close_fd[0]); i++)
		if (df->close_fd[i] >= 0)
			close(df->close_fd[i]);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	df->fc.ipc_fd = sock;
#ifdef HAVE_SECCOMP
	if (sandbox_init(SANDBOX_MODE_SECCOMP, 0, err, sizeof(err)) != 0) {
#else
	if (sandbox_init(SANDBOX_MODE_NONE, 0, err, sizeof(err)) != 0) {
#endif
		log_warnx("sandbox: %s", err);
		_exit(1);
	}
	_exit(frontdoor_main(&df->fc));
}

/* The session policy's ws_origins (the Origin rule the sessions' own
 * doors apply), or NULL; the spec stays allocated for the child. */
static int
door_origins(const struct gw_config *c, struct session_spec *s,
    const char *const **origins)
{
	struct policy_error e;

	*origins = NULL;
	if (spec_init(s, &e) != POLICY_OK)
		return -1;
	if (c->session_policy[0] != '\0' &&
	    spec_load_file(s, c->session_policy, &e) != POLICY_OK) {
		log_warnx("front door: %s", e.msg);
		return -1;
	}
	*origins = (const char *const *)s->ws_origins;
	return 0;
}

int
parent_door_start(struct parent *p, int sigfd)
{
	static struct session_spec spec;
	static struct privdrop_user user;
	const struct gw_config *c = &p->cfg;
	struct door_fork df;
	struct frontdoor_config *fcp = &df.fc;
	struct policy_error e;
	char err[256];
	int r = -1;

	p->door_pid = -1;
	p->door_fd = -1;
	/* split units: the session helper, which holds the sessions and
	   their secret files, runs it, not serve --sessiond */
	if (c->front_door_listen[0] == '\0' || p->sessiond != NULL)
		return 0;
	memset(&df, 0, sizeof(df));
	df.close_fd[0] = p->ipc;	/* -1 in sessiond before its peer */
	df.close_fd[1] = sigfd;
	/* the root helper's socket: the front door must not speak for the
	   parent (and the helper sees the parent's end close at shutdown) */
	df.close_fd[2] = parent_slurm_fd(p);
	df.close_fd[3] = parent_slurm_ev_fd(p);	/* and the evidence
						   receiver's, likewise */
	df.close_fd[4] = p->listen_fd;	/* sessiond's: no api may reach
					   the front door */
	fcp->listen_fd = -1;
	if (privdrop_lookup(PRIVDROP_WORKER_USER, NULL, &user, err,
	    sizeof(err)) != 0) {
		log_warnx("front door: %s", err);
		return -1;
	}
	fcp->user = &user;
	fcp->parent = getpid();
	if (peeraddr_host(c->front_door_source, &fcp->source,
	    &fcp->source_len) != 0 ||
	    door_origins(c, &spec, &fcp->ws_origins) != 0)
		goto out;
	if (spec_read_file(c->tls_cert, "tls_cert", 1 << 20, 0, &fcp->tls_cert,
	    &fcp->tls_cert_len, &e) != POLICY_OK ||
	    spec_read_file(c->tls_key, "tls_key", 1 << 20, 1, &fcp->tls_key,
	    &fcp->tls_key_len, &e) != POLICY_OK) {
		log_warnx("front door: %s", e.msg);
		goto out;
	}
	if ((fcp->listen_fd = door_bind(c->front_door_listen)) < 0)
		goto out;
	if (ipc_helper_start(door_child, &df, &p->door_pid, &p->door_fd, err,
	    sizeof(err)) != 0) {
		log_warnx("front door: %s", err);
		goto out;
	}
	log_info("front door on %s (pid %ld)", c->front_door_listen,
	    (long)p->door_pid);
	r = 0;
out:
	if (fcp->listen_fd >= 0)
		close(fcp->listen_fd);	/* the parent holds no client socket */
	if (fcp->tls_key != NULL)
		explicit_bzero(fcp->tls_key, fcp->tls_key_len);
	free(fcp->tls_key);
	free(fcp->tls_cert);
	return r;
}

/* Read one secret file of the session back (root's, 0600). */
static int
door_secret(const struct parent *p, const char *id, const char *name,
    char *out, size_t len)
{
	char path[CONFIG_STR_MAX + 2 * STORE_ID_MAX], *s = NULL;
	struct policy_error e;
	int r = -1;

	snprintf(path, sizeof(path), "%s/%s/%s", p->cfg.secrets_dir, id, name);
	if (spec_read_secret(path, name, 1, len - 1, NULL, &s, &e) ==
	    POLICY_OK) {
		snprintf(out, len, "%s", s);
		r = 0;
	}
	if (s != NULL)
		explicit_bzero(s, strlen(s));
	free(s);
	return r;
}

/* Send the session's entry (its names and passwords from e; where it
 * accepts and its websocket token from ps). */
void
parent_door_send(struct parent *p, const struct door_add *e,
    const struct psession *ps)
{
	static struct door_add m;

	if (p->door_fd < 0)
		return;
	memcpy(&m, e, sizeof(m));
	snprintf(m.id, sizeof(m.id), "%s", ps->id);
	snprintf(m.ws_token, sizeof(m.ws_token), "%s", ps->ws_token);
	memcpy(&m.upstream, &ps->upstream, sizeof(m.upstream));
	m.upstream_len = (uint32_t)ps->upstream_len;
	if (ipc_send(p->door_fd, &door_proto, DOOR_ADD, &m, sizeof(m), -1) !=
	    IPC_OK)
		log_warnx("session %s: cannot reach the front door",
		    ps->id);
	explicit_bzero(&m, sizeof(m));
}

/* A session whose worker is not on this machine (the Slurm runner's):
 * its entry made here, the researcher's secret as the scrypt line and
 * a fresh internal password for the worker (8 characters: VncAuth). */
int
parent_door_entry(struct door_add *e, const char *id, const char *recipient,
    const char *secret)
{
	struct policy_error pe;

	memset(e, 0, sizeof(*e));
	snprintf(e->id, sizeof(e->id), "%s", id);
	snprintf(e->recipient, sizeof(e->recipient), "%s", recipient);
	if (creds_hash(secret, strlen(secret), e->hash, sizeof(e->hash),
	    &pe) != POLICY_OK || secret_text(e->inner_password, 8) != 0) {
		explicit_bzero(e, sizeof(*e));
		return -1;
	}
	return 0;
}

/* The session is ready: the front door may let its researcher in. */
void
parent_door_add(struct parent *p, const struct psession *ps)
{
	static struct door_add m;
	char line[STORE_ID_MAX + DOOR_HASH_MAX + 2], *colon;

	if (p->door_fd < 0)
		return;
	memset(&m, 0, sizeof(m));
	if (door_secret(p, ps->id, "credentials", line, sizeof(line)) != 0 ||
	    (colon = strchr(line, ':')) == NULL ||
	    (size_t)(colon - line) >= sizeof(m.recipient) ||
	    door_secret(p, ps->id, "password", m.inner_password,
	    sizeof(m.inner_password)) != 0) {
		log_warnx("session %s: its secret files cannot be read: "
		    "the front door does not let anyone in", ps->id);
		explicit_bzero(line, sizeof(line));
		explicit_bzero(&m, sizeof(m));
		return;
	}
	*colon = '\0';
	memcpy(m.recipient, line, (size_t)(colon - line) + 1);
	snprintf(m.hash, sizeof(m.hash), "%s", colon + 1);
	parent_door_send(p, &m, ps);
	explicit_bzero(line, sizeof(line));
	explicit_bzero(&m, sizeof(m));
}

/* Revoked, expired or gone: the front door drops its connections. */
void
parent_door_remove(struct parent *p, const char *id)
{
	struct door_remove m;

	if (p->door_fd < 0)
		return;
	memset(&m, 0, sizeof(m));
	snprintf(m.id, sizeof(m.id), "%s", id);
	(void)ipc_send(p->door_fd, &door_proto, DOOR_REMOVE, &m, sizeof(m),
	    -1);
}

/* Where the session's worker accepts: its listen address, or loopback
 * for a wildcard one. */
void
parent_door_upstream(const struct parent *p, struct psession *ps)
{
	const char *a = p->cfg.session_address;
	char text[CONFIG_STR_MAX + 16];
	int v6 = strchr(a, ':') != NULL;

	if (strcmp(a, "0.0.0.0") == 0)
		a = "127.0.0.1";
	else if (strcmp(a, "::") == 0)
		a = "::1";
	snprintf(text, sizeof(text), v6 ? "[%s]:%u" : "%s:%u", a, ps->port);
	if (peeraddr_parse(text, &ps->upstream, &ps->upstream_len) != 0)
		ps->upstream_len = 0;
}

/* Stop the front door (shutdown): SIGTERM, then reap. */
void
parent_door_stop(struct parent *p)
{
	if (p->door_pid > 0)
		kill(p->door_pid, SIGTERM);
	(void)ipc_helper_stop(&p->door_pid, &p->door_fd);
}
