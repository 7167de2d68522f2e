/*
 * gateway/worker.c — the per-session worker: one poll loop that joins
 * the RFB server (vnc.c), the X server (x11.c, input.c) and the input
 * policy (kiosk.c, ratelimit.c).
 *
 * Why one loop: no library threads may exist when the seccomp filter is
 * loaded, and a single thread makes the input pipeline easy to reason
 * about: every key passes the allow-list, then the rate limiter, then
 * XTest, in that order, with nothing in between.  Nothing polls: the
 * loop sleeps in poll(2) until a client speaks, X reports damage or a
 * cursor change, a signal arrives on the signalfd, or the next deadline
 * (frame pacing, coalesced motion, idle/max duration) is due.  Runs
 * unprivileged; everything a VNC client sends is untrusted.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <rfb/rfbproto.h>

#include "common/digest.h"
#include "gateway/cursor.h"
#include "gateway/input.h"
#include "gateway/kiosk.h"
#include "gateway/ratelimit.h"
#include "gateway/slog.h"
#include "gateway/vnc.h"
#include "gateway/watermark.h"
#include "gateway/worker.h"
#include "gateway/x11.h"
#include "record/record.h"
#include "sandbox/confine.h"
#include "sandbox/sandbox.h"

#define WORKER_FRAME_US		16667	/* at most 60 captures a second */
#define WORKER_MAX_PFD		(2 + VNC_MAX_POLLFDS)
#define WORKER_MAX_RECTS	32
#define WORKER_MAX_WAIT_MS	3600000	/* poll at least once an hour */
#define WORKER_WM_MAX_US	60000000 /* the watermark's %t: a minute */
#define WORKER_WM_RECTS		128	/* changed blocks redrawn alone */

struct worker {
	const struct worker_config *cfg;
	struct x11		*x;
	struct input		*in;
	struct vnc		*v;
	struct ratelimit	 rl;
	int			 sigfd;
	sigset_t		 oldmask;
	int			 masked;
	uint64_t		 start;
	uint64_t		 last_input;
	uint64_t		 last_capture;
	int			 damage;	/* damage event not yet captured */
	int			 stale;		/* damage left in X (no viewers) */
	int			 cursor;	/* the pointer to draw again */
	int			 cursor_image;	/* ... with a new image */
	struct cursor		*cur;		/* drawn into the frames */
	struct vnc_peer		*interactive;
	int			 client_mask;	/* buttons as the client sent them */
	int			 suppressed;	/* buttons whose press was dropped */
	int			 stop;
	struct record_writer	*rec;		/* the session recording */
	int			 rec_fd2;	/* a dup, for its size at close */
	int			 rec_failed;
	int			 disk_full;	/* the failure was ENOSPC */
	int			 px, py;	/* last pointer position */
	struct watermark	*wm;		/* NULL: watermark off */
	uint64_t		 wm_next;	/* realtime us of the next text */
};

static uint64_t
worker_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void
worker_setup_failed(const char *what, const char *err)
{
	slog_event("setup_failed", json_pack("{s:s, s:s}", "what", what,
	    "error", err));
}

static uint64_t
worker_realtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- the recording (record/record.h) ---------------------------------- */

/* Microseconds since the worker started: the recording's timeline. */
static uint64_t
worker_rec_t(const struct worker *w, uint64_t now)
{
	return now > w->start ? now - w->start : 0;
}

/* A session that cannot be recorded does not go on. */
static void
worker_rec_check(struct worker *w, int rc)
{
	int e;

	if (rc == RECORD_OK || w->rec_failed)
		return;
	w->rec_failed = 1;
	w->stop = 1;
	slog_event("record_failed", json_pack("{s:s, s:s}", "error",
	    record_strerror(rc), "detail", record_writer_error(w->rec)));
	e = record_writer_errno(w->rec);
	if (e == ENOSPC || e == EDQUOT) {	/* closed at the last good chunk */
		w->disk_full = 1;
		slog_event("disk_full", json_pack("{s:s, s:I}", "detail",
		    record_writer_error(w->rec), "size",
		    (json_int_t)record_writer_size(w->rec)));
	}
}

static void
worker_rec_key(struct worker *w, uint64_t now, uint32_t keysym, int down,
    enum record_verdict v)
{
	if (w->rec != NULL)
		worker_rec_check(w, record_key(w->rec, worker_rec_t(w, now),
		    keysym, down, v));
}

