/*
 * api/route.c — the admin API's routes as one registration table, and
 * the dispatch: match the path, check the method (405 with the methods
 * that would do), check the role (403), then call the handler.
 *
 * Trust: the path is untrusted; it is matched segment by segment against
 * the table and {x} captures must be valid store ids.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "api/api.h"

enum {
	BODY_NONE,		/* a body is a 400 */
	BODY_JSON,		/* a JSON object is required */
	BODY_STREAM,		/* streamed by api/http.c into the spool */
	BODY_OPTIONAL		/* a JSON object, or nothing */
};

struct route {
	const char	*method;
	const char	*pattern;	/* "/v1/recipients/{id}" */
	enum api_role	 role;		/* least role allowed */
	int		(*handler)(struct api_req *);
	int		 body;		/* BODY_* */
};

static const struct route routes[] = {
	{ "GET",  "/v1/health", API_ROLE_AUDITOR, health_show, 0 },
	{ "GET",  "/v1/metrics", API_ROLE_AUDITOR, metrics_show, 0 },
	{ "GET",  "/v1/recipients", API_ROLE_AUDITOR, recipients_list, 0 },
	{ "POST", "/v1/recipients", API_ROLE_CUSTODIAN, recipients_add, 1 },
	{ "GET",  "/v1/recipients/{id}", API_ROLE_AUDITOR, recipients_show, 0 },
	{ "POST", "/v1/recipients/{id}/disable", API_ROLE_CUSTODIAN,
	    recipients_disable, 0 },
	{ "POST", "/v1/recipients/{id}/hours", API_ROLE_CUSTODIAN,
	    recipients_hours, 1 },
	{ "GET",  "/v1/datasets", API_ROLE_AUDITOR, datasets_list, 0 },
	{ "GET",  "/v1/datasets/{id}", API_ROLE_AUDITOR, datasets_show, 0 },
	{ "POST", "/v1/datasets", API_ROLE_CUSTODIAN, datasets_import, 1 },
	{ "POST", "/v1/datasets/{id}/mount", API_ROLE_CUSTODIAN,
	    datasets_mount, BODY_OPTIONAL },
	{ "POST", "/v1/datasets/{id}/unmount", API_ROLE_CUSTODIAN,
	    datasets_unmount, 0 },
	{ "POST", "/v1/datasets/{id}/remove", API_ROLE_CUSTODIAN,
	    datasets_remove, 0 },
	{ "GET",  "/v1/sessions", API_ROLE_AUDITOR, sessions_list, 0 },
	{ "POST", "/v1/sessions", API_ROLE_CUSTODIAN, sessions_create, 1 },
	{ "GET",  "/v1/sessions/{id}", API_ROLE_AUDITOR, sessions_show, 0 },
	{ "GET",  "/v1/sessions/{id}/recording", API_ROLE_AUDITOR,
	    sessions_recording, 0 },
	{ "POST", "/v1/sessions/{id}/revoke", API_ROLE_CUSTODIAN,
	    sessions_revoke, 0 },
	{ "POST", "/v1/sessions/{id}/extend", API_ROLE_CUSTODIAN,
	    sessions_extend, 1 },
	/* streamed by api/http.c into the spool; never dispatched here */
	{ "GET",  "/v1/nodes", API_ROLE_AUDITOR, nodes_list, 0 },
	{ "PUT",  "/v1/uploads", API_ROLE_CUSTODIAN, NULL, 2 },
};
#define NROUTES (sizeof(routes) / sizeof(routes[0]))

/* Next "/"-separated segment of *p into seg; 0 at the end of the path. */
static int
next_segment(const char **p, char *seg, size_t len)
{
	size_t n;

	if (**p != '/')
		return 0;
	(*p)++;
	n = strcspn(*p, "/");
	if (n >= len)
		n = len - 1;	/* too long for any route: won't match */
	memcpy(seg, *p, n);
	seg[n] = '\0';
	*p += strcspn(*p, "/");
	return 1;
}

