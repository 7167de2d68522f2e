/*
 * gateway/watermark.c — a text watermark (recipient, session, time)
 * burned into the framebuffer after each grab, so what the client sees
 * and what the recording holds carry it, and X never does.
 *
 * Why this shape: the text changes at most once a minute, the frames up
 * to 60 times a second.  So the expensive part (laying the text out,
 * rotated and anti-aliased, over the whole screen) happens once per
 * change into a screen-sized mask of coverage levels (and the mask's
 * runs per row), and the per-frame part walks only those runs inside
 * the rectangles just copied from X, three table look-ups a pixel.  The glyphs are read once from the X server's
 * built-in "fixed" font (no new dependency, no font files) before the
 * seccomp filter; nothing later needs X for the watermark.  The colour
 * is black over light pixels and white over dark ones, so the text
 * stays visible on any page.  Unprivileged worker; inputs are the
 * checked policy and our own X server.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <X11/Xlib.h>
#include <X11/Xutil.h>

#include "gateway/watermark.h"

#define WM_ANGLE_DEG	30.0	/* tile text rises left to right */
#define WM_GAP_LINES	3	/* gap between repeats, in text heights */
#define WM_PITCH_LINES	5	/* line pitch, in text heights */
#define WM_MARGIN	8	/* pixels from the corner (corner layout) */
#define WM_SUB		2	/* supersamples per axis (anti-aliasing) */
#define WM_LEVELS	(WM_SUB * WM_SUB + 1)	/* coverage 0 .. SUB^2 */

struct watermark {
	char		 tmpl[WM_TEXT_MAX];
	char		 recipient[WM_TEXT_MAX];
	char		 session[WM_TEXT_MAX];
	enum watermark_layout layout;
	unsigned	 alpha;		/* opacity * 255 */
	unsigned	 width, height;
	struct wm_pixfmt fmt;
	struct wm_font	 font;
	int		 has_font;
	int		 has_time;	/* the template has %t */
	char		 text[WM_TEXT_MAX];	/* of the current mask */
	uint8_t		*mask;		/* width * height coverage levels */
	uint8_t		*prev;		/* the mask before the last update */
	int		 prev_valid;
	uint8_t		 level_alpha[WM_LEVELS];
	/* the mixed channel value per level, towards black / white */
	uint8_t		 lut[WM_LEVELS][2][256];
	struct wm_span	*spans;		/* runs of non-zero mask pixels */
	size_t		 nspans, cap;
	uint32_t	*row0;		/* row r: spans[row0[r] .. row0[r+1]) */
};

/* A run of non-zero mask pixels in one row. */
struct wm_span {
	uint16_t	 x, n;
};

/* A text bitmap: one byte (0/1) per pixel. */
struct wm_bitmap {
	unsigned	 w, h;
	uint8_t		*px;
};

const char *
watermark_strerror(int status)
{
	switch (status) {
	case WM_OK:	return "ok";
	case WM_ENOMEM:	return "out of memory";
	case WM_EINPUT:	return "bad watermark template, size or font";
	case WM_EFONT:	return "the X server has no usable \"fixed\" font";
	}
	return "unknown watermark error";
}

int
watermark_layout_parse(const char *s, enum watermark_layout *l)
{
	if (strcmp(s, "tile") == 0)
		*l = WM_LAYOUT_TILE;
	else if (strcmp(s, "corner") == 0)
		*l = WM_LAYOUT_CORNER;
	else
		return WM_EINPUT;
	return WM_OK;
}

/* Append s to out at *n; -1 when it does not fit. */
static int
wm_put(char *out, size_t outsz, size_t *n, const char *s)
{
	size_t len = strlen(s);

	if (*n + len >= outsz)
		return -1;
	memcpy(out + *n, s, len + 1);
	*n += len;
	return 0;
}

/* UTC to the minute, formatted by hand: no locale or zone files. */
static void
wm_time(time_t now, char *buf, size_t n)
{
	struct tm tm;

	if (gmtime_r(&now, &tm) == NULL) {
		snprintf(buf, n, "(no time)");
		return;
	}
	snprintf(buf, n, "%04d-%02d-%02d %02d:%02dZ", tm.tm_year + 1900,
	    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min);
}