static void
worker_rec_ptr(struct worker *w, uint64_t now, int x, int y, int mask,
    enum record_verdict v)
{
	if (w->rec != NULL)
		worker_rec_check(w, record_pointer(w->rec, worker_rec_t(w, now),
		    (uint16_t)x, (uint16_t)y, (uint8_t)mask, v));
}

static void
worker_rec_keyframe(struct worker *w, uint64_t now)
{
	if (w->rec != NULL)
		worker_rec_check(w, record_keyframe(w->rec,
		    worker_rec_t(w, now), x11_framebuffer(w->x),
		    (size_t)x11_format(w->x)->width * 4));
}

static void
worker_rec_rects(struct worker *w, uint64_t now, const struct x11_rect *r,
    size_t n)
{
	struct record_rect rr[WORKER_MAX_RECTS];
	size_t i;

	if (w->rec == NULL)
		return;
	for (i = 0; i < n && i < WORKER_MAX_RECTS; i++)
		rr[i] = (struct record_rect){ (uint16_t)r[i].x,
		    (uint16_t)r[i].y, (uint16_t)r[i].w, (uint16_t)r[i].h };
	worker_rec_check(w, record_frame_rects(w->rec, worker_rec_t(w, now),
	    x11_framebuffer(w->x), (size_t)x11_format(w->x)->width * 4, rr,
	    i));
}

/* Every session-log event of the worker goes on the recording's
 * timeline too; a dropped cut text as a clipboard attempt (size only). */
static void
worker_rec_tap(void *arg, const char *event, json_t *line)
{
	struct worker *w = arg;
	uint64_t t = worker_rec_t(w, worker_clock());
	json_t *size;
	char *js;

	if (w->rec == NULL || w->rec_failed || strncmp(event, "record_", 7) == 0)
		return;
	if (strcmp(event, "clipboard_dropped") == 0 &&
	    json_is_integer(size = json_object_get(line, "size")))
		worker_rec_check(w, record_clipboard(w->rec, t, NULL,
		    (size_t)json_integer_value(size), RECORD_CLIP_IN,
		    RECORD_FILTERED));
	if ((js = json_dumps(line, JSON_COMPACT)) == NULL)
		return;
	if (strlen(js) <= RECORD_MAX_EVENT)
		worker_rec_check(w, record_event(w->rec, t, js));
	free(js);
}

/* Before the filter: the writer takes the supervisor's fd, writes the
 * header and a first keyframe. */
static int
worker_rec_open(struct worker *w)
{
	const struct worker_config *cfg = w->cfg;
	const struct x11_format *f = x11_format(w->x);
	struct record_header h;
	struct timespec ts;
	int rc;

	memset(&h, 0, sizeof(h));
	h.width = (uint16_t)f->width;
	h.height = (uint16_t)f->height;
	h.red_shift = (uint8_t)f->red_shift;
	h.green_shift = (uint8_t)f->green_shift;
	h.blue_shift = (uint8_t)f->blue_shift;
	clock_gettime(CLOCK_REALTIME, &ts);
	h.start_unix_us = (uint64_t)ts.tv_sec * 1000000u -
	    worker_rec_t(w, worker_clock()) + (uint64_t)ts.tv_nsec / 1000u;
	snprintf(h.session, sizeof(h.session), "%s", cfg->session_id);
	snprintf(h.recipient, sizeof(h.recipient), "%s",
	    cfg->recipient ? cfg->recipient : "");
	snprintf(h.policy, sizeof(h.policy), "%s",
	    cfg->policy ? cfg->policy : "");
	if (cfg->record_fd < 0 ||
	    (w->rec_fd2 = fcntl(cfg->record_fd, F_DUPFD_CLOEXEC, 3)) < 0) {
		worker_setup_failed("record", "no recording file");
		return -1;
	}
	if ((rc = record_writer_fdopen(cfg->record_fd, &h, &w->rec)) !=
	    RECORD_OK) {
		worker_setup_failed("record", record_strerror(rc));
		return -1;
	}
	slog_set_tap(worker_rec_tap, w);
	if (x11_capture_all(w->x) == X11_OK)
		worker_rec_keyframe(w, worker_clock());
	return w->rec_failed ? -1 : 0;
}

/* Index, END, fsync; the digest and size go to the session log, where
 * the custodian chains them into the audit log. */
