/*
 * common/buf.h — the one bounded buffer type for all parsing.
 *
 * Modelled on OpenSSH's sshbuf: a parser never does pointer arithmetic
 * on raw input; it reads through typed getters that check bounds and
 * return a status.  A struct buf is a read cursor over bytes it does not
 * own; a struct wbuf is a growable output buffer with a hard maximum.
 * Used for CSV, hierarchy, HTTP, recording and IPC input.
 */
#ifndef COMMON_BUF_H
#define COMMON_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define BUF_AVX2	1	/* buf_cut_line_avx2, where the CPU has it */
#endif

enum buf_status {
	BUF_OK = 0,
	BUF_ESHORT,	/* not enough bytes left */
	BUF_ELIMIT,	/* write would pass the buffer's maximum */
	BUF_ENOMEM
};

struct buf {
	const uint8_t	*d;
	size_t		 len;
	size_t		 off;
};

void	 buf_init(struct buf *b, const void *d, size_t len);
int	 buf_get_u16(struct buf *b, uint16_t *v);	/* big-endian */
int	 buf_get_u32(struct buf *b, uint32_t *v);	/* big-endian */
int	 buf_get_bytes(struct buf *b, void *dst, size_t n);

/* The byte-at-a-time getters are inline: parsers call them for every
 * byte or field (a CSV field costs a handful of calls otherwise). */
static inline size_t
buf_remaining(const struct buf *b)
{
	return b->len - b->off;
}

static inline int
buf_eof(const struct buf *b)
{
	return b->off >= b->len;
}

/* Pointer to the unread bytes; valid while the underlying memory is. */
static inline const uint8_t *
buf_ptr(const struct buf *b)
{
	if (b->d == NULL)	/* NULL + 0 is undefined behaviour */
		return NULL;
	return b->d + b->off;
}

static inline int
buf_peek_u8(const struct buf *b, uint8_t *v)
{
	if (buf_remaining(b) < 1)
		return BUF_ESHORT;
	*v = b->d[b->off];
	return BUF_OK;
}

static inline int
buf_get_u8(struct buf *b, uint8_t *v)
{
	if (buf_remaining(b) < 1)
		return BUF_ESHORT;
	*v = b->d[b->off++];
	return BUF_OK;
}

static inline int
buf_skip(struct buf *b, size_t n)
{
	if (buf_remaining(b) < n)
		return BUF_ESHORT;
	b->off += n;
	return BUF_OK;
}

/* Length of the run of unread bytes (at most max) whose stop[] entry is
 * 0: lets a parser find a field's end without touching raw pointers. */
static inline size_t
buf_span(const struct buf *b, const uint8_t stop[256], size_t max)
{
	size_t i = 0, n = buf_remaining(b);
	const uint8_t *d;

	if (n > max)
		n = max;
	if (n == 0)		/* b->d may be NULL */
		return 0;
	d = b->d + b->off;
	for (; i + 4 <= n && !(stop[d[i]] | stop[d[i + 1]] | stop[d[i + 2]] |
	    stop[d[i + 3]]); i += 4)	/* four bytes a test */
		;
	for (; i < n && !stop[d[i]]; i++)
		;
	return i;
}

/* Offset of the first unread byte c, or SIZE_MAX if there is none. */
static inline size_t
buf_find(const struct buf *b, uint8_t c)
{
	const uint8_t *p;

	if (buf_remaining(b) == 0)	/* b->d may be NULL */
		return SIZE_MAX;
	p = memchr(b->d + b->off, c, buf_remaining(b));
	return p == NULL ? SIZE_MAX : (size_t)(p - (b->d + b->off));
}

/* Is byte c a text parser's special byte: c0, c1, NUL, 0x80 or above? */
static inline int
buf_special(uint8_t c, uint8_t c0, uint8_t c1)
{
	return c == c0 || c == c1 || c == 0 || c >= 0x80;
}

/* A block of a line cutter's, at offset i: m has a bit for each sep in
 * it, nl for each LF, bad for each special byte (all: every bit of the
 * block).  1 when the cutter is done (*ret its answer), 0 to go on. */
static inline int
buf_cut_block(uint32_t m, uint32_t nl, uint32_t bad, uint32_t all, size_t i,
    size_t *cut, size_t max, size_t *k, size_t *ncut, size_t *ret)
{
	uint32_t lim = nl ? (nl & -nl) - 1 : all;	/* bytes before LF */

	*ret = SIZE_MAX;
	if ((bad & lim) != 0)
		return 1;
	for (m &= lim; m != 0; m &= m - 1) {
		if (*k == max)
			return 1;
		cut[(*k)++] = i + (size_t)__builtin_ctz(m);
	}
	if (nl == 0)
		return 0;
	*ncut = *k;
	*ret = i + (size_t)__builtin_ctz(nl);
	return 1;
}

/* buf_cut_line from offset i of d[n] with k cuts made: sixteen bytes a
 * test where SSE2 is, then one at a time. */
