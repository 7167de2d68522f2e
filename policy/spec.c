/*
 * policy/spec.c — the session spec: the option table, and reading it
 * from the command line and from a --policy JSON file.
 *
 * Library code (no logging, no exits).  Runs in the supervisor as root,
 * before any child exists; its input comes from the operator but is
 * parsed as if it were hostile: every value is type- and bounds-checked,
 * unknown keys are errors, and files are refused when someone other than
 * root (or us) could have written them.
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/spec.h"

#define POLICY_FILE_MAX		(64 * 1024)	/* bytes of a --policy file */
#define SECRET_FILE_MAX		4096		/* bytes read of a secret file */

static int	check_backend(const char *, struct policy_error *);
static int	check_listen(const char *, struct policy_error *);
static int	check_recipient(const char *, struct policy_error *);
static int	check_accept_from(const char *, struct policy_error *);
static int	check_record_name(const char *, struct policy_error *);
static int	check_origin(const char *, struct policy_error *);
static int	check_watermark_text(const char *, struct policy_error *);
static int	check_watermark_layout(const char *, struct policy_error *);
static int	check_capture(const char *, struct policy_error *);

#define OFF(f)	offsetof(struct session_spec, f)
#define BOTH	(SPEC_CLI | SPEC_FILE)

/*
 * The one declaration of every session setting.  Bounds are what the
 * gateway can honour, not what is sensible: a custodian picks sensible.
 * For SPEC_LIST, max is the most items.  Keep docs/gateway.md's flag
 * table in step (`cdsgated options` prints this table).
 */
