/*
 * record/chunk.c — the chunk framing shared by writer and reader: status
 * strings, per-type size limits, big-endian encoders and the HEAD chunk.
 *
 * Library code.  record_head_decode() parses untrusted bytes through the
 * bounded buffer (common/buf.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <fcntl.h>
#include <zstd.h>

#include "common/buf.h"
#include "common/digest.h"
#include "record/record-int.h"

const char *
record_strerror(int status)
{
	switch (status) {
	case RECORD_OK:		return "ok";
	case RECORD_EINVAL:	return "invalid argument";
	case RECORD_ENOMEM:	return "out of memory";
	case RECORD_EIO:	return "I/O error";
	case RECORD_EFORMAT:	return "not a cdsgate recording";
	case RECORD_ECORRUPT:	return "corrupt chunk";
	case RECORD_ETRUNC:	return "truncated recording";
	case RECORD_ECOMPRESS:	return "compressed data invalid";
	case RECORD_ENOFRAME:	return "no keyframe at or before that time";
	case RECORD_EFAILED:	return "recording failed earlier";
	}
	return "unknown status";
}

/* Bounds a reader enforces before it allocates or reads a payload. */
size_t
record_chunk_max(uint32_t type, uint32_t width, uint32_t height)
{
	size_t fb = (size_t)width * height * 4;

	switch (type) {
	case RECORD_CH_HEAD:	return RECORD_HEAD_MAX;
	case RECORD_CH_KEYF:	return 8 + ZSTD_compressBound(fb);
	case RECORD_CH_RECT:
		return 2 + (size_t)RECORD_MAX_RECTS * 8 + 8 +
		    ZSTD_compressBound(fb);
	case RECORD_CH_KEY:	return 6;
	case RECORD_CH_PTR:	return 6;
	case RECORD_CH_CLIP:	return 6 + RECORD_MAX_CLIP;
	case RECORD_CH_EVNT:	return RECORD_MAX_EVENT;
	/* one entry per keyframe: ~28 h at one keyframe every 10 s */
	case RECORD_CH_INDX:	return 4 + (size_t)10000 * 16;
	case RECORD_CH_END:	return RECORD_END_LEN;
	}
	return 0;
}

void
record_put_u32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

void
record_put_u64(uint8_t *p, uint64_t v)
{
	record_put_u32(p, (uint32_t)(v >> 32));
	record_put_u32(p + 4, (uint32_t)v);
}

void
record_put_hdr(uint8_t *p, uint32_t type, uint32_t len, uint64_t t_us)
{
	record_put_u32(p, type);
	record_put_u32(p + 4, len);
	record_put_u64(p + 8, t_us);
}

/* u16 length + bytes; the caller checked the string is short. */
static size_t
put_str(uint8_t *p, const char *s, size_t max)
{
	size_t n = strnlen(s, max - 1);

	p[0] = (uint8_t)(n >> 8);
	p[1] = (uint8_t)n;
	memcpy(p + 2, s, n);
	return 2 + n;
}

size_t
record_head_encode(const struct record_header *h, uint8_t *out)
{
	size_t n = 0;

	memcpy(out, RECORD_MAGIC, 7);
	out[7] = RECORD_VERSION;
	n = 8;
	out[n++] = h->width >> 8;
	out[n++] = (uint8_t)h->width;
	out[n++] = h->height >> 8;
	out[n++] = (uint8_t)h->height;
	out[n++] = h->red_shift;
	out[n++] = h->green_shift;
	out[n++] = h->blue_shift;
	out[n++] = 0;
	record_put_u32(out + n, h->keyframe_interval_s);
	n += 4;
	record_put_u64(out + n, h->start_unix_us);
	n += 8;
	n += put_str(out + n, h->session, sizeof(h->session));
	n += put_str(out + n, h->recipient, sizeof(h->recipient));
	n += put_str(out + n, h->policy, sizeof(h->policy));
	return n;	/* <= 28 + 6 + 253 < RECORD_HEAD_MAX */
}