static void
worker_rec_close(struct worker *w)
{
	uint8_t d[DIGEST_LEN];
	char hex[DIGEST_HEX_SIZE];
	struct stat st;
	int rc;

	slog_set_tap(NULL, NULL);
	if (w->rec == NULL)
		return;
	rc = record_writer_close(w->rec, d);
	w->rec = NULL;
	if (rc != RECORD_OK || w->rec_failed) {
		if (!w->rec_failed)
			slog_event("record_failed", json_pack("{s:s}", "error",
			    record_strerror(rc)));
		w->rec_failed = 1;
		return;
	}
	digest_to_hex(d, hex);
	slog_event("record_closed", json_pack("{s:s, s:I}", "sha256", hex,
	    "size", fstat(w->rec_fd2, &st) == 0 ? (json_int_t)st.st_size :
	    (json_int_t)-1));
}

/* ---- input pipeline: allow-list, then rate limit, then XTest --------- */

/* A press the rate limiter dropped; on the alarm, log and perhaps end
 * the client's connection. */
static void
worker_rate_drop(struct worker *w, struct vnc_peer *p, enum rl_verdict r)
{
	if (r != RL_DROP_ALARM)
		return;
	slog_event("rate_alarm", json_pack("{s:s, s:f, s:I, s:I, s:b}",
	    "client", p->addr, "seconds", w->rl.cfg.alarm_seconds,
	    "keys_dropped", (json_int_t)w->rl.total.keys_dropped,
	    "buttons_dropped", (json_int_t)w->rl.total.buttons_dropped,
	    "disconnect", w->rl.cfg.alarm_disconnect));
	if (w->rl.cfg.alarm_disconnect)
		vnc_disconnect(w->v, p, "rate alarm");
}

static void
worker_key(void *arg, struct vnc_peer *p, uint32_t keysym, int down)
{
	struct worker *w = arg;
	uint64_t now = worker_clock();
	enum kiosk_verdict kv;
	enum rl_verdict r;
	uint32_t mods;
	char ms[48];
	int st;

	w->last_input = now;
	kv = kiosk_key(&p->kiosk, keysym, down, &mods);
	if (kv == KIOSK_DROP || kv == KIOSK_SWALLOW)
		worker_rec_key(w, now, keysym, down, RECORD_FILTERED);
	if (kv == KIOSK_DROP) {
		slog_event("key_filtered", json_pack("{s:s, s:I, s:s, s:s}",
		    "client", p->addr, "keysym", (json_int_t)keysym, "mods",
		    kiosk_mods_str(mods, ms, sizeof(ms)), "reason",
		    p->kiosk.why != NULL ? p->kiosk.why : "filtered"));
		return;
	}
	if (kv == KIOSK_SWALLOW || !down) {
		/* Releases only ever release what we pressed. */
		if (kv != KIOSK_SWALLOW)
			worker_rec_key(w, now, keysym, 0, RECORD_DELIVERED);
		(void)input_key(w->in, keysym, 0);
		return;
	}
	if ((r = rl_key_press(&w->rl, now)) != RL_PASS) {
		worker_rec_key(w, now, keysym, 1, RECORD_RATELIMITED);
		worker_rate_drop(w, p, r);
		return;
	}
	st = input_key(w->in, keysym, 1);
	worker_rec_key(w, now, keysym, 1, st == INPUT_OK ? RECORD_DELIVERED :
	    RECORD_FILTERED);
	if (st != INPUT_OK)
		slog_event("key_filtered", json_pack("{s:s, s:I, s:s}",
		    "client", p->addr, "keysym", (json_int_t)keysym,
		    "reason", "no keycode"));
}

static void
worker_flush_motion(struct worker *w, uint64_t now, int force)
{
	int x, y;

	if (rl_motion_take(&w->rl, now, force, &x, &y)) {
		input_motion(w->in, x, y);
		w->cursor = 1;
		worker_rec_ptr(w, now, x, y, w->client_mask,
		    RECORD_DELIVERED);
	}
}

