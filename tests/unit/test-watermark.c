/*
 * tests/unit/test-watermark.c — the watermark's template expansion, its
 * mask (corner and tiled layouts, with a synthetic block font) and the
 * blend into a framebuffer, without an X server.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gateway/watermark.h"
#include "tests/tap.h"

#define W	1280
#define H	800
#define T0	((time_t)1795607353)	/* 2026-11-25 11:49:13 UTC */

static const struct wm_pixfmt fmt = { 16, 8, 0 };

/* Every glyph a solid 4x6 block, the space empty. */
static void
block_font(struct wm_font *f)
{
	memset(f, 0, sizeof(*f));
	f->cw = 4;
	f->ch = 6;
	for (unsigned g = 1; g < WM_FONT_COUNT; g++)
		for (unsigned y = 0; y < f->ch; y++)
			memset(f->bits[g][y], 1, f->cw);
}

/* The blocks with one row cleared per glyph: glyphs differ. */
static void
distinct_font(struct wm_font *f)
{
	block_font(f);
	for (unsigned g = 1; g < WM_FONT_COUNT; g++)
		memset(f->bits[g][g % f->ch], 0, f->cw);
}

static struct watermark *
make_with(const char *text, double opacity, enum watermark_layout l,
    void (*font)(struct wm_font *))
{
	struct watermark_config c = { text, "alice@example.org", "abc123",
	    opacity, l };
	struct watermark *w = NULL;
	struct wm_font f;
	int changed;

	font(&f);
	if (watermark_alloc(&w, &c, W, H, &fmt) != WM_OK)
		return NULL;
	watermark_set_font(w, &f);
	if (watermark_update(w, T0, &changed) != WM_OK || !changed) {
		watermark_free(w);
		return NULL;
	}
	return w;
}

static struct watermark *
make(const char *text, double opacity, enum watermark_layout l)
{
	return make_with(text, opacity, l, block_font);
}

static void
test_expand(void)
{
	char out[WM_TEXT_MAX], small[8];

	tap_ok(watermark_expand("%r %s %t", "alice", "abc", T0, out,
	    sizeof(out)) == WM_OK && strcmp(out, "alice abc 2026-11-25 "
	    "11:49Z") == 0, "%%r %%s %%t expands (%s)", out);
	watermark_expand("%t", NULL, NULL, T0 + 46, small, sizeof(small));
	watermark_expand("%t", NULL, NULL, T0 + 46, out, sizeof(out));
	tap_ok(strcmp(out, "2026-11-25 11:49Z") == 0,
	    "minute resolution: 46 s later is the same text");
	watermark_expand("%t", NULL, NULL, T0 + 47, out, sizeof(out));
	tap_ok(strcmp(out, "2026-11-25 11:50Z") == 0,
	    "47 s later the minute turns (%s)", out);
	tap_ok(watermark_expand("%r/%s 100%%", NULL, NULL, T0, out,
	    sizeof(out)) == WM_OK && strcmp(out, "-/- 100%") == 0,
	    "no recipient or session: '-'; %%%% is a percent sign (%s)", out);
	tap_ok(watermark_expand("a%x", "r", "s", T0, out, sizeof(out)) ==
	    WM_EINPUT, "unknown escape refused");
	tap_ok(watermark_expand("a%", "r", "s", T0, out, sizeof(out)) ==
	    WM_EINPUT, "trailing %% refused");
	tap_ok(watermark_expand("%t", "r", "s", T0, small, sizeof(small)) ==
	    WM_EINPUT, "text longer than the buffer refused");
}

static void
test_config(void)
{
	struct watermark_config c = { "x", NULL, NULL, 0, WM_LAYOUT_TILE };
	struct watermark *w = NULL;
	enum watermark_layout l;

	tap_ok(watermark_alloc(&w, &c, W, H, &fmt) == WM_EINPUT && w == NULL,
	    "opacity 0 refused");
	c.opacity = 0.2;
	tap_ok(watermark_alloc(&w, &c, 0, H, &fmt) == WM_EINPUT,
	    "empty screen refused");
	tap_ok(watermark_layout_parse("corner", &l) == WM_OK &&
	    l == WM_LAYOUT_CORNER && watermark_layout_parse("tile", &l) ==
	    WM_OK && l == WM_LAYOUT_TILE && watermark_layout_parse("diag",
	    &l) == WM_EINPUT, "layouts: tile, corner; others refused");
	tap_ok(watermark_alloc(&w, &c, W, H, &fmt) == WM_OK, "alloc");
	tap_ok(watermark_update(w, T0, &(int){ 0 }) == WM_EFONT,
	    "no font: the mask is not built (fail closed)");
	watermark_free(w);
	watermark_free(NULL);
}

