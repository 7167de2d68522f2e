/*
 * supervisor/browser.c — the kiosk browser's argv, environment and jail.
 *
 * Supervisor side (root): builds the command and the jail's mount table,
 * prepares the host's policy mount point, resolves the backend and makes
 * the jail's network namespace.  Child side: as root (pid 1 of a fresh
 * pid namespace) joins that network namespace and builds the jail's
 * root, then — after the drop to the browser user in supervisor/session.c —
 * execs Chromium.  No untrusted input: the URL was validated by
 * policy/spec.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "supervisor/browser.h"
#include "policy/chromium.h"
#include "policy/spec.h"

/*
 * Flags that are the same for every session.  Why each:
 * kiosk:              full screen, no tabs, no address bar
 * no-first-run, no-default-browser-check: no dialogs at start
 * disable-background-networking, -component-update, -sync,
 *   -default-apps, -extensions, -breakpad: no traffic to anyone but the
 *   backend, nothing installed, no crash uploads
 * noerrdialogs, hide-crash-restore-bubble: a restarted browser shows the
 *   app, not a "restore pages?" bubble
 * disable-features=Translate,MediaRouter: no page text to a translate
 *   service; no mDNS/SSDP discovery of cast devices
 * password-store=basic: no keyring prompt (nothing is stored anyway)
 * deny-permission-prompts: permission requests are refused silently
 * ozone-platform=x11: talk to our Xvfb, never look for Wayland
 * force-device-scale-factor=1: pixels on screen = pixels sent
 * disable-print-preview: printing is off by policy; no preview either
 * Its own sandbox is never switched off.
 */
static const char *const browser_fixed_flags[] = {
	"--kiosk",
	"--no-first-run",
	"--no-default-browser-check",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--disable-default-apps",
	"--disable-extensions",
	"--disable-breakpad",
	"--noerrdialogs",
	"--hide-crash-restore-bubble",
	"--disable-features=Translate,MediaRouter",
	"--password-store=basic",
	"--deny-permission-prompts",
	"--ozone-platform=x11",
	"--force-device-scale-factor=1",
	"--disable-print-preview",
	NULL
};

/* Append a formatted string to cmd->buf; returns it or NULL if full. */
static const char *
cmd_str(struct browser_cmd *cmd, size_t *used, const char *fmt, ...)
{
	va_list ap;
	char *p = cmd->buf + *used;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(p, sizeof(cmd->buf) - *used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(cmd->buf) - *used)
		return NULL;
	*used += (size_t)n + 1;
	return p;
}

/*
 * The jail's file system, in mount order: everything the browser sees.
 * System directories read-only; /bin, /lib... as the host has them
 * (symlinks into /usr on Debian); a minimal /dev; private tmpfs /tmp and
 * /dev/shm (Chromium's shared memory); a fresh /proc of its own pid
 * namespace.  Not listed, so not there: /home, /root, /run (other
 * sessions), /var (but the font cache), /srv, /opt, /mnt, /sys, the
 * host's /tmp with other X sockets.  Session entries follow in
 * jail_session().
 */
