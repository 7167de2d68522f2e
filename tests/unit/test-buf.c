/*
 * tests/unit/test-buf.c — the bounded read cursor and capped write
 * buffer (common/buf.c): bounds, byte order, caps, the wrap-around at
 * max = SIZE_MAX that used to shrink the allocation to nothing, and the
 * line cutter (SSE2 and AVX2) against a byte-at-a-time one written
 * here.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "tests/tap.h"

static void
test_getters(void)
{
	static const uint8_t d[] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
	    0x07 };
	struct buf b;
	uint8_t u8 = 0, out[4];
	uint16_t u16 = 0;
	uint32_t u32 = 0;
	int r;

	buf_init(&b, d, sizeof(d));
	tap_ok(buf_remaining(&b) == 7 && !buf_eof(&b), "fresh buf: 7 left");
	tap_ok(buf_peek_u8(&b, &u8) == BUF_OK && u8 == 0x01 &&
	    buf_remaining(&b) == 7, "peek does not consume");
	tap_ok(buf_get_u8(&b, &u8) == BUF_OK && u8 == 0x01, "get_u8");
	r = buf_get_u16(&b, &u16);
	tap_ok(r == BUF_OK && u16 == 0x0203, "get_u16 is big-endian "
	    "(0x%04x)", u16);
	r = buf_get_u32(&b, &u32);
	tap_ok(r == BUF_OK && u32 == 0x04050607u, "get_u32 is big-endian "
	    "(0x%08x)", u32);
	tap_ok(buf_eof(&b) && buf_remaining(&b) == 0, "eof after 7 bytes");
	tap_ok(buf_get_u8(&b, &u8) == BUF_ESHORT, "get_u8 at eof: ESHORT");
	tap_ok(buf_peek_u8(&b, &u8) == BUF_ESHORT, "peek at eof: ESHORT");

	buf_init(&b, d, 3);
	tap_ok(buf_get_u32(&b, &u32) == BUF_ESHORT && b.off == 0,
	    "short u32 fails without consuming");
	tap_ok(buf_get_bytes(&b, out, 4) == BUF_ESHORT && b.off == 0,
	    "short get_bytes fails without consuming");
	tap_ok(buf_get_bytes(&b, out, 3) == BUF_OK &&
	    memcmp(out, d, 3) == 0 && buf_eof(&b), "get_bytes exact");
	buf_init(&b, d, 3);
	tap_ok(buf_skip(&b, 4) == BUF_ESHORT && buf_skip(&b, 3) == BUF_OK &&
	    buf_eof(&b), "skip is bounded");
	buf_init(&b, d, 2);
	tap_ok(buf_get_u16(&b, &u16) == BUF_OK && buf_get_u16(&b, &u16) ==
	    BUF_ESHORT, "u16 exactly at the end, then ESHORT");
}

/* An empty cursor over NULL must be usable (a zero-length file). */
static void
test_null_empty(void)
{
	struct buf b;
	uint8_t u8;

	buf_init(&b, NULL, 0);
	tap_ok(buf_eof(&b) && buf_remaining(&b) == 0, "NULL/0 buf is at eof");
	tap_ok(buf_ptr(&b) == NULL, "buf_ptr of NULL/0 is NULL (no NULL+0)");
	tap_ok(buf_get_bytes(&b, NULL, 0) == BUF_OK,
	    "get_bytes(NULL, 0) on empty buf is OK");
	tap_ok(buf_get_u8(&b, &u8) == BUF_ESHORT, "get_u8 on empty: ESHORT");
}

static void
test_span(void)
{
	static const char s[] = "abc;de\nf";
	uint8_t stop[256];
	struct buf b;

	memset(stop, 0, sizeof(stop));
	stop[';'] = stop['\n'] = 1;
	buf_init(&b, s, strlen(s));
	tap_ok(buf_span(&b, stop, SIZE_MAX) == 3, "span stops at ';'");
	tap_ok(buf_span(&b, stop, 2) == 2, "span honours max");
	tap_ok(buf_remaining(&b) == strlen(s), "span does not consume");
	buf_skip(&b, 4);
	tap_ok(buf_span(&b, stop, SIZE_MAX) == 2, "span stops at LF");
	buf_skip(&b, 3);
	tap_ok(buf_span(&b, stop, SIZE_MAX) == 1, "span stops at end");
	buf_skip(&b, 1);
	tap_ok(buf_span(&b, stop, SIZE_MAX) == 0, "span at eof is 0");
}