static void
test_corner(void)
{
	struct watermark *w = make("AB", 0.5, WM_LAYOUT_CORNER);
	unsigned tw = 2 * 4 * 2, th = 6 * 2;	/* 2 glyphs at 2x */
	int changed = 1;

	if (!tap_ok(w != NULL, "corner watermark built"))
		return;
	tap_ok(watermark_coverage(w) == (size_t)tw * th,
	    "corner: %zu mask pixels (want %u)", watermark_coverage(w),
	    tw * th);
	tap_ok(watermark_alpha(w, W - 8 - 1, H - 8 - 1) == 128 &&
	    watermark_alpha(w, W - 8 - tw, H - 8 - th) == 128 &&
	    watermark_alpha(w, W - 8, H - 8) == 0 &&
	    watermark_alpha(w, 0, 0) == 0,
	    "corner: alpha 128 (opacity 0.5) inside the text box only");
	tap_ok(watermark_next_change(w, T0) == 0,
	    "no %%t: the text never changes");
	watermark_update(w, T0 + 3600, &changed);
	tap_ok(!changed, "same text: the mask is not rebuilt");
	watermark_free(w);
}

/* Every 160x160 cell of the screen holds some of the tiled text. */
static int
tile_everywhere(const struct watermark *w)
{
	unsigned cx, cy, x, y, n;

	for (cy = 0; cy < H; cy += 160)
		for (cx = 0; cx < W; cx += 160) {
			for (n = 0, y = cy; y < cy + 160; y++)
				for (x = cx; x < cx + 160; x++)
					n += watermark_alpha(w, x, y) != 0;
			if (n == 0) {
				tap_diag("no text in the cell at %u,%u", cx,
				    cy);
				return 0;
			}
		}
	return 1;
}

static double
ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static void
test_tile(void)
{
	struct timespec t0;
	struct watermark *w;
	double frac;
	int changed = 0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	w = make("%r %s %t", 0.15, WM_LAYOUT_TILE);
	tap_diag("tiled mask of 1280x800 built in %.1f ms of CPU", ms_since(&t0));

	if (!tap_ok(w != NULL, "tiled watermark built"))
		return;
	frac = (double)watermark_coverage(w) / (W * H);
	tap_ok(frac > 0.03 && frac < 0.35,
	    "tile: %.1f%% of the screen carries text", 100 * frac);
	tap_ok(tile_everywhere(w), "tile: the text repeats over the whole "
	    "screen");
	tap_ok(strcmp(watermark_text(w), "alice@example.org abc123 "
	    "2026-11-25 11:49Z") == 0, "text: %s", watermark_text(w));
	tap_ok(watermark_next_change(w, T0) == T0 - 13 + 60,
	    "%%t: next change at the next minute");
	watermark_update(w, T0 + 47, &changed);
	tap_ok(changed && strstr(watermark_text(w), "11:50Z") != NULL,
	    "a new minute rebuilds the mask");
	watermark_free(w);
}

/* A new minute: watermark_changed covers every pixel that changed
 * (prev is the mask before, read through watermark_alpha) with less than
 * the whole screen. */
