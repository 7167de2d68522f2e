/*
 * record/reader.c — reads a session recording for replay and audit.
 *
 * Parses untrusted files: an auditor's copy may be cut short by a crash
 * or edited.  Open scans every chunk header and CRC once (pread, one
 * bounded buffer sized from the geometry) and keeps a table of intact
 * chunks; the first incomplete, oversized, out-of-order or corrupt chunk
 * ends the table and is reported as "truncated at offset X (time T)" —
 * everything before it stays readable.  Payloads are decoded through
 * common/buf.h; rectangles must lie inside the geometry and zstd data
 * must expand to exactly its declared size.
 *
 * Library code: status codes and a detail string, no logging.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "common/buf.h"
#include "record/record-int.h"

struct record_reader {
	int			 fd;
	struct record_header	 h;
	struct record_info	 info;
	struct record_chunk	*ch;
	size_t			 nch, capch;
	size_t			*kf;		/* indices of KEYF chunks in ch */
	size_t			 nkf, capkf;
	uint8_t			*buf;		/* one chunk, header to CRC */
	size_t			 bufcap;
	uint8_t			*raw;		/* decompressed rect pixels */
	uint8_t			*prev;		/* their pixels before the chunk */
	uint32_t		*fb;
	size_t			 fblen;		/* bytes */
	ZSTD_DCtx		*zd;
	size_t			 pos;		/* last applied chunk + 1; 0: none */
	struct record_rect	 rects[RECORD_MAX_RECTS];
	char			 err[160];
};

/* pread exactly n bytes; RECORD_ETRUNC if the file is shorter. */
static int
read_at(int fd, void *dst, size_t n, uint64_t off)
{
	size_t done = 0;
	ssize_t k;

	while (done < n) {
		k = pread(fd, (uint8_t *)dst + done, n - done,
		    (off_t)(off + done));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return RECORD_EIO;
		if (k == 0)
			return RECORD_ETRUNC;
		done += (size_t)k;
	}
	return RECORD_OK;
}

/* Read and check the chunk at off into r->buf; fills c. */
static int
read_chunk(struct record_reader *r, uint64_t off, struct record_chunk *c,
    uint32_t w, uint32_t h)
{
	struct buf b;
	uint32_t hi, lo, crc;
	size_t max;
	int rc;

	if ((rc = read_at(r->fd, r->buf, RECORD_CHUNK_HDR, off)) != RECORD_OK)
		return snprintf(r->err, sizeof(r->err), "incomplete chunk "
		    "header"), rc;
	buf_init(&b, r->buf, RECORD_CHUNK_HDR);
	(void)(buf_get_u32(&b, &c->type) || buf_get_u32(&b, &c->len) ||
	    buf_get_u32(&b, &hi) || buf_get_u32(&b, &lo));
	c->t_us = (uint64_t)hi << 32 | lo;
	c->offset = off;
	max = record_chunk_max(c->type, w, h);
	if (max == 0 || c->len > max || c->len + (size_t)RECORD_CHUNK_HDR +
	    RECORD_CHUNK_TRL > r->bufcap)
		return snprintf(r->err, sizeof(r->err), "unknown chunk type "
		    "0x%08" PRIx32 " or length %" PRIu32 " out of bounds",
		    c->type, c->len), RECORD_ECORRUPT;
	rc = read_at(r->fd, r->buf + RECORD_CHUNK_HDR, c->len +
	    (size_t)RECORD_CHUNK_TRL, off + RECORD_CHUNK_HDR);
	if (rc != RECORD_OK)
		return snprintf(r->err, sizeof(r->err), "incomplete chunk "
		    "(%" PRIu32 " payload bytes declared)", c->len), rc;
	buf_init(&b, r->buf + RECORD_CHUNK_HDR + c->len, RECORD_CHUNK_TRL);
	(void)buf_get_u32(&b, &crc);
	if (crc != (uint32_t)crc32(crc32(0, NULL, 0), r->buf,
	    (uInt)(RECORD_CHUNK_HDR + c->len)))
		return snprintf(r->err, sizeof(r->err), "CRC mismatch"),
		    RECORD_ECORRUPT;
	return RECORD_OK;
}

