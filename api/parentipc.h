/*
 * api/parentipc.h — the typed protocol between the root parent
 * (`cdsgated serve`, control/parent.c) and its api child.
 *
 * The api asks, the parent spawns: the api never forks a session and the
 * parent never parses HTTP.  Sizes are fixed (common/ipc.h); strings are
 * bounded and read back with ipc_str_get().  The secret crosses this
 * socket once, in SESSION_START, and is never logged by either side.
 *
 * BUMP IPC_VERSION (common/ipc.h: it is the version on the wire of every
 * protocol) whenever a type number, a struct below or an fd rule changes.
 */
#ifndef API_PARENTIPC_H
#define API_PARENTIPC_H

#include <stdint.h>

#include "common/ipc.h"
#include "store/store.h"

enum pipc_type {
	PIPC_SESSION_START = 1,	/* api -> parent: start one */
	PIPC_SESSION_STOP,	/* api -> parent: revoke or expire one */
	PIPC_SESSION_STARTED,	/* parent -> api: it is ready */
	PIPC_SESSION_FAILED,	/* parent -> api: it did not start */
	PIPC_SESSION_ENDED,	/* parent -> api: its supervisor exited */
	PIPC_RECORD_CLOSED,	/* parent -> api: a recording's digest */
	PIPC_RECORD_EXPIRE,	/* parent -> api: may retention remove it? */
	PIPC_RECORD_EXPIRED,	/* api -> parent: audited, remove it (or not) */
	PIPC_NODES,		/* api -> parent: the Slurm runner's nodes */
	PIPC_NODES_DONE,	/* parent -> api: them, or why not */
	PIPC_SESSION_EXTEND,	/* api -> parent: a session's new expiry */
	PIPC_RECORD_CHAINED,	/* api -> parent: RECORD_CLOSED chained (or
				   not), each answered */
	PIPC_COPY_REMOVED	/* parent -> api: a node removed its own copies
				   of a session's chained evidence */
};

#define PIPC_SECRET_MAX		64
#define PIPC_REASON_MAX		256
#define PIPC_TOKEN_MAX		64

#define PIPC_PG_ROLE_MAX	72	/* "cdsgate_<session>", its NUL */

struct pipc_start {
	char		id[STORE_ID_MAX];
	char		recipient[STORE_ID_MAX];
	int64_t		expires;		/* unix time */
	char		secret[PIPC_SECRET_MAX];	/* never logged */
	uint32_t	memory_limit_mb;	/* at most the config's
						   session_memory_limit_mb */
	int64_t		dataset;		/* the store's id: the one
						   dataset the session's grant
						   names (common/grant.h) */
	char		pg_role[PIPC_PG_ROLE_MAX];	/* "" = none */
	char		pg_password[PIPC_SECRET_MAX];	/* never logged */
};

struct pipc_stop {
	char		id[STORE_ID_MAX];
	char		reason[PIPC_REASON_MAX];
};

struct pipc_started {
	char		id[STORE_ID_MAX];
	uint32_t	port;
	char		ws_token[PIPC_TOKEN_MAX];	/* "" = none */
};

struct pipc_failed {
	char		id[STORE_ID_MAX];
	char		reason[PIPC_REASON_MAX];
};

struct pipc_ended {
	char		id[STORE_ID_MAX];
	int32_t		status;		/* the supervisor's exit status */
};

/* A file beside a recording whose digest goes to the chain with it: the
 * network log, the capture.  file "" when there is none. */
struct pipc_companion {
	char		file[STORE_PATH_MAX];
	char		sha256[72];		/* 64 hex + NUL, or "" */
};

/* RECORD_CLOSED (end: ended, revoked, disk_full, failed) and
 * RECORD_EXPIRE (end: why it goes: age, size). */
struct pipc_record {
	char		id[STORE_ID_MAX];	/* the session */
	char		file[STORE_PATH_MAX];
	char		sha256[72];		/* 64 hex + NUL */
	uint64_t	size;
	uint64_t	frames;
	uint64_t	duration_us;
	int32_t		truncated;
	char		end[32];
	struct pipc_companion net;	/* <name>.network.jsonl */
	struct pipc_companion cap;	/* <name>.pcapng */
};

/* RECORD_EXPIRED (ok 1: audited, remove it; 0: keep) and
 * RECORD_CHAINED (ok 1: record_closed is in the chain; 0: it is not). */
struct pipc_expired {
	char		file[STORE_PATH_MAX];
	int32_t		ok;
};

/* COPY_REMOVED: what a node removed of its own copies of session id's
 * evidence, each the digest of the chained control copy ("" not
 * removed): the recording, the network log, the capture. */
struct pipc_copy_removed {
	char		id[STORE_ID_MAX];
	char		node[64];
	char		sha256[3][72];
};

struct pipc_extend {
	char		id[STORE_ID_MAX];
	int64_t		expires;		/* unix time */
};

struct pipc_nodes {
	int32_t		unused;
};

#define PIPC_NODES_TEXT_MAX	4096

/* One line a node: "NAME STATE MEMORY_MB FREE_MB SESSIONS" (sinfo's
 * view and the parent's job table); ok 0: text is why not. */
struct pipc_nodes_done {
	int32_t		ok;
	char		text[PIPC_NODES_TEXT_MAX];
};

extern const struct ipc_proto	pipc_proto;

#endif
