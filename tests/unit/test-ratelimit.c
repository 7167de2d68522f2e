/*
 * tests/unit/test-ratelimit.c — token-bucket arithmetic on an injected
 * clock, motion coalescing, drop counters and the flood alarm.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "gateway/ratelimit.h"
#include "tests/tap.h"

#define S(x)	((uint64_t)((x) * 1000000.0))

static struct ratelimit_config
config(void)
{
	struct ratelimit_config c;

	memset(&c, 0, sizeof(c));
	c.key_rate = 10;
	c.key_burst = 20;
	c.button_rate = 5;
	c.button_burst = 2;
	c.motion_rate = 50;
	c.alarm_seconds = 5;
	c.alarm_disconnect = 1;
	return c;
}

static void
test_bucket(void)
{
	struct tbucket b;
	int i, n = 0;

	tbucket_init(&b, 10, 20, S(100));
	for (i = 0; i < 25; i++)
		n += tbucket_take(&b, S(100));
	tap_ok(n == 20, "burst of 20 at one instant (took %d)", n);
	tap_ok(!tbucket_take(&b, S(100.05)), "0.05 s later: half a token, none");
	tap_ok(tbucket_take(&b, S(100.1)), "0.1 s later: one token");
	tap_close(tbucket_level(&b, S(101.1)), 10.0, 1e-9,
	    "one second refills rate tokens");
	tap_close(tbucket_level(&b, S(1000)), 20.0, 1e-12,
	    "the level never passes the burst");
	tap_close(tbucket_level(&b, S(999)), 20.0, 1e-12,
	    "a clock going backwards adds nothing");
}

/* 1,000 key presses at 1,000/s: burst + rate * elapsed get through. */
static void
test_key_flood(void)
{
	struct ratelimit_config c = config();
	struct ratelimit rl;
	int i, pass = 0;

	rl_init(&rl, &c, 0);
	for (i = 0; i < 1000; i++)
		pass += rl_key_press(&rl, (uint64_t)i * 1000) == RL_PASS;
	/* 0.999 s elapsed: 20 + floor(9.99) = 29 */
	tap_ok(pass == 29, "1000 keys in 1 s: 29 pass (got %d)", pass);
	tap_ok(rl.total.keys_dropped == 971 && rl.total.keys_passed == 29,
	    "counters: %llu passed, %llu dropped",
	    (unsigned long long)rl.total.keys_passed,
	    (unsigned long long)rl.total.keys_dropped);
}

/* Typing at 8 keys/s for a minute never drops a key. */
static void
test_human_typing(void)
{
	struct ratelimit_config c = config();
	struct ratelimit rl;
	int i, drops = 0;

	rl_init(&rl, &c, 0);
	for (i = 0; i < 480; i++)
		drops += rl_key_press(&rl, (uint64_t)i * 125000) != RL_PASS;
	tap_ok(drops == 0, "8 keys/s for 60 s: no drops (%d)", drops);
}

static void
test_buttons(void)
{
	struct ratelimit_config c = config();
	struct ratelimit rl;

	rl_init(&rl, &c, 0);
	tap_ok(rl_button_press(&rl, 0) == RL_PASS &&
	    rl_button_press(&rl, 0) == RL_PASS, "button burst of 2");
	tap_ok(rl_button_press(&rl, 0) == RL_DROP, "third click dropped");
	tap_ok(rl_button_press(&rl, S(0.2)) == RL_PASS,
	    "0.2 s later at 5/s: one more");
	tap_ok(rl.total.buttons_dropped == 1, "button drop counted");
}

