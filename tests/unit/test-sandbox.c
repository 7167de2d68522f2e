/*
 * tests/unit/test-sandbox.c — every seccomp profile, loaded for real in a
 * forked child: what the role needs works, each forbidden call kills
 * the child with SIGSYS (checked with waitpid), the argument checks
 * hold, and debug mode reports the syscall instead.  The Slurm runner's
 * root helpers' deny-lists (SLURM, UPLINK): what they list fails with
 * EPERM and the child lives on; a program they exec is filtered too.
 * (SUPERVISOR's list: tests/unit/test-confine.c.)
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/confine.h"
#include "sandbox/sandbox.h"
#include "tests/tap.h"

#define CHILD_OK	0
#define CHILD_ENTER	90	/* confine_apply failed */
#define CHILD_WRONG	91	/* a check inside the child failed */

/* ---- running a body in a confined child ---- */

typedef int (*body_fn)(const void *arg);

/* >= 0: in_child's filter is tied to this directory fd. */
static int child_dirfd = -1;

/* Fork; the child loads profile (confine_apply, the filter step only)
 * and runs body; return its wait status.  stderr of the child goes to
 * errfd when >= 0. */
static int
enter(enum sandbox_profile profile, int dirfd, char *err, size_t errlen)
{
	struct confine c;

	confine_init(&c, "test");
	c.dumpable = 1;
	c.profile = (int)profile;
	c.dirfd = dirfd;
	return confine_apply(&c, err, errlen);
}

static int
in_child(enum sandbox_profile profile, body_fn body, const void *arg,
    int errfd)
{
	char err[256];
	pid_t pid;
	int st;

	fflush(NULL);
	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		if (errfd >= 0)
			dup2(errfd, STDERR_FILENO);
		if (enter(profile, child_dirfd, err, sizeof(err)) != 0) {
			fprintf(stderr, "confine_apply: %s\n", err);
			_exit(CHILD_ENTER);
		}
		_exit(body(arg));
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return st;
}

static const char *
status_str(int st, char *buf, size_t len)
{
	if (st == -1)
		snprintf(buf, len, "fork/wait failed");
	else if (WIFEXITED(st))
		snprintf(buf, len, "exited %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(st),
		    strsignal(WTERMSIG(st)));
	else
		snprintf(buf, len, "status %#x", st);
	return buf;
}

static void
expect_exit0(enum sandbox_profile p, body_fn body, const void *arg,
    const char *what)
{
	char b[80];
	int st = in_child(p, body, arg, -1);

	tap_ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "%s: %s (%s)", sandbox_profile_name(p), what,
	    status_str(st, b, sizeof(b)));
}

static void
expect_sigsys(enum sandbox_profile p, body_fn body, const void *arg,
    const char *what)
{
	char b[80];
	int st = in_child(p, body, arg, -1);

	tap_ok(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "%s: %s is killed by SIGSYS (%s)", sandbox_profile_name(p), what,
	    status_str(st, b, sizeof(b)));
}

/* ---- bodies ---- */

struct sum_job {
	const double	*x;
	size_t		 n;
	double		 sum;
};

static void *
sum_thread(void *arg)
{
	struct sum_job *j = arg;
	size_t i;

	for (i = 0; i < j->n; i++)
		j->sum += j->x[i];
	return NULL;
}

/* What the deid worker does: read input from an inherited fd, compute
 * with two threads (and malloc in them), write the result to another. */
static int
body_compute(const void *arg)
{
	const int *fds = arg;	/* in_r, out_w */
	struct sum_job job[2];
	pthread_t t[2];
	double *x;
	size_t n = 0, i;
	ssize_t r;
	char *buf;
	char out[64];
	int len;

	if ((x = malloc(100000 * sizeof(*x))) == NULL ||
	    (buf = malloc(1 << 20)) == NULL)
		return CHILD_WRONG;
	while ((r = read(fds[0], buf + n, (1 << 20) - n)) > 0)
		n += (size_t)r;
	if (r < 0 || n != 100000)
		return CHILD_WRONG;
	for (i = 0; i < n; i++)
		x[i] = (unsigned char)buf[i];
	for (i = 0; i < 2; i++) {
		job[i] = (struct sum_job){ x + i * 50000, 50000, 0 };
		if (pthread_create(&t[i], NULL, sum_thread, &job[i]) != 0)
			return CHILD_WRONG;
	}
	for (i = 0; i < 2; i++)
		if (pthread_join(t[i], NULL) != 0)
			return CHILD_WRONG;
	len = snprintf(out, sizeof(out), "%.0f\n", job[0].sum + job[1].sum);
	if (write(fds[1], out, (size_t)len) != len)
		return CHILD_WRONG;
	free(buf);
	free(x);
	return CHILD_OK;
}

