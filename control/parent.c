/*
 * control/parent.c — `cdsgated serve --config FILE`: the root parent's
 * command, its api child and its loop.
 *
 * Root, no seccomp filter (it forks session supervisors that need root).
 * Trust: the operator's config (policy/config.c, strict) and typed IPC
 * from the api child, which is assumed taken over once it has read a
 * client request: anything but a permitted, well-formed message makes the
 * parent stop every session and exit (fail closed).
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/api.h"
#include "common/grant.h"
#include "common/log.h"
#include "control/parent.h"
#include "supervisor/session.h"
#include "policy/paths.h"

static int	answer_start(void *, struct ipc_msg *);
static int	answer_stop(void *, struct ipc_msg *);
static int	answer_expired(void *, struct ipc_msg *);
static int	answer_nodes(void *, struct ipc_msg *);
static int	answer_extend(void *, struct ipc_msg *);
static int	answer_chained(void *, struct ipc_msg *);

/* What the api may ask of the parent: nothing else. */
static const struct ipc_handler parent_permit[] = {
	{ PIPC_SESSION_START, answer_start },
	{ PIPC_SESSION_STOP, answer_stop },
	{ PIPC_RECORD_EXPIRED, answer_expired },
	{ PIPC_NODES, answer_nodes },
	{ PIPC_SESSION_EXTEND, answer_extend },
	{ PIPC_RECORD_CHAINED, answer_chained },
};

/* Usage text answers whoever typed the command: output, not a log line
 * (common/log.h), so it goes to stderr as it is. */
static int
serve_usage(void)
{
	fprintf(stderr, "usage: cdsgated serve [-n | -T] --config FILE "
	    "[--sessiond PATH]\n"
	    "  -n  check the configuration, and that each path is usable by the\n"
	    "      user that will use it, and exit\n"
	    "  -T  print the effective configuration and exit\n"
	    "  --sessiond PATH  start sessions through `cdsgated sessiond`\n"
	    "                   listening on PATH (the split systemd units)\n");
	return SESSION_EXIT_CONFIG;
}

/* SESSION_START: spawn a supervisor; failures are answered, not fatal. */
static int
answer_start(void *ctx, struct ipc_msg *m)
{
	struct pipc_start st;
	int r;

	memcpy(&st, m->data, sizeof(st));
	r = parent_session_start(ctx, &st);
	explicit_bzero(&st, sizeof(st));
	explicit_bzero(m->data, sizeof(st));
	return r;
}

/* SESSION_STOP: SIGTERM that session's supervisor (revoke or expiry). */
static int
answer_stop(void *ctx, struct ipc_msg *m)
{
	struct pipc_stop st;
	char id[STORE_ID_MAX], why[PIPC_REASON_MAX];

	memcpy(&st, m->data, sizeof(st));
	if (ipc_str_get(id, sizeof(id), st.id, sizeof(st.id)) != 0 ||
	    !store_id_valid(id) ||
	    ipc_str_get(why, sizeof(why), st.reason, sizeof(st.reason)) != 0)
		return -1;
	log_warnx("session %s: stopping: %s", id, why);
	parent_session_stop(ctx, id, 1);
	return 0;
}

/* RECORD_EXPIRED: retention may remove the file now (or must keep it). */
static int
answer_expired(void *ctx, struct ipc_msg *m)
{
	struct pipc_expired e;

	memcpy(&e, m->data, sizeof(e));
	return parent_record_expired(ctx, &e);
}

/* RECORD_CHAINED: a recording's record_closed is in the chain (or not);
 * the Slurm runner's nodes may then remove their own copies. */
static int
answer_chained(void *ctx, struct ipc_msg *m)
{
	struct pipc_expired e;

	memcpy(&e, m->data, sizeof(e));
	if (ipc_str_get(e.file, sizeof(e.file), ((struct pipc_expired *)
	    m->data)->file, sizeof(e.file)) != 0)
		return -1;
	parent_copy_chained(ctx, e.file, e.ok == 1);
	return 0;
}