static inline size_t
buf_cut_from(const uint8_t *d, size_t n, size_t i, size_t k, uint8_t sep,
    uint8_t c0, uint8_t c1, size_t *cut, size_t max, size_t *ncut)
{
#ifdef __SSE2__
	__m128i w, vs = _mm_set1_epi8((char)sep), vn = _mm_set1_epi8('\n'),
	    v0 = _mm_set1_epi8((char)c0), v1 = _mm_set1_epi8((char)c1),
	    vz = _mm_setzero_si128();
	uint32_t nl, bad, m;
	size_t ret;

	for (; i + 16 <= n; i += 16) {
		w = _mm_loadu_si128((const void *)(d + i));
		nl = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(w, vn));
		bad = (uint32_t)_mm_movemask_epi8(_mm_or_si128(w,
		    _mm_or_si128(_mm_cmpeq_epi8(w, vz), _mm_or_si128(
		    _mm_cmpeq_epi8(w, v0), _mm_cmpeq_epi8(w, v1)))));
		m = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(w, vs));
		if (buf_cut_block(m, nl, bad, 0xffffu, i, cut, max, &k, ncut,
		    &ret))
			return ret;
	}
#endif
	for (; i < n && d[i] != '\n'; i++) {
		if (buf_special(d[i], c0, c1) || (d[i] == sep && k == max))
			return SIZE_MAX;
		if (d[i] == sep)
			cut[k++] = i;
	}
	*ncut = k;
	return i < n ? i : SIZE_MAX;
}

/* The unread bytes up to the first LF, cut at the byte sep (not c0, c1
 * or LF): the offsets of at most max seps in cut[], their count in
 * *ncut, and the LF's offset returned.  SIZE_MAX when there is no LF, a
 * byte before it is special (buf_special) or there are more seps.  One
 * pass. */
static inline size_t
buf_cut_line(const struct buf *b, uint8_t sep, uint8_t c0, uint8_t c1,
    size_t *cut, size_t max, size_t *ncut)
{
	if (buf_remaining(b) == 0)	/* b->d may be NULL */
		return SIZE_MAX;
	return buf_cut_from(b->d + b->off, buf_remaining(b), 0, 0, sep, c0,
	    c1, cut, max, ncut);
}

#ifdef BUF_AVX2
/* buf_cut_line thirty-two bytes a test, for a caller that found AVX2
 * (__builtin_cpu_supports); the last bytes as buf_cut_line does.  A
 * block with no special byte, no sep and no LF (most of a long value)
 * costs one test. */
static inline __attribute__((target("avx2"))) size_t
buf_cut_line_avx2(const struct buf *b, uint8_t sep, uint8_t c0, uint8_t c1,
    size_t *cut, size_t max, size_t *ncut)
{
	size_t i = 0, k = 0, n = buf_remaining(b);
	const uint8_t *d;
	__m256i w, e, vs = _mm256_set1_epi8((char)sep),
	    vn = _mm256_set1_epi8('\n'), v0 = _mm256_set1_epi8((char)c0),
	    v1 = _mm256_set1_epi8((char)c1), vz = _mm256_setzero_si256();
	uint32_t nl, bad, m;
	size_t ret;

	if (n == 0)		/* b->d may be NULL */
		return SIZE_MAX;
	d = b->d + b->off;
	for (; i + 32 <= n; i += 32) {
		w = _mm256_loadu_si256((const void *)(d + i));
		e = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(w, vz),
		    _mm256_cmpeq_epi8(w, v0)), _mm256_cmpeq_epi8(w, v1));
		m = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(w, vs));
		nl = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(w, vn));
		bad = (uint32_t)_mm256_movemask_epi8(_mm256_or_si256(w, e));
		if ((m | nl | bad) != 0 && buf_cut_block(m, nl, bad,
		    UINT32_MAX, i, cut, max, &k, ncut, &ret))
			return ret;
	}
	_mm256_zeroupper();	/* the tail and the caller may be SSE code:
				 * no stale upper halves to slow them */
	return buf_cut_from(d, n, i, k, sep, c0, c1, cut, max, ncut);
}
#endif

/* Is none of the unread bytes c0, c1, NUL or 0x80 and above (a text
 * parser's special bytes)?  Eight bytes a test where words are
 * little-endian. */
static inline int
buf_plain_text(const struct buf *b, uint8_t c0, uint8_t c1)
{
	size_t i = 0, n = buf_remaining(b);
	const uint8_t *d;
	uint8_t x;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t lo = 0x0101010101010101ULL, hi = 0x8080808080808080ULL;
	uint64_t w, t = 0;
#endif

	if (n == 0)
		return 1;
	d = b->d + b->off;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (; i + 8 <= n; i += 8) {	/* a zero byte of w, w^c0, w^c1 */
		memcpy(&w, d + i, 8);
		t |= (((w - lo) & ~w) | (((w ^ (lo * c0)) - lo) &
		    ~(w ^ (lo * c0))) | (((w ^ (lo * c1)) - lo) &
		    ~(w ^ (lo * c1))) | w) & hi;
	}
	if (t != 0)
		return 0;
#endif
	for (; i < n; i++)
		if ((x = d[i]) == c0 || x == c1 || x == 0 || x >= 0x80)
			return 0;
	return 1;
}

struct wbuf {
	uint8_t		*d;
	size_t		 len;
	size_t		 cap;
	size_t		 max;	/* hard limit on len */
};

void	 wbuf_init(struct wbuf *w, size_t max);
void	 wbuf_free(struct wbuf *w);		/* wipes, then frees */
void	 wbuf_reset(struct wbuf *w);		/* len = 0, keeps memory */
int	 wbuf_put_u8(struct wbuf *w, uint8_t v);
int	 wbuf_put(struct wbuf *w, const void *src, size_t n);
/* Move n bytes from the read cursor b to the end of w (both checked). */
int	 wbuf_put_buf(struct wbuf *w, struct buf *b, size_t n);
/* NUL-terminates without counting the NUL in len. */
int	 wbuf_cstr(struct wbuf *w, const char **s);

#endif
