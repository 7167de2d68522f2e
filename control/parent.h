/*
 * control/parent.h — `cdsgated serve`: the root parent.  It does only
 * config, sockets, spawning and reaping: it binds the API socket, forks
 * the api child (api/serve.c's api_serve_bound) and, when the api asks
 * over api/parentipc.h, one session supervisor (supervisor/session.c's
 * session_run) per session.  It parses no client input.
 *
 * parent.c: the command, the api child, signals, the loop.
 * parent-session.c: the session table, spawning and stopping.
 * sessiond.c: `cdsgated sessiond`, the same table and loop as a root
 * helper that the api reaches over a socket (the split systemd units).
 */
#ifndef GATEWAY_PARENT_H
#define GATEWAY_PARENT_H

#include <signal.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "api/parentipc.h"
#include "gateway/dooripc.h"
#include "policy/config.h"

#define PARENT_MAX_SESSIONS	256
#define PARENT_READY_MS		60000	/* start -> "ready" line */
#define PARENT_STOP_MS		10000	/* SIGTERM -> SIGKILL at shutdown */
#define PARENT_REVOKE_MS	1500	/* SIGTERM -> SIGKILL on revoke */

struct psession {
	char		id[STORE_ID_MAX];
	pid_t		pid;		/* supervisor; 0 = free slot */
	unsigned	port;
	int		ready_fd;	/* its stdout until "ready"; -1 after */
	char		line[128];	/* what it printed so far */
	size_t		linelen;
	char		ws_token[PIPC_TOKEN_MAX];
	int64_t		deadline_ms;	/* ready by / killed by; 0 = none */
	int		stopping;
	int		started;	/* SESSION_STARTED was sent */
	struct sockaddr_storage upstream;	/* where its worker accepts:
						   the front door relays there
						   (local runner: set at ready
						   from session_address:port
						   when still unset) */
	socklen_t	upstream_len;
};

/* A session the Slurm runner placed as a job (parent-slurm.c).  Its
 * s.pid stays 0: no local process; s.id set = the slot is in use. */
struct pjob {
	struct psession	s;
	int64_t		job;		/* 0 until sbatch answered */
	char		node[64];	/* the node that asked for it */
	struct pipc_start start;	/* until its node has it; wiped */
	int		handed;		/* its node has the spec */
	int64_t		submitted;	/* unix time sbatch was asked */
	char		ev_key[48];	/* its evidence key, from ask to ready */
	struct door_add	door;		/* the front door's entry: recipient,
					   scrypt line, the node session's
					   internal password; wiped at end */
	int		ending;		/* cancelled by parent_slurm_end_all
					   (not revoked): "revoked" is not
					   how it ended */
};

#define PARENT_KEPT_MAX		256	/* recordings retention may not remove */

/* A Slurm session's evidence after its end (parent-slurm.c): may its
 * node remove its own copies?  Only once the control copy is chained. */
enum pcopy_state {
	PCOPY_FREE = 0,
	PCOPY_CLOSING,		/* EV_CLOSE sent, the receiver closes it */
	PCOPY_AWAIT,		/* closed while no api was connected: sent
				   by the next one's parent_record_recover */
	PCOPY_SENT,		/* sealed, RECORD_CLOSED sent to the api */
	PCOPY_CHAINED,		/* RECORD_CHAINED ok: "remove" */
	PCOPY_KEEP		/* not chained: "keep" and why */
};

struct pcopy {
	int		state;		/* enum pcopy_state */
	char		id[STORE_ID_MAX];
	int64_t		job;
	char		node[64];
	char		file[STORE_PATH_MAX];	/* the control copy */
	char		sha256[3][72];	/* recording, network log, capture
					   as chained; "" none */
	char		why[128];	/* PCOPY_KEEP */
};

struct parent {
	struct gw_config	 cfg;
	int			 ipc;		/* to the api */
	int			 sigfd;		/* children close it */
	pid_t			 api_pid;
	int			 listen_fd;	/* sessiond: -1 in serve */
	const char		*sessiond;	/* serve --sessiond PATH */
	uid_t			 peer_uid;	/* sessiond: who may ask */
	struct psession		 s[PARENT_MAX_SESSIONS];
	pid_t			 door_pid;	/* the front door, or -1 */
	int			 door_fd;	/* its socket, or -1 */
	/* retention (parent-record.c) */
	char			 expiring[STORE_PATH_MAX]; /* asked; "" none */
	char			 expiring_id[80];
	char			 kept[PARENT_KEPT_MAX][80]; /* refused ids */
	int			 nkept;
	int			 retention_due;	/* scan at the next tick */
	int64_t			 retention_next_ms;
	/* the Slurm runner (parent-slurm.c); slurm_pid 0: local */
	pid_t			 slurm_pid;
	int			 slurm_fd;
	int64_t			 slurm_poll_ms;	/* next squeue of our jobs */
	int			 slurm_polling;	/* asked, not answered */
	struct pjob		 jobs[PARENT_MAX_SESSIONS];
	pid_t			 ev_pid;	/* the evidence receiver */
	int			 ev_fd;
	struct pcopy		 copies[PARENT_MAX_SESSIONS];	/* ended */
	int			 copy_next;	/* the slot a new one takes */
};