/* NODES: the Slurm runner's nodes (answered when the helper has them). */
static int
answer_nodes(void *ctx, struct ipc_msg *m)
{
	(void)m;
	parent_slurm_nodes(ctx);
	return 0;
}

/* SESSION_EXTEND: the Slurm runner moves the job's time limit; the
 * local runner has nothing to move (its backstop is expires_max). */
static int
answer_extend(void *ctx, struct ipc_msg *m)
{
	struct pipc_extend e;
	char id[STORE_ID_MAX];

	memcpy(&e, m->data, sizeof(e));
	if (ipc_str_get(id, sizeof(id), e.id, sizeof(e.id)) != 0 ||
	    !store_id_valid(id))
		return -1;
	parent_slurm_extend(ctx, id, e.expires);
	return 0;
}

/* The signals the loop handles, as a signalfd (blocked otherwise). */
int
parent_signals(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, old) != 0)
		return -1;
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* The api child: key holder, drop, api_main (api/serve.c). */
static void
api_child(const struct parent *p, struct api_serve_args *tcp, int listen_fd,
    int ipc, const sigset_t *old)
{
	const struct gw_config *c = &p->cfg;
	struct api_serve_args a = *tcp;

	sigprocmask(SIG_SETMASK, old, NULL);
	a.socket_path = c->socket;
	a.store_path = c->store;
	a.custodian_group = c->custodian_group;
	a.auditor_group = c->auditor_group;
	a.audit_log = c->audit_log;
	a.audit_key = c->audit_key;
	a.state_dir = c->state_dir;
	a.mount_dir = c->mount_dir[0] != '\0' ? c->mount_dir : NULL;
	a.cdsgate = c->cdsgate;
	a.listen_fd = listen_fd;
	a.parent_fd = ipc;
	a.sessiond_path = p->sessiond;
	a.expires_default = c->session_expires_default;
	a.expires_max = c->session_expires_max;
	a.memory_limit_max = c->session_memory_limit_mb;
	a.session_address = c->session_address;
	a.session_tls = c->tls_cert[0] != '\0';
	a.front_door = c->front_door_listen[0] != '\0' ? c->front_door_listen :
	    NULL;
	a.mount_backend = c->mount_backend;
	a.pg_conninfo = c->pg_conninfo[0] != '\0' ? c->pg_conninfo : NULL;
	a.pg_reader_role = c->pg_reader_role;
	_exit(api_serve_bound(&a));
}

/* Bind the socket and fork the api with its end of a socketpair. */
static int
parent_spawn_api(struct parent *p, const sigset_t *old)
{
	struct api_serve_args tcp = { 0 };
	int sv[2], lfd;

	/* the TCP listener too is bound here, by root (api/tcp.c) */
	if (p->cfg.api_listen[0] != '\0') {
		tcp.tcp_listen = p->cfg.api_listen;
		tcp.tls_cert = p->cfg.api_tls_cert;
		tcp.tls_key = p->cfg.api_tls_key;
		tcp.tokens = p->cfg.api_tokens;
	}
	if (api_tcp_prepare(&tcp) != 0)
		return -1;
	if ((lfd = api_bind(p->cfg.socket)) < 0) {
		if (tcp.tcp_fd >= 0)
			close(tcp.tcp_fd);
		return -1;
	}
	sv[0] = sv[1] = -1;	/* split: the api connects to sessiond */
	if (p->sessiond == NULL &&
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		log_warn("socketpair");
		close(lfd);
		return -1;
	}
	tcp.parent_pid = getpid();	/* before the fork: see api_serve_bound */
	if ((p->api_pid = fork()) < 0) {
		log_warn("fork");
		close(lfd);
		if (sv[0] >= 0) {
			close(sv[0]);
			close(sv[1]);
		}
		return -1;
	}
	if (p->api_pid == 0) {
		if (sv[0] >= 0)
			close(sv[0]);
		close(p->sigfd);
		parent_helpers_close(p);
		api_child(p, &tcp, lfd, sv[1], old);
	}
	close(lfd);	/* the parent holds no client socket */
	if (tcp.tcp_fd >= 0)
		close(tcp.tcp_fd);
	if (sv[1] >= 0)
		close(sv[1]);
	p->ipc = sv[0];
	return 0;
}

