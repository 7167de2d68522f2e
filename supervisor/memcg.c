/*
 * supervisor/memcg.c — a session's memory bound as a cgroup v2 (see memcg.h).
 *
 * Runs in the supervisor (root) and, for memcg_join(), in its forked
 * child before the privilege drop.  Reads /proc/self/cgroup,
 * /proc/self/mountinfo and the cgroup2 files (kernel text); writes only
 * the new cgroup's files.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/memcg.h"

#define MEMCG_FILE_MAX	65536	/* mountinfo can be long */

void
memcg_init(struct memcg *mc)
{
	memset(mc, 0, sizeof(*mc));
	mc->base_fd = mc->procs_fd = mc->events_fd = -1;
}

int
memcg_active(const struct memcg *mc)
{
	return mc->procs_fd >= 0;
}

/* fd's whole text (from offset 0) into buf, NUL-terminated; its length or
 * -1. */
static ssize_t
fd_text(int fd, char *buf, size_t len)
{
	ssize_t n = 0, got = 0;

	while ((size_t)got < len - 1 &&
	    (n = pread(fd, buf + got, len - 1 - (size_t)got, got)) > 0)
		got += n;
	if (got < 0 || (got == 0 && n < 0))
		return -1;
	buf[got] = '\0';
	return got;
}

