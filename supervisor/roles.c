/*
 * supervisor/roles.c — the process table of a session and spawning its
 * rows: each role's user, limits and seccomp profile, what its child
 * does as root before the drop and what it runs after, and the fork
 * that starts it and waits for its exec or its error report.  Root; the
 * child's side runs between fork() and the privilege drop.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <openssl/rand.h>

#include "supervisor/browser.h"
#include "supervisor/childproc.h"
#include "supervisor/evidence.h"
#include "common/grant.h"
#include "gateway/forward.h"
#include "supervisor/membound.h"
#include "supervisor/notify.h"
#include "common/privdrop.h"
#include "supervisor/rundir.h"
#include "supervisor/session.h"		/* and supervise-log.h */
#include "supervisor/session-int.h"
#include "supervisor/testhook.h"
#include "gateway/slog.h"
#include "gateway/tlsfront.h"
#include "gateway/worker.h"
#include "supervisor/xvfb.h"
#include "sandbox/confine.h"
#include "policy/chromium.h"
#include "sandbox/namespace.h"
#include "sandbox/sandbox.h"
#include "policy/creds.h"
#include "record/record.h"


static int	role_prepare_xvfb(struct session *, const char **);
static int	role_prepare_browser(struct session *, const char **);
static void	role_run_xvfb(struct session *, int);
static void	role_run_worker(struct session *, int);
static void	role_run_forward(struct session *, int);
static void	role_run_browser(struct session *, int);
static void	role_run_tls(struct session *, int);


/*
 * The process table.  prepare runs in the child as root (after fork,
 * before the drop); run runs unprivileged and never returns.  A role's
 * exit either ends the session or (restart) brings it back with
 * back-off.  Each row also says the role's confinement, which
 * child_confine turns into one description for confine_apply
 * (sandbox/confine.h): its resource limits (RL_KEEP leaves the inherited
 * one; RLIMIT_CORE is 0 for all), its directory, and its seccomp profile
 * -- the one logged at its start is the one applied.  NO_PROFILE: the
 * browser keeps Chromium's own seccomp-bpf sandbox, which ours would
 * only get in the way of (a filter outlives the exec); its jail's init
 * loads JAILINIT after forking Chromium's process.  late_filter: the
 * role loads its profile itself once its start-up is done (the worker
 * after connecting to X, the key holder after loading the key).
 */
#define RL_KEEP		((rlim_t)-2)

const struct role_entry roles[ROLE_COUNT] = {
	/* Xvfb forks xkbcomp through /bin/sh: nproc unset (it counts all
	   processes of the shared user, across sessions). */
	[ROLE_XVFB] = { "xvfb", PRIVDROP_WORKER_USER, 0,
	    role_prepare_xvfb, role_run_xvfb, 1024, RL_KEEP, 0,
	    SANDBOX_PROFILE_XVFB, 0 },
	/* The worker appends to the session log: no RLIMIT_FSIZE. */
	[ROLE_WORKER] = { "worker", PRIVDROP_WORKER_USER, 0,
	    NULL, role_run_worker, 64, 0, 0, SANDBOX_PROFILE_WORKER, 1 },
	/* The forwarder: its connection cap plus a few fds; no forks. */
	[ROLE_FORWARD] = { "forward", PRIVDROP_BROWSER_USER, 0,
	    NULL, role_run_forward, 256, 0, 0, SANDBOX_PROFILE_FORWARD, 0 },
	/* RLIMIT_DATA counts private writable mappings only, so Chromium's
	   large PROT_NONE reservations (V8's cage, PartitionAlloc's pools)
	   still work where RLIMIT_AS would stop it starting.  Twice the
	   session's limit: a backstop for what one process can take between
	   two samples, high enough that the sum passes the limit first
	   (measured: a renderer maps ~180 MiB more than it holds, the idle
	   browser process 331 MiB for 38 MiB). */
	[ROLE_BROWSER] = { "browser", PRIVDROP_BROWSER_USER, 1,
	    role_prepare_browser, role_run_browser, RL_KEEP, RL_KEEP, 1,
	    NO_PROFILE, 0 },
	/* The TLS key holder (only with --tls-cert): client sockets and
	   relays (2 per connection), its socket to the worker, the log. */
	[ROLE_TLS] = { "tls", PRIVDROP_WORKER_USER, 0,
	    NULL, role_run_tls, 32, 0, 0, SANDBOX_PROFILE_TLS, 1 },
};

