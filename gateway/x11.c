/*
 * gateway/x11.c — frames and cursor from the session's Xvfb.
 *
 * Why this shape: a full-screen XShmGetImage costs ~1.5 ms, a damaged
 * area ~0.3 ms, and polling the screen costs 1.8% CPU idle against 0.3%
 * for XDamage (measured).  So the root window carries one Damage
 * object in ReportNonEmpty mode: one event when something changes, none
 * until we take the damage.  The framebuffer is itself the MIT-SHM
 * segment, and damaged rows are fetched as full-width strips straight
 * into it.  With an overlay (the watermark) the strips land in a second
 * segment and only the damaged rectangles are copied over and overlaid:
 * overlaying whole strips cost more than that copy (docs/gateway.md).
 * Runs in the unprivileged worker; talks only to our own X server, with
 * the session's cookie.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <unistd.h>

#include <jansson.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/XShm.h>
#include <X11/extensions/Xdamage.h>
#include <X11/extensions/Xfixes.h>
#include <X11/extensions/XTest.h>

#include "gateway/kioskwm.h"
#include "gateway/slog.h"
#include "gateway/x11.h"

#define X11_MAX_SPANS	64	/* more damage rects: one bounding strip */
#define X11_SPAN_MERGE	8	/* rows: close strips are fetched as one */

struct x11 {
	Display		*dpy;
	Window		 root;
	Visual		*visual;
	int		 depth;
	struct x11_format fmt;
	size_t		 stride;
	char		*fb;
	XShmSegmentInfo	 shm;
	int		 damage_event, damage_error;
	int		 fixes_event, fixes_error;
	Damage		 damage;
	XserverRegion	 region;
	struct kioskwm	 wm;		/* one top-level window */
	x11_overlay_fn	 overlay;	/* applied to every copied rectangle */
	void		*overlay_arg;
	char		*scratch;	/* with an overlay: strips land here */
	XShmSegmentInfo	 shm2;		/* the scratch's segment */
};

/* X errors arrive asynchronously; remember them so a request can be
 * checked after XSync (MIT-SHM attach may fail with BadAccess). */
static unsigned long x11_nerrors;

static int
x11_error_handler(Display *dpy, XErrorEvent *e)
{
	(void)dpy;
	(void)e;
	x11_nerrors++;
	return 0;
}

/* Xlib exits the process after this returns; log the reason first. */
static int
x11_io_error_handler(Display *dpy)
{
	(void)dpy;
	slog_event("protocol_error", json_pack("{s:s}", "what",
	    "connection to the X server lost"));
	_exit(1);
}

const char *
x11_strerror(int status)
{
	switch (status) {
	case X11_OK:		return "ok";
	case X11_ENOMEM:	return "out of memory";
	case X11_EDISPLAY:	return "cannot open the X display";
	case X11_EEXTENSION:	return "X server lacks DAMAGE, XFIXES 2 or XTEST";
	case X11_EVISUAL:	return "root window is not 32 bpp true colour";
	case X11_EIO:		return "X request failed";
	}
	return "unknown X error";
}

static int
x11_ctz(unsigned long m)
{
	int s = 0;

	if (m == 0)
		return -1;
	while (!(m & 1)) {
		m >>= 1;
		s++;
	}
	return (m == 0xff) ? s : -1;	/* 8 contiguous bits only */
}

static int
x11_check_extensions(struct x11 *x)
{
	int maj = 2, min = 0, ev, err;

	if (!XDamageQueryExtension(x->dpy, &x->damage_event,
	    &x->damage_error))
		return X11_EEXTENSION;
	if (!XFixesQueryExtension(x->dpy, &x->fixes_event, &x->fixes_error) ||
	    !XFixesQueryVersion(x->dpy, &maj, &min) || maj < 2)
		return X11_EEXTENSION;
	if (!XTestQueryExtension(x->dpy, &ev, &err, &maj, &min))
		return X11_EEXTENSION;
	return X11_OK;
}