static int
body_violate(const void *arg)
{
	sandbox_violate(arg);
	return CHILD_WRONG;	/* still alive: the call was let through */
}

/* A raw syscall with zero arguments: never gets far enough to matter. */
static int
body_syscall(const void *arg)
{
	syscall(*(const long *)arg, 0, 0, 0, 0, 0, 0);
	return CHILD_WRONG;
}

/* forward: its one kind of socket, TCP to the backend */
static int
body_inet_socket(const void *arg)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);

	(void)arg;
	if (fd < 0)
		return CHILD_WRONG;
	close(fd);
	return CHILD_OK;
}

/* xvfb: socket(AF_INET) fails with EACCES (Xvfb may try) */
static int
body_inet_refused(const void *arg)
{
	(void)arg;
	return socket(AF_INET, SOCK_STREAM, 0) == -1 && errno == EACCES ?
	    CHILD_OK : CHILD_WRONG;
}

/* forward: a socket that is not TCP/IP */
static int
body_unix_socket(const void *arg)
{
	(void)arg;
	socket(AF_UNIX, SOCK_STREAM, 0);
	return CHILD_WRONG;
}

static int
body_fork(const void *arg)
{
	(void)arg;
	if (fork() == 0)
		_exit(0);
	return CHILD_WRONG;
}

static int
body_mmap_exec(const void *arg)
{
	(void)arg;
	mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
	return CHILD_WRONG;
}

static int
body_mprotect_exec(const void *arg)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)arg;
	if (p == MAP_FAILED)
		return CHILD_ENTER;	/* not the check we want */
	mprotect(p, 4096, PROT_READ | PROT_EXEC);
	return CHILD_WRONG;
}

static int
body_fcntl_lock(const void *arg)
{
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET };

	(void)arg;
	fcntl(STDIN_FILENO, F_SETLK, &fl);
	return CHILD_WRONG;
}

static int
body_ioctl_other(const void *arg)
{
	int n;

	(void)arg;
	ioctl(STDIN_FILENO, TIOCSTI, &n);
	return CHILD_WRONG;
}

/* Harmless probes fail with an errno and the child goes on. */
static int
body_probes(const void *arg)
{
	int fds[2] = { -1, -1 };

	(void)arg;
	if (isatty(STDIN_FILENO) != 0 && errno != ENOTTY)
		return CHILD_WRONG;
	errno = 0;
	if (syscall(__NR_clone3, NULL, 0) != -1 || errno != ENOSYS)
		return CHILD_WRONG;
	if (fcntl(STDERR_FILENO, F_GETFD) < 0)
		return CHILD_WRONG;
	(void)fds;
	return CHILD_OK;
}

static int
cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* What a compute process takes for granted in libc: qsort of a large
 * array (sysinfo), localtime_r (tzset done by sandbox_enter), stdio on a
 * handed fd (fstat, isatty probe). */
static int
body_libc(const void *arg)
{
	const size_t n = 1 << 20;
	struct tm tm;
	time_t now = time(NULL);
	FILE *f;
	int *a, fd;
	size_t i;

	(void)arg;
	if ((a = malloc(n * sizeof(*a))) == NULL)
		return CHILD_WRONG;
	for (i = 0; i < n; i++)
		a[i] = (int)((i * 2654435761u) % 1000003);
	qsort(a, n, sizeof(*a), cmp_int);
	for (i = 1; i < n; i++)
		if (a[i - 1] > a[i])
			return CHILD_WRONG;
	free(a);
	if (localtime_r(&now, &tm) == NULL)
		return CHILD_WRONG;
	if ((fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3)) < 0 ||
	    (f = fdopen(fd, "w")) == NULL ||
	    fprintf(f, "%s", "") < 0 || fclose(f) != 0)
		return CHILD_WRONG;
	return CHILD_OK;
}

