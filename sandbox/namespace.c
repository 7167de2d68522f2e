/*
 * sandbox/namespace.c — network, pid and mount namespaces for the
 * browser jail (see namespace.h and docs/jail.md).
 *
 * Runs as root in the supervisor (the network namespace, the pid
 * namespace switch) and in the browser's child before its privilege
 * drop (the root file system).  No untrusted input: every path and
 * address comes from the supervisor's checked spec.  Library-style: no
 * logging, no exit.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/if_addr.h>
#include <linux/openat2.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>

#include "sandbox/confine.h"
#include "sandbox/namespace.h"

#define NS_LISTEN_BACKLOG	64
#define NS_SELF_NET		"/proc/thread-self/ns/net"

#define FAIL(step)	do { *what = (step); goto out; } while (0)

/* ---- network ---------------------------------------------------------- */

/* `lo` comes up with 127.0.0.1/8 and ::1; nothing else exists. */
static int
lo_up(void)
{
	struct ifreq ifr;
	int s, r = -1;

	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		r = ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	close(s);
	return r;
}

static int
is_loopback(const struct sockaddr *sa)
{
	const struct sockaddr_in *in4 = (const struct sockaddr_in *)sa;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

	if (sa->sa_family == AF_INET)
		return (ntohl(in4->sin_addr.s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
}

/* Append one rtnetlink attribute; the caller sized the buffer. */
static void
nl_attr(struct nlmsghdr *nh, unsigned short type, const void *d, size_t n)
{
	struct rtattr *rta = (struct rtattr *)((char *)nh +
	    NLMSG_ALIGN(nh->nlmsg_len));

	rta->rta_type = type;
	rta->rta_len = (unsigned short)RTA_LENGTH(n);
	memcpy(RTA_DATA(rta), d, n);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

/* Send one request and read its acknowledgement. */
static int
nl_talk(struct nlmsghdr *nh)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	char ack[256];
	struct nlmsghdr *r = (struct nlmsghdr *)ack;
	struct nlmsgerr *e;
	ssize_t n;
	int s, rc = -1;

	if ((s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
	    NETLINK_ROUTE)) < 0)
		return -1;
	if (sendto(s, nh, nh->nlmsg_len, 0, (struct sockaddr *)&kernel,
	    sizeof(kernel)) != (ssize_t)nh->nlmsg_len)
		goto out;
	n = recv(s, ack, sizeof(ack), 0);
	if (n < (ssize_t)NLMSG_LENGTH(sizeof(*e)) || !NLMSG_OK(r, (size_t)n) ||
	    r->nlmsg_type != NLMSG_ERROR) {
		errno = EPROTO;
		goto out;
	}
	e = NLMSG_DATA(r);
	if (e->error != 0) {
		errno = -e->error;
		goto out;
	}
	rc = 0;
out:
	close(s);
	return rc;
}

/* Put addr on `lo` (host scope, no duplicate address detection). */
static int
lo_add_addr(const struct sockaddr *sa)
{
	struct {
		struct nlmsghdr	nh;
		struct ifaddrmsg ifa;
		char		attrs[64];
	} req;
	const void *a;
	size_t alen;

	if (sa->sa_family == AF_INET) {
		a = &((const struct sockaddr_in *)sa)->sin_addr;
		alen = 4;
	} else {
		a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		alen = 16;
	}
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifa));
	req.nh.nlmsg_type = RTM_NEWADDR;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE |
	    NLM_F_EXCL;
	req.nh.nlmsg_seq = 1;
	req.ifa.ifa_family = (unsigned char)sa->sa_family;
	req.ifa.ifa_prefixlen = (unsigned char)(alen * 8);
	req.ifa.ifa_flags = IFA_F_NODAD | IFA_F_PERMANENT;
	req.ifa.ifa_scope = RT_SCOPE_HOST;
	if ((req.ifa.ifa_index = if_nametoindex("lo")) == 0)
		return -1;
	nl_attr(&req.nh, IFA_LOCAL, a, alen);
	nl_attr(&req.nh, IFA_ADDRESS, a, alen);
	return nl_talk(&req.nh);
}

static int
listen_on(const struct sockaddr *sa, socklen_t len)
{
	int one = 1, s;

	s = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (s < 0)
		return -1;
	if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    (sa->sa_family == AF_INET6 && setsockopt(s, IPPROTO_IPV6,
	    IPV6_V6ONLY, &one, sizeof(one)) != 0) ||
	    bind(s, sa, len) != 0 || listen(s, NS_LISTEN_BACKLOG) != 0) {
		int e = errno;

		close(s);
		errno = e;
		return -1;
	}
	return s;
}

