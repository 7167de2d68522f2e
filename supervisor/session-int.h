/*
 * supervisor/session-int.h — what the supervisor's files share: the
 * session's state, the roles table (roles.c) and the functions one file
 * calls in another (session.c: the loop and tear-down; roles.c: the
 * table and spawning; setup.c: set-up; start.c: starting the children).
 * Private to supervisor/; the rest of cdsgated uses session.h.
 */
#ifndef CDSGATE_SUPERVISOR_SESSION_INT_H
#define CDSGATE_SUPERVISOR_SESSION_INT_H

#include <limits.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "common/grant.h"
#include "common/privdrop.h"
#include "gateway/forward.h"
#include "gateway/tlsfront.h"
#include "gateway/worker.h"
#include "policy/creds.h"
#include "supervisor/browser.h"
#include "supervisor/evidence.h"
#include "supervisor/membound.h"
#include "supervisor/session.h"

#define RESTART_HISTORY		128	/* >= browser_restart_max bound */
#define LISTEN_BACKLOG		128	/* a connect flood queues, not SYN-drops */


enum role { ROLE_XVFB, ROLE_WORKER, ROLE_FORWARD, ROLE_BROWSER, ROLE_TLS,
    ROLE_COUNT };

struct child {
	pid_t		 pid;		/* -1 = not running */
	pid_t		 pgid;		/* its process group (= first pid) */
	pid_t		 last_pid;	/* after it was reaped */
	long		 started_ms;
	int		 status;	/* last wait status */
};

struct session {
	const struct session_spec *spec;
	char		 id[SESSION_ID_BYTES * 2 + 1];	/* run dir, cgroup */
	/* the session id shown everywhere (session log, recording header,
	 * watermark, file names): serve's (the api's id), else id */
	const char	*sid;
	long		 start_ms;
	int		 sigfd;
	int		 verbose;

	struct privdrop_user worker_user, browser_user;
	char		*password, *ws_token;
	char		*grant_line;	/* "Cdsgate-Grant: V\r\n" or NULL */
	struct grant	 grant;		/* its fields, as logged */
	char		*tls_cert, *tls_key;	/* PEM; the key wiped after
						   the worker started */
	size_t		 tls_cert_len, tls_key_len;
	struct creds	*creds;

	int		 listen_fd;
	char		 listen_desc[80];
	struct evidence	 ev;		/* recording, network log, capture */

	char		 dir[PATH_MAX];		/* <run>/<id>, 0711 root */
	char		 xdir[PATH_MAX];	/* x/, 0700 cdsgate */
	char		 xsockdir[PATH_MAX];	/* x/X11-unix, 1777 root: Xvfb's socket */
	char		 xauth[PATH_MAX];	/* x/Xauthority */
	char		 bdir[PATH_MAX];	/* browser/, 0700 browser */
	char		 bauth[PATH_MAX];	/* browser/Xauthority */
	char		 profile[PATH_MAX];	/* browser/profile */
	char		 policy_dir[PATH_MAX];	/* policy/, 0755 root */
	char		 jail_dir[PATH_MAX];	/* jail/: the jail's root */
	char		 etc_dir[PATH_MAX];	/* etc/: its hosts, resolv.conf */
	int		 dir_made;
	int		 dir_lock;		/* flock'd while we live */

	int		 xvfb_pipe;		/* write end, for the child */
	const char	*violate[ROLE_COUNT];	/* test hook, or NULL */
	int		 display;
	int		 xsock_fd;	/* O_PATH: Xvfb's socket, for the jail */
	char		 display_name[16];
	struct worker_config wcfg;
	int		 tls_ipc[2];	/* [0] the tls process's, [1] the worker's */
	struct tlsfront_config tcfg;
	struct browser_cmd bcmd;
	struct browser_net bnet;	/* the jail's netns and listener */
	struct forward_config fcfg;

	struct child	 child[ROLE_COUNT];
	long		 restarts[RESTART_HISTORY];	/* ms, ring */
	unsigned	 nrestarts;			/* total */
	long		 restart_due_ms;		/* 0 = none */

	struct membound	 mem;		/* the memory bound */

	int		 stopping;
	const char	*stop_reason;
	int		 stop_signal;
	int		 exit_code;
};

/* A row of the process table (roles.c). */
struct role_entry {
	const char	*name;
	const char	*user;
	int		 restart;
	int		(*prepare)(struct session *, const char **);
	void		(*run)(struct session *, int errfd);
	rlim_t		 nofile;	/* X clients / RFB clients */
	rlim_t		 nproc;		/* 0: may not fork at all */
	int		 data_limit;	/* RLIMIT_DATA: twice the limit */
	int		 profile;	/* enum sandbox_profile */
	int		 late_filter;	/* the role loads profile itself */
};
extern const struct role_entry roles[ROLE_COUNT];

/* session.c */
long now_ms(void);
void session_stop(struct session *s, const char *reason, int code);
void handle_signals(struct session *s);

/* roles.c: the table, the child's side of spawning and the supervisor's */
void fatal_namespace(const char *which) __attribute__((noreturn));
int child_spawn(struct session *s, enum role r);

/* setup.c: the session's set-up, before any child */
int session_setup(struct session *s);

/* start.c: starting the children in order */
void tls_ipc_close(struct session *s);
int start_children(struct session *s);

#endif
