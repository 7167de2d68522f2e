/*
 * control/sessiond.c — `cdsgated sessiond --config FILE`: the root part
 * of `cdsgated serve`, on its own, for the split systemd units
 * (systemd/README.md).  It starts and stops session supervisors (or,
 * with session_runner "slurm", jobs) for one peer: the api of `cdsgated
 * serve --sessiond PATH`, which runs in the low-exposure unit.  Beside
 * them it runs, with serve's code, what serve alone would: the front
 * door, the Slurm helper and the evidence receiver (control/parent-door.c,
 * control/parent-slurm.c), forked at start and kept across peers.
 *
 * Root, no seccomp filter (it forks session supervisors that need root).
 * Trust: the operator's config and arguments; one connection at a time on
 * a SOCK_SEQPACKET socket, accepted only from the api user's uid
 * (SO_PEERCRED), speaking api/parentipc.h exactly as the api speaks it to
 * the parent of plain `serve` (control/parent-session.c does the work).
 * A peer that breaks the protocol, or goes away, is dropped and every
 * session it started is stopped (fail closed: jobs cancelled, front door
 * entries removed); the next connection may then start afresh.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/privdrop.h"
#include "common/log.h"
#include "control/parent.h"
#include "supervisor/session.h"

#define SESSIOND_PEER_USER	PRIVDROP_API_USER
#define SD_LISTEN_FDS_START	3	/* sd_listen_fds(3) */

struct sessiond_args {
	const char	*config;
	const char	*socket;	/* NULL: from systemd (LISTEN_FDS) */
	const char	*peer_user;
};

/* Usage text answers whoever typed the command: output, not a log line
 * (common/log.h), so it goes to stderr as it is. */
static int
sessiond_usage(void)
{
	fprintf(stderr, "usage: cdsgated sessiond --config FILE "
	    "[--socket PATH] [--peer-user NAME]\n"
	    "  --socket PATH     listen there (default: the socket systemd "
	    "passes)\n"
	    "  --peer-user NAME  the only user that may connect (default "
	    SESSIOND_PEER_USER ")\n");
	return SESSION_EXIT_CONFIG;
}

static int
sessiond_parse(int argc, char **argv, struct sessiond_args *a)
{
	int i;

	a->peer_user = SESSIOND_PEER_USER;
	for (i = 0; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--config") == 0)
			a->config = argv[i + 1];
		else if (strcmp(argv[i], "--socket") == 0)
			a->socket = argv[i + 1];
		else if (strcmp(argv[i], "--peer-user") == 0)
			a->peer_user = argv[i + 1];
		else
			return -1;
	}
	return i == argc && a->config != NULL ? 0 : -1;
}

/* Socket activation: exactly one SOCK_SEQPACKET fd, meant for us. */
static int
sessiond_systemd_fd(void)
{
	const char *pid = getenv("LISTEN_PID"), *n = getenv("LISTEN_FDS");
	int type = 0;
	socklen_t len = sizeof(type);

	if (pid == NULL || n == NULL || strtol(pid, NULL, 10) != getpid() ||
	    strcmp(n, "1") != 0) {
		log_warnx("no --socket and no socket from systemd "
		    "(LISTEN_PID/LISTEN_FDS)");
		return -1;
	}
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (getsockopt(SD_LISTEN_FDS_START, SOL_SOCKET, SO_TYPE, &type,
	    &len) != 0 || type != SOCK_SEQPACKET) {
		log_warnx("the socket from systemd is not "
		    "SOCK_SEQPACKET (ListenSequentialPacket=)");
		return -1;
	}
	fcntl(SD_LISTEN_FDS_START, F_SETFD, FD_CLOEXEC);
	return SD_LISTEN_FDS_START;
}

/* Bind path for the peer's user alone: owner uid, mode 0600. */
static int
sessiond_bind(const char *path, const struct privdrop_user *u)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_warnx("%s: path too long", path);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0 ||
	    chown(path, u->uid, u->gid) != 0 || chmod(path, 0600) != 0 ||
	    listen(fd, 4) != 0) {
		log_warn("%s", path);
		close(fd);
		return -1;
	}
	return fd;
}

