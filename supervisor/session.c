/*
 * supervisor/session.c — the session supervisor.
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
 *
 * This file is the supervision: restarts, reaping, the loop and the
 * tear-down.  The set-up is setup.c, the roles table and spawning
 * roles.c, starting the children start.c; what they share session-int.h.
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


static int	kill_strays(const struct session *);
static void	memory_check(struct session *, long);
static int	role_of(const struct session *, pid_t);

/* ---- small helpers ---- */

long
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* End the session with reason (first reason wins). */
void
session_stop(struct session *s, const char *reason, int code)
{
	if (s->stop_reason != NULL)
		return;
	s->stop_reason = reason;
	s->exit_code = code;
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
	else if (r == ROLE_WORKER && WIFEXITED(st) &&
	    WEXITSTATUS(st) == WORKER_EXIT_TLS_GONE)
		session_stop(s, "tls_exit", SESSION_EXIT_FAILED); /* its cause */
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
void
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

/* The memory bound (supervisor/membound.h), checked every
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
