/*
 * gateway/vnc.c — LibVNCServer behind a door of our own, driven from
 * the worker's poll loop (never rfbRunEventLoop, no library threads:
 * the seccomp filter is loaded before any thread could exist).
 *
 * Why a door: LibVNCServer blocks the whole process while it waits for
 * a peer (the websocket sniff, a half-sent message), has no notion of
 * how many strangers may connect, and does not check the websocket
 * Origin.  So connections are accepted by our door, looked at with MSG_PEEK
 * without blocking, and only the few that may proceed are handed to
 * rfbNewClient (the door: vnc-door.c; the TLS front door, which hands
 * connections to the tls process: vnc-front.c; what the three share:
 * vnc-int.h).  After that the library speaks RFB; we hook
 * authentication (role assignment, throttling, logging), the input
 * callbacks and the cut-text callbacks.  Trust: unprivileged; untrusted
 * network input.  The password is wiped when the server closes.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/select.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>
#include <rfb/rfb.h>

#include "common/ipc.h"
#include "common/log.h"
#include "gateway/clipboard.h"
#include "gateway/preauth.h"
#include "gateway/ratelimit.h"
#include "gateway/slog.h"
#include "gateway/tlsipc.h"
#include "gateway/vnc.h"
#include "gateway/vnc-int.h"
#include "gateway/websocket.h"
#include "gateway/vncscreen.h"

/* The one screen of this process: LibVNCServer's log hooks take no
 * context, so they find the rate limiter here. */
static struct vnc *vnc_current;
static rfbCursorPtr vnc_cursor_dot(const rfbPixelFormat *f);
#define VNC_DOT		5	/* the one cursor shape clients get */
static struct tbucket vnc_log_bucket;
static unsigned long vnc_log_quiet;

uint64_t
vnc_now(const struct vnc *v)
{
	return v->prm.clock();
}

/* Time since t; 0 if t is later (it may come from a fresher clock read). */
uint64_t
vnc_since(uint64_t now, uint64_t t)
{
	return now > t ? now - t : 0;
}

const char *
vnc_strerror(int status)
{
	switch (status) {
	case VNC_OK:		return "ok";
	case VNC_ENOMEM:	return "out of memory";
	case VNC_ECONFIG:	return "bad VNC configuration";
	case VNC_ELIB:		return "LibVNCServer set-up failed";
	}
	return "unknown VNC error";
}

/* ---- logging ---------------------------------------------------------- */

/*
 * LibVNCServer reads a ClientCutText's length and, over 1 MiB, closes
 * the client before any hook of ours sees the message: its log line is
 * the only trace.  Recognised by the library's format string (ours to
 * trust, not the peer's bytes) and logged like every other drop: size,
 * never content.
 */
static void
vnc_log_cut_refused(const char *fmt, const char *line)
{
	const char *num;
	unsigned long size;

	if (strstr(fmt, "too big cut text length") == NULL ||
	    (num = strstr(line, "requested: ")) == NULL ||
	    sscanf(num + 11, "%lu", &size) != 1)
		return;
	slog_event("clipboard_dropped", json_pack("{s:s, s:I, s:s}", "form",
	    "oversized", "size", (json_int_t)size, "action",
	    "client disconnected by LibVNCServer (over 1 MiB)"));
}

/* Library messages go to the session log (rate limited: a flood of bad
 * clients must not flood the log); trailing newlines are dropped.  They
 * repeat a client's bytes (a name, a message type), so the text goes
 * through the logger's escaping step first (common/log.h): control
 * bytes and malformed UTF-8 become \xNN, and the event is always valid
 * JSON. */
static void __attribute__((format(printf, 2, 0)))
vnc_log_line(const char *level, const char *fmt, va_list ap)
{
	char line[VNC_LOG_LINE], safe[VNC_LOG_LINE * (LOG_ESC_MAX - 1)];
	size_t len;
	uint64_t now = vnc_current ? vnc_now(vnc_current) : 0;

	vsnprintf(line, sizeof(line), fmt, ap);
	vnc_log_cut_refused(fmt, line);	/* needs an authenticated peer */
	/* A relay's socketpair is not TCP: expected, not an error. */
	if (vnc_current != NULL && vnc_current->handing_user != NULL &&
	    strstr(line, "TCP_NODELAY") != NULL)
		return;
	if (!tbucket_take(&vnc_log_bucket, now)) {
		vnc_log_quiet++;
		return;
	}
	len = strlen(line);
	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == ' '))
		line[--len] = '\0';
	if (len == 0)
		return;
	log_escape(safe, sizeof(safe), line, len, 0);
	slog_event("vnc_log", json_pack("{s:s, s:s, s:I}", "level", level,
	    "msg", safe, "suppressed", (json_int_t)vnc_log_quiet));
	vnc_log_quiet = 0;
}