static void
worker_button(struct worker *w, struct vnc_peer *p, int button, int down,
    uint64_t now)
{
	int bit = 1 << (button - 1);
	enum rl_verdict r;

	if (!down) {
		worker_rec_ptr(w, now, w->px, w->py, w->client_mask & ~bit,
		    (w->suppressed & bit) ? RECORD_FILTERED : RECORD_DELIVERED);
		if (w->suppressed & bit)
			w->suppressed &= ~bit;
		else
			input_button(w->in, button, 0);
		kiosk_button(&p->kiosk, button, 0);
		return;
	}
	if (!kiosk_button_press_allowed(&p->kiosk, button)) {
		char ms[48];

		w->suppressed |= bit;
		worker_rec_ptr(w, now, w->px, w->py, w->client_mask | bit,
		    RECORD_FILTERED);
		slog_event("button_filtered", json_pack("{s:s, s:i, s:s}",
		    "client", p->addr, "button", button, "mods",
		    kiosk_mods_str(kiosk_mods(&p->kiosk), ms, sizeof(ms))));
		return;
	}
	if ((r = rl_button_press(&w->rl, now)) != RL_PASS) {
		w->suppressed |= bit;
		worker_rec_ptr(w, now, w->px, w->py, w->client_mask | bit,
		    RECORD_RATELIMITED);
		worker_rate_drop(w, p, r);
		return;
	}
	worker_rec_ptr(w, now, w->px, w->py, w->client_mask | bit,
	    RECORD_DELIVERED);
	input_button(w->in, button, 1);
	kiosk_button(&p->kiosk, button, 1);
}

/* Motion is coalesced; before a button changes, the latest position is
 * sent so the click lands where the user clicked. */
static void
worker_pointer(void *arg, struct vnc_peer *p, int mask, int x, int y)
{
	struct worker *w = arg;
	uint64_t now = worker_clock();
	int changed, b;

	w->last_input = now;
	w->px = x;
	w->py = y;
	if (rl_motion(&w->rl, x, y, now))
		worker_flush_motion(w, now, 0);
	changed = (mask ^ w->client_mask) & 0xff;
	if (changed == 0)
		return;
	worker_flush_motion(w, now, 1);
	for (b = 0; b < 8; b++)
		if (changed & (1 << b)) {
			worker_button(w, p, b + 1, (mask >> b) & 1, now);
			w->client_mask ^= 1 << b;
		}
	w->client_mask = mask & 0xff;
}

/* ---- clients come and go ----------------------------------------------- */

/* The framebuffer is left stale while nobody watches; the first viewer
 * gets a full capture (the pointer drawn in it). */
static void
worker_connected(void *arg, struct vnc_peer *p)
{
	struct worker *w = arg;
	const struct x11_format *f = x11_format(w->x);

	if (p->role == VNC_ROLE_INTERACTIVE) {
		w->interactive = p;
		w->client_mask = 0;
		w->suppressed = 0;
		w->last_input = worker_clock();
	}
	if (w->stale || vnc_viewers(w->v) == 1) {
		if (x11_capture_all(w->x) == X11_OK) {
			vnc_mark(w->v, 0, 0, (int)f->width, (int)f->height);
			worker_rec_keyframe(w, worker_clock());
		}
		w->stale = 0;
		w->damage = 0;
	}
}

static void
worker_gone(void *arg, struct vnc_peer *p)
{
	struct worker *w = arg;

	if (p != w->interactive)
		return;
	input_release_all(w->in);
	rl_motion_reset(&w->rl);
	w->interactive = NULL;
	w->client_mask = 0;
	w->suppressed = 0;
}

/* ---- frames and cursor ---------------------------------------------------- */

static void
worker_capture(struct worker *w, uint64_t now)
{
	struct x11_rect r[WORKER_MAX_RECTS];
	size_t n = 0, i;

	w->damage = 0;
	if (vnc_viewers(w->v) == 0) {
		w->stale = 1;	/* no events until we take the damage */
		return;
	}
	if (x11_capture(w->x, r, WORKER_MAX_RECTS, &n) != X11_OK)
		return;
	for (i = 0; i < n; i++)
		vnc_mark(w->v, r[i].x, r[i].y, r[i].w, r[i].h);
	worker_rec_rects(w, now, r, n);
	w->last_capture = now;
	vnc_update(w->v);
}

/* The pointer's place (XTest motion is flushed by the round trip) and,
 * after an XFixes cursor event, its image. */
