/*
 * gateway/watermark.h — the watermark burned into every frame the
 * worker serves and records: recipient, session and time.
 *
 * The text comes from a template (%r recipient, %s session id, %t UTC
 * time to the minute, %% a percent sign) and is drawn, with glyphs
 * taken once from the X server's built-in "fixed" font before the
 * seccomp filter, into a mask the size of the screen.  Every
 * rectangle copied from X is blended with the mask in the framebuffer
 * (x11_set_overlay), so the text never exists on the X
 * server's screen: the browser can neither read nor cover it.  The mask
 * is rebuilt only when the text changes (at most once a minute).
 * Trust: runs in the unprivileged worker; its inputs are the policy
 * (checked by policy/spec.c) and our own X server's font.
 */
#ifndef GATEWAY_WATERMARK_H
#define GATEWAY_WATERMARK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <X11/Xlib.h>

enum watermark_status {
	WM_OK = 0,
	WM_ENOMEM,
	WM_EINPUT,		/* bad template, geometry or font */
	WM_EFONT		/* the X server has no usable "fixed" font */
};

enum watermark_layout {
	WM_LAYOUT_TILE = 0,	/* staggered rows rising at 30 degrees */
	WM_LAYOUT_CORNER	/* one line in the bottom-right corner */
};

#define WM_TEXT_MAX	256	/* bytes of expanded text */
#define WM_FONT_FIRST	32	/* printable ASCII only */
#define WM_FONT_COUNT	95
#define WM_FONT_MAX_W	16
#define WM_FONT_MAX_H	32

/* A monospaced bitmap font: one byte (0/1) per pixel of each glyph. */
struct wm_font {
	unsigned	 cw, ch;	/* cell width and height */
	uint8_t		 bits[WM_FONT_COUNT][WM_FONT_MAX_H][WM_FONT_MAX_W];
};

struct watermark_config {
	const char	*text;		/* the template */
	const char	*recipient;	/* NULL: "-" */
	const char	*session;
	double		 opacity;	/* 0.05 .. 0.6 */
	enum watermark_layout layout;
};

/* The pixel layout of the framebuffer (32 bpp little-endian words). */
struct wm_pixfmt {
	int		 red_shift, green_shift, blue_shift;
};

/* A screen rectangle. */
struct wm_rect {
	int		 x, y, w, h;
};

struct watermark;

const char *watermark_strerror(int status);
/* Parse "tile" or "corner". */
int	 watermark_layout_parse(const char *s, enum watermark_layout *l);

/* Expand a template at time now (UTC, minute resolution) into out. */
int	 watermark_expand(const char *tmpl, const char *recipient,
	    const char *session, time_t now, char *out, size_t outsz);

int	 watermark_alloc(struct watermark **wp,
	    const struct watermark_config *cfg, unsigned width,
	    unsigned height, const struct wm_pixfmt *fmt);
void	 watermark_free(struct watermark *w);

/* Take the glyphs from the X server (before the filter), or use f. */
int	 watermark_font_x11(struct watermark *w, Display *dpy);
void	 watermark_set_font(struct watermark *w, const struct wm_font *f);

/* Build the mask for the text at time now.  *changed is set when the
 * text (and so the mask) differs from the last one. */
int	 watermark_update(struct watermark *w, time_t now, int *changed);
/* Where the last update changed the mask: at most max rectangles (of
 * WM_BLOCK-pixel blocks) into out; -1 when the whole screen must be
 * redrawn (the first mask, or more rectangles than max). */
int	 watermark_changed(const struct watermark *w, struct wm_rect *out,
	    size_t max);
#define WM_BLOCK	64
/* When the text may change next (UTC seconds); 0 = never (no %t). */
time_t	 watermark_next_change(const struct watermark *w, time_t now);
/* The text of the current mask. */
const char *watermark_text(const struct watermark *w);
/* Mask pixels that are not fully transparent (tests, statistics). */
size_t	 watermark_coverage(const struct watermark *w);
/* The mask's alpha at (x, y), 0..255 (tests). */
unsigned watermark_alpha(const struct watermark *w, unsigned x,
	    unsigned y);

/* Blend the mask into the rectangle (x, y, width, height) of fb. */
void	 watermark_blend(const struct watermark *w, char *fb,
	    size_t stride, int x, int y, int width, int height);

#endif