const struct spec_option spec_options[] = {
	{ "backend", SPEC_STRING, SPEC_CLI, 0, 0, NULL, OFF(backend), "URL",
	  check_backend,
	  "the analytics app (http/https); the only origin the browser may "
	  "load" },
	{ "listen", SPEC_STRING, SPEC_CLI, 0, 0, NULL, OFF(listen),
	  "ADDR:PORT", check_listen,
	  "numeric address and port for VNC clients; port 0 = any free one" },
	{ "accept_from", SPEC_STRING, SPEC_CLI, 0, 0, NULL, OFF(accept_from),
	  "ADDR", check_accept_from,
	  "numeric address: the only peer whose connections are served (a "
	  "session behind the front door); others are refused and logged, "
	  "and plain VNC is allowed on any listen address" },
	{ "password_file", SPEC_PATH, SPEC_CLI, 0, 0, NULL,
	  OFF(password_file), "FILE", NULL,
	  "first line: the session's VNC password (1 to 8 bytes)" },
	{ "ws_token_file", SPEC_PATH, SPEC_CLI, 0, 0, NULL,
	  OFF(ws_token_file), "FILE", NULL,
	  "first line: the token websocket clients must present (16 to 256 "
	  "of A-Z a-z 0-9 - . _ ~); without it websockets are refused" },
	{ "grant_file", SPEC_PATH, SPEC_CLI, 0, 0, NULL, OFF(grant_file),
	  "FILE", NULL,
	  "first line: the session's dataset grant (v1:SESSION:DATASET:"
	  "EXPIRES:MAC); the forwarder adds it as Cdsgate-Grant to every "
	  "request to an http:// backend and removes any the browser sends" },
	{ "log", SPEC_PATH, SPEC_CLI, 0, 0, NULL, OFF(log), "FILE", NULL,
	  "append the JSON-lines session log here (default: stderr)" },
	{ "policy", SPEC_PATH, SPEC_CLI, 0, 0, NULL, OFF(policy), "FILE",
	  NULL,
	  "read session settings from this JSON object (the command line "
	  "overrides it)" },
	{ "recipient", SPEC_STRING, SPEC_CLI, 0, 0, NULL, OFF(recipient),
	  "ID", check_recipient,
	  "who the session is for, as logged (1 to 64 of A-Z a-z 0-9 . _ @ "
	  "+ -)" },
	{ "verbose", SPEC_BOOL, SPEC_CLI, 0, 1, "no", OFF(verbose), NULL,
	  NULL, "pass Xvfb's and Chromium's stderr through to ours" },
	{ "tls_cert", SPEC_PATH, SPEC_CLI, 0, 0, NULL, OFF(tls_cert), "FILE",
	  NULL, "PEM certificate (chain) of the TLS front door: VeNCrypt "
	  "X509Plain for VNC clients, wss for noVNC" },
	{ "tls_key", SPEC_PATH, SPEC_CLI, 0, 0, NULL, OFF(tls_key), "FILE",
	  NULL, "PEM private key of --tls-cert (refused if group/world "
	  "readable)" },
	{ "credentials_file", SPEC_PATH, SPEC_CLI, 0, 0, NULL,
	  OFF(credentials_file), "FILE", NULL,
	  "user:secret lines (secret: password or $scrypt$ hash) VeNCrypt "
	  "clients log in with (refused if group/world readable)" },
	{ "record_dir", SPEC_PATH, SPEC_CLI, 0, 0,
	  "/var/lib/cdsgate/recordings", OFF(record_dir), "DIR", NULL,
	  "write the session recording to DIR/<session-id>.cdsrec and its "
	  "network log to DIR/<session-id>.network.jsonl (made 0600 root); "
	  "a session that cannot be recorded does not start" },
	{ "network_capture", SPEC_STRING, BOTH, 0, 0, "none",
	  OFF(network_capture), "none|pcapng", check_capture,
	  "pcapng: also capture every byte the browser and the backend "
	  "exchange to DIR/<session-id>.pcapng beside the recording" },
	{ "record_name", SPEC_STRING, SPEC_CLI, 0, 0, NULL, OFF(record_name),
	  "NAME", check_record_name,
	  "name the recording DIR/NAME.cdsrec instead of the session id "
	  "(`cdsgated serve` passes the api's session id)" },
	{ "record_min_free_mb", SPEC_UINT, SPEC_CLI, 0, 1048576, "64",
	  OFF(record_min_free_mb), "MB", NULL,
	  "refuse to start when the record dir has less free space (0 = no "
	  "check); a full disk mid-session ends it (disk_full)" },
	{ "allow_plain_vnc", SPEC_BOOL, BOTH, 0, 1, NULL,
	  OFF(allow_plain_vnc), NULL, NULL,
	  "also allow unencrypted VNC authentication and ws:// (default: "
	  "only when listening on loopback)" },

	{ "geometry", SPEC_GEOMETRY, BOTH, 320, 4096, "1280x800", OFF(width),
	  "WxH", NULL, "screen size in pixels (each side 320 to 4096)" },
	{ "key_rate", SPEC_NUMBER, BOTH, 0.1, 100, "10", OFF(key_rate), "N",
	  NULL, "key presses per second, sustained" },
	{ "key_burst", SPEC_NUMBER, BOTH, 1, 1000, "20", OFF(key_burst), "N",
	  NULL, "key presses allowed in a burst" },
	{ "button_rate", SPEC_NUMBER, BOTH, 0.1, 100, "10", OFF(button_rate),
	  "N", NULL, "pointer button presses per second, sustained" },
	{ "button_burst", SPEC_NUMBER, BOTH, 1, 1000, "20",
	  OFF(button_burst), "N", NULL,
	  "pointer button presses allowed in a burst" },
	{ "motion_rate", SPEC_NUMBER, BOTH, 1, 1000, "60", OFF(motion_rate),
	  "N", NULL,
	  "pointer motions per second sent to X; the excess is coalesced, "
	  "never lost" },
	{ "alarm_seconds", SPEC_NUMBER, BOTH, 1, 3600, "5",
	  OFF(alarm_seconds), "S", NULL,
	  "sustained over-limit input for S seconds raises a rate_alarm" },
	{ "alarm_disconnect", SPEC_BOOL, BOTH, 0, 1, "no",
	  OFF(alarm_disconnect), NULL, NULL,
	  "on a rate alarm, also disconnect the client" },
	{ "idle_timeout", SPEC_UINT, BOTH, 0, 604800, "1800",
	  OFF(idle_timeout), "S", NULL,
	  "end the session after S seconds without input (0 = never)" },
	{ "max_duration", SPEC_UINT, BOTH, 0, 604800, "28800",
	  OFF(max_duration), "S", NULL,
	  "end the session S seconds after it started (0 = never)" },
	{ "memory_limit_mb", SPEC_UINT, BOTH, 512, 1048576, "2048",
	  OFF(memory_limit_mb), "MIB", NULL,
	  "end the session (memory_limit) when its processes hold more "
	  "private memory than this, MiB (idle: about 250); no browser "
	  "process may map twice as much" },
	{ "observer", SPEC_BOOL, BOTH, 0, 1, "no", OFF(observer), NULL, NULL,
	  "allow one extra view-only client" },
	{ "ws_origins", SPEC_LIST, BOTH, 0, SPEC_ORIGINS_MAX, NULL,
	  OFF(ws_origins), "ORIGIN,...", check_origin,
	  "Origin values websocket clients may send (default: the listen "
	  "host only)" },
	{ "browser_restart_max", SPEC_UINT, BOTH, 1, 100, "5",
	  OFF(browser_restart_max), "N", NULL,
	  "end the session when the browser had to be restarted N times "
	  "within browser_restart_window and exits again" },
	{ "browser_restart_window", SPEC_UINT, BOTH, 1, 3600, "60",
	  OFF(browser_restart_window), "S", NULL,
	  "the window, in seconds, over which browser restarts are counted" },
	{ "watermark", SPEC_BOOL, BOTH, 0, 1, "yes", OFF(watermark), NULL,
	  NULL, "burn a watermark (watermark_text) into every frame the "
	  "client sees and the recording holds" },
	{ "watermark_text", SPEC_STRING, BOTH, 0, 0, "%r %s %t",
	  OFF(watermark_text), "TEMPLATE", check_watermark_text,
	  "the watermark: printable ASCII, %r recipient, %s session id, %t "
	  "UTC time (minute), %% a percent sign" },
	{ "watermark_opacity", SPEC_NUMBER, BOTH, 0.05, 0.6, "0.15",
	  OFF(watermark_opacity), "A", NULL,
	  "how strongly the watermark covers the screen (0.05 to 0.6)" },
	{ "watermark_layout", SPEC_STRING, BOTH, 0, 0, "tile",
	  OFF(watermark_layout), "tile|corner", check_watermark_layout,
	  "tile: staggered diagonal repeats over the whole screen; corner: "
	  "one line bottom right" },
};
const size_t spec_noptions = sizeof(spec_options) / sizeof(spec_options[0]);

const char *
policy_strerror(int status)
{
	switch (status) {
	case POLICY_OK:		return "success";
	case POLICY_EINPUT:	return "invalid input";
	case POLICY_EPERM:	return "file refused";
	case POLICY_EIO:	return "input/output error";
	case POLICY_ENOMEM:	return "out of memory";
	}
	return "unknown error";
}

int
policy_error_set(struct policy_error *err, int status, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL) {
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return status;
}

/* ---- text checkers (also used on list items) ---- */

static int
check_backend(const char *v, struct policy_error *err)
{
	struct spec_url u;

	return spec_url_parse(v, &u, err);
}

static int
check_listen(const char *v, struct policy_error *err)
{
	struct spec_listen l;

	return spec_listen_parse(v, &l, err);
}

