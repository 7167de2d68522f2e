/*
 * gateway/browser.c — the kiosk browser's argv, environment and mount
 * namespace.
 *
 * Supervisor side (root): builds the command and prepares the host's
 * policy mount point.  Child side: enters a private mount namespace as
 * root (the only privileged step), then — after the drop to the browser
 * user in gateway/session.c — execs Chromium.  No untrusted input: the
 * URL was validated by policy/spec.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gateway/browser.h"
#include "policy/chromium.h"

/*
 * Flags that are the same for every session.  Why each:
 * kiosk:              full screen, no tabs, no address bar
 * no-first-run, no-default-browser-check: no dialogs at start
 * disable-background-networking, -component-update, -sync,
 *   -default-apps, -extensions, -breakpad: no traffic to anyone but the
 *   backend, nothing installed, no crash uploads
 * noerrdialogs, hide-crash-restore-bubble: a restarted browser shows the
 *   app, not a "restore pages?" bubble
 * disable-features=Translate,MediaRouter: no page text to a translate
 *   service; no mDNS/SSDP discovery of cast devices
 * password-store=basic: no keyring prompt (nothing is stored anyway)
 * deny-permission-prompts: permission requests are refused silently
 * ozone-platform=x11: talk to our Xvfb, never look for Wayland
 * force-device-scale-factor=1: pixels on screen = pixels sent
 * disable-print-preview: printing is off by policy; no preview either
 * Never --no-sandbox.
 */
static const char *const browser_fixed_flags[] = {
	"--kiosk",
	"--no-first-run",
	"--no-default-browser-check",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--disable-default-apps",
	"--disable-extensions",
	"--disable-breakpad",
	"--noerrdialogs",
	"--hide-crash-restore-bubble",
	"--disable-features=Translate,MediaRouter",
	"--password-store=basic",
	"--deny-permission-prompts",
	"--ozone-platform=x11",
	"--force-device-scale-factor=1",
	"--disable-print-preview",
	NULL
};

/* Append a formatted string to cmd->buf; returns it or NULL if full. */
static const char *
cmd_str(struct browser_cmd *cmd, size_t *used, const char *fmt, ...)
{
	va_list ap;
	char *p = cmd->buf + *used;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(p, sizeof(cmd->buf) - *used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(cmd->buf) - *used)
		return NULL;
	*used += (size_t)n + 1;
	return p;
}

int
browser_cmd_build(const struct browser_params *p, struct browser_cmd *cmd)
{
	const char *const *f;
	const char *tz = getenv("TZ");
	size_t a = 0, e = 0, used = 0, i;

	memset(cmd, 0, sizeof(*cmd));
	cmd->policy_dir = p->policy_dir;
	cmd->argv[a++] = BROWSER_PATH;
	for (f = browser_fixed_flags; *f != NULL; f++)
		cmd->argv[a++] = *f;
	cmd->argv[a++] = cmd_str(cmd, &used, "--user-data-dir=%s",
	    p->profile);
	/* Without a window manager --kiosk alone does not fill the
	   screen (GATEWAY.md). */
	cmd->argv[a++] = "--window-position=0,0";
	cmd->argv[a++] = cmd_str(cmd, &used, "--window-size=%u,%u",
	    p->width, p->height);
	cmd->argv[a++] = p->url;
	cmd->argv[a] = NULL;

	/* A clean environment: only what Chromium needs to find X and its
	   private home.  DBUS_SESSION_BUS_ADDRESS set to something unusable
	   stops libdbus from auto-launching a bus daemon (a process that
	   would outlive the browser). */
	cmd->envp[e++] = "PATH=/usr/bin:/bin";
	cmd->envp[e++] = "LANG=C.UTF-8";
	cmd->envp[e++] = "DBUS_SESSION_BUS_ADDRESS=disabled:";
	cmd->envp[e++] = cmd_str(cmd, &used, "HOME=%s", p->home);
	cmd->envp[e++] = cmd_str(cmd, &used, "XDG_CONFIG_HOME=%s/.config",
	    p->home);
	cmd->envp[e++] = cmd_str(cmd, &used, "XDG_CACHE_HOME=%s/.cache",
	    p->home);
	cmd->envp[e++] = cmd_str(cmd, &used, "XDG_DATA_HOME=%s/.local/share",
	    p->home);
	cmd->envp[e++] = cmd_str(cmd, &used, "DISPLAY=%s", p->display);
	cmd->envp[e++] = cmd_str(cmd, &used, "XAUTHORITY=%s", p->xauthority);
	if (tz != NULL && strlen(tz) < 64)
		cmd->envp[e++] = cmd_str(cmd, &used, "TZ=%s", tz);
	cmd->envp[e] = NULL;

	for (i = 0; i < a; i++)
		if (cmd->argv[i] == NULL)
			return -1;
	for (i = 0; i < e; i++)
		if (cmd->envp[i] == NULL)
			return -1;
	return 0;
}