/* Reap everything that exited.  Returns -1 when the api died. */
static int
parent_reap(struct parent *p)
{
	pid_t pid;
	int status, api_died = 0;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid == p->door_pid) {
			log_warnx("the front door exited (status %d); "
			    "stopping every session", WIFEXITED(status) ?
			    WEXITSTATUS(status) : 128 + WTERMSIG(status));
			p->door_pid = -1;
			api_died = 1;	/* fail closed, as for the api */
		} else if (pid == p->api_pid) {
			log_warnx("the api exited (status %d); "
			    "stopping every session", WIFEXITED(status) ?
			    WEXITSTATUS(status) : 128 + WTERMSIG(status));
			p->api_pid = 0;
			api_died = 1;
		} else
			parent_session_reaped(p, pid, status);
	}
	return api_died ? -1 : 0;
}

/* One signal from the signalfd: 1 = shut down, -1 = api died, 0 = go on. */
static int
parent_signal(struct parent *p, int sigfd)
{
	struct signalfd_siginfo si;
	int r = 0;

	while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			if (parent_reap(p) != 0)
				r = -1;
		} else if (r == 0)
			r = 1;
	}
	return r;
}

/* Wait up to ms for the api to exit after SIGTERM; then SIGKILL it. */
static int
parent_stop_api(struct parent *p, int ms)
{
	int64_t end = parent_now_ms() + ms;
	int status = 0;
	pid_t r;

	if (p->api_pid <= 0)
		return -1;
	kill(p->api_pid, SIGTERM);
	while ((r = waitpid(p->api_pid, &status, WNOHANG)) == 0 &&
	    parent_now_ms() < end)
		usleep(20000);
	if (r == 0) {
		log_warnx("the api did not stop; killing it");
		kill(p->api_pid, SIGKILL);
		waitpid(p->api_pid, &status, 0);
		return -1;
	}
	p->api_pid = 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* The pollfds: signals, the api (sessiond: its peer), sessiond's
 * listening socket (-1 in serve: poll ignores it), the Slurm helper (-1
 * with the local runner), the front door (-1 without one), the Slurm
 * runner's evidence receiver (-1 with the local runner), each ready
 * pipe. */
static int
parent_pollfds(struct parent *p, int sigfd, struct pollfd *pfd,
    struct psession **who)
{
	int n = 0, i;

	pfd[n].fd = sigfd;
	pfd[n++].events = POLLIN;
	pfd[n].fd = p->ipc;
	pfd[n++].events = POLLIN;
	pfd[n].fd = p->listen_fd;
	pfd[n++].events = POLLIN;
	pfd[n].fd = parent_slurm_fd(p);	/* -1: the local runner */
	pfd[n++].events = POLLIN;
	pfd[n].fd = p->door_fd;		/* -1 without a front door */
	pfd[n++].events = POLLIN;
	pfd[n].fd = parent_slurm_ev_fd(p);	/* -1: the local runner */
	pfd[n++].events = POLLIN;
	for (i = 0; i < PARENT_MAX_SESSIONS; i++)
		if (p->s[i].pid > 0 && p->s[i].ready_fd >= 0) {
			who[n] = &p->s[i];
			pfd[n].fd = p->s[i].ready_fd;
			pfd[n++].events = POLLIN;
		}
	return n;
}

/* Until SIGTERM (1) or a failure: the api died or broke the protocol
 * (sessiond: that peer is dropped, its sessions stopped; the loop goes on). */
int
parent_loop(struct parent *p, int sigfd)
{
	struct pollfd pfd[6 + PARENT_MAX_SESSIONS];
	struct psession *who[6 + PARENT_MAX_SESSIONS];
	int n, i, r, ir;

	for (;;) {
		n = parent_pollfds(p, sigfd, pfd, who);
		if (poll(pfd, (nfds_t)n, 250) < 0 && errno != EINTR)
			return -1;
		if ((pfd[0].revents & POLLIN) &&
		    (r = parent_signal(p, sigfd)) != 0)
			return r;
		if (pfd[1].revents != 0) {
			ir = ipc_dispatch(&(struct ipc_peer){ p->ipc, "api",
			    &pipc_proto, parent_permit, sizeof(parent_permit) /
			    sizeof(parent_permit[0]) }, p, NULL);
			if (ir != IPC_OK && p->listen_fd >= 0)
				sessiond_peer_lost(p, ir);
			else if (ir != IPC_OK) {
				log_warnx("the api: %s; stopping "
				    "every session", ipc_strerror(ir));
				return -1;
			}
		}
		if (pfd[2].revents != 0)
			sessiond_accept(p);
		if (pfd[3].revents != 0 && parent_slurm_dispatch(p) != 0)
			return -1;
		if (pfd[4].revents != 0) {	/* it sends nothing: gone */
			log_warnx("the front door closed its socket; "
			    "stopping every session");
			return -1;
		}
		if (pfd[5].revents != 0 && parent_slurm_ev_dispatch(p) != 0)
			return -1;
		for (i = 6; i < n; i++)
			if (pfd[i].revents != 0)
				parent_session_ready(p, who[i]);
		parent_session_timers(p);
		parent_retention(p);
	}
}

/* -n / -T / --config FILE / --sessiond PATH. */
static int
serve_parse(int argc, char **argv, const char **path, int *check,
    int *print, const char **sessiond)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "-n") == 0)
			*check = 1;
		else if (strcmp(argv[i], "-T") == 0)
			*print = 1;
		else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
			*path = argv[++i];
		else if (strcmp(argv[i], "--sessiond") == 0 && i + 1 < argc)
			*sessiond = argv[++i];
		else
			return -1;
	}
	return *path == NULL ? -1 : 0;
}