static void
test_motion(void)
{
	struct ratelimit_config c = config();
	struct ratelimit rl;
	int x = -1, y = -1, sent = 0, i;

	rl_init(&rl, &c, S(10));
	tap_ok(rl_motion(&rl, 1, 1, S(10)) == 1, "first motion is due");
	tap_ok(rl_motion_take(&rl, S(10), 0, &x, &y) && x == 1 && y == 1,
	    "and is taken");
	tap_ok(rl_motion(&rl, 2, 2, S(10.001)) == 0, "1 ms later: not due");
	tap_ok(rl_motion(&rl, 3, 4, S(10.002)) == 0, "coalesced");
	tap_ok(rl_next_deadline(&rl) == S(10) + 20000,
	    "deadline = last send + 1/motion_rate");
	tap_ok(!rl_motion_take(&rl, S(10.010), 0, &x, &y),
	    "not taken before the deadline");
	tap_ok(rl_motion_take(&rl, S(10.020), 0, &x, &y) && x == 3 && y == 4,
	    "at the deadline the latest position wins");
	tap_ok(!rl_motion_take(&rl, S(10.050), 0, &x, &y),
	    "nothing pending afterwards");
	(void)rl_motion(&rl, 7, 8, S(10.021));
	tap_ok(rl_motion_take(&rl, S(10.021), 1, &x, &y) && x == 7,
	    "forced take (before a click) ignores the pacing");

	/* 1,000 motion events in 1 s at 50/s: ~50 sent, the last one kept. */
	rl_init(&rl, &c, 0);
	for (i = 0; i < 1000; i++) {
		uint64_t t = (uint64_t)i * 1000;

		if (rl_motion(&rl, i, i, t) && rl_motion_take(&rl, t, 0, &x, &y))
			sent++;
	}
	if (rl_motion_take(&rl, S(2), 0, &x, &y))
		sent++;
	tap_ok(sent >= 49 && sent <= 52, "1000 moves in 1 s: %d sent", sent);
	tap_ok(x == 999 && y == 999, "the final position is never lost");
	tap_ok(rl.total.motion_in == 1000, "motion events counted");
}

static void
test_alarm(void)
{
	struct ratelimit_config c = config();
	struct ratelimit rl;
	enum rl_verdict v;
	uint64_t t, first_alarm = 0;
	int alarms = 0;

	rl_init(&rl, &c, 0);
	/* 100 keys/s for 8 s: the bucket empties at once, drops go on. */
	for (t = 0; t < S(8); t += 10000) {
		v = rl_key_press(&rl, t);
		if (v == RL_DROP_ALARM) {
			alarms++;
			if (first_alarm == 0)
				first_alarm = t;
		}
	}
	tap_ok(alarms == 1, "one alarm per flood (%d)", alarms);
	tap_ok(first_alarm >= S(5) && first_alarm < S(5.3),
	    "raised after alarm_seconds of flooding (%.2f s)",
	    (double)first_alarm / 1e6);

	/* A pause longer than RL_FLOOD_GAP_US ends the episode. */
	rl_init(&rl, &c, 0);
	alarms = 0;
	for (t = 0; t < S(20); t += 10000) {
		if ((t / S(1)) % 4 == 3)
			continue;	/* quiet every fourth second */
		alarms += rl_key_press(&rl, t) == RL_DROP_ALARM;
	}
	tap_ok(alarms == 0, "bursts of 3 s with 1 s pauses: no alarm");
}

static void
test_report(void)
{
	struct ratelimit_config c = config();
	struct ratelimit rl;
	struct rl_counts since;
	int i;

	rl_init(&rl, &c, 0);
	tap_ok(!rl_report_due(&rl, S(5), &since), "no drops, no report");
	for (i = 0; i < 30; i++)
		(void)rl_key_press(&rl, S(0.5));
	tap_ok(rl_next_deadline(&rl) == S(1), "report scheduled 1 s after the last");
	tap_ok(!rl_report_due(&rl, S(0.6), &since), "not before a second");
	tap_ok(rl_report_due(&rl, S(1), &since) && since.keys_dropped == 10,
	    "report: 10 keys dropped");
	tap_ok(!rl_report_due(&rl, S(3), &since), "nothing new, no report");
}

static void
test_sanitise(void)
{
	struct ratelimit_config c;

	memset(&c, 0, sizeof(c));
	c.key_rate = NAN;
	c.key_burst = -3;
	c.motion_rate = 1e9;
	rl_config_sanitise(&c);
	tap_ok(c.key_rate == RL_DEFAULT_KEY_RATE &&
	    c.key_burst == RL_DEFAULT_KEY_BURST,
	    "NaN / negative fall back to the defaults, never unlimited");
	tap_ok(c.button_rate == RL_DEFAULT_BUTTON_RATE &&
	    c.alarm_seconds == RL_DEFAULT_ALARM_SEC, "zero means default");
	tap_ok(c.motion_rate == 1000.0, "motion rate capped");
}

int
main(void)
{
	test_bucket();
	test_key_flood();
	test_human_typing();
	test_buttons();
	test_motion();
	test_alarm();
	test_report();
	test_sanitise();
	return tap_done();
}