/* Learn the pixel layout from a 1x1 image of the root: it must be
 * 32 bpp little-endian with 8-bit channels (Xvfb: red ff0000). */
static int
x11_check_visual(struct x11 *x)
{
	XWindowAttributes wa;
	XImage *img;
	int st = X11_EVISUAL;

	if (!XGetWindowAttributes(x->dpy, x->root, &wa))
		return X11_EIO;
	x->fmt.width = (unsigned)wa.width;
	x->fmt.height = (unsigned)wa.height;
	x->visual = wa.visual;
	x->depth = wa.depth;
	img = XGetImage(x->dpy, x->root, 0, 0, 1, 1, AllPlanes, ZPixmap);
	if (img == NULL)
		return X11_EIO;
	x->fmt.red_shift = x11_ctz(img->red_mask);
	x->fmt.green_shift = x11_ctz(img->green_mask);
	x->fmt.blue_shift = x11_ctz(img->blue_mask);
	if (img->bits_per_pixel == 32 && img->byte_order == LSBFirst &&
	    x->fmt.red_shift >= 0 && x->fmt.green_shift >= 0 &&
	    x->fmt.blue_shift >= 0 && wa.width > 0 && wa.height > 0)
		st = X11_OK;
	XDestroyImage(img);
	x->stride = (size_t)x->fmt.width * 4;
	return st;
}

/* A screen-sized MIT-SHM segment the server writes into; removed
 * (IPC_RMID) as soon as both sides are attached, so it cannot leak. */
static int
x11_shm_attach(struct x11 *x, XShmSegmentInfo *seg)
{
	size_t size = x->stride * x->fmt.height;
	unsigned long before;

	if (!XShmQueryExtension(x->dpy))
		return -1;
	seg->shmid = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
	if (seg->shmid < 0)
		return -1;
	seg->shmaddr = shmat(seg->shmid, NULL, 0);
	if (seg->shmaddr == (char *)-1) {
		shmctl(seg->shmid, IPC_RMID, NULL);
		return -1;
	}
	seg->readOnly = False;
	before = x11_nerrors;
	XShmAttach(x->dpy, seg);
	XSync(x->dpy, False);
	shmctl(seg->shmid, IPC_RMID, NULL);
	if (x11_nerrors != before) {
		shmdt(seg->shmaddr);
		return -1;
	}
	return 0;
}

static int
x11_fb_setup(struct x11 *x)
{
	if (x11_shm_attach(x, &x->shm) == 0) {
		x->fb = x->shm.shmaddr;
		x->fmt.use_shm = 1;
		return X11_OK;
	}
	x->fb = calloc(x->fmt.height, x->stride);
	return x->fb == NULL ? X11_ENOMEM : X11_OK;
}

int
x11_open(struct x11 **xp, const char *display, const char *xauth)
{
	struct x11 *x;
	int st;

	*xp = NULL;
	if ((x = calloc(1, sizeof(*x))) == NULL)
		return X11_ENOMEM;
	if (xauth != NULL && setenv("XAUTHORITY", xauth, 1) != 0) {
		st = X11_ENOMEM;
		goto out;
	}
	XSetErrorHandler(x11_error_handler);
	XSetIOErrorHandler(x11_io_error_handler);
	st = X11_EDISPLAY;
	if ((x->dpy = XOpenDisplay(display)) == NULL)
		goto out;
	x->root = DefaultRootWindow(x->dpy);
	if ((st = x11_check_extensions(x)) != X11_OK ||
	    (st = x11_check_visual(x)) != X11_OK ||
	    (st = x11_fb_setup(x)) != X11_OK)
		goto out;
	x->damage = XDamageCreate(x->dpy, x->root, XDamageReportNonEmpty);
	x->region = XFixesCreateRegion(x->dpy, NULL, 0);
	XFixesSelectCursorInput(x->dpy, x->root,
	    XFixesDisplayCursorNotifyMask);
	kioskwm_init(&x->wm, x->dpy, x->root);
	if ((st = x11_capture_all(x)) != X11_OK)
		goto out;
	*xp = x;
	x = NULL;	/* transferred */
out:
	x11_close(x);
	return st;
}

