/*
 * tests/unit/test-record.c — the recording writer and reader together.
 *
 * Writes a synthetic session (a changing framebuffer sent as damaged
 * rectangles, keyframes, keys with every verdict, pointer, clipboard,
 * events), then proves: the framebuffer at every step, seeking forwards
 * and backwards, equals bit for bit what the writer had; keys and text
 * are exact; the close digest is the file's SHA-256; a copy cut at every
 * chunk boundary and at hundreds of points inside chunks opens, reports
 * the truncation where it is, and still gives exact frames before it;
 * flipped bytes are reported as corrupt at the right chunk, never a crash.
 */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "record/record.h"
#include "tests/tap.h"

#define W	160
#define H	100
#define STRIDE	((W + 3) * 4)	/* padded rows, like an X11 image */
#define STEPS	200
#define STEP_US	100000		/* 10 steps a second: 20 s */

static uint8_t fb[H * STRIDE];
static uint8_t *snap[STEPS];	/* fb after step i */
static uint64_t rng = 88172645463325252ULL;
static char dir[] = "/tmp/test-record.XXXXXX";

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

/* Paint one rectangle: flat, gradient or noise (each compresses
 * differently). */
static void
paint(const struct record_rect *r)
{
	uint32_t kind = rnd() % 3, c = rnd() & 0xffffff, px;
	int x, y;

	for (y = r->y; y < r->y + r->h; y++)
		for (x = r->x; x < r->x + r->w; x++) {
			px = kind == 0 ? c : kind == 1 ?
			    (uint32_t)(x * 3 + y * 5) * 0x010101 + c : rnd();
			memcpy(fb + y * STRIDE + x * 4, &px, 4);
		}
}

static struct record_rect
rand_rect(void)
{
	struct record_rect r;

	r.x = rnd() % W;
	r.y = rnd() % H;
	r.w = 1 + rnd() % (W - r.x);
	r.h = 1 + rnd() % (H - r.y);
	if (r.w > 60)
		r.w = 60;
	if (r.h > 40)
		r.h = 40;
	return r;
}

/* Keys typed in the session: "hello world", a typo fixed with
 * BackSpace, a filtered and a rate-limited key that must not count. */
static const struct {
	uint32_t ks;
	int verdict;
} typed[] = {
	{ 'h', 0 }, { 'e', 0 }, { 'l', 0 }, { 'l', 0 }, { 'o', 0 }, { ' ', 0 },
	{ 'w', 0 }, { 'x', 0 }, { 0xff08, 0 }, { 'o', 0 }, { 'Q', 1 },
	{ 'r', 0 }, { 'Z', 2 }, { 'l', 0 }, { 'd', 0 }, { 0xe9, 0 },
	{ 0x10020ac, 0 }, { 0xff0d, 0 },
};
#define NTYPED (sizeof(typed) / sizeof(typed[0]))

static int
write_session(const char *path, uint8_t digest[32])
{
	struct record_header h = { .width = W, .height = H, .red_shift = 16,
	    .green_shift = 8, .blue_shift = 0, .keyframe_interval_s = 2,
	    .start_unix_us = 1764000000000000ULL };
	struct record_writer *w;
	struct record_rect rects[80];
	size_t i, n, k, key = 0;
	uint64_t t;
	int rc = 0;

	snprintf(h.session, sizeof(h.session), "s-test");
	snprintf(h.recipient, sizeof(h.recipient), "alice");
	snprintf(h.policy, sizeof(h.policy), "strict");
	if (record_writer_open(path, &h, &w) != RECORD_OK)
		return -1;
	for (i = 0; i < STEPS; i++) {
		t = (uint64_t)i * STEP_US;
		/* 0 rects now and then; a flood of 70 every 50 steps */
		n = i % 50 == 25 ? 70 : rnd() % 4;
		for (k = 0; k < n; k++) {
			rects[k] = rand_rect();
			paint(&rects[k]);
		}
		rc |= record_frame_rects(w, t, fb, STRIDE, rects, n);
		if (i % 7 == 3 && key < NTYPED) {
			rc |= record_key(w, t, typed[key].ks, 1,
			    typed[key].verdict);
			rc |= record_key(w, t + 1000, typed[key].ks, 0,
			    typed[key].verdict);
			key++;
		}
		if (i % 13 == 0)
			rc |= record_pointer(w, t, (uint16_t)(i % W),
			    (uint16_t)(i % H), (uint8_t)(i & 1), 0);
		if (i == 40)
			rc |= record_clipboard(w, t, "secret", 6,
			    RECORD_CLIP_IN, RECORD_FILTERED);
		if (i == 60)
			rc |= record_event(w, t, "{\"event\":\"resize\"}");
		memcpy(snap[i], fb, sizeof(fb));
	}
	if (key != NTYPED)
		rc = -1;
	return record_writer_close(w, digest) | rc;
}