int
watermark_expand(const char *tmpl, const char *recipient,
    const char *session, time_t now, char *out, size_t outsz)
{
	char tbuf[64], one[2] = { 0, 0 };
	const char *s;
	size_t n = 0;

	if (outsz == 0)
		return WM_EINPUT;
	out[0] = '\0';
	for (; *tmpl != '\0'; tmpl++) {
		if (*tmpl != '%') {
			one[0] = *tmpl;
			s = one;
		} else {
			switch (*++tmpl) {
			case 'r': s = recipient ? recipient : "-"; break;
			case 's': s = session ? session : "-"; break;
			case 't': wm_time(now, tbuf, sizeof(tbuf)); s = tbuf; break;
			case '%': s = "%"; break;
			default: return WM_EINPUT;	/* also a trailing % */
			}
		}
		if (wm_put(out, outsz, &n, s) != 0)
			return WM_EINPUT;
	}
	return WM_OK;
}

static int
wm_copy(char *dst, size_t n, const char *src)
{
	return snprintf(dst, n, "%s", src ? src : "-") >= (int)n ? -1 : 0;
}

/* What each coverage level does to a channel value: the blend is then
 * three table look-ups a pixel. */
static void
wm_luts(struct watermark *w)
{
	int l, c, a;

	for (l = 0; l < WM_LEVELS; l++) {
		a = (int)((l * w->alpha + (WM_LEVELS - 1) / 2) / (WM_LEVELS - 1));
		w->level_alpha[l] = (uint8_t)a;
		for (c = 0; c < 256; c++) {
			w->lut[l][0][c] = (uint8_t)(c - c * a / 255);
			w->lut[l][1][c] = (uint8_t)(c + (255 - c) * a / 255);
		}
	}
}

int
watermark_alloc(struct watermark **wp, const struct watermark_config *cfg,
    unsigned width, unsigned height, const struct wm_pixfmt *fmt)
{
	struct watermark *w;

	*wp = NULL;
	if (cfg->text == NULL || width == 0 || height == 0 ||
	    width > UINT16_MAX || height > UINT16_MAX ||
	    !(cfg->opacity > 0 && cfg->opacity <= 1))
		return WM_EINPUT;
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return WM_ENOMEM;
	if (wm_copy(w->tmpl, sizeof(w->tmpl), cfg->text) != 0 ||
	    wm_copy(w->recipient, sizeof(w->recipient), cfg->recipient) ||
	    wm_copy(w->session, sizeof(w->session), cfg->session)) {
		free(w);
		return WM_EINPUT;
	}
	w->layout = cfg->layout;
	w->alpha = (unsigned)lround(cfg->opacity * 255.0);
	wm_luts(w);
	w->width = width;
	w->height = height;
	w->fmt = *fmt;
	w->has_time = strstr(w->tmpl, "%t") != NULL;
	w->mask = calloc(width, height);
	w->prev = calloc(width, height);
	w->row0 = calloc((size_t)height + 1, sizeof(*w->row0));
	if (w->mask == NULL || w->prev == NULL || w->row0 == NULL) {
		watermark_free(w);
		return WM_ENOMEM;
	}
	*wp = w;
	return WM_OK;
}

void
watermark_free(struct watermark *w)
{
	if (w == NULL)
		return;
	free(w->mask);
	free(w->prev);
	free(w->spans);
	free(w->row0);
	free(w);
}

void
watermark_set_font(struct watermark *w, const struct wm_font *f)
{
	w->font = *f;
	w->has_font = f->cw > 0 && f->ch > 0 && f->cw <= WM_FONT_MAX_W &&
	    f->ch <= WM_FONT_MAX_H;
}

/* Copy the 95 glyphs out of an image of them drawn side by side. */
static void
wm_font_from_image(struct wm_font *f, XImage *img)
{
	unsigned g, x, y;

	for (g = 0; g < WM_FONT_COUNT; g++)
		for (y = 0; y < f->ch; y++)
			for (x = 0; x < f->cw; x++)
				f->bits[g][y][x] = XGetPixel(img,
				    (int)(g * f->cw + x), (int)y) != 0;
}

/* Draw every printable ASCII glyph into a private 1-bit pixmap, under a
 * server grab so no other client can touch it, and read it back. */
