/*
 * record/record.h — the session recording: writer, reader, replay helpers.
 *
 * A recording is an append-only file of checksummed chunks (the format is
 * docs/recording-format.md): compressed framebuffer keyframes and damaged
 * rectangles, keys, pointer, clipboard and session events, on one
 * timeline in microseconds since the session started.
 *
 * The writer runs inside the unprivileged session worker's single-threaded
 * event loop: every call is one write() of one chunk, buffers are allocated
 * once at open, and a failure is sticky (every later call returns it) so
 * the worker can end a session it can no longer record.
 *
 * The reader parses untrusted files (an auditor's copy may be damaged or
 * forged): every length is bounded, every chunk's CRC is checked, and it
 * stops at the first incomplete or corrupt chunk, keeping what precedes.
 *
 * Library code: no logging, no exit; status codes, record_strerror() and
 * a detail string.
 */
#ifndef RECORD_RECORD_H
#define RECORD_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum record_status {
	RECORD_OK = 0,
	RECORD_EINVAL,		/* bad argument from the caller */
	RECORD_ENOMEM,
	RECORD_EIO,		/* read/write/fsync failed (errno in detail) */
	RECORD_EFORMAT,		/* not a recording, or an unknown version */
	RECORD_ECORRUPT,	/* a chunk fails its CRC or its own bounds */
	RECORD_ETRUNC,		/* the file ends inside a chunk / without END */
	RECORD_ECOMPRESS,	/* zstd failed, or the size is not the declared one */
	RECORD_ENOFRAME,	/* no keyframe at or before the asked time */
	RECORD_EFAILED		/* the writer failed earlier (sticky) */
};

const char *record_strerror(int status);

/* Limits (both sides): the reader refuses anything larger. */
#define RECORD_MAX_WIDTH	4096
#define RECORD_MAX_HEIGHT	2400
#define RECORD_MAX_RECTS	4096	/* rectangles in one delta chunk */
#define RECORD_MAX_EVENT	65536	/* bytes of one JSON event */
#define RECORD_MAX_CLIP		65536	/* clipboard bytes kept per attempt */

enum record_verdict {
	RECORD_DELIVERED = 0,	/* passed on to the session */
	RECORD_FILTERED = 1,	/* dropped by the key/clipboard policy */
	RECORD_RATELIMITED = 2	/* dropped by the input rate limiter */
};

enum record_clip_dir {
	RECORD_CLIP_IN = 0,	/* viewer -> session (paste) */
	RECORD_CLIP_OUT = 1	/* session -> viewer (copy) */
};

/* A 32-bit pixel is a native little-endian uint32; the shifts say where
 * red, green and blue sit (X11 TrueColor on x86: 16, 8, 0). */
struct record_header {
	uint16_t	width;
	uint16_t	height;
	uint8_t		red_shift, green_shift, blue_shift;
	uint32_t	keyframe_interval_s;	/* 0: default (30 s) */
	uint64_t	start_unix_us;		/* wall clock at t = 0 */
	char		session[64];		/* NUL-terminated, printable */
	char		recipient[128];
	char		policy[64];
};

struct record_rect {
	uint16_t	x, y, w, h;
};

/* ---- writer ---- */
struct record_writer;

/* Create path (must not exist; mode 0640) and write the header chunk. */
int	record_writer_open(const char *path, const struct record_header *h,
	    struct record_writer **wp);
/* Same on an open, empty, writable fd; the writer owns it from now on. */
int	record_writer_fdopen(int fd, const struct record_header *h,
	    struct record_writer **wp);
/* Damaged rectangles of the 32bpp framebuffer fb (stride bytes per row).
 * Writes a keyframe instead when one is due or none was written yet. */
int	record_frame_rects(struct record_writer *w, uint64_t t_us,
	    const void *fb, size_t stride, const struct record_rect *rects,
	    size_t n);
/* The whole framebuffer, now (e.g. after a resize or a client's full
 * refresh); the writer also calls it itself every keyframe interval. */
int	record_keyframe(struct record_writer *w, uint64_t t_us, const void *fb,
	    size_t stride);
int	record_key(struct record_writer *w, uint64_t t_us, uint32_t keysym,
	    int down, enum record_verdict verdict);
