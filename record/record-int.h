/*
 * record/record-int.h — what the writer and the reader of recordings
 * share: the chunk framing and the limits.  Not for callers.
 */
#ifndef RECORD_RECORD_INT_H
#define RECORD_RECORD_INT_H

#include <stddef.h>
#include <stdint.h>

#include <zstd.h>

#include "record/record.h"

#define RECORD_MAGIC		"CDSGREC"	/* 7 bytes + version byte */
#define RECORD_VERSION		1
#define RECORD_CHUNK_HDR	16	/* type u32, len u32, t_us u64 */
#define RECORD_CHUNK_TRL	4	/* CRC-32 (zlib) of header + payload */
#define RECORD_HEAD_MAX		1024
#define RECORD_CODEC_ZSTD	1	/* plain zstd frame */
#define RECORD_CODEC_ZSTD_PREV	2	/* zstd, prefix = the rects' old pixels */
#define RECORD_DEFAULT_KF_S	30
#define RECORD_INDEX_EVERY	10	/* keyframes between INDX chunks */
#define RECORD_END_LEN		12	/* END payload: nchunks u32, index off u64 */

/* Largest payload a chunk of this type may have in a recording of this
 * geometry; 0 for an unknown type. */
size_t	record_chunk_max(uint32_t type, uint32_t width, uint32_t height);

/* Encode a chunk header at p (16 bytes, big-endian). */
void	record_put_hdr(uint8_t *p, uint32_t type, uint32_t len, uint64_t t_us);
void	record_put_u32(uint8_t *p, uint32_t v);
void	record_put_u64(uint8_t *p, uint64_t v);

/* The HEAD payload: encode into out (RECORD_HEAD_MAX), or decode from
 * untrusted bytes (RECORD_EFORMAT with a reason in err). */
size_t	record_head_encode(const struct record_header *h, uint8_t *out);
int	record_head_decode(const uint8_t *p, size_t len,
	    struct record_header *h, char *err, size_t errlen);

/* Set the compression window for a screen of fb bytes. */
int	record_zstd_window(ZSTD_CCtx *zc, size_t fb);
/* Copy packed rectangle rows (in order) into a width-pixel screen. */
void	record_scatter(uint8_t *fb, uint32_t width, const uint8_t *raw,
	    const struct record_rect *rects, size_t n);

/* A legacy X11 keysym (0x100-0x20ac) and the character it types;
 * record/keysym-table.c, generated from keysymdef.h, sorted by ks. */
struct record_keysym_map {
	uint16_t	 ks;
	uint16_t	 ucs;
};
extern const struct record_keysym_map record_keysym_legacy[];
extern const size_t record_keysym_nlegacy;

#endif