static int
wm_font_draw(Display *dpy, XFontStruct *fs, struct wm_font *f)
{
	char s[WM_FONT_COUNT];
	Pixmap pm;
	GC gc;
	XImage *img;
	unsigned i, aw = f->cw * WM_FONT_COUNT;

	for (i = 0; i < WM_FONT_COUNT; i++)
		s[i] = (char)(WM_FONT_FIRST + i);
	XGrabServer(dpy);
	pm = XCreatePixmap(dpy, DefaultRootWindow(dpy), aw, f->ch, 1);
	gc = XCreateGC(dpy, pm, 0, NULL);
	XSetFont(dpy, gc, fs->fid);
	XSetForeground(dpy, gc, 0);
	XFillRectangle(dpy, pm, gc, 0, 0, aw, f->ch);
	XSetForeground(dpy, gc, 1);
	XDrawString(dpy, pm, gc, 0, fs->ascent, s, WM_FONT_COUNT);
	img = XGetImage(dpy, pm, 0, 0, aw, f->ch, 1, ZPixmap);
	XUngrabServer(dpy);
	XFreeGC(dpy, gc);
	XFreePixmap(dpy, pm);
	XSync(dpy, False);
	if (img == NULL)
		return WM_EFONT;
	wm_font_from_image(f, img);
	XDestroyImage(img);
	return WM_OK;
}

int
watermark_font_x11(struct watermark *w, Display *dpy)
{
	XFontStruct *fs;
	int st = WM_EFONT;

	if ((fs = XLoadQueryFont(dpy, "fixed")) == NULL)
		return WM_EFONT;
	w->font.cw = (unsigned)fs->max_bounds.width;
	w->font.ch = (unsigned)(fs->ascent + fs->descent);
	if (fs->min_bounds.width == fs->max_bounds.width &&
	    w->font.cw > 0 && w->font.cw <= WM_FONT_MAX_W &&
	    w->font.ch > 0 && w->font.ch <= WM_FONT_MAX_H &&
	    (st = wm_font_draw(dpy, fs, &w->font)) == WM_OK)
		w->has_font = 1;
	XFreeFont(dpy, fs);
	return st;
}

/* The text at an integer scale: 2x when a line of it fits the screen. */
static int
wm_render(const struct watermark *w, const char *text, struct wm_bitmap *b)
{
	const struct wm_font *f = &w->font;
	size_t len = strlen(text), i;
	unsigned sc, x, y, g;

	sc = len * f->cw * 2 <= w->width ? 2 : 1;
	b->w = (unsigned)len * f->cw * sc;
	b->h = f->ch * sc;
	if (len == 0)
		return WM_EINPUT;
	if ((b->px = calloc(b->w, b->h)) == NULL)
		return WM_ENOMEM;
	for (i = 0; i < len; i++) {
		g = (unsigned char)text[i] - WM_FONT_FIRST;
		if (g >= WM_FONT_COUNT)
			g = '?' - WM_FONT_FIRST;
		for (y = 0; y < b->h; y++)
			for (x = 0; x < f->cw * sc; x++)
				b->px[(size_t)y * b->w + i * f->cw * sc + x] =
				    f->bits[g][y / sc][x / sc];
	}
	return WM_OK;
}

/* The tiled layout's geometry: text lines rising at WM_ANGLE_DEG. */
struct wm_tiling {
	double		 cs, sn;	/* of the angle */
	double		 period;	/* along a line: text + gap */
	double		 pitch;		/* between lines */
	double		 shift;		/* keeps u positive on screen */
};

/* Is the screen point (x, y) on text?  The point is turned into the
 * text's frame (u along the lines, v across them, both >= 0 on the
 * screen); every other line is shifted by half a period (staggered). */
static int
wm_tile_hit(const struct wm_bitmap *b, const struct wm_tiling *t, double x,
    double y)
{
	double u, v;
	long j;

	v = x * t->sn + y * t->cs;
	j = (long)(v / t->pitch);
	v -= (double)j * t->pitch;
	if (v >= b->h)
		return 0;
	u = x * t->cs - y * t->sn + t->shift + (j & 1) * t->period / 2;
	u -= (double)(long)(u / t->period) * t->period;
	if (u >= b->w)
		return 0;
	return b->px[(size_t)v * b->w + (size_t)u];
}

/* Is a whole pixel (centre x, y) between two lines of text?  Its
 * samples are within 1 of its centre; most pixels are, and skip them. */
static int
wm_tile_far(const struct wm_bitmap *b, const struct wm_tiling *t, double x,
    double y)
{
	double v = x * t->sn + y * t->cs;

	v -= (double)(long)(v / t->pitch) * t->pitch;
	return v >= b->h + 1 && v < t->pitch - 1;
}

