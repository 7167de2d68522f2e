/*
 * record/writer.c — appends a session recording, one write() per chunk.
 *
 * Runs in the unprivileged session worker's event loop, so it is cheap
 * and predictable: the compression context, the chunk buffer and a
 * shadow of the recorded screen are allocated once at open.  Damaged
 * rows are gathered and compressed with zstd (fast, well maintained,
 * long-distance matching), using the same rectangles' previous pixels as
 * the zstd prefix: a scrolled table or a redrawn chart becomes mostly
 * back-references (see docs/recording-format.md for the figures).  Every
 * chunk goes out with a single write() so a crash leaves at most one
 * incomplete chunk at the tail.  A keyframe is
 * written at start and every keyframe interval, followed by fdatasync()
 * (the durability point: at most one interval is lost in a power cut).
 * A failed write or fsync is sticky: the session must end (a
 * session that can't be recorded doesn't run).
 *
 * Library code: status codes, no logging.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "common/digest.h"
#include "record/record-int.h"

#define LEVEL_KEYFRAME	3
#define LEVEL_RECT	1

struct kf_entry {
	uint64_t	t_us;
	uint64_t	offset;
};

struct record_writer {
	int			 fd;
	int			 status;	/* sticky */
	char			 err[160];
	int			 err_no;	/* errno of a failed write */
	struct record_header	 h;
	uint64_t		 size;
	uint64_t		 last_t;
	uint32_t		 nchunks;
	uint64_t		 kf_interval_us;
	int			 have_kf;
	uint64_t		 last_kf_t;
	struct kf_entry		*index;
	size_t			 nindex, capindex;
	uint64_t		 index_off;
	uint8_t			*raw;		/* w*h*4: gathered rows */
	uint8_t			*prev;		/* the same rows before the change */
	uint8_t			*shadow;	/* the screen as recorded so far */
	uint8_t			*chunk;		/* header + largest payload + CRC */
	size_t			 chunk_cap;
	ZSTD_CCtx		*zc;
	struct digest		*sha;
};

/* Record the first failure; every later call returns it. */
static int
fail(struct record_writer *w, int status, const char *what)
{
	if (w->status == RECORD_OK) {
		w->status = status;
		w->err_no = status == RECORD_EIO ? errno : 0;
		snprintf(w->err, sizeof(w->err), "%s%s%s", what,
		    status == RECORD_EIO ? ": " : "",
		    status == RECORD_EIO ? strerror(errno) : "");
	}
	return RECORD_EFAILED;
}

/* Timestamps never go backwards in a file (the reader refuses that). */
static uint64_t
clamp_t(struct record_writer *w, uint64_t t_us)
{
	if (t_us < w->last_t)
		t_us = w->last_t;
	w->last_t = t_us;
	return t_us;
}

/* Frame the payload already in w->chunk + 16 and append it: one write(). */
static int
emit(struct record_writer *w, uint32_t type, size_t len, uint64_t t_us)
{
	size_t n = RECORD_CHUNK_HDR + len;

	record_put_hdr(w->chunk, type, (uint32_t)len, t_us);
	record_put_u32(w->chunk + n, (uint32_t)crc32(crc32(0, NULL, 0),
	    w->chunk, (uInt)n));
	n += RECORD_CHUNK_TRL;
	if (record_write_all(w->fd, w->chunk, n) != RECORD_OK)
		return fail(w, RECORD_EIO, "write");
	if (digest_update(w->sha, w->chunk, n) != DIGEST_OK)
		return fail(w, RECORD_ENOMEM, "sha256");
	w->size += n;
	w->nchunks++;
	return RECORD_OK;
}

static int
writer_alloc(const struct record_header *h, struct record_writer **wp)
{
	struct record_writer *w;
	size_t fb = (size_t)h->width * h->height * 4;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return RECORD_ENOMEM;
	w->fd = -1;
	w->h = *h;
	if (w->h.keyframe_interval_s == 0)
		w->h.keyframe_interval_s = RECORD_DEFAULT_KF_S;
	w->kf_interval_us = (uint64_t)w->h.keyframe_interval_s * 1000000;
	w->chunk_cap = record_chunk_max(RECORD_CH_RECT, h->width, h->height);
	if (w->chunk_cap < record_chunk_max(RECORD_CH_INDX, 1, 1))
		w->chunk_cap = record_chunk_max(RECORD_CH_INDX, 1, 1);
	w->chunk_cap += RECORD_CHUNK_HDR + RECORD_CHUNK_TRL + RECORD_MAX_CLIP;
	w->raw = malloc(fb);
	w->prev = malloc(fb);
	w->shadow = malloc(fb);
	w->chunk = malloc(w->chunk_cap);
	w->zc = ZSTD_createCCtx();
	w->sha = digest_alloc();
	if (w->raw == NULL || w->prev == NULL || w->shadow == NULL ||
	    w->chunk == NULL || w->zc == NULL || record_zstd_window(w->zc,
	    fb) != RECORD_OK ||
	    w->sha == NULL) {
		w->status = RECORD_ENOMEM;
		record_writer_close(w, NULL);
		return RECORD_ENOMEM;
	}
	*wp = w;
	return RECORD_OK;
}

