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
/* Run argv (NULL-terminated) through the runner: the CLI's exit status,
 * or -1 with err set; err gets the CLI's stderr (bounded) either way. */
int	gaterunner_run(struct gaterunner *gr, const char *const *argv,
	    char *err, size_t errlen);
void	gaterunner_stop(struct gaterunner *gr);

#endif