/* Does path match pattern?  Fills r->params with the {x} segments. */
static int
route_match(const char *pattern, const char *path, struct api_req *r)
{
	char ps[API_MAX_PATH], xs[API_MAX_PATH];
	int np = 0, more_p, more_x;

	for (;;) {
		more_p = next_segment(&pattern, ps, sizeof(ps));
		more_x = next_segment(&path, xs, sizeof(xs));
		if (!more_p || !more_x)
			return !more_p && !more_x && *path == '\0';
		if (ps[0] == '{') {
			if (np >= API_MAX_PARAMS || !store_id_valid(xs))
				return 0;
			memcpy(r->params[np++], xs, strlen(xs) + 1);
		} else if (strcmp(ps, xs) != 0)
			return 0;
	}
}

/* "GET, POST" for the routes whose pattern matches, or 0 if none. */
static int
allowed_methods(struct api_req *r, char *allow, size_t len)
{
	size_t i;

	allow[0] = '\0';
	for (i = 0; i < NROUTES; i++)
		if (route_match(routes[i].pattern, r->path, r) &&
		    strstr(allow, routes[i].method) == NULL)
			snprintf(allow + strlen(allow), len - strlen(allow),
			    "%s%s", allow[0] ? ", " : "", routes[i].method);
	return allow[0] != '\0';
}

void
api_routes_print(FILE *f)
{
	static const char *const bodies[] = { "none", "json", "stream",
	    "optional" };
	size_t i;

	for (i = 0; i < NROUTES; i++)
		fprintf(f, "%s %s %s %s\n", routes[i].method,
		    routes[i].pattern, routes[i].role == API_ROLE_CUSTODIAN ?
		    "custodian" : "auditor", bodies[routes[i].body]);
}

int
api_route_streams(const char *method, const char *path)
{
	size_t i;

	for (i = 0; i < NROUTES; i++)
		if (routes[i].body == BODY_STREAM && strcmp(routes[i].method, method) ==
		    0 && strcmp(routes[i].pattern, path) == 0)
			return 1;
	return 0;
}

void
api_dispatch(struct api_req *r)
{
	const struct route *rt = NULL;
	char allow[64];
	size_t i;

	if (strlen(r->path) >= API_MAX_PATH) {
		api_error(r, 414, "uri_too_long", "path over %d bytes",
		    API_MAX_PATH);
		return;
	}
	for (i = 0; i < NROUTES && rt == NULL; i++)
		if (strcmp(routes[i].method, r->method) == 0 &&
		    route_match(routes[i].pattern, r->path, r))
			rt = &routes[i];
	if (rt == NULL) {
		if (allowed_methods(r, allow, sizeof(allow)))
			api_error(r, 405, "method", "%s is not allowed on %s "
			    "(allowed: %s)", r->method, r->path, allow);
		else
			api_error(r, 404, "not_found", "no such route: %s",
			    r->path);
		return;
	}
	if (r->role < rt->role) {
		api_error(r, 403, "forbidden", "%s %s needs the custodian role",
		    r->method, rt->pattern);
		return;
	}
	if (rt->role == API_ROLE_CUSTODIAN && api_read_only()) {
		api_error(r, 503, "audit", "the audit log is unavailable: no "
		    "changes are accepted until the daemon is restarted");
		return;
	}
	if ((rt->body == BODY_JSON || rt->body == BODY_STREAM) &&
	    r->body == NULL) {
		api_error(r, 400, "bad_json", "%s %s needs a JSON object body",
		    r->method, rt->pattern);
		return;
	}
	if (rt->handler == NULL) {	/* a streamed route without a stream */
		api_error(r, 400, "upload", "%s %s streams its body",
		    r->method, rt->pattern);
		return;
	}
	if (rt->body == BODY_NONE && r->body != NULL) {
		api_error(r, 400, "bad_json", "%s %s takes no body",
		    r->method, rt->pattern);
		return;
	}
	rt->handler(r);
}
