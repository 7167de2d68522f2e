/*
 * api/api.h — the admin API: custodians and auditors talk to cdsgate
 * through HTTP+JSON on a UNIX socket, authorised by the peer's
 * credentials (SO_PEERCRED / SO_PEERGROUPS), never by anything the
 * client says about itself.
 *
 * The api process is unprivileged and single-threaded: libmicrohttpd is
 * driven from its own poll loop (no library threads, so a seccomp filter
 * can be loaded before it starts).  It owns the state store.
 *
 * Inside api/: http.c (server, request bodies, replies), route.c (the
 * registration table and dispatch), field.c (typed JSON field checks),
 * body.c (each route's body into a struct, before any store action),
 * one file per resource (recipients.c, datasets.c, health.c), and
 * serve.c (the `cdsgated api` command: socket, privilege drop).
 */
#ifndef API_API_H
#define API_API_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include <jansson.h>

#include "audit/keyholder.h"
#include "store/hours.h"
#include "store/store.h"

#define API_MAX_BODY		(1024 * 1024)	/* bytes; more => 413 */
#define API_MAX_UPLOAD		((uint64_t)4 << 30)	/* one raw file */
#define API_MAX_PATH		256
#define API_MAX_PARAMS		2		/* {x} segments per route */
#define API_MAX_CONNECTIONS	64
#define API_MAX_PER_IP		16	/* TCP: one address's share */

enum api_role {
	API_ROLE_NONE,		/* connected, but no cdsgate group: 403 */
	API_ROLE_AUDITOR,	/* read everything, change nothing */
	API_ROLE_CUSTODIAN	/* everything (root is a custodian) */
};

struct gaterunner;
struct pgrunner;

struct api_config {
	int		 listen_fd;	/* bound, listening AF_UNIX socket */
	const char	*listen_desc;	/* socket path, for messages */
	const char	*store_path;
	gid_t		 custodian_gid;	/* (gid_t)-1: nobody but root */
	gid_t		 auditor_gid;	/* (gid_t)-1: no auditors */
	struct keyholder *audit;	/* every change is recorded there */
	const char	*state_dir;	/* spool/ (uploads), released/ */
	const char	*mount_dir;	/* the embedded backend reads it */
	const char	*cdsgate;	/* the CLI that runs the gate */
	int		 parent_fd;	/* IPC to `cdsgated serve`; -1: none
					   (no sessions) */
	unsigned long	 expires_default, expires_max;	/* sessions, s */
	unsigned long	 memory_limit_max;	/* sessions, MiB */
	const char	*session_address;	/* where sessions listen */
	int		 session_tls;	/* VeNCrypt credentials: longer secret */
	const char	*front_door;	/* "ADDR:PORT" every session is reached
					   through, or NULL: its own port */
	struct gaterunner *gate;	/* runs it (the api may not exec) */
	const char	*mount_backend;	/* default: "embedded"|"postgres" */
	struct pgrunner	*pg;		/* the PostgreSQL mounter, or NULL */
	const struct api_tcp *tcp;	/* the TLS listener, or NULL */
};

/* What a handler gets: one request, already authorised. */
struct api_req {
	struct store	*store;
	struct keyholder *audit;
	const struct api_config *cfg;
	const char	*method;
	const char	*path;
	char		 params[API_MAX_PARAMS][STORE_ID_MAX];
	json_t		*body;		/* parsed JSON object or NULL */
	pid_t		 peer_pid;
	uid_t		 peer_uid;
	const char	*token_name;	/* TCP: the bearer token's NAME */
	enum api_role	 role;
	/* the reply, set by api_reply/api_error */
	unsigned	 status;
	char		*reply;		/* malloc'd body */
	const char	*reply_type;
	int		 suspended;	/* api_suspend(): answered later */
};

/* `cdsgated api --socket PATH --store FILE ...` (api/serve.c). */
int	api_serve_cmd(int argc, char **argv);

/* What the api process is started with (api/serve.c). */
struct api_serve_args {
	const char	*socket_path, *store_path;
	const char	*custodian_group, *auditor_group;
	const char	*audit_log, *audit_key;
	const char	*state_dir, *mount_dir, *cdsgate;
	int		 listen_fd;	/* from api_bind() */
	int		 parent_fd;	/* -1: standalone `cdsgated api` */
	pid_t		 parent_pid;	/* the parent that forked us; 0: none */
	const char	*sessiond_path;	/* serve --sessiond: connect there */
	unsigned long	 expires_default, expires_max;
	unsigned long	 memory_limit_max;	/* the default too */
	const char	*session_address;
	int		 session_tls;
	const char	*front_door;		/* NULL: sessions' own ports */
	const char	*mount_backend;		/* NULL: "embedded" */
	const char	*pg_conninfo;		/* NULL: no PostgreSQL */
	const char	*pg_reader_role;
	const char	*tcp_listen;	/* "ADDR:PORT", or NULL: UNIX only */
	const char	*tls_cert, *tls_key, *tokens;	/* with tcp_listen */
	int		 tcp_fd;	/* from api_tcp_bind(), or -1 */
};
/* Bind the API's UNIX socket (root, before anything else); fd or -1. */
int	api_bind(const char *path);
/*
 * The optional TCP listener (api/tcp.c): TLS only, bearer tokens only.
 * The tokens file holds "ROLE NAME SHA256-HEX" lines, never tokens.
 */