/* A numeric address, IPv4 or IPv6 (no port, no brackets). */
static int
check_accept_from(const char *v, struct policy_error *err)
{
	unsigned char buf[16];

	if (inet_pton(AF_INET, v, buf) == 1 || inet_pton(AF_INET6, v, buf) == 1)
		return POLICY_OK;
	return policy_error_set(err, POLICY_EINPUT, "'%s' is not a numeric "
	    "IPv4 or IPv6 address", v);
}

static int
check_recipient(const char *v, struct policy_error *err)
{
	size_t n = strlen(v), i;

	if (n == 0 || n > SPEC_RECIPIENT_MAX)
		return policy_error_set(err, POLICY_EINPUT,
		    "must have 1 to %d characters", SPEC_RECIPIENT_MAX);
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)v[i]) &&
		    strchr("._@+-", v[i]) == NULL)
			return policy_error_set(err, POLICY_EINPUT,
			    "character %zu is not one of A-Z a-z 0-9 . _ @ + -",
			    i + 1);
	return POLICY_OK;
}

/* network_capture: the two values the forwarder knows. */
static int
check_capture(const char *v, struct policy_error *err)
{
	if (strcmp(v, "none") != 0 && strcmp(v, "pcapng") != 0)
		return policy_error_set(err, POLICY_EINPUT,
		    "must be \"none\" or \"pcapng\"");
	return POLICY_OK;
}

/* A file name stem: 1 to 64 of A-Z a-z 0-9 . _ -, no leading dot. */
static int
check_record_name(const char *v, struct policy_error *err)
{
	size_t n = strlen(v), i;

	if (n == 0 || n > 64 || v[0] == '.')
		return policy_error_set(err, POLICY_EINPUT,
		    "must have 1 to 64 characters and not start with '.'");
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)v[i]) && strchr("._-", v[i]) == NULL)
			return policy_error_set(err, POLICY_EINPUT,
			    "character %zu is not one of A-Z a-z 0-9 . _ -",
			    i + 1);
	return POLICY_OK;
}

/* An Origin header value: scheme://host[:port] and nothing else. */
static int
check_origin(const char *v, struct policy_error *err)
{
	struct spec_url u;
	const char *p;
	int r;

	if ((r = spec_url_parse(v, &u, err)) != POLICY_OK)
		return r;
	p = strstr(v, "://") + 3;
	if (strpbrk(p, "/?#") != NULL)
		return policy_error_set(err, POLICY_EINPUT,
		    "'%s' is not an origin (scheme://host[:port], no path)", v);
	return POLICY_OK;
}

/* Printable ASCII (the glyphs the watermark has) and known escapes. */
static int
check_watermark_text(const char *v, struct policy_error *err)
{
	size_t n = strlen(v), i;

	if (n == 0 || n > SPEC_WATERMARK_MAX)
		return policy_error_set(err, POLICY_EINPUT,
		    "must have 1 to %d characters", SPEC_WATERMARK_MAX);
	for (i = 0; i < n; i++) {
		if (v[i] < 0x20 || v[i] > 0x7e)
			return policy_error_set(err, POLICY_EINPUT,
			    "character %zu is not printable ASCII", i + 1);
		if (v[i] == '%' && (v[i + 1] == '\0' ||
		    strchr("rst%", v[i + 1]) == NULL))
			return policy_error_set(err, POLICY_EINPUT,
			    "'%%' at %zu is not %%r, %%s, %%t or %%%%", i + 1);
		if (v[i] == '%')
			i++;
	}
	return POLICY_OK;
}

static int
check_watermark_layout(const char *v, struct policy_error *err)
{
	if (strcmp(v, "tile") != 0 && strcmp(v, "corner") != 0)
		return policy_error_set(err, POLICY_EINPUT,
		    "'%s' is not tile or corner", v);
	return POLICY_OK;
}

/* ---- URLs and addresses ---- */

static int
url_port(const char *p, size_t n, unsigned min, unsigned *port)
{
	unsigned long v = 0;
	size_t i;

	if (n == 0 || n > 5)
		return -1;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)p[i]))
			return -1;
		v = v * 10 + (unsigned)(p[i] - '0');
	}
	if (v < min || v > 65535)
		return -1;
	*port = (unsigned)v;
	return 0;
}

/*
 * A DNS name the browser will not re-interpret: labels of letters,
 * digits and '-', and a last label with a letter in it — so "127.1" or
 * "0x7f.1", which Chromium would canonicalise to an IPv4 address the
 * allow-list does not name, are refused rather than mismatched.
 */
static int
url_host_name(const char *h)
{
	const char *label = h, *p;
	int alpha = 0;

	if (*h == '\0' || strlen(h) > 253)
		return -1;
	for (p = h;; p++) {
		if (*p == '.' || *p == '\0') {
			if (p == label || p - label > 63)
				return -1;
			if (*p == '\0')
				break;
			label = p + 1;
			alpha = 0;
			continue;
		}
		if (isalpha((unsigned char)*p))
			alpha = 1;
		else if (!isdigit((unsigned char)*p) && *p != '-')
			return -1;
	}
	return alpha ? 0 : -1;
}