/* The TLS front door's relay: a socketpair(AF_UNIX) per client. */
static int
body_socketpair(const void *arg)
{
	int sv[2];
	char c = 'x';

	(void)arg;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
	    write(sv[0], &c, 1) != 1 || read(sv[1], &c, 1) != 1)
		return CHILD_WRONG;
	close(sv[0]);
	close(sv[1]);
	return CHILD_OK;
}

static int
body_raise_self(const void *arg)
{
	(void)arg;
	raise(SIGUSR1);		/* default action: terminate */
	return CHILD_WRONG;
}

/* ---- the tests ---- */

/* DEID: a 2-thread computation over a pipe works. */
static void
test_deid_compute(void)
{
	int in[2], out[2], fds[2], st;
	char *data, res[64];
	ssize_t n;
	pid_t pid;
	size_t i;
	long want = 0;
	char err[256], b[80];

	if (pipe(in) != 0 || pipe(out) != 0 || (data = malloc(100000)) == NULL) {
		tap_ok(0, "deid: pipes");
		return;
	}
	for (i = 0; i < 100000; i++) {
		data[i] = (char)(i * 7 % 251);
		want += (unsigned char)data[i];
	}
	fflush(NULL);
	if ((pid = fork()) == 0) {
		close(in[1]);
		close(out[0]);
		fds[0] = in[0];
		fds[1] = out[1];
		if (enter(SANDBOX_PROFILE_DEID, -1, err, sizeof(err)) != 0) {
			fprintf(stderr, "confine_apply: %s\n", err);
			_exit(CHILD_ENTER);
		}
		_exit(body_compute(fds));
	}
	close(in[0]);
	close(out[1]);
	n = write(in[1], data, 100000);
	close(in[1]);
	n = read(out[0], res, sizeof(res) - 1);
	res[n > 0 ? n : 0] = '\0';
	close(out[0]);
	waitpid(pid, &st, 0);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "deid: 2 threads + read/write on pipes under the filter (%s)",
	    status_str(st, b, sizeof(b)));
	tap_ok(n > 0 && atol(res) == want, "deid: the result is right (%ld)",
	    want);
	free(data);
}

/* Each forbidden call, each in its own child. */
static void
test_forbidden(enum sandbox_profile p, const char *const *calls)
{
	char what[64];

	for (; *calls != NULL; calls++) {
		snprintf(what, sizeof(what), "%s()", *calls);
		expect_sigsys(p, body_violate, *calls, what);
	}
}

