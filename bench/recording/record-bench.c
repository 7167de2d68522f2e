/*
 * bench/recording/record-bench.c — what a recording costs: bytes per hour,
 * CPU per second of session, and seek time, for a scripted synthetic
 * "analytics session" at 1280x800 (a mostly static UI: a table that is
 * scrolled in bursts, a chart redrawn now and then, a clock, a query box
 * being typed into, pointer moves).  The same generator writes the short
 * sessions of tests/regress/040-replay.sh, with the frames it had at given
 * times as PPM files to compare with `cdsgate replay --frame`.
 *
 *   record-bench [--busy] [--seconds N] [--out FILE] [--text TEXT]
 *                [--expect SECONDS:FILE.ppm]...
 *
 * A developer tool: runs as the invoking user on files it creates.
 */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "record/record.h"

#define W	1280
#define H	800
#define TICK_US	100000		/* the session advances in 100 ms ticks */
#define GW	8
#define GH	14
#define ROW_H	24
#define MAX_EXPECT 8

static uint32_t fb[W * H];
static uint8_t glyph[96][GH];	/* 8x14 bitmaps, one bit per pixel */
static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static double cpu_s;		/* CPU spent inside the writer */

struct expect {
	uint64_t	 t_us;
	const char	*path;
	int		 done;
};

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

static double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double
wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
fill(int x, int y, int w, int h, uint32_t c)
{
	int i, j;

	for (j = y; j < y + h; j++)
		for (i = x; i < x + w; i++)
			fb[j * W + i] = c;
}

static void
draw_char(int x, int y, int ch, uint32_t fg, uint32_t bg)
{
	int i, j;

	for (j = 0; j < GH; j++)
		for (i = 0; i < GW; i++)
			fb[(y + j) * W + x + i] =
			    glyph[(ch - 32) % 96][j] >> i & 1 ? fg : bg;
}

/* One table row of pseudo-random cell text, seeded by its number. */
static void
draw_row(int y, uint32_t seed)
{
	uint64_t save = rng;
	int x;

	rng = seed * 2654435761u + 1;
	fill(20, y, 900, ROW_H, seed & 1 ? 0xf4f6f8 : 0xffffff);
	for (x = 28; x + GW < 900; x += GW)
		if ((x / GW) % 14 < 10)
			draw_char(x, y + 5, 33 + rnd() % 90, 0x202020,
			    seed & 1 ? 0xf4f6f8 : 0xffffff);
	rng = save;
}

static void
draw_table(uint32_t top)
{
	int i;

	for (i = 0; i < 20; i++)
		draw_row(120 + i * ROW_H, top + (uint32_t)i);
}

static void
draw_chart(void)
{
	int i, h;

	fill(940, 120, 320, 300, 0xffffff);
	for (i = 0; i < 12; i++) {
		h = 20 + rnd() % 260;
		fill(950 + i * 25, 410 - h, 18, h, 0x3366cc);
	}
}

static void
draw_ui(void)
{
	int i;

	for (i = 0; i < 96; i++)
		for (int j = 0; j < GH; j++)
			glyph[i][j] = j < 2 || j > 11 ? 0 : (uint8_t)rnd();
	fill(0, 0, W, H, 0xe8eaed);
	fill(0, 0, W, 48, 0x1a73e8);		/* title bar */
	fill(20, 60, 900, 40, 0xffffff);	/* query box */
	draw_table(0);
	draw_chart();
}

static void
write_ppm(const char *path)
{
	FILE *f = fopen(path, "wb");
	int i;

	if (f == NULL) {
		perror(path);
		exit(1);
	}
	fprintf(f, "P6\n%d %d\n255\n", W, H);
	for (i = 0; i < W * H; i++) {
		fputc(fb[i] >> 16 & 0xff, f);
		fputc(fb[i] >> 8 & 0xff, f);
		fputc(fb[i] & 0xff, f);
	}
	fclose(f);
}

static void
check(int rc, struct record_writer *w)
{
	if (rc != RECORD_OK) {
		fprintf(stderr, "record-bench: %s %s\n", record_strerror(rc),
		    w != NULL ? record_writer_error(w) : "");
		exit(1);
	}
}

