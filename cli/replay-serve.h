/*
 * cli/replay-serve.h — the read-only VNC player behind
 * `cdsgate replay FILE --serve ADDR` (cli/replay-serve.c).
 */
#ifndef CLI_REPLAY_SERVE_H
#define CLI_REPLAY_SERVE_H

#include <stdint.h>

#include "record/record.h"

/* The CLI's part: check addr (127.x.x.x:PORT), read the password from
 * pwfile or make one (*generated = 1: show it), bind and listen.  The
 * listener, or minus the exit code (EXIT_BAD_INPUT: a bad address or
 * password file; EXIT_INTERNAL) after saying why on stderr. */
int	replay_serve_listen(const char *addr, const char *pwfile, char *pw,
	    size_t pwlen, int *generated);

/* The worker's part, confined: serve r to viewers on listen_fd (taken
 * over) until SIGINT/SIGTERM, paused at at_us when paused; ready(arg)
 * once viewers can connect.  Returns a cdsgate exit code. */
int	replay_serve(struct record_reader *r, int listen_fd, const char *pw,
	    int paused, uint64_t at_us, void (*ready)(void *), void *arg);

#endif