static const struct ns_mount jail_system[] = {
	{ NS_RO, "/usr", "/usr", NULL, 0 },
	{ NS_MIRROR, "/bin", "/bin", NULL, NS_OPTIONAL },
	{ NS_MIRROR, "/sbin", "/sbin", NULL, NS_OPTIONAL },
	{ NS_MIRROR, "/lib", "/lib", NULL, NS_OPTIONAL },
	{ NS_MIRROR, "/lib32", "/lib32", NULL, NS_OPTIONAL },
	{ NS_MIRROR, "/lib64", "/lib64", NULL, NS_OPTIONAL },
	{ NS_MIRROR, "/libx32", "/libx32", NULL, NS_OPTIONAL },
	{ NS_RO, "/etc", "/etc", NULL, 0 },
	{ NS_RO, "/var/cache/fontconfig", "/var/cache/fontconfig", NULL,
	    NS_OPTIONAL },
	{ NS_TMPFS, NULL, "/dev", "mode=0755,size=64k", NS_NOEXEC | NS_SEAL },
	{ NS_DEV, "/dev/null", "/dev/null", NULL, 0 },
	{ NS_DEV, "/dev/zero", "/dev/zero", NULL, 0 },
	{ NS_DEV, "/dev/full", "/dev/full", NULL, 0 },
	{ NS_DEV, "/dev/random", "/dev/random", NULL, 0 },
	{ NS_DEV, "/dev/urandom", "/dev/urandom", NULL, 0 },
	{ NS_SYMLINK, "/proc/self/fd", "/dev/fd", NULL, 0 },
	{ NS_SYMLINK, "/proc/self/fd/0", "/dev/stdin", NULL, 0 },
	{ NS_SYMLINK, "/proc/self/fd/1", "/dev/stdout", NULL, 0 },
	{ NS_SYMLINK, "/proc/self/fd/2", "/dev/stderr", NULL, 0 },
	{ NS_TMPFS, NULL, "/dev/shm", "mode=1777,size=512m", NS_NOEXEC },
	{ NS_TMPFS, NULL, "/tmp", "mode=1777,size=64m", NS_NOEXEC },
	{ NS_DIR, NULL, "/tmp/.X11-unix", "0755", 0 },
	{ NS_PROC, NULL, "/proc", NULL, 0 },
};

#define JAIL_SYSTEM_N	(sizeof(jail_system) / sizeof(jail_system[0]))

/* Add one session entry; src and dst are copied into cmd->buf. */
static int
jail_add(struct browser_cmd *cmd, size_t *used, enum ns_mount_kind kind,
    const char *src, const char *dst, int flags)
{
	struct ns_mount *m;

	if (cmd->njail >= BROWSER_JAIL_MAX)
		return -1;
	m = &cmd->jail[cmd->njail++];
	m->kind = kind;
	m->flags = flags;
	m->src = cmd_str(cmd, used, "%s", src);
	m->dst = cmd_str(cmd, used, "%s", dst);
	return m->src == NULL || m->dst == NULL ? -1 : 0;
}

/*
 * This session's part of the jail: only its X socket (the inode its Xvfb
 * made, pinned by p->xsock_fd; Xvfb's abstract socket is per network
 * namespace, so unreachable from the jail), its home at the same path as on the host (the argv and
 * environment need no change), the managed policy, and /etc/hosts and
 * /etc/resolv.conf of our own.
 */
static int
jail_session(const struct browser_params *p, struct browser_cmd *cmd,
    size_t *used)
{
	char xsock[64], hosts[4096], resolv[4096];

	memcpy(cmd->jail, jail_system, sizeof(jail_system));
	cmd->njail = JAIL_SYSTEM_N;
	snprintf(xsock, sizeof(xsock), "/tmp/.X11-unix/X%d", p->display_num);
	if (snprintf(hosts, sizeof(hosts), "%s/hosts", p->etc_dir) >=
	    (int)sizeof(hosts) || snprintf(resolv, sizeof(resolv),
	    "%s/resolv.conf", p->etc_dir) >= (int)sizeof(resolv))
		return -1;
	cmd->jail_dir = cmd_str(cmd, used, "%s", p->jail_dir);
	cmd->xsock_fd = p->xsock_fd;
	cmd->xsock_entry = cmd->njail;	/* the next entry; src set in the
					   child (browser_enter_jail) */
	if (cmd->jail_dir == NULL ||
	    jail_add(cmd, used, NS_TREE, "-", xsock, NS_NOEXEC) != 0 ||
	    jail_add(cmd, used, NS_RW, p->home, p->home, NS_NOEXEC) != 0 ||
	    jail_add(cmd, used, NS_RO, p->policy_dir, CHROMIUM_POLICY_DIR,
	    NS_NOEXEC) != 0 ||
	    jail_add(cmd, used, NS_RO, hosts, "/etc/hosts", 0) != 0 ||
	    jail_add(cmd, used, NS_RO, resolv, "/etc/resolv.conf", 0) != 0)
		return -1;
	return 0;
}