static int
fb_equal(struct record_reader *r, const uint8_t *want)
{
	const uint8_t *got = (const uint8_t *)record_reader_fb(r);
	int y;

	for (y = 0; y < H; y++)
		if (memcmp(got + y * W * 4, want + y * STRIDE, W * 4) != 0)
			return 0;
	return 1;
}

/* Frames at every step < limit_us equal the writer's (forward, then in
 * a scrambled order); returns the count of mismatches. */
static int
frames_match(struct record_reader *r, uint64_t limit_us, int scramble)
{
	int i, j, bad = 0;

	for (j = 0; j < STEPS; j++) {
		i = scramble ? (j * 37) % STEPS : j;
		if ((uint64_t)i * STEP_US + 2000 >= limit_us)
			continue;
		/* between steps: still the frame of step i */
		if (record_reader_seek(r, (uint64_t)i * STEP_US +
		    (j & 1) * 50000) != RECORD_OK || !fb_equal(r, snap[i]))
			bad++;
	}
	return bad;
}

static void
test_roundtrip(const char *path)
{
	struct record_reader *r;
	const struct record_info *in;
	struct record_text *x;
	struct record_item it;
	char err[256] = "";
	size_t i, k = 0;
	int keys_ok = 1;
	uint64_t first = 0;

	tap_ok(record_reader_open(path, &r, err, sizeof(err)) == RECORD_OK,
	    "reader opens the session (%s)", err);
	in = record_reader_info(r);
	tap_ok(in->complete && !in->truncated && in->indexed,
	    "complete, not truncated, indexed");
	tap_ok(in->keyframes >= 10 && in->deltas > 100,
	    "keyframes %zu (>= 10: 20 s at 2 s) and deltas %zu", in->keyframes,
	    in->deltas);
	tap_ok(record_reader_header(r)->width == W &&
	    strcmp(record_reader_header(r)->recipient, "alice") == 0,
	    "header round-trips");
	tap_ok(frames_match(r, UINT64_MAX, 0) == 0,
	    "every step's framebuffer is bit-exact (forward)");
	tap_ok(frames_match(r, UINT64_MAX, 1) == 0,
	    "every step's framebuffer is bit-exact (random seeks)");
	x = record_text_alloc();
	for (i = 0; i < record_reader_nchunks(r); i++) {
		if (record_reader_chunk(r, i)->type != RECORD_CH_KEY)
			continue;
		if (record_reader_item(r, i, &it) != RECORD_OK ||
		    it.keysym != typed[k / 2].ks || it.down != !(k & 1) ||
		    it.verdict != typed[k / 2].verdict)
			keys_ok = 0;
		record_text_feed(x, it.t_us, it.keysym, it.down, it.verdict);
		if (record_text_ends_with(x, "world", &first))
			tap_diag("'world' typed from %.1f s", first / 1e6);
		k++;
	}
	tap_ok(keys_ok && k == 2 * NTYPED, "all %zu key events exact", k);
	tap_ok(strcmp(record_text_str(x), "hello world\xc3\xa9\xe2\x82\xac\n")
	    == 0, "typed text: 'hello world' + e-acute, euro, newline");
	tap_ok(first == (uint64_t)(3 + 7 * 6) * STEP_US,
	    "search: 'world' started at the 'w' press (%.1f s)", first / 1e6);
	record_text_free(x);
	record_reader_free(r);
}

static void
test_digest(const char *path, const uint8_t digest[32])
{
	uint8_t d[32], b[65536];
	unsigned int dl;
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	ssize_t n;
	int fd = open(path, O_RDONLY);

	EVP_DigestInit_ex(c, EVP_sha256(), NULL);
	while ((n = read(fd, b, sizeof(b))) > 0)
		EVP_DigestUpdate(c, b, (size_t)n);
	EVP_DigestFinal_ex(c, d, &dl);
	EVP_MD_CTX_free(c);
	close(fd);
	tap_ok(memcmp(d, digest, 32) == 0, "close digest = SHA-256 of the file");
	tap_ok(record_file_sha256(path, d) == RECORD_OK &&
	    memcmp(d, digest, 32) == 0, "record_file_sha256 agrees");
}

