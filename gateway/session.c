/*
 * gateway/session.c — the session supervisor.
 *
 * Runs as root, single-threaded, one poll() loop on a signalfd.  Trust:
 * it reads only the operator's spec and files (already checked by
 * policy/spec.c) and the exit statuses of its children; it never parses
 * network input and never connects to X.  Everything privileged happens
 * here or in a child between fork() and its privilege drop.
 *
 * Lifecycle: set-up (users, secrets, session id, log, socket, session
 * directory, policy, cookie) -> Xvfb, worker, browser -> "ready" ->
 * supervise (restart the browser with back-off) -> stop every child
 * (SIGTERM, then SIGKILL), reap all, remove the directory, log
 * session_stop.  Whatever failed, the tear-down runs.
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

#include "gateway/browser.h"
#include "gateway/childproc.h"
#include "gateway/evidence.h"
#include "common/grant.h"
#include "gateway/forward.h"
#include "gateway/membound.h"
#include "gateway/notify.h"
#include "gateway/privdrop.h"
#include "gateway/rundir.h"
#include "gateway/session.h"		/* and supervise-log.h */
#include "gateway/testhook.h"
#include "gateway/slog.h"
#include "gateway/tlsfront.h"
#include "gateway/worker.h"
#include "gateway/xvfb.h"
#include "sandbox/confine.h"
#include "policy/chromium.h"
#include "sandbox/namespace.h"
#include "sandbox/sandbox.h"
#include "policy/creds.h"
#include "record/record.h"

#define RESTART_HISTORY		128	/* >= browser_restart_max bound */
#define LISTEN_BACKLOG		128	/* a connect flood queues, not SYN-drops */

enum role { ROLE_XVFB, ROLE_WORKER, ROLE_FORWARD, ROLE_BROWSER, ROLE_TLS,
    ROLE_COUNT };

struct child {
	pid_t		 pid;		/* -1 = not running */
	pid_t		 pgid;		/* its process group (= first pid) */
	pid_t		 last_pid;	/* after it was reaped */
	long		 started_ms;
	int		 status;	/* last wait status */
};

struct session {
	const struct session_spec *spec;
	char		 id[SESSION_ID_BYTES * 2 + 1];	/* run dir, cgroup */
	/* the session id shown everywhere (session log, recording header,
	 * watermark, file names): serve's (the api's id), else id */
	const char	*sid;
	long		 start_ms;
	int		 sigfd;
	int		 verbose;

	struct privdrop_user worker_user, browser_user;
	char		*password, *ws_token;
	char		*grant_line;	/* "Cdsgate-Grant: V\r\n" or NULL */
	struct grant	 grant;		/* its fields, as logged */
	char		*tls_cert, *tls_key;	/* PEM; the key wiped after
						   the worker started */
	size_t		 tls_cert_len, tls_key_len;
	struct creds	*creds;

	int		 listen_fd;
	char		 listen_desc[80];
	struct evidence	 ev;		/* recording, network log, capture */

	char		 dir[PATH_MAX];		/* <run>/<id>, 0711 root */
	char		 xdir[PATH_MAX];	/* x/, 0700 cdsgate */
	char		 xsockdir[PATH_MAX];	/* x/X11-unix, 1777 root: Xvfb's socket */
	char		 xauth[PATH_MAX];	/* x/Xauthority */
	char		 bdir[PATH_MAX];	/* browser/, 0700 browser */
	char		 bauth[PATH_MAX];	/* browser/Xauthority */
	char		 profile[PATH_MAX];	/* browser/profile */
	char		 policy_dir[PATH_MAX];	/* policy/, 0755 root */
	char		 jail_dir[PATH_MAX];	/* jail/: the jail's root */
	char		 etc_dir[PATH_MAX];	/* etc/: its hosts, resolv.conf */
	int		 dir_made;
	int		 dir_lock;		/* flock'd while we live */

	int		 xvfb_pipe;		/* write end, for the child */
	const char	*violate[ROLE_COUNT];	/* test hook, or NULL */
	int		 display;
	int		 xsock_fd;	/* O_PATH: Xvfb's socket, for the jail */
	char		 display_name[16];
	struct worker_config wcfg;
	int		 tls_ipc[2];	/* [0] the tls process's, [1] the worker's */
	struct tlsfront_config tcfg;
	struct browser_cmd bcmd;
	struct browser_net bnet;	/* the jail's netns and listener */
	struct forward_config fcfg;

	struct child	 child[ROLE_COUNT];
	long		 restarts[RESTART_HISTORY];	/* ms, ring */
	unsigned	 nrestarts;			/* total */
	long		 restart_due_ms;		/* 0 = none */

	struct membound	 mem;		/* the memory bound */

	int		 stopping;
	const char	*stop_reason;
	int		 stop_signal;
	int		 exit_code;
};

static int	kill_strays(const struct session *);
static void	memory_check(struct session *, long);
static int	role_of(const struct session *, pid_t);
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

