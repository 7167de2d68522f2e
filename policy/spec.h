/*
 * policy/spec.h — the session spec: everything one gateway session is
 * configured by, and the one table that declares it.
 *
 * spec_options[] (policy/spec.c) is the single place where a setting is
 * declared, tmux options-table style: name, type, bounds, default, where
 * it may be set, and its help line.  The command line (`--key-rate 5`)
 * and a `--policy FILE` JSON object (`{"key_rate": 5}`) are both read
 * through it; precedence is default < policy file < command line.
 *
 * Library code: never logs, never exits.  Every fallible call returns a
 * policy_status and fills a caller-supplied struct policy_error with
 * where (file:line:column when it is about a file) and what went wrong.
 * Trust: the command line and the policy file come from the operator,
 * but are still parsed strictly (unknown keys, wrong types and values
 * out of bounds are errors, never ignored or clamped).
 */
#ifndef POLICY_SPEC_H
#define POLICY_SPEC_H

#include <stddef.h>

#include <jansson.h>

/* Status codes of everything in policy/ (spec.c and chromium.c). */
enum policy_status {
	POLICY_OK = 0,
	POLICY_EINPUT,		/* bad value, unknown key, malformed file */
	POLICY_EPERM,		/* file refused: writable by others, wrong owner */
	POLICY_EIO,		/* open/read/write failed */
	POLICY_ENOMEM
};

struct policy_error {
	char	msg[512];
};