int	record_pointer(struct record_writer *w, uint64_t t_us, uint16_t x,
	    uint16_t y, uint8_t mask, enum record_verdict verdict);
/* Keeps at most RECORD_MAX_CLIP bytes, and always the full length;
 * bytes NULL keeps the length only (the worker never keeps cut text). */
int	record_clipboard(struct record_writer *w, uint64_t t_us,
	    const void *bytes, size_t len, enum record_clip_dir dir,
	    enum record_verdict verdict);
/* A session event: one JSON object (not checked here), <= RECORD_MAX_EVENT. */
int	record_event(struct record_writer *w, uint64_t t_us, const char *json);
/* Final index + END chunk, fsync, close; digest = SHA-256 of the whole
 * file.  Frees w whatever the outcome. */
int	record_writer_close(struct record_writer *w, uint8_t digest[32]);
/* errno-style detail of the sticky failure ("" when none). */
const char *record_writer_error(const struct record_writer *w);
/* Bytes written so far. */
uint64_t record_writer_size(const struct record_writer *w);

/* ---- reader ---- */
enum record_chunk_type {
	RECORD_CH_HEAD = 0x48454144,	/* "HEAD" */
	RECORD_CH_KEYF = 0x4b455946,	/* "KEYF" */
	RECORD_CH_RECT = 0x52454354,	/* "RECT" */
	RECORD_CH_KEY = 0x4b455920,	/* "KEY " */
	RECORD_CH_PTR = 0x50545220,	/* "PTR " */
	RECORD_CH_CLIP = 0x434c4950,	/* "CLIP" */
	RECORD_CH_EVNT = 0x45564e54,	/* "EVNT" */
	RECORD_CH_INDX = 0x494e4458,	/* "INDX" */
	RECORD_CH_END = 0x454e4420	/* "END " */
};

struct record_chunk {
	uint32_t	type;
	uint32_t	len;		/* payload bytes */
	uint64_t	t_us;
	uint64_t	offset;		/* of the chunk header in the file */
};

struct record_info {
	uint64_t	size;		/* file bytes */
	uint64_t	valid_size;	/* bytes of intact chunks */
	uint64_t	duration_us;	/* time of the last intact chunk */
	size_t		chunks, keyframes, deltas, keys, pointers, clips, events;
	int		complete;	/* ends with a valid END chunk */
	int		indexed;	/* a valid INDX chunk was read */
	int		truncated;	/* stopped before the end of the file */
	int		trunc_status;	/* RECORD_ETRUNC or RECORD_ECORRUPT */
	uint64_t	trunc_offset;
	uint64_t	trunc_t_us;	/* time of the last intact chunk */
	char		trunc_reason[160];
};

/* One decoded non-frame chunk; pointers valid until the next call. */
struct record_item {
	uint32_t	type;
	uint64_t	t_us;
	uint32_t	keysym;		/* KEY */
	uint8_t		down;		/* KEY */
	uint8_t		verdict;	/* KEY, PTR, CLIP */
	uint16_t	x, y;		/* PTR */
	uint8_t		mask;		/* PTR */
	uint8_t		dir;		/* CLIP */
	uint32_t	full_len;	/* CLIP: length of the original */
	const char	*data;		/* CLIP bytes, EVNT JSON (NUL-terminated) */
	size_t		data_len;
};

struct record_reader;

/* Scans every chunk (CRC-checked); a damaged tail is not an error: see
 * record_reader_info()->truncated.  A bad header is (detail in err). */
int	record_reader_open(const char *path, struct record_reader **rp,
	    char *err, size_t errlen);
/* The same on a descriptor (taken over: closed by record_reader_free, or
 * here on failure) that only needs pread and fstat; name is for
 * messages. */
int	record_reader_fdopen(int fd, const char *name,
	    struct record_reader **rp, char *err, size_t errlen);
void	record_reader_free(struct record_reader *r);
const struct record_header *record_reader_header(const struct record_reader *r);
const struct record_info *record_reader_info(const struct record_reader *r);
size_t	record_reader_nchunks(const struct record_reader *r);
const struct record_chunk *record_reader_chunk(const struct record_reader *r,
	    size_t i);
