/*
 * api/gaterunner.c — the gate runner process and its client side.
 *
 * Trust: the runner takes typed, size-checked RUN messages (common/ipc.h)
 * from the api that forked it; the api may be compromised, so the runner
 * checks every string is terminated inside its bounds and runs only
 * `<cdsgate> deid anonymize ...` (argv[0] fixed at fork).  It holds no
 * other fd than its socket.  Its filter (SANDBOX_PROFILE_GATE) is the
 * only api-side one with execve; it stays on across the exec, so it also
 * covers what the CLI and its deid worker do (docs/seccomp.md).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/gaterunner.h"
#include "common/ipc.h"
#include "common/log.h"
#include "sandbox/confine.h"
#include "sandbox/sandbox.h"

enum { GR_RUN = 1, GR_DONE = 2 };

struct gr_run {
	uint32_t	argc;
	uint32_t	len;			/* bytes used in args */
	char		args[GATERUNNER_ARGS_MAX];	/* NUL-separated */
};

struct gr_done {
	int32_t		status;		/* exit status, -1: did not run */
	char		err[GATERUNNER_ERR_MAX];
};

static const struct ipc_type gr_types[] = {
	{ GR_RUN, sizeof(struct gr_run), 0, "run" },
	{ GR_DONE, sizeof(struct gr_done), 0, "done" },
};
static const struct ipc_proto gr_proto = { gr_types, 2 };

/* ---- the runner ---- */

/* The api's pid, set before the fork: the runner dies with it. */
static pid_t	gr_api;

struct gr_state {
	const char	*cdsgate;
	int		 sock;
};

/* Collect the gate's stderr until it closes it.  The api closing our
 * socket (it stops) ends us here: the gate dies with us (PDEATHSIG), so
 * the api's stop does not wait for a long import. */
static void
gr_collect(int fd, int sock, char *err, size_t errlen)
{
	struct pollfd pfd[2] = { { fd, POLLIN, 0 }, { sock, 0, 0 } };
	size_t got = 0;
	ssize_t n;
	char sink[512];

	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents & (POLLHUP | POLLERR))
			_exit(0);
		if (pfd[0].revents == 0)
			continue;
		if (got + 1 < errlen)
			n = read(fd, err + got, errlen - 1 - got);
		else
			n = read(fd, sink, sizeof(sink));	/* over the cap */
		if (n <= 0)
			break;
		if (got + 1 < errlen)
			got += (size_t)n;
	}
	err[got] = '\0';
}

/* Run argv with stdin/stdout on /dev/null; its stderr (bounded) into
 * err.  Returns the exit status or -1. */
static int
gr_exec(char *const *argv, int sock, char *err, size_t errlen)
{
	pid_t pid, runner = getpid();
	int p[2], st = 0, fd;
	struct confine c;

	if (pipe2(p, O_CLOEXEC) != 0 || (pid = fork()) < 0)
		return snprintf(err, errlen, "starting the gate: %s",
		    strerror(errno)), -1;
	if (pid == 0) {
		/* The gate dies with the runner (and it with the api); it
		   keeps the runner's GATE filter through the exec. */
		confine_init(&c, "gate");
		c.deathsig = SIGKILL;
		c.parent = runner;
		if (dup2(p[1], 2) < 0 || confine_apply(&c, err, errlen) !=
		    CONFINE_OK || (fd = open("/dev/null", O_RDWR)) < 0 ||
		    dup2(fd, 0) < 0 || dup2(fd, 1) < 0) {
			/* fd 2 is the pipe gr_collect reads: this is the
			   caller's error text, not a log line */
			dprintf(2, "starting the gate: %s", err[0] ? err :
			    strerror(errno));
			_exit(1);
		}
#ifdef __SANITIZE_ADDRESS__
		/* LeakSanitizer's exit check stops the world with ptrace,
		   which GATE kills (the filter outlives the exec). */
		setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
#endif
		execv(argv[0], argv);
		/* the same pipe, the same error text */
		dprintf(2, "exec %s: %s", argv[0], strerror(errno));
		_exit(1);
	}
	close(p[1]);
	gr_collect(p[0], sock, err, errlen);
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	snprintf(err, errlen, "the gate was killed by signal %d",
	    WTERMSIG(st));
	return -1;
}

/* Split a RUN into argv; refuse anything but `cdsgate deid anonymize`. */
static int
gr_argv(const struct gr_state *st, const struct gr_run *r, char **argv)
{
	size_t off = 0, i, n;

	if (r->argc < 3 || r->argc > GATERUNNER_ARGC_MAX ||
	    r->len > sizeof(r->args))
		return -1;
	for (i = 0; i < r->argc; i++) {
		if (off >= r->len ||
		    (n = strnlen(r->args + off, r->len - off)) == r->len - off)
			return -1;	/* unterminated */
		argv[i] = (char *)r->args + off;
		off += n + 1;
	}
	argv[i] = NULL;
	return strcmp(argv[0], st->cdsgate) == 0 &&
	    strcmp(argv[1], "deid") == 0 &&
	    strcmp(argv[2], "anonymize") == 0 ? 0 : -1;
}

