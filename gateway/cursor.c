/*
 * gateway/cursor.c — the pointer drawn into the framebuffer (see
 * cursor.h for why it is never sent as a cursor shape).
 *
 * The image is kept trimmed to its non-transparent pixels, so a large
 * mostly empty CSS cursor costs only what it shows.  Compositing is
 * "over" with the premultiplied pixels XFixes gives.  Every place it
 * was drawn is remembered (a few rectangles, merged when there are
 * more), because the framebuffer keeps those pixels until they are
 * grabbed from X again.  Trust: runs in the unprivileged worker; the
 * pixels are the page's, never interpreted.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gateway/cursor.h"

struct cursor {
	unsigned	 sw, sh;		/* the screen */
	int		 shift[3];		/* red, green, blue */
	uint32_t	 px[CURSOR_MAX * CURSOR_MAX];
	int		 w, h;			/* the trimmed image */
	int		 ox, oy;		/* its offset from the hot spot */
	int		 x, y;			/* the pointer */
	struct cursor_rect drawn[CURSOR_MAX_DRAWN];
	size_t		 ndrawn;
};

const char *
cursor_strerror(int status)
{
	switch (status) {
	case CURSOR_OK:		return "ok";
	case CURSOR_ENOMEM:	return "out of memory";
	case CURSOR_EINPUT:	return "bad screen geometry or pixel layout";
	}
	return "unknown cursor error";
}

int
cursor_alloc(struct cursor **cp, unsigned w, unsigned h, int red_shift,
    int green_shift, int blue_shift)
{
	struct cursor *c;
	const int s[3] = { red_shift, green_shift, blue_shift };
	int i;

	*cp = NULL;
	if (w == 0 || h == 0 || w > 65535 || h > 65535)
		return CURSOR_EINPUT;
	for (i = 0; i < 3; i++)
		if (s[i] < 0 || s[i] > 24 || s[i] % 8 != 0)
			return CURSOR_EINPUT;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return CURSOR_ENOMEM;
	c->sw = w;
	c->sh = h;
	memcpy(c->shift, s, sizeof(s));
	*cp = c;
	return CURSOR_OK;
}

void
cursor_free(struct cursor *c)
{
	free(c);
}

/* The smallest box of pixels with any alpha, in image coordinates;
 * 0 if there is none. */
static int
cursor_trim(const uint32_t *argb, unsigned w, unsigned h, unsigned stride,
    struct cursor_rect *box)
{
	unsigned x, y, x0 = w, y0 = h, x1 = 0, y1 = 0;

	for (y = 0; y < h; y++)
		for (x = 0; x < w; x++) {
			if ((argb[(size_t)y * stride + x] >> 24) == 0)
				continue;
			if (x < x0) x0 = x;
			if (y < y0) y0 = y;
			if (x + 1 > x1) x1 = x + 1;
			if (y + 1 > y1) y1 = y + 1;
		}
	if (x1 == 0)
		return 0;
	*box = (struct cursor_rect){ (int)x0, (int)y0, (int)(x1 - x0),
	    (int)(y1 - y0) };
	return 1;
}

void
cursor_set_image(struct cursor *c, unsigned w, unsigned h, unsigned xhot,
    unsigned yhot, const uint32_t *argb)
{
	struct cursor_rect b;
	unsigned cw = w > CURSOR_MAX ? CURSOR_MAX : w;
	unsigned ch = h > CURSOR_MAX ? CURSOR_MAX : h;
	int r;

	c->w = c->h = 0;
	if (argb == NULL || cw == 0 || ch == 0 ||
	    !cursor_trim(argb, cw, ch, w, &b))
		return;
	if (xhot >= cw)
		xhot = 0;
	if (yhot >= ch)
		yhot = 0;
	for (r = 0; r < b.h; r++)
		memcpy(c->px + (size_t)r * b.w,
		    argb + (size_t)(b.y + r) * w + (size_t)b.x,
		    (size_t)b.w * 4);
	c->w = b.w;
	c->h = b.h;
	c->ox = b.x - (int)xhot;
	c->oy = b.y - (int)yhot;
}