/* The sessions' secret files: a root-only directory (0700), its
 * parent made 0755 if missing (/run/cdsgate); and the grant key, made
 * now if missing, so the analytics backend can be started with it. */
int
parent_dirs(const struct gw_config *c)
{
	char d[CONFIG_STR_MAX], *slash;
	uint8_t key[GRANT_KEY_LEN];
	struct stat st;
	int r;

	r = grant_key_load(c->grant_key, 1, key);
	explicit_bzero(key, sizeof(key));
	if (r != GRANT_OK) {
		log_warn("grant_key %s: %s", c->grant_key, grant_strerror(r));
		return -1;
	}

	snprintf(d, sizeof(d), "%s", c->secrets_dir);
	if ((slash = strrchr(d, '/')) != NULL && slash != d) {
		*slash = '\0';
		if (mkdir(d, 0755) != 0 && errno != EEXIST)
			goto fail;
	}
	if ((mkdir(c->secrets_dir, 0700) != 0 && errno != EEXIST) ||
	    lstat(c->secrets_dir, &st) != 0)
		goto fail;
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    chmod(c->secrets_dir, 0700) != 0) {
		log_warnx("%s: must be a directory of root's", c->secrets_dir);
		return -1;
	}
	return 0;
fail:
	log_warn("%s", c->secrets_dir);
	return -1;
}

/* In a child of the parent (the api, a session supervisor): close the
 * sockets to the Slurm helper, the evidence receiver and the front door,
 * so that no child can speak to them as the parent. */