static void
worker_cursor_state(struct worker *w)
{
	struct x11_cursor c;
	int px, py;

	if (w->cursor_image && x11_cursor(w->x, &c) == X11_OK) {
		cursor_set_image(w->cur, c.width, c.height, c.xhot, c.yhot,
		    c.argb);
		x11_cursor_free(&c);
	}
	if (x11_pointer(w->x, &px, &py) == X11_OK)
		cursor_move(w->cur, px, py);
	w->cursor = w->cursor_image = 0;
}

/* The pointer moved or its image changed: the places it was drawn and
 * the place it is now are grabbed from X again (the overlay draws it
 * there), sent and recorded like any other change of the screen. */
static void
worker_cursor(struct worker *w, uint64_t now)
{
	struct cursor_rect cr[CURSOR_MAX_DRAWN + 1];
	struct x11_rect r[CURSOR_MAX_DRAWN + 1];
	size_t n, i;

	worker_cursor_state(w);
	if (vnc_viewers(w->v) == 0) {
		w->stale = 1;	/* drawn at the first viewer's full grab */
		return;
	}
	n = cursor_take_drawn(w->cur, cr, CURSOR_MAX_DRAWN);
	n += (size_t)cursor_bounds(w->cur, &cr[n]);
	for (i = 0; i < n; i++)
		r[i] = (struct x11_rect){ cr[i].x, cr[i].y, cr[i].w, cr[i].h };
	if (n == 0 || x11_capture_rects(w->x, r, n) != X11_OK)
		return;
	for (i = 0; i < n; i++)
		vnc_mark(w->v, r[i].x, r[i].y, r[i].w, r[i].h);
	worker_rec_rects(w, now, r, n);
	w->last_capture = now;
	vnc_update(w->v);
}

/* ---- the watermark (gateway/watermark.h) ------------------------------------ */

/* Every rectangle copied from X: the pointer, then the watermark over
 * it (so the pointer's pixels are watermarked too). */
static void
worker_overlay(void *arg, char *fb, size_t stride, int x, int y, int w,
    int h)
{
	struct worker *wk = arg;

	cursor_draw(wk->cur, fb, stride, x, y, w, h);
	if (wk->wm != NULL)
		watermark_blend(wk->wm, fb, stride, x, y, w, h);
}

/* Only the blocks where the mask changed (a new minute: its digits in
 * each repeat) are grabbed again, blended and sent; -1: do it all. */
static int
worker_wm_redraw(struct worker *w, uint64_t now)
{
	struct wm_rect wr[WORKER_WM_RECTS];
	struct x11_rect r[WORKER_WM_RECTS];
	int n, i, k;

	if ((n = watermark_changed(w->wm, wr, WORKER_WM_RECTS)) < 0)
		return -1;
	for (i = 0; i < n; i++)
		r[i] = (struct x11_rect){ wr[i].x, wr[i].y, wr[i].w, wr[i].h };
	if (x11_capture_rects(w->x, r, (size_t)n) != X11_OK)
		return -1;
	for (i = 0; i < n; i++)
		vnc_mark(w->v, r[i].x, r[i].y, r[i].w, r[i].h);
	for (i = 0; i < n; i += k) {	/* the recorder takes 32 at a time */
		k = n - i < WORKER_MAX_RECTS ? n - i : WORKER_MAX_RECTS;
		worker_rec_rects(w, now, r + i, (size_t)k);
	}
	vnc_update(w->v);
	return 0;
}

/* New text (the minute turned): the changed blocks, or every pixel, are
 * grabbed again and blended with the new mask; viewers and the
 * recording get them. */
static void
worker_wm_tick(struct worker *w, uint64_t now)
{
	const struct x11_format *f = x11_format(w->x);
	struct x11_rect all = { 0, 0, (int)f->width, (int)f->height };
	uint64_t rt = worker_realtime();
	int changed, st;

	/* (a wall clock set back by more than a minute redraws at once) */
	if (w->wm == NULL || w->wm_next == 0 || (rt < w->wm_next &&
	    w->wm_next - rt <= WORKER_WM_MAX_US))
		return;
	st = watermark_update(w->wm, (time_t)(rt / 1000000u), &changed);
	w->wm_next = (uint64_t)watermark_next_change(w->wm,
	    (time_t)(rt / 1000000u)) * 1000000u;
	if (st != WM_OK) {
		slog_event("watermark_failed", json_pack("{s:s}", "error",
		    watermark_strerror(st)));
		w->stop = 1;	/* fail closed */
		return;
	}
	if (!changed)
		return;
	if (vnc_viewers(w->v) == 0) {
		w->stale = 1;
		return;
	}
	if (worker_wm_redraw(w, now) == 0)
		return;
	if (x11_capture_all(w->x) != X11_OK)
		return;
	vnc_mark(w->v, 0, 0, all.w, all.h);
	worker_rec_rects(w, now, &all, 1);
	vnc_update(w->v);
}

