/*
 * gateway/ratelimit.c — token buckets, motion coalescing and the flood
 * alarm for a session's input.
 *
 * Why: "paste as keystrokes" and scripted pointer input bypass every
 * clipboard block; only a rate limit bounds what can be typed into the
 * session (10 keys/s is ~36 kB/h).  Pure arithmetic on the caller's
 * monotonic clock: no I/O, no logging, no allocation.  Trust: none
 * needed; the values it sees come from an untrusted client but are only
 * counted.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "gateway/ratelimit.h"

#define US_PER_S	1000000.0

static double
rl_min(double a, double b)
{
	return a < b ? a : b;
}

static double
rl_max(double a, double b)
{
	return a > b ? a : b;
}

void
tbucket_init(struct tbucket *b, double rate, double burst, uint64_t now)
{
	b->rate = rate;
	b->burst = burst;
	b->tokens = burst;	/* a fresh session may type a short burst */
	b->last = now;
}

/* Refill by elapsed time; a clock that goes backwards adds nothing. */
static void
tbucket_refill(struct tbucket *b, uint64_t now)
{
	double dt;

	if (now <= b->last)
		return;
	dt = (double)(now - b->last) / US_PER_S;
	b->tokens = rl_min(b->burst, b->tokens + dt * b->rate);
	b->last = now;
}

int
tbucket_take(struct tbucket *b, uint64_t now)
{
	tbucket_refill(b, now);
	if (b->tokens < 1.0)
		return 0;
	b->tokens -= 1.0;
	return 1;
}

double
tbucket_level(struct tbucket *b, uint64_t now)
{
	tbucket_refill(b, now);
	return b->tokens;
}

/* Bad or missing values fall back to the documented defaults, never to
 * "unlimited": a broken config must not open the gate. */
static double
rl_pick(double v, double def)
{
	return (isfinite(v) && v > 0.0) ? v : def;
}

void
rl_config_sanitise(struct ratelimit_config *c)
{
	c->key_rate = rl_pick(c->key_rate, RL_DEFAULT_KEY_RATE);
	c->key_burst = rl_max(1.0, rl_pick(c->key_burst, RL_DEFAULT_KEY_BURST));
	c->button_rate = rl_pick(c->button_rate, RL_DEFAULT_BUTTON_RATE);
	c->button_burst = rl_max(1.0,
	    rl_pick(c->button_burst, RL_DEFAULT_BUTTON_BURST));
	c->motion_rate = rl_min(1000.0,
	    rl_pick(c->motion_rate, RL_DEFAULT_MOTION_RATE));
	c->alarm_seconds = rl_pick(c->alarm_seconds, RL_DEFAULT_ALARM_SEC);
	c->alarm_disconnect = c->alarm_disconnect != 0;
}

void
rl_init(struct ratelimit *rl, const struct ratelimit_config *cfg,
    uint64_t now)
{
	memset(rl, 0, sizeof(*rl));
	rl->cfg = *cfg;
	rl_config_sanitise(&rl->cfg);
	tbucket_init(&rl->keys, rl->cfg.key_rate, rl->cfg.key_burst, now);
	tbucket_init(&rl->buttons, rl->cfg.button_rate, rl->cfg.button_burst,
	    now);
	rl->motion_interval = (uint64_t)(US_PER_S / rl->cfg.motion_rate);
	rl->report_last = now;
}

/* One drop: extend or start the flooding episode; report the alarm once
 * when the episode has lasted alarm_seconds. */
static enum rl_verdict
rl_dropped(struct ratelimit *rl, uint64_t now)
{
	if (!rl->flooding || now - rl->last_drop > RL_FLOOD_GAP_US) {
		rl->flooding = 1;
		rl->alarmed = 0;
		rl->flood_start = now;
	}
	rl->last_drop = now;
	if (!rl->alarmed && (double)(now - rl->flood_start) >=
	    rl->cfg.alarm_seconds * US_PER_S) {
		rl->alarmed = 1;
		return RL_DROP_ALARM;
	}
	return RL_DROP;
}

enum rl_verdict
rl_key_press(struct ratelimit *rl, uint64_t now)
{
	if (tbucket_take(&rl->keys, now)) {
		rl->total.keys_passed++;
		return RL_PASS;
	}
	rl->total.keys_dropped++;
	return rl_dropped(rl, now);
}

enum rl_verdict
rl_button_press(struct ratelimit *rl, uint64_t now)
{
	if (tbucket_take(&rl->buttons, now)) {
		rl->total.buttons_passed++;
		return RL_PASS;
	}
	rl->total.buttons_dropped++;
	return rl_dropped(rl, now);
}

int
rl_motion(struct ratelimit *rl, int x, int y, uint64_t now)
{
	rl->total.motion_in++;
	rl->motion_pending = 1;
	rl->mx = x;
	rl->my = y;
	return now - rl->motion_last >= rl->motion_interval ||
	    now < rl->motion_last;
}

int
rl_motion_take(struct ratelimit *rl, uint64_t now, int force, int *x,
    int *y)
{
	if (!rl->motion_pending)
		return 0;
	if (!force && now >= rl->motion_last &&
	    now - rl->motion_last < rl->motion_interval)
		return 0;
	rl->motion_pending = 0;
	rl->motion_last = now;
	rl->total.motion_out++;
	*x = rl->mx;
	*y = rl->my;
	return 1;
}

void
rl_motion_reset(struct ratelimit *rl)
{
	rl->motion_pending = 0;
}

static int
rl_drops_since_report(const struct ratelimit *rl)
{
	return rl->total.keys_dropped != rl->reported.keys_dropped ||
	    rl->total.buttons_dropped != rl->reported.buttons_dropped;
}

uint64_t
rl_next_deadline(const struct ratelimit *rl)
{
	uint64_t t = 0, r;

	if (rl->motion_pending)
		t = rl->motion_last + rl->motion_interval;
	if (rl_drops_since_report(rl)) {
		r = rl->report_last + RL_REPORT_US;
		if (t == 0 || r < t)
			t = r;
	}
	return t;
}

int
rl_report_due(struct ratelimit *rl, uint64_t now, struct rl_counts *since)
{
	if (!rl_drops_since_report(rl) ||
	    (now >= rl->report_last && now - rl->report_last < RL_REPORT_US))
		return 0;
	since->keys_passed = rl->total.keys_passed - rl->reported.keys_passed;
	since->keys_dropped = rl->total.keys_dropped -
	    rl->reported.keys_dropped;
	since->buttons_passed = rl->total.buttons_passed -
	    rl->reported.buttons_passed;
	since->buttons_dropped = rl->total.buttons_dropped -
	    rl->reported.buttons_dropped;
	since->motion_in = rl->total.motion_in - rl->reported.motion_in;
	since->motion_out = rl->total.motion_out - rl->reported.motion_out;
	rl->reported = rl->total;
	rl->report_last = now;
	return 1;
}