/* mkdir -p for a root-owned path, each new component 0755 whatever the
 * umask (the supervisor runs with 077).  Root-owned components that an
 * earlier run made 0700 get their search bits back: the browser user
 * must traverse them to read its policy (without, Chromium silently runs
 * with no managed policy at all).  Read and write bits are never added. */
static int
mkdir_p(const char *path)
{
	char buf[256], *p, c;
	struct stat st;

	if (strlen(path) >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(buf, path);
	for (p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		c = *p;
		*p = '\0';
		if (mkdir(buf, 0755) == 0) {
			if (chmod(buf, 0755) != 0)
				return -1;
		} else if (errno != EEXIST)
			return -1;
		if (lstat(buf, &st) != 0)
			return -1;
		if (S_ISDIR(st.st_mode) && st.st_uid == 0 &&
		    (st.st_mode & 0111) != 0111 &&
		    chmod(buf, (st.st_mode & 07777) | 0111) != 0)
			return -1;
		if (c == '\0')
			break;
		*p = c;
	}
	return 0;
}

int
browser_host_prepare(void)
{
	struct stat st;

	if (mkdir_p(CHROMIUM_POLICY_DIR) != 0)
		return -1;
	/* It is a mount point only; refuse one someone else controls. */
	if (lstat(CHROMIUM_POLICY_DIR, &st) != 0)
		return -1;
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

/* In the child, unprivileged, just before exec: Chromium ignores a policy
 * it cannot read, so a browser that cannot read its own must not start. */
int
browser_policy_readable(void)
{
	return access(CHROMIUM_POLICY_DIR "/" CHROMIUM_POLICY_FILE, R_OK);
}

#define FAIL(step)	do { *what = (step); return -1; } while (0)

int
browser_enter_namespace(const struct browser_cmd *cmd, const char **what)
{
	if (unshare(CLONE_NEWNS) != 0)
		FAIL("unshare(CLONE_NEWNS)");
	/* Nothing we mount may propagate back to the host's namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		FAIL("make / private");
	if (mount(cmd->policy_dir, CHROMIUM_POLICY_DIR, NULL, MS_BIND,
	    NULL) != 0)
		FAIL("bind-mount the policy dir");
	/* Read-only even to root in here; and Chromium's sandbox makes its
	   own user namespace, where this mount is locked in place. */
	if (mount(NULL, CHROMIUM_POLICY_DIR, NULL, MS_REMOUNT | MS_BIND |
	    MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
		FAIL("remount the policy dir read-only");
	return 0;
}

int
browser_exec(const struct browser_cmd *cmd)
{
	execve(BROWSER_PATH, (char *const *)cmd->argv,
	    (char *const *)cmd->envp);
	return -1;
}

void
browser_clear_locks(int profile_dirfd)
{
	static const char *const locks[] = {
		"SingletonLock", "SingletonSocket", "SingletonCookie", NULL
	};
	const char *const *l;

	/* unlinkat never follows a symlink: SingletonLock is one. */
	for (l = locks; *l != NULL; l++)
		unlinkat(profile_dirfd, *l, 0);
}