static int
header_ok(const struct record_header *h)
{
	return h != NULL && h->width > 0 && h->height > 0 &&
	    h->width <= RECORD_MAX_WIDTH && h->height <= RECORD_MAX_HEIGHT &&
	    h->red_shift <= 24 && h->green_shift <= 24 && h->blue_shift <= 24 &&
	    memchr(h->session, 0, sizeof(h->session)) != NULL &&
	    memchr(h->recipient, 0, sizeof(h->recipient)) != NULL &&
	    memchr(h->policy, 0, sizeof(h->policy)) != NULL;
}

int
record_writer_fdopen(int fd, const struct record_header *h,
    struct record_writer **wp)
{
	struct record_writer *w;
	size_t n;
	int rc;

	*wp = NULL;
	if (fd < 0 || !header_ok(h))
		return RECORD_EINVAL;
	if ((rc = writer_alloc(h, &w)) != RECORD_OK)
		return rc;
	w->fd = fd;
	n = record_head_encode(&w->h, w->chunk + RECORD_CHUNK_HDR);
	if (emit(w, RECORD_CH_HEAD, n, 0) != RECORD_OK) {
		rc = w->status;
		w->fd = -1;	/* the caller still owns fd on failure */
		record_writer_close(w, NULL);
		return rc;
	}
	*wp = w;
	return RECORD_OK;
}

int
record_writer_open(const char *path, const struct record_header *h,
    struct record_writer **wp)
{
	int fd, rc;

	*wp = NULL;
	if (path == NULL || !header_ok(h))
		return RECORD_EINVAL;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_APPEND,
	    0640);
	if (fd == -1)
		return RECORD_EIO;
	if ((rc = record_writer_fdopen(fd, h, wp)) != RECORD_OK) {
		close(fd);
		unlink(path);
	}
	return rc;
}

/* Compress n raw bytes after a (codec, raw length) pair at dst.  With a
 * prefix (the same rectangles' previous pixels) zstd turns a scroll or
 * a redraw of similar content into long back-references. */
static int
compress_into(struct record_writer *w, uint8_t *dst, size_t cap,
    const void *src, size_t n, const void *prefix, int level, size_t *out)
{
	size_t z;

	record_put_u32(dst, prefix ? RECORD_CODEC_ZSTD_PREV : RECORD_CODEC_ZSTD);
	record_put_u32(dst + 4, (uint32_t)n);
	z = ZSTD_CCtx_setParameter(w->zc, ZSTD_c_compressionLevel, level);
	if (!ZSTD_isError(z) && prefix != NULL)
		z = ZSTD_CCtx_refPrefix(w->zc, prefix, n);
	if (!ZSTD_isError(z))
		z = ZSTD_compress2(w->zc, dst + 8, cap - 8, src, n);
	if (ZSTD_isError(z))
		return fail(w, RECORD_ECOMPRESS, ZSTD_getErrorName(z));
	*out = 8 + z;
	return RECORD_OK;
}

/* The keyframe table, written as INDX periodically and at close. */
static int
write_index(struct record_writer *w, uint64_t t_us)
{
	uint8_t *p = w->chunk + RECORD_CHUNK_HDR;
	size_t i, n = w->nindex;

	if (n > 10000)	/* record_chunk_max(INDX): keep the newest */
		n = 10000;
	record_put_u32(p, (uint32_t)n);
	for (i = 0; i < n; i++) {
		record_put_u64(p + 4 + i * 16, w->index[w->nindex - n + i].t_us);
		record_put_u64(p + 12 + i * 16,
		    w->index[w->nindex - n + i].offset);
	}
	w->index_off = w->size;
	return emit(w, RECORD_CH_INDX, 4 + n * 16, t_us);
}

static int
index_add(struct record_writer *w, uint64_t t_us, uint64_t off)
{
	struct kf_entry *p;
	size_t cap;

	if (w->nindex == w->capindex) {
		cap = w->capindex ? w->capindex * 2 : 64;
		if ((p = realloc(w->index, cap * sizeof(*p))) == NULL)
			return fail(w, RECORD_ENOMEM, "index");
		w->index = p;
		w->capindex = cap;
	}
	w->index[w->nindex].t_us = t_us;
	w->index[w->nindex++].offset = off;
	return RECORD_OK;
}