int
ns_net_create(const struct sockaddr *addr, socklen_t addrlen,
    int *netns_fd, int *listen_fd, int *stuck, const char **what)
{
	int host, nfd = -1, lfd = -1, r = -1, e;

	*netns_fd = *listen_fd = -1;
	*stuck = 0;
	if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6) {
		*what = "backend address family";
		errno = EAFNOSUPPORT;
		return -1;
	}
	if ((host = open(NS_SELF_NET, O_RDONLY | O_CLOEXEC)) < 0) {
		*what = "open our network namespace";
		return -1;
	}
	if (unshare(CLONE_NEWNET) != 0) {
		*what = "unshare(CLONE_NEWNET)";
		close(host);
		return -1;
	}
	if ((nfd = open(NS_SELF_NET, O_RDONLY | O_CLOEXEC)) < 0)
		FAIL("open the new network namespace");
	if (lo_up() != 0)
		FAIL("bring lo up");
	if (!is_loopback(addr) && lo_add_addr(addr) != 0)
		FAIL("add the backend's address to lo (rtnetlink)");
	if ((lfd = listen_on(addr, addrlen)) < 0)
		FAIL("listen on the backend's address in the namespace");
	r = 0;
out:
	e = errno;
	/* A socket keeps the namespace it was made in: back to ours. */
	if (setns(host, CLONE_NEWNET) != 0) {
		e = errno;
		*stuck = 1;
		*what = "return to our network namespace";
		r = -1;
	}
	close(host);
	if (r == 0) {
		*netns_fd = nfd;
		*listen_fd = lfd;
		return 0;
	}
	if (nfd >= 0)
		close(nfd);
	if (lfd >= 0)
		close(lfd);
	errno = e;
	return -1;
}

/* ---- pid -------------------------------------------------------------- */

int
ns_pid_begin(int *saved)
{
	if ((*saved = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if (unshare(CLONE_NEWPID) != 0) {
		int e = errno;

		close(*saved);
		*saved = -1;
		errno = e;
		return -1;
	}
	return 0;
}

int
ns_pid_end(int saved)
{
	int r;

	if (saved < 0)
		return 0;
	r = setns(saved, CLONE_NEWPID);
	close(saved);
	return r;
}

/* What a wait status says as one exit code. */
static int
exit_code_of(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 255;
}

/*
 * As pid 1 only signals we handle (or block) reach us, even from the
 * parent namespace: block them, wait for them, forward the stop signals.
 */
int
ns_init_fork(int child_fd, const struct confine *init_confine,
    int *exit_code, char *err, size_t errlen)
{
	sigset_t set, old;
	siginfo_t si;
	pid_t pid, w;
	int st;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, &old) != 0)
		return -1;
	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		struct confine c;

		/* init gone = namespace gone; this only makes it explicit */
		confine_init(&c, "jail init's child");
		c.deathsig = SIGKILL;
		if (sigprocmask(SIG_SETMASK, &old, NULL) != 0 ||
		    confine_apply(&c, err, errlen) != CONFINE_OK)
			_exit(127);
		return 0;
	}
	if (init_confine != NULL &&
	    confine_apply(init_confine, err, errlen) != CONFINE_OK) {
		kill(pid, SIGKILL);
		errno = EPERM;
		return -1;
	}
	if (child_fd >= 0)
		close(child_fd);
	for (;;) {
		if (sigwaitinfo(&set, &si) < 0)
			continue;
		if (si.si_signo != SIGCHLD) {
			kill(pid, si.si_signo);
			continue;
		}
		while ((w = waitpid(-1, &st, WNOHANG)) > 0)
			if (w == pid) {
				*exit_code = exit_code_of(st);
				return 1;
			}
	}
}

/* ---- mounts ----------------------------------------------------------- */

/*
 * Paths inside the jail are resolved inside it: a symlink in a host
 * directory we bound read-only (/etc/resolv.conf -> ../run/systemd/...,
 * or an absolute link in /etc) must never lead a mount onto a host path.
 * Mount targets are opened with openat2(RESOLVE_IN_ROOT) on the jail's
 * root and mounted on through /proc/self/fd/N; a final symlink is
 * followed by hand (jail_chase) so its target can be created in the jail,
 * and everything is created with *at() calls relative to directories
 * resolved the same way.
 */
struct jail {
	int		 rootfd;	/* the jail's root, O_PATH */
};

#define JAIL_LINK_MAX	8

