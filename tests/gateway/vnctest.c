/*
 * tests/gateway/vnctest.c — cdsgate-vnctest, a scripted RFB client for the
 * gateway scenarios (tests/regress/02x-gateway-*.sh).
 *
 * It connects like a researcher's viewer would (libvncclient, VNC
 * password auth), then runs a sequence of commands over that one
 * connection: take a snapshot, type text at a human pace, press key
 * combinations, click (or press and release apart), flood keys, offer
 * clipboard text, watch for the server's clipboard, log the cursor
 * shapes it is sent, or just hold the session.  Test-only code: it trusts
 * its command line, but not the server — every server message it decodes
 * itself (ServerCutText, both forms) is length-checked.
 *
 * Exit codes: 0 all commands done; 1 a check failed (ServerCutText seen
 * by watch-cut, or expect-refused got in); 2 usage; 3 connection,
 * authentication or protocol failure; 4 timeout.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rfb/rfbclient.h>	/* with rfb/keysym.h: the XK_ names */

/* Exported by libvncclient (common/vncauth.c) but not declared in its
 * headers: DES-encrypt 16 bytes in place with an 8-byte VNC password. */
extern void rfbClientEncryptBytes(unsigned char *bytes, char *passwd);

enum {
	EXIT_OK = 0,
	EXIT_CHECK = 1,
	EXIT_USAGE = 2,
	EXIT_CONN = 3,
	EXIT_TIMEOUT = 4,
};

/* The longest server clipboard message we accept before calling the
 * server broken (the gateway should send none at all). */
#define CUT_MAX		(16u * 1024 * 1024)

static struct {
	const char	*host;
	int		 port;
	const char	*password_file;
	double		 rate;		/* key presses per second for type/keys */
	int		 timeout;	/* whole run, seconds */
	int		 ext_clipboard;	/* advertise the extended clipboard */
	int		 verbose;
	int		 stamp;		/* print each key press's send time */
	const char	*user;		/* VeNCrypt Plain user (--user) */
	const char	*ca;		/* CA file for X509 (--ca) */
	const char	*cursor_log;	/* ask for cursor shapes, log them */
} opt = { "127.0.0.1", 5900, NULL, 8.0, 60, 1, 0, 0, NULL, NULL, NULL };

static char	*password;		/* from --password-file */

/* What the connection saw; filled by the message pump. */
static struct {
	unsigned long	 fbu;		/* FramebufferUpdates completed */
	unsigned long	 cut_legacy;	/* ServerCutText, classic form */
	unsigned long	 cut_ext;	/* extended form carrying data/actions */
	unsigned long	 cut_caps;	/* extended form, capabilities only */
	uint8_t		*covered;	/* per pixel: seen since snapshot_begin */
	size_t		 ncovered;
	int		 sync_pending;	/* waiting for pixel (0,0) */
	unsigned long	 cursors;	/* cursor shapes received */
	FILE		*cursor_log;
} seen;

/* The last few libvncclient messages, to explain a failed connect. */
static char	 liblog[2048];