/* record_seal: what record_closed says, complete and cut. */
static void
test_seal(const char *path, const char *cut, const uint8_t digest[32])
{
	struct record_seal rs;
	struct stat st;
	char hex[65], err[256], why[256];
	int i;

	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", digest[i]);
	stat(path, &st);
	i = record_seal(path, &rs, err, sizeof(err));
	tap_ok(i == RECORD_OK && strcmp(rs.sha256, hex) == 0 && rs.size == (uint64_t)st.st_size &&
	    !rs.truncated && rs.frames == 150 && rs.duration_us > 19000000,
	    "seal of a complete recording: digest, size, %llu frames, not cut",
	    (unsigned long long)rs.frames);
	{
		uint8_t b[65536];
		ssize_t n;
		int in = open(path, O_RDONLY), out = open(cut, O_WRONLY |
		    O_CREAT | O_TRUNC, 0600);

		while ((n = read(in, b, sizeof(b))) > 0)
			if (write(out, b, (size_t)n) != n)
				break;
		close(in);
		close(out);
	}
	truncate(cut, st.st_size / 2);
	i = record_seal(cut, &rs, err, sizeof(err));
	tap_ok(i == RECORD_OK && rs.truncated && rs.reason[0] != '\0' && rs.frames < 150,
	    "seal of a cut one: truncated (%s), %llu frames", rs.reason,
	    (unsigned long long)rs.frames);
	tap_ok(record_seal("/nonexistent.rec", &rs, err, sizeof(err)) !=
	    RECORD_OK, "seal of a missing file fails (%s)", err);
	tap_ok(record_dir_has_room(dir, 1, why, sizeof(why)) == 1 &&
	    record_dir_has_room(dir, 1048576, why, sizeof(why)) == 0 &&
	    strstr(why, "disk full") != NULL, "free-space check (%s)", why);
}

static uint8_t *
slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *p;
	int fd = open(path, O_RDONLY);

	if (fd == -1 || fstat(fd, &st) == -1 ||
	    (p = malloc((size_t)st.st_size)) == NULL ||
	    read(fd, p, (size_t)st.st_size) != st.st_size)
		exit(99);
	close(fd);
	*len = (size_t)st.st_size;
	return p;
}

static void
put_file(const char *path, const uint8_t *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd == -1 || write(fd, p, n) != (ssize_t)n || close(fd) != 0)
		exit(99);
}

/* The damaged copy opens (unless the header is hit), stops at chunk
 * offset `at` with the expected status, and frames before are exact. */
static int
damaged_ok(const char *path, uint64_t at, int want_status, int header_hit)
{
	struct record_reader *r;
	const struct record_info *in;
	char err[256];
	int rc, ok;

	rc = record_reader_open(path, &r, err, sizeof(err));
	if (header_hit)
		return rc == RECORD_EFORMAT;
	if (rc != RECORD_OK)
		return 0;
	in = record_reader_info(r);
	ok = in->truncated && in->trunc_offset == at &&
	    in->valid_size == at &&
	    (want_status < 0 || in->trunc_status == want_status) &&
	    frames_match(r, in->trunc_t_us, 0) == 0;
	record_reader_free(r);
	return ok;
}

static void
test_truncation(const char *path, const char *cut)
{
	struct record_reader *r;
	uint64_t *ends, head_end;
	size_t len, i, n, points = 0, bad = 0;
	uint8_t *p = slurp(path, &len), *orig = slurp(path, &len);
	char err[256];

	if (record_reader_open(path, &r, err, sizeof(err)) != RECORD_OK)
		exit(99);
	n = record_reader_nchunks(r);
	ends = calloc(n + 1, sizeof(*ends));
	for (i = 0; i < n; i++)
		ends[i] = record_reader_chunk(r, i)->offset;
	ends[n] = len;
	head_end = ends[1];
	record_reader_free(r);
	/* at every chunk boundary except the end: cut before chunk i */
	for (i = 1; i < n; i++, points++) {
		put_file(cut, p, ends[i]);
		bad += !damaged_ok(cut, ends[i], RECORD_ETRUNC, 0);
	}
	tap_ok(bad == 0, "cut at all %zu chunk boundaries: truncation "
	    "reported there, earlier frames exact (%zu bad)", points, bad);
	/* inside chunks: 300 random cut points */
	for (bad = 0, points = 0; points < 300; points++) {
		size_t at = head_end + rnd() % (len - head_end), c = 0;

		while (c + 1 <= n && ends[c + 1] <= at)
			c++;
		if (ends[c] == at)
			continue;
		put_file(cut, p, at);
		bad += !damaged_ok(cut, ends[c], RECORD_ETRUNC, 0);
	}
	tap_ok(bad == 0, "cut inside chunks at 300 points: truncation at "
	    "the chunk start, earlier frames exact (%zu bad)", bad);
	/* a cut inside the header chunk: not a recording */
	put_file(cut, p, head_end - 3);
	tap_ok(damaged_ok(cut, 0, 0, 1), "cut inside the header: refused");
	/* flipped bytes: 200 single-byte flips anywhere after the header */
	for (bad = 0, points = 0; points < 200; points++) {
		size_t at = head_end + rnd() % (len - head_end), c = 0;

		while (c + 1 <= n && ends[c + 1] <= at)
			c++;
		p[at] ^= (uint8_t)(1 + rnd() % 255);
		put_file(cut, p, len);
		bad += !damaged_ok(cut, ends[c], -1, 0);
		p[at] = orig[at];
	}
	tap_ok(bad == 0, "200 flipped bytes: each reported at its chunk, "
	    "never a crash (%zu bad)", bad);
	free(ends);
	free(orig);
	free(p);
}