/* An O_PATH fd of dst (absolute, in-jail), symlinks resolved in-jail. */
static int
jail_open(const struct jail *j, const char *dst)
{
	struct open_how how;

	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_CLOEXEC;
	how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
	return (int)syscall(SYS_openat2, j->rootfd, dst, &how, sizeof(how));
}

/* Lexically clean an absolute path: no "", "." or ".." components, and
 * ".." never climbs above "/". */
static int
path_clean(const char *in, char *out, size_t outlen)
{
	char tmp[PATH_MAX], *save = NULL, *c;
	size_t len = 0;

	if (snprintf(tmp, sizeof(tmp), "%s", in) >= (int)sizeof(tmp))
		return -1;
	out[0] = '\0';
	for (c = strtok_r(tmp, "/", &save); c != NULL;
	    c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--;
			out[len] = '\0';
			continue;
		}
		if (len + 1 + strlen(c) + 1 > outlen)
			return -1;
		out[len++] = '/';
		strcpy(out + len, c);
		len += strlen(c);
	}
	if (len == 0)
		strcpy(out, "/");
	return 0;
}

/* If dst's last component is a symlink in the jail, where it points (in
 * the jail), up to JAIL_LINK_MAX times: a mount must land on the link's
 * target inside the jail, created there if need be. */
static int
jail_chase(const struct jail *j, const char *dst, char *out, size_t outlen)
{
	char parent[PATH_MAX], link[PATH_MAX], next[2 * PATH_MAX + 2];
	const char *slash;
	struct stat st;
	ssize_t n;
	int i, pfd;

	if (path_clean(dst, out, outlen) != 0)
		return -1;
	for (i = 0; i < JAIL_LINK_MAX; i++) {
		slash = strrchr(out, '/');
		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - out),
		    out);
		if ((pfd = jail_open(j, parent[0] ? parent : "/")) < 0)
			return errno == ENOENT ? 0 : -1;
		n = -1;
		if (fstatat(pfd, slash + 1, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode))
			n = readlinkat(pfd, slash + 1, link, sizeof(link) - 1);
		close(pfd);
		if (n < 0)
			return 0;	/* not a link (or not there) */
		link[n] = '\0';
		snprintf(next, sizeof(next), "%s/%s", link[0] == '/' ? "" :
		    parent, link);
		if (path_clean(next, out, outlen) != 0)
			return -1;
	}
	errno = ELOOP;
	return -1;
}

/*
 * dir (clean, absolute, in-jail) as an O_PATH fd resolved in the jail,
 * made 0755 where missing (our umask may be 077: the browser user must
 * traverse it), through dangling symlinks too: their targets are made
 * in the jail.  Only the jail's own tmpfs gets new directories: under a
 * read-only bind they exist or mkdirat fails (EROFS).
 */
static int
jail_dir(const struct jail *j, const char *dir, int links)
{
	char real[PATH_MAX], parent[PATH_MAX];
	const char *slash;
	int fd, pfd, r;

	if ((fd = jail_open(j, dir)) >= 0 || errno != ENOENT)
		return fd;
	if (links > JAIL_LINK_MAX) {
		errno = ELOOP;
		return -1;
	}
	if (jail_chase(j, dir, real, sizeof(real)) != 0)
		return -1;
	if (strcmp(real, dir) != 0)
		return jail_dir(j, real, links + 1);
	slash = strrchr(real, '/');
	snprintf(parent, sizeof(parent), "%.*s", (int)(slash - real), real);
	if ((pfd = jail_dir(j, parent[0] ? parent : "/", links)) < 0)
		return -1;
	r = mkdirat(pfd, slash + 1, 0755) == 0 &&
	    fchmodat(pfd, slash + 1, 0755, 0) == 0 ? 0 : -1;
	close(pfd);
	return r == 0 ? jail_open(j, real) : -1;
}

/* dst's parent directory (made as needed) and last component. */
static int
jail_parent(const struct jail *j, const char *dst, const char **name)
{
	char parent[PATH_MAX];
	const char *slash = strrchr(dst, '/');

	snprintf(parent, sizeof(parent), "%.*s", (int)(slash - dst), dst);
	*name = slash + 1;
	return jail_dir(j, parent[0] ? parent : "/", 0);
}

/* A mount point of the same kind as src: a directory or an empty file.
 * An existing one is used as it is. */