static int
push_chunk(struct record_reader *r, const struct record_chunk *c)
{
	void *p;
	size_t cap;

	if (r->nch == r->capch) {
		cap = r->capch ? r->capch * 2 : 1024;
		if ((p = realloc(r->ch, cap * sizeof(*r->ch))) == NULL)
			return RECORD_ENOMEM;
		r->ch = p;
		r->capch = cap;
	}
	r->ch[r->nch++] = *c;
	if (c->type != RECORD_CH_KEYF)
		return RECORD_OK;
	if (r->nkf == r->capkf) {
		cap = r->capkf ? r->capkf * 2 : 64;
		if ((p = realloc(r->kf, cap * sizeof(*r->kf))) == NULL)
			return RECORD_ENOMEM;
		r->kf = p;
		r->capkf = cap;
	}
	r->kf[r->nkf++] = r->nch - 1;
	return RECORD_OK;
}

/* Every INDX entry must name a keyframe we scanned (same offset, time). */
static int
check_index(struct record_reader *r, const struct record_chunk *c)
{
	struct buf b;
	uint32_t n, hi, lo, ohi, olo;
	size_t i, k = 0;

	buf_init(&b, r->buf + RECORD_CHUNK_HDR, c->len);
	if (buf_get_u32(&b, &n) || (size_t)n * 16 != buf_remaining(&b))
		return RECORD_ECORRUPT;
	for (i = 0; i < n; i++) {
		(void)(buf_get_u32(&b, &hi) || buf_get_u32(&b, &lo) ||
		    buf_get_u32(&b, &ohi) || buf_get_u32(&b, &olo));
		while (k < r->nkf && r->ch[r->kf[k]].offset <
		    ((uint64_t)ohi << 32 | olo))
			k++;
		if (k == r->nkf || r->ch[r->kf[k]].offset !=
		    ((uint64_t)ohi << 32 | olo) ||
		    r->ch[r->kf[k]].t_us != ((uint64_t)hi << 32 | lo))
			return RECORD_ECORRUPT;
	}
	return RECORD_OK;
}

/* Structure checks a chunk's payload can fail without decoding pixels. */
static int
check_chunk(struct record_reader *r, const struct record_chunk *c)
{
	const uint8_t *p = r->buf + RECORD_CHUNK_HDR;

	switch (c->type) {
	case RECORD_CH_HEAD:
		return snprintf(r->err, sizeof(r->err), "second header "
		    "chunk"), RECORD_ECORRUPT;
	case RECORD_CH_KEY:	/* down 0/1 and a known verdict */
		if (c->len != 6 || p[4] > 1 || p[5] > RECORD_RATELIMITED)
			break;
		return RECORD_OK;
	case RECORD_CH_PTR:
		if (c->len != 6 || p[5] > RECORD_RATELIMITED)
			break;
		return RECORD_OK;
	case RECORD_CH_CLIP:	/* kept bytes never exceed the original */
		if (c->len < 6 || p[0] > RECORD_CLIP_OUT ||
		    p[1] > RECORD_RATELIMITED || ((uint32_t)p[2] << 24 |
		    (uint32_t)p[3] << 16 | (uint32_t)p[4] << 8 | p[5]) <
		    c->len - 6)
			break;
		return RECORD_OK;
	case RECORD_CH_EVNT:
		if (c->len == 0 || memchr(r->buf + RECORD_CHUNK_HDR, 0,
		    c->len) != NULL)
			break;
		return RECORD_OK;
	case RECORD_CH_INDX:
		if (check_index(r, c) != RECORD_OK)
			break;
		r->info.indexed = 1;
		return RECORD_OK;
	case RECORD_CH_END:
		if (c->len != RECORD_END_LEN)
			break;
		return RECORD_OK;
	default:	/* KEYF, RECT: checked when decoded */
		return RECORD_OK;
	}
	snprintf(r->err, sizeof(r->err), "malformed %.4s chunk",
	    (const char *)r->buf);
	return RECORD_ECORRUPT;
}

