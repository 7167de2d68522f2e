/*
 * analytics/analytics.h — cdsgate-analytics, the embedded analytics
 * backend the kiosk browser shows: a small HTTP server (libmicrohttpd,
 * driven from our own select loop, no library threads) that serves the
 * perspective front end from a static dir and the mounted, already
 * de-identified datasets from the mount dir (docs/analytics.md).
 *
 * Inside analytics/: main.c (options, listening socket), confine.c
 * (namespace, chroot, privilege drop, seccomp), http.c (request state,
 * bounded bodies, security headers, the event loop), routes.c (the
 * registration table and its handlers), files.c (opening files beneath a
 * directory without `..` or symlinks; content types) and mounts.c (the
 * mount-dir contract: scanning, meta.json).
 *
 * Trust: unprivileged after start-up; parses untrusted HTTP from the
 * browser and the mount dir's meta.json files (written by the custodian
 * daemon, still checked).
 */
#ifndef ANALYTICS_ANALYTICS_H
#define ANALYTICS_ANALYTICS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "common/grant.h"

#define AN_USER			"cdsgate-analytics"
#define AN_MAX_CONNECTIONS	64
#define AN_MAX_EVENT_BODY	4096		/* POST /api/event */
#define AN_MAX_META		(64 * 1024)	/* a meta.json file */
#define AN_MAX_DATASETS		256		/* listed per scan */
#define AN_MAX_NAME		64		/* a dataset directory name */

/* The two directories, held open for the process's life, and the key
 * the sessions' dataset grants are verified with. */
struct an_dirs {
	int	static_fd;	/* the front end (index.html, perspective) */
	int	mount_fd;	/* <mount-dir>/<name>/{data.csv,meta.json} */
	int	scoped;		/* 0: --unscoped, every dataset to anyone */
	uint8_t	grant_key[GRANT_KEY_LEN];
};

/* One request as a handler sees it, and the reply it sets. */
struct an_req {
	const struct an_dirs	*dirs;
	const char		*method;
	const char		*path;
	const char		*param;	/* the rest after a prefix route */
	const char		*body;	/* POST body (body_len bytes, no NUL) or NULL */
	const char		*grant;	/* the Cdsgate-Grant value, or NULL */
	unsigned		 ngrant; /* how many such headers came */
	size_t			 body_len;
	/* the reply */
	unsigned		 status;
	struct MHD_Response	*resp;
	const char		*allow;	/* for 405 */
};

/* ---- http.c ---- */
/* SIGTERM and SIGINT blocked and readable on the returned fd (-1). */
int	an_term_signals(void);
/* Serve on the listening socket until sigfd is readable; exit status. */
int	an_serve(int listen_fd, int sigfd, const struct an_dirs *dirs);
/* Replies (each returns 0): JSON (reference stolen), an open file (fd
 * taken), a short text. */
int	an_reply_json(struct an_req *r, unsigned status, json_t *body);
int	an_reply_fd(struct an_req *r, int fd, off_t size, const char *type);
int	an_reply_error(struct an_req *r, unsigned status, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

/* ---- routes.c ---- */
/* Find the route for r->path and r->method and run it; sets r's reply
 * (404 for no route, 405 with Allow for a method the route lacks). */
void	an_dispatch(struct an_req *r);
/* 1 when a route takes this method and path, with the largest body it
 * accepts in *max_body (0: none); else 0 (the reply will be 404/405 and
 * any body is discarded unread). */
int	an_route_lookup(const char *method, const char *path,
	    size_t *max_body);

/* ---- files.c ---- */
/* Open the regular file at rel beneath dirfd: no `..`, no `.` or hidden
 * components, no symlinks anywhere.  Returns an fd (size in *size) or
 * -1 with errno (ENOENT, EACCES for a refused path). */
int	an_open_beneath(int dirfd, const char *rel, off_t *size);
/* Content-Type from the file name's extension. */
const char	*an_content_type(const char *name);
/* Is s a safe single path component (dataset name)? */
int	an_name_ok(const char *s);

/* ---- mounts.c ---- */
/* {"datasets":[meta + "id"...]} for the complete datasets now mounted
 * whose meta.json names the store's dataset `only` (0: all of them). */
json_t	*an_mounts_list(int mount_fd, int64_t only);
/* The data.csv of the complete dataset `id`: fd, or -1 with errno
 * (EPERM: its meta.json names another store dataset than `only`, which
 * 0 allows all). */
int	an_mounts_open_csv(int mount_fd, const char *id, int64_t only,
	    off_t *size);

/* ---- confine.c ---- */
struct an_confine {
	const char	*static_dir;
	const char	*mount_dir;
	int		 sandbox_debug;
};
/* Open the dirs, then (as root) a private read-only view, chroot and
 * drop to AN_USER; then NO_NEW_PRIVS and the seccomp profile.  Returns
 * 0, or -1 with a message (the caller must not serve). */
int	an_confine(const struct an_confine *c, struct an_dirs *dirs,
	    char *err, size_t errlen);

#endif