static void
wm_build_tile(struct watermark *w, const struct wm_bitmap *b)
{
	double a = WM_ANGLE_DEG * M_PI / 180.0;
	struct wm_tiling t;
	unsigned x, y, i, j, n;

	t.cs = cos(a);
	t.sn = sin(a);
	t.period = b->w + (double)b->h * WM_GAP_LINES;
	t.pitch = (double)b->h * WM_PITCH_LINES;
	t.shift = ceil(w->height * t.sn / t.period + 1) * t.period;
	for (y = 0; y < w->height; y++)
		for (x = 0; x < w->width; x++) {
			n = 0;
			if (wm_tile_far(b, &t, x + 0.5, y + 0.5))
				continue;	/* mask is zeroed */
			for (j = 0; j < WM_SUB; j++)
				for (i = 0; i < WM_SUB; i++)
					n += (unsigned)wm_tile_hit(b, &t,
					    x + (i + 0.5) / WM_SUB,
					    y + (j + 0.5) / WM_SUB);
			w->mask[(size_t)y * w->width + x] = (uint8_t)n;
		}
}

/* One line, bottom right, clipped on the left if it is too long. */
static void
wm_build_corner(struct watermark *w, const struct wm_bitmap *b)
{
	long x0 = (long)w->width - (long)b->w - WM_MARGIN,
	    y0 = (long)w->height - (long)b->h - WM_MARGIN;
	long x, y;

	for (y = 0; y < (long)b->h; y++)
		for (x = 0; x < (long)b->w; x++)
			if (x0 + x >= 0 && y0 + y >= 0 &&
			    b->px[(size_t)y * b->w + (size_t)x])
				w->mask[(size_t)(y0 + y) * w->width +
				    (size_t)(x0 + x)] = WM_LEVELS - 1;
}

/* Runs of non-zero pixels in row y, counted (and stored into out when
 * it is not NULL). */
static size_t
wm_row_runs(const struct watermark *w, unsigned y, struct wm_span *out)
{
	const uint8_t *m = w->mask + (size_t)y * w->width;
	unsigned x = 0, x0;
	size_t n = 0;

	while (x < w->width) {
		for (; x < w->width && m[x] == 0; x++)
			;
		for (x0 = x; x < w->width && m[x] != 0; x++)
			;
		if (x > x0) {
			if (out != NULL)
				out[n] = (struct wm_span){ (uint16_t)x0,
				    (uint16_t)(x - x0) };
			n++;
		}
	}
	return n;
}

/* The mask as runs per row, so a blend visits only text pixels. */
static int
wm_spans(struct watermark *w)
{
	struct wm_span *sp;
	size_t n = 0;
	unsigned y;

	for (y = 0; y < w->height; y++)
		n += wm_row_runs(w, y, NULL);
	if (n > w->cap) {
		if ((sp = realloc(w->spans, n * sizeof(*sp))) == NULL)
			return WM_ENOMEM;
		w->spans = sp;
		w->cap = n;
	}
	for (n = 0, y = 0; y < w->height; y++) {
		w->row0[y] = (uint32_t)n;
		n += wm_row_runs(w, y, w->spans + n);
	}
	w->row0[w->height] = (uint32_t)n;
	w->nspans = n;
	return WM_OK;
}

int
watermark_update(struct watermark *w, time_t now, int *changed)
{
	char text[WM_TEXT_MAX];
	struct wm_bitmap b;
	int st;

	*changed = 0;
	if (!w->has_font)
		return WM_EFONT;
	if ((st = watermark_expand(w->tmpl, w->recipient, w->session, now,
	    text, sizeof(text))) != WM_OK)
		return st;
	if (strcmp(text, w->text) == 0 && w->text[0] != '\0')
		return WM_OK;
	if ((st = wm_render(w, text, &b)) != WM_OK)
		return st;
	w->prev_valid = w->text[0] != '\0';
	memcpy(w->prev, w->mask, (size_t)w->width * w->height);
	memset(w->mask, 0, (size_t)w->width * w->height);
	if (w->layout == WM_LAYOUT_CORNER)
		wm_build_corner(w, &b);
	else
		wm_build_tile(w, &b);
	free(b.px);
	if ((st = wm_spans(w)) != WM_OK) {
		w->text[0] = '\0';	/* rebuilt next time */
		return st;
	}
	memcpy(w->text, text, sizeof(text));
	*changed = 1;
	return WM_OK;
}