/* The monotonic time the text is due to change, 0 for never. */
static uint64_t
worker_wm_deadline(const struct worker *w, uint64_t now)
{
	uint64_t rt;

	if (w->wm == NULL || w->wm_next == 0)
		return 0;
	rt = worker_realtime();
	if (rt >= w->wm_next)
		return now;
	return now + (w->wm_next - rt < WORKER_WM_MAX_US ? w->wm_next - rt :
	    WORKER_WM_MAX_US);
}

/* Before the filter: glyphs from our X server, the first mask, and the
 * overlay on every later grab (the screen is grabbed again with it). */
static int
worker_open_watermark(struct worker *w)
{
	const struct worker_config *cfg = w->cfg;
	const struct x11_format *f = x11_format(w->x);
	struct watermark_config wc = {
		.text = cfg->watermark_text, .recipient = cfg->recipient,
		.session = cfg->session_id, .opacity = cfg->watermark_opacity,
	};
	struct wm_pixfmt pf = { f->red_shift, f->green_shift, f->blue_shift };
	time_t t = time(NULL);
	int st, changed;

	if (!cfg->watermark)
		return 0;
	if (cfg->watermark_layout != NULL && watermark_layout_parse(
	    cfg->watermark_layout, &wc.layout) != WM_OK)
		st = WM_EINPUT;
	else if ((st = watermark_alloc(&w->wm, &wc, f->width, f->height,
	    &pf)) == WM_OK &&
	    (st = watermark_font_x11(w->wm, x11_display(w->x))) == WM_OK)
		st = watermark_update(w->wm, t, &changed);
	if (st != WM_OK) {
		worker_setup_failed("watermark", watermark_strerror(st));
		return -1;
	}
	w->wm_next = (uint64_t)watermark_next_change(w->wm, t) * 1000000u;
	return 0;
}

/* Before the filter: the pointer's image and place, and the overlay
 * that draws it (and the watermark) into every grab from now on. */
static int
worker_open_cursor(struct worker *w)
{
	const struct x11_format *f = x11_format(w->x);
	int st;

	if ((st = cursor_alloc(&w->cur, f->width, f->height, f->red_shift,
	    f->green_shift, f->blue_shift)) != CURSOR_OK) {
		worker_setup_failed("cursor", cursor_strerror(st));
		return -1;
	}
	w->cursor_image = 1;
	worker_cursor_state(w);
	if ((st = x11_set_overlay(w->x, worker_overlay, w)) != X11_OK ||
	    (st = x11_capture_all(w->x)) != X11_OK) {
		worker_setup_failed("x11", x11_strerror(st));
		return -1;
	}
	return 0;
}

/* ---- timers and the loop ---------------------------------------------------- */

static uint64_t
worker_since(uint64_t now, uint64_t t)
{
	return now > t ? now - t : 0;
}

static uint64_t
worker_sec_us(unsigned s)
{
	return (uint64_t)s * 1000000u;
}

static void
worker_report(struct worker *w, uint64_t now)
{
	struct rl_counts c;

	if (!rl_report_due(&w->rl, now, &c))
		return;
	slog_event("rate_limited", json_pack("{s:I, s:I, s:I, s:I, s:I}",
	    "keys_dropped", (json_int_t)c.keys_dropped,
	    "buttons_dropped", (json_int_t)c.buttons_dropped,
	    "keys_dropped_total", (json_int_t)w->rl.total.keys_dropped,
	    "buttons_dropped_total", (json_int_t)w->rl.total.buttons_dropped,
	    "motion_coalesced_total", (json_int_t)(w->rl.total.motion_in -
	    w->rl.total.motion_out)));
}