int	parent_serve_cmd(int argc, char **argv);
int	parent_dirs(const struct gw_config *c);
int	parent_signals(sigset_t *old);
int	parent_loop(struct parent *p, int sigfd);
void	parent_helpers_close(struct parent *p);
void	parent_helpers_stop(struct parent *p);

/* node.c: the Slurm runner's compute node */
int	node_cmd(int argc, char **argv);
int	node_job_cmd(int argc, char **argv);

/* sessiond.c */
int	sessiond_cmd(int argc, char **argv);
void	sessiond_accept(struct parent *p);
void	sessiond_peer_lost(struct parent *p, int ipc_rc);

/* parent-session.c */
int64_t	parent_now_ms(void);
int	parent_session_start(struct parent *p, const struct pipc_start *m);
void	parent_session_stop(struct parent *p, const char *id, int revoke);
void	parent_session_ready(struct parent *p, struct psession *ps);
void	parent_session_reaped(struct parent *p, pid_t pid, int status);
void	parent_session_timers(struct parent *p);
/* SIGTERM all, wait up to ms, SIGKILL the rest; reaps them.  The
 * Slurm runner's jobs are cancelled; its helpers stay. */
void	parent_sessions_stop_all(struct parent *p, int ms);
int	parent_sessions_live(const struct parent *p);

/* parent-slurm.c: the Slurm runner's half of the session table */
int	parent_slurm_on(const struct parent *p);
int	parent_slurm_begin(struct parent *p);
int	parent_slurm_fd(const struct parent *p);
int	parent_slurm_dispatch(struct parent *p);
int	parent_slurm_ev_fd(const struct parent *p);
int	parent_slurm_ev_dispatch(struct parent *p);
const char *parent_slurm_start(struct parent *p, const struct pipc_start *m,
	    const char *secret);
int	parent_slurm_stop(struct parent *p, const char *id);
void	parent_slurm_timers(struct parent *p);
int	parent_slurm_live(const struct parent *p);
void	parent_slurm_end_all(struct parent *p, const char *why);
void	parent_slurm_stop_all(struct parent *p);
void	parent_slurm_nodes(struct parent *p);
void	parent_slurm_extend(struct parent *p, const char *id,
	    int64_t expires);
const struct psession *parent_slurm_session(const struct parent *p,
	    const char *id);
/* parent-copies.c: may a node remove its own copies of a session's
 * evidence?  (Answers the nodes' "copies" and "removed".) */
struct sl_node;
void	parent_copy_begin(struct parent *p, const char *id, int64_t job,
	    const char *node, int receiving);
void	parent_copy_sent(struct parent *p, const char *id, int rc,
	    const struct pipc_record *m);
void	parent_copy_recovered(struct parent *p, const struct pipc_record *m);
int	parent_copies_closing(const struct parent *p);
void	parent_copy_chained(struct parent *p, const char *file, int ok);
int	parent_copy_ask(struct parent *p, const struct sl_node *n,
	    char *text, size_t len);
int	parent_copy_removed(struct parent *p, const struct sl_node *n,
	    char *text, size_t len);
/* parent-door.c: the front door (front_door_listen; a no-op without) */
int	parent_door_start(struct parent *p, int sigfd);
void	parent_door_upstream(const struct parent *p, struct psession *ps);
void	parent_door_add(struct parent *p, const struct psession *ps);
int	parent_door_entry(struct door_add *m, const char *id,
	    const char *recipient, const char *secret);
void	parent_door_send(struct parent *p, const struct door_add *e,
	    const struct psession *ps);
void	parent_door_remove(struct parent *p, const char *id);
void	parent_door_stop(struct parent *p);

/* parent-record.c */
int	parent_record_dir(const struct gw_config *c);
int	parent_record_room(const struct parent *p, char *why, size_t len);
/* 0 when its digest went to the api (*sent, if not NULL, says what);
 * 1 when no api took it (parent_record_recover sends it); -1 when there
 * is nothing to chain. */
int	parent_record_chain(struct parent *p, const char *id,
	    const char *end, struct pipc_record *sent);
void	parent_record_closed(struct parent *p, const struct psession *ps,
	    int status);
void	parent_record_recover(struct parent *p);
void	parent_retention(struct parent *p);
int	parent_record_expired(struct parent *p, const struct pipc_expired *m);

#endif
