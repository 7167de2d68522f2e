/*
 * gateway/cursor.h — the pointer as part of the screen.
 *
 * The X cursor image (whatever the page set: a CSS cursor is up to
 * 128 x 128 pixels of its own choosing) is never sent to a client as a
 * cursor shape.  It is drawn into the framebuffer the worker serves,
 * under the watermark, in every rectangle copied from X
 * (x11_set_overlay), so it reaches a client only as pixels: watermarked,
 * paced like any frame and in the recording.  This file holds the image
 * and where it is, composites it, and remembers where it drew it, so the
 * worker can grab those places again when the pointer moves or the image
 * changes.  Trust: the image comes from our own X server but its pixels
 * are the page's choice; only their geometry is ever acted on.
 */
#ifndef GATEWAY_CURSOR_H
#define GATEWAY_CURSOR_H

#include <stddef.h>
#include <stdint.h>

#define CURSOR_MAX		128	/* larger images are clipped */
#define CURSOR_MAX_DRAWN	4	/* places remembered; more are merged */

enum cursor_status {
	CURSOR_OK = 0,
	CURSOR_ENOMEM,
	CURSOR_EINPUT		/* bad geometry or pixel layout */
};

struct cursor_rect {
	int		 x, y, w, h;
};

struct cursor;

/* For a screen of w x h 32-bit pixels with these channel shifts. */
int	 cursor_alloc(struct cursor **cp, unsigned w, unsigned h,
	    int red_shift, int green_shift, int blue_shift);
void	 cursor_free(struct cursor *c);
const char *cursor_strerror(int status);

/* A new image: ARGB words, alpha premultiplied (as XFixes gives),
 * clipped to CURSOR_MAX; a hot spot outside it is moved to 0. */
void	 cursor_set_image(struct cursor *c, unsigned w, unsigned h,
	    unsigned xhot, unsigned yhot, const uint32_t *argb);
/* The pointer is at (x, y) now. */
void	 cursor_move(struct cursor *c, int x, int y);
/* The screen rectangle the image covers now; 0 if none (empty image,
 * wholly transparent, or off the screen). */
int	 cursor_bounds(const struct cursor *c, struct cursor_rect *r);
/* Composite the image over the part of rectangle (x, y, w, h) of fb
 * that it covers, and remember that place. */
void	 cursor_draw(struct cursor *c, char *fb, size_t stride, int x, int y,
	    int w, int h);
/* The places the image was drawn since the last call (at most max,
 * each inside the screen); forgets them.  Returns the count. */
size_t	 cursor_take_drawn(struct cursor *c, struct cursor_rect *r,
	    size_t max);

#endif
