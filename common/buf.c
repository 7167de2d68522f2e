/*
 * common/buf.c — bounded read cursor and capped write buffer.
 * Handles untrusted bytes: every getter checks bounds first.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

void
buf_init(struct buf *b, const void *d, size_t len)
{
	b->d = d;
	b->len = len;
	b->off = 0;
}

int
buf_get_u16(struct buf *b, uint16_t *v)
{
	if (buf_remaining(b) < 2)
		return BUF_ESHORT;
	*v = (uint16_t)(b->d[b->off] << 8 | b->d[b->off + 1]);
	b->off += 2;
	return BUF_OK;
}

int
buf_get_u32(struct buf *b, uint32_t *v)
{
	if (buf_remaining(b) < 4)
		return BUF_ESHORT;
	*v = (uint32_t)b->d[b->off] << 24 | (uint32_t)b->d[b->off + 1] << 16 |
	    (uint32_t)b->d[b->off + 2] << 8 | (uint32_t)b->d[b->off + 3];
	b->off += 4;
	return BUF_OK;
}

int
buf_get_bytes(struct buf *b, void *dst, size_t n)
{
	if (buf_remaining(b) < n)
		return BUF_ESHORT;
	if (n == 0)		/* memcpy(NULL, NULL, 0) is undefined */
		return BUF_OK;
	memcpy(dst, b->d + b->off, n);
	b->off += n;
	return BUF_OK;
}

void
wbuf_init(struct wbuf *w, size_t max)
{
	w->d = NULL;
	w->len = w->cap = 0;
	w->max = max;
}

void
wbuf_free(struct wbuf *w)
{
	if (w->d != NULL) {
		explicit_bzero(w->d, w->cap);
		free(w->d);
	}
	w->d = NULL;
	w->len = w->cap = 0;
}

void
wbuf_reset(struct wbuf *w)
{
	w->len = 0;
}

/*
 * Grow to hold need bytes plus a NUL; never past max.  Written so that
 * max = SIZE_MAX cannot wrap (max + 1 used to become 0 and shrink the
 * allocation to nothing) and doubling cannot overflow into a loop; no
 * object may exceed PTRDIFF_MAX, so larger requests fail before realloc.
 */
static int
wbuf_reserve(struct wbuf *w, size_t need)
{
	size_t ncap, limit;
	uint8_t *nd;

	if (need > w->max || need == SIZE_MAX)
		return BUF_ELIMIT;
	if (need < w->cap)
		return BUF_OK;
	limit = w->max < PTRDIFF_MAX ? w->max + 1 : PTRDIFF_MAX;
	if (need + 1 > limit)
		return BUF_ENOMEM;
	ncap = w->cap ? w->cap : 64;
	while (ncap < need + 1)
		ncap = ncap > limit / 2 ? limit : ncap * 2;
	if (ncap > limit)
		ncap = limit;
	if ((nd = realloc(w->d, ncap)) == NULL)
		return BUF_ENOMEM;
	w->d = nd;
	w->cap = ncap;
	return BUF_OK;
}

int
wbuf_put_u8(struct wbuf *w, uint8_t v)
{
	int r;

	if ((r = wbuf_reserve(w, w->len + 1)) != BUF_OK)
		return r;
	w->d[w->len++] = v;
	return BUF_OK;
}

int
wbuf_put(struct wbuf *w, const void *src, size_t n)
{
	int r;

	if (n > w->max - w->len)
		return BUF_ELIMIT;
	if (n == 0)		/* src may be NULL; memcpy would be UB */
		return BUF_OK;
	if ((r = wbuf_reserve(w, w->len + n)) != BUF_OK)
		return r;
	memcpy(w->d + w->len, src, n);
	w->len += n;
	return BUF_OK;
}

/* Copy straight from input to output so parsers never hold raw pointers. */
int
wbuf_put_buf(struct wbuf *w, struct buf *b, size_t n)
{
	int r;

	if (buf_remaining(b) < n)
		return BUF_ESHORT;
	if (n == 0)
		return BUF_OK;
	if ((r = wbuf_put(w, b->d + b->off, n)) != BUF_OK)
		return r;
	b->off += n;
	return BUF_OK;
}

int
wbuf_cstr(struct wbuf *w, const char **s)
{
	int r;

	if ((r = wbuf_reserve(w, w->len)) != BUF_OK)
		return r;
	w->d[w->len] = '\0';
	*s = (const char *)w->d;
	return BUF_OK;
}