int
spec_url_parse(const char *url, struct spec_url *u, struct policy_error *err)
{
	const char *p, *auth, *end, *hend, *colon;
	unsigned char in6[16], in4[4];
	size_t n, i;

	memset(u, 0, sizeof(*u));
	n = strlen(url);
	if (n == 0 || n > SPEC_URL_MAX)
		return policy_error_set(err, POLICY_EINPUT,
		    "a URL must have 1 to %d characters", SPEC_URL_MAX);
	for (i = 0; i < n; i++)
		if ((unsigned char)url[i] <= 0x20 ||
		    (unsigned char)url[i] >= 0x7f)
			return policy_error_set(err, POLICY_EINPUT,
			    "URL character %zu is not printable ASCII "
			    "(percent-encode it)", i + 1);
	if ((p = strstr(url, "://")) == NULL)
		return policy_error_set(err, POLICY_EINPUT,
		    "'%s' is not an absolute URL (scheme://host...)", url);
	if ((size_t)(p - url) == 4 && strncasecmp(url, "http", 4) == 0)
		strcpy(u->scheme, "http");
	else if ((size_t)(p - url) == 5 && strncasecmp(url, "https", 5) == 0)
		strcpy(u->scheme, "https");
	else
		return policy_error_set(err, POLICY_EINPUT,
		    "URL scheme must be http or https");
	auth = p + 3;
	end = auth + strcspn(auth, "/?#");
	if (memchr(auth, '@', (size_t)(end - auth)) != NULL)
		return policy_error_set(err, POLICY_EINPUT,
		    "credentials in a URL (user@host) are not allowed");
	if (*auth == '[') {
		if ((hend = memchr(auth, ']', (size_t)(end - auth))) == NULL ||
		    (size_t)(hend - auth - 1) >= sizeof(u->host))
			return policy_error_set(err, POLICY_EINPUT,
			    "bad IPv6 address in URL");
		memcpy(u->host, auth + 1, (size_t)(hend - auth - 1));
		if (inet_pton(AF_INET6, u->host, in6) != 1)
			return policy_error_set(err, POLICY_EINPUT,
			    "bad IPv6 address '%s' in URL", u->host);
		u->host_is_ip = 1;
		colon = hend + 1 < end ? hend + 1 : NULL;
		if (colon != NULL && *colon != ':')
			return policy_error_set(err, POLICY_EINPUT,
			    "junk after ']' in URL");
	} else {
		colon = memchr(auth, ':', (size_t)(end - auth));
		hend = colon != NULL ? colon : end;
		if ((size_t)(hend - auth) >= sizeof(u->host))
			return policy_error_set(err, POLICY_EINPUT,
			    "host name in URL too long");
		for (i = 0; auth + i < hend; i++)
			u->host[i] = (char)tolower((unsigned char)auth[i]);
		if (inet_pton(AF_INET, u->host, in4) == 1)
			u->host_is_ip = 1;
		else if (url_host_name(u->host) != 0)
			return policy_error_set(err, POLICY_EINPUT,
			    "'%s' is neither a dotted-quad IPv4 address nor a "
			    "DNS name", u->host);
	}
	if (colon != NULL) {
		if (url_port(colon + 1, (size_t)(end - colon - 1), 1,
		    &u->port) != 0)
			return policy_error_set(err, POLICY_EINPUT,
			    "URL port must be 1 to 65535");
		u->port_given = 1;
	} else
		u->port = strcmp(u->scheme, "https") == 0 ? 443 : 80;
	snprintf(u->origin, sizeof(u->origin), "%s://%s%s%s:%u", u->scheme,
	    strchr(u->host, ':') != NULL ? "[" : "", u->host,
	    strchr(u->host, ':') != NULL ? "]" : "", u->port);
	return POLICY_OK;
}

int
spec_listen_parse(const char *text, struct spec_listen *l,
    struct policy_error *err)
{
	const char *colon, *a = text;
	unsigned char buf[16];
	size_t alen;

	memset(l, 0, sizeof(*l));
	if (*text == '[') {
		if ((colon = strstr(text, "]:")) == NULL)
			goto bad;
		a = text + 1;
		alen = (size_t)(colon - a);
		colon++;
		l->family = AF_INET6;
	} else {
		if ((colon = strrchr(text, ':')) == NULL)
			goto bad;
		alen = (size_t)(colon - a);
		l->family = AF_INET;
	}
	if (alen == 0 || alen >= sizeof(l->addr))
		goto bad;
	memcpy(l->addr, a, alen);
	l->addr[alen] = '\0';
	if (inet_pton(l->family, l->addr, buf) != 1)
		return policy_error_set(err, POLICY_EINPUT,
		    "'%s' is not a numeric %s address (host names are not "
		    "resolved)", l->addr, l->family == AF_INET ? "IPv4" : "IPv6");
	if (url_port(colon + 1, strlen(colon + 1), 0, &l->port) != 0)
		return policy_error_set(err, POLICY_EINPUT,
		    "port must be 0 to 65535");
	return POLICY_OK;
bad:
	return policy_error_set(err, POLICY_EINPUT,
	    "'%s' is not ADDR:PORT (IPv4) or [ADDR]:PORT (IPv6)", text);
}

/* ---- storing typed values ---- */

#define FIELD(s, o, type)	((type *)(void *)((char *)(s) + (o)->offset))

static void
list_free(char **l)
{
	char **p;

	for (p = l; p != NULL && *p != NULL; p++)
		free(*p);
	free(l);
}

static int
store_string(struct session_spec *s, const struct spec_option *o,
    const char *where, const char *v, struct policy_error *err)
{
	char **f = FIELD(s, o, char *), *dup;
	struct policy_error e;
	int r;

	if (*v == '\0' || strlen(v) > PATH_MAX)
		return policy_error_set(err, POLICY_EINPUT,
		    "%s: must not be empty (or longer than %d)", where,
		    PATH_MAX);
	if (o->check != NULL && (r = o->check(v, &e)) != POLICY_OK)
		return policy_error_set(err, r, "%s: %s", where, e.msg);
	if ((dup = strdup(v)) == NULL)
		return policy_error_set(err, POLICY_ENOMEM, "%s: out of memory",
		    where);
	free(*f);
	*f = dup;
	return POLICY_OK;
}