const char	*policy_strerror(int status);
/* Fill *err (if non-NULL) and return status. */
int		 policy_error_set(struct policy_error *err, int status,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

enum spec_type {
	SPEC_STRING,		/* free text, validated by a checker */
	SPEC_PATH,		/* a file name (absolute or relative) */
	SPEC_NUMBER,		/* a finite double in [min, max] */
	SPEC_UINT,		/* an unsigned integer in [min, max] */
	SPEC_BOOL,		/* true/false (CLI: bare flag, yes/no, 1/0) */
	SPEC_GEOMETRY,		/* "WxH", each side in [min, max] */
	SPEC_LIST		/* list of strings (CLI: comma-separated) */
};

/* Where an option may be set. */
#define SPEC_CLI	0x1	/* command line */
#define SPEC_FILE	0x2	/* --policy JSON file */

struct spec_option {
	const char	*name;		/* JSON key; the flag is --name with
					   '_' -> '-' */
	enum spec_type	 type;
	int		 scope;		/* SPEC_CLI | SPEC_FILE */
	double		 min, max;	/* bounds for numbers and geometry */
	const char	*def;		/* default, as it would be written on
					   the command line; NULL = unset */
	size_t		 offset;	/* where it lives in struct session_spec */
	const char	*arg;		/* placeholder for help ("URL", "S") */
	/* extra validation of one text value (strings, list items); NULL
	   = none beyond the type's */
	int		(*check)(const char *value, struct policy_error *err);
	const char	*help;
};

extern const struct spec_option	spec_options[];
extern const size_t		spec_noptions;

/* Limits of free-text fields. */
#define SPEC_RECIPIENT_MAX	64
#define SPEC_URL_MAX		2048
#define SPEC_ORIGINS_MAX	16
#define SPEC_PASSWORD_MAX	8	/* VNC authentication uses 8 bytes */
#define SPEC_TOKEN_MIN		16
#define SPEC_TOKEN_MAX		256
#define SPEC_WATERMARK_MAX	128	/* bytes of the template */

struct session_spec {
	/* identity and plumbing: command line only */
	char		*backend;	/* http(s) URL of the analytics app */
	char		*listen;	/* "ADDR:PORT", numeric */
	char		*accept_from;	/* the one peer address, or NULL */
	char		*password_file;
	char		*ws_token_file;
	char		*grant_file;
	char		*log;		/* JSON-lines session log; NULL = stderr */
	char		*policy;	/* the policy file that was read */
	char		*recipient;	/* who the session is for (logs) */
	int		 verbose;	/* children's stderr passed through */
	char		*tls_cert;	/* PEM chain: the TLS front door */
	char		*tls_key;	/* PEM key (mode 0600 or stricter) */
	char		*credentials_file; /* VeNCrypt "user:secret" lines */
	char		*record_dir;	/* <dir>/<id>.cdsrec: the recording */
	char		*record_name;	/* NULL: the session id */
	unsigned	 record_min_free_mb;	/* refuse below; 0 = no check */

	/* the session policy: command line or policy file */
	unsigned	 width, height;
	double		 key_rate, key_burst;
	double		 button_rate, button_burst;
	double		 motion_rate;
	double		 alarm_seconds;
	int		 alarm_disconnect;
	unsigned	 idle_timeout;	/* s, 0 = off */
	unsigned	 max_duration;	/* s, 0 = off */
	unsigned	 memory_limit_mb;	/* the session's processes */
	int		 observer;
	char		**ws_origins;	/* NULL-terminated; NULL = same host */
	unsigned	 browser_restart_max;
	unsigned	 browser_restart_window;	/* s */
	int		 allow_plain_vnc;	/* -1: only on loopback */
	int		 watermark;		/* burned into every frame */
	char		*watermark_text;	/* template: %r %s %t %% */
	double		 watermark_opacity;
	char		*watermark_layout;	/* "tile" or "corner" */
	char		*network_capture;	/* "none" or "pcapng" */
};

/* A parsed http(s) URL: what the browser policy and checks need. */
struct spec_url {
	char		 scheme[8];	/* "http" or "https", lower case */
	char		 host[256];	/* lower case; IPv6 without brackets */
	int		 host_is_ip;	/* IPv4 or IPv6 literal */
	unsigned	 port;		/* explicit or the scheme's default */
	int		 port_given;
	char		 origin[300];	/* scheme://host:port, brackets for v6 */
};

/* Defaults from the table.  Returns POLICY_OK or POLICY_ENOMEM. */
int	spec_init(struct session_spec *s, struct policy_error *err);
/* Frees every owned string; s may be zero-filled; no-op on NULL. */
void	spec_free(struct session_spec *s);

/* Look an option up by JSON name or by flag ("--key-rate", "key-rate"). */
const struct spec_option *spec_find(const char *name);
/* Set one option from its command-line text. */
int	spec_set(struct session_spec *s, const struct spec_option *o,
	    const char *value, struct policy_error *err);

/*
 * The whole command line: "--name VALUE", "--name=VALUE", bare "--flag"
 * for booleans.  A --policy file is loaded first wherever it appears, so
 * that the command line overrides it.  Unknown flags are errors.
 */
int	spec_from_args(struct session_spec *s, int argc, char **argv,
	    struct policy_error *err);

/* Load a JSON policy file (refused if group/world-writable or not owned
 * by root or us); keys not settable from a file are errors. */
int	spec_load_file(struct session_spec *s, const char *path,
	    struct policy_error *err);
/* The same from the file's text (n bytes; path names it in errors). */
int	spec_load_text(struct session_spec *s, const char *data, size_t n,
	    const char *path, struct policy_error *err);

/* Unencrypted VNC (and ws://) allowed: the flag, or by default only
 * when --listen is a loopback address. */
int	spec_allow_plain(const struct session_spec *s);

/* Check what a runnable session needs (required options, cross-field
 * rules).  Call after all sources were applied. */
int	spec_check(const struct session_spec *s, struct policy_error *err);

/* The effective spec as JSON (no secrets: only the files' names). */
json_t	*spec_to_json(const struct session_spec *s);

/* Parse an http(s) URL strictly (ASCII, no userinfo, numeric port). */
int	spec_url_parse(const char *url, struct spec_url *u,
	    struct policy_error *err);

/* A parsed numeric listen address: "127.0.0.1:5999", "[::1]:0". */
struct spec_listen {
	int		 family;	/* AF_INET or AF_INET6 */
	char		 addr[64];	/* without brackets */
	unsigned	 port;		/* 0 = any free port */
};

int	spec_listen_parse(const char *text, struct spec_listen *l,
	    struct policy_error *err);

/*
 * Open a file holding configuration or a secret: a regular file, not a
 * symlink, owned by root or by the effective uid, not writable by group
 * or others (ssh's rule).  On POLICY_OK *fdp is an O_CLOEXEC fd.
 */
int	spec_open_private(const char *path, int *fdp,
	    struct policy_error *err);

/*
 * Read the first line of a secret file (CR/LF stripped) into *out
 * (malloc'd; wipe with explicit_bzero before free).  The line must have
 * min..max bytes; charset NULL = any byte but NUL/CR/LF, otherwise every
 * byte must be in charset.  what names the secret in errors.
 */
int	spec_read_secret(const char *path, const char *what, size_t min,
	    size_t max, const char *charset, char **out,
	    struct policy_error *err);

/*
 * Read a whole file of at most max bytes into *out (malloc'd, NUL
 * added, *lenp without it), with spec_open_private's checks; private =
 * also refused when group/world readable (keys, credentials).  Wipe
 * private contents with explicit_bzero before free.
 */
int	spec_read_file(const char *path, const char *what, size_t max,
	    int private, char **out, size_t *lenp, struct policy_error *err);

#endif
