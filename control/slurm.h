/*
 * control/slurm.h — the control plane's Slurm helper: the one process
 * that runs Slurm's commands (sbatch, scancel, squeue, scontrol) for the
 * root parent, and the one that takes the nodes' MUNGE-sealed requests
 * on slurm_listen (control/munge.h).
 *
 * The parent forks it (like the api's gate runner) and speaks typed
 * messages to it over a socketpair; it never trusts the parent's strings
 * unbounded, nor a node's words before MUNGE and Slurm agree with them:
 * a node asking for job J's session must be the node Slurm runs J on,
 * and the address it reports ready at must be that node's NodeAddr and
 * the address it connected from.
 */
#ifndef GATEWAY_SLURM_H
#define GATEWAY_SLURM_H

#include <stdint.h>
#include <sys/types.h>

#include "api/parentipc.h"
#include "policy/config.h"

#define SLURM_NODE_MAX		64	/* a NodeName, its NUL */
#define SLURM_ADDR_MAX		64
#define SLURM_TEXT_MAX		2048
#define SLURM_POLL_MS		5000	/* our jobs checked with squeue */

enum slurm_msg {
	SL_SUBMIT = 1,		/* parent -> helper: sbatch one session */
	SL_SUBMITTED,		/* helper -> parent: its job id, or why not */
	SL_CANCEL,		/* parent -> helper: scancel a job */
	SL_NODE,		/* helper -> parent: a node's checked request */
	SL_ANSWER,		/* parent -> helper: the answer to SL_NODE */
	SL_NODES,		/* parent -> helper: sinfo for node list */
	SL_NODES_DONE,		/* helper -> parent: its text */
	SL_POLL,		/* parent -> helper: squeue of our jobs */
	SL_POLL_DONE,		/* helper -> parent: "JOB STATE" lines */
	SL_EXTEND		/* parent -> helper: a job's new time limit */
};

enum slurm_node_what {
	SLN_ASK = 1,
	SLN_READY,
	SLN_ENDED,
	SLN_COPIES,	/* after the end: may it remove its own copies? */
	SLN_REMOVED	/* what of them it removed (status: a mask) */
};

struct sl_submit {
	char		id[STORE_ID_MAX];
	uint32_t	minutes;	/* --time */
	uint32_t	mem_mb;		/* --mem */
};

struct sl_submitted {
	char		id[STORE_ID_MAX];
	int64_t		job;		/* 0: not submitted */
	char		err[PIPC_REASON_MAX];
};

struct sl_cancel {
	int64_t		job;
};

struct sl_extend {
	int64_t		job;
	uint32_t	minutes;	/* from the job's submission */
};

struct sl_node {
	int32_t		what;		/* enum slurm_node_what */
	int64_t		job;
	char		node[SLURM_NODE_MAX];
	char		addr[SLURM_ADDR_MAX];	/* READY: numeric */
	uint32_t	port;			/* READY */
	char		ws_token[PIPC_TOKEN_MAX];	/* READY */
	int32_t		status;		/* ENDED; REMOVED: bit f, file f */
};

struct sl_answer {
	int32_t		ok;
	char		text[SLURM_TEXT_MAX];	/* ASK: the session, or why not */
};

extern const struct ipc_proto	slurm_proto;

/* Fork the helper (root, confined, dies with the parent); it listens
 * on c->slurm_listen.  0, or -1 with err. */
int	slurm_helper_start(const struct gw_config *c, pid_t *pid, int *sock,
	    char *err, size_t errlen);

/* Bind "ADDR:PORT" (numeric) to listen on: the fd, or -1. */
int	slurm_listen_on(const char *addr);
/* In a child of the parent (the helper, the evidence receiver): close
 * all but sock, unblock signals, confine as name; _exit(1) if not. */
void	slurm_child_confine(int sock, const char *name);
void	slurm_child_filter(int lfd, const char *name);

/* The evidence key handed out with a session ("" if none). */
int	slurm_spec_key(const char *text, char *key, size_t len);

/* The text a node gets for SLN_ASK: "key value" lines (secrets inside:
 * the answer is MUNGE-encrypted), and its reader on the node. */
int	slurm_spec_text(const struct pipc_start *m, char *buf, size_t len);
int	slurm_spec_parse(const char *text, struct pipc_start *m);

#endif