static const struct role_entry {
	const char	*name;
	const char	*user;
	int		 restart;
	int		(*prepare)(struct session *, const char **);
	void		(*run)(struct session *, int errfd);
	rlim_t		 nofile;	/* X clients / RFB clients */
	rlim_t		 nproc;		/* 0: may not fork at all */
	int		 data_limit;	/* RLIMIT_DATA: twice the limit */
	int		 profile;	/* enum sandbox_profile */
	int		 late_filter;	/* the role loads profile itself */
} roles[ROLE_COUNT] = {
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

/* ---- small helpers ---- */

static long
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* End the session with reason (first reason wins). */
static void
session_stop(struct session *s, const char *reason, int code)
{
	if (s->stop_reason != NULL)
		return;
	s->stop_reason = reason;
	s->exit_code = code;
}

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
static void __attribute__((noreturn))
fatal_namespace(const char *which)
{
	log_warnx("cannot return to our own %s namespace; stopping", which);
	_exit(SESSION_EXIT_FAILED);
}

static int
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

/* ---- browser restarts ---- */

/* Restarts within the window, as of now. */
static unsigned
recent_restarts(const struct session *s, long now)
{
	long window = (long)s->spec->browser_restart_window * 1000L;
	unsigned i, n = 0, have = s->nrestarts < RESTART_HISTORY ?
	    s->nrestarts : RESTART_HISTORY;

	for (i = 0; i < have; i++)
		if (now - s->restarts[i] < window)
			n++;
	return n;
}

/*
 * The browser exited (or could not be started): come back after a
 * delay that doubles with every recent restart, or end the session if
 * it keeps dying — a browser that cannot stay up is not a session.
 */
static void
browser_schedule_restart(struct session *s)
{
	long now = now_ms(), delay;
	unsigned recent = recent_restarts(s, now);

	/* Leftovers of the old browser (zygote, renderers) go first. */
	kill_strays(s);
	if (recent >= s->spec->browser_restart_max) {
		log_warnx("browser exited %u times within %u s; ending the "
		    "session", recent + 1, s->spec->browser_restart_window);
		session_stop(s, "browser_restart_limit", SESSION_EXIT_FAILED);
		return;
	}
	delay = recent >= 16 ? SESSION_BACKOFF_MAX_MS :
	    (long)SESSION_BACKOFF_MIN_MS << recent;
	if (delay > SESSION_BACKOFF_MAX_MS)
		delay = SESSION_BACKOFF_MAX_MS;
	s->restarts[s->nrestarts % RESTART_HISTORY] = now;
	s->nrestarts++;
	s->restart_due_ms = now + delay;
	slog_event("browser_restart", json_pack("{s:i, s:i, s:i, s:i}",
	    "attempt", (int)s->nrestarts, "delay_ms", (int)delay,
	    "recent", (int)recent + 1, "window_s",
	    (int)s->spec->browser_restart_window));
}

static void
browser_restart_now(struct session *s)
{
	int fd;

	s->restart_due_ms = 0;
	fd = open(s->profile, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd >= 0) {
		browser_clear_locks(fd);
		close(fd);
	}
	if (child_spawn(s, ROLE_BROWSER) != 0)
		browser_schedule_restart(s);
}

/* ---- reaping ---- */

static int
role_of(const struct session *s, pid_t pid)
{
	int r;

	for (r = 0; r < ROLE_COUNT; r++)
		if (s->child[r].pid == pid)
			return r;
	return -1;
}

static void
child_exited(struct session *s, enum role r, int st)
{
	struct child *c = &s->child[r];

	log_child_exit(roles[r].name, roles[r].profile, c->pid, st,
	    json_pack("{s:i}", "uptime_ms", (int)(now_ms() - c->started_ms)));
	log_info("%s (pid %d) ended", roles[r].name, (int)c->pid);
	c->last_pid = c->pid;
	c->pid = -1;
	c->status = st;
	if (s->stopping)
		return;
	if (roles[r].restart) {
		memory_check(s, now_ms());	/* killed at the limit? */
		if (s->stop_reason == NULL)
			browser_schedule_restart(s);
		return;
	}
	if (r == ROLE_WORKER && WIFEXITED(st) &&
	    WEXITSTATUS(st) == WORKER_EXIT_DISK_FULL)
		session_stop(s, "disk_full", SESSION_EXIT_DISK_FULL);
	else if (r == ROLE_WORKER)
		session_stop(s, "worker_exit", WIFEXITED(st) &&
		    WEXITSTATUS(st) == 0 ? SESSION_EXIT_OK :
		    SESSION_EXIT_FAILED);
	else if (r == ROLE_FORWARD)
		session_stop(s, "forward_exit", SESSION_EXIT_FAILED);
	else if (r == ROLE_TLS) {
		/* No key holder, no TLS logins: fail closed. */
		session_stop(s, "tls_exit", SESSION_EXIT_FAILED);
		log_warnx("the tls process (the TLS key holder) ended; ending "
		    "the session");
	}
	else
		session_stop(s, "xvfb_exit", SESSION_EXIT_FAILED);
	if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0))
		log_warnx("%s exited abnormally; ending the session",
		    roles[r].name);
}

/* Reap everything that has ended, ours or reparented to us. */
static void
reap(struct session *s)
{
	pid_t pid;
	int st, r;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		if ((r = role_of(s, pid)) >= 0)
			child_exited(s, (enum role)r, st);
}

/* Drain the signalfd: SIGCHLD reaps, the others end the session. */
static void
handle_signals(struct session *s)
{
	struct signalfd_siginfo si;

	while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue;
		if (s->stop_reason == NULL)
			s->stop_signal = (int)si.ssi_signo;
		session_stop(s, "signal", SESSION_EXIT_OK);
	}
	reap(s);
}

/* ---- set-up ---- */

/* The TLS front door's certificate, key and credentials, read now (as
 * root) because the worker opens no files once it runs. */
