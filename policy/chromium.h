/*
 * policy/chromium.h — the managed policy of the session's kiosk browser.
 *
 * Chromium reads mandatory ("managed") policies from every .json file
 * in /etc/chromium/policies/managed.  The supervisor writes one file
 * per session into the session's policy directory and the browser's
 * private mount namespace shows that directory at that path
 * (supervisor/browser.c).  The policy is a table: one entry per key with
 * its value and why it is set, so a test can check it against the list
 * in docs/gateway.md can be checked against it.
 *
 * Library code: no logging, no exits (policy_status codes, see
 * policy/spec.h).  Trust: the backend URL comes from the operator and is
 * re-parsed strictly (spec_url_parse) before it is written anywhere.
 */
#ifndef POLICY_CHROMIUM_H
#define POLICY_CHROMIUM_H

#include <stddef.h>

#include <jansson.h>

#include "policy/spec.h"

/* Where Chromium looks, and the file name we write there. */
#define CHROMIUM_POLICY_DIR	"/etc/chromium/policies/managed"
#define CHROMIUM_POLICY_FILE	"cdsgate.json"

enum chromium_policy_kind {
	CHROMIUM_BOOL,
	CHROMIUM_INT,
	CHROMIUM_STRING,
	CHROMIUM_LIST,		/* fixed list of strings */
	CHROMIUM_APP_URL,	/* the backend URL */
	CHROMIUM_APP_URL_LIST,	/* [ backend URL ] */
	CHROMIUM_APP_ALLOW	/* [ URL filter matching the backend origin ] */
};

struct chromium_policy {
	const char			*key;
	enum chromium_policy_kind	 kind;
	int				 i;	/* BOOL, INT */
	const char			*s;	/* STRING */
	const char *const		*list;	/* LIST, NULL-terminated */
	const char			*why;
};

/* Every key the gateway sets, in the order written. */
extern const struct chromium_policy	chromium_policies[];
extern const size_t			chromium_npolicies;

/* The URLBlocklist entries (NULL-terminated): "*" and the schemes "*"
 * does not cover. */
extern const char *const		chromium_url_blocklist[];

/*
 * The URLAllowlist filter for a backend: its scheme, host and port,
 * any path.  A DNS name gets Chromium's leading '.' so that only that
 * exact host matches, not its subdomains.
 */
int	chromium_allow_filter(const struct spec_url *u, char *buf,
	    size_t len, struct policy_error *err);

/* Build the policy object for a backend URL; *out is a new reference. */
int	chromium_policy_build(const char *backend, json_t **out,
	    struct policy_error *err);

/* Write CHROMIUM_POLICY_FILE (mode 0644, must not exist yet, symlinks
 * not followed) into directory dir. */
int	chromium_policy_write(const char *dir, const char *backend,
	    struct policy_error *err);

#endif