static void
frame(struct record_writer *w, uint64_t t, int x, int y, int rw, int rh)
{
	struct record_rect r = { (uint16_t)x, (uint16_t)y, (uint16_t)rw,
	    (uint16_t)rh };
	double c = cpu_now();

	check(record_frame_rects(w, t, fb, W * 4, &r, 1), w);
	cpu_s += cpu_now() - c;
}

static void
key(struct record_writer *w, uint64_t t, uint32_t ks, int verdict)
{
	double c = cpu_now();

	check(record_key(w, t, ks, 1, verdict), w);
	check(record_key(w, t, ks, 0, verdict), w);
	cpu_s += cpu_now() - c;
}

struct sim {
	const char	*text;		/* what the user types (NULL: queries) */
	size_t		 typed;		/* chars of text typed so far */
	int		 caret;		/* x of the next char in the box */
	uint32_t	 top;		/* first table row shown */
	int		 scroll_left;	/* ticks left in a scroll burst */
	int		 busy;		/* --busy: scroll on every tick */
};

/* Type one character of the current text into the query box. */
static void
type_char(struct record_writer *w, struct sim *s, uint64_t t)
{
	static const char *queries[] = { "select region, sum(visits) from t "
	    "group by region", "age >= 65 and sex = 'F'", "top 20 by cost" };
	const char *q = s->text ? s->text : queries[t / 60000000 % 3];
	unsigned char ch = (unsigned char)q[s->typed];

	if (ch == '\0') {
		key(w, t, 0xff0d, RECORD_DELIVERED);	/* Return */
		fill(20, 60, 900, 40, 0xffffff);
		frame(w, t, 20, 60, 900, 40);
		s->typed = 0;
		s->caret = 28;
		return;
	}
	key(w, t, ch, RECORD_DELIVERED);
	if (s->caret + GW < 910) {
		draw_char(s->caret, 73, ch, 0x000000, 0xffffff);
		frame(w, t, s->caret, 73, GW, GH);
		s->caret += GW;
	}
	s->typed++;
}

/* One 100 ms tick of the scripted session. */
static void
tick(struct record_writer *w, struct sim *s, uint64_t i)
{
	uint64_t t = i * TICK_US, sec = i / 10;
	double c;

	if (i % 10 == 0) {			/* the clock */
		fill(1180, 16, 80, 16, 0x1a73e8);
		draw_char(1180 + (int)(sec % 8) * GW, 17, '0' + sec % 10,
		    0xffffff, 0x1a73e8);
		frame(w, t, 1180, 16, 80, 16);
	}
	/* typing: the given text once from 2 s, or a query every minute */
	if ((s->text != NULL && i >= 20 && (i - 20) % 3 == 0 &&
	    (i - 20) / 3 <= strlen(s->text)) ||
	    (s->text == NULL && sec % 60 >= 5 && sec % 60 < 25 && i % 3 == 0))
		type_char(w, s, t);
	if (s->text != NULL && i == 25) {	/* blocked keys: not text */
		key(w, t, 0xffc9, RECORD_FILTERED);	/* F12 */
		key(w, t + 1000, 'X', RECORD_RATELIMITED);
	}
	if ((sec % 15 == 7 && i % 10 == 0) || s->busy)	/* a scroll burst */
		s->scroll_left = 8;
	if (s->scroll_left > 0) {
		s->scroll_left--;
		draw_table(++s->top);
		frame(w, t, 20, 120, 900, 20 * ROW_H);
	}
	if (i % 600 == 300) {			/* chart redraw each minute */
		draw_chart();
		frame(w, t, 940, 120, 320, 300);
	}
	if (i % 2 == 0 && sec % 20 < 6) {	/* pointer moves */
		c = cpu_now();
		check(record_pointer(w, t, (uint16_t)(300 + i % 600),
		    (uint16_t)(200 + i % 300), 0, RECORD_DELIVERED), w);
		cpu_s += cpu_now() - c;
	}
}