/* RUN: check, run, answer DONE.  A malformed RUN ends the runner. */
static int
gr_on_run(void *ctx, struct ipc_msg *m)
{
	static char *argv[GATERUNNER_ARGC_MAX + 1];
	static struct gr_done d;
	struct gr_state *st = ctx;

	if (gr_argv(st, (struct gr_run *)m->data, argv) != 0)
		return -1;
	memset(&d, 0, sizeof(d));
	d.status = gr_exec(argv, st->sock, d.err, sizeof(d.err));
	return ipc_send(st->sock, &gr_proto, GR_DONE, &d, sizeof(d), -1) ==
	    IPC_OK ? 0 : -1;
}

static const struct ipc_handler gr_from_api[] = {
	{ GR_RUN, gr_on_run },
};

static void __attribute__((noreturn))
gr_main(int sock, const char *cdsgate)
{
	struct ipc_peer peer = { sock, "api", &gr_proto, gr_from_api, 1 };
	struct gr_state st = { cdsgate, sock };
	struct confine c;
	char err[256];
	int rc;

	log_init("cdsgated api: gate runner");
	confine_init(&c, "gate runner");
	c.deathsig = SIGKILL;
	c.parent = gr_api;	/* the api, which must still be there */
	c.profile = SANDBOX_PROFILE_GATE;
	if (confine_apply(&c, err, sizeof(err)) != CONFINE_OK)
		fatalx("sandbox: %s", err);
	log_info("sandbox %s, profile %s",
	    sandbox_mode_name(), sandbox_profile_name(SANDBOX_PROFILE_GATE));
#ifdef ENABLE_TEST_HOOKS
	/* CDSGATE_TEST_VIOLATE=gate:CALL: prove the filter kills */
	if (getenv("CDSGATE_TEST_VIOLATE") != NULL &&
	    strncmp(getenv("CDSGATE_TEST_VIOLATE"), "gate:", 5) == 0)
		sandbox_violate(getenv("CDSGATE_TEST_VIOLATE") + 5);
#endif
	while ((rc = ipc_dispatch(&peer, &st, NULL)) == IPC_OK)
		;
	if (rc != IPC_EOF)
		fatalx("the api broke the protocol (%s)", ipc_strerror(rc));
	_exit(0);
}

/* ---- the api's side ---- */

/* The helper's side of ipc_helper_start(). */
static void
gr_child(int sock, void *arg)
{
	char err[128];

	/* none of the api's descriptors (its listening sockets, the key
	   holder's socket) outlive the api in this child */
	if (confine_fds(&sock, 0, err, sizeof(err)) != 0)
		fatalx("%s", err);
	gr_main(sock, arg);
}

int
gaterunner_start(const char *cdsgate, struct gaterunner *gr, char *err,
    size_t errlen)
{
	char why[256];

	gr_api = getpid();
	if (ipc_helper_start(gr_child, (void *)cdsgate, &gr->pid, &gr->sock,
	    why, sizeof(why)) != 0)
		return snprintf(err, errlen, "gate runner: %s", why), -1;
	return 0;
}

static int
gr_on_done(void *ctx, struct ipc_msg *m)
{
	memcpy(ctx, m->data, sizeof(struct gr_done));
	return 0;
}

static const struct ipc_handler gr_from_runner[] = {
	{ GR_DONE, gr_on_done },
};

/* Pack argv into r (NUL-separated); -1 when it does not fit. */
static int
gr_pack(const char *const *argv, struct gr_run *r)
{
	size_t n;

	memset(r, 0, sizeof(*r));
	for (; *argv != NULL; argv++, r->argc++) {
		n = strlen(*argv) + 1;
		if (r->argc >= GATERUNNER_ARGC_MAX ||
		    n > sizeof(r->args) - r->len)
			return -1;
		memcpy(r->args + r->len, *argv, n);
		r->len += (uint32_t)n;
	}
	return 0;
}

/* Send one RUN; the DONE comes later (gaterunner_recv). */
int
gaterunner_send(struct gaterunner *gr, const char *const *argv, char *err,
    size_t errlen)
{
	static struct gr_run r;

	if (gr_pack(argv, &r) != 0)
		return snprintf(err, errlen, "the job is too large"), -1;
	if (gr->sock < 0 || ipc_send(gr->sock, &gr_proto, GR_RUN, &r,
	    sizeof(r), -1) != IPC_OK)
		return snprintf(err, errlen, "the gate runner is gone"), -1;
	return 0;
}

/* Read the DONE of the oldest RUN (the runner answers in order). */
int
gaterunner_recv(struct gaterunner *gr, int *status, char *err,
    size_t errlen)
{
	struct ipc_peer peer = { gr->sock, "gate runner", &gr_proto,
	    gr_from_runner, 1 };
	static struct gr_done d;

	if (gr->sock < 0 || ipc_dispatch(&peer, &d, NULL) != IPC_OK)
		return snprintf(err, errlen, "the gate runner is gone or broke "
		    "the protocol"), -1;
	d.err[sizeof(d.err) - 1] = '\0';
	snprintf(err, errlen, "%s", d.err);
	*status = d.status;
	return 0;
}

int
gaterunner_fd(const struct gaterunner *gr)
{
	return gr != NULL ? gr->sock : -1;
}

int
gaterunner_stop(struct gaterunner *gr)
{
	return ipc_helper_stop(&gr->pid, &gr->sock);
}
