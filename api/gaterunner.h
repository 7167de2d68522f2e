/*
 * api/gaterunner.h — the gate runner: the one api-side process that may
 * execve.  The api forks it before its own filter; it runs
 * `cdsgate deid anonymize ...` for each RUN and answers DONE.
 */
#ifndef API_GATERUNNER_H
#define API_GATERUNNER_H

#include <stddef.h>
#include <sys/types.h>

#define GATERUNNER_ARGS_MAX	(30 * 1024)	/* argv bytes per RUN */
#define GATERUNNER_ARGC_MAX	600
#define GATERUNNER_ERR_MAX	4096		/* stderr bytes in DONE */

struct gaterunner {
	pid_t	pid;
	int	sock;
};

/* Fork the runner (as the api's user, before the api's filter); it only
 * runs argv whose argv[0] is cdsgate and argv[1..2] "deid anonymize". */
int	gaterunner_start(const char *cdsgate, struct gaterunner *gr,
	    char *err, size_t errlen);
/* Queue argv (NULL-terminated) with the runner: 0, or -1 with err set.
 * The runner runs one job at a time and answers in order. */
int	gaterunner_send(struct gaterunner *gr, const char *const *argv,
	    char *err, size_t errlen);
/* When gaterunner_fd() is readable: the oldest job's CLI exit status (or
 * -1: it did not run or was killed) in *status, its stderr (bounded) in
 * err; returns -1 when the runner is gone or broke the protocol. */
int	gaterunner_recv(struct gaterunner *gr, int *status, char *err,
	    size_t errlen);
/* The socket to poll for DONE; -1 when there is none. */
int	gaterunner_fd(const struct gaterunner *gr);
/* Close the socket and reap the runner: its wait status. */
int	gaterunner_stop(struct gaterunner *gr);

#endif