int
browser_cmd_build(const struct browser_params *p, struct browser_cmd *cmd)
{
	const char *const *f;
	const char *tz = getenv("TZ");
	size_t a = 0, e = 0, used = 0, i;

	memset(cmd, 0, sizeof(*cmd));
	cmd->argv[a++] = BROWSER_PATH;
	for (f = browser_fixed_flags; *f != NULL; f++)
		cmd->argv[a++] = *f;
	cmd->argv[a++] = cmd_str(cmd, &used, "--user-data-dir=%s",
	    p->profile);
	/* Without a window manager --kiosk alone does not fill the
	   screen (measured). */
	cmd->argv[a++] = "--window-position=0,0";
	cmd->argv[a++] = cmd_str(cmd, &used, "--window-size=%u,%u",
	    p->width, p->height);
	cmd->argv[a++] = p->url;
	cmd->argv[a] = NULL;

	/* A clean environment: only what Chromium needs to find X and its
	   private home.  DBUS_SESSION_BUS_ADDRESS set to something unusable
	   stops libdbus from auto-launching a bus daemon (a process that
	   would outlive the browser). */
	cmd->envp[e++] = "PATH=/usr/bin:/bin";
	cmd->envp[e++] = "LANG=C.UTF-8";
	cmd->envp[e++] = "DBUS_SESSION_BUS_ADDRESS=disabled:";
	cmd->envp[e++] = cmd_str(cmd, &used, "HOME=%s", p->home);
	cmd->envp[e++] = cmd_str(cmd, &used, "XDG_CONFIG_HOME=%s/.config",
	    p->home);
	cmd->envp[e++] = cmd_str(cmd, &used, "XDG_CACHE_HOME=%s/.cache",
	    p->home);
	cmd->envp[e++] = cmd_str(cmd, &used, "XDG_DATA_HOME=%s/.local/share",
	    p->home);
	cmd->envp[e++] = cmd_str(cmd, &used, "DISPLAY=%s", p->display);
	cmd->envp[e++] = cmd_str(cmd, &used, "XAUTHORITY=%s", p->xauthority);
	if (tz != NULL && strlen(tz) < 64)
		cmd->envp[e++] = cmd_str(cmd, &used, "TZ=%s", tz);
	cmd->envp[e] = NULL;

	if (jail_session(p, cmd, &used) != 0)
		return -1;
	for (i = 0; i < a; i++)
		if (cmd->argv[i] == NULL)
			return -1;
	for (i = 0; i < e; i++)
		if (cmd->envp[i] == NULL)
			return -1;
	return 0;
}

/* mkdir -p for a root-owned path, each new component 0755 whatever the
 * umask (the supervisor runs with 077).  Root-owned components that an
 * earlier run made 0700 get their search bits back: the browser user
 * must traverse them to read its policy (without, Chromium silently runs
 * with no managed policy at all).  Read and write bits are never added. */