void
parent_helpers_close(struct parent *p)
{
	if (parent_slurm_fd(p) >= 0)
		close(p->slurm_fd);
	if (parent_slurm_ev_fd(p) >= 0)
		close(p->ev_fd);
	if (p->door_fd >= 0)
		close(p->door_fd);
	p->slurm_fd = p->ev_fd = p->door_fd = -1;
}

/* After the sessions: the Slurm helper, the evidence receiver and the
 * front door (serve's; under the split units the session helper's). */
void
parent_helpers_stop(struct parent *p)
{
	parent_slurm_stop_all(p);
	parent_door_stop(p);
}

/* Run it: everything after the checks.  Exit 0 only after SIGTERM. */
static int
parent_run(struct parent *p)
{
	sigset_t old;
	int sigfd, r;

	if ((sigfd = parent_signals(&old)) < 0) {
		log_warn("signals");
		return SESSION_EXIT_FAILED;
	}
	p->sigfd = sigfd;
	if (parent_slurm_begin(p) != 0 || parent_spawn_api(p, &old) != 0)
		return SESSION_EXIT_FAILED;
	if (parent_door_start(p, sigfd) != 0) {
		parent_stop_api(p, PARENT_STOP_MS);
		unlink(p->cfg.socket);
		return SESSION_EXIT_FAILED;
	}
	parent_record_recover(p);
	r = parent_loop(p, sigfd);
	parent_sessions_stop_all(p, PARENT_STOP_MS);
	parent_helpers_stop(p);
	if (r == 1 && parent_stop_api(p, PARENT_STOP_MS) == 0) {
		unlink(p->cfg.socket);
		return SESSION_EXIT_OK;
	}
	if (p->api_pid > 0)
		parent_stop_api(p, PARENT_STOP_MS);
	unlink(p->cfg.socket);
	return SESSION_EXIT_FAILED;
}

/* Every path of the config usable by the user that will use it; each
 * problem printed with its key.  0, or -1. */
static int
serve_paths_ok(const struct parent *p, const char *path)
{
	struct paths_problem pr[16];
	int i, n = paths_check(&p->cfg, p->sessiond != NULL, pr, 16);

	for (i = 0; i < (n < 0 ? 1 : n < 16 ? n : 16); i++)
		log_warnx("%s: %s%s%s", path, pr[i].key,
		    pr[i].key[0] != '\0' ? ": " : "", pr[i].msg);
	return n == 0 ? 0 : -1;
}

int
parent_serve_cmd(int argc, char **argv)
{
	static struct parent p;
	struct policy_error e;
	const char *path = NULL;
	int check = 0, print = 0;

	log_init("cdsgated serve");
	if (serve_parse(argc, argv, &path, &check, &print, &p.sessiond) != 0)
		return serve_usage();
	if (config_load(&p.cfg, path, &e) != POLICY_OK) {
		log_warnx("%s", e.msg);
		return SESSION_EXIT_CONFIG;
	}
	if (print)
		config_print(&p.cfg, stdout);
	if ((check || !print) && serve_paths_ok(&p, path) != 0)
		return SESSION_EXIT_CONFIG;
	if (check || print) {
		if (check)
			printf("%s: configuration ok\n", path);
		return SESSION_EXIT_OK;
	}
	if (geteuid() != 0) {
		log_warnx("must run as root (%s)",
		    p.sessiond != NULL ? "it drops the api and the audit key "
		    "holder to their users" : "it starts session supervisors");
		return SESSION_EXIT_CONFIG;
	}
	/* split: the secret files are sessiond's, not ours */
	if ((p.sessiond == NULL && parent_dirs(&p.cfg) != 0) ||
	    parent_record_dir(&p.cfg) != 0)
		return SESSION_EXIT_CONFIG;
	p.ipc = -1;
	p.listen_fd = -1;
	p.door_pid = -1;
	p.door_fd = -1;
	return parent_run(&p);
}