static int
mount_point(const struct jail *j, const char *dst, int dir)
{
	const char *name;
	int fd, pfd, r;

	if ((fd = jail_open(j, dst)) >= 0) {
		close(fd);
		return 0;
	}
	if (errno != ENOENT || (pfd = jail_parent(j, dst, &name)) < 0)
		return -1;
	if (dir) {
		r = mkdirat(pfd, name, 0755) == 0 &&
		    fchmodat(pfd, name, 0755, 0) == 0 ? 0 : -1;
	} else if ((fd = openat(pfd, name, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0644)) >= 0) {
		close(fd);
		r = 0;
	} else {
		r = -1;
	}
	close(pfd);
	return r;
}

/* mount(2) onto dst as resolved in the jail. */
static int
mount_at(const struct jail *j, const char *dst, const char *src,
    const char *type, unsigned long flags, const char *data)
{
	char proc[64];
	int fd, r;

	if ((fd = jail_open(j, dst)) < 0)
		return -1;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	r = mount(src, proc, type, flags, data);
	close(fd);
	return r;
}

static int
bind_one(const struct jail *j, const struct ns_mount *m, const char *dst)
{
	struct mount_attr attr;
	struct stat st;
	int fd, r;

	if (stat(m->src, &st) != 0 ||
	    mount_point(j, dst, S_ISDIR(st.st_mode)) != 0 ||
	    mount_at(j, dst, m->src, NULL, MS_BIND | MS_REC, NULL) != 0)
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.attr_set = MOUNT_ATTR_NOSUID;
	if (m->kind != NS_DEV)
		attr.attr_set |= MOUNT_ATTR_NODEV;
	if (m->kind == NS_RO || m->kind == NS_MIRROR)
		attr.attr_set |= MOUNT_ATTR_RDONLY;
	if (m->kind == NS_DEV || (m->flags & NS_NOEXEC))
		attr.attr_set |= MOUNT_ATTR_NOEXEC;
	/* Opened again: now the new mount.  Recursive: a submount of a
	   read-only bind is read-only too. */
	if ((fd = jail_open(j, dst)) < 0)
		return -1;
	r = mount_setattr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
	    sizeof(attr));
	close(fd);
	return r;
}

int
ns_tree_clone(int fd)
{
	return open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
	    AT_EMPTY_PATH);
}

/* A tree from ns_tree_clone (its fd number in m->src) attached at dst. */
static int
tree_one(const struct jail *j, const struct ns_mount *m, const char *dst)
{
	struct mount_attr attr;
	struct stat st;
	char *end;
	long tfd = strtol(m->src, &end, 10);
	int fd, r;

	if (*m->src == '\0' || *end != '\0' || tfd < 0 || tfd > INT_MAX ||
	    fstat((int)tfd, &st) != 0) {
		errno = EBADF;
		return -1;
	}
	if (mount_point(j, dst, S_ISDIR(st.st_mode)) != 0)
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
	if (m->flags & NS_NOEXEC)
		attr.attr_set |= MOUNT_ATTR_NOEXEC;
	if (mount_setattr((int)tfd, "", AT_EMPTY_PATH, &attr,
	    sizeof(attr)) != 0 || (fd = jail_open(j, dst)) < 0)
		return -1;
	r = move_mount((int)tfd, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH |
	    MOVE_MOUNT_T_EMPTY_PATH);
	close(fd);
	return r;
}

/* A symlink `text` at dst, in the jail. */
static int
link_at(const struct jail *j, const char *text, const char *dst)
{
	const char *name;
	int pfd, r;

	if ((pfd = jail_parent(j, dst, &name)) < 0)
		return -1;
	r = symlinkat(text, pfd, name);
	close(pfd);
	return r;
}