static int
setup_check_tls(struct session *s)
{
	const struct session_spec *sp = s->spec;
	struct policy_error e;

	if (sp->tls_cert == NULL)
		return 0;
	if (spec_read_file(sp->tls_cert, "TLS certificate", 256 * 1024, 0,
	    &s->tls_cert, &s->tls_cert_len, &e) != POLICY_OK ||
	    spec_read_file(sp->tls_key, "TLS key", 64 * 1024, 1,
	    &s->tls_key, &s->tls_key_len, &e) != POLICY_OK ||
	    creds_load(&s->creds, sp->credentials_file, &e) != POLICY_OK) {
		log_warnx("%s", e.msg);
		return -1;
	}
	return 0;
}

/* The dataset grant the forwarder adds to every request: read whole,
 * its form checked (the backend checks its MAC). */
static int
setup_check_grant(struct session *s)
{
	struct policy_error e;
	char *v = NULL;
	int r = -1;

	if (s->spec->grant_file == NULL)
		return 0;
	if (spec_read_secret(s->spec->grant_file, "grant", 1,
	    GRANT_VALUE_MAX - 1, GRANT_CHARSET, &v, &e) != POLICY_OK) {
		log_warnx("%s", e.msg);
		return -1;
	}
	if (grant_parse(v, strlen(v), &s->grant) != GRANT_OK)
		log_warnx("%s: %s", s->spec->grant_file,
		    grant_strerror(GRANT_EMALFORMED));
	else if (asprintf(&s->grant_line, GRANT_HEADER ": %s\r\n", v) < 0)
		s->grant_line = NULL;
	else
		r = 0;
	free(v);
	return r;
}

/* Users, binaries, secrets: what "bad configuration" means. */
static int
setup_check(struct session *s)
{
	const struct session_spec *sp = s->spec;
	struct policy_error e;
	char msg[512];

	if (privdrop_require_root(msg, sizeof(msg)) != 0 ||
	    privdrop_lookup(PRIVDROP_WORKER_USER, NULL, &s->worker_user, msg,
	    sizeof(msg)) != 0 ||
	    privdrop_lookup(PRIVDROP_BROWSER_USER, &s->worker_user,
	    &s->browser_user, msg, sizeof(msg)) != 0) {
		log_warnx("%s", msg);
		return -1;
	}
	if (access(XVFB_PATH, X_OK) != 0 || access(BROWSER_PATH, X_OK) != 0) {
		log_warn("%s", access(XVFB_PATH, X_OK) != 0 ? XVFB_PATH :
		    BROWSER_PATH);
		return -1;
	}
	if (spec_read_secret(sp->password_file, "password", 1,
	    SPEC_PASSWORD_MAX, NULL, &s->password, &e) != POLICY_OK ||
	    (sp->ws_token_file != NULL && spec_read_secret(sp->ws_token_file,
	    "websocket token", SPEC_TOKEN_MIN, SPEC_TOKEN_MAX,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789-._~", &s->ws_token, &e) != POLICY_OK)) {
		log_warnx("%s", e.msg);
		return -1;
	}
	return setup_check_grant(s) != 0 ? -1 : setup_check_tls(s);
}

/* Signals through a signalfd; children are reparented to us. */
static int
setup_signals(struct session *s)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0 ||
	    (s->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
		log_warn("signalfd");
		return -1;
	}
	signal(SIGPIPE, SIG_IGN);	/* a closed stdout must not kill us */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
		log_warn("PR_SET_CHILD_SUBREAPER");
		return -1;
	}
	return 0;
}

static int
setup_id(struct session *s)
{
	unsigned char b[SESSION_ID_BYTES];
	size_t i;

	if (RAND_bytes(b, sizeof(b)) != 1) {
		log_warnx("RAND_bytes failed");
		return -1;
	}
	for (i = 0; i < sizeof(b); i++)
		snprintf(s->id + 2 * i, 3, "%02x", b[i]);
	return 0;
}

/* Bind and listen ourselves; the worker gets the fd and no privilege. */
static int
setup_listen(struct session *s)
{
	struct spec_listen l;
	struct sockaddr_storage ss;
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;
	char host[INET6_ADDRSTRLEN];
	int one = 1;

	if (spec_listen_parse(s->spec->listen, &l, NULL) != POLICY_OK)
		return -1;	/* spec_check already said why */
	memset(&ss, 0, sizeof(ss));
	if (l.family == AF_INET) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)l.port);
		inet_pton(AF_INET, l.addr, &in4->sin_addr);
		len = sizeof(*in4);
	} else {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)l.port);
		inet_pton(AF_INET6, l.addr, &in6->sin6_addr);
		len = sizeof(*in6);
	}
	/* Non-blocking: the worker's event loop accepts until EAGAIN, and
	   a client that resets between poll() and accept() must not
	   block it. */
	s->listen_fd = socket(l.family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (s->listen_fd < 0 ||
	    setsockopt(s->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one,
	    sizeof(one)) != 0 ||
	    (l.family == AF_INET6 && setsockopt(s->listen_fd, IPPROTO_IPV6,
	    IPV6_V6ONLY, &one, sizeof(one)) != 0) ||
	    bind(s->listen_fd, (struct sockaddr *)&ss, len) != 0 ||
	    listen(s->listen_fd, LISTEN_BACKLOG) != 0 ||
	    getsockname(s->listen_fd, (struct sockaddr *)&ss, &len) != 0) {
		log_warn("listen on %s", s->spec->listen);
		return -1;
	}
	if (l.family == AF_INET) {
		inet_ntop(AF_INET, &in4->sin_addr, host, sizeof(host));
		snprintf(s->listen_desc, sizeof(s->listen_desc), "%s:%u", host,
		    (unsigned)ntohs(in4->sin_port));
	} else {
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(s->listen_desc, sizeof(s->listen_desc), "[%s]:%u",
		    host, (unsigned)ntohs(in6->sin6_port));
	}
	return 0;
}