/* The argument checks, as a table: profile, body, what, killed? */
static void
test_argument_checks(void)
{
	static const struct {
		enum sandbox_profile	 p;
		body_fn			 body;
		const char		*what;
		int			 kills;
	} t[] = {
		{ SANDBOX_PROFILE_DEID, body_fork,
		  "fork (clone without CLONE_THREAD)", 1 },
		{ SANDBOX_PROFILE_DEID, body_mmap_exec, "mmap(PROT_EXEC)", 1 },
		{ SANDBOX_PROFILE_DEID, body_mprotect_exec,
		  "mprotect(PROT_EXEC)", 1 },
		{ SANDBOX_PROFILE_DEID, body_fcntl_lock, "fcntl(F_SETLK)", 1 },
		{ SANDBOX_PROFILE_WORKER, body_ioctl_other, "ioctl(TIOCSTI)", 1 },
		{ SANDBOX_PROFILE_WORKER, body_mmap_exec, "mmap(PROT_EXEC)", 1 },
		{ SANDBOX_PROFILE_WORKER, body_fork, "fork", 1 },
		{ SANDBOX_PROFILE_DEID, body_probes, "isatty -> ENOTTY, "
		  "clone3 -> ENOSYS, fcntl(F_GETFD) allowed", 0 },
		{ SANDBOX_PROFILE_WORKER, body_probes, "the same probes", 0 },
		{ SANDBOX_PROFILE_WORKER, body_socketpair,
		  "socketpair(AF_UNIX) for the TLS relay", 0 },
		{ SANDBOX_PROFILE_DEID, body_socketpair, "socketpair", 1 },
		{ SANDBOX_PROFILE_FORWARD, body_unix_socket,
		  "socket(AF_UNIX)", 1 },
		{ SANDBOX_PROFILE_FORWARD, body_fork, "fork", 1 },
		{ SANDBOX_PROFILE_FORWARD, body_mmap_exec, "mmap(PROT_EXEC)", 1 },
		{ SANDBOX_PROFILE_FORWARD, body_inet_socket,
		  "socket(AF_INET) for the backend", 0 },
		{ SANDBOX_PROFILE_DEID, body_libc, "qsort of 2^20 ints, "
		  "localtime_r, stdio on a dup'd fd work", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (t[i].kills)
			expect_sigsys(t[i].p, t[i].body, NULL, t[i].what);
		else
			expect_exit0(t[i].p, t[i].body, NULL, t[i].what);
	}
}

/* ---- AUDIT: *at() only beneath the directory fd it was given ---- */

/* The key holder's head replacement: temp file, fsync, rename, unlink. */
static int
body_audit_head(const void *arg)
{
	int fd;

	(void)arg;
	if ((fd = openat(child_dirfd, "h.tmp", O_WRONLY | O_CREAT | O_TRUNC |
	    O_CLOEXEC, 0600)) < 0 || write(fd, "{}", 2) != 2 ||
	    fsync(fd) != 0 || close(fd) != 0 ||
	    renameat(child_dirfd, "h.tmp", child_dirfd, "h") != 0 ||
	    unlinkat(child_dirfd, "h", 0) != 0)
		return CHILD_WRONG;
	return CHILD_OK;
}

/* openat on another directory fd (arg: that fd) */
static int
body_audit_otherdir(const void *arg)
{
	openat(*(const int *)arg, "x", O_WRONLY | O_CREAT, 0600);
	return CHILD_WRONG;
}

/* rename out of the directory: new dirfd differs */
static int
body_audit_rename_out(const void *arg)
{
	renameat(child_dirfd, "h", *(const int *)arg, "h");
	return CHILD_WRONG;
}

static void
test_audit(void)
{
	static const char *const calls[] = { "open", "socket", "execve",
	    "ptrace", NULL };
	char dir[] = "/tmp/test-sandbox.XXXXXX", b[80];
	int other, st;

	if (mkdtemp(dir) == NULL ||
	    (child_dirfd = open(dir, O_RDONLY | O_DIRECTORY)) < 0 ||
	    (other = open("/tmp", O_RDONLY | O_DIRECTORY)) < 0) {
		tap_ok(0, "audit: set-up: %s", strerror(errno));
		return;
	}
	expect_exit0(SANDBOX_PROFILE_AUDIT, body_audit_head, NULL,
	    "openat/fsync/renameat/unlinkat beneath its dirfd");
	expect_sigsys(SANDBOX_PROFILE_AUDIT, body_audit_otherdir, &other,
	    "openat on another directory fd");
	expect_sigsys(SANDBOX_PROFILE_AUDIT, body_audit_rename_out, &other,
	    "renameat into another directory");
	expect_sigsys(SANDBOX_PROFILE_AUDIT, body_fork, NULL, "fork");
	test_forbidden(SANDBOX_PROFILE_AUDIT, calls);
	other = child_dirfd;
	child_dirfd = -1;
	st = in_child(SANDBOX_PROFILE_AUDIT, body_audit_otherdir, &other, -1);
	tap_ok(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "audit: without sandbox_enter_fd no openat at all (%s)",
	    status_str(st, b, sizeof(b)));
	tap_ok(sandbox_enter_fd(SANDBOX_PROFILE_AUDIT, -1, b, sizeof(b)) != 0,
	    "audit: sandbox_enter_fd refuses a negative fd: %s", b);
	close(other);
	rmdir(dir);
}

/* GATE: fork + exec of a program (here /bin/true) and wait for it. */
static int
body_gate_exec(const void *arg)
{
	char *const argv[] = { "/bin/true", NULL };
	pid_t pid;
	int st;

	(void)arg;
	if ((pid = fork()) < 0)
		return CHILD_WRONG;
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(CHILD_WRONG);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		return CHILD_WRONG;
	return CHILD_OK;
}

#define NOWHERE	"/nonexistent/cdsgate-test"

/* -1 and EPERM: a deny-list's answer. */
static int
eperm(long r)
{
	return r == -1 && errno == EPERM;
}

/* clone3 (its flags out of the filter's reach): ENOSYS, glibc's cue to
 * fall back to clone. */
static int
enosys_clone3(void)
{
	unsigned long args[11] = { CLONE_NEWNET, 0 };

	errno = 0;
	return syscall(SYS_clone3, args, sizeof(args)) == -1 &&
	    errno == ENOSYS;
}

/* SLURM/UPLINK: mounts, namespaces and root-only kernel calls refused
 * with EPERM, not death; a program exec'd from here runs filtered. */
static int
body_root_helper(const void *arg)
{
	pid_t pid;
	int st;

	(void)arg;
	/* paths that are not there: without the filter these fail with
	   ENOENT and touch nothing */
	errno = 0;
	if (!eperm(mount("none", NOWHERE, "tmpfs", 0, NULL)) ||
	    !eperm(umount2(NOWHERE, MNT_DETACH)) ||
	    !eperm(syscall(SYS_pivot_root, NOWHERE, NOWHERE)) ||
	    !eperm(chroot(NOWHERE)) || !eperm(unshare(CLONE_NEWNS)) ||
	    !eperm(unshare(CLONE_NEWNET)) || !eperm(setns(0, 0)) ||
	    !eperm(syscall(SYS_keyctl, 0, 0, 0, 0, 0)) ||
	    !eperm(syscall(SYS_bpf, 0, NULL, 0)))
		return CHILD_WRONG;
	/* a new namespace by clone: EPERM; were it made, the child
	   leaves at once and the check fails */
	errno = 0;
	if ((pid = (pid_t)syscall(SYS_clone, CLONE_NEWNET | SIGCHLD, NULL,
	    NULL, NULL, NULL)) == 0)
		_exit(0);
	if (!eperm(pid) || !enosys_clone3())
		return CHILD_WRONG;
	if ((pid = fork()) < 0)
		return CHILD_WRONG;
	if (pid == 0) {
		execl("/bin/grep", "grep", "-q", "^Seccomp:[[:space:]]*2$",
		    "/proc/self/status", (char *)NULL);
		_exit(CHILD_WRONG);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		return CHILD_WRONG;
	return CHILD_OK;
}

static void
test_root_helpers(void)
{
	static const enum sandbox_profile p[] = { SANDBOX_PROFILE_SLURM,
	    SANDBOX_PROFILE_UPLINK };
	static const char *const names[] = { "slurm", "uplink" };
	size_t i;

	for (i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
		tap_ok(strcmp(sandbox_profile_name(p[i]), names[i]) == 0,
		    "profile %s is named for the logs", names[i]);
		expect_exit0(p[i], body_root_helper, NULL, "mount, umount2, "
		    "pivot_root, chroot, unshare, setns, clone(CLONE_NEWNET), "
		    "keyctl, bpf get EPERM, clone3 ENOSYS; an exec'd program "
		    "runs, Seccomp 2");
		expect_exit0(p[i], body_gate_exec, NULL, "fork+exec /bin/true");
	}
}

static void
test_gate(void)
{
	static const char *const calls[] = { "socket", "ptrace", NULL };

	expect_exit0(SANDBOX_PROFILE_GATE, body_gate_exec, NULL,
	    "fork + execve(/bin/true) + wait4 under the filter");
	expect_exit0(SANDBOX_PROFILE_GATE, body_socketpair,
	    NULL, "socketpair(AF_UNIX) for the deid worker");
	expect_sigsys(SANDBOX_PROFILE_GATE, body_unix_socket, NULL,
	    "socket(AF_UNIX)");
	test_forbidden(SANDBOX_PROFILE_GATE, calls);
}

/* TLS: a descriptor arrives over its SOCK_SEQPACKET socket (the worker
 * hands it each client that way); it uses it and makes randomness. */
static int tls_sv[2] = { -1, -1 };

static int
body_tls_fdpass(const void *arg)
{
	char c, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
	    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	unsigned char rnd[16];
	int fd;

	(void)arg;
	if (recvmsg(tls_sv[1], &mh, MSG_CMSG_CLOEXEC) != 1 ||
	    (cm = CMSG_FIRSTHDR(&mh)) == NULL || cm->cmsg_type != SCM_RIGHTS)
		return CHILD_WRONG;
	memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	if (write(fd, "y", 1) != 1 || close(fd) != 0 ||
	    getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return CHILD_WRONG;
	return CHILD_OK;
}

static void
test_tls(void)
{
	static const char *const calls[] = { "open", "socket", "execve",
	    "ptrace", NULL };
	char c = 'x', cbuf[CMSG_SPACE(sizeof(int))], got = 0;
	struct iovec iov = { &c, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
	    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int p[2];

	memset(cbuf, 0, sizeof(cbuf));
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, tls_sv) != 0 ||
	    pipe(p) != 0) {
		tap_ok(0, "tls: socketpair, pipe");
		return;
	}
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &p[1], sizeof(int));
	if (sendmsg(tls_sv[0], &mh, 0) != 1) {
		tap_ok(0, "tls: sendmsg");
		return;
	}
	close(p[1]);
	expect_exit0(SANDBOX_PROFILE_TLS, body_tls_fdpass, NULL,
	    "a descriptor by SCM_RIGHTS, written to; getrandom");
	tap_ok(read(p[0], &got, 1) == 1 && got == 'y',
	    "tls: the handed descriptor was written through");
	close(p[0]);
	close(tls_sv[0]);
	close(tls_sv[1]);
	expect_sigsys(SANDBOX_PROFILE_TLS, body_socketpair, NULL,
	    "socketpair (the worker makes the relay's pair)");
	expect_sigsys(SANDBOX_PROFILE_TLS, body_unix_socket, NULL,
	    "socket(AF_UNIX)");
	expect_sigsys(SANDBOX_PROFILE_TLS, body_fork, NULL, "fork");
	expect_sigsys(SANDBOX_PROFILE_TLS, body_mmap_exec, NULL,
	    "mmap(PROT_EXEC)");
	test_forbidden(SANDBOX_PROFILE_TLS, calls);
}

/* FRONTDOOR: a TCP socket to a worker (AF_INET, AF_INET6) is allowed;
 * no other family, no socketpair, no open, exec, fork or PROT_EXEC. */
static void
test_frontdoor(void)
{
	static const char *const calls[] = { "open", "execve", "ptrace",
	    NULL };

	expect_exit0(SANDBOX_PROFILE_FRONTDOOR, body_inet_socket, NULL,
	    "socket(AF_INET) to a session's worker");
	expect_sigsys(SANDBOX_PROFILE_FRONTDOOR, body_unix_socket, NULL,
	    "socket(AF_UNIX)");
	expect_sigsys(SANDBOX_PROFILE_FRONTDOOR, body_socketpair, NULL,
	    "socketpair");
	expect_sigsys(SANDBOX_PROFILE_FRONTDOOR, body_fork, NULL, "fork");
	expect_sigsys(SANDBOX_PROFILE_FRONTDOOR, body_mmap_exec, NULL,
	    "mmap(PROT_EXEC)");
	test_forbidden(SANDBOX_PROFILE_FRONTDOOR, calls);
}

/* API: SQLite's way with a file: POSIX lock, MAP_SHARED, fdatasync. */
static int
body_api_sqlite(const void *arg)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char path[] = "/tmp/test-sandbox-api.XXXXXX";
	int fd = mkstemp(path);
	char *p;

	(void)arg;
	if (fd < 0 || ftruncate(fd, 4096) != 0 || fcntl(fd, F_SETLK, &fl) != 0)
		return CHILD_WRONG;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED || (p[0] = 'x', fdatasync(fd)) != 0 ||
	    munmap(p, 4096) != 0 || unlink(path) != 0)
		return CHILD_WRONG;
	return close(fd) == 0 ? CHILD_OK : CHILD_WRONG;
}

