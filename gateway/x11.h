/*
 * gateway/x11.h — the worker's view of the session's X server: frames
 * through MIT-SHM driven by XDamage, the cursor image (drawn into the
 * frames by gateway/cursor.c) through XFixes, the pointer's place.
 *
 * The framebuffer the VNC server sends from is owned here: one shared
 * memory segment of width*height*4 bytes into which XShmGetImage copies
 * full-width strips of the damaged rows directly (no second copy; with
 * an overlay set, into a second segment, then the damaged rectangles
 * are copied over).
 * Without MIT-SHM access (a server of another uid, say) it falls back to
 * XGetImage.  Nothing is polled: damage and cursor changes arrive as
 * events on the display's connection.  Trust: talks only to our own
 * Xvfb; holds its cookie.
 */
#ifndef GATEWAY_X11_H
#define GATEWAY_X11_H

#include <stddef.h>
#include <stdint.h>

#include <X11/Xlib.h>

struct x11;

enum x11_status {
	X11_OK = 0,
	X11_ENOMEM,
	X11_EDISPLAY,		/* cannot open the display */
	X11_EEXTENSION,		/* DAMAGE, XFIXES >= 2 or XTEST missing */
	X11_EVISUAL,		/* root is not 24/32 bpp true colour */
	X11_EIO			/* request failed */
};

struct x11_rect {
	int		 x, y, w, h;
};

/* The pixel layout of the framebuffer (32 bpp, little-endian words). */
struct x11_format {
	unsigned	 width, height;
	int		 red_shift, green_shift, blue_shift;
	int		 use_shm;
};

/* A cursor image: ARGB words, alpha premultiplied (as XFixes gives). */
struct x11_cursor {
	unsigned	 width, height, xhot, yhot;
	uint32_t	*argb;
};

/* Dispatch results (bits). */
#define X11_EV_DAMAGE	0x1
#define X11_EV_CURSOR	0x2

#define X11_MAX_CURSOR	128	/* larger cursors are clipped */

int	 x11_open(struct x11 **xp, const char *display, const char *xauth);
void	 x11_close(struct x11 *x);
const char *x11_strerror(int status);

int	 x11_fd(const struct x11 *x);
Display	*x11_display(const struct x11 *x);
const struct x11_format *x11_format(const struct x11 *x);
char	*x11_framebuffer(const struct x11 *x);

/* Read and handle every event waiting (never blocks).  Returns the
 * X11_EV_* bits seen. */
int	 x11_dispatch(struct x11 *x);
/* Take the damage accumulated so far, copy those rows into the
 * framebuffer and report the damaged rectangles (at most max; more are
 * merged into their bounding box).  Re-arms damage notification. */
int	 x11_capture(struct x11 *x, struct x11_rect *rects, size_t max,
	    size_t *n);
/* Grab these rectangles (inside the screen) again, e.g. where the
 * overlay changed; the damage is left as it is.  Sorts r. */
int	 x11_capture_rects(struct x11 *x, struct x11_rect *r, size_t n);
/* Capture the whole screen (first client, or after a gap). */
int	 x11_capture_all(struct x11 *x);
/* Fetch the current cursor image; free with x11_cursor_free. */
int	 x11_cursor(struct x11 *x, struct x11_cursor *c);
void	 x11_cursor_free(struct x11_cursor *c);
/* Where the pointer is on the root window. */
int	 x11_pointer(struct x11 *x, int *px, int *py);
/* Called with every rectangle just copied from X into the framebuffer,
 * e.g. to burn in a watermark.  Setting one allocates a second
 * screen-sized segment (before the seccomp filter): strips are grabbed
 * there and only the damaged rectangles copied over.  X11_ENOMEM if that
 * fails. */
typedef void (*x11_overlay_fn)(void *arg, char *fb, size_t stride, int x,
    int y, int w, int h);
int	 x11_set_overlay(struct x11 *x, x11_overlay_fn fn, void *arg);
/* Send buffered requests (XTest events) to the server. */
void	 x11_flush(struct x11 *x);
/* Events already read into Xlib's queue (poll would not see them). */
int	 x11_pending(struct x11 *x);

#endif