static void
worker_timers(struct worker *w, uint64_t now)
{
	const struct worker_config *cfg = w->cfg;

	if (cfg->max_duration && worker_since(now, w->start) >=
	    worker_sec_us(cfg->max_duration)) {
		slog_event("max_duration", json_pack("{s:i}", "seconds",
		    (int)cfg->max_duration));
		w->stop = 1;
		return;
	}
	if (cfg->idle_timeout && worker_since(now, w->last_input) >=
	    worker_sec_us(cfg->idle_timeout)) {
		slog_event("idle_timeout", json_pack("{s:i}", "seconds",
		    (int)cfg->idle_timeout));
		w->stop = 1;
		return;
	}
	worker_flush_motion(w, now, 0);
	worker_report(w, now);
	worker_wm_tick(w, now);
	vnc_tick(w->v, now);
	if ((w->damage || w->cursor) &&
	    worker_since(now, w->last_capture) >= WORKER_FRAME_US) {
		if (w->damage)
			worker_capture(w, now);
		if (w->cursor)
			worker_cursor(w, now);
	}
}

static void
worker_min(uint64_t *t, uint64_t d)
{
	if (d != 0 && (*t == 0 || d < *t))
		*t = d;
}

/* Milliseconds until the next deadline (rounded up), -1 for none. */
static int
worker_timeout(struct worker *w, uint64_t now)
{
	const struct worker_config *cfg = w->cfg;
	uint64_t t = 0, ms;

	if (w->damage || w->cursor)
		worker_min(&t, w->last_capture + WORKER_FRAME_US);
	worker_min(&t, rl_next_deadline(&w->rl));
	worker_min(&t, vnc_next_deadline(w->v));
	worker_min(&t, worker_wm_deadline(w, now));
	if (cfg->idle_timeout)
		worker_min(&t, w->last_input + worker_sec_us(cfg->idle_timeout));
	if (cfg->max_duration)
		worker_min(&t, w->start + worker_sec_us(cfg->max_duration));
	if (t == 0)
		return WORKER_MAX_WAIT_MS;
	if (t <= now)
		return 0;
	ms = (t - now + 999) / 1000;
	return ms > WORKER_MAX_WAIT_MS ? WORKER_MAX_WAIT_MS : (int)ms;
}

static void
worker_signal(struct worker *w)
{
	struct signalfd_siginfo si;

	while (read(w->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		w->stop = 1;
}

static int
worker_loop(struct worker *w)
{
	struct pollfd pfd[WORKER_MAX_PFD];
	uint64_t now;
	size_t n;
	int timeout, bits;

	while (!w->stop) {
		now = worker_clock();
		worker_timers(w, now);
		if (w->stop)
			break;
		x11_flush(w->x);	/* XTest events go out before we sleep */
		timeout = x11_pending(w->x) ? 0 : worker_timeout(w, now);
		pfd[0] = (struct pollfd){ w->sigfd, POLLIN, 0 };
		pfd[1] = (struct pollfd){ x11_fd(w->x), POLLIN, 0 };
		n = 2 + vnc_pollfds(w->v, pfd + 2, WORKER_MAX_PFD - 2);
		if (poll(pfd, n, timeout) < 0 && errno != EINTR)
			return -1;
		now = worker_clock();
		if (pfd[0].revents & POLLIN)
			worker_signal(w);
		if (pfd[1].revents & (POLLERR | POLLHUP | POLLNVAL))
			return -1;
		bits = x11_dispatch(w->x);
		w->damage |= (bits & X11_EV_DAMAGE) != 0;
		if (bits & X11_EV_CURSOR)
			w->cursor = w->cursor_image = 1;
		vnc_handle(w->v, pfd + 2, n - 2, now);
		/* The tls process is gone or broke the protocol: fail
		   closed (unless we are stopping anyway: it got SIGTERM
		   right after us). */
		if (vnc_fatal(w->v) != NULL && !w->stop) {
			slog_event("protocol_error", json_pack("{s:s}",
			    "what", vnc_fatal(w->v)));
			return -1;
		}
	}
	return 0;
}

/* ---- set-up and teardown ------------------------------------------------------ */

static int
worker_signals(struct worker *w)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, &w->oldmask) != 0)
		return -1;
	w->masked = 1;
	w->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return w->sigfd < 0 ? -1 : 0;
}