/*
 * <run>/<id>    0711 root             traversable, not listable
 *   supervisor.lock 0600 root         flock'd by the live supervisor
 *   x/          0700 cdsgate          Xauthority (Xvfb, worker)
 *   browser/    0700 cdsgate-browser  Xauthority, profile/, HOME
 *   policy/     0755 root             cdsgate.json, shown to Chromium
 */
static int
setup_dir(struct session *s)
{
	const struct privdrop_user *w = &s->worker_user, *b = &s->browser_user;
	char lock[PATH_MAX];

	if (run_dir_prepare() != 0 ||
	    path_join(s->dir, SESSION_RUN_DIR, s->id) != 0 ||
	    path_join(s->xdir, s->dir, "x") != 0 ||
	    path_join(s->xauth, s->xdir, "Xauthority") != 0 ||
	    path_join(s->xsockdir, s->xdir, "X11-unix") != 0 ||
	    path_join(s->bdir, s->dir, "browser") != 0 ||
	    path_join(s->bauth, s->bdir, "Xauthority") != 0 ||
	    path_join(s->profile, s->bdir, "profile") != 0 ||
	    path_join(s->policy_dir, s->dir, "policy") != 0 ||
	    path_join(s->jail_dir, s->dir, "jail") != 0 ||
	    path_join(s->etc_dir, s->dir, "etc") != 0)
		return -1;
	if (mkdir_owned(s->dir, 0711, 0, 0) != 0)
		return -1;
	s->dir_made = 1;
	if (path_join(lock, s->dir, SESSION_LOCK_FILE) != 0)
		return -1;
	s->dir_lock = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (s->dir_lock < 0 || flock(s->dir_lock, LOCK_EX | LOCK_NB) != 0) {
		log_warn("%s", lock);
		return -1;
	}
	dprintf(s->dir_lock, "%ld\n", (long)getpid());
	if (mkdir_owned(s->xdir, 0700, w->uid, w->gid) != 0 ||
	    /* like the host's /tmp/.X11-unix, or Xvfb tries to fix it */
	    mkdir_owned(s->xsockdir, 01777, 0, 0) != 0 ||
	    mkdir_owned(s->bdir, 0700, b->uid, b->gid) != 0 ||
	    mkdir_owned(s->profile, 0700, b->uid, b->gid) != 0 ||
	    mkdir_owned(s->policy_dir, 0755, 0, 0) != 0 ||
	    mkdir_owned(s->etc_dir, 0755, 0, 0) != 0)
		return -1;
	return 0;
}

/* The jail's network namespace, its listener and the forwarder's
 * config: the browser reaches the backend and nothing else. */
static int
setup_jail_net(struct session *s)
{
	char err[512];
	int stuck;

	if (browser_net_setup(s->spec->backend, s->etc_dir, &s->bnet, &stuck,
	    err, sizeof(err)) != 0) {
		log_warnx("%s", err);
		if (stuck)
			fatal_namespace("network");
		return -1;
	}
	memset(&s->fcfg, 0, sizeof(s->fcfg));
	s->fcfg.listen_fd = s->bnet.listen_fd;
	s->fcfg.backend = s->bnet.addr;
	s->fcfg.backend_len = s->bnet.addrlen;
	s->fcfg.backend_desc = s->bnet.desc;
	s->fcfg.max_conns = FORWARD_MAX_CONNS;
	/* https: TLS stays end to end, the forwarder cannot frame it */
	s->fcfg.http = strncasecmp(s->spec->backend, "http://", 7) == 0;
	s->fcfg.netlog_fd = s->fcfg.pcap_fd = -1;
	/* https: the grant cannot be added (logged in session_start) */
	s->fcfg.grant_line = s->fcfg.http ? s->grant_line : NULL;
	slog_event("browser_net", json_pack("{s:s, s:i}", "backend",
	    s->bnet.desc, "max_conns", FORWARD_MAX_CONNS));
	return 0;
}

/* The browser policy and the two cookie files. */
static int
setup_files(struct session *s)
{
	unsigned char cookie[XVFB_COOKIE_LEN];
	struct policy_error e;
	int r = -1;

	if (chromium_policy_write(s->policy_dir, s->spec->backend, &e) !=
	    POLICY_OK) {
		log_warnx("browser policy: %s", e.msg);
		return -1;
	}
	if (browser_host_prepare() != 0) {
		log_warn("%s (needed as the policy mount point)",
		    CHROMIUM_POLICY_DIR);
		return -1;
	}
	if (setup_jail_net(s) != 0)
		return -1;
	if (xvfb_cookie_new(cookie) != 0) {
		log_warnx("RAND_bytes failed");
		return -1;
	}
	if (xvfb_write_xauth(s->xauth, cookie, s->worker_user.uid,
	    s->worker_user.gid) != 0)
		log_warn("%s", s->xauth);
	else if (xvfb_write_xauth(s->bauth, cookie, s->browser_user.uid,
	    s->browser_user.gid) != 0)
		log_warn("%s", s->bauth);
	else
		r = 0;
	explicit_bzero(cookie, sizeof(cookie));
	return r;
}

/* What session_start says of the grant: whose, which dataset, and
 * whether the forwarder can add it (not to an https:// backend). */