static void
test_api(void)
{
	static const char *const calls[] = { "execve", "socket", "ptrace",
	    NULL };

	expect_exit0(SANDBOX_PROFILE_API, body_api_sqlite, NULL,
	    "mkstemp, F_SETLK, MAP_SHARED mmap, fdatasync, unlink");
	expect_sigsys(SANDBOX_PROFILE_API, body_fork, NULL, "fork");
	expect_sigsys(SANDBOX_PROFILE_API, body_unix_socket, NULL,
	    "socket(AF_UNIX)");
	expect_sigsys(SANDBOX_PROFILE_API, body_mmap_exec, NULL,
	    "mmap(PROT_EXEC)");
	expect_sigsys(SANDBOX_PROFILE_API, body_ioctl_other, NULL,
	    "ioctl(TIOCSTI)");
	test_forbidden(SANDBOX_PROFILE_API, calls);
}

/* pgmount: a raw packet socket is not a database connection */
static int
body_packet_socket(const void *arg)
{
	(void)arg;
	socket(AF_PACKET, SOCK_RAW, 0);
	return CHILD_WRONG;
}

/* PGMOUNT: TCP and AF_UNIX sockets (libpq), nothing that runs code. */
static void
test_pgmount(void)
{
	static const char *const calls[] = { "execve", "ptrace", NULL };

	expect_exit0(SANDBOX_PROFILE_PGMOUNT, body_inet_socket, NULL,
	    "socket(AF_INET)");
	expect_sigsys(SANDBOX_PROFILE_PGMOUNT, body_packet_socket, NULL,
	    "socket(AF_PACKET)");
	expect_sigsys(SANDBOX_PROFILE_PGMOUNT, body_fork, NULL, "fork");
	expect_sigsys(SANDBOX_PROFILE_PGMOUNT, body_mmap_exec, NULL,
	    "mmap(PROT_EXEC)");
	test_forbidden(SANDBOX_PROFILE_PGMOUNT, calls);
}