/* Copy the rows of r out of the framebuffer into raw, packed. */
static size_t
gather(uint8_t *raw, const uint8_t *fb, size_t stride,
    const struct record_rect *r)
{
	size_t row = (size_t)r->w * 4, y;

	for (y = 0; y < r->h; y++)
		memcpy(raw + y * row, fb + (r->y + y) * stride + r->x * 4, row);
	return row * r->h;
}

int
record_keyframe(struct record_writer *w, uint64_t t_us, const void *fb,
    size_t stride)
{
	struct record_rect all = { 0, 0, w->h.width, w->h.height };
	size_t n, len;
	uint64_t off;

	if (w->status != RECORD_OK)
		return RECORD_EFAILED;
	if (fb == NULL || stride < (size_t)w->h.width * 4)
		return RECORD_EINVAL;
	t_us = clamp_t(w, t_us);
	n = gather(w->raw, fb, stride, &all);
	memcpy(w->shadow, w->raw, n);
	if (compress_into(w, w->chunk + RECORD_CHUNK_HDR, w->chunk_cap -
	    RECORD_CHUNK_HDR - RECORD_CHUNK_TRL, w->raw, n, NULL,
	    LEVEL_KEYFRAME, &len) != RECORD_OK)
		return RECORD_EFAILED;
	off = w->size;
	if (emit(w, RECORD_CH_KEYF, len, t_us) != RECORD_OK ||
	    index_add(w, t_us, off) != RECORD_OK)
		return RECORD_EFAILED;
	w->have_kf = 1;
	w->last_kf_t = t_us;
	if (w->nindex % RECORD_INDEX_EVERY == 0 &&
	    write_index(w, t_us) != RECORD_OK)
		return RECORD_EFAILED;
	if (fdatasync(w->fd) == -1 && errno != EINVAL && errno != EROFS)
		return fail(w, RECORD_EIO, "fdatasync");
	return RECORD_OK;
}

/* Clip to the screen; drop empty ones.  Returns the kept count. */
static size_t
clip_rects(const struct record_writer *w, const struct record_rect *in,
    size_t n, struct record_rect *out, size_t *area)
{
	size_t i, k = 0;
	struct record_rect r;

	*area = 0;
	for (i = 0; i < n; i++) {
		r = in[i];
		if (r.x >= w->h.width || r.y >= w->h.height)
			continue;
		if (r.w > w->h.width - r.x)
			r.w = w->h.width - r.x;
		if (r.h > w->h.height - r.y)
			r.h = w->h.height - r.y;
		if (r.w == 0 || r.h == 0)
			continue;
		out[k++] = r;
		*area += (size_t)r.w * r.h;
	}
	return k;
}

int
record_frame_rects(struct record_writer *w, uint64_t t_us, const void *fb,
    size_t stride, const struct record_rect *rects, size_t n)
{
	struct record_rect kept[64];
	uint8_t *p = w->chunk + RECORD_CHUNK_HDR;
	size_t i, k, area, raw = 0, len, hdr;

	if (w->status != RECORD_OK)
		return RECORD_EFAILED;
	if (fb == NULL || stride < (size_t)w->h.width * 4 ||
	    (rects == NULL && n > 0))
		return RECORD_EINVAL;
	/* Many small rects or more than a screenful: a keyframe is cheaper. */
	if (!w->have_kf || n > 64 ||
	    (t_us >= w->last_kf_t && t_us - w->last_kf_t >= w->kf_interval_us))
		return record_keyframe(w, t_us, fb, stride);
	k = clip_rects(w, rects, n, kept, &area);
	if (k == 0)
		return RECORD_OK;
	if (area >= (size_t)w->h.width * w->h.height)
		return record_keyframe(w, t_us, fb, stride);
	t_us = clamp_t(w, t_us);
	p[0] = (uint8_t)(k >> 8);
	p[1] = (uint8_t)k;
	for (i = 0; i < k; i++) {
		p[2 + i * 8] = kept[i].x >> 8;
		p[3 + i * 8] = (uint8_t)kept[i].x;
		p[4 + i * 8] = kept[i].y >> 8;
		p[5 + i * 8] = (uint8_t)kept[i].y;
		p[6 + i * 8] = kept[i].w >> 8;
		p[7 + i * 8] = (uint8_t)kept[i].w;
		p[8 + i * 8] = kept[i].h >> 8;
		p[9 + i * 8] = (uint8_t)kept[i].h;
		gather(w->prev + raw, w->shadow, (size_t)w->h.width * 4,
		    &kept[i]);
		raw += gather(w->raw + raw, fb, stride, &kept[i]);
	}
	hdr = 2 + k * 8;
	if (compress_into(w, p + hdr, w->chunk_cap - RECORD_CHUNK_HDR -
	    RECORD_CHUNK_TRL - hdr, w->raw, raw, w->prev, LEVEL_RECT, &len) !=
	    RECORD_OK)
		return RECORD_EFAILED;
	record_scatter(w->shadow, w->h.width, w->raw, kept, k);
	return emit(w, RECORD_CH_RECT, hdr + len, t_us);
}