/* Decode chunk i (KEY, PTR, CLIP or EVNT). */
int	record_reader_item(struct record_reader *r, size_t i,
	    struct record_item *it);
/* Framebuffer as it was at t_us: the nearest keyframe <= t, then deltas. */
int	record_reader_seek(struct record_reader *r, uint64_t t_us);
/* The current framebuffer: width*height native uint32 pixels. */
const uint32_t *record_reader_fb(const struct record_reader *r);
/* Current framebuffer as packed 8-bit RGB (width*height*3 bytes). */
void	record_reader_rgb(const struct record_reader *r, uint8_t *out);
const char *record_reader_error(const struct record_reader *r);

/* SHA-256 of a whole file, as record_writer_close() returned it: what the
 * audit log holds for a closed recording. */
int	record_file_sha256(const char *path, uint8_t digest[32]);

/* ---- sealing (record/seal.c): what record_closed says ---- */
struct record_seal {
	char		sha256[65];	/* hex, of every byte in the file */
	uint64_t	size;
	uint64_t	frames;		/* keyframes + deltas intact */
	uint64_t	duration_us;	/* time of the last intact chunk */
	int		truncated;	/* no valid END chunk */
	char		reason[160];	/* why it is cut ("" when complete) */
};

/* Digest, size, frames, duration of a finished recording (read as
 * untrusted); a damaged or cut file is not an error, a missing one is. */
int	record_seal(const char *path, struct record_seal *out, char *err,
	    size_t errlen);
/* mkdir -p, 0700 where made; 0 or -1 (errno). */
int	record_dir_make(const char *dir);
/* Let group gid (the auditors') read path (a closed recording, 0440; the
 * record dir, 0750): fchown/fchmod, no symlink followed.  0 or -1. */
int	record_share(const char *path, gid_t gid, mode_t mode);
/* 1 if dir has at least min_mb MB free (0 = no check), else 0 and why. */
int	record_dir_has_room(const char *dir, unsigned long min_mb, char *why,
	    size_t whylen);
/* The errno of the writer's sticky failure (ENOSPC: disk full), or 0. */
int	record_writer_errno(const struct record_writer *w);

/* ---- typed text (record/text.c) ---- */
/* Rebuilds what was typed from key presses: printable keysyms (Latin-1,
 * Unicode, the legacy blocks, the keypad) as UTF-8, BackSpace deletes a
 * character, Return/Enter is a newline, Tab a tab; a keysym that is
 * neither a character nor a key that types nothing (function, cursor,
 * modifier, dead, vendor) enters as «keysym 0x...».  Only delivered
 * presses count. */
struct record_text;
struct record_text *record_text_alloc(void);
void	record_text_free(struct record_text *x);
/* Returns 1 if the text changed. */
int	record_text_feed(struct record_text *x, uint64_t t_us, uint32_t keysym,
	    int down, int verdict);
const char *record_text_str(const struct record_text *x);
/* The text for a terminal: zero-width and bidi controls (U+200B-200F,
 * U+2028-202E, U+2060-206F, U+FEFF, U+00AD) written as «U+202E», so a
 * recording cannot reorder or hide what the auditor reads.  Allocated
 * (free()); NULL when out of memory. */
char	*record_text_shown(const struct record_text *x);
/* Does the text now end with needle?  Sets the time of its first char. */
int	record_text_ends_with(const struct record_text *x, const char *needle,
	    uint64_t *t_first);
/* UTF-8 of a printable keysym into out[5]; 0 if not printable. */
size_t	record_keysym_utf8(uint32_t keysym, char out[5]);
/* "BackSpace", "Return", "a", "U+20AC"...: for the timeline. */
void	record_keysym_name(uint32_t keysym, char *out, size_t outlen);

/* write() all n bytes, retrying on EINTR and short writes (the writer
 * calls it once per chunk: a crash leaves at most one partial chunk). */
int	record_write_all(int fd, const void *p, size_t n);

/* ---- PNG (record/png.c) ---- */
/* Write 8-bit RGB pixels as a PNG to fd (zlib; see the file's comment). */
int	record_png_write(int fd, const uint8_t *rgb, uint32_t width,
	    uint32_t height);

#endif