#define API_TOKENS_MAX		256
struct api_token {
	enum api_role	 role;
	char		 name[STORE_ID_MAX];
	uint8_t		 hash[32];	/* SHA-256 of the token */
};
struct api_tokens {
	size_t		 n;
	struct api_token t[API_TOKENS_MAX];
};
struct api_tcp {
	int		 fd;		/* listening, from api_tcp_bind() */
	const char	*desc;		/* "ADDR:PORT" */
	char		*cert_pem, *key_pem;
	struct api_tokens tokens;
};
/* Root, before the fork: check a's TCP options and bind (-1: refuse). */
int	api_tcp_prepare(struct api_serve_args *a);
/* Bind "ADDR:PORT" (root, before the drop); fd or -1 after saying why. */
int	api_tcp_bind(const char *spec);
/* Read cert, key and tokens (before the drop and filter); 0 or -1. */
int	api_tcp_load(const struct api_serve_args *a, struct api_tcp *t,
	    char *err, size_t errlen);
void	api_tcp_free(struct api_tcp *t);
char	*api_pem_read(const char *path, char *err, size_t errlen);
/* Parse a tokens file's text (path names it in "path:line: why"). */
int	api_tokens_parse(const char *path, const void *text, size_t len,
	    struct api_tokens *k, char *err, size_t errlen);
/* The token line matching "Bearer <token>", or NULL. */
const struct api_token *api_token_check(const struct api_tokens *k,
	    const char *auth);

/* Key holder, privilege drop, api_main(): the api process's life. */
int	api_serve_bound(const struct api_serve_args *a);

/* Run the API until SIGTERM/SIGINT; returns the process exit status. */
int	api_main(const struct api_config *cfg);
/* Load the api's seccomp profile (api/confine.c); -1: do not go on. */
int	api_confine(void);