void
x11_close(struct x11 *x)
{
	if (x == NULL)
		return;
	if (x->dpy != NULL) {
		if (x->damage)
			XDamageDestroy(x->dpy, x->damage);
		if (x->region)
			XFixesDestroyRegion(x->dpy, x->region);
		if (x->fmt.use_shm)
			XShmDetach(x->dpy, &x->shm);
		if (x->fmt.use_shm && x->scratch != NULL)
			XShmDetach(x->dpy, &x->shm2);
		XSync(x->dpy, False);
		XCloseDisplay(x->dpy);
	}
	if (x->fmt.use_shm) {
		shmdt(x->shm.shmaddr);
		if (x->scratch != NULL)
			shmdt(x->shm2.shmaddr);
	} else {
		free(x->fb);
		free(x->scratch);
	}
	free(x);
}

int
x11_fd(const struct x11 *x)
{
	return ConnectionNumber(x->dpy);
}

Display *
x11_display(const struct x11 *x)
{
	return x->dpy;
}

const struct x11_format *
x11_format(const struct x11 *x)
{
	return &x->fmt;
}

char *
x11_framebuffer(const struct x11 *x)
{
	return x->fb;
}

void
x11_flush(struct x11 *x)
{
	XFlush(x->dpy);
}

int
x11_pending(struct x11 *x)
{
	return XEventsQueued(x->dpy, QueuedAlready);
}

int
x11_dispatch(struct x11 *x)
{
	XEvent ev;
	int bits = 0;

	while (XPending(x->dpy)) {
		XNextEvent(x->dpy, &ev);
		if (ev.type == x->damage_event + XDamageNotify)
			bits |= X11_EV_DAMAGE;
		else if (ev.type == x->fixes_event + XFixesCursorNotify)
			bits |= X11_EV_CURSOR;
		else if (ev.type == MappingNotify)
			XRefreshKeyboardMapping(&ev.xmapping);
		else
			kioskwm_event(&x->wm, &ev);
	}
	return bits;
}

/* Copy rows [y, y + h) of the root into the framebuffer.  With MIT-SHM
 * the image points into the segment at that row, so the server writes
 * the pixels in place. */
static int
x11_grab_rows_raw(struct x11 *x, char *dst, XShmSegmentInfo *seg, int y,
    int h)
{
	XImage *img;
	int r, ok;

	if (x->fmt.use_shm) {
		img = XShmCreateImage(x->dpy, x->visual, (unsigned)x->depth,
		    ZPixmap, dst + (size_t)y * x->stride, seg,
		    x->fmt.width, (unsigned)h);
		if (img == NULL)
			return X11_ENOMEM;
		ok = img->bytes_per_line == (int)x->stride &&
		    XShmGetImage(x->dpy, x->root, img, 0, y, AllPlanes);
		img->data = NULL;	/* the segment is ours, not Xlib's */
		img->obdata = NULL;
		XDestroyImage(img);
		return ok ? X11_OK : X11_EIO;
	}
	img = XGetImage(x->dpy, x->root, 0, y, x->fmt.width, (unsigned)h,
	    AllPlanes, ZPixmap);
	if (img == NULL)
		return X11_EIO;
	for (r = 0; r < h && img->bytes_per_line >= (int)x->stride; r++)
		memcpy(dst + (size_t)(y + r) * x->stride,
		    img->data + (size_t)r * (size_t)img->bytes_per_line,
		    x->stride);
	XDestroyImage(img);
	return X11_OK;
}

/* Whole rows straight into the framebuffer, then the overlay over all
 * of them: no pixel straight from X stays there. */
