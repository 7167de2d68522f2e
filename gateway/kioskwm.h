/*
 * gateway/kioskwm.h — one top-level window on the session's screen: the
 * kiosk browser's first.  Every later top-level window (a second browser
 * window, a dialog) is asked to close with WM_DELETE_WINDOW and logged
 * (window_closed).  See kioskwm.c for why.  Trust: runs in the worker;
 * window titles are untrusted and only logged.
 */
#ifndef GATEWAY_KIOSKWM_H
#define GATEWAY_KIOSKWM_H

#include <X11/Xlib.h>

struct kioskwm {
	Display		*dpy;
	Window		 root;
	Window		 main;		/* the kiosk's window, or None */
	Atom		 wm_protocols, wm_delete;
	unsigned long	 closed;	/* windows asked to close */
};

/* Select SubstructureNotify on the root; adopt a kiosk window already up. */
void	kioskwm_init(struct kioskwm *wm, Display *dpy, Window root);
/* Feed every X event; acts on top-level Map/Unmap/DestroyNotify. */
void	kioskwm_event(struct kioskwm *wm, const XEvent *ev);

#endif