/* replay: the recording is read by pread on the fd opened before. */
static int
body_pread(const void *arg)
{
	char b[4];

	return pread(*(const int *)arg, b, sizeof(b), 0) == 4 &&
	    memcmp(b, "RFBR", 4) == 0 ? CHILD_OK : CHILD_WRONG;
}

/* REPLAY: reads what it opened, serves viewers; opens nothing more. */
static void
test_replay(void)
{
	static const char *const calls[] = { "open", "socket", "execve",
	    "ptrace", NULL };
	char path[] = "/tmp/test-sandbox-replay.XXXXXX";
	int fd = mkstemp(path);

	tap_ok(fd >= 0 && write(fd, "RFBR", 4) == 4 && unlink(path) == 0,
	    "replay: a recording-like file");
	expect_exit0(SANDBOX_PROFILE_REPLAY, body_pread, &fd,
	    "pread of the file it holds");
	expect_sigsys(SANDBOX_PROFILE_REPLAY, body_fork, NULL, "fork");
	expect_sigsys(SANDBOX_PROFILE_REPLAY, body_mmap_exec, NULL,
	    "mmap(PROT_EXEC)");
	test_forbidden(SANDBOX_PROFILE_REPLAY, calls);
	if (fd >= 0)
		close(fd);
}

/* The kernel's attack surface stays closed under Xvfb's broad list. */
static void
test_xvfb_closed(void)
{
	static const struct { long nr; const char *name; } calls[] = {
		{ __NR_mount, "mount" }, { __NR_umount2, "umount2" },
		{ __NR_unshare, "unshare" }, { __NR_setns, "setns" },
		{ __NR_bpf, "bpf" }, { __NR_kexec_load, "kexec_load" },
		{ __NR_init_module, "init_module" },
		{ __NR_perf_event_open, "perf_event_open" },
		{ __NR_keyctl, "keyctl" }, { __NR_userfaultfd, "userfaultfd" },
		{ __NR_io_uring_setup, "io_uring_setup" },
		{ __NR_process_vm_readv, "process_vm_readv" },
		{ __NR_chroot, "chroot" }, { __NR_reboot, "reboot" },
		{ __NR_swapon, "swapon" },
	};
	size_t i;

	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		expect_sigsys(SANDBOX_PROFILE_XVFB, body_syscall, &calls[i].nr,
		    calls[i].name);
	expect_exit0(SANDBOX_PROFILE_XVFB, body_inet_refused, NULL,
	    "socket(AF_INET) fails with EACCES");
}