static int
x11_grab_rows(struct x11 *x, int y, int h)
{
	int st = x11_grab_rows_raw(x, x->fb, &x->shm, y, h);

	if (st == X11_OK && x->overlay != NULL)
		x->overlay(x->overlay_arg, x->fb, x->stride, 0, y,
		    (int)x->fmt.width, h);
	return st;
}

/* With an overlay, a strip goes to the scratch segment and only the
 * damaged rectangles are copied into the framebuffer and overlaid: the
 * rest of the strip is what the framebuffer already shows (undamaged),
 * and blending the strip's whole width would cost more than the copy. */
static int
x11_grab_strip(struct x11 *x, int y, int h, const struct x11_rect *r,
    size_t n)
{
	size_t i, off;
	int row, st;

	if (x->overlay == NULL)
		return x11_grab_rows(x, y, h);
	if ((st = x11_grab_rows_raw(x, x->scratch, &x->shm2, y, h)) !=
	    X11_OK)
		return st;
	for (i = 0; i < n; i++) {
		for (row = r[i].y; row < r[i].y + r[i].h; row++) {
			off = (size_t)row * x->stride + (size_t)r[i].x * 4;
			memcpy(x->fb + off, x->scratch + off,
			    (size_t)r[i].w * 4);
		}
		x->overlay(x->overlay_arg, x->fb, x->stride, r[i].x, r[i].y,
		    r[i].w, r[i].h);
	}
	return X11_OK;
}

int
x11_set_overlay(struct x11 *x, x11_overlay_fn fn, void *arg)
{
	if (x->scratch == NULL) {
		if (x->fmt.use_shm && x11_shm_attach(x, &x->shm2) == 0)
			x->scratch = x->shm2.shmaddr;
		else if (x->fmt.use_shm ||
		    (x->scratch = calloc(x->fmt.height, x->stride)) == NULL)
			return X11_ENOMEM;
		/* resident now, not at the first full-screen grab: the
		   worker's memory is what it is from the start */
		memset(x->scratch, 0, (size_t)x->fmt.height * x->stride);
	}
	x->overlay = fn;
	x->overlay_arg = arg;
	return X11_OK;
}

int
x11_capture_all(struct x11 *x)
{
	XDamageSubtract(x->dpy, x->damage, None, None);
	return x11_grab_rows(x, 0, (int)x->fmt.height);
}

/* Clip a server rectangle to the screen; 0 if nothing is left. */
static int
x11_clip(const struct x11 *x, const XRectangle *in, struct x11_rect *out)
{
	int x1 = in->x, y1 = in->y, x2 = in->x + in->width,
	    y2 = in->y + in->height;

	if (x1 < 0)
		x1 = 0;
	if (y1 < 0)
		y1 = 0;
	if (x2 > (int)x->fmt.width)
		x2 = (int)x->fmt.width;
	if (y2 > (int)x->fmt.height)
		y2 = (int)x->fmt.height;
	if (x2 <= x1 || y2 <= y1)
		return 0;
	out->x = x1;
	out->y = y1;
	out->w = x2 - x1;
	out->h = y2 - y1;
	return 1;
}

static int
x11_span_cmp(const void *a, const void *b)
{
	const struct x11_rect *ra = a, *rb = b;

	return (ra->y > rb->y) - (ra->y < rb->y);
}

/* Fetch the rows the rectangles cover, merging strips that overlap or
 * nearly touch so a scattered update costs few round trips. */
static int
x11_grab_spans(struct x11 *x, struct x11_rect *r, size_t n)
{
	size_t i, s = 0;
	int y0, y1, st;

	qsort(r, n, sizeof(*r), x11_span_cmp);
	y0 = r[0].y;
	y1 = r[0].y + r[0].h;
	for (i = 1; i <= n; i++) {
		if (i < n && r[i].y <= y1 + X11_SPAN_MERGE) {
			if (r[i].y + r[i].h > y1)
				y1 = r[i].y + r[i].h;
			continue;
		}
		if ((st = x11_grab_strip(x, y0, y1 - y0, r + s, i - s)) !=
		    X11_OK)
			return st;
		if (i < n) {
			y0 = r[i].y;
			y1 = r[i].y + r[i].h;
			s = i;
		}
	}
	return X11_OK;
}

