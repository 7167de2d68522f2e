/*
 * tests/unit/test-cursor.c — the pointer drawn into a framebuffer
 * (gateway/cursor.c): compositing of premultiplied pixels, trimming of
 * transparent borders, the hot spot, clipping at the screen's edges,
 * drawing only inside the grabbed rectangle, and the places remembered
 * for the next grab — without an X server.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/cursor.h"
#include "tests/tap.h"

#define W	64
#define H	48
#define BG	0x00102030u	/* r 0x10, g 0x20, b 0x30 */

static uint32_t fb[W * H];

static void
fb_clear(void)
{
	for (size_t i = 0; i < W * H; i++)
		fb[i] = BG;
}

static uint32_t
at(int x, int y)
{
	return fb[y * W + x];
}

static size_t
changed(void)
{
	size_t n = 0;

	for (size_t i = 0; i < W * H; i++)
		n += fb[i] != BG;
	return n;
}

static void
draw_all(struct cursor *c)
{
	cursor_draw(c, (char *)fb, W * 4, 0, 0, W, H);
}

int
main(void)
{
	struct cursor *c;
	struct cursor_rect r, d[CURSOR_MAX_DRAWN];
	uint32_t img[16 * 16], *big;
	size_t n;
	int b;

	tap_ok(cursor_alloc(&c, 0, H, 16, 8, 0) == CURSOR_EINPUT,
	    "a zero-width screen is refused");
	tap_ok(cursor_alloc(&c, W, H, 16, 8, 3) == CURSOR_EINPUT,
	    "a channel not on a byte boundary is refused");
	tap_ok(cursor_alloc(&c, W, H, 16, 8, 0) == CURSOR_OK, "alloc");

	/* No image yet: nothing drawn, no bounds. */
	fb_clear();
	draw_all(c);
	tap_ok(changed() == 0 && !cursor_bounds(c, &r),
	    "no image: nothing drawn");

	/* 16x16, only a 2x3 opaque white block at (5,6), hot spot (5,6). */
	memset(img, 0, sizeof(img));
	for (int y = 6; y < 9; y++)
		for (int x = 5; x < 7; x++)
			img[y * 16 + x] = 0xffffffffu;
	cursor_set_image(c, 16, 16, 5, 6, img);
	cursor_move(c, 10, 20);
	b = cursor_bounds(c, &r);
	tap_ok(b && r.x == 10 && r.y == 20 && r.w == 2 &&
	    r.h == 3, "bounds are the trimmed image at the hot spot "
	    "(%d,%d %dx%d)", r.x, r.y, r.w, r.h);
	draw_all(c);
	tap_ok(changed() == 6 && at(10, 20) == 0x00ffffffu &&
	    at(11, 22) == 0x00ffffffu, "opaque pixels replace the frame "
	    "(%zu changed)", changed());
	n = cursor_take_drawn(c, d, CURSOR_MAX_DRAWN);
	tap_ok(n == 1 && d[0].x == 10 && d[0].y == 20 && d[0].w == 2 &&
	    d[0].h == 3, "the drawn place is remembered");
	tap_ok(cursor_take_drawn(c, d, CURSOR_MAX_DRAWN) == 0,
	    "and forgotten once taken");

	/* Half-transparent black (premultiplied: a=128, rgb 0) halves. */
	memset(img, 0, sizeof(img));
	img[0] = 0x80000000u;
	cursor_set_image(c, 16, 16, 0, 0, img);
	fb_clear();
	draw_all(c);
	tap_ok(at(10, 20) == 0x00081018u, "alpha 128 black over "
	    "(0x10,0x20,0x30) gives (0x08,0x10,0x18): 0x%08x", at(10, 20));

	/* Premultiplied red at a=128 (r=0x80) over the background. */
	img[0] = 0x80800000u;
	cursor_set_image(c, 16, 16, 0, 0, img);
	fb_clear();
	draw_all(c);
	tap_ok(at(10, 20) == 0x00881018u, "premultiplied red adds: 0x%08x",
	    at(10, 20));

	/* Another channel order (blue high). */
	cursor_free(c);
	tap_ok(cursor_alloc(&c, W, H, 0, 8, 16) == CURSOR_OK, "alloc BGR");
	img[0] = 0xff0000ffu;	/* opaque blue */
	cursor_set_image(c, 16, 16, 0, 0, img);
	cursor_move(c, 1, 1);
	fb_clear();
	draw_all(c);
	tap_ok(at(1, 1) == 0x00ff0000u, "blue lands at shift 16: 0x%08x",
	    at(1, 1));
	cursor_free(c);
	cursor_alloc(&c, W, H, 16, 8, 0);

	/* Only inside the grabbed rectangle. */
	memset(img, 0, sizeof(img));
	for (int i = 0; i < 16 * 16; i++)
		img[i] = 0xff000000u;	/* opaque black 16x16 */
	cursor_set_image(c, 16, 16, 0, 0, img);
	cursor_move(c, 8, 8);
	fb_clear();
	cursor_draw(c, (char *)fb, W * 4, 0, 0, 12, 12);
	tap_ok(changed() == 16, "a grab of (0,0 12x12) gets only its 4x4 of "
	    "the pointer (%zu)", changed());
	n = cursor_take_drawn(c, d, CURSOR_MAX_DRAWN);
	tap_ok(n == 1 && d[0].x == 8 && d[0].w == 4 && d[0].h == 4,
	    "the place remembered is that part");

	/* Clipped at the screen's edges. */
	cursor_move(c, W - 4, H - 2);
	b = cursor_bounds(c, &r);
	tap_ok(b && r.w == 4 && r.h == 2,
	    "bottom-right corner: %dx%d", r.w, r.h);
	fb_clear();
	draw_all(c);
	tap_ok(changed() == 8, "only the visible 8 pixels drawn");
	cursor_move(c, -10, -12);
	b = cursor_bounds(c, &r);
	tap_ok(b && r.x == 0 && r.y == 0 && r.w == 6 &&
	    r.h == 4, "top-left, partly off: %d,%d %dx%d", r.x, r.y, r.w,
	    r.h);
	cursor_move(c, W + 5, 3);
	tap_ok(!cursor_bounds(c, &r), "off the screen: no bounds");
	(void)cursor_take_drawn(c, d, CURSOR_MAX_DRAWN);

	/* Many places: at most CURSOR_MAX_DRAWN, the last one grows. */
	for (int i = 0; i < 8; i++) {
		cursor_move(c, i * 6, 0);
		draw_all(c);
	}
	n = cursor_take_drawn(c, d, CURSOR_MAX_DRAWN);
	tap_ok(n == CURSOR_MAX_DRAWN && d[n - 1].x == 18 &&
	    d[n - 1].w == 42 + 16 - 18, "8 places kept as %zu, the last "
	    "merged (%d..%d)", n, d[n - 1].x, d[n - 1].x + d[n - 1].w);

	/* A 200x200 image is clipped to CURSOR_MAX; a hot spot outside
	   the clipped image moves to 0. */
	big = calloc(200 * 200, 4);
	for (int i = 0; i < 200 * 200; i++)
		big[i] = 0xff000000u;
	cursor_set_image(c, 200, 200, 150, 150, big);
	cursor_move(c, 0, 0);
	b = cursor_bounds(c, &r);
	tap_ok(b && r.w == W && r.h == H,
	    "200x200 drawn from 0,0 over the whole %dx%d screen", W, H);
	free(big);

	/* Wholly transparent: nothing at all. */
	memset(img, 0, sizeof(img));
	cursor_set_image(c, 16, 16, 0, 0, img);
	fb_clear();
	draw_all(c);
	tap_ok(!cursor_bounds(c, &r) && changed() == 0,
	    "a transparent image (CSS cursor: none) draws nothing");
	cursor_set_image(c, 16, 16, 0, 0, NULL);
	tap_ok(!cursor_bounds(c, &r), "no pixels: no bounds");
	cursor_free(c);
	cursor_free(NULL);
	return tap_done();
}