static json_t *
log_grant(const struct session *s)
{
	if (s->grant_line == NULL)
		return json_null();
	return json_pack("{s:s, s:I, s:I, s:b}", "session", s->grant.session,
	    "dataset", (json_int_t)s->grant.dataset, "expires",
	    (json_int_t)s->grant.expires, "added",
	    strncasecmp(s->spec->backend, "http://", 7) == 0);
}

static void
log_session_start(struct session *s)
{
	const struct session_spec *sp = s->spec;
	char geo[32];
	json_t *o;

	snprintf(geo, sizeof(geo), "%ux%u", sp->width, sp->height);
	o = json_pack(
	    "{s:s?, s:s, s:s, s:s, s:b, s:b, s:i, s:i, s:i, s:s?, s:s, s:b, s:b,"
	    " s:b, s:o, s:o}",
	    "recipient", sp->recipient, "backend", sp->backend,
	    "geometry", geo, "listen", s->listen_desc,
	    "observer", sp->observer, "websocket", s->ws_token != NULL,
	    "idle_timeout", (int)sp->idle_timeout,
	    "max_duration", (int)sp->max_duration, "memory_limit_mb",
	    (int)sp->memory_limit_mb, "policy_file",
	    sp->policy, "sandbox", sandbox_mode_name(), "sandbox_debug",
	    sandbox_debug(), "tls", sp->tls_cert != NULL, "allow_plain_vnc",
	    spec_allow_plain(sp), "watermark", !sp->watermark ? json_false() :
	    json_pack("{s:s, s:f, s:s}", "text", sp->watermark_text,
	    "opacity", sp->watermark_opacity, "layout",
	    sp->watermark_layout), "grant", log_grant(s));
	/* the run directory's and cgroup's name, when the session has
	 * serve's id: the one place both ids meet */
	json_object_set_new(o, "run_id", json_string(s->id));
	slog_event("session_start", o);
}

/* The test hook (gateway/testhook.h): which role dies by which call. */
static int
setup_test_hook(struct session *s)
{
	const char *name, *call;
	int r, got = test_hook_get(&name, &call);

	if (got <= 0)
		return got;
	for (r = 0; r < ROLE_COUNT && strcmp(roles[r].name, name) != 0; r++)
		;
	if (r == ROLE_COUNT) {
		log_warnx("test hook: no %s role in this build", name);
		return -1;
	}
	s->violate[r] = call;
	log_warnx("test hook: the %s will call %s() after its filter",
	    roles[r].name, call);
	slog_event("test_hook", json_pack("{s:s, s:s}", "role", roles[r].name,
	    "violate", call));
	return 0;
}

/* Everything before the first child.  Returns an exit status or -1. */
static int
session_setup(struct session *s)
{
	const struct session_spec *sp = s->spec;
	int r;

	if (setup_check(s) != 0)
		return SESSION_EXIT_CONFIG;
	if (setup_signals(s) != 0 || setup_id(s) != 0)
		return SESSION_EXIT_FAILED;
	s->sid = sp->record_name != NULL ? sp->record_name : s->id;
	if (slog_open(sp->log, s->sid, "supervisor") != 0) {
		log_warn("session log %s", sp->log);
		return SESSION_EXIT_CONFIG;
	}
	if (setup_test_hook(s) != 0)
		return SESSION_EXIT_CONFIG;
	if (setup_listen(s) != 0)
		return SESSION_EXIT_FAILED;
	log_session_start(s);
	if ((r = evidence_open(&s->ev, sp, s->id)) != 0)
		return r;
	if (setup_dir(s) != 0 || setup_files(s) != 0)
		return SESSION_EXIT_FAILED;
	return -1;
}

/* ---- starting the children ---- */

static int
start_xvfb(struct session *s)
{
	int p[2], r;

	if (pipe2(p, O_CLOEXEC) != 0) {
		log_warn("pipe");
		return -1;
	}
	s->xvfb_pipe = p[1];
	r = child_spawn(s, ROLE_XVFB);
	close(p[1]);
	s->xvfb_pipe = -1;
	if (r != 0) {
		close(p[0]);
		return -1;
	}
	for (;;) {
		r = xvfb_wait_ready(p[0], XVFB_READY_TIMEOUT_MS, s->sigfd,
		    &s->display);
		if (r != XVFB_INTERRUPTED)
			break;
		handle_signals(s);
		if (s->stop_reason != NULL)
			break;
	}
	close(p[0]);
	if (r == XVFB_READY) {
		snprintf(s->display_name, sizeof(s->display_name), ":%d",
		    s->display);
		slog_event("display_ready", json_pack("{s:s}", "display",
		    s->display_name));
		/* The jail gets this inode, never whatever the path
		   holds later (the directory belongs to the worker's
		   user, which every session shares). */
		if ((s->xsock_fd = browser_xsock_open(s->xsockdir,
		    s->display, s->worker_user.uid)) < 0) {
			log_warn("Xvfb's socket %s/X%d", s->xsockdir,
			    s->display);
			return -1;
		}
		return 0;
	}
	if (r != XVFB_INTERRUPTED)
		log_warnx("Xvfb did not become ready (%s)",
		    r == XVFB_TIMEOUT ? "timed out" : "exited");
	return -1;
}