static void
test_wbuf(void)
{
	struct wbuf w;
	const char *s = NULL;
	size_t i;
	int ok = 1;

	wbuf_init(&w, 1000);
	tap_ok(wbuf_cstr(&w, &s) == BUF_OK && s != NULL && *s == '\0' &&
	    w.len == 0, "cstr of empty wbuf is \"\"");
	for (i = 0; i < 1000; i++)
		ok &= wbuf_put_u8(&w, (uint8_t)('a' + i % 26)) == BUF_OK;
	tap_ok(ok && w.len == 1000, "1000 bytes fit max 1000");
	tap_ok(w.cap >= 1001 && w.cap <= 1001, "cap clamped to max + 1 "
	    "(%zu)", w.cap);
	tap_ok(wbuf_put_u8(&w, 'x') == BUF_ELIMIT && w.len == 1000,
	    "byte 1001: ELIMIT, len unchanged");
	tap_ok(wbuf_put(&w, "x", 1) == BUF_ELIMIT, "put past max: ELIMIT");
	tap_ok(wbuf_cstr(&w, &s) == BUF_OK && strlen(s) == 1000 &&
	    s[999] == 'a' + 999 % 26, "cstr at max still NUL-terminates");
	wbuf_reset(&w);
	tap_ok(w.len == 0 && w.d != NULL, "reset keeps the memory");
	tap_ok(wbuf_put(&w, "hello", 5) == BUF_OK &&
	    wbuf_put(&w, NULL, 0) == BUF_OK && wbuf_cstr(&w, &s) == BUF_OK &&
	    strcmp(s, "hello") == 0, "put, put(NULL,0), cstr");
	wbuf_free(&w);
	tap_ok(w.d == NULL && w.len == 0 && w.cap == 0, "free clears");
	wbuf_free(&w);
	tap_ok(1, "double free is harmless");

	wbuf_init(&w, 0);
	tap_ok(wbuf_put_u8(&w, 'x') == BUF_ELIMIT, "max 0: no byte fits");
	tap_ok(wbuf_cstr(&w, &s) == BUF_OK && *s == '\0',
	    "max 0: cstr still works");
	wbuf_free(&w);
}

/*
 * max = SIZE_MAX ("unbounded") wrapped max + 1 to 0: the buffer was
 * clamped to a zero-byte allocation and the first put wrote past it
 * (a heap overflow under ASan/valgrind, garbage otherwise).
 */
static void
test_wbuf_unbounded(void)
{
	struct wbuf w;
	const char *s = NULL;
	size_t i;
	int ok = 1;

	wbuf_init(&w, SIZE_MAX);
	for (i = 0; i < 300; i++)
		ok &= wbuf_put_u8(&w, 'z') == BUF_OK;
	tap_ok(ok && w.len == 300 && w.cap >= 301,
	    "max SIZE_MAX: buffer grows (cap %zu)", w.cap);
	tap_ok(wbuf_cstr(&w, &s) == BUF_OK && strlen(s) == 300,
	    "max SIZE_MAX: cstr");
	/* These never read src: both are refused before any copy. */
	tap_ok(wbuf_put(&w, "x", SIZE_MAX - 300) == BUF_ELIMIT &&
	    w.len == 300, "put filling to SIZE_MAX (no room for NUL): "
	    "ELIMIT");
	tap_ok(wbuf_put(&w, "x", SIZE_MAX - 301) == BUF_ENOMEM &&
	    w.len == 300 && w.d != NULL, "huge put: ENOMEM, no doubling "
	    "overflow loop, buffer intact");
	tap_ok(wbuf_put(&w, "x", SIZE_MAX) == BUF_ELIMIT && w.len == 300,
	    "put of SIZE_MAX bytes: ELIMIT");
	wbuf_free(&w);
}

static void
test_put_buf(void)
{
	static const char s[] = "0123456789";
	struct buf b;
	struct wbuf w;
	const char *c;

	buf_init(&b, s, 10);
	wbuf_init(&w, 8);
	tap_ok(wbuf_put_buf(&w, &b, 4) == BUF_OK && b.off == 4 && w.len == 4,
	    "put_buf moves 4 bytes");
	tap_ok(wbuf_put_buf(&w, &b, 7) == BUF_ESHORT && b.off == 4,
	    "put_buf beyond input: ESHORT, nothing consumed");
	tap_ok(wbuf_put_buf(&w, &b, 5) == BUF_ELIMIT && b.off == 4 &&
	    w.len == 4, "put_buf beyond max: ELIMIT, nothing consumed");
	tap_ok(wbuf_put_buf(&w, &b, 0) == BUF_OK && b.off == 4,
	    "put_buf of 0 bytes");
	tap_ok(wbuf_put_buf(&w, &b, 4) == BUF_OK && wbuf_cstr(&w, &c) ==
	    BUF_OK && strcmp(c, "01234567") == 0, "put_buf content");
	wbuf_free(&w);
}

/* What buf_cut_line must give, one byte at a time. */
static size_t
cut_ref(const uint8_t *d, size_t n, uint8_t sep, size_t *cut, size_t max,
    size_t *ncut)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (d[i] == '\n') {
			*ncut = k;
			return i;
		}
		if (d[i] == '"' || d[i] == '\r' || d[i] == 0 || d[i] >= 0x80)
			return SIZE_MAX;
		if (d[i] == sep) {
			if (k == max)
				return SIZE_MAX;
			cut[k++] = i;
		}
	}
	return SIZE_MAX;
}