/* ---- the child side of spawning ---- */

/* The role's row as a confinement: limits (before the drop: a raised
 * limit cannot come back; no core files: a crashing browser must not
 * write what it showed), user, directory, the supervisor's death
 * signal.  The profile is child_main's second step. */
static void
child_confine(const struct session *s, enum role r,
    const struct privdrop_user *u, struct confine *c)
{
	const struct role_entry *re = &roles[r];
	rlim_t data = re->data_limit ? membound_data_rlimit(&s->mem) :
	    RLIM_INFINITY;

	confine_init(c, re->name);
	confine_rlimit(c, RLIMIT_CORE, 0);
	if (re->nofile != RL_KEEP)
		confine_rlimit(c, RLIMIT_NOFILE, re->nofile);
	if (re->nproc != RL_KEEP)
		confine_rlimit(c, RLIMIT_NPROC, re->nproc);
	if (data != RLIM_INFINITY)
		confine_rlimit(c, RLIMIT_DATA, data);
	c->user = u;
	c->dir = r == ROLE_BROWSER ? s->bdir : "/";
	c->deathsig = SIGKILL;	/* set after the drop, which clears it */
}

/* The logger names the role in each line from here on ("cdsgated
 * worker": the supervisor's name and the role's), at the supervisor's
 * verbosity. */
static void
child_log_name(const char *role)
{
	char name[LOG_NAME_MAX];
	int verbose = log_verbose();

	snprintf(name, sizeof(name), "%s %s", log_name(), role);
	log_init(name);
	log_set_verbose(verbose);
}

static void __attribute__((noreturn))
child_main(struct session *s, enum role r, int errfd, pid_t parent)
{
	const struct role_entry *re = &roles[r];
	const struct privdrop_user *u = strcmp(re->user,
	    PRIVDROP_BROWSER_USER) == 0 ? &s->browser_user : &s->worker_user;
	const char *what = NULL;
	struct confine c;
	char err[256];
	int keep[6], nkeep = 0;

	child_log_name(re->name);
	/* Out of the supervisor's session and process group: a ^C in
	   the terminal reaches only the supervisor, which stops us in
	   order; and a browser's whole group can be killed at once. */
	if (setsid() < 0)
		child_fail(errfd, "setsid", errno);
	/* The grant is the forwarder's alone (it names only this session's
	   dataset, but no other process needs it). */
	if (r != ROLE_FORWARD && s->grant_line != NULL)
		explicit_bzero(s->grant_line, strlen(s->grant_line));
	/* Into the session's memory cgroup before anything is allocated. */
	if (re->data_limit && membound_join(&s->mem) != 0)
		child_fail(errfd, "memory cgroup", errno);
	child_reset_signals();
	/* errfd must not sit on fd 3, which Xvfb's -displayfd takes. */
	if ((errfd = fcntl(errfd, F_DUPFD_CLOEXEC, 10)) < 0)
		_exit(127);
	if (child_stdio(r != ROLE_WORKER && r != ROLE_TLS && !s->verbose) != 0)
		child_fail(errfd, "stdio", errno);
	if (re->prepare != NULL && re->prepare(s, &what) != 0)
		child_fail(errfd, what, errno);

	keep[nkeep++] = errfd;
	if (r == ROLE_XVFB)
		keep[nkeep++] = XVFB_DISPLAYFD;
	if (r == ROLE_WORKER) {
		keep[nkeep++] = s->listen_fd;
		keep[nkeep++] = slog_fd();
		keep[nkeep++] = s->ev.record_fd;
		keep[nkeep++] = s->tls_ipc[1];	/* -1 without TLS: ignored */
	}
	if (r == ROLE_TLS) {
		keep[nkeep++] = s->tls_ipc[0];
		keep[nkeep++] = slog_fd();
	}
	if (r == ROLE_FORWARD) {
		keep[nkeep++] = s->bnet.listen_fd;
		keep[nkeep++] = slog_fd();
		keep[nkeep++] = s->ev.netlog_fd;
		if (s->ev.pcap_fd >= 0)
			keep[nkeep++] = s->ev.pcap_fd;
	}
	close_except(keep, (size_t)nkeep);
	child_confine(s, r, u, &c);
	if (confine_apply(&c, err, sizeof(err)) != CONFINE_OK)
		child_fail(errfd, err, 0);
	if (supervisor_gone(errfd, parent))
		_exit(127);	/* the supervisor is already gone */
	/* The row's profile, unless the role loads it after its start-up
	   (then from the same row: worker_config and tlsfront_config). */
	confine_init(&c, re->name);
	c.profile = re->late_filter ? CONFINE_NO_PROFILE : re->profile;
	if (confine_apply(&c, err, sizeof(err)) != CONFINE_OK)
		child_fail(errfd, err, 0);
	re->run(s, errfd);
	child_fail(errfd, "run returned", 0);
}