static int
store_number(struct session_spec *s, const struct spec_option *o,
    const char *where, double v, struct policy_error *err)
{
	if (!isfinite(v) || v < o->min || v > o->max)
		return policy_error_set(err, POLICY_EINPUT,
		    "%s: %g is out of range [%g, %g]", where, v, o->min,
		    o->max);
	*FIELD(s, o, double) = v;
	return POLICY_OK;
}

static int
store_uint(struct session_spec *s, const struct spec_option *o,
    const char *where, double v, struct policy_error *err)
{
	if (!isfinite(v) || v != floor(v) || v < o->min || v > o->max)
		return policy_error_set(err, POLICY_EINPUT,
		    "%s: %g is not a whole number in [%g, %g]", where, v,
		    o->min, o->max);
	*FIELD(s, o, unsigned) = (unsigned)v;
	return POLICY_OK;
}

static int
store_geometry(struct session_spec *s, const struct spec_option *o,
    const char *where, const char *v, struct policy_error *err)
{
	unsigned long w, h;
	char *end;

	if (!isdigit((unsigned char)*v))
		goto bad;
	w = strtoul(v, &end, 10);
	if (*end != 'x' || !isdigit((unsigned char)end[1]))
		goto bad;
	h = strtoul(end + 1, &end, 10);
	if (*end != '\0')
		goto bad;
	if (w < o->min || w > o->max || h < o->min || h > o->max)
		return policy_error_set(err, POLICY_EINPUT,
		    "%s: %lux%lu: each side must be %g to %g pixels", where, w,
		    h, o->min, o->max);
	s->width = (unsigned)w;
	s->height = (unsigned)h;
	return POLICY_OK;
bad:
	return policy_error_set(err, POLICY_EINPUT,
	    "%s: '%s' is not WIDTHxHEIGHT (e.g. 1280x800)", where, v);
}

/* Take ownership of a NULL-terminated list of n items after checks. */
static int
store_list(struct session_spec *s, const struct spec_option *o,
    const char *where, char **items, size_t n, struct policy_error *err)
{
	char ***f = FIELD(s, o, char **);
	struct policy_error e;
	size_t i;
	int r;

	if (n > (size_t)o->max) {
		r = policy_error_set(err, POLICY_EINPUT,
		    "%s: at most %g entries", where, o->max);
		goto fail;
	}
	for (i = 0; i < n; i++) {
		if (o->check != NULL && (r = o->check(items[i], &e)) != 0) {
			policy_error_set(err, r, "%s: entry %zu: %s", where,
			    i + 1, e.msg);
			goto fail;
		}
	}
	list_free(*f);
	if (n == 0) {		/* empty = the default (same host) */
		list_free(items);
		items = NULL;
	}
	*f = items;
	return POLICY_OK;
fail:
	list_free(items);
	return r;
}

static int
parse_bool(const char *v, int *b)
{
	static const char *const yes[] = { "yes", "true", "on", "1", NULL };
	static const char *const no[] = { "no", "false", "off", "0", NULL };
	size_t i;

	for (i = 0; yes[i] != NULL; i++) {
		if (strcasecmp(v, yes[i]) == 0)
			return *b = 1, 0;
		if (strcasecmp(v, no[i]) == 0)
			return *b = 0, 0;
	}
	return -1;
}

/* Split "a,b,c" into a malloc'd NULL-terminated list. */
static int
split_list(const char *v, char ***out, size_t *np)
{
	char **l, *copy, *p, *tok, *save = NULL;
	size_t n = 0, cap = 1;

	for (p = (char *)v; *p != '\0'; p++)
		cap += *p == ',';
	if ((l = calloc(cap + 1, sizeof(*l))) == NULL ||
	    (copy = strdup(v)) == NULL) {
		free(l);
		return -1;
	}
	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save))
		if ((l[n++] = strdup(tok)) == NULL) {
			free(copy);
			list_free(l);
			return -1;
		}
	free(copy);
	*out = l;
	*np = n;
	return 0;
}

/* A decimal number only: strtod alone would also take hex ("0x10"),
 * "inf" and "nan", which no operator means. */
static int
parse_double(const char *v, double *d)
{
	char *end;

	if (v[strspn(v, "0123456789.+-eE")] != '\0')
		return -1;
	errno = 0;
	*d = strtod(v, &end);
	return end == v || *end != '\0' || errno != 0 ? -1 : 0;
}

int
spec_set(struct session_spec *s, const struct spec_option *o,
    const char *v, struct policy_error *err)
{
	char where[64], **items;
	size_t n;
	double d;
	int b;

	snprintf(where, sizeof(where), "--%s", o->name);
	for (char *p = where; *p != '\0'; p++)
		if (*p == '_')
			*p = '-';
	switch (o->type) {
	case SPEC_STRING:
	case SPEC_PATH:
		return store_string(s, o, where, v, err);
	case SPEC_NUMBER:
	case SPEC_UINT:
		if (parse_double(v, &d) != 0)
			return policy_error_set(err, POLICY_EINPUT,
			    "%s: '%s' is not a number", where, v);
		return o->type == SPEC_NUMBER ? store_number(s, o, where, d,
		    err) : store_uint(s, o, where, d, err);
	case SPEC_BOOL:
		if (parse_bool(v, &b) != 0)
			return policy_error_set(err, POLICY_EINPUT,
			    "%s: '%s' is not yes/no, true/false, on/off or 1/0",
			    where, v);
		*FIELD(s, o, int) = b;
		return POLICY_OK;
	case SPEC_GEOMETRY:
		return store_geometry(s, o, where, v, err);
	case SPEC_LIST:
		if (split_list(v, &items, &n) != 0)
			return policy_error_set(err, POLICY_ENOMEM,
			    "%s: out of memory", where);
		return store_list(s, o, where, items, n, err);
	}
	return policy_error_set(err, POLICY_EINPUT, "%s: bad type", where);
}