static void
count(struct record_info *in, uint32_t type)
{
	switch (type) {
	case RECORD_CH_KEYF:	in->keyframes++; break;
	case RECORD_CH_RECT:	in->deltas++; break;
	case RECORD_CH_KEY:	in->keys++; break;
	case RECORD_CH_PTR:	in->pointers++; break;
	case RECORD_CH_CLIP:	in->clips++; break;
	case RECORD_CH_EVNT:	in->events++; break;
	}
}

/* Where the intact part ends, and why: what --info shows the auditor. */
static void
mark_cut(struct record_reader *r, int status, uint64_t off, uint64_t t_us,
    const char *why)
{
	r->info.truncated = 1;
	r->info.trunc_status = status;
	r->info.trunc_offset = off;
	r->info.trunc_t_us = t_us;
	snprintf(r->info.trunc_reason, sizeof(r->info.trunc_reason), "%s", why);
}

/* Walk the chunks after the header; stop at the first bad one. */
static int
scan(struct record_reader *r, uint64_t off)
{
	struct record_chunk c;
	uint64_t last_t = 0;
	int rc;

	while (off < r->info.size) {
		rc = read_chunk(r, off, &c, r->h.width, r->h.height);
		if (rc == RECORD_EIO)
			return rc;
		if (rc == RECORD_OK && c.t_us < last_t) {
			snprintf(r->err, sizeof(r->err), "time goes backwards");
			rc = RECORD_ECORRUPT;
		}
		if (rc == RECORD_OK)
			rc = check_chunk(r, &c);
		if (rc == RECORD_OK && r->info.complete) {
			snprintf(r->err, sizeof(r->err), "data after END");
			rc = RECORD_ECORRUPT;
		}
		if (rc != RECORD_OK) {
			mark_cut(r, rc, off, last_t, r->err);
			break;
		}
		if ((rc = push_chunk(r, &c)) != RECORD_OK)
			return rc;
		count(&r->info, c.type);
		last_t = c.t_us;
		off += RECORD_CHUNK_HDR + (uint64_t)c.len + RECORD_CHUNK_TRL;
		if (c.type == RECORD_CH_END)
			r->info.complete = 1;
	}
	if (!r->info.complete && !r->info.truncated)
		mark_cut(r, RECORD_ETRUNC, off, last_t, "no END chunk");
	r->info.valid_size = off;
	r->info.duration_us = last_t;
	r->info.chunks = r->nch;
	r->err[0] = '\0';
	return RECORD_OK;
}

/* Read the header chunk, then size every buffer from its geometry. */
static int
open_header(struct record_reader *r)
{
	struct record_chunk c;
	size_t fb;
	int rc;

	r->bufcap = RECORD_CHUNK_HDR + RECORD_HEAD_MAX + RECORD_CHUNK_TRL;
	if ((r->buf = malloc(r->bufcap)) == NULL)
		return RECORD_ENOMEM;
	rc = read_chunk(r, 0, &c, 1, 1);
	if (rc == RECORD_EIO)
		return rc;
	if (rc == RECORD_OK && (c.type != RECORD_CH_HEAD || c.t_us != 0))
		snprintf(r->err, sizeof(r->err), "not a header chunk");
	if (rc != RECORD_OK || c.type != RECORD_CH_HEAD || c.t_us != 0) {
		char why[sizeof(r->err)];

		memcpy(why, r->err, sizeof(why));
		snprintf(r->err, sizeof(r->err), "no valid header chunk at "
		    "offset 0: %.100s", why);
		return RECORD_EFORMAT;
	}
	rc = record_head_decode(r->buf + RECORD_CHUNK_HDR, c.len, &r->h,
	    r->err, sizeof(r->err));
	if (rc != RECORD_OK)
		return rc;
	fb = (size_t)r->h.width * r->h.height * 4;
	free(r->buf);
	r->bufcap = record_chunk_max(RECORD_CH_RECT, r->h.width, r->h.height);
	if (r->bufcap < record_chunk_max(RECORD_CH_INDX, 1, 1))
		r->bufcap = record_chunk_max(RECORD_CH_INDX, 1, 1);
	r->bufcap += RECORD_CHUNK_HDR + RECORD_CHUNK_TRL + RECORD_MAX_CLIP;
	r->buf = malloc(r->bufcap);
	r->raw = malloc(fb);
	r->prev = malloc(fb);
	r->fb = calloc(1, fb);
	r->fblen = fb;
	r->zd = ZSTD_createDCtx();
	if (r->buf == NULL || r->raw == NULL || r->prev == NULL ||
	    r->fb == NULL || r->zd == NULL)
		return RECORD_ENOMEM;
	return push_chunk(r, &c);
}

