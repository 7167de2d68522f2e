/*
 * analytics/files.c — opening a file beneath a directory we hold open,
 * the way the static and data routes need it: component by component
 * with openat(O_NOFOLLOW), so neither `..` nor a symlink (planted in the
 * static dir or the mount dir) can lead outside; and the content types
 * the front end needs (application/wasm for perspective's engine).
 *
 * Trust: takes untrusted paths from URLs; refuses rather than repairs.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analytics/analytics.h"
#include "common/buf.h"

#define MAX_REL		512	/* bytes in a relative path */
#define MAX_DEPTH	8	/* components in a relative path */

/* A component we may open: not empty, not hidden, no odd bytes. */
int
an_name_ok(const char *s)
{
	size_t n;

	if (s == NULL || s[0] == '\0' || s[0] == '.')
		return 0;
	for (n = 0; s[n] != '\0'; n++) {
		if (n >= AN_MAX_NAME * 2)
			return 0;
		if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' &&
		    s[n] <= 'Z') || (s[n] >= '0' && s[n] <= '9') ||
		    s[n] == '-' || s[n] == '_' || s[n] == '.'))
			return 0;
	}
	return 1;
}

/* Step from dirfd into one component; O_NOFOLLOW refuses a symlink. */
static int
step(int dirfd, const char *name, int last)
{
	int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY;

	if (!an_name_ok(name)) {
		errno = EACCES;
		return -1;
	}
	if (!last)
		flags |= O_DIRECTORY;
	else
		flags |= O_NONBLOCK;	/* a FIFO must not hang us */
	return openat(dirfd, name, flags);
}

/* The next component of the path in b (bounded, read through common/buf)
 * into name; *last says whether it ends the path.  -1: too long. */
static int
next_component(struct buf *b, char *name, size_t namelen, int *last)
{
	static uint8_t slash[256];
	size_t n;

	slash['/'] = 1;
	n = buf_span(b, slash, namelen);
	if (n >= namelen || buf_get_bytes(b, name, n) != BUF_OK)
		return -1;
	name[n] = '\0';
	*last = buf_eof(b);
	return *last ? 0 : (buf_skip(b, 1) == BUF_OK ? 0 : -1);
}

/* The final fd must be a regular file; its size into *size. */
static int
regular(int fd, off_t *size)
{
	struct stat st;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EACCES;
		return -1;
	}
	*size = st.st_size;
	return fd;
}

int
an_open_beneath(int dirfd, const char *rel, off_t *size)
{
	char name[AN_MAX_NAME * 2 + 2];
	struct buf b;
	int fd = dirfd, nfd, depth = 0, last = 0, saved;

	buf_init(&b, rel, strlen(rel));
	if (buf_remaining(&b) >= MAX_REL) {
		errno = EACCES;
		return -1;
	}
	while (!last) {
		nfd = ++depth > MAX_DEPTH || next_component(&b, name,
		    sizeof(name), &last) != 0 ? (errno = EACCES, -1) :
		    step(fd, name, last);
		saved = errno;
		if (fd != dirfd)
			close(fd);
		if ((fd = nfd) < 0) {
			errno = saved == ELOOP || saved == ENOTDIR ?
			    EACCES : saved;
			return -1;
		}
	}
	return regular(fd, size);
}

const char *
an_content_type(const char *name)
{
	static const struct { const char *ext, *type; } types[] = {
		{ ".html", "text/html; charset=utf-8" },
		{ ".js", "text/javascript; charset=utf-8" },
		{ ".mjs", "text/javascript; charset=utf-8" },
		{ ".css", "text/css; charset=utf-8" },
		{ ".wasm", "application/wasm" },
		{ ".json", "application/json" },
		{ ".map", "application/json" },
		{ ".svg", "image/svg+xml" },
		{ ".png", "image/png" },
		{ ".woff2", "font/woff2" },
		{ ".csv", "text/csv; charset=utf-8" },
		{ ".txt", "text/plain; charset=utf-8" },
	};
	const char *dot = strrchr(name, '.');
	size_t i;

	if (dot != NULL && strchr(dot, '/') == NULL)
		for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (strcasecmp(dot, types[i].ext) == 0)
				return types[i].type;
	return "application/octet-stream";
}