static int
role_prepare_xvfb(struct session *s, const char **what)
{
	if (dup2(s->xvfb_pipe, XVFB_DISPLAYFD) < 0 ||
	    fcntl(XVFB_DISPLAYFD, F_SETFD, 0) < 0) {
		*what = "displayfd";
		return -1;
	}
	return xvfb_private_socket_dir(s->xsockdir, what);
}

static void
role_run_xvfb(struct session *s, int errfd)
{
	struct xvfb_params p = { s->spec->width, s->spec->height, s->xauth };

	/* Confined with its filter (child_main): it outlives the exec. */
	if (s->violate[ROLE_XVFB] != NULL)	/* test hook: dies here */
		sandbox_violate(s->violate[ROLE_XVFB]);
	xvfb_exec(&p);
	child_fail(errfd, "exec " XVFB_PATH, errno);
}

static int
role_prepare_browser(struct session *s, const char **what)
{
	return browser_enter_jail(&s->bcmd, s->bnet.netns_fd, what);
}

/* pid 1 of the jail stays as its init (sandbox/namespace.c); its child
 * execs Chromium. */
static void
role_run_browser(struct session *s, int errfd)
{
	struct confine init;
	char err[120] = "fork the jail's first process";
	int code;

	/* What the init does from here on is JAILINIT's: wait, reap. */
	confine_init(&init, "jail init");
	init.profile = SANDBOX_PROFILE_JAILINIT;
	switch (ns_init_fork(errfd, &init, &code, err, sizeof(err))) {
	case 0:
		if (browser_policy_readable() != 0)
			child_fail(errfd, "read the managed policy as the "
			    "browser user", errno);
		browser_exec(&s->bcmd);
		child_fail(errfd, "exec " BROWSER_PATH, errno);
	case 1:
		_exit(code);
	default:
		child_fail(errfd, err, errno);
	}
}

static void
role_run_forward(struct session *s, int errfd)
{
	/* It has its listening socket and log (and its filter, from
	   child_main): nothing else to open. */
	if (s->violate[ROLE_FORWARD] != NULL)	/* test hook: dies here */
		sandbox_violate(s->violate[ROLE_FORWARD]);
	close(errfd);		/* "started": nothing is exec'd here */
	_exit(forward_main(&s->fcfg));
}

