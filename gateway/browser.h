/*
 * gateway/browser.h — the session's kiosk Chromium: its command line,
 * its environment, and the private mount namespace that shows it the
 * session's managed policy.
 *
 * Chromium runs straight from /usr/lib/chromium (the /usr/bin wrapper
 * adds flags from /etc/chromium.d) as the browser user, with its own
 * sandbox intact: never --no-sandbox (GATEWAY.md: as an unprivileged uid
 * the namespace sandbox works here).  The supervisor builds everything
 * (browser_cmd_build) before fork(); the child enters its namespace as
 * root, drops to the browser user and execs.
 */
#ifndef GATEWAY_BROWSER_H
#define GATEWAY_BROWSER_H

#include <stddef.h>

#define BROWSER_PATH		"/usr/lib/chromium/chromium"
#define BROWSER_ARGV_MAX	40
#define BROWSER_ENV_MAX		16

struct browser_params {
	const char	*url;		/* the backend, already validated */
	const char	*display;	/* ":N" */
	const char	*xauthority;	/* the browser user's cookie copy */
	const char	*home;		/* its private dir: HOME, XDG dirs */
	const char	*profile;	/* --user-data-dir */
	const char	*policy_dir;	/* shown as the managed policy dir */
	unsigned	 width, height;
};

struct browser_cmd {
	const char	*argv[BROWSER_ARGV_MAX];
	const char	*envp[BROWSER_ENV_MAX];
	const char	*policy_dir;
	char		 buf[8192];	/* the strings argv/envp point at */
};

/* Fill cmd from p.  0, or -1 if the strings do not fit. */
int	browser_cmd_build(const struct browser_params *p,
	    struct browser_cmd *cmd);

/* Supervisor: create CHROMIUM_POLICY_DIR on the host (root, 0755) if
 * missing, so the child has a mount point.  0 or -1 with errno. */
int	browser_host_prepare(void);

/*
 * In the child, still root: a private mount namespace (so nothing leaks
 * back to the host), the policy directory bind-mounted read-only over
 * CHROMIUM_POLICY_DIR.  0, or -1 with errno and *what.
 */
int	browser_enter_namespace(const struct browser_cmd *cmd,
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