static int
worker_open_vnc(struct worker *w)
{
	const struct worker_config *cfg = w->cfg;
	const struct x11_format *f = x11_format(w->x);
	struct vnc_params prm = {
		.listen_fd = cfg->listen_fd,
		.password = cfg->password,
		.ws_token = cfg->ws_token,
		.ws_origins = cfg->ws_origins,
		.allow_observer = cfg->allow_observer,
		.tls_ipc = cfg->tls_ipc, .tls_users = cfg->tls_users,
		.allow_plain = cfg->allow_plain,
		.accept_from = cfg->accept_from,
		.width = f->width, .height = f->height,
		.red_shift = f->red_shift, .green_shift = f->green_shift,
		.blue_shift = f->blue_shift,
		.framebuffer = x11_framebuffer(w->x),
		.clock = worker_clock,
	};
	struct vnc_ops ops = {
		.arg = w, .connected = worker_connected, .gone = worker_gone,
		.key = worker_key, .pointer = worker_pointer,
	};

	return vnc_open(&w->v, &prm, &ops);
}

/*
 * LibVNCServer's VNC-auth DES is libgcrypt, which initialises itself at
 * its first use: it probes /proc/sys/crypto/fips_enabled and
 * /etc/gcrypt/hwf.deny and syslogs a warning.  Under the filter that
 * would be the first client's login killing the worker: do it now.
 */
static void
worker_prewarm(void)
{
	unsigned char block[16] = { 0 };
	char key[] = "cdsgate";

	rfbEncryptBytes(block, key);
	explicit_bzero(block, sizeof(block));
}

/* Everything is open that will ever be: load the filter (fail closed). */
static int
worker_confine(struct worker *w)
{
	struct confine c;
	char err[256];

	worker_prewarm();
	confine_init(&c, "worker");
	c.profile = w->cfg->profile;
	if (confine_apply(&c, err, sizeof(err)) != CONFINE_OK) {
		worker_setup_failed("sandbox", err);
		return -1;
	}
	if (w->cfg->test_violate != NULL)
		sandbox_violate(w->cfg->test_violate);	/* test hook: dies */
	return 0;
}

static int
worker_setup(struct worker *w, const struct worker_config *cfg)
{
	const struct x11_format *f;
	int st;

	w->cfg = cfg;
	w->sigfd = -1;
	w->start = w->last_input = worker_clock();
	rl_init(&w->rl, &cfg->limits, w->start);
	if (worker_signals(w) != 0) {
		worker_setup_failed("signals", strerror(errno));
		return -1;
	}
	if ((st = x11_open(&w->x, cfg->display, cfg->xauthority)) != X11_OK) {
		worker_setup_failed("x11", x11_strerror(st));
		return -1;
	}
	f = x11_format(w->x);
	if ((cfg->width && cfg->width != f->width) ||
	    (cfg->height && cfg->height != f->height)) {
		worker_setup_failed("x11", "screen size differs from config");
		return -1;
	}
	if (worker_open_watermark(w) != 0 || worker_open_cursor(w) != 0)
		return -1;
	if ((st = input_open(&w->in, x11_display(w->x))) != INPUT_OK) {
		worker_setup_failed("input", input_strerror(st));
		return -1;
	}
	if ((st = worker_open_vnc(w)) != VNC_OK) {
		worker_setup_failed("vnc", vnc_strerror(st));
		return -1;
	}
	if (worker_rec_open(w) != 0)
		return -1;
	return worker_confine(w);
}

static void
worker_teardown(struct worker *w)
{
	vnc_close(w->v);	/* logs disconnects, releases held input */
	worker_rec_close(w);
	if (w->rec_fd2 >= 0)
		close(w->rec_fd2);
	input_close(w->in);
	x11_close(w->x);
	watermark_free(w->wm);
	cursor_free(w->cur);
	if (w->sigfd >= 0)
		close(w->sigfd);
	if (w->masked)
		sigprocmask(SIG_SETMASK, &w->oldmask, NULL);
}

int
worker_main(const struct worker_config *cfg)
{
	struct worker w;
	int st = 1;

	memset(&w, 0, sizeof(w));
	w.sigfd = w.rec_fd2 = -1;
	slog_set_proc("worker");
	if (cfg == NULL || worker_setup(&w, cfg) != 0)
		goto out;
	st = worker_loop(&w) == 0 && !w.rec_failed ? 0 : 1;
	if (w.disk_full)
		st = WORKER_EXIT_DISK_FULL;
	else if (st != 0 && w.v != NULL && vnc_fatal(w.v) != NULL && !w.stop)
		st = WORKER_EXIT_TLS_GONE;
out:
	worker_teardown(&w);
	return st;
}
