/*
 * cli/apiclient.h — the cdsgate CLI's side of the admin API: one JSON
 * request over the daemon's UNIX socket (libcurl), one parsed reply.
 */
#ifndef CLI_APICLIENT_H
#define CLI_APICLIENT_H

#include <stddef.h>

#include <jansson.h>

#define APICLIENT_DEFAULT_SOCKET	"/run/cdsgate/api.sock"

struct apiclient_reply {
	long		 status;	/* HTTP status; 0 = no reply */
	json_t		*json;		/* parsed body, or NULL */
};

/*
 * Send METHOD PATH with an optional JSON body (not stolen) to the API at
 * `socket` (NULL: $CDSGATE_SOCKET or the default).  Returns 0 when a
 * reply came (whatever its status), -1 with a message in err when the
 * daemon could not be reached or the reply was not JSON.
 */
int	apiclient_call(const char *socket, const char *method,
	    const char *path, json_t *body, struct apiclient_reply *out,
	    char *err, size_t errlen);
void	apiclient_reply_free(struct apiclient_reply *r);

/*
 * The usual ending of a CLI command over the API: on 2xx print the
 * reply (JSON with --json, else through `human`) and return 0; on an
 * error reply print "cdsgate: <message>" and return 2 for 4xx, 1 for
 * 5xx; on no reply, print err and return 1.
 */
int	apiclient_finish(int called, struct apiclient_reply *r,
	    const char *err, int json, void (*human)(json_t *));

/*
 * Stream a file to PUT /v1/uploads; sha gets the spool name the daemon
 * returns.  Progress on stderr when it is a terminal.  0, or -1 and a
 * message (the daemon's, for a refusal).
 */
int	apiclient_upload(const char *socket, const char *path, char sha[65],
	    char *err, size_t errlen);

/* dst = prefix + percent-encoded id + suffix; -1 if it does not fit. */
int	apiclient_path(char *dst, size_t len, const char *prefix,
	    const char *id, const char *suffix);

/* The options every API command takes. */
struct apiclient_opts {
	const char	*socket;	/* --socket PATH */
	int		 json;		/* --json */
	const char	*pos[4];	/* positional arguments */
	size_t		 npos;
};

/*
 * Parse argv (after "noun verb") into o.  `extra` is a NULL-terminated
 * list of options that take a value (e.g. "--name"); their values go to
 * vals[i] in the same order.  Returns 0, or prints a usage error and
 * returns EXIT_BAD_INPUT.
 */
int	apiclient_opts(int argc, char **argv, const char *usage,
	    const char *const *extra, const char **vals,
	    struct apiclient_opts *o);

/* A whole "GET PATH, print" command without arguments (list commands). */
int	apiclient_get_cmd(int argc, char **argv, const char *usage,
	    const char *path, void (*human)(json_t *));

/*
 * A whole "METHOD PREFIX<ID>SUFFIX, print" command on one ID without a
 * body (show, disable, revoke...): usage errors for a missing, extra or
 * over-long ID, then as apiclient_finish.
 */
int	apiclient_id_cmd(int argc, char **argv, const char *usage,
	    const char *method, const char *prefix, const char *suffix,
	    void (*human)(json_t *));

#endif