void
cursor_move(struct cursor *c, int x, int y)
{
	c->x = x;
	c->y = y;
}

/* The intersection of a and b; 0 if empty. */
static int
cursor_clip(const struct cursor_rect *a, const struct cursor_rect *b,
    struct cursor_rect *out)
{
	int x0 = a->x > b->x ? a->x : b->x;
	int y0 = a->y > b->y ? a->y : b->y;
	int x1 = a->x + a->w < b->x + b->w ? a->x + a->w : b->x + b->w;
	int y1 = a->y + a->h < b->y + b->h ? a->y + a->h : b->y + b->h;

	if (x1 <= x0 || y1 <= y0)
		return 0;
	*out = (struct cursor_rect){ x0, y0, x1 - x0, y1 - y0 };
	return 1;
}

int
cursor_bounds(const struct cursor *c, struct cursor_rect *r)
{
	const struct cursor_rect screen = { 0, 0, (int)c->sw, (int)c->sh };
	const struct cursor_rect img = { c->x + c->ox, c->y + c->oy, c->w,
	    c->h };

	return c->w > 0 && cursor_clip(&img, &screen, r);
}

static void
cursor_union(struct cursor_rect *a, const struct cursor_rect *b)
{
	int x1 = a->x + a->w > b->x + b->w ? a->x + a->w : b->x + b->w;
	int y1 = a->y + a->h > b->y + b->h ? a->y + a->h : b->y + b->h;

	a->x = a->x < b->x ? a->x : b->x;
	a->y = a->y < b->y ? a->y : b->y;
	a->w = x1 - a->x;
	a->h = y1 - a->y;
}

/* Remember a drawn place; one already covering it is enough, and past
 * CURSOR_MAX_DRAWN the last slot grows to hold the rest. */
static void
cursor_remember(struct cursor *c, const struct cursor_rect *r)
{
	struct cursor_rect u;
	size_t i;

	for (i = 0; i < c->ndrawn; i++)
		if (cursor_clip(&c->drawn[i], r, &u) && u.w == r->w &&
		    u.h == r->h)
			return;
	if (c->ndrawn < CURSOR_MAX_DRAWN)
		c->drawn[c->ndrawn++] = *r;
	else
		cursor_union(&c->drawn[CURSOR_MAX_DRAWN - 1], r);
}

/* dst over: each channel is src + dst * (255 - a) / 255. */
static uint32_t
cursor_over(const struct cursor *c, uint32_t dst, uint32_t src)
{
	uint32_t a = src >> 24, out = dst, s, d, v;
	int i;

	for (i = 0; i < 3; i++) {
		s = (src >> (16 - 8 * i)) & 0xff;
		d = (dst >> c->shift[i]) & 0xff;
		v = s + (d * (255 - a) + 127) / 255;
		if (v > 255)
			v = 255;
		out = (out & ~(0xffu << c->shift[i])) | v << c->shift[i];
	}
	return out;
}

void
cursor_draw(struct cursor *c, char *fb, size_t stride, int x, int y, int w,
    int h)
{
	const struct cursor_rect area = { x, y, w, h };
	struct cursor_rect img, r;
	int row, col;
	uint32_t *dst, src;

	if (!cursor_bounds(c, &img) || !cursor_clip(&img, &area, &r))
		return;
	for (row = r.y; row < r.y + r.h; row++) {
		dst = (uint32_t *)(void *)(fb + (size_t)row * stride) + r.x;
		for (col = r.x; col < r.x + r.w; col++, dst++) {
			src = c->px[(size_t)(row - c->y - c->oy) * c->w +
			    (size_t)(col - c->x - c->ox)];
			if ((src >> 24) != 0)
				*dst = cursor_over(c, *dst, src);
		}
	}
	cursor_remember(c, &r);
}

size_t
cursor_take_drawn(struct cursor *c, struct cursor_rect *r, size_t max)
{
	size_t n = c->ndrawn < max ? c->ndrawn : max;

	memcpy(r, c->drawn, n * sizeof(*r));
	c->ndrawn = 0;
	return n;
}