static void
test_writer_errors(const char *path)
{
	struct record_header h = { .width = W, .height = H };
	struct record_writer *w;
	int fd;

	tap_ok(record_writer_open(path, &h, &w) == RECORD_EIO,
	    "writer refuses an existing file");
	h.width = 0;
	tap_ok(record_writer_open("/nonexistent/x", &h, &w) == RECORD_EINVAL,
	    "writer refuses a zero width");
	h.width = W;
	fd = open("/dev/full", O_WRONLY);
	if (fd == -1) {
		tap_ok(1, "# SKIP no /dev/full");
		return;
	}
	tap_ok(record_writer_fdopen(fd, &h, &w) == RECORD_EIO && w == NULL,
	    "a full disk fails the open (ENOSPC)");
	close(fd);
}

/* Clipboard kept to 64 KiB with its full length, oversized events
 * refused, shortcuts are not text, keysym names. */
static void
test_edges(const char *path)
{
	static char big[100000], ev[RECORD_MAX_EVENT + 2];
	struct record_header h = { .width = 8, .height = 8 };
	struct record_writer *w;
	struct record_reader *r;
	struct record_item it = { 0 };	/* read even when no CLIP chunk came */
	struct record_text *x = record_text_alloc();
	char err[256], name[32];
	size_t i;
	int rc;

	memset(big, 'c', sizeof(big));
	memset(ev, ' ', sizeof(ev) - 1);
	unlink(path);
	rc = record_writer_open(path, &h, &w);
	rc |= record_clipboard(w, 5, big, sizeof(big), RECORD_CLIP_OUT,
	    RECORD_FILTERED);
	tap_ok(record_event(w, 6, ev) == RECORD_EINVAL,
	    "an event over 64 KiB is refused");
	rc |= record_writer_close(w, NULL);
	rc |= record_reader_open(path, &r, err, sizeof(err));
	for (i = 0; rc == 0 && i < record_reader_nchunks(r); i++)
		if (record_reader_chunk(r, i)->type == RECORD_CH_CLIP)
			rc |= record_reader_item(r, i, &it);
	tap_ok(rc == 0 && it.data_len == RECORD_MAX_CLIP &&
	    it.full_len == sizeof(big) && it.dir == RECORD_CLIP_OUT &&
	    it.verdict == RECORD_FILTERED,
	    "clipboard: first 64 KiB kept, full length and verdict recorded");
	record_reader_free(r);
	/* Control+c, then c: only the second is text */
	record_text_feed(x, 1, 0xffe3, 1, 0);
	record_text_feed(x, 2, 'c', 1, 0);
	record_text_feed(x, 3, 0xffe3, 0, 0);
	record_text_feed(x, 4, 'c', 1, 0);
	tap_ok(strcmp(record_text_str(x), "c") == 0,
	    "Control+c is a shortcut, not text");
	record_text_free(x);
	record_keysym_name(0xff08, name, sizeof(name));
	tap_ok(strcmp(name, "BackSpace") == 0, "keysym name BackSpace");
	record_keysym_name(0xfe50, name, sizeof(name));
	tap_ok(strcmp(name, "0xfe50") == 0, "unknown keysym shown in hex");
}

int
main(void)
{
	char path[256], cut[256];
	uint8_t digest[32];
	int i;

	if (mkdtemp(dir) == NULL)
		tap_skip_all("no temporary directory");
	snprintf(path, sizeof(path), "%s/session.rec", dir);
	snprintf(cut, sizeof(cut), "%s/cut.rec", dir);
	for (i = 0; i < STEPS; i++)
		if ((snap[i] = malloc(sizeof(fb))) == NULL)
			return 99;
	memset(fb, 0x40, sizeof(fb));
	tap_ok(write_session(path, digest) == RECORD_OK,
	    "writer records a 20 s synthetic session");
	test_roundtrip(path);
	test_digest(path, digest);
	test_truncation(path, cut);
	test_seal(path, cut, digest);
	test_writer_errors(path);
	test_edges(path);
	unlink(path);
	unlink(cut);
	rmdir(dir);
	return tap_done();
}
