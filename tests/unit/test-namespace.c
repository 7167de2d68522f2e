/*
 * tests/unit/test-namespace.c — sandbox/namespace.c against the real
 * kernel: the allow-list root (symlinks resolved inside the jail, even a
 * link that points at a host path; read-only binds; a sealed tmpfs;
 * nothing else visible), the loopback-only network namespace with its
 * listener (loopback and non-loopback addresses), and the pid namespace
 * with its init (exit status, signal forwarding, nothing left behind).
 * Needs root; skips otherwise.  Each scenario runs in a forked child that
 * reports its checks over a pipe ("1 text" / "0 text" lines).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "sandbox/confine.h"
#include "sandbox/namespace.h"
#include "tests/tap.h"

static int rep_fd = -1;		/* the child's end of the report pipe */
static char tmp[64];		/* the test's directory on the host */

/* A check made in a child, reported to the parent. */
static int
rep(int cond, const char *fmt, ...)
{
	char line[400];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "%d ", cond ? 1 : 0);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	strcat(line, "\n");
	if (write(rep_fd, line, strlen(line)) < 0) {
		/* the parent sees fewer checks */
	}
	return cond;
}

/* Run fn in a child; turn its report lines into TAP. */
static void
scenario(const char *name, void (*fn)(void))
{
	char buf[16384], *line, *save = NULL;
	size_t len = 0;
	ssize_t n;
	int p[2], st;
	pid_t pid;

	if (pipe(p) != 0 || (pid = fork()) < 0) {
		tap_ok(0, "%s: fork", name);
		return;
	}
	if (pid == 0) {
		close(p[0]);
		rep_fd = p[1];
		fn();
		_exit(0);
	}
	close(p[1]);
	while (len < sizeof(buf) - 1 &&
	    (n = read(p[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	close(p[0]);
	waitpid(pid, &st, 0);
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		tap_ok(line[0] == '1', "%s: %s", name, line + 2);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: the child ended "
	    "normally", name);
}

static int
file_is(const char *path, const char *want)
{
	char got[64] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, got, sizeof(got) - 1);
	close(fd);
	return n >= 0 && (got[n] = '\0', strcmp(got, want) == 0);
}

static void
put(const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	if ((f = fopen(path, "w")) != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

static int
errno_of(int r)
{
	return r == 0 ? 0 : errno;
}

/* ---- the root ---- */

static char src_etc[PATH_MAX], src_ours[PATH_MAX], staging[PATH_MAX];

static void
mounts_child(void)
{
	const struct ns_mount table[] = {
		{ NS_TMPFS, NULL, "/tmp", "mode=1777,size=1m", NS_NOEXEC },
		{ NS_RO, src_etc, "/etc", NULL, 0 },
		/* etc/resolv.conf -> ../run/sys/resolv.conf: lands there */
		{ NS_RO, src_ours, "/etc/resolv.conf", NULL, 0 },
		/* etc/abs -> <tmp>/outside on the host: stays in the jail */
		{ NS_RO, src_ours, "/etc/abs/planted", NULL, 0 },
		{ NS_TMPFS, NULL, "/dev", "mode=0755,size=64k", NS_SEAL },
		{ NS_DEV, "/dev/null", "/dev/null", NULL, 0 },
		{ NS_DIR, NULL, "/tmp/d", "0700", 0 },
		{ NS_SYMLINK, "/etc/hosts", "/link", NULL, 0 },
		{ NS_RO, "/nonexistent-cdsgate-src", "/opt/x", NULL,
		    NS_OPTIONAL },
	};
	char err[200] = "", path[PATH_MAX];
	struct stat st;
	int fd, r;

	if (!rep(unshare(CLONE_NEWNS) == 0, "unshare(CLONE_NEWNS)"))
		return;
	r = ns_root_build(staging, table, sizeof(table) / sizeof(table[0]),
	    err, sizeof(err));
	if (!rep(r == 0, "ns_root_build (%s: %s)", r == 0 ? "ok" : err,
	    strerror(errno)))
		return;
	rep(file_is("/etc/hosts", "HOST\n"), "/etc is the bound host dir");
	rep(file_is("/etc/resolv.conf", "OURS\n"),
	    "a file bound over a relative symlink is read through it");
	rep(file_is("/run/sys/resolv.conf", "OURS\n"),
	    "... and sits at the link's target inside the jail");
	snprintf(path, sizeof(path), "%s/outside/planted", tmp);
	rep(file_is(path, "OURS\n"),
	    "a link to a host path resolves inside the jail (%s)", path);
	rep(file_is("/link", "HOST\n"), "NS_SYMLINK");
	rep(access("/opt", F_OK) != 0, "a missing optional source is skipped");
	snprintf(path, sizeof(path), "%s/secret", tmp);
	rep(access(path, F_OK) != 0 && access("/home", F_OK) != 0 &&
	    access("/usr", F_OK) != 0, "nothing outside the table is there");
	rep(errno_of(mkdir("/x", 0755)) == EROFS, "the root is read-only");
	rep(errno_of(mkdir("/etc/x", 0755)) == EROFS, "/etc is read-only");
	rep(errno_of(mkdir("/dev/x", 0755)) == EROFS, "a sealed tmpfs is "
	    "read-only");
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	rep(fd >= 0 && write(fd, "x", 1) == 1, "the bound /dev/null works");
	if (fd >= 0)
		close(fd);
	fd = open("/tmp/f", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	rep(fd >= 0, "/tmp is writable");
	if (fd >= 0)
		close(fd);
	rep(stat("/tmp/d", &st) == 0 && (st.st_mode & 07777) == 0700,
	    "NS_DIR has its mode");
}

/* A relative target is refused, the build stops. */
static void
mounts_bad_child(void)
{
	const struct ns_mount bad[] = { { NS_DIR, NULL, "etc", "0755", 0 } };
	char err[200] = "";
	int r;

	if (!rep(unshare(CLONE_NEWNS) == 0, "unshare(CLONE_NEWNS)"))
		return;
	r = ns_root_build(staging, bad, 1, err, sizeof(err));

	rep(r != 0 && strstr(err, "etc") != NULL, "a relative jail path is "
	    "refused (%s)", err);
}

/* A required source that is missing stops the build, named. */
static void
mounts_missing_child(void)
{
	const struct ns_mount bad[] = {
		{ NS_RO, "/nonexistent-cdsgate-src", "/x", NULL, 0 },
	};
	char err[200] = "";
	int r;

	if (!rep(unshare(CLONE_NEWNS) == 0, "unshare(CLONE_NEWNS)"))
		return;
	r = ns_root_build(staging, bad, 1, err, sizeof(err));
	rep(r != 0 && errno == ENOENT && strstr(err,
	    "/nonexistent-cdsgate-src /x") != NULL, "a missing source is an "
	    "error naming it (%s)", err);
}

static void
mounts_setup(void)
{
	char path[PATH_MAX], target[PATH_MAX];

	snprintf(path, sizeof(path), "%s/host", tmp);
	mkdir(path, 0755);
	snprintf(src_etc, sizeof(src_etc), "%s/host/etc", tmp);
	mkdir(src_etc, 0755);
	snprintf(staging, sizeof(staging), "%s/root", tmp);
	mkdir(staging, 0700);
	snprintf(path, sizeof(path), "%s/outside", tmp);
	mkdir(path, 0755);
	put("host/etc/hosts", "HOST\n");
	put("host/ours", "OURS\n");
	put("secret", "SECRET\n");
	snprintf(src_ours, sizeof(src_ours), "%s/host/ours", tmp);
	snprintf(path, sizeof(path), "%s/host/etc/resolv.conf", tmp);
	if (symlink("../run/sys/resolv.conf", path) != 0)
		tap_diag("symlink %s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/host/etc/abs", tmp);
	snprintf(target, sizeof(target), "%s/outside", tmp);
	if (symlink(target, path) != 0)
		tap_diag("symlink %s: %s", path, strerror(errno));
}

/* ---- the network ---- */

static int
sa_make(struct sockaddr_storage *ss, const char *ip, unsigned port)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, ip, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		return sizeof(*in4);
	}
	inet_pton(AF_INET6, ip, &in6->sin6_addr);
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons((uint16_t)port);
	return sizeof(*in6);
}

/* connect() to ip:port from the calling thread's namespace; 0 or errno. */
static int
try_connect(const char *ip, unsigned port)
{
	struct sockaddr_storage ss;
	int len = sa_make(&ss, ip, port), s, e;

	if ((s = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return errno;
	e = connect(s, (struct sockaddr *)&ss, (socklen_t)len) == 0 ? 0 :
	    errno;
	close(s);
	return e;
}

static int
accepts(int lfd)
{
	int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (c >= 0)
		close(c);
	return c >= 0;
}

/* A host listener on 127.0.0.1:P and a jail listener on the same
 * address:port: two namespaces, two sockets. */
static void
net_child(void)
{
	struct sockaddr_storage ss;
	char before[64] = "", after[64] = "", links[256] = "";
	const char *what = "";
	int decoy, len, netns, lfd, stuck, fd, r;
	socklen_t sl = sizeof(ss);
	unsigned port;

	decoy = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	len = sa_make(&ss, "127.0.0.1", 0);
	if (decoy < 0 || bind(decoy, (struct sockaddr *)&ss, (socklen_t)len)
	    != 0 || listen(decoy, 8) != 0 ||
	    getsockname(decoy, (struct sockaddr *)&ss, &sl) != 0) {
		rep(0, "host decoy listener");
		return;
	}
	port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	readlink("/proc/thread-self/ns/net", before, sizeof(before) - 1);
	r = ns_net_create((struct sockaddr *)&ss, (socklen_t)len, &netns, &lfd,
	    &stuck, &what);
	if (!rep(r == 0 && !stuck, "ns_net_create 127.0.0.1:%u beside a host "
	    "listener there (%s)", port, r == 0 ? "ok" : what))
		return;
	readlink("/proc/thread-self/ns/net", after, sizeof(after) - 1);
	rep(strcmp(before, after) == 0, "the caller is back in its own "
	    "network namespace");
	rep(try_connect("127.0.0.1", port) == 0 && accepts(decoy) &&
	    !accepts(lfd), "from the host, 127.0.0.1:%u is the host's", port);
	if (!rep(setns(netns, CLONE_NEWNET) == 0, "setns into the jail"))
		return;
	rep(try_connect("127.0.0.1", port) == 0 && accepts(lfd) &&
	    !accepts(decoy), "in the jail, 127.0.0.1:%u is the jail listener",
	    port);
	rep(try_connect("127.0.0.1", port + 1) == ECONNREFUSED,
	    "in the jail, another port is refused");
	rep(try_connect("192.0.2.1", 80) == ENETUNREACH,
	    "in the jail, other addresses are unreachable (no route)");
	if ((fd = open("/proc/thread-self/net/dev", O_RDONLY)) >= 0) {
		ssize_t n = read(fd, links, sizeof(links) - 1);

		links[n > 0 ? n : 0] = '\0';
		close(fd);
	}
	rep(strstr(links, "lo:") != NULL && strstr(links, "eth") == NULL,
	    "in the jail, only lo");
}

/* A non-loopback backend: its address is put on the jail's lo. */
static void
net_addr_child(void)
{
	struct sockaddr_storage ss, got;
	socklen_t gl = sizeof(got);
	const char *what = "";
	char ip[64] = "";
	int len = sa_make(&ss, "192.0.2.77", 8080), netns, lfd, stuck, r;

	r = ns_net_create((struct sockaddr *)&ss, (socklen_t)len, &netns, &lfd,
	    &stuck, &what);
	if (!rep(r == 0, "ns_net_create 192.0.2.77:8080 (%s)", r == 0 ? "ok" :
	    what))
		return;
	getsockname(lfd, (struct sockaddr *)&got, &gl);
	inet_ntop(AF_INET, &((struct sockaddr_in *)&got)->sin_addr, ip,
	    sizeof(ip));
	rep(strcmp(ip, "192.0.2.77") == 0, "the listener is on 192.0.2.77");
	rep(setns(netns, CLONE_NEWNET) == 0 &&
	    try_connect("192.0.2.77", 8080) == 0 && accepts(lfd),
	    "in the jail, 192.0.2.77:8080 connects to it");
	len = sa_make(&ss, "::1", 8080);
	r = ns_net_create((struct sockaddr *)&ss, (socklen_t)len, &netns, &lfd,
	    &stuck, &what);
	rep(r == 0, "ns_net_create [::1]:8080 (%s)", r == 0 ? "ok" : what);
}

/* ---- pid ---- */

/* In the new namespace: pid 1 becomes init, its child does `how`. */
static void __attribute__((noreturn))
pid_jail(int how, int held_fd)
{
	struct confine init;
	char err[256];
	int code;

	if (getpid() != 1)
		_exit(90);
	/* the session's init: JAILINIT once the child is forked */
	confine_init(&init, "jail init");
	init.profile = SANDBOX_PROFILE_JAILINIT;
	switch (ns_init_fork(-1, &init, &code, err, sizeof(err))) {
	case 0:
		if (getpid() != 2)
			_exit(91);
		if (how == 0) {
			/* an orphan that would outlive us; holds held_fd */
			if (fork() == 0) {
				sleep(60);
				_exit(0);
			}
			_exit(7);
		}
		close(held_fd);
		pause();	/* until the forwarded SIGTERM */
		_exit(0);
	case 1:
		_exit(code);
	default:
		_exit(92);
	}
}

static void
pid_child(void)
{
	char mine[64] = "", kid[64] = "";
	struct pollfd pfd;
	int saved, st, p[2], how;
	pid_t pid;

	readlink("/proc/self/ns/pid", mine, sizeof(mine) - 1);
	for (how = 0; how < 2; how++) {
		if (pipe(p) != 0 || ns_pid_begin(&saved) != 0) {
			rep(0, "ns_pid_begin: %s", strerror(errno));
			return;
		}
		pid = fork();
		if (pid == 0) {
			close(p[0]);
			pid_jail(how, p[1]);
		}
		rep(ns_pid_end(saved) == 0, "ns_pid_end");
		close(p[1]);
		if (how == 1) {
			usleep(200000);
			kill(pid, SIGTERM);	/* pid 1: only if handled */
		}
		waitpid(pid, &st, 0);
		if (how == 0)
			rep(WIFEXITED(st) && WEXITSTATUS(st) == 7,
			    "init exits with its child's status (7; got %d)",
			    WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		else
			rep(WIFEXITED(st) && WEXITSTATUS(st) == 128 + SIGTERM,
			    "SIGTERM to init reaches the child (exit 143; got "
			    "%d)", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		pfd = (struct pollfd){ p[0], POLLIN, 0 };
		rep(poll(&pfd, 1, 2000) == 1 && read(p[0], kid, 1) == 0,
		    "nothing of the namespace is left once init is reaped");
		close(p[0]);
	}
	if ((pid = fork()) == 0) {
		readlink("/proc/self/ns/pid", kid, sizeof(kid) - 1);
		_exit(strcmp(kid, mine) == 0 ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	rep(WIFEXITED(st) && WEXITSTATUS(st) == 0, "after ns_pid_end the next "
	    "child is in our own pid namespace");
}

int
main(void)
{
	char path[PATH_MAX];

	if (geteuid() != 0)
		tap_skip_all("needs root (namespaces, mounts)");
#ifdef HAVE_SECCOMP
	if (sandbox_init(SANDBOX_MODE_SECCOMP, 0, path, sizeof(path)) != 0)
#else
	if (sandbox_init(SANDBOX_MODE_NONE, 0, path, sizeof(path)) != 0)
#endif
		tap_skip_all("sandbox_init failed");
	snprintf(tmp, sizeof(tmp), "/tmp/cdsgate-test-ns.XXXXXX");
	if (mkdtemp(tmp) == NULL)
		tap_skip_all("mkdtemp failed");
	setvbuf(stdout, NULL, _IOLBF, 0);
	mounts_setup();
	scenario("root", mounts_child);
	snprintf(path, sizeof(path), "%s/outside/planted", tmp);
	tap_ok(access(path, F_OK) != 0, "root: nothing was created on the "
	    "host through the link (%s)", path);
	scenario("root, bad table", mounts_bad_child);
	scenario("root, missing source", mounts_missing_child);
	scenario("net", net_child);
	scenario("net, non-loopback", net_addr_child);
	scenario("pid", pid_child);
	snprintf(path, sizeof(path), "rm -rf '%s'", tmp);
	if (system(path) != 0)
		tap_diag("could not remove %s", tmp);
	return tap_done();
}