/* Set the reply: status + JSON (stolen reference).  Returns 0. */
int	api_reply(struct api_req *r, unsigned status, json_t *body);
/* {"error": {"status", "code", "message"}}.  Returns 0. */
int	api_error(struct api_req *r, unsigned status, const char *code,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A plain-text reply (metrics).  Takes ownership of text. */
int	api_reply_text(struct api_req *r, unsigned status, char *text,
	    const char *type);
/* The 4xx/5xx reply for a store status (404, 409, 422, 507 ...). */
int	api_store_error(struct api_req *r, int store_status,
	    const char *what);
/* The same status mapping with the whole message given. */
int	api_store_error_msg(struct api_req *r, int store_status,
	    const char *msg);

/*
 * Record a change in the audit log *before* it is made (data stolen),
 * with the peer's uid and pid.  If that fails the change must not be
 * made: a 503 reply is set, -1 returned, and the API accepts no further
 * changes (api_read_only()).  When the change is then refused by the
 * store, api_audit_refused() records "<type>.refused" with the reason.
 */
int	api_audit(struct api_req *r, const char *type, json_t *data);
void	api_audit_refused(struct api_req *r, const char *type, int status);
/* The same with the reason in words the custodian can act on. */
void	api_audit_refused_why(struct api_req *r, const char *type,
	    const char *why);
int	api_read_only(void);
/* The audit log failed outside a request (a recording's digest): no
 * further changes, as after a failed api_audit(). */
void	api_set_read_only(void);

/*
 * A handler that must wait (for the gate runner, for the parent) calls
 * api_suspend() and returns; the connection then waits outside the event
 * loop.  Whoever finishes the work sets the reply (api_reply/api_error)
 * and calls api_resume().  The request stays valid until then, even if
 * the client went away: only the sending of the reply is lost.
 */
void	api_suspend(struct api_req *r);
void	api_resume(struct api_req *r);

/* The route table, one "METHOD PATTERN ROLE BODY" a line, for tests
 * that must cover every route (`cdsgated api --list-routes`). */
void	api_routes_print(FILE *f);
/* Dispatch one request through the route table (api/route.c). */
void	api_dispatch(struct api_req *r);
/* Count a finished request in the metrics. */
void	api_count_reply(unsigned status);
unsigned long	api_replies(unsigned status_class);	/* 2, 4, 5 */

/*
 * Typed fields of the request body (api/field.c).  Each returns 0, or
 * sets a 400/422 reply naming the field and returns -1.  `required` = 0
 * leaves *out unchanged when the field is absent.
 */
int	field_id(struct api_req *r, const char *key, int required, char *out);
int	field_string(struct api_req *r, const char *key, int required,
	    size_t maxlen, char *out, size_t outlen);
int	field_uint(struct api_req *r, const char *key, int required,
	    unsigned long min, unsigned long max, unsigned long *out);
/* "allowed_hours" (HOURS_TEXT_MAX) and "tz" (HOURS_TZ_MAX) parsed and
 * checked (store/hours.h); absent ones leave the buffers unchanged. */
int	field_hours(struct api_req *r, int required, char *hours, char *tz);
/* Refuse keys not in the NULL-terminated list (typos must not pass). */
int	field_only(struct api_req *r, const char *const *allowed);

/* The collected body into r->body: nothing (len 0), or a JSON object
 * (duplicate keys refused); else a 400 naming line and column, -1. */
int	api_body_load(struct api_req *r, const void *data, size_t len);

/*
 * The bodies of the routes that take one, parsed into structs
 * (api/body.c): pure functions of r->body and r->cfg's limits, each 0
 * or -1 with the 4xx reply set.  The handlers act on what they return.
 */
struct body_hours {
	int	 has_hours, has_tz;	/* which the body gave */
	char	 hours[HOURS_TEXT_MAX], tz[HOURS_TZ_MAX];
};
struct body_session {
	char		 recipient[STORE_ID_MAX];
	int64_t		 dataset;
	unsigned long	 expires_in;	/* s; default cfg->expires_default */
	unsigned long	 memory_limit_mb;	/* default: the ceiling */
};
struct body_import {
	char	 name[64];	/* [a-z][a-z0-9_]{0,39} */
	json_t	*job;		/* what the gate runs, checked */
	json_t	*sources;	/* the custodian's names, or NULL */
};
int	body_recipient_add(struct api_req *r, struct store_recipient *rc);
int	body_recipient_hours(struct api_req *r, struct body_hours *b);
int	body_session_create(struct api_req *r, struct body_session *b);
int	body_session_extend(struct api_req *r, unsigned long *expires_in);
int	body_dataset_import(struct api_req *r, struct body_import *b);
void	body_import_clear(struct body_import *b);	/* then reusable */
int	body_dataset_mount(struct api_req *r, char *backend, size_t len);

/* Streamed uploads (api/upload.c). */
struct upload;
struct upload	*upload_begin(const char *spool, char *err, size_t errlen);
void		 upload_write(struct upload *u, const char *data, size_t n);
void		 upload_abort(struct upload *u);		/* NULL: no-op */
int		 upload_end(struct upload *u, const char *spool,
		    struct api_req *r);
/* Does this request stream its body into the spool? (api/route.c) */
int		 api_route_streams(const char *method, const char *path);
/* "<state_dir>/spool" etc. into buf; -1 if too long. */
int		 api_path(char *buf, size_t len, const char *sub,
		    const char *name);

/* The route handlers (one file per resource). */
int	recipients_list(struct api_req *r);
int	recipients_add(struct api_req *r);
int	recipients_show(struct api_req *r);
int	recipients_disable(struct api_req *r);
int	recipients_hours(struct api_req *r);
/* Is the recipient inside its allowed hours now?  1 yes; 0 no, with
 * why ("... Mon-Fri 08:00-18:00 (Europe/Berlin); it is Sat 10:02 CET
 * there"); -1 the recipient could not be read (the store decides). */
int	api_recipient_in_hours(struct store *st, const char *recipient,
	    char *why, size_t whylen);
/* The time allowed hours are judged by (a test hook may move it). */
time_t	api_hours_now(void);
int	datasets_list(struct api_req *r);
int	datasets_show(struct api_req *r);
int	datasets_import(struct api_req *r);
int	datasets_mount(struct api_req *r);
int	datasets_unmount(struct api_req *r);
int	datasets_remove(struct api_req *r);
/* The gate runner's socket is readable: record that import's verdict
 * and answer its request (api/datasets.c). */
void	datasets_gate_input(const struct api_config *cfg, struct store *st);
/* At exit: answer every import still waiting (it stays "importing"; the
 * next start's recovery makes it an error). */
void	datasets_abandon(void);
int	health_show(struct api_req *r);
int	sessions_list(struct api_req *r);
int	sessions_create(struct api_req *r);
int	sessions_show(struct api_req *r);
int	sessions_recording(struct api_req *r);
int	sessions_revoke(struct api_req *r);
int	sessions_extend(struct api_req *r);
/* The parent's messages (api/sessions.c): -1 when it is gone or broke
 * the protocol (the api then exits: no parent, no sessions). */
int	api_parent_input(const struct api_config *cfg, struct store *st);
/* At exit: what the parent already sent (the ends of the sessions it
 * stopped before stopping us) goes into the store. */
void	api_parent_drain(const struct api_config *cfg, struct store *st);
/* Once a second or so: expire sessions and ask the parent to stop them. */
void	api_sessions_tick(const struct api_config *cfg, struct store *st);
/* At exit: answer every session start still waiting for the parent. */
void	sessions_abandon(void);
/* api/nodes.c: GET /v1/nodes, its answer from the parent */
int	nodes_list(struct api_req *r);
struct ipc_msg;
int	api_nodes_done(void *ctx, struct ipc_msg *m);
void	nodes_abandon(void);
int	metrics_show(struct api_req *r);

#endif