/* raise() reaches ourselves: the signal kills, not the filter. */
static void
test_signal_self(void)
{
	char b[80];
	int st = in_child(SANDBOX_PROFILE_DEID, body_raise_self, NULL, -1);

	tap_ok(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGUSR1,
	    "deid: raise(SIGUSR1) is delivered (%s)",
	    status_str(st, b, sizeof(b)));
}

/* Debug mode: the child reports the syscall and exits 159. */
static void
test_debug(void)
{
	char err[256], out[512] = "", b[80];
	int p[2], st = -1;
	ssize_t n;

	if (sandbox_init(SANDBOX_MODE_SECCOMP, 1, err, sizeof(err)) != 0 ||
	    pipe(p) != 0) {
		tap_ok(0, "debug mode: set-up (%s)", err);
		return;
	}
	st = in_child(SANDBOX_PROFILE_DEID, body_violate, "open", p[1]);
	close(p[1]);
	n = read(p[0], out, sizeof(out) - 1);
	out[n > 0 ? n : 0] = '\0';
	close(p[0]);
	tap_ok(st != -1 && WIFEXITED(st) &&
	    WEXITSTATUS(st) == SANDBOX_DEBUG_EXIT,
	    "debug mode: a violation exits %d (%s)", SANDBOX_DEBUG_EXIT,
	    status_str(st, b, sizeof(b)));
	tap_ok(strstr(out, "profile deid does not allow syscall") != NULL &&
	    strstr(out, "(openat)") != NULL,
	    "debug mode: stderr names the syscall: %.*s", (int)strcspn(out,
	    "\n"), out);
	sandbox_init(SANDBOX_MODE_SECCOMP, 0, err, sizeof(err));
}