static void
worker_config_fill(struct session *s)
{
	const struct session_spec *sp = s->spec;
	struct worker_config *w = &s->wcfg;

	memset(w, 0, sizeof(*w));
	w->session_id = s->sid;
	w->display = s->display_name;
	w->xauthority = s->xauth;
	w->listen_fd = s->listen_fd;
	w->listen_desc = s->listen_desc;
	w->password = s->password;
	w->ws_token = s->ws_token;
	w->ws_origins = (const char *const *)sp->ws_origins;
	w->tls_ipc = s->tls_ipc[1];
	w->tls_users = s->creds != NULL ? (unsigned)creds_count(s->creds) : 0;
	w->allow_plain = spec_allow_plain(sp);
	w->accept_from = sp->accept_from;
	w->width = sp->width;
	w->height = sp->height;
	w->limits.key_rate = sp->key_rate;
	w->limits.key_burst = sp->key_burst;
	w->limits.button_rate = sp->button_rate;
	w->limits.button_burst = sp->button_burst;
	w->limits.motion_rate = sp->motion_rate;
	w->limits.alarm_seconds = sp->alarm_seconds;
	w->limits.alarm_disconnect = sp->alarm_disconnect;
	w->idle_timeout = sp->idle_timeout;
	w->max_duration = sp->max_duration;
	w->allow_observer = sp->observer;
	w->test_violate = s->violate[ROLE_WORKER];
	w->profile = roles[ROLE_WORKER].profile;
	w->record_fd = s->ev.record_fd;
	w->recipient = sp->recipient;
	w->policy = sp->policy;
	w->watermark = sp->watermark;
	w->watermark_text = sp->watermark_text;
	w->watermark_opacity = sp->watermark_opacity;
	w->watermark_layout = sp->watermark_layout;
}

static void
tls_ipc_close(struct session *s)
{
	int i;

	for (i = 0; i < 2; i++)
		if (s->tls_ipc[i] >= 0)
			close(s->tls_ipc[i]);
	s->tls_ipc[0] = s->tls_ipc[1] = -1;
}

/*
 * The tls process first, so that the worker is forked from a supervisor
 * that no longer holds the key or the credentials: both are wiped and
 * freed here, before the worker exists (a fork copies our memory).
 */
static int
start_tls(struct session *s)
{
	struct tlsfront_config *t = &s->tcfg;
	int r = 0;

	if (s->tls_cert == NULL)
		return 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
	    s->tls_ipc) != 0) {
		log_warn("tls: socketpair");
		return -1;
	}
	s->wcfg.tls_ipc = s->tls_ipc[1];
	memset(t, 0, sizeof(*t));
	t->ipc_fd = s->tls_ipc[0];
	t->tls_cert = s->tls_cert;
	t->tls_cert_len = s->tls_cert_len;
	t->tls_key = s->tls_key;
	t->tls_key_len = s->tls_key_len;
	t->creds = s->creds;
	t->inner_password = s->password;
	t->allow_plain = spec_allow_plain(s->spec);
	t->test_violate = s->violate[ROLE_TLS];
	t->profile = roles[ROLE_TLS].profile;
	if (child_spawn(s, ROLE_TLS) != 0)
		r = -1;
	explicit_bzero(s->tls_key, s->tls_key_len);
	free(s->tls_key);
	s->tls_key = NULL;
	creds_free(s->creds);
	s->creds = NULL;
	t->tls_key = NULL;
	t->creds = NULL;
	return r;
}

static int
start_children(struct session *s)
{
	struct browser_params bp;

	if (start_xvfb(s) != 0) {
		session_stop(s, "xvfb_failed", SESSION_EXIT_FAILED);
		return -1;
	}
	worker_config_fill(s);
	if (start_tls(s) != 0) {
		session_stop(s, "tls_failed", SESSION_EXIT_FAILED);
		return -1;
	}
	if (child_spawn(s, ROLE_WORKER) != 0) {
		session_stop(s, "worker_failed", SESSION_EXIT_FAILED);
		return -1;
	}
	/* The worker has its copy; ours is not needed again. */
	explicit_bzero(s->password, strlen(s->password));
	if (s->ws_token != NULL)
		explicit_bzero(s->ws_token, strlen(s->ws_token));
	tls_ipc_close(s);
	evidence_worker_has(&s->ev);	/* the worker's now */

	s->fcfg.netlog_fd = s->ev.netlog_fd;
	s->fcfg.pcap_fd = s->ev.pcap_fd;
	if (child_spawn(s, ROLE_FORWARD) != 0) {
		session_stop(s, "forward_failed", SESSION_EXIT_FAILED);
		return -1;
	}
	evidence_forwarder_has(&s->ev);
	memset(&bp, 0, sizeof(bp));
	bp.url = s->spec->backend;
	bp.display = s->display_name;
	bp.xauthority = s->bauth;
	bp.home = s->bdir;
	bp.profile = s->profile;
	bp.policy_dir = s->policy_dir;
	bp.jail_dir = s->jail_dir;
	bp.etc_dir = s->etc_dir;
	bp.display_num = s->display;
	bp.xsock_fd = s->xsock_fd;
	bp.width = s->spec->width;
	bp.height = s->spec->height;
	if (browser_cmd_build(&bp, &s->bcmd) != 0 ||
	    child_spawn(s, ROLE_BROWSER) != 0) {
		session_stop(s, "browser_failed", SESSION_EXIT_FAILED);
		return -1;
	}
	return 0;
}

/* ---- the loop ---- */

/* When the supervisor ends a session the worker should have ended at
 * max_duration; 0 = never. */
static long
duration_deadline(const struct session *s)
{
	if (s->spec->max_duration == 0)
		return 0;
	return s->start_ms + ((long)s->spec->max_duration +
	    SESSION_DURATION_GRACE_S) * 1000L;
}

/* The memory bound (gateway/membound.h), checked every
 * MEMBOUND_SAMPLE_MS and when the browser exits: over it, the session
 * ends. */