static void
x11_bounding(const struct x11_rect *r, size_t n, struct x11_rect *out)
{
	int x1 = r[0].x, y1 = r[0].y, x2 = r[0].x + r[0].w,
	    y2 = r[0].y + r[0].h;
	size_t i;

	for (i = 1; i < n; i++) {
		if (r[i].x < x1) x1 = r[i].x;
		if (r[i].y < y1) y1 = r[i].y;
		if (r[i].x + r[i].w > x2) x2 = r[i].x + r[i].w;
		if (r[i].y + r[i].h > y2) y2 = r[i].y + r[i].h;
	}
	out->x = x1;
	out->y = y1;
	out->w = x2 - x1;
	out->h = y2 - y1;
}

int
x11_capture_rects(struct x11 *x, struct x11_rect *r, size_t n)
{
	return n == 0 ? X11_OK : x11_grab_spans(x, r, n);
}

int
x11_capture(struct x11 *x, struct x11_rect *rects, size_t max, size_t *n)
{
	struct x11_rect clip[X11_MAX_SPANS];
	XRectangle *xr;
	int nxr = 0, i, st = X11_OK;
	size_t nc = 0;

	*n = 0;
	XDamageSubtract(x->dpy, x->damage, None, x->region);
	xr = XFixesFetchRegion(x->dpy, x->region, &nxr);
	for (i = 0; xr != NULL && i < nxr; i++) {
		if (nc == X11_MAX_SPANS) {	/* fold the rest into one */
			x11_bounding(clip, nc, &clip[0]);
			nc = 1;
		}
		nc += (size_t)x11_clip(x, &xr[i], &clip[nc]);
	}
	if (xr != NULL)
		XFree(xr);
	if (nc == 0)
		return X11_OK;
	if ((st = x11_grab_spans(x, clip, nc)) != X11_OK)
		return st;
	if (nc > max) {
		x11_bounding(clip, nc, &rects[0]);
		*n = max > 0 ? 1 : 0;
		return X11_OK;
	}
	memcpy(rects, clip, nc * sizeof(*rects));
	*n = nc;
	return X11_OK;
}

int
x11_cursor(struct x11 *x, struct x11_cursor *c)
{
	XFixesCursorImage *ci;
	unsigned r, col;

	memset(c, 0, sizeof(*c));
	if ((ci = XFixesGetCursorImage(x->dpy)) == NULL)
		return X11_EIO;
	c->width = ci->width > X11_MAX_CURSOR ? X11_MAX_CURSOR : ci->width;
	c->height = ci->height > X11_MAX_CURSOR ? X11_MAX_CURSOR : ci->height;
	c->xhot = ci->xhot < c->width ? ci->xhot : 0;
	c->yhot = ci->yhot < c->height ? ci->yhot : 0;
	if (c->width == 0 || c->height == 0 ||
	    (c->argb = calloc((size_t)c->width * c->height, 4)) == NULL) {
		XFree(ci);
		return c->width == 0 || c->height == 0 ? X11_EIO : X11_ENOMEM;
	}
	/* XFixes gives one unsigned long per pixel, ARGB in the low bits. */
	for (r = 0; r < c->height; r++)
		for (col = 0; col < c->width; col++)
			c->argb[r * c->width + col] = (uint32_t)
			    ci->pixels[(size_t)r * ci->width + col];
	XFree(ci);
	return X11_OK;
}

int
x11_pointer(struct x11 *x, int *px, int *py)
{
	Window root, child;
	int wx, wy;
	unsigned mask;

	if (!XQueryPointer(x->dpy, x->root, &root, &child, px, py, &wx, &wy,
	    &mask))
		return X11_EIO;
	return X11_OK;
}

void
x11_cursor_free(struct x11_cursor *c)
{
	free(c->argb);
	c->argb = NULL;
}