/* Open, then seek to every minute in a scrambled order. */
static void
bench_seek(const char *path, uint64_t dur_s, double *open_ms,
    double *mean_ms, double *max_ms)
{
	struct record_reader *r;
	char err[256];
	uint64_t m, n = dur_s / 60 + 1, k;
	double t0 = wall_now(), d;

	if (record_reader_open(path, &r, err, sizeof(err)) != RECORD_OK) {
		fprintf(stderr, "record-bench: %s\n", err);
		exit(1);
	}
	*open_ms = (wall_now() - t0) * 1e3;
	*mean_ms = *max_ms = 0;
	for (k = 0; k < n; k++) {
		m = (k * 37) % n;
		t0 = wall_now();
		check(record_reader_seek(r, m * 60000000 + 59000000), NULL);
		d = (wall_now() - t0) * 1e3;
		*mean_ms += d / n;
		if (d > *max_ms)
			*max_ms = d;
	}
	record_reader_free(r);
}

static int
run(const char *out, uint64_t seconds, const char *text, int busy,
    struct expect *ex, size_t nex)
{
	struct record_header h = { .width = W, .height = H, .red_shift = 16,
	    .green_shift = 8, .blue_shift = 0, .start_unix_us =
	    (uint64_t)time(NULL) * 1000000 };
	struct sim s = { .text = text, .caret = 28, .busy = busy };
	struct record_writer *w;
	uint8_t digest[32];
	uint64_t i, ticks = seconds * 10, size;
	double open_ms, mean_ms, max_ms, wall = wall_now();
	size_t k;

	snprintf(h.session, sizeof(h.session), "bench-analytics");
	snprintf(h.recipient, sizeof(h.recipient), "synthetic");
	snprintf(h.policy, sizeof(h.policy), "default");
	draw_ui();
	unlink(out);
	check(record_writer_open(out, &h, &w), NULL);
	check(record_event(w, 0, "{\"event\":\"session-start\"}"), w);
	for (i = 0; i <= ticks; i++) {
		tick(w, &s, i);
		for (k = 0; k < nex; k++)
			if (!ex[k].done && (i + 1) * TICK_US > ex[k].t_us) {
				write_ppm(ex[k].path);
				ex[k].done = 1;
			}
	}
	check(record_event(w, ticks * TICK_US, "{\"event\":\"session-end\"}"),
	    w);
	size = record_writer_size(w);
	check(record_writer_close(w, digest), NULL);
	wall = wall_now() - wall;
	bench_seek(out, seconds, &open_ms, &mean_ms, &max_ms);
	printf("recording benchmark: %ux%u synthetic analytics session%s, "
	    "%" PRIu64 " s\n", W, H, busy ? " (--busy: the table scrolls "
	    "10 times a second throughout)" : "", seconds);
	printf("%-34s %12s %10s\n", "measure", "value", "goal");
	printf("%-34s %12.1f %10s\n", "MB per hour", size / 1e6 * 3600 /
	    seconds, "<= 50");
	printf("%-34s %12.3f %10s\n", "CPU % of a core while recording",
	    100 * cpu_s / seconds, "< 1");
	printf("%-34s %12.1f %10s\n", "open (scan + CRC) ms", open_ms, "");
	printf("%-34s %12.1f %10s\n", "seek to a minute, mean ms", mean_ms,
	    "");
	printf("%-34s %12.1f %10s\n", "seek to a minute, max ms", max_ms,
	    "< 200");
	printf("(file %s: %" PRIu64 " bytes; simulated in %.1f s wall)\n", out,
	    size, wall);
	return 0;
}

int
main(int argc, char **argv)
{
	struct expect ex[MAX_EXPECT];
	const char *out = "/tmp/record-bench.rec", *text = NULL;
	uint64_t seconds = 3600;
	size_t nex = 0;
	char *colon;
	int i, busy = 0;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--busy") == 0)
			busy = 1;
		else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
			seconds = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (strcmp(argv[i], "--text") == 0 && i + 1 < argc)
			text = argv[++i];
		else if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc &&
		    nex < MAX_EXPECT && (colon = strchr(argv[++i], ':')) !=
		    NULL) {
			ex[nex].t_us = (uint64_t)(strtod(argv[i], NULL) * 1e6);
			ex[nex].path = colon + 1;
			ex[nex++].done = 0;
		} else {
			fprintf(stderr, "usage: record-bench [--busy] [--seconds N] "
			    "[--out FILE] [--text TEXT] "
			    "[--expect SECONDS:FILE.ppm]...\n");
			return 2;
		}
	}
	if (seconds == 0 || seconds > 86400)
		return fprintf(stderr, "record-bench: 1..86400 seconds\n"), 2;
	return run(out, seconds, text, busy, ex, nex);
}