int
spec_init(struct session_spec *s, struct policy_error *err)
{
	size_t i;
	int r;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < spec_noptions; i++) {
		if (spec_options[i].def == NULL)
			continue;
		if ((r = spec_set(s, &spec_options[i], spec_options[i].def,
		    err)) != POLICY_OK)
			return r;	/* a bad default: a bug, caught by tests */
	}
	s->allow_plain_vnc = -1;	/* decided by the listen address */
	return POLICY_OK;
}

void
spec_free(struct session_spec *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < spec_noptions; i++) {
		const struct spec_option *o = &spec_options[i];

		if (o->type == SPEC_STRING || o->type == SPEC_PATH) {
			free(*FIELD(s, o, char *));
			*FIELD(s, o, char *) = NULL;
		} else if (o->type == SPEC_LIST) {
			list_free(*FIELD(s, o, char **));
			*FIELD(s, o, char **) = NULL;
		}
	}
}

/* Match "key_rate", "key-rate" or "--key-rate" to its entry. */
const struct spec_option *
spec_find(const char *name)
{
	size_t i, j;
	const char *a;

	if (strncmp(name, "--", 2) == 0)
		name += 2;
	for (i = 0; i < spec_noptions; i++) {
		a = spec_options[i].name;
		for (j = 0; a[j] != '\0' && name[j] != '\0'; j++)
			if (a[j] != name[j] && !(a[j] == '_' && name[j] == '-'))
				break;
		if (a[j] == '\0' && name[j] == '\0')
			return &spec_options[i];
	}
	return NULL;
}

/* ---- the command line ---- */

/* One "--name[=value]" at argv[*i]; advances *i past a separate value. */
static int
args_one(int argc, char **argv, int *i, const struct spec_option **op,
    const char **vp, struct policy_error *err)
{
	const char *arg = argv[*i], *eq;
	char name[64];
	const struct spec_option *o;
	size_t n;

	if (strncmp(arg, "--", 2) != 0)
		return policy_error_set(err, POLICY_EINPUT,
		    "unexpected argument '%s'", arg);
	eq = strchr(arg, '=');
	n = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
	if (n >= sizeof(name))
		return policy_error_set(err, POLICY_EINPUT,
		    "unknown option '%.40s...'", arg);
	memcpy(name, arg, n);
	name[n] = '\0';
	if ((o = spec_find(name)) == NULL || strchr(name + 2, '_') != NULL)
		return policy_error_set(err, POLICY_EINPUT,
		    "unknown option '%s'", name);
	if (eq != NULL)
		*vp = eq + 1;
	else if (o->type == SPEC_BOOL)
		*vp = "yes";
	else if (*i + 1 < argc)
		*vp = argv[++*i];
	else
		return policy_error_set(err, POLICY_EINPUT,
		    "%s needs a value (%s)", name, o->arg);
	*op = o;
	return POLICY_OK;
}

int
spec_from_args(struct session_spec *s, int argc, char **argv,
    struct policy_error *err)
{
	const struct spec_option *o = NULL, *pol = spec_find("policy");
	const char *v = NULL;
	int i, r, pass;

	/* Pass 0 loads the policy file, pass 1 applies the rest on top. */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < argc; i++) {
			if ((r = args_one(argc, argv, &i, &o, &v, err)) != 0)
				return r;
			if ((o == pol) != (pass == 0))
				continue;
			if ((r = spec_set(s, o, v, err)) != POLICY_OK)
				return r;
			if (o == pol &&
			    (r = spec_load_file(s, v, err)) != POLICY_OK)
				return r;
		}
	}
	return POLICY_OK;
}

/* ---- files ---- */

int
spec_open_private(const char *path, int *fdp, struct policy_error *err)
{
	struct stat st;
	int fd, r;

	*fdp = -1;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY |
	    O_NONBLOCK);
	if (fd < 0 && errno == ELOOP)
		return policy_error_set(err, POLICY_EPERM,
		    "%s: is a symbolic link; name the file itself", path);
	if (fd < 0)
		return policy_error_set(err, POLICY_EIO, "%s: %s", path,
		    strerror(errno));
	if (fstat(fd, &st) != 0) {
		r = policy_error_set(err, POLICY_EIO, "%s: %s", path,
		    strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		r = policy_error_set(err, POLICY_EPERM,
		    "%s: not a regular file", path);
		goto fail;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		r = policy_error_set(err, POLICY_EPERM,
		    "%s: owned by uid %u; only root's (or our own) files are "
		    "trusted", path, (unsigned)st.st_uid);
		goto fail;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		r = policy_error_set(err, POLICY_EPERM,
		    "%s: mode %04o is group/world-writable; chmod go-w it",
		    path, (unsigned)(st.st_mode & 07777));
		goto fail;
	}
	*fdp = fd;
	return POLICY_OK;
fail:
	close(fd);
	return r;
}

/* Read at most max bytes from fd; *np = bytes read.  Returns 0 or -1 if
 * the file is larger than max. */
