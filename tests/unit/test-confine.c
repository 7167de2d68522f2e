/*
 * tests/unit/test-confine.c — confine_apply() (sandbox/confine.h), in
 * forked children: each step that can fail is made to fail and is
 * reported by its name (and the steps after it were not taken), without
 * the process's name, which the logger adds once; a child
 * confined with every step really ends as described (/proc says
 * Seccomp 2, NoNewPrivs 1, its uid, its limits, not dumpable); the
 * supervisor's deny-list refuses what it lists and allows the rest.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "sandbox/confine.h"
#include "tests/tap.h"

#define NOBODY		"nobody"

/* What a failing child reports through its pipe. */
struct outcome {
	int	code;
	int	nnp;		/* PR_GET_NO_NEW_PRIVS after the failure */
	char	err[256];
};

typedef void (*setup_fn)(struct confine *c);

/* Fork; the child builds c with setup, applies it, reports. */
static int
try_confine(setup_fn setup, struct outcome *o)
{
	struct confine c;
	int p[2], st;
	pid_t pid;

	memset(o, 0, sizeof(*o));
	if (pipe(p) != 0 || (pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		close(p[0]);
		confine_init(&c, "t");
		setup(&c);
		o->code = confine_apply(&c, o->err, sizeof(o->err));
		o->nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
		_exit(write(p[1], o, sizeof(*o)) == (ssize_t)sizeof(*o) ? 0 :
		    1);
	}
	close(p[1]);
	if (read(p[0], o, sizeof(*o)) != (ssize_t)sizeof(*o))
		o->code = -1;
	close(p[0]);
	waitpid(pid, &st, 0);
	o->err[sizeof(o->err) - 1] = '\0';
	return o->code;
}

static void
expect_step(setup_fn setup, int code, int nnp, const char *what)
{
	struct outcome o;
	char prefix[64];

	/* "STEP: detail", without the description's name ("t"): the
	   logger puts the process's name in each line, once */
	snprintf(prefix, sizeof(prefix), "%s: ", confine_step_name(code));
	try_confine(setup, &o);
	tap_ok(o.code == code && strncmp(o.err, prefix, strlen(prefix)) == 0,
	    "%s fails at step '%s' (got %d: %s)", what,
	    confine_step_name(code), o.code, o.err);
	tap_ok(o.nnp == nnp, "%s: no-new-privs is %d afterwards", what, nnp);
}

static void
bad_rlimit(struct confine *c)
{
	confine_rlimit(c, RLIMIT_NOFILE, 64);
	confine_rlimit(c, 999, 1);
}

static void
bad_chdir(struct confine *c)
{
	c->dir = "/nonexistent/cdsgate-test-confine";
}

static void
bad_deathsig(struct confine *c)
{
	c->deathsig = 999;
}

static void
bad_profile(struct confine *c)
{
	c->profile = SANDBOX_PROFILE_COUNT + 3;
}

static void
no_init(struct confine *c)
{
	c->profile = SANDBOX_PROFILE_DEID;	/* before sandbox_init */
}

static void
too_many(struct confine *c)
{
	c->nrlimit = CONFINE_RLIMITS_MAX + 1;
}

static struct privdrop_user	nobody;

/* A confinement error logged by the process it names ("t", as
 * try_confine's description and the logger's name) carries the name
 * once: the line is exactly "t: chdir: PATH: strerror". */
static void
test_logged_once(void)
{
	struct outcome o;
	char line[512], want[512];
	ssize_t n = -1;
	int p[2], ok;

	try_confine(bad_chdir, &o);
	snprintf(want, sizeof(want), "t: chdir: %s: %s\n",
	    "/nonexistent/cdsgate-test-confine", strerror(ENOENT));
	if (pipe(p) == 0) {
		log_init("t");
		log_set_fd(p[1]);
		log_warnx("%s", o.err);
		log_set_fd(-1);
		close(p[1]);
		n = read(p[0], line, sizeof(line) - 1);
		close(p[0]);
	}
	line[n > 0 ? n : 0] = '\0';
	ok = strcmp(line, want) == 0;
	line[strcspn(line, "\n")] = '\0';
	tap_ok(ok, "a logged confinement error names the process once (%s)",
	    line);
}

/* Already dropped once: groups cannot be dropped again. */
static void
bad_user(struct confine *c)
{
	if (setresuid(nobody.uid, nobody.uid, nobody.uid) != 0)
		_exit(2);
	c->user = &nobody;
}

/* The parent exits before the child applies (its expected parent). */
static pid_t	orphaned_parent;

static void
gone_parent(struct confine *c)
{
	c->deathsig = SIGKILL;
	c->parent = orphaned_parent;
}

/* A grandchild whose parent is gone: try_confine in a child that exits
 * at once; the outcome comes back through the pipe it inherited. */
static void
test_parent(void)
{
	struct outcome o;
	int p[2], st;
	pid_t mid;

	if (pipe(p) != 0 || (mid = fork()) < 0) {
		tap_ok(0, "parent: fork");
		return;
	}
	if (mid == 0) {
		orphaned_parent = getpid();
		if (fork() == 0) {
			struct confine c;

			close(p[0]);
			while (getppid() == orphaned_parent)
				usleep(1000);
			confine_init(&c, "t");
			gone_parent(&c);
			memset(&o, 0, sizeof(o));
			o.code = confine_apply(&c, o.err, sizeof(o.err));
			_exit(write(p[1], &o, sizeof(o)) < 0);
		}
		_exit(0);
	}
	close(p[1]);
	waitpid(mid, &st, 0);
	memset(&o, 0, sizeof(o));
	if (read(p[0], &o, sizeof(o)) != (ssize_t)sizeof(o))
		o.code = -1;
	close(p[0]);
	o.err[sizeof(o.err) - 1] = '\0';
	tap_ok(o.code == CONFINE_ERR_PARENT &&
	    strncmp(o.err, "parent: ", 8) == 0,
	    "a parent gone before the death signal fails at step 'parent' "
	    "(%s)", o.err);
}

/* ---- a child with every step, seen from /proc ---- */

static int
status_field(const char *status, const char *key, char *out, size_t len)
{
	const char *p = strstr(status, key);
	size_t n;

	if (p == NULL)
		return -1;
	p += strlen(key);
	p += strspn(p, " \t");
	n = strcspn(p, "\n");
	snprintf(out, len, "%.*s", (int)n, p);
	return 0;
}

static void __attribute__((noreturn))
full_child(int out, int hold)
{
	struct confine c;
	char err[256], buf[4096];
	ssize_t n;
	int fd = open("/proc/self/status", O_RDONLY);

	confine_init(&c, "full");
	confine_rlimit(&c, RLIMIT_CORE, 0);
	confine_rlimit(&c, RLIMIT_NOFILE, 32);
	c.user = geteuid() == 0 ? &nobody : NULL;
	c.dir = "/";
	c.deathsig = SIGKILL;
	c.parent = getppid();
	c.profile = SANDBOX_PROFILE_DEID;
	if (fd < 0 || confine_apply(&c, err, sizeof(err)) != CONFINE_OK) {
		dprintf(2, "confine: %s\n", err);
		_exit(3);
	}
	n = read(fd, buf, sizeof(buf) - 1);	/* generated now */
	if (n <= 0 || write(out, buf, (size_t)n) != n)
		_exit(4);
	close(out);
	(void)read(hold, buf, 1);		/* until the parent looked */
	_exit(0);
}

static void
test_full(void)
{
	char status[4096], v[128], path[64], lim[4096], want[32];
	int out[2], hold[2], st, fd;
	struct stat sb;
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe(out) != 0 || pipe(hold) != 0 || (pid = fork()) < 0) {
		tap_ok(0, "full: fork");
		return;
	}
	if (pid == 0) {
		close(out[0]);
		close(hold[1]);
		full_child(out[1], hold[0]);
	}
	close(out[1]);
	close(hold[0]);
	while ((n = read(out[0], status + got, sizeof(status) - 1 - got)) > 0)
		got += n;
	status[got] = '\0';
	tap_ok(status_field(status, "Seccomp:", v, sizeof(v)) == 0 &&
	    strcmp(v, "2") == 0, "full: Seccomp: %s (2: a filter)", v);
	tap_ok(status_field(status, "NoNewPrivs:", v, sizeof(v)) == 0 &&
	    strcmp(v, "1") == 0, "full: NoNewPrivs: %s", v);
	snprintf(want, sizeof(want), "%u\t%u\t%u\t%u", (unsigned)nobody.uid,
	    (unsigned)nobody.uid, (unsigned)nobody.uid, (unsigned)nobody.uid);
	if (geteuid() == 0)
		tap_ok(status_field(status, "Uid:", v, sizeof(v)) == 0 &&
		    strcmp(v, want) == 0, "full: Uid: %s (nobody, all four)",
		    v);
	else
		tap_skip("full: the user step needs root");
	/* not dumpable: /proc/PID/environ belongs to root, whoever runs it
	   (the directory stays the process's) */
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	tap_ok(stat(path, &sb) == 0 && sb.st_uid == 0,
	    "full: %s is root's (non-dumpable)", path);
	snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
	fd = open(path, O_RDONLY);
	n = fd >= 0 ? read(fd, lim, sizeof(lim) - 1) : -1;
	lim[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	tap_ok(strstr(lim, "Max open files            32                   32")
	    != NULL && strstr(lim, "Max core file size        0                    0")
	    != NULL, "full: limits NOFILE 32, CORE 0");
	close(hold[1]);
	close(out[0]);
	waitpid(pid, &st, 0);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "full: the confined child ran to its end (status %#x)", st);
}