/* Does cutter f agree with cut_ref on d[n] (every cut, when cut)? */
typedef size_t (*cutter)(const struct buf *, uint8_t, uint8_t, uint8_t,
    size_t *, size_t, size_t *);

static int
cut_agrees(cutter f, const uint8_t *d, size_t n, size_t max)
{
	size_t a[80], b[80], na = 0, nb = 0, ra, rb;
	struct buf in;

	buf_init(&in, d, n);
	ra = cut_ref(d, n, ';', a, max, &na);
	rb = f(&in, ';', '"', '\r', b, max, &nb);
	return ra == rb && (ra == SIZE_MAX || (na == nb &&
	    memcmp(a, b, na * sizeof(*a)) == 0));
}

#ifdef BUF_AVX2
static __attribute__((target("avx2"))) size_t
cut_avx2(const struct buf *b, uint8_t sep, uint8_t c0, uint8_t c1,
    size_t *cut, size_t max, size_t *ncut)
{
	return buf_cut_line_avx2(b, sep, c0, c1, cut, max, ncut);
}
#endif

static size_t
cut_plain(const struct buf *b, uint8_t sep, uint8_t c0, uint8_t c1,
    size_t *cut, size_t max, size_t *ncut)
{
	return buf_cut_line(b, sep, c0, c1, cut, max, ncut);
}

/* Random lines of 0 to 199 bytes, mostly plain, now and then a special
 * byte, a separator too many or no LF, at every alignment. */
static void
test_cut_line(void)
{
	static const uint8_t alpha[] = "abcdefgh;;;\n";
	static const uint8_t rare[] = { '"', '\r', 0, 0x80, 0xc3, 0xff, '\n' };
	uint8_t d[256 + 32];
	uint64_t x = 42;
	size_t i, j, n, bad[2] = { 0, 0 }, cut = 0;
	struct buf in;
	size_t c[4], nc;

	buf_init(&in, (const uint8_t *)"a;bb;c\nzz", 9);
	tap_ok(buf_cut_line(&in, ';', '"', '\r', c, 4, &nc) == 6 &&
	    nc == 2 && c[0] == 1 && c[1] == 4, "cut: \"a;bb;c\" at 1 and 4");
	buf_init(&in, (const uint8_t *)"a;b\"c\n", 6);
	tap_ok(buf_cut_line(&in, ';', '"', '\r', c, 4, &nc) == SIZE_MAX,
	    "cut: a quote before the LF is left to the caller");
	for (i = 0; i < 20000; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		n = (size_t)(x >> 33) % 200;
		for (j = 0; j < n + 32; j++) {
			x = x * 6364136223846793005ULL + 1;
			d[(i % 32) + j] = (x >> 60) == 0 ? rare[(x >> 40) % 7] :
			    alpha[(x >> 40) % (sizeof(alpha) - 1)];
		}
		cut += cut_ref(d + i % 32, n, ';', c, 4, &nc) != SIZE_MAX;
		bad[0] += !cut_agrees(cut_plain, d + i % 32, n, 1 + i % 70);
#ifdef BUF_AVX2
		if (__builtin_cpu_supports("avx2"))
			bad[1] += !cut_agrees(cut_avx2, d + i % 32, n,
			    1 + i % 70);
#endif
	}
	/* long plain runs (whole blocks with nothing to cut), one byte of
	 * each kind at each place of a block */
	for (i = 0; i < 64 * 8; i++) {
		memset(d, 'a', sizeof(d));
		d[100] = '\n';
		d[i % 64 + 20] = ";\n\"\r\x80\xff;x"[i / 64];
		n = i % 3 == 0 ? 101 : 90 + i % 30;	/* no LF when short */
		bad[0] += !cut_agrees(cut_plain, d + i % 5, n, 8);
#ifdef BUF_AVX2
		if (__builtin_cpu_supports("avx2"))
			bad[1] += !cut_agrees(cut_avx2, d + i % 5, n, 8);
#endif
	}
	tap_ok(bad[0] == 0 && cut > 1000, "cut: buf_cut_line agrees on "
	    "20,000 random lines and 512 long ones (%zu cut, %zu differ)",
	    cut, bad[0]);
#ifdef BUF_AVX2
	if (__builtin_cpu_supports("avx2"))
		tap_ok(bad[1] == 0, "cut: buf_cut_line_avx2 agrees on the "
		    "same lines (%zu differ)", bad[1]);
	else
		tap_skip("cut: this CPU has no AVX2");
#else
	tap_skip("cut: no AVX2 cutter on this architecture");
#endif
}

int
main(void)
{
	test_getters();
	test_null_empty();
	test_span();
	test_wbuf();
	test_wbuf_unbounded();
	test_put_buf();
	test_cut_line();
	return tap_done();
}