/* Mode none: no filter, open works. */
static void
test_mode_none(void)
{
	char err[256], b[80];
	int st;

	if (sandbox_init(SANDBOX_MODE_NONE, 0, err, sizeof(err)) != 0) {
		tap_ok(0, "mode none: %s", err);
		return;
	}
	tap_ok(strcmp(sandbox_mode_name(), "none") == 0, "mode none: named");
	st = in_child(SANDBOX_PROFILE_DEID, body_violate, "open", -1);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == CHILD_WRONG,
	    "mode none: open() is not filtered (%s)",
	    status_str(st, b, sizeof(b)));
}

int
main(void)
{
	/* the same four kill both the deid worker and the session worker */
	static const char *const calls[] = { "open", "socket", "execve",
	    "ptrace", NULL };
	static const char *const xvfb_calls[] = { "ptrace", NULL };
	static const char *const forward_calls[] = { "open", "execve",
	    "ptrace", NULL };
	char err[256];

	if (sandbox_init(SANDBOX_MODE_SECCOMP, 0, err, sizeof(err)) != 0) {
		/* --with-sandbox=none: the message is the check */
		tap_ok(strstr(err, "--with-sandbox") != NULL,
		    "without libseccomp, sandbox_init(SECCOMP) refuses: %s",
		    err);
		test_mode_none();
		return tap_done();
	}
	tap_ok(strcmp(sandbox_mode_name(), "seccomp") == 0,
	    "mode seccomp: named");
	test_deid_compute();
	test_forbidden(SANDBOX_PROFILE_DEID, calls);
	test_forbidden(SANDBOX_PROFILE_WORKER, calls);
	test_forbidden(SANDBOX_PROFILE_XVFB, xvfb_calls);
	test_forbidden(SANDBOX_PROFILE_FORWARD, forward_calls);
	test_xvfb_closed();
	test_argument_checks();
	test_signal_self();
	test_audit();
	test_gate();
	test_api();
	test_tls();
	test_frontdoor();
	test_root_helpers();
	test_pgmount();
	test_replay();
	test_debug();
	test_mode_none();
	return tap_done();
}