static void
test_changed(enum watermark_layout l, const char *name)
{
	struct watermark *w = make_with("%r %t", 0.3, l, distinct_font);
	static uint8_t before[H][W];
	struct wm_rect r[128];
	unsigned x, y, missed = 0, diff = 0;
	size_t area = 0;
	int n, i, in, changed;

	if (!tap_ok(w != NULL, "%s: built", name))
		return;
	tap_ok(watermark_changed(w, r, 128) == -1,
	    "%s: the first mask is drawn whole", name);
	for (y = 0; y < H; y++)
		for (x = 0; x < W; x++)
			before[y][x] = (uint8_t)watermark_alpha(w, x, y);
	watermark_update(w, T0 + 47, &changed);
	n = watermark_changed(w, r, 128);
	for (i = 0; i < n; i++)
		area += (size_t)r[i].w * r[i].h;
	for (y = 0; y < H; y++)
		for (x = 0; x < W; x++) {
			if (before[y][x] == watermark_alpha(w, x, y))
				continue;
			diff++;
			for (in = 0, i = 0; i < n && !in; i++)
				in = (int)x >= r[i].x && (int)x < r[i].x + r[i].w &&
				    (int)y >= r[i].y && (int)y < r[i].y + r[i].h;
			missed += !in;
		}
	tap_ok(changed && n > 0 && diff > 0 && missed == 0 &&
	    area < (size_t)W * H / 2, "%s: a new minute redraws %d "
	    "rectangles, %.1f%% of the screen, covering all %u changed "
	    "pixels (%u missed)", name, n, 100.0 * area / (W * H), diff,
	    missed);
	tap_ok(watermark_changed(w, r, 1) == -1 || n <= 1,
	    "%s: more rectangles than allowed: the whole screen", name);
	watermark_free(w);
}

static uint32_t
px(const char *fb, unsigned x, unsigned y)
{
	return ((const uint32_t *)(const void *)fb)[(size_t)y * W + x];
}

/* Warm cache, best of 20: a 130-row strip (a 120 px box moving) and
 * the whole screen. */
static void
blend_timing(const struct watermark *w, char *fb)
{
	struct timespec t0;
	double best[2] = { 1e9, 1e9 }, ms;
	int i, k, rows[2] = { 130, H };

	for (k = 0; k < 2; k++)
		for (i = 0; i < 20; i++) {
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
			watermark_blend(w, fb, (size_t)W * 4, 0, 0, W, rows[k]);
			if ((ms = ms_since(&t0)) < best[k])
				best[k] = ms;
		}
	tap_diag("blend, warm, best of 20: 1280x130 strip %.3f ms, whole "
	    "screen %.3f ms", best[0], best[1]);
}

/* White and black rows; the rectangle x [300, 900), y [100, 700) is
 * blended. */
static void
test_blend(void)
{
	struct watermark *w = make("%r %s %t", 0.15, WM_LAYOUT_TILE);
	char *fb = malloc((size_t)W * H * 4);
	unsigned x, y, a, bad = 0, hit = 0, outside = 0;
	uint32_t want, p;
	struct timespec t0;
	double ms;

	if (!tap_ok(w != NULL && fb != NULL, "blend set-up"))
		goto out;
	for (y = 0; y < H; y++)
		for (x = 0; x < W; x++)
			((uint32_t *)(void *)fb)[(size_t)y * W + x] =
			    y < 400 ? 0xffffff : 0x000000;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	watermark_blend(w, fb, (size_t)W * 4, 300, 100, 600, 600);
	ms = ms_since(&t0);
	for (y = 0; y < H; y++)
		for (x = 0; x < W; x++) {
			a = watermark_alpha(w, x, y);
			p = px(fb, x, y);
			if (y < 100 || y >= 700 || x < 300 || x >= 900) {
				outside += p != (y < 400 ? 0xffffffu : 0u);
				continue;
			}
			hit += a != 0;
			want = y < 400 ? (255 - a) * 0x010101u : a * 0x010101u;
			bad += p != want;
		}
	tap_ok(hit > 0 && bad == 0, "blend: every pixel is exact (%u mask "
	    "pixels, %u wrong): white darkens, black lightens", hit, bad);
	tap_ok(outside == 0, "blend: pixels outside the rectangle untouched");
	tap_ok(px(fb, 0, 0) == 0xffffff, "blend: alpha 0 leaves the pixel");
	tap_diag("blend of a 600x600 rectangle: %.2f ms (cold)", ms);
	blend_timing(w, fb);
out:
	free(fb);
	watermark_free(w);
}

int
main(void)
{
	test_expand();
	test_config();
	test_corner();
	test_tile();
	test_blend();
	test_changed(WM_LAYOUT_CORNER, "corner");
	test_changed(WM_LAYOUT_TILE, "tile");
	return tap_done();
}