static ssize_t
file_text(int dirfd, const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if ((fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = fd_text(fd, buf, len);
	close(fd);
	return n;
}

static int
file_write(int dirfd, const char *path, const char *text)
{
	size_t n = strlen(text);
	int fd, r;

	if ((fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC)) < 0)
		return -1;
	r = write(fd, text, n) == (ssize_t)n ? 0 : -1;
	close(fd);
	return r;
}

int
memcg_parse_self(const char *proc_cgroup, char *out, size_t len)
{
	const char *p = proc_cgroup, *e;
	size_t n;

	for (; p != NULL && *p != '\0'; p = e != NULL ? e + 1 : NULL) {
		e = strchr(p, '\n');
		if (strncmp(p, "0::", 3) != 0)
			continue;
		n = (e != NULL ? (size_t)(e - p) : strlen(p)) - 3;
		if (n == 0 || n >= len)
			return -1;
		memcpy(out, p + 3, n);
		out[n] = '\0';
		return 0;
	}
	return -1;
}

/* Field i (0-based, space-separated) of line l[0..n) into out; \040 and
 * the other octal escapes of mountinfo decoded.  0 or -1. */
static int
mi_field(const char *l, size_t n, int i, char *out, size_t len)
{
	size_t a = 0, b, o = 0;

	for (; i > 0 && a < n; i--) {
		while (a < n && l[a] != ' ')
			a++;
		a++;
	}
	if (a >= n)
		return -1;
	for (b = a; b < n && l[b] != ' '; b++) {
		if (o + 1 >= len)
			return -1;
		if (l[b] == '\\' && b + 3 < n) {
			out[o++] = (char)(((l[b + 1] - '0') << 6) |
			    ((l[b + 2] - '0') << 3) | (l[b + 3] - '0'));
			b += 3;
		} else
			out[o++] = l[b];
	}
	out[o] = '\0';
	return 0;
}

int
memcg_parse_mount(const char *mountinfo, char *out, size_t len)
{
	const char *p = mountinfo, *e, *sep;
	char root[8];
	size_t n;

	for (; p != NULL && *p != '\0'; p = e != NULL ? e + 1 : NULL) {
		e = strchr(p, '\n');
		n = e != NULL ? (size_t)(e - p) : strlen(p);
		/* "... - FSTYPE SOURCE OPTIONS" */
		if ((sep = strstr(p, " - cgroup2 ")) == NULL || sep >= p + n)
			continue;
		if (mi_field(p, n, 3, root, sizeof(root)) != 0 ||
		    strcmp(root, "/") != 0)
			continue;	/* a bind of a subtree: not the root */
		return mi_field(p, n, 4, out, len);
	}
	return -1;
}

int
memcg_has_controller(const char *list, const char *ctl)
{
	size_t n = strlen(ctl);
	const char *p = list;

	while ((p = strstr(p, ctl)) != NULL) {
		if ((p == list || p[-1] == ' ') &&
		    (p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
			return 1;
		p += n;
	}
	return 0;
}

static int __attribute__((format(printf, 4, 5)))
why_set(char *why, size_t len, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return status;
}

/* The first line of a small cgroup file at dirfd, or "" (for reasons). */
static const char *
first_line(int dirfd, const char *file, char *buf, size_t len)
{
	if (file_text(dirfd, file, buf, len) < 0)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* The directory the session's cgroup goes in: the parent of ours (ours
 * holds the supervisor), or the root if we are at the root. */
static int
memcg_base(char *base, size_t len, char *why, size_t whylen)
{
	static char buf[MEMCG_FILE_MAX];
	char mnt[PATH_MAX / 2], self[PATH_MAX / 2], *slash;

	if (file_text(AT_FDCWD, "/proc/self/cgroup", buf, sizeof(buf)) < 0 ||
	    memcg_parse_self(buf, self, sizeof(self)) != 0)
		return why_set(why, whylen, MEMCG_EUNAVAIL, "%s", "no cgroup "
		    "v2 hierarchy (/proc/self/cgroup has no 0:: line)");
	if (file_text(AT_FDCWD, "/proc/self/mountinfo", buf,
	    sizeof(buf)) < 0 || memcg_parse_mount(buf, mnt, sizeof(mnt)) != 0)
		return why_set(why, whylen, MEMCG_EUNAVAIL, "%s",
		    "cgroup2 is not mounted");
	if ((slash = strrchr(self, '/')) != NULL)
		*slash = '\0';	/* "/a/b" -> "/a"; "/" -> "" */
	if ((size_t)snprintf(base, len, "%s%s", mnt, self) >= len)
		return why_set(why, whylen, MEMCG_EUNAVAIL, "%s",
		    "cgroup path too long");
	return MEMCG_OK;
}

int
memcg_create(struct memcg *mc, const char *name, uint64_t limit, char *why,
    size_t whylen)
{
	char base[PATH_MAX / 2 + 8], ctl[512], num[32];
	int r, dfd = -1;

	memcg_init(mc);
	if ((r = memcg_base(base, sizeof(base), why, whylen)) != MEMCG_OK)
		return r;
	if ((mc->base_fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return why_set(why, whylen, MEMCG_EUNAVAIL, "cannot open %s: %s",
		    base, strerror(errno));
	if (!memcg_has_controller(first_line(mc->base_fd, "cgroup.controllers",
	    ctl, sizeof(ctl)), "memory")) {
		why_set(why, whylen, MEMCG_EUNAVAIL, "the cgroup2 hierarchy has "
		    "no memory controller at %s (cgroup.controllers: \"%.64s\"; "
		    "it may be bound to cgroup v1)", base, ctl);
		memcg_destroy(mc);
		return MEMCG_EUNAVAIL;
	}
	if (!memcg_has_controller(first_line(mc->base_fd,
	    "cgroup.subtree_control", ctl, sizeof(ctl)), "memory")) {
		why_set(why, whylen, MEMCG_EUNAVAIL, "the memory controller "
		    "is not enabled for the children of %s "
		    "(cgroup.subtree_control: \"%.64s\")", base, ctl);
		memcg_destroy(mc);
		return MEMCG_EUNAVAIL;
	}
	snprintf(mc->name, sizeof(mc->name), "%s", name);
	snprintf(mc->path, sizeof(mc->path), "%s/%s", base, name);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)limit);
	if (mkdirat(mc->base_fd, name, 0755) != 0 ||
	    (dfd = openat(mc->base_fd, name, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) < 0 || file_write(dfd, "memory.max", num) != 0 ||
	    file_write(dfd, "memory.oom.group", "1") != 0 ||
	    (file_write(dfd, "memory.swap.max", "0") != 0 &&
	    errno != ENOENT) ||
	    (mc->procs_fd = openat(dfd, "cgroup.procs", O_WRONLY |
	    O_CLOEXEC)) < 0 ||
	    (mc->events_fd = openat(dfd, "memory.events", O_RDONLY |
	    O_CLOEXEC)) < 0) {
		snprintf(why, whylen, "%s: %s", mc->path, strerror(errno));
		if (dfd >= 0)
			close(dfd);
		memcg_destroy(mc);
		return MEMCG_EIO;
	}
	close(dfd);
	return MEMCG_OK;
}

int
memcg_join(const struct memcg *mc)
{
	return write(mc->procs_fd, "0", 1) == 1 ? 0 : -1;
}

long
memcg_oom_kills(const struct memcg *mc)
{
	char buf[1024], *p;

	if (fd_text(mc->events_fd, buf, sizeof(buf)) < 0)
		return -1;
	for (p = buf; p != NULL; p = strchr(p, '\n') != NULL ?
	    strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, "oom_kill ", 9) == 0)
			return strtol(p + 9, NULL, 10);
	return 0;
}

void
memcg_destroy(struct memcg *mc)
{
	if (mc->procs_fd >= 0)
		close(mc->procs_fd);
	if (mc->events_fd >= 0)
		close(mc->events_fd);
	if (mc->base_fd >= 0 && mc->name[0] != '\0')
		(void)unlinkat(mc->base_fd, mc->name, AT_REMOVEDIR);
	if (mc->base_fd >= 0)
		close(mc->base_fd);
	memcg_init(mc);
}