/* A symlink on the host stays a symlink (/bin -> usr/bin). */
static int
mirror_one(const struct jail *j, const struct ns_mount *m, const char *dst)
{
	char link[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (lstat(m->src, &st) != 0)
		return -1;
	if (!S_ISLNK(st.st_mode))
		return bind_one(j, m, dst);
	if ((n = readlink(m->src, link, sizeof(link) - 1)) < 0)
		return -1;
	link[n] = '\0';
	return link_at(j, link, dst);
}

/* An empty directory with the table's mode. */
static int
dir_one(const struct jail *j, const struct ns_mount *m, const char *dst)
{
	const char *name;
	int pfd, r;

	if ((pfd = jail_parent(j, dst, &name)) < 0)
		return -1;
	r = (mkdirat(pfd, name, 0755) == 0 || errno == EEXIST) &&
	    fchmodat(pfd, name, (mode_t)strtoul(m->opts, NULL, 8), 0) == 0 ?
	    0 : -1;
	close(pfd);
	return r;
}

static int
mount_one(const struct jail *j, const struct ns_mount *m, const char *dst)
{
	unsigned long fl = MS_NOSUID | MS_NODEV;

	switch (m->kind) {
	case NS_RO:
	case NS_RW:
	case NS_DEV:
		return bind_one(j, m, dst);
	case NS_MIRROR:
		return mirror_one(j, m, dst);
	case NS_TMPFS:
		if (m->flags & NS_NOEXEC)
			fl |= MS_NOEXEC;
		if (mount_point(j, dst, 1) != 0)
			return -1;
		return mount_at(j, dst, "tmpfs", "tmpfs", fl, m->opts);
	case NS_PROC:
		if (mount_point(j, dst, 1) != 0)
			return -1;
		return mount_at(j, dst, "proc", "proc", fl | MS_NOEXEC, NULL);
	case NS_DIR:
		return dir_one(j, m, dst);
	case NS_SYMLINK:
		return link_at(j, m->src, dst);
	case NS_TREE:
		return tree_one(j, m, dst);
	}
	errno = EINVAL;
	return -1;
}

/* A missing optional source is no error. */
static int
src_missing(const struct ns_mount *m)
{
	struct stat st;

	if (!(m->flags & NS_OPTIONAL) || m->src == NULL)
		return 0;
	if (m->kind == NS_SYMLINK || m->kind == NS_TREE)
		return 0;
	return (m->kind == NS_MIRROR ? lstat(m->src, &st) :
	    stat(m->src, &st)) != 0 && errno == ENOENT;
}

static int
root_populate(const struct jail *j, const struct ns_mount *m, size_t n,
    char *err, size_t errlen)
{
	char dst[PATH_MAX];
	size_t i;

	for (i = 0; i < n; i++) {
		if (src_missing(&m[i]))
			continue;
		if (m[i].dst[0] != '/' || strcmp(m[i].dst, "/") == 0 ||
		    jail_chase(j, m[i].dst, dst, sizeof(dst)) != 0) {
			snprintf(err, errlen, "jail path %s", m[i].dst);
			return -1;
		}
		if (mount_one(j, &m[i], dst) != 0) {
			snprintf(err, errlen, "jail: %s %s", m[i].src ?
			    m[i].src : m[i].opts ? m[i].opts : "-", m[i].dst);
			return -1;
		}
	}
	return 0;
}

/* Populated tmpfs directories (/dev) become read-only. */
static int
root_seal(const struct jail *j, const struct ns_mount *m, size_t n,
    char *err, size_t errlen)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
	size_t i;
	int fd, r;

	for (i = 0; i < n; i++) {
		if (m[i].kind != NS_TMPFS || !(m[i].flags & NS_SEAL))
			continue;
		r = -1;
		if ((fd = jail_open(j, m[i].dst)) >= 0) {
			r = mount_setattr(fd, "", AT_EMPTY_PATH, &attr,
			    sizeof(attr));
			close(fd);
		}
		if (r != 0) {
			snprintf(err, errlen, "jail: read-only %s", m[i].dst);
			return -1;
		}
	}
	return 0;
}

int
ns_root_build(const char *staging, const struct ns_mount *m, size_t n,
    char *err, size_t errlen)
{
	struct jail j;
	int r;

	/* Nothing we mount may propagate back to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		snprintf(err, errlen, "make / private");
		return -1;
	}
	if (mount("tmpfs", staging, "tmpfs", MS_NOSUID | MS_NODEV,
	    "mode=0755,size=1m") != 0) {
		snprintf(err, errlen, "tmpfs root on %s", staging);
		return -1;
	}
	if ((j.rootfd = open(staging, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "open the jail's root %s", staging);
		return -1;
	}
	r = root_populate(&j, m, n, err, errlen) == 0 &&
	    root_seal(&j, m, n, err, errlen) == 0 ? 0 : -1;
	close(j.rootfd);
	if (r != 0)
		return -1;
	/* pivot_root(".", ".") stacks the old root under the new one;
	   detaching it leaves only the table. */
	if (chdir(staging) != 0 || syscall(SYS_pivot_root, ".", ".") != 0 ||
	    umount2(".", MNT_DETACH) != 0 || chdir("/") != 0) {
		snprintf(err, errlen, "pivot_root into %s", staging);
		return -1;
	}
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY |
	    MS_NOSUID | MS_NODEV, NULL) != 0) {
		snprintf(err, errlen, "make the jail's root read-only");
		return -1;
	}
	return 0;
}