/* A printable-ASCII string shorter than max, NUL-terminated into dst. */
static int
get_str(struct buf *b, char *dst, size_t max)
{
	uint16_t n;
	size_t i;

	if (buf_get_u16(b, &n) != BUF_OK || n >= max ||
	    buf_get_bytes(b, dst, n) != BUF_OK)
		return -1;
	dst[n] = '\0';
	for (i = 0; i < n; i++)
		if ((unsigned char)dst[i] < 0x20 || (unsigned char)dst[i] > 0x7e)
			return -1;
	return 0;
}

int
record_head_decode(const uint8_t *p, size_t len, struct record_header *h,
    char *err, size_t errlen)
{
	struct buf b;
	uint8_t magic[8], pad;
	uint32_t hi, lo;

	memset(h, 0, sizeof(*h));
	buf_init(&b, p, len);
	if (buf_get_bytes(&b, magic, 8) != BUF_OK ||
	    memcmp(magic, RECORD_MAGIC, 7) != 0) {
		snprintf(err, errlen, "bad magic");
		return RECORD_EFORMAT;
	}
	if (magic[7] != RECORD_VERSION) {
		snprintf(err, errlen, "unknown format version %u", magic[7]);
		return RECORD_EFORMAT;
	}
	if (buf_get_u16(&b, &h->width) || buf_get_u16(&b, &h->height) ||
	    buf_get_u8(&b, &h->red_shift) || buf_get_u8(&b, &h->green_shift) ||
	    buf_get_u8(&b, &h->blue_shift) || buf_get_u8(&b, &pad) ||
	    buf_get_u32(&b, &h->keyframe_interval_s) ||
	    buf_get_u32(&b, &hi) || buf_get_u32(&b, &lo) ||
	    get_str(&b, h->session, sizeof(h->session)) ||
	    get_str(&b, h->recipient, sizeof(h->recipient)) ||
	    get_str(&b, h->policy, sizeof(h->policy)) || !buf_eof(&b)) {
		snprintf(err, errlen, "malformed header chunk");
		return RECORD_EFORMAT;
	}
	h->start_unix_us = (uint64_t)hi << 32 | lo;
	if (h->width == 0 || h->height == 0 || h->width > RECORD_MAX_WIDTH ||
	    h->height > RECORD_MAX_HEIGHT || h->red_shift > 24 ||
	    h->green_shift > 24 || h->blue_shift > 24) {
		snprintf(err, errlen, "unsupported geometry %ux%u or pixel "
		    "format", h->width, h->height);
		return RECORD_EFORMAT;
	}
	return RECORD_OK;
}

int
record_write_all(int fd, const void *p, size_t n)
{
	const uint8_t *q = p;
	ssize_t k;

	while (n > 0) {
		k = write(fd, q, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = EIO;
			return RECORD_EIO;
		}
		q += k;
		n -= (size_t)k;
	}
	return RECORD_OK;
}

/* Room for a prefix plus the data, both up to a screenful, so that a
 * scrolled row still finds its old copy. */
int
record_zstd_window(ZSTD_CCtx *zc, size_t fb)
{
	int log = 20;

	while (log < 27 && ((size_t)1 << log) < 2 * fb)
		log++;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(zc, ZSTD_c_windowLog, log)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(zc,
	    ZSTD_c_enableLongDistanceMatching, 1)))
		return RECORD_ECOMPRESS;
	return RECORD_OK;
}

void
record_scatter(uint8_t *fb, uint32_t width, const uint8_t *raw,
    const struct record_rect *rects, size_t n)
{
	size_t i, y, row, off = 0;

	for (i = 0; i < n; i++) {
		row = (size_t)rects[i].w * 4;
		for (y = 0; y < rects[i].h; y++, off += row)
			memcpy(fb + ((size_t)(rects[i].y + y) * width +
			    rects[i].x) * 4, raw + off, row);
	}
}

/* The record API's name for digest_file (kept for its callers). */
int
record_file_sha256(const char *path, uint8_t digest[32])
{
	return digest_file(path, digest) == DIGEST_OK ? RECORD_OK : RECORD_EIO;
}