int
record_reader_open(const char *path, struct record_reader **rp, char *err,
    size_t errlen)
{
	int fd;

	/* O_NONBLOCK: a FIFO must not hang us before the S_ISREG check */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1) {
		*rp = NULL;
		if (err != NULL)
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return RECORD_EIO;
	}
	return record_reader_fdopen(fd, path, rp, err, errlen);
}

int
record_reader_fdopen(int fd, const char *name, struct record_reader **rp,
    char *err, size_t errlen)
{
	struct record_reader *r;
	struct stat st;
	int rc;

	*rp = NULL;
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		close(fd);
		return RECORD_ENOMEM;
	}
	r->fd = fd;
	if (fstat(r->fd, &st) == -1) {
		snprintf(r->err, sizeof(r->err), "%s: %s", name,
		    strerror(errno));
		rc = RECORD_EIO;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(r->err, sizeof(r->err), "%s: not a regular file", name);
		rc = RECORD_EFORMAT;
		goto out;
	}
	r->info.size = (uint64_t)st.st_size;
	if ((rc = open_header(r)) != RECORD_OK)
		goto out;
	rc = scan(r, RECORD_CHUNK_HDR + (uint64_t)r->ch[0].len +
	    RECORD_CHUNK_TRL);
out:
	if (rc != RECORD_OK) {
		if (err != NULL)
			snprintf(err, errlen, "%s", r->err[0] ? r->err :
			    record_strerror(rc));
		record_reader_free(r);
		return rc;
	}
	*rp = r;
	return RECORD_OK;
}

void
record_reader_free(struct record_reader *r)
{
	if (r == NULL)
		return;
	if (r->fd != -1)
		close(r->fd);
	ZSTD_freeDCtx(r->zd);
	free(r->ch);
	free(r->kf);
	free(r->buf);
	free(r->raw);
	free(r->prev);
	free(r->fb);
	free(r);
}

const struct record_header *
record_reader_header(const struct record_reader *r)
{
	return &r->h;
}

const struct record_info *
record_reader_info(const struct record_reader *r)
{
	return &r->info;
}

size_t
record_reader_nchunks(const struct record_reader *r)
{
	return r->nch;
}

const struct record_chunk *
record_reader_chunk(const struct record_reader *r, size_t i)
{
	return i < r->nch ? &r->ch[i] : NULL;
}

const char *
record_reader_error(const struct record_reader *r)
{
	return r->err;
}

/* Re-read chunk i (it passed the scan; the file may have changed since). */
static int
load(struct record_reader *r, size_t i, struct buf *payload)
{
	struct record_chunk c;
	int rc;

	rc = read_chunk(r, r->ch[i].offset, &c, r->h.width, r->h.height);
	if (rc == RECORD_OK && (c.type != r->ch[i].type ||
	    c.len != r->ch[i].len || c.t_us != r->ch[i].t_us)) {
		snprintf(r->err, sizeof(r->err), "file changed under us");
		rc = RECORD_ECORRUPT;
	}
	if (rc == RECORD_OK)
		buf_init(payload, r->buf + RECORD_CHUNK_HDR, c.len);
	return rc;
}

/* codec + declared size + zstd frame expanding to exactly that size;
 * prefix: the old pixels a RECORD_CODEC_ZSTD_PREV frame refers to. */