static void
memory_check(struct session *s, long now)
{
	int r = membound_check(&s->mem, getpid(), now);

	if (r < 0) {
		log_warn("memory limit: /proc");
		session_stop(s, "internal_error", SESSION_EXIT_FAILED);
	} else if (r > 0)
		session_stop(s, "memory_limit", SESSION_EXIT_MEMORY);
}

/* The bound's mechanism, before any child starts.  0 or -1. */
static int
memory_bound_setup(struct session *s)
{
	char name[64];

	snprintf(name, sizeof(name), "cdsgate-session-%s", s->id);
	if (membound_setup(&s->mem, name) == 0)
		return 0;
	log_warnx("memory bound: out of memory");
	session_stop(s, "setup_failed", SESSION_EXIT_FAILED);
	return -1;
}

/*
 * The supervisor's own filter, once its namespaces, cgroup and
 * directories are made: the SUPERVISOR deny-list (sandbox/profiles.c).
 * It stays root and keeps what its children's start-up needs (they
 * inherit the list, then load their own allow-lists).
 */
static int
supervisor_confine(struct session *s)
{
	struct confine c;
	char err[256], sb[64];

	confine_init(&c, "supervisor");
	c.profile = SANDBOX_PROFILE_SUPERVISOR;
	if (confine_apply(&c, err, sizeof(err)) != CONFINE_OK) {
		log_warnx("%s", err);
		session_stop(s, "setup_failed", SESSION_EXIT_FAILED);
		return -1;
	}
	log_info("supervisor confined, sandbox %s",
	    role_sandbox(c.profile, sb, sizeof(sb)));
	return 0;
}

/* ms until the next timed event (a browser restart, the max-duration
 * backstop, the memory sample) for poll(); -1 = none. */
static int
poll_timeout(const struct session *s, long now)
{
	long next = s->restart_due_ms, d = duration_deadline(s);

	if (d > 0 && (next == 0 || d < next))
		next = d;
	if (s->mem.due_ms > 0 && (next == 0 || s->mem.due_ms < next))
		next = s->mem.due_ms;
	if (next == 0)
		return -1;
	if (next <= now)
		return 0;
	return next - now > INT_MAX ? INT_MAX : (int)(next - now);
}

static void
session_loop(struct session *s)
{
	struct pollfd pfd;
	long now;

	s->mem.due_ms = now_ms();
	while (s->stop_reason == NULL) {
		pfd.fd = s->sigfd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, poll_timeout(s, now_ms())) < 0 &&
		    errno != EINTR) {
			log_warn("poll");
			session_stop(s, "internal_error", SESSION_EXIT_FAILED);
			break;
		}
		handle_signals(s);
		if (s->stop_reason != NULL)
			break;
		now = now_ms();
		if (duration_deadline(s) > 0 && now >= duration_deadline(s))
			session_stop(s, "max_duration", SESSION_EXIT_OK);
		else if (s->restart_due_ms > 0 && now >= s->restart_due_ms)
			browser_restart_now(s);
		if (s->stop_reason == NULL && s->mem.due_ms > 0 &&
		    now >= s->mem.due_ms)
			memory_check(s, now);
	}
}

/*
 * Tell the caller clients can connect: the socket listens (connections
 * queue in its backlog until the worker accepts) and every child has
 * started.  Not if a stop signal came in meanwhile.
 */
static int
session_announce(struct session *s, FILE *out)
{
	handle_signals(s);
	if (s->stop_reason != NULL)
		return 0;
	fprintf(out, "ready %s\n", s->listen_desc);
	fflush(out);
	notify_ready(s->listen_desc);
	slog_event("ready", json_pack("{s:s, s:i}", "listen", s->listen_desc,
	    "startup_ms", (int)(now_ms() - s->start_ms)));
	return 1;
}

/* ---- tear-down ---- */

static int
roles_running(const struct session *s, unsigned mask)
{
	int r, n = 0;

	for (r = 0; r < ROLE_COUNT; r++)
		if ((mask & (1u << r)) && s->child[r].pid > 0)
			n++;
	return n;
}

static void
roles_signal(struct session *s, unsigned mask, int sig)
{
	int r;

	for (r = 0; r < ROLE_COUNT; r++) {
		if (!(mask & (1u << r)) || s->child[r].pid <= 0)
			continue;
		/* The whole group (the browser's zygote and renderers too).
		   Safe only while its leader is unreaped: until then no one
		   else can hold that pid, nor a group of that number. */
		if (kill(-s->child[r].pgid, sig) != 0)
			kill(s->child[r].pid, sig);
	}
}

/* Wait until the roles in mask are reaped or ms have passed. */
static void
roles_wait(struct session *s, unsigned mask, long ms)
{
	long end = now_ms() + ms, left;
	struct pollfd pfd;

	reap(s);
	while (roles_running(s, mask) > 0 && (left = end - now_ms()) > 0) {
		pfd.fd = s->sigfd;
		pfd.events = POLLIN;
		poll(&pfd, 1, (int)left);
		handle_signals(s);
	}
}

/* SIGTERM, a grace period, then SIGKILL for whatever is left. */
static void
roles_stop(struct session *s, unsigned mask)
{
	roles_signal(s, mask, SIGTERM);
	roles_wait(s, mask, SESSION_TERM_GRACE_MS);
	roles_signal(s, mask, SIGKILL);
	roles_wait(s, mask, 2000);
}