static volatile sig_atomic_t stop_requested;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
msg(const char *fmt, ...)
{
	va_list ap;

	fputs("cdsgate-vnctest: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* libvncclient's logger: keep the tail for diagnosis, echo if -v. */
static void
lib_log(const char *fmt, ...)
{
	char line[512];
	size_t have, n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (opt.verbose)
		fprintf(stderr, "libvncclient: %s", line);
	have = strlen(liblog);
	n = strlen(line);
	if (have + n >= sizeof(liblog)) {
		/* keep the newest: drop the older half */
		memmove(liblog, liblog + have / 2, have - have / 2 + 1);
		have = strlen(liblog);
	}
	if (have + n < sizeof(liblog))
		memcpy(liblog + have, line, n + 1);
}

static void
on_alarm(int sig)
{
	static const char m[] = "cdsgate-vnctest: timeout\n";

	(void)sig;
	(void)write(STDERR_FILENO, m, sizeof(m) - 1);
	_exit(EXIT_TIMEOUT);
}

static void
on_term(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* libvncclient asks for the password when the server wants VncAuth; the
 * default would prompt on the terminal. */
static char *
get_password(rfbClient *c)
{
	(void)c;
	return strdup(password != NULL ? password : "");
}

/* libvncclient 0.9.14 never frees the GnuTLS credentials it makes for
 * VeNCrypt (client side, not our code): keep sanitizer builds of this
 * test client from failing on exactly that.  Unused without LSan. */
const char *__lsan_default_suppressions(void);
const char *
__lsan_default_suppressions(void)
{
	return "leak:libgnutls.so\nleak:libtasn1.so\n";
}

/* VeNCrypt: libvncclient asks for the CA to verify the server with
 * (X509 subtypes) and for user name and password (the Plain part).
 * Without --user we have no credentials and the connection fails. */
static rfbCredential *
get_credential(rfbClient *c, int type)
{
	rfbCredential *cr;

	(void)c;
	if ((cr = calloc(1, sizeof(*cr))) == NULL)
		return NULL;
	if (type == rfbCredentialTypeX509 && opt.ca != NULL) {
		cr->x509Credential.x509CACertFile = strdup(opt.ca);
		cr->x509Credential.x509CrlVerifyMode = rfbX509CrlVerifyNone;
		return cr;
	}
	if (type == rfbCredentialTypeUser && opt.user != NULL) {
		cr->userCredential.username = strdup(opt.user);
		cr->userCredential.password = strdup(password != NULL ?
		    password : "");
		return cr;
	}
	free(cr);
	return NULL;
}

/* Read the first line of a password file (trailing CR/LF dropped). */
static char *
read_password(const char *path)
{
	char buf[256];
	FILE *f;
	size_t n;

	if ((f = fopen(path, "r")) == NULL) {
		msg("%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fgets(buf, sizeof(buf), f) == NULL)
		buf[0] = '\0';
	fclose(f);
	n = strcspn(buf, "\r\n");
	buf[n] = '\0';
	return strdup(buf);
}

static void
on_update(rfbClient *c, int x, int y, int w, int h)
{
	int yy, xx;

	if (seen.sync_pending && x == 0 && y == 0 && w > 0 && h > 0)
		seen.sync_pending = 0;
	if (seen.covered == NULL)
		return;
	for (yy = y; yy < y + h && yy < c->height; yy++) {
		uint8_t *row = seen.covered + (size_t)yy * c->width;

		for (xx = x; xx < x + w && xx < c->width; xx++)
			if (!row[xx]) {
				row[xx] = 1;
				seen.ncovered++;
			}
	}
}

static void
on_finished(rfbClient *c)
{
	(void)c;
	seen.fbu++;
}

/* A cursor shape (RichCursor or XCursor, decoded by libvncclient into
 * the client's pixel format): one line for --cursor-log, "cursor W H
 * XHOT YHOT BPP PIXELS-HEX MASK-HEX" (the mask one byte per pixel). */
static void
on_cursor(rfbClient *c, int xhot, int yhot, int w, int h, int bpp)
{
	size_t i, npix = (size_t)w * h;

	seen.cursors++;
	if (seen.cursor_log == NULL)
		return;
	fprintf(seen.cursor_log, "cursor %d %d %d %d %d ", w, h, xhot, yhot,
	    bpp);
	for (i = 0; c->rcSource != NULL && i < npix * (size_t)bpp; i++)
		fprintf(seen.cursor_log, "%02x", c->rcSource[i]);
	fputc(' ', seen.cursor_log);
	for (i = 0; c->rcMask != NULL && i < npix; i++)
		fprintf(seen.cursor_log, "%02x", c->rcMask[i]);
	fputc('\n', seen.cursor_log);
	fflush(seen.cursor_log);
}

/* Only reached if libvncclient itself parsed a ServerCutText, which the
 * pump below prevents; counted all the same. */
static void
on_cut(rfbClient *c, const char *text, int len)
{
	(void)c;
	seen.cut_legacy++;
	msg("ServerCutText (classic, %d bytes) via libvncclient: \"%.60s\"",
	    len, text);
}

/* Read and classify one ServerCutText ourselves: libvncclient 0.9.14
 * takes the length as unsigned and would try to read ~4 GiB for the
 * extended (negative-length) form. */
static int
read_cut(rfbClient *c)
{
	unsigned char hdr[8];
	uint32_t u;
	int32_t len;
	size_t n;
	char *data;

	if (!ReadFromRFBServer(c, (char *)hdr, sizeof(hdr)))
		return -1;
	memcpy(&u, hdr + 4, 4);
	len = (int32_t)ntohl(u);
	n = len < 0 ? (size_t)-(int64_t)len : (size_t)len;
	if (n > CUT_MAX) {
		msg("ServerCutText of %zu bytes: refusing to read it", n);
		seen.cut_legacy++;
		return -1;
	}
	/* Counted from the header: a server may announce more than it
	 * sends (LibVNCServer 0.9.14's rfbSendServerCutTextUTF8 does, to
	 * classic clients), and the attempt is what matters. */
	if (len >= 0)
		seen.cut_legacy++;
	if ((data = malloc(n + 1)) == NULL)
		return -1;
	if (n > 0 && !ReadFromRFBServer(c, data, (unsigned int)n)) {
		msg("ServerCutText announced %zu bytes; the connection broke "
		    "while reading them", n);
		if (len < 0)
			seen.cut_ext++;
		free(data);
		return -1;
	}
	data[n] = '\0';
	if (len >= 0)
		msg("ServerCutText (classic, %zu bytes): \"%.60s\"", n, data);
	else if (n < 4) {
		seen.cut_ext++;
		msg("ServerCutText (extended, %zu bytes, too short)", n);
	} else {
		uint32_t flags;

		memcpy(&flags, data, 4);
		flags = ntohl(flags);
		/* With the Caps bit the action bits list what the server
		 * supports; no clipboard content travels in it. */
		if ((flags & rfbExtendedClipboard_Caps) != 0) {
			seen.cut_caps++;
			msg("note: server announced extended clipboard "
			    "capabilities 0x%08x", flags);
		} else {
			seen.cut_ext++;
			msg("ServerCutText (extended, flags 0x%08x, %zu bytes)",
			    flags, n);
		}
	}
	free(data);
	return 0;
}

/* Handle one server message; ServerCutText is decoded here, the rest by
 * libvncclient.  Returns -1 when the connection is gone or broken. */
static int
handle_one(rfbClient *c)
{
	unsigned char type;
	ssize_t r;

	if (c->buffered > 0)
		type = (unsigned char)*c->bufoutptr;
	else if (c->tlsSession != NULL)
		type = 0;	/* ciphertext: libvncclient decodes all */
	else {
		do
			r = recv(c->sock, &type, 1, MSG_PEEK);
		while (r < 0 && errno == EINTR);
		if (r <= 0) {
			msg("server closed the connection%s%s",
			    r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
			return -1;
		}
	}
	if (type == rfbServerCutText)
		return read_cut(c);
	if (!HandleRFBServerMessage(c)) {
		msg("lost the connection (message type %u)", type);
		return -1;
	}
	return 0;
}

/* Process server messages for `secs` seconds (at least one poll). */
static int
pump(rfbClient *c, double secs)
{
	double end = now() + secs, left;
	int n;

	for (;;) {
		left = end - now();
		if (stop_requested)
			return 0;
		if (c->buffered == 0) {
			if (left <= 0)
				return 0;
			n = WaitForMessage(c, (unsigned int)(left * 1e6) + 1);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				msg("wait: %s", strerror(errno));
				return -1;
			}
			if (n == 0)
				continue;
		}
		if (handle_one(c) < 0)
			return -1;
	}
}

/* Pump until *flag drops to 0 or the deadline passes. */
static int
pump_until(rfbClient *c, int *flag, double secs, const char *what)
{
	double end = now() + secs;

	while (*flag) {
		if (now() > end) {
			msg("%s: no answer from the server in %.1f s", what,
			    secs);
			return -1;
		}
		if (pump(c, 0.02) < 0)
			return -1;
	}
	return 0;
}

/* Round trip: a non-incremental update request for pixel (0,0) is
 * answered only after the server has processed everything sent before. */
static int
sync_server(rfbClient *c)
{
	seen.sync_pending = 1;
	if (!SendFramebufferUpdateRequest(c, 0, 0, 1, 1, FALSE))
		return -1;
	return pump_until(c, &seen.sync_pending, 10, "sync");
}

/* Advertise the extended clipboard besides a plain encoding list, so a
 * server that would offer clipboard data in either form gets the chance
 * to (and the tests see it). */
static int
send_encodings(rfbClient *c)
{
	static const int32_t encs[] = {
		rfbEncodingRaw, rfbEncodingCopyRect, rfbEncodingHextile,
		rfbEncodingZlib, rfbEncodingZRLE, rfbEncodingLastRect,
		(int32_t)rfbEncodingExtendedClipboard,
		/* with --cursor-log only: */
		rfbEncodingRichCursor, rfbEncodingXCursor, rfbEncodingPointerPos,
	};
	size_t n = sizeof(encs) / sizeof(encs[0]) - (opt.cursor_log ? 0 : 3);
	unsigned char m[4 + 4 * (sizeof(encs) / sizeof(encs[0]))];
	size_t i;

	m[0] = rfbSetEncodings;
	m[1] = 0;
	m[2] = 0;
	m[3] = (unsigned char)n;
	for (i = 0; i < n; i++) {
		uint32_t be = htonl((uint32_t)encs[i]);

		memcpy(m + 4 + 4 * i, &be, 4);
	}
	return WriteToRFBServer(c, (const char *)m, 4 + 4 * n) ? 0 : -1;
}

/* ---- keys ---- */

struct keyname {
	const char	*name;
	uint32_t	 keysym;
};

static const struct keyname keynames[] = {
	{ "Escape", XK_Escape }, { "Esc", XK_Escape },
	{ "Return", XK_Return }, { "Enter", XK_Return },
	{ "Tab", XK_Tab }, { "BackSpace", XK_BackSpace },
	{ "Delete", XK_Delete }, { "Del", XK_Delete },
	{ "Insert", 0xff63 }, { "Home", 0xff50 }, { "End", 0xff57 },
	{ "Left", 0xff51 }, { "Up", 0xff52 }, { "Right", 0xff53 },
	{ "Down", 0xff54 }, { "Page_Up", 0xff55 }, { "Prior", 0xff55 },
	{ "Page_Down", 0xff56 }, { "Next", 0xff56 },
	{ "Menu", 0xff67 }, { "Print", 0xff61 }, { "Pause", 0xff13 },
	{ "Scroll_Lock", 0xff14 }, { "Sys_Req", 0xff15 },
	{ "space", ' ' }, { "plus", '+' }, { "minus", '-' },
	{ "Shift_L", XK_Shift_L }, { "Shift_R", 0xffe2 },
	{ "Control_L", XK_Control_L }, { "Control_R", 0xffe4 },
	{ "Alt_L", XK_Alt_L }, { "Alt_R", 0xffea },
	{ "Meta_L", XK_Meta_L }, { "Super_L", XK_Super_L },
	{ "ISO_Level3_Shift", XK_ISO_Level3_Shift },
};

static const struct keyname modnames[] = {
	{ "ctrl", XK_Control_L }, { "control", XK_Control_L },
	{ "shift", XK_Shift_L }, { "alt", XK_Alt_L }, { "meta", XK_Meta_L },
	{ "super", XK_Super_L }, { "win", XK_Super_L },
	{ "altgr", XK_ISO_Level3_Shift },
};

/* Decode one UTF-8 code point; returns its length or 0 if invalid. */
static size_t
utf8_next(const char *s, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n, i;

	if (u[0] < 0x80) {
		*cp = u[0];
		return 1;
	}
	if ((u[0] & 0xe0) == 0xc0) {
		*cp = u[0] & 0x1f;
		n = 2;
	} else if ((u[0] & 0xf0) == 0xe0) {
		*cp = u[0] & 0x0f;
		n = 3;
	} else if ((u[0] & 0xf8) == 0xf0) {
		*cp = u[0] & 0x07;
		n = 4;
	} else
		return 0;
	for (i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return 0;
		*cp = (*cp << 6) | (u[i] & 0x3f);
	}
	return n;
}

/* The keysym for a character, and whether a US keyboard needs Shift for
 * it — what a real viewer sends: Shift_L down, then the shifted keysym. */
static uint32_t
char_keysym(uint32_t cp, int *shift)
{
	*shift = 0;
	switch (cp) {
	case '\n':
		return XK_Return;
	case '\t':
		return XK_Tab;
	case '\b':
		return XK_BackSpace;
	case 0x1b:
		return XK_Escape;
	}
	if (cp >= 'A' && cp <= 'Z')
		*shift = 1;
	else if (cp < 0x80 && strchr("~!@#$%^&*()_+{}|:\"<>?", (int)cp) != NULL)
		*shift = 1;
	if ((cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xff))
		return cp;
	return 0x01000000 | cp;		/* X's Unicode keysyms */
}

/* Parse a key name: a single character, a known name, F1..F35 or 0xNNNN. */
static int
parse_key(const char *s, uint32_t *ks)
{
	size_t i, n;
	uint32_t cp;
	char *end;

	for (i = 0; i < sizeof(keynames) / sizeof(keynames[0]); i++)
		if (strcasecmp(s, keynames[i].name) == 0) {
			*ks = keynames[i].keysym;
			return 0;
		}
	if ((s[0] == 'F' || s[0] == 'f') && s[1] >= '1' && s[1] <= '9') {
		long f = strtol(s + 1, &end, 10);

		if (*end == '\0' && f >= 1 && f <= 35) {
			*ks = XK_F1 + (uint32_t)f - 1;
			return 0;
		}
	}
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && s[2] != '\0') {
		unsigned long v = strtoul(s + 2, &end, 16);

		if (*end == '\0' && v <= 0x1fffffff) {
			*ks = (uint32_t)v;
			return 0;
		}
	}
	n = utf8_next(s, &cp);
	if (n > 0 && s[n] == '\0') {
		int shift;

		*ks = char_keysym(cp, &shift);
		return 0;
	}
	return -1;
}

/* Paces key presses: the next press may go out no earlier than this. */
static double next_press;

static int
wait_press_slot(rfbClient *c)
{
	double t = now();

	if (next_press > t && pump(c, next_press - t) < 0)
		return -1;
	next_press = (next_press > t ? next_press : t) + 1.0 / opt.rate;
	return 0;
}

static int
key(rfbClient *c, uint32_t ks, int down)
{
	if (opt.verbose)
		msg("key 0x%04x %s", ks, down ? "down" : "up");
	if (opt.stamp && down) {	/* for bench/gateway's latency */
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		printf("keysent 0x%04x %.6f\n", ks, (double)ts.tv_sec +
		    ts.tv_nsec / 1e9);
	}
	if (!SendKeyEvent(c, ks, down ? TRUE : FALSE)) {
		msg("sending a key event failed");
		return -1;
	}
	return 0;
}

/* Press (and later release) modifiers then one key, paced. */
static int
press_combo(rfbClient *c, const uint32_t *mods, int nmods, uint32_t ks)
{
	int i;

	for (i = 0; i < nmods; i++)
		if (wait_press_slot(c) < 0 || key(c, mods[i], 1) < 0)
			return -1;
	if (wait_press_slot(c) < 0 || key(c, ks, 1) < 0)
		return -1;
	if (pump(c, 0.03) < 0 || key(c, ks, 0) < 0)
		return -1;
	for (i = nmods - 1; i >= 0; i--)
		if (key(c, mods[i], 0) < 0)
			return -1;
	return 0;
}

static int
cmd_type(rfbClient *c, const char *text)
{
	uint32_t mods[1] = { XK_Shift_L }, cp, ks;
	size_t n, chars = 0;
	double t0 = now();
	int shift;

	while (*text != '\0') {
		if ((n = utf8_next(text, &cp)) == 0) {
			msg("type: invalid UTF-8");
			return EXIT_USAGE;
		}
		text += n;
		ks = char_keysym(cp, &shift);
		if (press_combo(c, mods, shift, ks) < 0)
			return EXIT_CONN;
		chars++;
	}
	if (sync_server(c) < 0)
		return EXIT_CONN;
	printf("type chars=%zu seconds=%.3f\n", chars, now() - t0);
	return EXIT_OK;
}

/* Parse one spec like ctrl+shift+i, alt+F4, shift+Escape, F12, ctrl++
 * into modifier keysyms and the key's keysym. */
static int
parse_combo(const char *spec, uint32_t mods[8], int *nmods, uint32_t *ks)
{
	char buf[128], *tok, *next;
	size_t i;

	*nmods = 0;
	if (snprintf(buf, sizeof(buf), "%s", spec) >= (int)sizeof(buf))
		return -1;
	tok = buf;
	for (;;) {
		/* a trailing '+' is the key itself: "ctrl++" */
		next = strchr(tok[0] == '+' ? tok + 1 : tok, '+');
		if (next == NULL)
			break;
		*next = '\0';
		for (i = 0; i < sizeof(modnames) / sizeof(modnames[0]); i++)
			if (strcasecmp(tok, modnames[i].name) == 0)
				break;
		if (i == sizeof(modnames) / sizeof(modnames[0]) || *nmods == 8)
			return -1;
		mods[(*nmods)++] = modnames[i].keysym;
		tok = next + 1;
	}
	return *tok == '\0' ? -1 : parse_key(tok, ks);
}

static int
cmd_key_spec(rfbClient *c, const char *spec)
{
	uint32_t mods[8], ks = 0;
	int nmods;

	if (parse_combo(spec, mods, &nmods, &ks) < 0) {
		msg("keys: cannot parse \"%s\"", spec);
		return EXIT_USAGE;
	}
	if (press_combo(c, mods, nmods, ks) < 0)
		return EXIT_CONN;
	printf("keys %s\n", spec);
	return EXIT_OK;
}

static int
cmd_click(rfbClient *c, int x, int y, int button)
{
	int mask = 1 << (button - 1);

	if (!SendPointerEvent(c, x, y, 0) || pump(c, 0.05) < 0 ||
	    !SendPointerEvent(c, x, y, mask) || pump(c, 0.08) < 0 ||
	    !SendPointerEvent(c, x, y, 0) || sync_server(c) < 0)
		return EXIT_CONN;
	printf("click x=%d y=%d button=%d\n", x, y, button);
	return EXIT_OK;
}

/* press/release X Y [BUTTON]: one half of a click, e.g. to press a
 * modifier between the two.  The mask holds only this button. */
static int
cmd_button(rfbClient *c, int x, int y, int button, int down)
{
	if (!SendPointerEvent(c, x, y, down ? 1 << (button - 1) : 0) ||
	    sync_server(c) < 0)
		return EXIT_CONN;
	printf("%s x=%d y=%d button=%d\n", down ? "press" : "release", x, y,
	    button);
	return EXIT_OK;
}

/* keydown/keyup SPEC: press (or release) a key or a combination's keys
 * and leave them so, e.g. to hold ctrl across a click. */
static int
cmd_key_hold(rfbClient *c, const char *spec, int down)
{
	uint32_t mods[8], ks = 0;
	int nmods = 0, i;
	size_t m;

	/* a modifier's own name ("ctrl") is that modifier key */
	for (m = 0; m < sizeof(modnames) / sizeof(modnames[0]); m++)
		if (strcasecmp(spec, modnames[m].name) == 0)
			ks = modnames[m].keysym;
	if (ks == 0 && parse_combo(spec, mods, &nmods, &ks) < 0) {
		msg("keydown/keyup: cannot parse \"%s\"", spec);
		return EXIT_USAGE;
	}
	for (i = 0; i < nmods; i++)
		if (key(c, mods[down ? i : nmods - 1 - i], down) < 0)
			return EXIT_CONN;
	if (key(c, ks, down) < 0 || sync_server(c) < 0)
		return EXIT_CONN;
	printf("%s %s\n", down ? "keydown" : "keyup", spec);
	return EXIT_OK;
}

/* Drag with a button held: press at (x0,y0), move in steps to (x1,y1)
 * at a human pace (drag-and-drop needs motion after the press), release. */
static int
cmd_drag(rfbClient *c, int x0, int y0, int x1, int y1, int button)
{
	int mask = 1 << (button - 1), i, steps = 12;

	if (!SendPointerEvent(c, x0, y0, 0) || pump(c, 0.05) < 0 ||
	    !SendPointerEvent(c, x0, y0, mask) || pump(c, 0.15) < 0)
		return EXIT_CONN;
	for (i = 1; i <= steps; i++)
		if (!SendPointerEvent(c, x0 + (x1 - x0) * i / steps,
		    y0 + (y1 - y0) * i / steps, mask) || pump(c, 0.04) < 0)
			return EXIT_CONN;
	if (pump(c, 0.2) < 0 || !SendPointerEvent(c, x1, y1, 0) ||
	    sync_server(c) < 0)
		return EXIT_CONN;
	printf("drag %d,%d to %d,%d button=%d\n", x0, y0, x1, y1, button);
	return EXIT_OK;
}

/* A key held down as a viewer's auto-repeat sends it: N presses without
 * a release, at `rate` per second, then one release. */
static int
cmd_repeat(rfbClient *c, uint32_t ks, long n, double rate)
{
	long i;

	for (i = 0; i < n; i++)
		if (key(c, ks, 1) < 0 || pump(c, 1.0 / rate) < 0)
			return EXIT_CONN;
	if (key(c, ks, 0) < 0 || sync_server(c) < 0)
		return EXIT_CONN;
	printf("repeat presses=%ld\n", n);
	return EXIT_OK;
}

/* N presses (each released) as fast as the socket takes them, then a
 * round trip so `elapsed` covers the server having processed them all. */
static int
cmd_burst(rfbClient *c, long n, uint32_t ks)
{
	double t0 = now(), t1;
	long i;

	for (i = 0; i < n; i++)
		if (!SendKeyEvent(c, ks, TRUE) || !SendKeyEvent(c, ks, FALSE))
			return EXIT_CONN;
	t1 = now();
	if (sync_server(c) < 0)
		return EXIT_CONN;
	printf("burst sent=%ld send_seconds=%.3f elapsed_seconds=%.3f\n", n,
	    t1 - t0, now() - t0);
	next_press = now();
	return EXIT_OK;
}

/* ClientCutText, classic form: the bytes as given. */
static int
cmd_cut(rfbClient *c, const char *text)
{
	unsigned char hdr[8] = { rfbClientCutText, 0, 0, 0 };
	uint32_t be = htonl((uint32_t)strlen(text));

	memcpy(hdr + 4, &be, 4);
	if (!WriteToRFBServer(c, (const char *)hdr, sizeof(hdr)) ||
	    !WriteToRFBServer(c, text, (unsigned int)strlen(text)) ||
	    sync_server(c) < 0)
		return EXIT_CONN;
	printf("cut bytes=%zu\n", strlen(text));
	return EXIT_OK;
}

/* ClientCutText, extended form (the UTF-8 clipboard of TigerVNC/noVNC):
 * a Notify, then a Provide whose payload is a zlib stream of
 * [u32 size][text NUL].  The stream is written with stored blocks (no
 * libz here) and left open with a sync-flush marker, as real clients do:
 * LibVNCServer treats a finished stream as an error. */
static int
cmd_cut_ext(rfbClient *c, const char *text)
{
	size_t tl = strlen(text) + 1, pl = 4 + tl, zl, ml;
	unsigned char *m, *p;
	uint32_t be, len32 = htonl((uint32_t)tl);
	unsigned char notify[12] = { rfbClientCutText, 0, 0, 0 };
	int rc = EXIT_CONN;

	if (pl > 65535) {
		msg("cut-ext: text too long for one stored block");
		return EXIT_USAGE;
	}
	be = htonl((uint32_t)-4);
	memcpy(notify + 4, &be, 4);
	be = htonl(rfbExtendedClipboard_Notify | rfbExtendedClipboard_Text);
	memcpy(notify + 8, &be, 4);

	zl = 2 + 5 + pl + 5;		/* header, block, sync marker */
	ml = 8 + 4 + zl;
	if ((m = malloc(ml)) == NULL)
		return EXIT_CONN;
	p = m;
	*p++ = rfbClientCutText;
	*p++ = 0;
	*p++ = 0;
	*p++ = 0;
	be = htonl((uint32_t)-(int32_t)(4 + zl));
	memcpy(p, &be, 4);
	p += 4;
	be = htonl(rfbExtendedClipboard_Provide | rfbExtendedClipboard_Text);
	memcpy(p, &be, 4);
	p += 4;
	*p++ = 0x78;			/* zlib header: deflate, 32K window */
	*p++ = 0x01;
	*p++ = 0x00;			/* stored block, not final */
	*p++ = pl & 0xff;
	*p++ = (pl >> 8) & 0xff;
	*p++ = ~pl & 0xff;
	*p++ = (~pl >> 8) & 0xff;
	memcpy(p, &len32, 4);
	memcpy(p + 4, text, tl);
	p += pl;
	memcpy(p, "\x00\x00\x00\xff\xff", 5);	/* sync flush */
	if (WriteToRFBServer(c, (const char *)notify, sizeof(notify)) &&
	    WriteToRFBServer(c, (const char *)m, (unsigned int)ml) &&
	    sync_server(c) == 0) {
		printf("cut-ext bytes=%zu\n", tl - 1);
		rc = EXIT_OK;
	}
	free(m);
	return rc;
}

/* Request the whole screen and wait until every pixel has arrived. */
static int
cmd_snapshot(rfbClient *c, const char *out)
{
	size_t total = (size_t)c->width * c->height, i;
	unsigned char *rgb = NULL;
	double end = now() + 15;
	int rc = EXIT_CONN;
	FILE *f;

	free(seen.covered);
	if ((seen.covered = calloc(total, 1)) == NULL)
		return EXIT_CONN;
	seen.ncovered = 0;
	if (!SendFramebufferUpdateRequest(c, 0, 0, c->width, c->height, FALSE))
		goto out;
	while (seen.ncovered < total) {
		if (now() > end) {
			msg("snapshot: only %zu of %zu pixels arrived",
			    seen.ncovered, total);
			goto out;
		}
		if (pump(c, 0.02) < 0)
			goto out;
	}
	if ((rgb = malloc(total * 3)) == NULL)
		goto out;
	for (i = 0; i < total; i++) {
		const rfbPixelFormat *pf = &c->format;
		uint32_t px;

		memcpy(&px, c->frameBuffer + i * 4, 4);
		rgb[3 * i] = ((px >> pf->redShift) & pf->redMax) * 255 /
		    pf->redMax;
		rgb[3 * i + 1] = ((px >> pf->greenShift) & pf->greenMax) *
		    255 / pf->greenMax;
		rgb[3 * i + 2] = ((px >> pf->blueShift) & pf->blueMax) * 255 /
		    pf->blueMax;
	}
	if ((f = fopen(out, "wb")) == NULL) {
		msg("%s: %s", out, strerror(errno));
		rc = EXIT_USAGE;
		goto out;
	}
	fprintf(f, "P6\n%d %d\n255\n", c->width, c->height);
	if (fwrite(rgb, 3, total, f) != total || fclose(f) != 0) {
		msg("%s: write failed", out);
		rc = EXIT_USAGE;
		goto out;
	}
	printf("snapshot %s %dx%d\n", out, c->width, c->height);
	rc = EXIT_OK;
out:
	free(rgb);
	free(seen.covered);
	seen.covered = NULL;
	return rc;
}

static int
cmd_watch_cut(rfbClient *c, double secs)
{
	if (pump(c, secs) < 0)
		return EXIT_CONN;
	printf("watch-cut seconds=%.1f server_cut_text=%lu extended=%lu "
	    "caps_only=%lu\n", secs, seen.cut_legacy, seen.cut_ext,
	    seen.cut_caps);
	return seen.cut_legacy + seen.cut_ext > 0 ? EXIT_CHECK : EXIT_OK;
}

/* The pixel at (x, y) of the client's framebuffer (32 bpp), or 0. */
static uint32_t
pixel_at(rfbClient *c, int x, int y)
{
	uint32_t px = 0;

	if (x >= 0 && y >= 0 && x < c->width && y < c->height &&
	    c->format.bitsPerPixel == 32)
		memcpy(&px, c->frameBuffer + ((size_t)y * c->width + x) * 4, 4);
	return px;
}

/* Every update as it arrives: wait until the pixel at (x, y) has changed
 * n times (a page that changes it now and then; sampling snapshots
 * instead can alias with a periodic change and see one value). */
static int
cmd_flips(rfbClient *c, int n, double secs, int x, int y)
{
	double end = now() + secs, t0 = now();
	unsigned long fbu = seen.fbu;
	uint32_t last = pixel_at(c, x, y), px;
	int flips = 0;

	if (!SendFramebufferUpdateRequest(c, 0, 0, c->width, c->height, FALSE))
		return EXIT_CONN;
	while (flips < n && now() < end) {
		if (pump(c, 0.02) < 0)
			return EXIT_CONN;
		if (seen.fbu == fbu)
			continue;
		fbu = seen.fbu;
		if ((px = pixel_at(c, x, y)) != last) {
			flips++;
			printf("flip %d %.2f %06x\n", flips, now() - t0,
			    (unsigned)px & 0xffffff);
			last = px;
		}
	}
	printf("flips %d in %.1f s\n", flips, now() - t0);
	fflush(stdout);
	return flips >= n ? EXIT_OK : EXIT_CHECK;
}

/* Stay connected until the time is up, SIGTERM/SIGINT, or the server
 * closes (which is an error: holding means the session should last). */
static int
cmd_hold(rfbClient *c, double secs)
{
	double end = secs > 0 ? now() + secs : 0;

	printf("holding\n");
	fflush(stdout);
	while (!stop_requested && (end == 0 || now() < end))
		if (pump(c, 0.25) < 0)
			return EXIT_CONN;
	printf("hold done\n");
	return EXIT_OK;
}

/* Write a vncpasswd(1)-format file (DES with VNC's fixed key), for
 * vncsnapshot -passwd, without needing tigervnc-tools. */
static int
cmd_mkpasswd(const char *in, const char *out)
{
	static char fixedkey[] = { 23, 82, 107, 6, 35, 78, 88, 7, 0 };
	unsigned char block[16] = { 0 };
	char *pw;
	FILE *f;

	if ((pw = read_password(in)) == NULL)
		return EXIT_USAGE;
	memcpy(block, pw, strlen(pw) < 8 ? strlen(pw) : 8);
	free(pw);
	rfbClientEncryptBytes(block, fixedkey);
	if ((f = fopen(out, "wb")) == NULL || fwrite(block, 1, 8, f) != 8 ||
	    fclose(f) != 0) {
		msg("%s: cannot write", out);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

static void
usage(void)
{
	fputs(
"usage: cdsgate-vnctest [--host H] [--port P] [--password-file F]\n"
"           [--user NAME --ca CA.pem]  (VeNCrypt X509Plain; the password\n"
"                                       comes from --password-file)\n"
"           [--rate KEYS/S] [--timeout S] [--no-ext-clipboard] [--stamp] [-v]\n"
"           [--cursor-log FILE]  (ask for cursor shapes; one line each)\n"
"           COMMAND [ARGS] [COMMAND [ARGS]...]\n"
"       cdsgate-vnctest mkpasswd PLAIN-FILE VNCPASSWD-FILE\n"
"Commands run in order over one connection:\n"
"  snapshot OUT.ppm     request the whole screen, write it as PPM (P6)\n"
"  type TEXT            type TEXT, key by key at --rate (default 8/s)\n"
"  keys SPEC...         combos: ctrl+n ctrl+shift+i alt+F4 shift+Escape F12\n"
"  click X Y [BUTTON]   move, press and release (button 1..8, default 1)\n"
"  move X Y             move the pointer\n"
"  press X Y [BUTTON]   move there and press the button (default 1)\n"
"  release X Y [BUTTON] move there and release it\n"
"  drag X0 Y0 X1 Y1     press button 1 at X0 Y0, move to X1 Y1, release\n"
"  keydown SPEC         press a key or combination and keep it down\n"
"  keyup SPEC           release it\n"
"  repeat N KEY         auto-repeat: N presses of KEY at 30/s, one release\n"
"  burst N [KEY]        N presses of KEY (default k) as fast as possible\n"
"  cut TEXT             ClientCutText (classic)\n"
"  cut-ext TEXT         ClientCutText (extended clipboard, UTF-8)\n"
"  watch-cut SECONDS    wait; exit 1 if any ServerCutText arrived so far\n"
"  sleep SECONDS        wait, processing server messages\n"
"  sync                 round trip: the server processed all input\n"
"  hold [SECONDS]       stay connected (until SIGTERM if no SECONDS)\n"
"  flips N SECONDS X Y  exit 1 unless the pixel at X Y changes N times in\n"
"                       SECONDS (checked in every update that arrives)\n"
"  expect-refused       (alone) exit 0 iff the connection or auth is refused\n"
"  script               (alone) read command lists from stdin, one per line\n"
"                       ('quoted words' allowed); print \"done RC\" after each\n"
"--stamp prints \"keysent KEYSYM UNIXTIME\" on stdout as each key goes down.\n"
"Exit: 0 ok, 1 check failed, 2 usage, 3 connection/auth/protocol, 4 timeout\n",
	    stderr);
}

static int
is_command(const char *s)
{
	static const char *const cmds[] = { "snapshot", "type", "keys",
	    "click", "move", "press", "release", "burst", "cut", "cut-ext",
	    "watch-cut", "sleep",
	    "sync", "hold", "expect-refused", "drag", "keydown", "keyup",
	    "repeat", "script", "flips" };
	size_t i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(s, cmds[i]) == 0)
			return 1;
	return 0;
}

static int
parse_num(const char *s, double lo, double hi, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return (errno != 0 || end == s || *end != '\0' || *v < lo || *v > hi) ?
	    -1 : 0;
}

/* Check a command list before running it (argument counts, key specs);
 * 0, or EXIT_USAGE.  *watching is set if it holds watch-cut. */
static int
check_script(int argc, char **argv, int j, int *watching)
{
	while (j < argc) {
		const char *cmd = argv[j++];
		int need = 0;

		if (!is_command(cmd)) {
			msg("unknown command: %s", cmd);
			return EXIT_USAGE;
		}
		if (strcmp(cmd, "click") == 0 || strcmp(cmd, "move") == 0 ||
		    strcmp(cmd, "press") == 0 || strcmp(cmd, "release") == 0 ||
		    strcmp(cmd, "repeat") == 0)
			need = 2;
		else if (strcmp(cmd, "drag") == 0 || strcmp(cmd, "flips") == 0)
			need = 4;
		else if (strcmp(cmd, "keydown") == 0 ||
		    strcmp(cmd, "keyup") == 0)
			need = 1;
		else if (strcmp(cmd, "snapshot") == 0 ||
		    strcmp(cmd, "type") == 0 ||
		    strcmp(cmd, "burst") == 0 ||
		    strcmp(cmd, "cut") == 0 ||
		    strcmp(cmd, "cut-ext") == 0 ||
		    strcmp(cmd, "watch-cut") == 0 ||
		    strcmp(cmd, "sleep") == 0)
			need = 1;
		if (strcmp(cmd, "watch-cut") == 0)
			*watching = 1;
		if (argc - j < need) {
			msg("%s: missing argument", cmd);
			return EXIT_USAGE;
		}
		j += need;
		/* optional or variadic arguments: up to the next command */
		for (; j < argc && !is_command(argv[j]); j++) {
			uint32_t mods[8], ks;
			int nmods;

			if (strcmp(cmd, "keys") == 0 &&
			    parse_combo(argv[j], mods, &nmods, &ks) < 0) {
				msg("keys: cannot parse \"%s\"", argv[j]);
				return EXIT_USAGE;
			}
		}
	}
	return 0;
}

/* flips N SECONDS X Y, its four arguments checked. */
static int
run_flips(rfbClient *c, char **arg)
{
	double n, secs, x, y;

	if (parse_num(arg[0], 1, 1000, &n) < 0 ||
	    parse_num(arg[1], 0, 3600, &secs) < 0 ||
	    parse_num(arg[2], 0, 65535, &x) < 0 ||
	    parse_num(arg[3], 0, 65535, &y) < 0) {
		msg("flips: bad N, SECONDS, X or Y");
		return EXIT_USAGE;
	}
	return cmd_flips(c, (int)n, secs, (int)x, (int)y);
}

/* Run the commands argv[i..argc) over the connection; the first
 * failure's exit code, or EXIT_OK. */
static int
run_script(rfbClient *c, int argc, char **argv, int i)
{
	int rc = EXIT_OK;

	while (rc == EXIT_OK && i < argc && !stop_requested) {
		const char *cmd = argv[i++];
		double a, b, btn = 1;

		if (strcmp(cmd, "snapshot") == 0)
			rc = cmd_snapshot(c, argv[i++]);
		else if (strcmp(cmd, "type") == 0)
			rc = cmd_type(c, argv[i++]);
		else if (strcmp(cmd, "keys") == 0) {
			while (rc == EXIT_OK && i < argc && !is_command(argv[i]))
				rc = cmd_key_spec(c, argv[i++]);
			if (rc == EXIT_OK && sync_server(c) < 0)
				rc = EXIT_CONN;
		} else if (strcmp(cmd, "click") == 0 ||
		    strcmp(cmd, "move") == 0 || strcmp(cmd, "press") == 0 ||
		    strcmp(cmd, "release") == 0) {
			if (parse_num(argv[i], 0, c->width - 1, &a) < 0 ||
			    parse_num(argv[i + 1], 0, c->height - 1, &b) < 0) {
				msg("%s: bad coordinates %s %s (screen %dx%d)",
				    cmd, argv[i], argv[i + 1], c->width,
				    c->height);
				rc = EXIT_USAGE;
				break;
			}
			i += 2;
			if (i < argc && !is_command(argv[i]) &&
			    parse_num(argv[i++], 1, 8, &btn) < 0) {
				msg("click: bad button");
				rc = EXIT_USAGE;
				break;
			}
			if (strcmp(cmd, "move") == 0)
				rc = SendPointerEvent(c, (int)a, (int)b, 0) &&
				    sync_server(c) == 0 ? EXIT_OK : EXIT_CONN;
			else if (strcmp(cmd, "press") == 0 ||
			    strcmp(cmd, "release") == 0)
				rc = cmd_button(c, (int)a, (int)b, (int)btn,
				    strcmp(cmd, "press") == 0);
			else
				rc = cmd_click(c, (int)a, (int)b, (int)btn);
		} else if (strcmp(cmd, "drag") == 0) {
			double x1, y1;

			if (parse_num(argv[i], 0, c->width - 1, &a) < 0 ||
			    parse_num(argv[i + 1], 0, c->height - 1, &b) < 0 ||
			    parse_num(argv[i + 2], 0, c->width - 1, &x1) < 0 ||
			    parse_num(argv[i + 3], 0, c->height - 1, &y1) < 0) {
				msg("drag: bad coordinates");
				rc = EXIT_USAGE;
				break;
			}
			i += 4;
			rc = cmd_drag(c, (int)a, (int)b, (int)x1, (int)y1, 1);
		} else if (strcmp(cmd, "keydown") == 0 ||
		    strcmp(cmd, "keyup") == 0)
			rc = cmd_key_hold(c, argv[i++], cmd[3] == 'd');
		else if (strcmp(cmd, "repeat") == 0) {
			uint32_t ks;

			if (parse_num(argv[i], 1, 10000, &a) < 0 ||
			    parse_key(argv[i + 1], &ks) < 0) {
				msg("repeat: bad count or key");
				rc = EXIT_USAGE;
				break;
			}
			i += 2;
			rc = cmd_repeat(c, ks, (long)a, 30);
		} else if (strcmp(cmd, "burst") == 0) {
			uint32_t ks = 'k';

			if (parse_num(argv[i++], 1, 1e7, &a) < 0 ||
			    (i < argc && !is_command(argv[i]) &&
			    parse_key(argv[i++], &ks) < 0)) {
				msg("burst: bad count or key");
				rc = EXIT_USAGE;
				break;
			}
			rc = cmd_burst(c, (long)a, ks);
		} else if (strcmp(cmd, "cut") == 0)
			rc = cmd_cut(c, argv[i++]);
		else if (strcmp(cmd, "cut-ext") == 0)
			rc = cmd_cut_ext(c, argv[i++]);
		else if (strcmp(cmd, "watch-cut") == 0 ||
		    strcmp(cmd, "sleep") == 0) {
			if (parse_num(argv[i++], 0, 86400, &a) < 0) {
				msg("%s: bad seconds", cmd);
				rc = EXIT_USAGE;
				break;
			}
			if (strcmp(cmd, "sleep") == 0)
				rc = pump(c, a) < 0 ? EXIT_CONN : EXIT_OK;
			else
				rc = cmd_watch_cut(c, a);
		} else if (strcmp(cmd, "sync") == 0)
			rc = sync_server(c) < 0 ? EXIT_CONN : EXIT_OK;
		else if (strcmp(cmd, "flips") == 0) {
			rc = run_flips(c, argv + i);
			i += 4;
		}
		else if (strcmp(cmd, "hold") == 0) {
			a = 0;
			if (i < argc && !is_command(argv[i]) &&
			    parse_num(argv[i++], 0, 86400, &a) < 0) {
				msg("hold: bad seconds");
				rc = EXIT_USAGE;
				break;
			}
			alarm(0);
			rc = cmd_hold(c, a);
		} else if (strcmp(cmd, "expect-refused") == 0) {
			msg("expect-refused must be the only command");
			rc = EXIT_USAGE;
		}
	}
	return rc;
}

/* Split one script line into words: blanks separate them, '...' quotes
 * one (no escapes inside).  Returns the word count, -1 if too many or an
 * unterminated quote. */
static int
split_line(char *line, char **words, int max)
{
	int n = 0;
	char *p = line;

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (*p == '\0')
			return n;
		if (n == max)
			return -1;
		if (*p == '\'') {
			words[n++] = ++p;
			if ((p = strchr(p, '\'')) == NULL)
				return -1;
		} else {
			words[n++] = p;
			p += strcspn(p, " \t\r\n");
			if (*p == '\0')
				return n;
		}
		*p++ = '\0';
	}
}

/* script: one command list per line on stdin, run over this one
 * connection; after each, "done RC" on stdout.  Lets a test make many
 * attempts without a new connection (and authentication) for each. */
static int
run_stdin(rfbClient *c)
{
	char line[4096], *words[256];
	int n, rc, watching = 0;

	alarm(0);
	while (!stop_requested && fgets(line, sizeof(line), stdin) != NULL) {
		if ((n = split_line(line, words, 256)) < 0)
			rc = EXIT_USAGE;
		else if (n == 0)
			rc = EXIT_OK;
		else if ((rc = check_script(n, words, 0, &watching)) == 0) {
			alarm((unsigned int)opt.timeout);
			rc = run_script(c, n, words, 0);
			alarm(0);
		}
		printf("done %d\n", rc);
		fflush(stdout);
		if (rc == EXIT_CONN)
			return rc;
	}
	return EXIT_OK;
}

/* Classify why the connection did not come up, from libvncclient's log. */
static const char *
refusal_kind(void)
{
	/* libvncclient: "VNC connection failed: <server's reason>" or
	 * "VNC authentication failed" once a security type was chosen. */
	if (strcasestr(liblog, "auth") != NULL ||
	    strcasestr(liblog, "VNC connection failed") != NULL ||
	    strcasestr(liblog, "Selected Security Scheme") != NULL)
		return "auth";
	if (strcasestr(liblog, "unable to connect") != NULL ||
	    strcasestr(liblog, "refused") != NULL)
		return "connect";
	return "closed";
}

/* rfbClientCleanup leaves the framebuffer (the default allocator's) to us. */
static void
client_free(rfbClient *c)
{
	free(c->frameBuffer);
	c->frameBuffer = NULL;
	/* libvncclient 0.9.14 never frees the last cursor shape */
	free(c->rcSource);
	free(c->rcMask);
	c->rcSource = c->rcMask = NULL;
	rfbClientCleanup(c);
}

static rfbClient *
connect_server(void)
{
	rfbClient *c;

	if ((c = rfbGetClient(8, 3, 4)) == NULL)
		return NULL;
	free(c->serverHost);		/* rfbGetClient's "" */
	c->serverHost = strdup(opt.host);
	c->serverPort = opt.port;
	c->GetPassword = get_password;
	c->GetCredential = get_credential;
	if (opt.user == NULL) {	/* VNC password only, even if TLS is offered */
		static const uint32_t vncauth[] = { rfbVncAuth, rfbNoAuth };

		SetClientAuthSchemes(c, vncauth, 2);
	}
	c->GotFrameBufferUpdate = on_update;
	c->FinishedFrameBufferUpdate = on_finished;
	c->GotXCutText = on_cut;
	c->GotCursorShape = on_cursor;
	c->appData.useRemoteCursor = opt.cursor_log != NULL;
	c->connectTimeout = 10;
	c->readTimeout = 10;
	c->appData.encodingsString = "raw copyrect hextile zlib zrle";
	c->appData.shareDesktop = TRUE;
	if (!rfbInitClient(c, NULL, NULL))
		return NULL;		/* libvncclient freed c */
	return c;
}

int
main(int argc, char **argv)
{
	rfbClient *c;
	double v;
	int i, rc = EXIT_OK, want_refused = 0, watching = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	rfbClientLog = lib_log;
	rfbClientErr = lib_log;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
		const char *o = argv[i];

		if (strcmp(o, "-v") == 0 || strcmp(o, "--verbose") == 0) {
			opt.verbose = 1;
			continue;
		}
		if (strcmp(o, "--stamp") == 0) {
			opt.stamp = 1;
			continue;
		}
		if (strcmp(o, "--no-ext-clipboard") == 0) {
			opt.ext_clipboard = 0;
			continue;
		}
		if (strcmp(o, "-h") == 0 || strcmp(o, "--help") == 0) {
			usage();
			return EXIT_OK;
		}
		if (i + 1 >= argc) {
			usage();
			return EXIT_USAGE;
		}
		if (strcmp(o, "--host") == 0)
			opt.host = argv[++i];
		else if (strcmp(o, "--port") == 0 &&
		    parse_num(argv[i + 1], 1, 65535, &v) == 0) {
			opt.port = (int)v;
			i++;
		} else if (strcmp(o, "--password-file") == 0)
			opt.password_file = argv[++i];
		else if (strcmp(o, "--user") == 0)
			opt.user = argv[++i];
		else if (strcmp(o, "--ca") == 0)
			opt.ca = argv[++i];
		else if (strcmp(o, "--cursor-log") == 0)
			opt.cursor_log = argv[++i];
		else if (strcmp(o, "--rate") == 0 &&
		    parse_num(argv[i + 1], 0.1, 1000, &v) == 0) {
			opt.rate = v;
			i++;
		} else if (strcmp(o, "--timeout") == 0 &&
		    parse_num(argv[i + 1], 1, 86400, &v) == 0) {
			opt.timeout = (int)v;
			i++;
		} else {
			msg("bad option or value: %s %s", o, argv[i + 1]);
			return EXIT_USAGE;
		}
	}
	if (i < argc && strcmp(argv[i], "mkpasswd") == 0) {
		if (argc - i != 3) {
			usage();
			return EXIT_USAGE;
		}
		return cmd_mkpasswd(argv[i + 1], argv[i + 2]);
	}
	if (i >= argc) {
		usage();
		return EXIT_USAGE;
	}
	if (strcmp(argv[i], "expect-refused") == 0) {
		if (i + 1 != argc) {
			msg("expect-refused takes no other commands");
			return EXIT_USAGE;
		}
		want_refused = 1;
	}
	/* Check the whole script before connecting. */
	if ((rc = check_script(argc, argv, i, &watching)) != 0)
		return rc;

	if (opt.password_file != NULL &&
	    (password = read_password(opt.password_file)) == NULL)
		return EXIT_USAGE;
	if (opt.cursor_log != NULL &&
	    (seen.cursor_log = fopen(opt.cursor_log, "w")) == NULL) {
		msg("%s: %s", opt.cursor_log, strerror(errno));
		return EXIT_USAGE;
	}
	/* Over TLS we cannot peek at message types, and libvncclient 0.9.14
	 * mis-parses extended ServerCutText: do not ask for it. */
	if (opt.user != NULL)
		opt.ext_clipboard = 0;
	signal(SIGALRM, on_alarm);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	signal(SIGPIPE, SIG_IGN);
	alarm((unsigned int)opt.timeout);

	c = connect_server();
	if (want_refused) {
		if (c == NULL) {
			printf("refused: %s\n", refusal_kind());
			return EXIT_OK;
		}
		printf("connected: the server let us in (%dx%d)\n", c->width,
		    c->height);
		client_free(c);
		return EXIT_CHECK;
	}
	if (c == NULL) {
		msg("cannot connect to %s:%d (%s refused)", opt.host, opt.port,
		    refusal_kind());
		if (!opt.verbose && liblog[0] != '\0')
			fprintf(stderr, "%s", liblog);
		return EXIT_CONN;
	}
	if (opt.verbose)
		msg("connected: %dx%d \"%s\"", c->width, c->height,
		    c->desktopName != NULL ? c->desktopName : "");
	if (opt.ext_clipboard && send_encodings(c) < 0)
		rc = EXIT_CONN;
	next_press = now();

	if (rc == EXIT_OK && strcmp(argv[i], "script") == 0)
		rc = run_stdin(c);
	else if (rc == EXIT_OK)
		rc = run_script(c, argc, argv, i);
	if (seen.cut_legacy + seen.cut_ext > 0) {
		msg("the server sent clipboard data (%lu messages)",
		    seen.cut_legacy + seen.cut_ext);
		if (watching)
			rc = EXIT_CHECK;
	}
	if (seen.cursor_log != NULL) {
		printf("cursor shapes received: %lu\n", seen.cursors);
		fclose(seen.cursor_log);
	}
	client_free(c);
	free(password);
	return rc;
}