static int
decompress(struct record_reader *r, struct buf *b, void *dst, size_t want,
    const void *prefix)
{
	uint32_t codec, raw;
	unsigned long long fs;
	size_t n, zlen = 0;

	/* Pixels are stored as the writer's native little-endian uint32s:
	 * both ends are x86/arm64 little-endian hosts. */
	if (buf_get_u32(b, &codec) || buf_get_u32(b, &raw) || raw != want ||
	    (codec != RECORD_CODEC_ZSTD && (codec != RECORD_CODEC_ZSTD_PREV ||
	    prefix == NULL)))
		return snprintf(r->err, sizeof(r->err), "bad codec or size"),
		    RECORD_ECORRUPT;
	zlen = buf_remaining(b);
	fs = ZSTD_getFrameContentSize(buf_ptr(b), zlen);
	if (fs != want)
		return snprintf(r->err, sizeof(r->err), "zstd frame size "
		    "differs from the declared size"), RECORD_ECOMPRESS;
	n = 0;
	if (codec == RECORD_CODEC_ZSTD_PREV)
		n = ZSTD_DCtx_refPrefix(r->zd, prefix, want);
	if (!ZSTD_isError(n))
		n = ZSTD_decompressDCtx(r->zd, dst, want, buf_ptr(b), zlen);
	if (ZSTD_isError(n) || n != want) {
		ZSTD_DCtx_reset(r->zd, ZSTD_reset_session_only);
		return snprintf(r->err, sizeof(r->err), "zstd: %s",
		    ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short"),
		    RECORD_ECOMPRESS;
	}
	return RECORD_OK;
}

/* Rect table: count, then x y w h each inside the screen. */
static int
read_rects(struct record_reader *r, struct buf *b, struct record_rect *rects,
    uint16_t *n, size_t *bytes)
{
	uint16_t i;

	*bytes = 0;
	if (buf_get_u16(b, n) || *n == 0 || *n > RECORD_MAX_RECTS)
		return RECORD_ECORRUPT;
	for (i = 0; i < *n; i++) {
		struct record_rect *q = &rects[i];

		if (buf_get_u16(b, &q->x) || buf_get_u16(b, &q->y) ||
		    buf_get_u16(b, &q->w) || buf_get_u16(b, &q->h) ||
		    q->w == 0 || q->h == 0 || q->x >= r->h.width ||
		    q->y >= r->h.height || q->w > r->h.width - q->x ||
		    q->h > r->h.height - q->y)
			return RECORD_ECORRUPT;
		*bytes += (size_t)q->w * q->h * 4;
		if (*bytes > r->fblen)
			return RECORD_ECORRUPT;
	}
	return RECORD_OK;
}

static int
apply_rects(struct record_reader *r, struct buf *b)
{
	struct record_rect *rects = r->rects;
	const uint8_t *fb = (const uint8_t *)r->fb;
	size_t bytes, off = 0, row, y;
	uint16_t n, i;
	int rc;

	if (read_rects(r, b, rects, &n, &bytes) != RECORD_OK)
		return snprintf(r->err, sizeof(r->err), "rectangle outside "
		    "the screen or bad count"), RECORD_ECORRUPT;
	for (i = 0; i < n; i++) {	/* old pixels: the zstd prefix */
		row = (size_t)rects[i].w * 4;
		for (y = 0; y < rects[i].h; y++, off += row)
			memcpy(r->prev + off, fb + ((size_t)(rects[i].y + y) *
			    r->h.width + rects[i].x) * 4, row);
	}
	if ((rc = decompress(r, b, r->raw, bytes, r->prev)) != RECORD_OK)
		return rc;
	record_scatter((uint8_t *)r->fb, r->h.width, r->raw, rects, n);
	return RECORD_OK;
}

/* Apply chunk i to the framebuffer (keyframes and deltas only). */
static int
apply(struct record_reader *r, size_t i)
{
	struct buf b;
	int rc;

	if (r->ch[i].type != RECORD_CH_KEYF && r->ch[i].type != RECORD_CH_RECT)
		return RECORD_OK;
	if ((rc = load(r, i, &b)) != RECORD_OK)
		return rc;
	if (r->ch[i].type == RECORD_CH_KEYF)
		return decompress(r, &b, r->fb, r->fblen, NULL);
	return apply_rects(r, &b);
}

/* Index into kf[] of the last keyframe at or before t (or the first). */
static size_t
keyframe_for(const struct record_reader *r, uint64_t t_us)
{
	size_t lo = 0, hi = r->nkf;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->ch[r->kf[mid]].t_us <= t_us)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

int
record_reader_seek(struct record_reader *r, uint64_t t_us)
{
	size_t k, i;
	int rc;

	if (r->nkf == 0)
		return RECORD_ENOFRAME;
	k = r->kf[keyframe_for(r, t_us)];
	/* Playing forward: keep going from where we are. */
	if (r->pos > k && r->ch[r->pos - 1].t_us <= t_us)
		i = r->pos;
	else {
		r->pos = 0;
		if ((rc = apply(r, k)) != RECORD_OK)
			return rc;
		i = k + 1;
	}
	for (; i < r->nch && r->ch[i].t_us <= t_us; i++)
		if ((rc = apply(r, i)) != RECORD_OK) {
			r->pos = 0;
			return rc;
		}
	r->pos = i;
	return RECORD_OK;
}

const uint32_t *
record_reader_fb(const struct record_reader *r)
{
	return r->fb;
}

void
record_reader_rgb(const struct record_reader *r, uint8_t *out)
{
	size_t i, n = (size_t)r->h.width * r->h.height;
	uint32_t p;

	for (i = 0; i < n; i++) {
		p = r->fb[i];
		out[i * 3] = (uint8_t)(p >> r->h.red_shift);
		out[i * 3 + 1] = (uint8_t)(p >> r->h.green_shift);
		out[i * 3 + 2] = (uint8_t)(p >> r->h.blue_shift);
	}
}

/* Payload of a KEY, PTR or CLIP chunk into it (structure checked at scan). */
static int
decode_input(struct buf *b, struct record_item *it)
{
	uint16_t x, y;

	switch (it->type) {
	case RECORD_CH_KEY:
		return buf_get_u32(b, &it->keysym) || buf_get_u8(b, &it->down) ||
		    buf_get_u8(b, &it->verdict);
	case RECORD_CH_PTR:
		if (buf_get_u16(b, &x) || buf_get_u16(b, &y) ||
		    buf_get_u8(b, &it->mask) || buf_get_u8(b, &it->verdict))
			return -1;
		it->x = x;
		it->y = y;
		return 0;
	case RECORD_CH_CLIP:
		if (buf_get_u8(b, &it->dir) || buf_get_u8(b, &it->verdict) ||
		    buf_get_u32(b, &it->full_len))
			return -1;
		it->data = (const char *)buf_ptr(b);
		it->data_len = buf_remaining(b);
		return 0;
	}
	return -1;
}

int
record_reader_item(struct record_reader *r, size_t i, struct record_item *it)
{
	struct buf b;
	int rc;

	memset(it, 0, sizeof(*it));
	if (i >= r->nch)
		return RECORD_EINVAL;
	it->type = r->ch[i].type;
	it->t_us = r->ch[i].t_us;
	if (it->type != RECORD_CH_KEY && it->type != RECORD_CH_PTR &&
	    it->type != RECORD_CH_CLIP && it->type != RECORD_CH_EVNT)
		return RECORD_EINVAL;
	if ((rc = load(r, i, &b)) != RECORD_OK)
		return rc;
	if (it->type == RECORD_CH_EVNT) {
		/* the CRC was checked: its bytes may now hold the NUL */
		r->buf[RECORD_CHUNK_HDR + r->ch[i].len] = '\0';
		it->data = (const char *)buf_ptr(&b);
		it->data_len = r->ch[i].len;
		return RECORD_OK;
	}
	if (decode_input(&b, it) != 0)
		return snprintf(r->err, sizeof(r->err), "malformed input "
		    "chunk"), RECORD_ECORRUPT;
	return RECORD_OK;
}