/* A connection: kept if it is the peer's uid and nobody is connected. */
void
sessiond_accept(struct parent *p)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);
	int fd;

	if ((fd = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC)) < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) != 0 ||
	    len != sizeof(uc)) {
		log_warn("SO_PEERCRED; connection refused");
		close(fd);
	} else if (uc.uid != p->peer_uid) {
		log_warnx("refused a connection from uid %u pid %d: "
		    "only uid %u may ask", (unsigned)uc.uid, (int)uc.pid,
		    (unsigned)p->peer_uid);
		close(fd);
	} else if (p->ipc >= 0) {
		log_warnx("refused a second connection (pid %d): "
		    "one daemon at a time", (int)uc.pid);
		close(fd);
	} else {
		log_warnx("the daemon connected (uid %u pid %d)",
		    (unsigned)uc.uid, (int)uc.pid);
		p->ipc = fd;
		/* digests of recordings closed while nobody was connected */
		parent_record_recover(p);
	}
}

/* The peer closed or broke the protocol: drop it, stop its sessions. */
void
sessiond_peer_lost(struct parent *p, int ipc_rc)
{
	int n = parent_sessions_live(p) + parent_slurm_live(p);

	if (ipc_rc == IPC_EOF)
		log_warnx("the daemon went away; stopping its %d "
		    "session(s)", n);
	else
		log_warnx("the daemon's request refused: %s; "
		    "dropping it and stopping its %d session(s)",
		    ipc_strerror(ipc_rc), n);
	close(p->ipc);
	p->ipc = -1;
	parent_sessions_stop_all(p, PARENT_STOP_MS);
}

/* Config, peer, socket: everything that can fail before the loop. */
static int
sessiond_setup(struct parent *p, const struct sessiond_args *a)
{
	struct policy_error e;
	struct privdrop_user u;
	char msg[256];

	if (config_load(&p->cfg, a->config, &e) != POLICY_OK) {
		log_warnx("%s", e.msg);
		return -1;
	}
	if (geteuid() != 0) {
		log_warnx("must run as root (it starts session supervisors)");
		return -1;
	}
	if (privdrop_lookup(a->peer_user, NULL, &u, msg, sizeof(msg)) != 0) {
		log_warnx("%s", msg);
		return -1;
	}
	p->peer_uid = u.uid;
	if (parent_dirs(&p->cfg) != 0 || parent_record_dir(&p->cfg) != 0)
		return -1;
	p->listen_fd = a->socket != NULL ? sessiond_bind(a->socket, &u) :
	    sessiond_systemd_fd();
	/* accept() after poll() must not block on a peer that went away */
	if (p->listen_fd < 0 || fcntl(p->listen_fd, F_SETFL, O_NONBLOCK) != 0)
		return -1;
	return 0;
}

int
sessiond_cmd(int argc, char **argv)
{
	static struct parent p;
	struct sessiond_args a = { 0 };
	sigset_t old;
	int r;

	log_init("cdsgated sessiond");
	if (sessiond_parse(argc, argv, &a) != 0)
		return sessiond_usage();
	p.ipc = -1;
	p.listen_fd = -1;
	p.door_pid = -1;
	p.door_fd = -1;
	if (sessiond_setup(&p, &a) != 0)
		return SESSION_EXIT_CONFIG;
	if ((p.sigfd = parent_signals(&old)) < 0) {
		log_warn("signals");
		return SESSION_EXIT_FAILED;
	}
	/* serve's helpers, the same code: with the split units the root
	   helper holds the session table they serve (the Slurm helper
	   and the evidence receiver for session_runner slurm, the front
	   door for front_door_listen); forked before any peer connects */
	if (parent_slurm_begin(&p) != 0 || parent_door_start(&p, p.sigfd) != 0)
		return SESSION_EXIT_FAILED;
	printf("ready %s\n", a.socket != NULL ? a.socket : "(systemd)");
	fflush(stdout);
	r = parent_loop(&p, p.sigfd);
	parent_sessions_stop_all(&p, PARENT_STOP_MS);
	parent_helpers_stop(&p);
	if (a.socket != NULL)
		unlink(a.socket);
	return r == 1 ? SESSION_EXIT_OK : SESSION_EXIT_FAILED;
}