static int
mkdir_p(const char *path)
{
	char buf[256], *p, c;
	struct stat st;

	if (strlen(path) >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(buf, path);
	for (p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		c = *p;
		*p = '\0';
		if (mkdir(buf, 0755) == 0) {
			if (chmod(buf, 0755) != 0)
				return -1;
		} else if (errno != EEXIST)
			return -1;
		if (lstat(buf, &st) != 0)
			return -1;
		if (S_ISDIR(st.st_mode) && st.st_uid == 0 &&
		    (st.st_mode & 0111) != 0111 &&
		    chmod(buf, (st.st_mode & 07777) | 0111) != 0)
			return -1;
		if (c == '\0')
			break;
		*p = c;
	}
	return 0;
}

int
browser_host_prepare(void)
{
	struct stat st;

	if (mkdir_p(CHROMIUM_POLICY_DIR) != 0)
		return -1;
	/* It is a mount point only; refuse one someone else controls. */
	if (lstat(CHROMIUM_POLICY_DIR, &st) != 0)
		return -1;
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

/* ---- the jail: supervisor side ---- */

/* The URL's host as an address: a literal as it is, a name through the
 * host's resolver (IPv4 first: a name like localhost often has both). */
static int
backend_resolve(const struct spec_url *u, struct browser_net *n)
{
	struct addrinfo hints, *res = NULL, *ai, *pick = NULL;
	char port[8];

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV | (u->host_is_ip ? AI_NUMERICHOST : 0);
	snprintf(port, sizeof(port), "%u", u->port);
	if (getaddrinfo(u->host, port, &hints, &res) != 0)
		return -1;
	for (ai = res; ai != NULL; ai = ai->ai_next)
		if ((ai->ai_family == AF_INET && (pick == NULL ||
		    pick->ai_family != AF_INET)) ||
		    (ai->ai_family == AF_INET6 && pick == NULL))
			pick = ai;
	if (pick == NULL || pick->ai_addrlen > sizeof(n->addr)) {
		freeaddrinfo(res);
		return -1;
	}
	memcpy(&n->addr, pick->ai_addr, pick->ai_addrlen);
	n->addrlen = pick->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/* "addr:port" / "[addr]:port" for the logs; ip gets the bare address. */
static void
backend_desc(struct browser_net *n, char *ip, size_t iplen)
{
	const struct sockaddr_in *in4 = (const struct sockaddr_in *)&n->addr;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&n->addr;

	if (n->addr.ss_family == AF_INET) {
		inet_ntop(AF_INET, &in4->sin_addr, ip, (socklen_t)iplen);
		snprintf(n->desc, sizeof(n->desc), "%s:%u", ip,
		    (unsigned)ntohs(in4->sin_port));
	} else {
		inet_ntop(AF_INET6, &in6->sin6_addr, ip, (socklen_t)iplen);
		snprintf(n->desc, sizeof(n->desc), "[%s]:%u", ip,
		    (unsigned)ntohs(in6->sin6_port));
	}
}

/* Write one small root-owned 0644 file (new: refuses to reuse one). */
static int
write_small(const char *dir, const char *name, const char *text)
{
	char path[4096];
	size_t len = strlen(text);
	int fd, r = -1;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    (int)sizeof(path))
		return -1;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0644);
	if (fd < 0)
		return -1;
	if (write(fd, text, len) == (ssize_t)len && fchmod(fd, 0644) == 0)
		r = 0;
	close(fd);
	return r;
}

static int
write_etc(const char *etc_dir, const struct spec_url *u, const char *ip)
{
	char hosts[512];

	snprintf(hosts, sizeof(hosts), "# cdsgate browser jail\n"
	    "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n");
	if (!u->host_is_ip && strcmp(u->host, "localhost") != 0 &&
	    strlen(hosts) + strlen(ip) + strlen(u->host) + 3 < sizeof(hosts))
		snprintf(hosts + strlen(hosts), sizeof(hosts) - strlen(hosts),
		    "%s\t%s\n", ip, u->host);
	if (write_small(etc_dir, "hosts", hosts) != 0)
		return -1;
	/* No name server: the jail has no route to one anyway, and an
	   empty file makes lookups fail at once. */
	return write_small(etc_dir, "resolv.conf",
	    "# cdsgate browser jail: no DNS\n");
}

/* In the child, unprivileged, just before exec: Chromium ignores a policy
 * it cannot read, so a browser that cannot read its own must not start. */
int
browser_policy_readable(void)
{
	return access(CHROMIUM_POLICY_DIR "/" CHROMIUM_POLICY_FILE, R_OK);
}

int
browser_net_setup(const char *url, const char *etc_dir,
    struct browser_net *n, int *stuck, char *err, size_t errlen)
{
	struct policy_error pe;
	struct spec_url u;
	const char *what;
	char ip[INET6_ADDRSTRLEN];

	*stuck = 0;
	n->netns_fd = n->listen_fd = -1;
	if (spec_url_parse(url, &u, &pe) != POLICY_OK) {
		snprintf(err, errlen, "backend URL: %s", pe.msg);
		return -1;
	}
	if (backend_resolve(&u, n) != 0) {
		snprintf(err, errlen, "cannot resolve the backend host %s",
		    u.host);
		return -1;
	}
	backend_desc(n, ip, sizeof(ip));
	if (write_etc(etc_dir, &u, ip) != 0) {
		snprintf(err, errlen, "%s/hosts: %s", etc_dir, strerror(errno));
		return -1;
	}
	if (ns_net_create((struct sockaddr *)&n->addr, n->addrlen,
	    &n->netns_fd, &n->listen_fd, stuck, &what) != 0) {
		snprintf(err, errlen, "browser network namespace: %s: %s%s",
		    what, strerror(errno), *stuck ? " (the supervisor is "
		    "stuck in it and stops)" : "");
		return -1;
	}
	return 0;
}

int
browser_xsock_open(const char *dir, int display, uid_t owner)
{
	char path[PATH_MAX];
	struct stat st;
	int fd;

	if (snprintf(path, sizeof(path), "%s/X%d", dir, display) >=
	    (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode) ||
	    st.st_uid != owner) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

/* ---- the jail: child side ---- */

/* The staging directory: ours (root), a directory, not a link. */
static int
jail_dir_ready(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return -1;
	if (lstat(dir, &st) != 0)
		return -1;
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

int
browser_enter_jail(struct browser_cmd *cmd, int netns_fd, const char **what)
{
	static char msg[200];	/* child only: outlives the call */
	char err[160];
	int tree;

	*what = msg;
	if (setns(netns_fd, CLONE_NEWNET) != 0) {
		snprintf(msg, sizeof(msg), "join the jail's network namespace");
		return -1;
	}
	/* Xvfb's socket as the inode it made, copied while we are still in
	   the supervisor's mount namespace. */
	if ((tree = ns_tree_clone(cmd->xsock_fd)) < 0) {
		snprintf(msg, sizeof(msg), "copy Xvfb's socket mount");
		return -1;
	}
	snprintf(cmd->xtree, sizeof(cmd->xtree), "%d", tree);
	cmd->jail[cmd->xsock_entry].src = cmd->xtree;
	if (unshare(CLONE_NEWNS) != 0) {
		snprintf(msg, sizeof(msg), "unshare(CLONE_NEWNS)");
		return -1;
	}
	if (jail_dir_ready(cmd->jail_dir) != 0) {
		snprintf(msg, sizeof(msg), "jail directory %s", cmd->jail_dir);
		return -1;
	}
	if (ns_root_build(cmd->jail_dir, cmd->jail, cmd->njail, err,
	    sizeof(err)) != 0) {
		snprintf(msg, sizeof(msg), "%s", err);
		return -1;
	}
	return 0;
}

int
browser_exec(const struct browser_cmd *cmd)
{
	execve(BROWSER_PATH, (char *const *)cmd->argv,
	    (char *const *)cmd->envp);
	return -1;
}

void
browser_clear_locks(int profile_dirfd)
{
	static const char *const locks[] = {
		"SingletonLock", "SingletonSocket", "SingletonCookie", NULL
	};
	const char *const *l;

	/* unlinkat never follows a symlink: SingletonLock is one. */
	for (l = locks; *l != NULL; l++)
		unlinkat(profile_dirfd, *l, 0);
}
