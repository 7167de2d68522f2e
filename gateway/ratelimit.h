/*
 * gateway/ratelimit.h — token buckets for a session's input.
 *
 * Pure arithmetic on a caller-supplied monotonic clock (microseconds),
 * so the unit tests drive it with an injected clock.  Key presses and
 * pointer-button presses each draw from a bucket; a press that finds no
 * token is dropped and counted.  Pointer motion is never dropped: it is
 * coalesced (only the latest position is kept) and let through at most
 * motion_rate times a second.  Drops that go on without a pause of
 * RL_FLOOD_GAP_US for alarm_seconds raise one alarm per episode.
 * Trust: none needed; it only counts.
 */
#ifndef GATEWAY_RATELIMIT_H
#define GATEWAY_RATELIMIT_H

#include <stdint.h>

#include "gateway/worker.h"

/* Defaults used for any config value that is missing, <= 0 or not finite. */
#define RL_DEFAULT_KEY_RATE	10.0
#define RL_DEFAULT_KEY_BURST	20.0
#define RL_DEFAULT_BUTTON_RATE	10.0
#define RL_DEFAULT_BUTTON_BURST	20.0
#define RL_DEFAULT_MOTION_RATE	60.0
#define RL_DEFAULT_ALARM_SEC	5.0
/* A flooding episode ends after this long without a drop. */
#define RL_FLOOD_GAP_US		1000000ULL
/* rate_limited summaries are produced at most this often. */
#define RL_REPORT_US		1000000ULL

struct tbucket {
	double		 rate;		/* tokens per second */
	double		 burst;		/* capacity */
	double		 tokens;
	uint64_t	 last;		/* us of the last refill */
};

struct rl_counts {
	uint64_t	 keys_passed;
	uint64_t	 keys_dropped;
	uint64_t	 buttons_passed;
	uint64_t	 buttons_dropped;
	uint64_t	 motion_in;	/* motion events received */
	uint64_t	 motion_out;	/* positions sent on to X */
};

struct ratelimit {
	struct ratelimit_config	 cfg;	/* sanitised copy */
	struct tbucket		 keys;
	struct tbucket		 buttons;
	/* motion coalescing */
	int			 motion_pending;
	int			 mx, my;
	uint64_t		 motion_last;	/* us a position was last sent */
	uint64_t		 motion_interval; /* us between sends */
	/* counters */
	struct rl_counts	 total;
	struct rl_counts	 reported;	/* total at the last report */
	uint64_t		 report_last;
	/* alarm */
	int			 flooding;
	int			 alarmed;
	uint64_t		 flood_start;
	uint64_t		 last_drop;
};

enum rl_verdict {
	RL_PASS = 0,
	RL_DROP,		/* no token: drop this press */
	RL_DROP_ALARM		/* drop, and the flood just crossed alarm_seconds */
};

void	 tbucket_init(struct tbucket *b, double rate, double burst,
	    uint64_t now);
/* Refill for the time since the last call, then take one token if there
 * is one.  Returns 1 if a token was taken. */
int	 tbucket_take(struct tbucket *b, uint64_t now);
double	 tbucket_level(struct tbucket *b, uint64_t now);

/* Fill *c with the defaults, then sanitise: bad values become defaults. */
void	 rl_config_sanitise(struct ratelimit_config *c);
void	 rl_init(struct ratelimit *rl, const struct ratelimit_config *cfg,
	    uint64_t now);

enum rl_verdict	 rl_key_press(struct ratelimit *rl, uint64_t now);
enum rl_verdict	 rl_button_press(struct ratelimit *rl, uint64_t now);

/* Record a pointer position.  Returns 1 when a position may be sent now
 * (then call rl_motion_take). */
int	 rl_motion(struct ratelimit *rl, int x, int y, uint64_t now);
/* Take the pending position if one is due (or force != 0, used before a
 * button change so the click lands where the user clicked).  Returns 1
 * and fills *x, *y when there is one to send. */
int	 rl_motion_take(struct ratelimit *rl, uint64_t now, int force,
	    int *x, int *y);
/* Forget a pending position (client gone). */
void	 rl_motion_reset(struct ratelimit *rl);

/* Earliest time (us) the caller must come back: a pending motion or a
 * summary to report.  0 = nothing scheduled. */
uint64_t rl_next_deadline(const struct ratelimit *rl);
/* If drops happened since the last report and RL_REPORT_US has passed,
 * fill *since (drops since the last report) and return 1. */
int	 rl_report_due(struct ratelimit *rl, uint64_t now,
	    struct rl_counts *since);

#endif