static void
role_run_worker(struct session *s, int errfd)
{
	/* Only what the worker needs from the environment: its display. */
	if (clearenv() != 0 || setenv("PATH", "/usr/bin:/bin", 1) != 0 ||
	    setenv("DISPLAY", s->display_name, 1) != 0 ||
	    setenv("XAUTHORITY", s->xauth, 1) != 0)
		child_fail(errfd, "environment", errno);
	slog_set_proc("worker");
	close(errfd);		/* "started": nothing is exec'd here */
	_exit(worker_main(&s->wcfg));
}

/* The key holder: it loads the key and enters its filter itself
 * (tlsfront_main), after reading nothing from anyone. */
static void
role_run_tls(struct session *s, int errfd)
{
	if (clearenv() != 0)
		child_fail(errfd, "environment", errno);
	close(errfd);		/* "started": nothing is exec'd here */
	_exit(tlsfront_main(&s->tcfg));
}

/* ---- the supervisor side of spawning ---- */

/* We could not switch back from a jail namespace: whatever we did next
 * (a child, a socket) would be inside it.  Stop at once; our children
 * die with us (PR_SET_PDEATHSIG), the next start sweeps the directory. */
void __attribute__((noreturn))
fatal_namespace(const char *which)
{
	log_warnx("cannot return to our own %s namespace; stopping", which);
	_exit(SESSION_EXIT_FAILED);
}

int
child_spawn(struct session *s, enum role r)
{
	struct child_report rep;
	struct child *c = &s->child[r];
	pid_t parent = getpid(), pid;
	const char *sbn;
	char sb[64];
	int p[2], st, pidns = -1;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) != 0) {
		log_warn("%s: pipe", roles[r].name);
		return -1;
	}
	fflush(NULL);
	/* The browser is pid 1 of a fresh pid namespace. */
	if (r == ROLE_BROWSER && ns_pid_begin(&pidns) != 0) {
		log_warn("%s: unshare(CLONE_NEWPID)", roles[r].name);
		close(p[0]);
		close(p[1]);
		return -1;
	}
	pid = fork();
	if (pid != 0 && ns_pid_end(pidns) != 0)
		fatal_namespace("pid");
	if (pid < 0) {
		log_warn("%s: fork", roles[r].name);
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		child_main(s, r, p[1], parent);
	}
	close(p[1]);
	/* EOF = exec'd (or, for the worker, about to run); a report =
	   failed before that. */
	do
		n = read(p[0], &rep, sizeof(rep));
	while (n < 0 && errno == EINTR);
	close(p[0]);
	if (n == (ssize_t)sizeof(rep)) {
		rep.what[sizeof(rep.what) - 1] = '\0';
		log_warnx("%s: %s: %s", roles[r].name, rep.what,
		    rep.err != 0 ? strerror(rep.err) : "failed");
		waitpid(pid, &st, 0);
		log_child_exit(roles[r].name, roles[r].profile, pid, st,
		    json_pack("{s:s}", "error", rep.what));
		return -1;
	}
	c->pid = pid;
	c->pgid = pid;
	c->started_ms = now_ms();
	sbn = role_sandbox(roles[r].profile, sb, sizeof(sb));
	slog_event("child_start", json_pack("{s:s, s:i, s:s, s:i, s:s}",
	    "role", roles[r].name, "pid", (int)pid, "user", roles[r].user,
	    "uid", (int)(strcmp(roles[r].user, PRIVDROP_BROWSER_USER) == 0 ?
	    s->browser_user.uid : s->worker_user.uid), "sandbox", sbn));
	/* How each role is confined goes to stderr once, not on restarts. */
	if (c->last_pid <= 0)
		log_warnx("%s started, pid %d, sandbox %s", roles[r].name,
		    (int)pid, sbn);
	else
		log_info("%s started, pid %d, sandbox %s", roles[r].name,
		    (int)pid, sbn);
	return 0;
}
