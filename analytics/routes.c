/*
 * analytics/routes.c — what cdsgate-analytics answers, as a table: one
 * entry per route {methods, path, prefix?, body limit, handler}.  No
 * route: 404.  A route without the method: 405 with Allow.
 *
 * Trust: handlers see untrusted paths and bodies; paths reach the file
 * system only through analytics/files.c and analytics/mounts.c.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "analytics/analytics.h"
#include "common/log.h"

#define M_GET	0x01	/* GET and HEAD */
#define M_POST	0x02

struct route {
	unsigned	 methods;
	const char	*path;
	int		 prefix;	/* path is a prefix; the rest: param */
	size_t		 max_body;
	int		(*handler)(struct an_req *);
};

static int	page_index(struct an_req *);
static int	static_file(struct an_req *);
static int	datasets_list(struct an_req *);
static int	dataset_csv(struct an_req *);
static int	event_post(struct an_req *);

static const struct route routes[] = {
	{ M_GET,  "/",			0, 0, page_index },
	{ M_GET,  "/static/",		1, 0, static_file },
	{ M_GET,  "/api/datasets",	0, 0, datasets_list },
	{ M_GET,  "/data/",		1, 0, dataset_csv },
	{ M_POST, "/api/event",		0, AN_MAX_EVENT_BODY, event_post },
};

/* The method's bit; 0 for methods no route takes. */
static unsigned
method_bit(const char *m)
{
	if (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0)
		return M_GET;
	if (strcmp(m, "POST") == 0)
		return M_POST;
	return 0;
}

/* The route whose path matches (any method), or NULL. */
static const struct route *
route_find(const char *path)
{
	size_t i, n;

	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		n = strlen(routes[i].path);
		if (routes[i].prefix ? strncmp(path, routes[i].path, n) == 0 :
		    strcmp(path, routes[i].path) == 0)
			return &routes[i];
	}
	return NULL;
}

int
an_route_lookup(const char *method, const char *path, size_t *max_body)
{
	const struct route *rt = route_find(path);

	*max_body = 0;
	if (rt == NULL || !(rt->methods & method_bit(method)))
		return 0;
	*max_body = rt->max_body;
	return 1;
}

void
an_dispatch(struct an_req *r)
{
	const struct route *rt = route_find(r->path);
	unsigned m = method_bit(r->method);

	if (m == 0 || (rt != NULL && !(rt->methods & m))) {
		r->allow = rt != NULL && (rt->methods & M_POST) ? "POST" :
		    "GET, HEAD";
		an_reply_error(r, 405, "method not allowed");
		return;
	}
	if (rt == NULL) {
		an_reply_error(r, 404, "no such page");
		return;
	}
	r->param = r->path + (rt->prefix ? strlen(rt->path) : 0);
	rt->handler(r);
}

/* Reply with a file beneath the static dir (404 / 403 otherwise). */
static int
send_static(struct an_req *r, const char *rel)
{
	off_t size;
	int fd;

	if ((fd = an_open_beneath(r->dirs->static_fd, rel, &size)) < 0)
		return an_reply_error(r, errno == EACCES ? 403 : 404,
		    errno == EACCES ? "refused path" : "no such file");
	return an_reply_fd(r, fd, size, an_content_type(rel));
}

static int
page_index(struct an_req *r)
{
	return send_static(r, "index.html");
}

static int
static_file(struct an_req *r)
{
	return send_static(r, r->param);
}

/*
 * The session behind a data request: its grant, verified.  Unscoped:
 * g->dataset 0 (every dataset).  Else exactly one Cdsgate-Grant header
 * (the forwarder's) whose MAC is ours and which has not expired; any
 * other request gets 403, logged.  0 to go on, -1 when replied.
 */
static int
request_grant(struct an_req *r, struct grant *g)
{
	int st = GRANT_EMALFORMED;

	memset(g, 0, sizeof(*g));
	if (!r->dirs->scoped)
		return 0;
	if (r->ngrant == 1 && (st = grant_verify(r->dirs->grant_key, r->grant,
	    strlen(r->grant), time(NULL), g)) == GRANT_OK)
		return 0;
	/* the method and path are the client's: the logger escapes them */
	log_warnx("refused %.15s %.200s: %s", r->method, r->path,
	    r->ngrant == 0 ?
	    "no " GRANT_HEADER " header" : r->ngrant > 1 ? "more than one "
	    GRANT_HEADER " header" : grant_strerror(st));
	an_reply_error(r, 403, "no valid dataset grant for this session");
	return -1;
}

static int
datasets_list(struct an_req *r)
{
	struct grant g;
	json_t *list;

	if (request_grant(r, &g) != 0)
		return 0;
	if ((list = an_mounts_list(r->dirs->mount_fd, g.dataset)) == NULL)
		return an_reply_error(r, 503, "the mount dir cannot be read");
	return an_reply_json(r, 200, list);
}

static int
dataset_csv(struct an_req *r)
{
	struct grant g;
	off_t size;
	int fd;

	if (request_grant(r, &g) != 0)
		return 0;
	fd = an_mounts_open_csv(r->dirs->mount_fd, r->param, g.dataset, &size);
	if (fd < 0 && errno == EPERM) {
		log_warnx("refused %s /data/%.64s: session %s is granted dataset "
		    "%lld only", r->method, r->param, g.session,
		    (long long)g.dataset);
		return an_reply_error(r, 403, "this session may not open "
		    "that dataset");
	}
	if (fd < 0)
		return an_reply_error(r, errno == EACCES ? 403 : 404,
		    "no such dataset");
	if (r->dirs->scoped)
		log_info("dataset_open session=%s dataset=%lld dir=%.64s "
		    "bytes=%lld method=%s", g.session, (long long)g.dataset,
		    r->param, (long long)size, r->method);
	return an_reply_fd(r, fd, size, "text/csv; charset=utf-8");
}

/* The front end reports milestones (a dataset shown, and how fast);
 * logged as one line with only known, bounded fields. */
static int
event_post(struct an_req *r)
{
	json_t *ev = r->body != NULL ? json_loadb(r->body, r->body_len,
	    JSON_REJECT_DUPLICATES, NULL) : NULL;
	const char *what = json_string_value(json_object_get(ev, "event"));
	const char *id = json_string_value(json_object_get(ev, "dataset"));
	json_t *ms = json_object_get(ev, "ms"), *rows;

	rows = json_object_get(ev, "rows");
	if (!json_is_object(ev) || what == NULL || !an_name_ok(what) ||
	    (id != NULL && !an_name_ok(id)) || (ms != NULL &&
	    !json_is_number(ms)) || (rows != NULL && !json_is_integer(rows))) {
		json_decref(ev);
		return an_reply_error(r, 400, "expected {\"event\": name, "
		    "\"dataset\": id, \"ms\": number, \"rows\": integer}");
	}
	log_info("event %.32s dataset=%.64s rows=%lld ms=%.0f", what,
	    id != NULL ? id : "-", rows != NULL ?
	    (long long)json_integer_value(rows) : -1LL,
	    ms != NULL ? json_number_value(ms) : -1.0);
	json_decref(ev);
	return an_reply_json(r, 200, json_pack("{s:b}", "ok", 1));
}
