/*
 * gateway/kioskwm.c — the window half of the kiosk: one top-level window.
 *
 * The session has no window manager, and some ways out of a kiosk are new
 * top-level windows that no input filter can stop: shift+Enter on a
 * focused link opens it in a second browser window (tests/regress/028),
 * and a dialog Chromium might open despite its policy is one too.  This
 * watches the root window's children (SubstructureNotify) and asks every
 * top-level window mapped after the kiosk's own to close, the way a
 * window manager's close button does (WM_DELETE_WINDOW).  Menus, tooltips
 * and drag icons are override-redirect and left alone.  It never kills a
 * client: a window that does not take WM_DELETE_WINDOW is only logged.
 * Runs in the unprivileged worker on its own X connection; the windows'
 * titles are untrusted (the page sets them) and only logged, escaped.
 */
#include "config.h"

#include <string.h>

#include <jansson.h>
#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>

#include "gateway/kioskwm.h"
#include "gateway/slog.h"

#define KIOSKWM_TITLE_MAX	120
#define KIOSKWM_MIN_SIDE	32	/* smaller windows show nothing: ignored */

void
kioskwm_init(struct kioskwm *wm, Display *dpy, Window root)
{
	Window r, parent, *kids = NULL;
	XWindowAttributes wa;
	unsigned int n, i;

	memset(wm, 0, sizeof(*wm));
	wm->dpy = dpy;
	wm->root = root;
	wm->wm_protocols = XInternAtom(dpy, "WM_PROTOCOLS", False);
	wm->wm_delete = XInternAtom(dpy, "WM_DELETE_WINDOW", False);
	XSelectInput(dpy, root, SubstructureNotifyMask);
	/* A kiosk window already up (the worker restarted) is the kiosk. */
	if (!XQueryTree(dpy, root, &r, &parent, &kids, &n))
		return;
	for (i = 0; i < n && wm->main == None; i++)
		if (XGetWindowAttributes(dpy, kids[i], &wa) &&
		    wa.map_state == IsViewable && !wa.override_redirect &&
		    wa.width >= KIOSKWM_MIN_SIDE && wa.height >= KIOSKWM_MIN_SIDE)
			wm->main = kids[i];
	if (kids != NULL)
		XFree(kids);
}

/* The title, cut and never NULL, for the log. */
static void
kioskwm_title(struct kioskwm *wm, Window w, char *buf, size_t len)
{
	char *name = NULL;

	buf[0] = '\0';
	if (XFetchName(wm->dpy, w, &name) && name != NULL) {
		strncpy(buf, name, len - 1);
		buf[len - 1] = '\0';
		XFree(name);
	}
}

/* 1 if the window says it takes WM_DELETE_WINDOW. */
static int
kioskwm_deletable(struct kioskwm *wm, Window w)
{
	Atom *protos = NULL;
	int n = 0, i, yes = 0;

	if (!XGetWMProtocols(wm->dpy, w, &protos, &n))
		return 0;
	for (i = 0; i < n; i++)
		if (protos[i] == wm->wm_delete)
			yes = 1;
	if (protos != NULL)
		XFree(protos);
	return yes;
}

/* Ask a window to close as a window manager's close button would. */
static void
kioskwm_close(struct kioskwm *wm, Window w)
{
	char title[KIOSKWM_TITLE_MAX + 1];
	XEvent ev;
	int ok;

	kioskwm_title(wm, w, title, sizeof(title));
	if ((ok = kioskwm_deletable(wm, w)) != 0) {
		memset(&ev, 0, sizeof(ev));
		ev.xclient.type = ClientMessage;
		ev.xclient.window = w;
		ev.xclient.message_type = wm->wm_protocols;
		ev.xclient.format = 32;
		ev.xclient.data.l[0] = (long)wm->wm_delete;
		ev.xclient.data.l[1] = CurrentTime;
		XSendEvent(wm->dpy, w, False, NoEventMask, &ev);
		XFlush(wm->dpy);
		wm->closed++;
	}
	slog_event("window_closed", json_pack("{s:I, s:s, s:s}", "window",
	    (json_int_t)w, "title", title, "action",
	    ok ? "WM_DELETE_WINDOW" : "none: not deletable"));
}

/* A top-level window was mapped: the first is the kiosk, later ones are
 * asked to close. */
static void
kioskwm_mapped(struct kioskwm *wm, Window w)
{
	char title[KIOSKWM_TITLE_MAX + 1];
	XWindowAttributes wa;

	if (!XGetWindowAttributes(wm->dpy, w, &wa) ||
	    wa.width < KIOSKWM_MIN_SIDE || wa.height < KIOSKWM_MIN_SIDE)
		return;
	if (wm->main != None && wm->main != w) {
		kioskwm_close(wm, w);
		return;
	}
	if (wm->main == None) {
		kioskwm_title(wm, w, title, sizeof(title));
		slog_event("window_main", json_pack("{s:I, s:s, s:i, s:i}",
		    "window", (json_int_t)w, "title", title, "width",
		    wa.width, "height", wa.height));
	}
	wm->main = w;
}

void
kioskwm_event(struct kioskwm *wm, const XEvent *ev)
{
	switch (ev->type) {
	case MapNotify:
		if (ev->xmap.event == wm->root && !ev->xmap.override_redirect)
			kioskwm_mapped(wm, ev->xmap.window);
		break;
	case UnmapNotify:
		if (ev->xunmap.window == wm->main)
			wm->main = None;
		break;
	case DestroyNotify:
		if (ev->xdestroywindow.window == wm->main)
			wm->main = None;
		break;
	}
}