static void vnc_log_info(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static void vnc_log_err(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static void
vnc_log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnc_log_line("info", fmt, ap);
	va_end(ap);
}

static void
vnc_log_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnc_log_line("error", fmt, ap);
	va_end(ap);
}

/* client_refused, at most a few lines a second; the rest are counted
 * and reported with the next line (10,000 attempts => a few lines). */
void
vnc_refused(struct vnc *v, const char *addr, const char *reason)
{
	if (!tbucket_take(&v->refuse_bucket, vnc_now(v))) {
		v->refused_quiet++;
		return;
	}
	slog_event("client_refused", json_pack("{s:s, s:s, s:I}",
	    "client", addr, "reason", reason,
	    "suppressed", (json_int_t)v->refused_quiet));
	v->refused_quiet = 0;
}

/* ---- LibVNCServer hooks ------------------------------------------------ */

static struct vnc *
vnc_of(rfbClientPtr cl)
{
	return cl->screen->screenData;
}

static void
vnc_unlink(struct vnc *v, struct vnc_peer *p)
{
	struct vnc_peer **pp;

	for (pp = &v->peers; *pp != NULL; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	if (v->interactive == p)
		v->interactive = NULL;
	if (v->observer == p)
		v->observer = NULL;
}

static void
vnc_client_gone(rfbClientPtr cl)
{
	struct vnc_peer *p = cl->clientData;
	struct vnc *v = vnc_of(cl);
	uint64_t now = vnc_now(v);

	/* LibVNCServer 0.9.14 never frees the websocket context (45 kB a
	 * client); later versions free it after this hook unless NULL. */
	free(cl->wsctx);
	cl->wsctx = NULL;
	if (p == NULL)
		return;
	preauth_release(v->pa, p->preauth_id);
	vnc_unlink(v, p);
	if (p->authed != 0) {
		slog_event("disconnect", json_pack("{s:s, s:s, s:f, s:s}",
		    "client", p->addr, "role",
		    p->role == VNC_ROLE_INTERACTIVE ? "interactive" :
		    "observer", "seconds",
		    (double)vnc_since(now, p->authed) / 1e6, "reason",
		    p->close_reason != NULL ? p->close_reason :
		    "closed by the client, or a protocol error (see vnc_log)"));
		if (v->ops.gone != NULL)
			v->ops.gone(v->ops.arg, p);
	}
	cl->clientData = NULL;
	free(p);
}

/* A connection the door let through: websocket peers must still carry
 * the token (checked again on the library's parse), and a role must be
 * free.  Roles are assigned only after authentication, so a stranger
 * cannot take the interactive slot by connecting first. */
static enum rfbNewClientAction
vnc_new_client(rfbClientPtr cl)
{
	struct vnc *v = vnc_of(cl);
	const char *addr = v->handing_addr ? v->handing_addr :
	    (cl->host ? cl->host : "?");
	struct vnc_peer *p;

	cl->clientGoneHook = vnc_client_gone;	/* also for a refusal */
	if (cl->wsctx != NULL && (v->prm.ws_token == NULL ||
	    !ws_path_has_token(cl->wspath, v->prm.ws_token))) {
		vnc_refused(v, addr, "websocket token missing or wrong");
		return RFB_CLIENT_REFUSE;
	}
	if (!vnc_role_free(v)) {
		vnc_refused(v, addr, "session busy");
		return RFB_CLIENT_REFUSE;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		vnc_refused(v, addr, "out of memory");
		return RFB_CLIENT_REFUSE;
	}
	p->cl = cl;
	snprintf(p->addr, sizeof(p->addr), "%s", addr);
	p->websocket = cl->wsctx != NULL || v->handing_ws;
	p->tls = v->handing_tls || v->prm.accept_from != NULL;	/* the front
						   door speaks only TLS */
	if (v->handing_user != NULL)
		snprintf(p->user, sizeof(p->user), "%s", v->handing_user);
	if (v->handing_src != NULL)
		p->src = *v->handing_src;
	p->preauth_id = v->handing_pa;
	v->handing_pa = 0;
	p->accepted = vnc_now(v);
	p->stage = (int)cl->state;
	p->stage_t0 = p->accepted;
	kiosk_init(&p->kiosk);
	p->next = v->peers;
	v->peers = p;
	cl->clientData = p;
	cl->clientGoneHook = vnc_client_gone;
	return RFB_CLIENT_ACCEPT;
}

/* Give an authenticated client its role, or refuse it (busy). */
static int
vnc_assign_role(struct vnc *v, rfbClientPtr cl, struct vnc_peer *p)
{
	if (v->interactive == NULL) {
		p->role = VNC_ROLE_INTERACTIVE;
		v->interactive = p;
	} else if (v->prm.allow_observer && v->observer == NULL) {
		p->role = VNC_ROLE_OBSERVER;
		v->observer = p;
		cl->viewOnly = TRUE;
	} else {
		vnc_refused(v, p->addr, "session busy");
		return 0;
	}
	p->authed = vnc_now(v);
	slog_event("connect", json_pack("{s:s, s:s, s:b, s:b, s:s*}", "client",
	    p->addr, "role", p->role == VNC_ROLE_INTERACTIVE ? "interactive" :
	    "observer", "websocket", p->websocket, "tls", p->tls, "user",
	    p->user[0] != '\0' ? p->user : NULL));
	if (v->ops.connected != NULL)
		v->ops.connected(v->ops.arg, p);
	return 1;
}

/* May this VNC password be checked now?  Failed logins back off per
 * address (gateway/preauth.h); the session-wide bucket is the last
 * resort against many addresses, sized so that one backed-off address
 * cannot empty it.  A VeNCrypt user was checked by the front door. */
static int
vnc_may_try(struct vnc *v, struct vnc_peer *p, uint64_t now)
{
	uint64_t wait;

	if (p->user[0] != '\0')
		return 1;
	if (!preauth_login_allowed(v->pa, &p->src, now, &wait)) {
		vnc_refused_src(v, p->addr, &p->src, "too many failed logins "
		    "from this address: it must wait");
		return 0;
	}
	if (!tbucket_take(&v->auth_bucket, now)) {
		slog_event("auth_fail", json_pack("{s:s, s:s}", "client",
		    p->addr, "reason", "throttled (all addresses)"));
		return 0;
	}
	return 1;
}

/* VNC authentication, throttled per address (vnc_may_try). */
static rfbBool
vnc_check_password(rfbClientPtr cl, const char *response, int len)
{
	struct vnc *v = vnc_of(cl);
	struct vnc_peer *p = cl->clientData;
	uint64_t now = vnc_now(v);

	if (p == NULL || p->role != VNC_ROLE_PENDING || !vnc_may_try(v, p, now))
		return FALSE;
	if (!rfbCheckPasswordByList(cl, response, len)) {
		preauth_login_failed(v->pa, &p->src, now);
		slog_event("auth_fail", json_pack("{s:s, s:s}", "client",
		    p->addr, "reason", "wrong password"));
		return FALSE;
	}
	if (p->user[0] == '\0')
		preauth_login_ok(v->pa, &p->src);
	preauth_release(v->pa, p->preauth_id);
	p->preauth_id = 0;
	cl->viewOnly = FALSE;
	return vnc_assign_role(v, cl, p) ? TRUE : FALSE;
}

static void
vnc_kbd(rfbBool down, rfbKeySym keysym, rfbClientPtr cl)
{
	struct vnc *v = vnc_of(cl);
	struct vnc_peer *p = cl->clientData;

	if (p == NULL || p->role != VNC_ROLE_INTERACTIVE || v->ops.key == NULL)
		return;
	v->ops.key(v->ops.arg, p, (uint32_t)keysym, down ? 1 : 0);
}

static void
vnc_ptr(int mask, int x, int y, rfbClientPtr cl)
{
	struct vnc *v = vnc_of(cl);
	struct vnc_peer *p = cl->clientData;

	if (p == NULL || p->role != VNC_ROLE_INTERACTIVE)
		return;
	if (x < 0)
		x = 0;
	if (y < 0)
		y = 0;
	if (x >= v->screen->width)
		x = v->screen->width - 1;
	if (y >= v->screen->height)
		y = v->screen->height - 1;
	/* the place of the library's dot for clients without cursor
	   shapes (the real pointer is drawn into the frame) */
	rfbDefaultPtrAddEvent(mask, x, y, cl);
	if (v->ops.pointer != NULL)
		v->ops.pointer(v->ops.arg, p, mask, x, y);
}

/*
 * Every client message LibVNCServer 0.9.14 dispatches either reaches a
 * handler of ours or the library's own code, or is refused; no hook is
 * left NULL where the library calls it unchecked (setDesktopSizeHook is:
 * a NULL there was a SIGSEGV from one message).  The library's own
 * handling: SetPixelFormat, FixColourMapEntries (closes the client),
 * SetEncodings, FramebufferUpdateRequest, SetScale and PalmVNC's (a
 * scaled copy of the served frame), unknown types (closes the client).
 * Ours: keys, pointer, cut text (gateway/clipboard.c) and the refusals
 * below, each logged as message_refused (rate limited) and otherwise
 * ignored.
 */
static void
vnc_msg_refused(rfbClientPtr cl, const char *message, const char *action)
{
	struct vnc *v = vnc_of(cl);
	struct vnc_peer *p = cl->clientData;

	if (!tbucket_take(&v->msg_bucket, vnc_now(v))) {
		v->msg_quiet++;
		return;
	}
	slog_event("message_refused", json_pack("{s:s, s:s, s:s, s:I}",
	    "client", p != NULL ? p->addr : (cl->host ? cl->host : "?"),
	    "message", message, "action", action,
	    "suppressed", (json_int_t)v->msg_quiet));
	v->msg_quiet = 0;
}

/* SetDesktopSize (251): the screen's size is the policy's. */
static int
vnc_set_desktop_size(int width, int height, int nscreens,
    struct rfbExtDesktopScreen *screens, rfbClientPtr cl)
{
	(void)width;
	(void)height;
	(void)nscreens;
	(void)screens;
	vnc_msg_refused(cl, "SetDesktopSize", "resize prohibited");
	return rfbExtDesktopSize_ResizeProhibited;
}

/* Xvp (250): no shutdown, reboot or reset of anything. */
static rfbBool
vnc_xvp(rfbClientPtr cl, uint8_t version, uint8_t code)
{
	(void)version;
	(void)code;
	vnc_msg_refused(cl, "Xvp", "refused (xvp_fail sent)");
	return FALSE;
}

/* UltraVNC TextChat (11): a way in for text, like the clipboard. */
static void
vnc_text_chat(rfbClientPtr cl, int length, char *text)
{
	(void)length;
	(void)text;	/* never looked at */
	vnc_msg_refused(cl, "TextChat", "dropped");
}

/* UltraVNC SetSingleWindow (10) and SetServerInput (9). */
static void
vnc_single_window(rfbClientPtr cl, int x, int y)
{
	(void)x;
	(void)y;
	vnc_msg_refused(cl, "SetSingleWindow", "ignored");
}

static void
vnc_server_input(rfbClientPtr cl, int status)
{
	(void)status;
	vnc_msg_refused(cl, "SetServerInput", "ignored");
}

/* UltraVNC FileTransfer (7): never (permitFileTransfer is off too; the
 * library then closes the client). */
static int
vnc_file_transfer(rfbClientPtr cl)
{
	vnc_msg_refused(cl, "FileTransfer", "refused");
	return FALSE;
}

/* Around every update sent: if it carried the cursor shape (the fixed
 * dot; LibVNCServer clears cursorWasChanged only when it sent it), that
 * goes on the record, so every cursor a client was sent is in the
 * session log and the recording. */
static void
vnc_display(rfbClientPtr cl)
{
	struct vnc_peer *p = cl->clientData;

	if (p != NULL)
		p->cursor_due = cl->enableCursorShapeUpdates &&
		    cl->cursorWasChanged;
}

static void
vnc_display_done(rfbClientPtr cl, int result)
{
	struct vnc *v = vnc_of(cl);
	struct vnc_peer *p = cl->clientData;

	if (p == NULL || !p->cursor_due || cl->cursorWasChanged || !result)
		return;
	p->cursor_due = 0;
	if (!tbucket_take(&v->msg_bucket, vnc_now(v))) {
		v->msg_quiet++;
		return;
	}
	slog_event("cursor_sent", json_pack("{s:s, s:s, s:i, s:i, s:s, s:I}",
	    "client", p->addr, "shape", "dot", "width", VNC_DOT, "height",
	    VNC_DOT, "encoding", cl->useRichCursorEncoding ? "rich" : "x",
	    "suppressed", (json_int_t)v->msg_quiet));
	v->msg_quiet = 0;
}

/* Every hook the library may call without a NULL check is set; the
 * rest are NULL-checked by the library (getKeyboardLedStateHook:
 * nothing to do). */
static int
vnc_hooks_complete(const rfbScreenInfo *s)
{
	return s->passwordCheck != NULL && s->newClientHook != NULL &&
	    s->kbdAddEvent != NULL && s->kbdReleaseAllKeys != NULL &&
	    s->ptrAddEvent != NULL && s->setXCutText != NULL &&
#ifdef LIBVNCSERVER_HAVE_LIBZ
	    s->setXCutTextUTF8 != NULL &&
#endif
	    s->getCursorPtr != NULL && s->setTranslateFunction != NULL &&
	    s->setDesktopSizeHook != NULL &&
	    s->numberOfExtDesktopScreensHook != NULL &&
	    s->getExtDesktopScreenHook != NULL && s->xvpHook != NULL &&
	    s->setTextChat != NULL && s->setSingleWindow != NULL &&
	    s->setServerInput != NULL &&
	    s->getFileTransferPermission != NULL && s->cursor != NULL;
}

/* ---- set-up and teardown ---------------------------------------------- */

/* Everything the library would otherwise decide by default, beyond
 * vnc_screen_new()'s (port 0 there: we accept, the library never
 * listens). */
static void
vnc_screen_policy(struct vnc *v, rfbScreenInfoPtr s)
{
	s->httpDir = NULL;
	s->neverShared = FALSE;
	s->dontDisconnect = TRUE;
	s->deferUpdateTime = 0;		/* the worker paces frames itself */
	s->handleEventsEagerly = FALSE;	/* one message per peer per wake-up */
	s->getFileTransferPermission = vnc_file_transfer;
	s->setTextChat = vnc_text_chat;
	s->setSingleWindow = vnc_single_window;
	s->setServerInput = vnc_server_input;
	s->xvpHook = vnc_xvp;
	s->setDesktopSizeHook = vnc_set_desktop_size;
	s->displayHook = vnc_display;
	s->displayFinishedHook = vnc_display_done;
	s->maxClientWait = VNC_CLIENT_WAIT_MS;
	s->authPasswdData = v->passwords;
	s->passwordCheck = vnc_check_password;
	s->newClientHook = vnc_new_client;
	s->kbdAddEvent = vnc_kbd;
	s->ptrAddEvent = vnc_ptr;
	clipboard_install(s);
}

int
vnc_open(struct vnc **vp, const struct vnc_params *prm,
    const struct vnc_ops *ops)
{
	rfbCursorPtr cursor;
	int i, st, fl;
	struct vnc *v;

	*vp = NULL;
	if (prm->password == NULL || prm->password[0] == '\0' ||
	    prm->listen_fd < 0 || prm->width == 0 || prm->height == 0 ||
	    prm->framebuffer == NULL || prm->clock == NULL ||
	    (prm->tls_ipc < 0 && !prm->allow_plain))
		return VNC_ECONFIG;
	/* accept(2) in a batch must never block the loop. */
	if ((fl = fcntl(prm->listen_fd, F_GETFL)) < 0 ||
	    fcntl(prm->listen_fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return VNC_ECONFIG;
	if ((v = calloc(1, sizeof(*v))) == NULL)
		return VNC_ENOMEM;
	v->prm = *prm;
	v->ops = *ops;
	for (i = 0; i < VNC_MAX_PREAUTH; i++)
		v->door[i].fd = -1;
	for (i = 0; i < VNC_MAX_FRONT; i++)
		v->front[i].ifd = -1;
	st = VNC_ENOMEM;
	if ((v->passwords[0] = strdup(prm->password)) == NULL ||
	    preauth_alloc(&v->pa) != PREAUTH_OK)
		goto out;
	tbucket_init(&v->auth_bucket, PREAUTH_LOGIN_RATE, PREAUTH_LOGIN_BURST,
	    prm->clock());
	/* With TLS the session's budget (5 a second, bursts of 20) is
	   split with the tls process, which writes most such lines (every
	   handshake and login): a fifth is ours. */
	if (prm->tls_ipc >= 0)
		tbucket_init(&v->refuse_bucket, 1, 4, prm->clock());
	else
		tbucket_init(&v->refuse_bucket, 5, 20, prm->clock());
	tbucket_init(&vnc_log_bucket, 20, 200, prm->clock());
	tbucket_init(&v->msg_bucket, 5, 20, prm->clock());
	vnc_current = v;
	rfbLog = vnc_log_info;
	rfbErr = vnc_log_err;
	rfbMaxClientWait = VNC_CLIENT_WAIT_MS;
	st = VNC_ELIB;
	v->screen = vnc_screen_new("cdsgate", (int)prm->width,
	    (int)prm->height, prm->red_shift, prm->green_shift,
	    prm->blue_shift, v);
	if (v->screen == NULL)
		goto out;
	vnc_screen_policy(v, v->screen);
	if ((cursor = vnc_cursor_dot(&v->screen->serverFormat)) == NULL) {
		st = VNC_ENOMEM;
		goto out;
	}
	rfbSetCursor(v->screen, cursor);
	if (!vnc_hooks_complete(v->screen))
		goto out;	/* VNC_ELIB */
	v->screen->frameBuffer = prm->framebuffer;
	rfbSetServerVersionIdentity(v->screen, "cdsgate");  /* not the library's */
	rfbInitServer(v->screen);
	vnc_des_warm_up();
	if (prm->tls_ipc >= 0)
		vnc_front_setup(v);
	*vp = v;
	v = NULL;	/* transferred */
	st = VNC_OK;
out:
	vnc_close(v);
	return st;
}

void
vnc_close(struct vnc *v)
{
	struct vnc_peer *p;
	int i;

	if (v == NULL)
		return;
	for (i = 0; i < VNC_MAX_PREAUTH; i++)
		vnc_door_close(v, &v->door[i]);
	for (p = v->peers; p != NULL; p = p->next)
		p->close_reason = "the session ends";
	for (i = 0; i < VNC_MAX_FRONT; i++)
		if (v->front[i].ifd >= 0)
			close(v->front[i].ifd);
	if (v->screen != NULL) {
		rfbShutdownServer(v->screen, TRUE);
		free(v->screen->versionString);	/* 0.9.14 leaks it */
		v->screen->versionString = NULL;
		rfbScreenCleanup(v->screen);
	}
	if (v->prm.listen_fd >= 0)
		close(v->prm.listen_fd);
	if (v->prm.tls_ipc >= 0)
		close(v->prm.tls_ipc);
	if (v->passwords[0] != NULL) {
		explicit_bzero(v->passwords[0], strlen(v->passwords[0]));
		free(v->passwords[0]);
	}
	if (vnc_current == v)
		vnc_current = NULL;
	preauth_free(v->pa);
	free(v);
}

/* ---- the poll loop's side ----------------------------------------------- */

/* Bytes LibVNCServer reads in one go in a pre-authentication state
 * (plus the smallest masked frame header for a websocket peer). */
static int
vnc_preauth_need(rfbClientPtr cl)
{
	int need;

	switch (cl->state) {
	case RFB_PROTOCOL_VERSION:
		need = sz_rfbProtocolVersionMsg;
		break;
	case RFB_AUTHENTICATION:
		need = CHALLENGESIZE;	/* the VNC authentication response */
		break;
	default:
		need = 1;		/* security type, ClientInit */
		break;
	}
	return cl->wsctx != NULL ? need + 6 : need;
}

/* The library blocks (up to VNC_CLIENT_WAIT_MS) on a half-sent message.
 * Before authentication every message has a fixed size, so a peer whose
 * message is incomplete is kept out of the library's select set and
 * looked at again on a timer (polling it would spin on the same bytes).
 * Returns 1 if some peer became ready. */
static int
vnc_gate_preauth(struct vnc *v, uint64_t now)
{
	struct vnc_peer *p;
	rfbClientPtr cl;
	int avail, partial, ready = 0;

	for (p = v->peers; p != NULL; p = p->next) {
		cl = p->cl;
		if (p->role != VNC_ROLE_PENDING || cl->sock == RFB_INVALID_SOCKET)
			continue;
		if (ioctl(cl->sock, FIONREAD, &avail) != 0)
			avail = 0;	/* let the library find the error */
		partial = avail > 0 && avail < vnc_preauth_need(cl) &&
		    !(cl->wsctx != NULL && webSocketsHasDataInBuffer(cl));
		if (partial) {
			FD_CLR(cl->sock, &v->screen->allFds);
			p->recheck = now + VNC_RECHECK_US;
		} else {
			FD_SET(cl->sock, &v->screen->allFds);
			ready |= p->partial;
		}
		p->partial = partial;
	}
	return ready;
}

/* Every call into the library's reader goes through here. */
static void
vnc_process(struct vnc *v, uint64_t now)
{
	(void)vnc_gate_preauth(v, now);
	rfbProcessEvents(v->screen, 0);
}

size_t
vnc_pollfds(struct vnc *v, struct pollfd *pfd, size_t max)
{
	rfbClientIteratorPtr it;
	rfbClientPtr cl;
	size_t n = 0;
	int i;

	if (n < max)
		pfd[n++] = (struct pollfd){ v->prm.listen_fd, POLLIN, 0 };
	for (i = 0; i < VNC_MAX_PREAUTH && n < max; i++)
		if (v->door[i].fd >= 0 && !v->door[i].more)
			pfd[n++] = (struct pollfd){ v->door[i].fd, POLLIN, 0 };
	if (v->prm.tls_ipc >= 0 && v->tls_fatal == NULL && n < max)
		pfd[n++] = (struct pollfd){ v->prm.tls_ipc, POLLIN, 0 };
	for (i = 0; i < VNC_MAX_FRONT && n < max; i++)
		if (v->front[i].state == FRONT_INNER)
			pfd[n++] = (struct pollfd){ v->front[i].ifd, POLLIN, 0 };
	it = rfbGetClientIterator(v->screen);
	while ((cl = rfbClientIteratorNext(it)) != NULL && n < max) {
		if (cl->sock == RFB_INVALID_SOCKET || (cl->clientData != NULL &&
		    ((struct vnc_peer *)cl->clientData)->partial))
			continue;
		pfd[n++] = (struct pollfd){ cl->sock, POLLIN, 0 };
	}
	rfbReleaseClientIterator(it);
	return n;
}

static int
vnc_front_of(const struct vnc *v, int fd)
{
	int i;

	for (i = 0; i < VNC_MAX_FRONT; i++)
		if (v->front[i].state == FRONT_INNER && v->front[i].ifd == fd)
			return i;
	return -1;
}

static struct vnc_door *
vnc_door_of(struct vnc *v, int fd)
{
	int i;

	for (i = 0; i < VNC_MAX_PREAUTH; i++)
		if (v->door[i].fd == fd)
			return &v->door[i];
	return NULL;
}

void
vnc_handle(struct vnc *v, const struct pollfd *pfd, size_t n, uint64_t now)
{
	struct vnc_door *d;
	int clients = 0, f;
	size_t i;

	for (i = 0; i < n; i++) {
		if (pfd[i].revents == 0)
			continue;
		if (pfd[i].fd == v->prm.listen_fd)
			vnc_accept(v, now);
		else if ((d = vnc_door_of(v, pfd[i].fd)) != NULL)
			vnc_door_check(v, d, now);
		else if (pfd[i].fd == v->prm.tls_ipc)
			vnc_tls_dispatch(v);
		else if ((f = vnc_front_of(v, pfd[i].fd)) >= 0)
			vnc_front_attach(v, &v->front[f]);
		else
			clients = 1;
	}
	if (clients)
		vnc_process(v, now);
}

/* A pending peer's deadline: its handshake stage's (the library state
 * it waits in: VNC_PASSWORD_US for the VncAuth response a person may
 * type, VNC_STAGE_US for any other message) or the whole handshake's. */
static uint64_t
vnc_stage_deadline(const struct vnc_peer *p)
{
	uint64_t stage = p->stage_t0 + (p->stage == (int)RFB_AUTHENTICATION ?
	    VNC_PASSWORD_US : VNC_STAGE_US);

	return stage < p->accepted + VNC_HANDSHAKE_US ? stage :
	    p->accepted + VNC_HANDSHAKE_US;
}

/* Close peers whose handshake stage (or whole handshake) took too long. */
static int
vnc_expire_handshakes(struct vnc *v, uint64_t now)
{
	struct vnc_peer *p;
	rfbClientPtr cl;
	int closed = 0;

	for (p = v->peers; p != NULL; p = p->next) {
		cl = p->cl;
		if (p->role != VNC_ROLE_PENDING || cl->sock == RFB_INVALID_SOCKET)
			continue;
		if ((int)cl->state != p->stage) {
			p->stage = (int)cl->state;
			p->stage_t0 = now;
		}
		if (now < vnc_stage_deadline(p))
			continue;
		vnc_refused_src(v, p->addr, &p->src, p->stage ==
		    RFB_AUTHENTICATION ? "handshake timeout (password)" :
		    "handshake timeout");
		rfbCloseClient(cl);
		closed = 1;
	}
	return closed;
}

void
vnc_tick(struct vnc *v, uint64_t now)
{
	struct vnc_door *d;
	int i;

	for (i = 0; i < VNC_MAX_PREAUTH; i++) {
		d = &v->door[i];
		if (d->fd < 0)
			continue;
		if ((d->more && now >= d->recheck) ||
		    (!d->more && vnc_since(now, d->t0) >= VNC_SNIFF_US))
			vnc_door_check(v, d, now);
	}
	if (vnc_expire_handshakes(v, now) | vnc_gate_preauth(v, now))
		vnc_process(v, now);
}

uint64_t
vnc_next_deadline(const struct vnc *v)
{
	const struct vnc_peer *p;
	uint64_t t = 0, d;
	int i;

	for (i = 0; i < VNC_MAX_PREAUTH; i++) {
		if (v->door[i].fd < 0)
			continue;
		d = v->door[i].more ? v->door[i].recheck :
		    v->door[i].t0 + VNC_SNIFF_US;
		if (t == 0 || d < t)
			t = d;
	}
	for (p = v->peers; p != NULL; p = p->next) {
		if (p->role != VNC_ROLE_PENDING)
			continue;
		d = p->partial ? p->recheck : vnc_stage_deadline(p);
		if (t == 0 || d < t)
			t = d;
	}
	return t;
}

void
vnc_mark(struct vnc *v, int x, int y, int w, int h)
{
	rfbMarkRectAsModified(v->screen, x, y, x + w, y + h);
}

void
vnc_update(struct vnc *v)
{
	vnc_process(v, vnc_now(v));
}

void
vnc_disconnect(struct vnc *v, struct vnc_peer *p, const char *reason)
{
	rfbClientPtr cl = p->cl;

	if (cl->sock == RFB_INVALID_SOCKET)
		return;
	slog_event("client_refused", json_pack("{s:s, s:s}", "client",
	    p->addr, "reason", reason));
	p->close_reason = reason;
	rfbCloseClient(cl);
	(void)v;
}

int
vnc_viewers(const struct vnc *v)
{
	return (v->interactive != NULL) + (v->observer != NULL);
}

/* ---- cursor --------------------------------------------------------------- */

/*
 * The only cursor shape any client is ever sent: a small fixed dot,
 * chosen here, never the page's.  The real pointer is drawn into the
 * frames (gateway/cursor.h); the dot only gives a viewer immediate
 * feedback where its own mouse is.  Its message (12 + 5 x 5 x 4 + 5
 * bytes at most) is far below the library's 32 KiB update buffer, which
 * a larger cursor overflows, leaving an update half sent.
 */
static const char vnc_dot[VNC_DOT][VNC_DOT + 1] = {
	" ooo ",
	"oxxxo",
	"oxxxo",
	"oxxxo",
	" ooo ",
};

static rfbCursorPtr
vnc_cursor_dot(const rfbPixelFormat *f)
{
	const uint32_t white = 255u << f->redShift | 255u << f->greenShift |
	    255u << f->blueShift;
	rfbCursorPtr c;
	uint32_t px;
	int x, y;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->cleanup = c->cleanupSource = c->cleanupMask = TRUE;
	c->cleanupRichSource = TRUE;
	c->width = c->height = VNC_DOT;
	c->xhot = c->yhot = VNC_DOT / 2;
	c->richSource = calloc(VNC_DOT * VNC_DOT, 4);
	c->alphaSource = calloc(VNC_DOT * VNC_DOT, 1);
	c->mask = calloc(1, VNC_DOT);	/* one byte per row */
	if (c->richSource == NULL || c->alphaSource == NULL || c->mask == NULL) {
		rfbFreeCursor(c);
		return NULL;
	}
	for (y = 0; y < VNC_DOT; y++)
		for (x = 0; x < VNC_DOT; x++) {
			if (vnc_dot[y][x] == ' ')
				continue;
			px = vnc_dot[y][x] == 'o' ? white : 0;
			memcpy(c->richSource + (y * VNC_DOT + x) * 4, &px, 4);
			c->alphaSource[y * VNC_DOT + x] = 255;
			c->mask[y] |= (unsigned char)(0x80 >> x);
		}
	return c;
}

const char *
vnc_fatal(const struct vnc *v)
{
	return v->tls_fatal;
}
