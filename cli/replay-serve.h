/*
 * cli/replay-serve.h — the read-only VNC player behind
 * `cdsgate replay FILE --serve ADDR` (cli/replay-serve.c).
 */
#ifndef CLI_REPLAY_SERVE_H
#define CLI_REPLAY_SERVE_H

#include <stdint.h>

#include "record/record.h"

/* Serve until SIGINT/SIGTERM; starts paused at at_us when at != NULL.
 * Returns a cdsgate exit code. */
int	replay_serve(struct record_reader *r, const char *addr,
	    const char *pwfile, const char *at, uint64_t at_us);

/* Load the replay seccomp profile (every file it needs already open;
 * no thread yet): 0, or -1 with the reason on stderr (do not go on). */
int	replay_confine(void);

#endif
