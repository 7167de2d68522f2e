/*
 * supervisor/browser.h — the session's kiosk Chromium: its command line,
 * its environment, and its jail (docs/jail.md): a network namespace
 * whose only reachable address:port is the backend (through
 * gateway/forward.c), a pid namespace, and a root file system built
 * from an allow-list (system directories read-only, tmpfs /tmp and
 * /dev/shm, its private home, the session's managed policy, this
 * session's X socket and nothing else).
 *
 * Chromium runs straight from /usr/lib/chromium (the /usr/bin wrapper
 * adds flags from /etc/chromium.d) as the browser user, with its own
 * sandbox intact (never switched off; measured: as an unprivileged uid
 * the namespace sandbox works here).  The supervisor builds everything
 * (browser_cmd_build) before fork(); the child enters its namespace as
 * root, drops to the browser user and execs.
 */
#ifndef GATEWAY_BROWSER_H
#define GATEWAY_BROWSER_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "sandbox/namespace.h"

#define BROWSER_PATH		"/usr/lib/chromium/chromium"
#define BROWSER_ARGV_MAX	40
#define BROWSER_ENV_MAX		16
#define BROWSER_JAIL_MAX	40

struct browser_params {
	const char	*url;		/* the backend, already validated */
	const char	*display;	/* ":N" */
	const char	*xauthority;	/* the browser user's cookie copy */
	const char	*home;		/* its private dir: HOME, XDG dirs */
	const char	*profile;	/* --user-data-dir */
	const char	*policy_dir;	/* shown as the managed policy dir */
	const char	*jail_dir;	/* root-owned, empty: the jail's root */
	const char	*etc_dir;	/* hosts, resolv.conf for the jail */
	int		 display_num;	/* N of ":N": its socket file only */
	int		 xsock_fd;	/* browser_xsock_open: that socket */
	unsigned	 width, height;
};

struct browser_cmd {
	const char	*argv[BROWSER_ARGV_MAX];
	const char	*envp[BROWSER_ENV_MAX];
	const char	*jail_dir;
	struct ns_mount	 jail[BROWSER_JAIL_MAX];
	size_t		 njail;
	int		 xsock_fd;	/* pinned by the supervisor */
	size_t		 xsock_entry;	/* its jail[] entry (NS_TREE) */
	char		 xtree[16];	/* that entry's src: the tree's fd */
	char		 buf[8192];	/* the strings argv/envp point at */
};

/* The backend as the jail sees it (supervisor side). */
struct browser_net {
	struct sockaddr_storage addr;	/* what the forwarder connects to */
	socklen_t	 addrlen;
	char		 desc[80];	/* "addr:port" */
	int		 netns_fd;	/* the jail's network namespace */
	int		 listen_fd;	/* listening there on addr */
};

/* Fill cmd from p.  0, or -1 if the strings do not fit. */
int	browser_cmd_build(const struct browser_params *p,
	    struct browser_cmd *cmd);

/*
 * Supervisor, once Xvfb is ready: an O_PATH fd of its socket file dir/XN
 * (the session's private X11-unix, supervisor/xvfb.h), checked to be a
 * socket owned by owner.  Each browser start copies this very inode's
 * mount into the jail (ns_tree_clone), so the jail gets our Xvfb's
 * socket or, if the file was replaced (the directory belongs to the
 * worker's user, shared by all sessions), nothing: never another
 * server's.  The fd, or -1 with errno.
 */
int	browser_xsock_open(const char *dir, int display, uid_t owner);

/* Supervisor: create CHROMIUM_POLICY_DIR on the host (root, 0755) if
 * missing, so the child has a mount point.  0 or -1 with errno. */
int	browser_host_prepare(void);

/*
 * Supervisor: resolve the backend URL's host (a name once, here, with
 * the host's resolver: the jail has none), make the jail's network
 * namespace and the listener in it (sandbox/namespace.c), and write
 * etc_dir/hosts (localhost and, for a name, name -> address) and an
 * empty etc_dir/resolv.conf, which the jail sees in /etc.
 * 0, or -1 with a message; *stuck as for ns_net_create.
 */
int	browser_net_setup(const char *url, const char *etc_dir,
	    struct browser_net *n, int *stuck, char *err, size_t errlen);

/*
 * In the child (pid 1 of a new pid namespace), still root: join the
 * jail's network namespace, a private mount namespace, the jail's root
 * (cmd->jail) built on cmd->jail_dir and pivoted into.  0, or -1 with
 * errno and *what (a static message).
 */
int	browser_enter_jail(struct browser_cmd *cmd, int netns_fd,
	    const char **what);

/* In the child, unprivileged: 0 if the managed policy file is readable
 * (through CHROMIUM_POLICY_DIR), else -1 with errno. */
int	browser_policy_readable(void);

/* In the child, unprivileged: exec.  Returns only on failure. */
int	browser_exec(const struct browser_cmd *cmd);

/* Remove Chromium's profile lock (Singleton*) left by a browser that
 * died, so the next one starts; profile_dirfd is the profile dir. */
void	browser_clear_locks(int profile_dirfd);

#endif