int
record_key(struct record_writer *w, uint64_t t_us, uint32_t keysym, int down,
    enum record_verdict verdict)
{
	uint8_t *p = w->chunk + RECORD_CHUNK_HDR;

	if (w->status != RECORD_OK)
		return RECORD_EFAILED;
	record_put_u32(p, keysym);
	p[4] = down != 0;
	p[5] = (uint8_t)verdict;
	return emit(w, RECORD_CH_KEY, 6, clamp_t(w, t_us));
}

int
record_pointer(struct record_writer *w, uint64_t t_us, uint16_t x, uint16_t y,
    uint8_t mask, enum record_verdict verdict)
{
	uint8_t *p = w->chunk + RECORD_CHUNK_HDR;

	if (w->status != RECORD_OK)
		return RECORD_EFAILED;
	p[0] = x >> 8;
	p[1] = (uint8_t)x;
	p[2] = y >> 8;
	p[3] = (uint8_t)y;
	p[4] = mask;
	p[5] = (uint8_t)verdict;
	return emit(w, RECORD_CH_PTR, 6, clamp_t(w, t_us));
}

int
record_clipboard(struct record_writer *w, uint64_t t_us, const void *bytes,
    size_t len, enum record_clip_dir dir, enum record_verdict verdict)
{
	uint8_t *p = w->chunk + RECORD_CHUNK_HDR;
	size_t keep = len > RECORD_MAX_CLIP ? RECORD_MAX_CLIP : len;

	if (w->status != RECORD_OK)
		return RECORD_EFAILED;
	if (bytes == NULL)
		keep = 0;	/* the size only */
	p[0] = (uint8_t)dir;
	p[1] = (uint8_t)verdict;
	record_put_u32(p + 2, len > UINT32_MAX ? UINT32_MAX : (uint32_t)len);
	if (keep > 0)
		memcpy(p + 6, bytes, keep);
	return emit(w, RECORD_CH_CLIP, 6 + keep, clamp_t(w, t_us));
}

int
record_event(struct record_writer *w, uint64_t t_us, const char *json)
{
	size_t n;

	if (w->status != RECORD_OK)
		return RECORD_EFAILED;
	if (json == NULL || (n = strlen(json)) == 0 || n > RECORD_MAX_EVENT)
		return RECORD_EINVAL;
	memcpy(w->chunk + RECORD_CHUNK_HDR, json, n);
	return emit(w, RECORD_CH_EVNT, n, clamp_t(w, t_us));
}

/* INDX + END, then make it durable. */
static int
finish(struct record_writer *w)
{
	uint8_t *p = w->chunk + RECORD_CHUNK_HDR;

	if (write_index(w, w->last_t) != RECORD_OK)
		return w->status;
	record_put_u32(p, w->nchunks);
	record_put_u64(p + 4, w->index_off);
	if (emit(w, RECORD_CH_END, RECORD_END_LEN, w->last_t) != RECORD_OK)
		return w->status;
	if (fdatasync(w->fd) == -1 && errno != EINVAL && errno != EROFS)
		return fail(w, RECORD_EIO, "fdatasync"), w->status;
	return RECORD_OK;
}

int
record_writer_close(struct record_writer *w, uint8_t digest[32])
{
	int rc;

	if (w == NULL)
		return RECORD_EINVAL;
	rc = w->status;
	if (rc == RECORD_OK && w->fd != -1)
		rc = finish(w);
	if (digest != NULL && w->sha != NULL &&
	    digest_final(w->sha, digest) != DIGEST_OK && rc == RECORD_OK)
		rc = RECORD_ENOMEM;
	if (w->fd != -1 && close(w->fd) == -1 && rc == RECORD_OK)
		rc = RECORD_EIO;
	ZSTD_freeCCtx(w->zc);
	digest_free(w->sha);
	free(w->raw);
	free(w->prev);
	free(w->shadow);
	free(w->chunk);
	free(w->index);
	free(w);
	return rc;
}

const char *
record_writer_error(const struct record_writer *w)
{
	return w->err;
}

int
record_writer_errno(const struct record_writer *w)
{
	return w != NULL ? w->err_no : 0;
}

uint64_t
record_writer_size(const struct record_writer *w)
{
	return w->size;
}