static int
read_bounded(int fd, char *buf, size_t max, size_t *np)
{
	size_t n = 0;
	ssize_t r = 0;

	while (n <= max) {
		r = read(fd, buf + n, max + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	*np = n;
	return r < 0 || n > max ? -1 : 0;
}

/* Apply one JSON value to option o. */
static int
spec_set_json(struct session_spec *s, const struct spec_option *o,
    const char *where, json_t *v, struct policy_error *err)
{
	char **items;
	size_t i, n;
	int r;

	switch (o->type) {
	case SPEC_STRING:
	case SPEC_PATH:
		if (!json_is_string(v))
			break;
		return store_string(s, o, where, json_string_value(v), err);
	case SPEC_NUMBER:
		if (!json_is_number(v))
			break;
		return store_number(s, o, where, json_number_value(v), err);
	case SPEC_UINT:
		if (!json_is_integer(v))
			break;
		return store_uint(s, o, where, (double)json_integer_value(v),
		    err);
	case SPEC_BOOL:
		if (!json_is_boolean(v))
			break;
		*FIELD(s, o, int) = json_is_true(v);
		return POLICY_OK;
	case SPEC_GEOMETRY:
		if (!json_is_string(v))
			break;
		return store_geometry(s, o, where, json_string_value(v), err);
	case SPEC_LIST:
		if (!json_is_array(v))
			break;
		n = json_array_size(v);
		if ((items = calloc(n + 1, sizeof(*items))) == NULL)
			return policy_error_set(err, POLICY_ENOMEM,
			    "%s: out of memory", where);
		for (i = 0; i < n; i++) {
			json_t *e = json_array_get(v, i);

			if (!json_is_string(e) ||
			    (items[i] = strdup(json_string_value(e))) == NULL) {
				r = policy_error_set(err, json_is_string(e) ?
				    POLICY_ENOMEM : POLICY_EINPUT,
				    "%s: entry %zu must be a string", where,
				    i + 1);
				list_free(items);
				return r;
			}
		}
		return store_list(s, o, where, items, n, err);
	}
	return policy_error_set(err, POLICY_EINPUT, "%s: must be %s", where,
	    o->type == SPEC_NUMBER ? "a number" :
	    o->type == SPEC_UINT ? "a whole number" :
	    o->type == SPEC_BOOL ? "true or false" :
	    o->type == SPEC_LIST ? "an array of strings" :
	    o->type == SPEC_GEOMETRY ? "a string \"WxH\"" : "a string");
}

int
spec_load_file(struct session_spec *s, const char *path,
    struct policy_error *err)
{
	char *data;
	size_t n;
	int fd, r;

	if ((r = spec_open_private(path, &fd, err)) != POLICY_OK)
		return r;
	if ((data = malloc(POLICY_FILE_MAX + 1)) == NULL)
		r = policy_error_set(err, POLICY_ENOMEM, "out of memory");
	else if (read_bounded(fd, data, POLICY_FILE_MAX, &n) != 0)
		r = policy_error_set(err, POLICY_EIO,
		    "%s: unreadable or larger than %d bytes", path,
		    POLICY_FILE_MAX);
	else
		r = spec_load_text(s, data, n, path, err);
	free(data);
	close(fd);
	return r;
}

int
spec_load_text(struct session_spec *s, const char *data, size_t n,
    const char *path, struct policy_error *err)
{
	const struct spec_option *o;
	json_t *root, *v;
	json_error_t je;
	char where[600];
	const char *key;
	int r = POLICY_OK;

	if ((root = json_loadb(data, n, JSON_REJECT_DUPLICATES, &je)) == NULL)
		return policy_error_set(err, POLICY_EINPUT, "%s:%d:%d: %s",
		    path, je.line, je.column, je.text);
	if (!json_is_object(root))
		r = policy_error_set(err, POLICY_EINPUT,
		    "%s: must hold one JSON object", path);
	json_object_foreach(root, key, v) {
		if (r != POLICY_OK)
			break;
		snprintf(where, sizeof(where), "%s: %s", path, key);
		if ((o = spec_find(key)) == NULL || strchr(key, '-') != NULL)
			r = policy_error_set(err, POLICY_EINPUT,
			    "%s: unknown key (`cdsgated options` lists them)",
			    where);
		else if ((o->scope & SPEC_FILE) == 0)
			r = policy_error_set(err, POLICY_EINPUT,
			    "%s: may only be given on the command line", where);
		else
			r = spec_set_json(s, o, where, v, err);
	}
	json_decref(root);
	return r;
}

int
spec_read_secret(const char *path, const char *what, size_t min,
    size_t max, const char *charset, char **out, struct policy_error *err)
{
	char buf[SECRET_FILE_MAX + 1];
	size_t n, len, i;
	int fd, r;

	*out = NULL;
	if ((r = spec_open_private(path, &fd, err)) != POLICY_OK)
		return r;
	if (read_bounded(fd, buf, SECRET_FILE_MAX, &n) != 0 &&
	    n <= SECRET_FILE_MAX) {
		r = policy_error_set(err, POLICY_EIO, "%s: %s", path,
		    strerror(errno));
		goto out;
	}
	if (n > SECRET_FILE_MAX)
		n = SECRET_FILE_MAX;	/* only the first line matters */
	len = 0;
	while (len < n && buf[len] != '\n' && buf[len] != '\r' &&
	    buf[len] != '\0')
		len++;
	if (len < n && buf[len] == '\0') {
		r = policy_error_set(err, POLICY_EINPUT,
		    "%s: the %s contains a NUL byte", path, what);
		goto out;
	}
	if (len < min || len > max) {
		r = policy_error_set(err, POLICY_EINPUT,
		    "%s: the %s has %zu bytes; it must have %zu to %zu%s",
		    path, what, len, min, max, len > max && max ==
		    SPEC_PASSWORD_MAX ? " (VNC authentication uses 8; "
		    "clients would silently cut a longer one)" : "");
		goto out;
	}
	for (i = 0; charset != NULL && i < len; i++)
		if (strchr(charset, buf[i]) == NULL) {
			r = policy_error_set(err, POLICY_EINPUT,
			    "%s: the %s may only contain %s", path, what,
			    "A-Z a-z 0-9 - . _ ~");
			goto out;
		}
	if ((*out = malloc(len + 1)) == NULL) {
		r = policy_error_set(err, POLICY_ENOMEM, "out of memory");
		goto out;
	}
	memcpy(*out, buf, len);
	(*out)[len] = '\0';
	r = POLICY_OK;
out:
	explicit_bzero(buf, sizeof(buf));
	close(fd);
	return r;
}

/* Whole small files (certificates, keys, credentials): a private one
 * must not even be readable by group or others. */
int
spec_read_file(const char *path, const char *what, size_t max, int private,
    char **out, size_t *lenp, struct policy_error *err)
{
	struct stat st;
	size_t n;
	char *data = NULL;
	int fd, r;

	*out = NULL;
	*lenp = 0;
	if ((r = spec_open_private(path, &fd, err)) != POLICY_OK)
		return r;
	if (private && (fstat(fd, &st) != 0 || (st.st_mode & 077) != 0)) {
		r = policy_error_set(err, POLICY_EPERM,
		    "%s: the %s has mode %04o; it must not be group/world "
		    "readable or writable (chmod 600)", path, what,
		    (unsigned)(st.st_mode & 07777));
		goto out;
	}
	if ((data = malloc(max + 2)) == NULL) {
		r = policy_error_set(err, POLICY_ENOMEM, "out of memory");
		goto out;
	}
	if (read_bounded(fd, data, max, &n) != 0) {
		r = policy_error_set(err, POLICY_EINPUT, "%s: the %s is "
		    "unreadable or longer than %zu bytes", path, what, max);
		goto out;
	}
	data[n] = '\0';
	*out = data;
	*lenp = n;
	data = NULL;	/* transferred */
	r = POLICY_OK;
out:
	if (data != NULL) {
		explicit_bzero(data, max + 2);
		free(data);
	}
	close(fd);
	return r;
}

/* ---- whole-spec checks and output ---- */

int
spec_allow_plain(const struct session_spec *s)
{
	struct spec_listen l;
	const uint8_t *a6;
	struct in6_addr in6;
	struct in_addr in4;

	if (s->allow_plain_vnc >= 0)
		return s->allow_plain_vnc;
	if (s->accept_from != NULL)	/* only the front door reaches it */
		return 1;
	if (s->listen == NULL || spec_listen_parse(s->listen, &l, NULL) != 0)
		return 0;
	if (l.family == AF_INET)
		return inet_pton(AF_INET, l.addr, &in4) == 1 &&
		    (ntohl(in4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, l.addr, &in6) != 1)
		return 0;
	a6 = in6.s6_addr;
	return IN6_IS_ADDR_LOOPBACK(&in6) || (IN6_IS_ADDR_V4MAPPED(&in6) &&
	    a6[12] == 127);
}

/* The TLS front door's files come as a set; off loopback, unencrypted
 * VNC is refused, so TLS is then required. */
static int
spec_check_tls(const struct session_spec *s, struct policy_error *err)
{
	if ((s->tls_cert == NULL) != (s->tls_key == NULL))
		return policy_error_set(err, POLICY_EINPUT,
		    "--tls-cert and --tls-key go together");
	if ((s->tls_cert == NULL) != (s->credentials_file == NULL))
		return policy_error_set(err, POLICY_EINPUT,
		    "--tls-cert needs --credentials-file and vice versa "
		    "(VeNCrypt clients log in by user name and password)");
	if (s->tls_cert == NULL && !spec_allow_plain(s))
		return policy_error_set(err, POLICY_EINPUT,
		    "unencrypted VNC is off for %s: give --tls-cert, --tls-key "
		    "and --credentials-file (or --allow-plain-vnc)", s->listen);
	return POLICY_OK;
}

int
spec_check(const struct session_spec *s, struct policy_error *err)
{
	if (s->backend == NULL)
		return policy_error_set(err, POLICY_EINPUT,
		    "--backend URL is required");
	if (s->listen == NULL)
		return policy_error_set(err, POLICY_EINPUT,
		    "--listen ADDR:PORT is required");
	if (s->password_file == NULL)
		return policy_error_set(err, POLICY_EINPUT,
		    "--password-file FILE is required");
	if (s->ws_origins != NULL && s->ws_token_file == NULL)
		return policy_error_set(err, POLICY_EINPUT,
		    "ws_origins is set but websockets are off (no "
		    "--ws-token-file)");
	return spec_check_tls(s, err);
}

json_t *
spec_to_json(const struct session_spec *s)
{
	const struct spec_option *o;
	json_t *j = json_object(), *v, *a;
	char geo[32];
	char **l;
	size_t i;

	for (i = 0; i < spec_noptions; i++) {
		o = &spec_options[i];
		switch (o->type) {
		case SPEC_STRING:
		case SPEC_PATH:
			v = *FIELD(s, o, char *) != NULL ?
			    json_string(*FIELD(s, o, char *)) : json_null();
			break;
		case SPEC_NUMBER:
			v = json_real(*FIELD(s, o, double));
			break;
		case SPEC_UINT:
			v = json_integer(*FIELD(s, o, unsigned));
			break;
		case SPEC_BOOL:
			v = json_boolean(*FIELD(s, o, int));
			break;
		case SPEC_GEOMETRY:
			snprintf(geo, sizeof(geo), "%ux%u", s->width,
			    s->height);
			v = json_string(geo);
			break;
		case SPEC_LIST:
			if ((l = *FIELD(s, o, char **)) == NULL) {
				v = json_null();
				break;
			}
			a = json_array();
			for (; *l != NULL; l++)
				json_array_append_new(a, json_string(*l));
			v = a;
			break;
		default:
			v = json_null();
		}
		json_object_set_new(j, o->name, v);
	}
	json_object_set_new(j, "allow_plain_vnc",
	    json_boolean(spec_allow_plain(s)));
	return j;
}