/*
 * SIGKILL every child of ours that is not a running role: what a dead
 * browser left behind (zygote, GPU and utility processes), reparented to
 * us as the subreaper.  Only our own unreaped children are signalled, so
 * no pid can have been reused by someone else.  Returns how many.
 */
static int
kill_strays(const struct session *s)
{
	char path[300], buf[512], *p;
	struct dirent *de;
	pid_t self = getpid(), pid;
	long ppid;
	int fd, n = 0;
	ssize_t len;
	DIR *d;

	if ((d = opendir("/proc")) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		/* "pid (comm) S ppid ...": comm may hold anything, but the
		   last ')' ends it. */
		if ((p = strrchr(buf, ')')) == NULL ||
		    sscanf(p + 1, " %*c %ld", &ppid) != 1 || ppid != self)
			continue;
		pid = (pid_t)atol(de->d_name);
		if (role_of(s, pid) >= 0)
			continue;
		kill(pid, SIGKILL);
		n++;
	}
	closedir(d);
	return n;
}

/* Kill and reap whatever is left until we have no children at all. */
static void
reap_everything(const struct session *s)
{
	long end = now_ms() + 3000;
	pid_t pid;
	int st;

	for (;;) {
		while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
			;
		if (pid < 0 && errno == ECHILD)
			return;
		if (now_ms() > end) {
			log_warnx("some processes would not die");
			return;
		}
		kill_strays(s);
		usleep(20000);
	}
}

static void
session_teardown(struct session *s)
{
	struct child *x = &s->child[ROLE_XVFB];
	int dirfd;

	s->stopping = 1;
	/* Clients of X first, then X. */
	roles_stop(s, (1u << ROLE_BROWSER) | (1u << ROLE_WORKER) |
	    (1u << ROLE_FORWARD) | (1u << ROLE_TLS));
	roles_stop(s, 1u << ROLE_XVFB);
	reap_everything(s);
	membound_free(&s->mem);	/* the cgroup, now empty */
	/* An Xvfb that was killed (not one that exited) leaves its files. */
	if (x->last_pid > 0 && s->display_name[0] != '\0' &&
	    WIFSIGNALED(x->status))
		xvfb_remove_stale(s->display, x->last_pid, s->xsock_fd);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	s->listen_fd = -1;
	evidence_close(&s->ev, s->stop_reason);
	if (s->dir_made) {
		dirfd = open(SESSION_RUN_DIR, O_RDONLY | O_DIRECTORY |
		    O_CLOEXEC);
		if (dirfd < 0 || rm_tree_at(dirfd, s->id, 0) != 0)
			log_warn("could not remove %s", s->dir);
		if (dirfd >= 0)
			close(dirfd);
	}
}

static void
session_free(struct session *s)
{
	if (s->password != NULL) {
		explicit_bzero(s->password, strlen(s->password));
		free(s->password);
	}
	if (s->ws_token != NULL) {
		explicit_bzero(s->ws_token, strlen(s->ws_token));
		free(s->ws_token);
	}
	free(s->grant_line);
	if (s->tls_key != NULL) {
		explicit_bzero(s->tls_key, s->tls_key_len);
		free(s->tls_key);
	}
	free(s->tls_cert);
	creds_free(s->creds);
	if (s->sigfd >= 0)
		close(s->sigfd);
	if (s->bnet.netns_fd >= 0)
		close(s->bnet.netns_fd);
	if (s->xsock_fd >= 0)
		close(s->xsock_fd);
	if (s->bnet.listen_fd >= 0)
		close(s->bnet.listen_fd);
	if (s->dir_lock >= 0)
		close(s->dir_lock);
	evidence_free(&s->ev);
	membound_free(&s->mem);
	free(s);
}

int
session_run(const struct session_spec *spec, FILE *ready_out)
{
	struct session *s;
	json_t *stop;
	char sig[16];
	int r, code;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		log_warn("calloc");
		return SESSION_EXIT_FAILED;
	}
	umask(077);	/* anything made without an explicit mode is ours */
	s->spec = spec;
	s->verbose = spec->verbose;
	log_set_verbose(spec->verbose);
	s->sigfd = s->listen_fd = s->xvfb_pipe = s->dir_lock = -1;
	membound_init(&s->mem, spec->memory_limit_mb);
	evidence_init(&s->ev);
	s->tls_ipc[0] = s->tls_ipc[1] = -1;
	s->bnet.netns_fd = s->bnet.listen_fd = s->xsock_fd = -1;
	for (r = 0; r < ROLE_COUNT; r++)
		s->child[r].pid = s->child[r].pgid = -1;
	s->start_ms = now_ms();
	if (notify_init() < 0)
		log_warnx("NOTIFY_SOCKET is unusable: not notifying systemd");

	if ((r = session_setup(s)) >= 0)
		session_stop(s, "setup_failed", r);
	else if (memory_bound_setup(s) == 0 && supervisor_confine(s) == 0 &&
	    start_children(s) == 0 &&
	    session_announce(s, ready_out))
		session_loop(s);
	notify_send("STOPPING=1");
	tls_ipc_close(s);
	session_teardown(s);
	stop = json_pack("{s:s, s:i, s:i, s:i}", "reason", s->stop_reason,
	    "exit", s->exit_code, "duration_s",
	    (int)((now_ms() - s->start_ms) / 1000), "browser_restarts",
	    (int)s->nrestarts);
	if (s->stop_signal > 0)
		json_object_set_new(stop, "signal",
		    json_string(sig_name(s->stop_signal, sig, sizeof(sig))));
	slog_event("session_stop", stop);
	slog_close();
	code = s->exit_code;
	session_free(s);
	return code;
}