/* ---- the supervisor's deny-list ---- */

static void __attribute__((noreturn))
supervisor_child(void)
{
	struct confine c;
	char err[256];
	pid_t pid;
	int st;

	confine_init(&c, "supervisor");
	c.profile = SANDBOX_PROFILE_SUPERVISOR;
	if (confine_apply(&c, err, sizeof(err)) != CONFINE_OK)
		_exit(3);
	errno = 0;
	if (syscall(SYS_keyctl, 0, 0, 0, 0, 0) != -1 || errno != EPERM)
		_exit(4);
	errno = 0;
	if (syscall(SYS_bpf, 0, NULL, 0) != -1 || errno != EPERM)
		_exit(5);
#ifndef __SANITIZE_ADDRESS__
	errno = 0;
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != -1 || errno != EPERM)
		_exit(6);
#endif
	/* what it does keep: forking children, namespaces */
	if ((pid = fork()) == 0)
		_exit(unshare(0) == 0 ? 0 : 1);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0)
		_exit(7);
	_exit(0);
}

static void
test_supervisor(void)
{
	pid_t pid;
	int st = -1;

	if ((pid = fork()) == 0)
		supervisor_child();
	if (pid > 0)
		waitpid(pid, &st, 0);
	tap_ok(pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "supervisor: keyctl, bpf and ptrace get EPERM; fork works "
	    "(exit %d)", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int
main(void)
{
	char err[256];
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = CONFINE_OK; i <= CONFINE_ERR_FILTER; i++)
		tap_ok(strcmp(confine_step_name(i), "unknown") != 0,
		    "step %d is named '%s'", i, confine_step_name(i));
	/* before sandbox_init, the filter step says so */
	expect_step(no_init, CONFINE_ERR_FILTER, 1, "a profile before "
	    "sandbox_init");
	test_logged_once();
#ifndef HAVE_SECCOMP
	tap_skip_all("built with --with-sandbox=none: no filter to check");
#endif
	if (sandbox_init(SANDBOX_MODE_SECCOMP, 0, err, sizeof(err)) != 0)
		tap_skip_all("seccomp is not available here");
	expect_step(too_many, CONFINE_ERR_INVALID, 0, "too many rlimits");
	expect_step(bad_rlimit, CONFINE_ERR_RLIMIT, 0, "rlimit 999");
	expect_step(bad_chdir, CONFINE_ERR_CHDIR, 0, "a missing directory");
	expect_step(bad_deathsig, CONFINE_ERR_DEATHSIG, 1, "signal 999");
	expect_step(bad_profile, CONFINE_ERR_FILTER, 1, "an unknown profile");
	test_parent();
	if (geteuid() == 0 &&
	    privdrop_lookup(NOBODY, NULL, &nobody, err, sizeof(err)) == 0) {
		expect_step(bad_user, CONFINE_ERR_USER, 0, "a second drop");
		test_full();
	} else {
		tap_skip("the user step and the full child need root and "
		    "the user " NOBODY);
	}
	test_supervisor();
	return tap_done();
}