/* Does the block at (bx, by) differ between the old and the new mask? */
static int
wm_block_changed(const struct watermark *w, unsigned bx, unsigned by)
{
	unsigned y, x0 = bx * WM_BLOCK, n, y1 = (by + 1) * WM_BLOCK;
	size_t off;

	n = x0 + WM_BLOCK <= w->width ? WM_BLOCK : w->width - x0;
	if (y1 > w->height)
		y1 = w->height;
	for (y = by * WM_BLOCK; y < y1; y++) {
		off = (size_t)y * w->width + x0;
		if (memcmp(w->mask + off, w->prev + off, n) != 0)
			return 1;
	}
	return 0;
}

/* Changed blocks, runs of them along a block row as one rectangle. */
int
watermark_changed(const struct watermark *w, struct wm_rect *out,
    size_t max)
{
	unsigned bx, by, run, nbx = (w->width + WM_BLOCK - 1) / WM_BLOCK,
	    nby = (w->height + WM_BLOCK - 1) / WM_BLOCK;
	size_t n = 0;

	if (!w->prev_valid)
		return -1;
	for (by = 0; by < nby; by++)
		for (bx = 0; bx < nbx; bx += run + 1) {
			for (run = 0; bx + run < nbx &&
			    wm_block_changed(w, bx + run, by); run++)
				;
			if (run == 0)
				continue;
			if (n == max)
				return -1;
			out[n].x = (int)(bx * WM_BLOCK);
			out[n].y = (int)(by * WM_BLOCK);
			out[n].w = (int)((bx + run) * WM_BLOCK > w->width ?
			    w->width : (bx + run) * WM_BLOCK) - out[n].x;
			out[n].h = (int)((by + 1) * WM_BLOCK > w->height ?
			    w->height : (by + 1) * WM_BLOCK) - out[n].y;
			n++;
		}
	return (int)n;
}

time_t
watermark_next_change(const struct watermark *w, time_t now)
{
	if (!w->has_time)
		return 0;
	return now - now % 60 + 60;
}

const char *
watermark_text(const struct watermark *w)
{
	return w->text;
}

size_t
watermark_coverage(const struct watermark *w)
{
	size_t i, n = 0, all = (size_t)w->width * w->height;

	for (i = 0; i < all; i++)
		n += w->mask[i] != 0;
	return n;
}

unsigned
watermark_alpha(const struct watermark *w, unsigned x, unsigned y)
{
	if (x >= w->width || y >= w->height)
		return 0;
	return w->level_alpha[w->mask[(size_t)y * w->width + x]];
}

/* Towards black over light pixels, towards white over dark ones.  The
 * shifts come in as values: a store through the framebuffer's uint32_t
 * may alias the struct's ints, which would reload them every pixel. */
static inline uint32_t
wm_mix(uint32_t p, const uint8_t (*t)[256], int rs, int gs, int bs)
{
	unsigned r = (p >> rs) & 0xff, g = (p >> gs) & 0xff,
	    b = (p >> bs) & 0xff;
	int light = 2 * r + 5 * g + b < 128 * 8;

	p &= ~((0xffu << rs) | (0xffu << gs) | (0xffu << bs));
	return p | (uint32_t)t[light][r] << rs | (uint32_t)t[light][g] << gs |
	    (uint32_t)t[light][b] << bs;
}

void
watermark_blend(const struct watermark *w, char *fb, size_t stride, int x,
    int y, int width, int height)
{
	const int rs = w->fmt.red_shift, gs = w->fmt.green_shift,
	    bs = w->fmt.blue_shift;
	const struct wm_span *sp, *se;
	const uint8_t *m;
	uint32_t *row;
	int r, x0 = x < 0 ? 0 : x, x1 = x + width, y1 = y + height;
	unsigned c, ce;

	if (y < 0)
		y = 0;
	if (y1 > (int)w->height)
		y1 = (int)w->height;
	for (r = y; r < y1; r++) {
		m = w->mask + (size_t)r * w->width;
		row = (uint32_t *)(void *)(fb + (size_t)r * stride);
		se = w->spans + w->row0[r + 1];
		for (sp = w->spans + w->row0[r]; sp < se; sp++) {
			c = sp->x > x0 ? sp->x : (unsigned)x0;
			ce = (int)(sp->x + sp->n) < x1 ? sp->x + sp->n :
			    (unsigned)(x1 > 0 ? x1 : 0);
			for (; c < ce; c++)
				row[c] = wm_mix(row[c], w->lut[m[c]], rs, gs,
				    bs);
		}
	}
}
