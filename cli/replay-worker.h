/*
 * cli/replay-worker.h — the replay worker: `cdsgate replay` reads the
 * untrusted recording only in a forked child under the replay seccomp
 * profile, which answers the CLI in typed messages (cli/replay-worker.c).
 */
#ifndef CLI_REPLAY_WORKER_H
#define CLI_REPLAY_WORKER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/record.h"

/* What the CLI does with the recording (the worker's action). */
enum rw_action {
	RW_KEYS = 1,	/* the key timeline and the typed text, to stdout */
	RW_SEARCH,	/* where text was typed, to stdout */
	RW_EVENTS,	/* the events as JSON lines, to stdout */
	RW_FRAME,	/* the frame at t_us as RGB, to the CLI */
	RW_EXPORT,	/* frames at fps as raw RGB into ffmpeg's stdin */
	RW_SERVE	/* a VNC player on the CLI's listener */
};

struct rw_request {
	enum rw_action	 action;
	uint64_t	 t_us;		/* RW_FRAME; RW_SERVE: --at */
	int		 paused;	/* RW_SERVE: --at was given */
	double		 fps;		/* RW_EXPORT */
	const char	*text;		/* RW_SEARCH: the text; RW_SERVE: the
					   password */
	int		 fd;		/* RW_EXPORT: ffmpeg's stdin; RW_SERVE:
					   the listener (handed over and
					   closed by rw_run); else -1 */
};

/* The worker, once it has read the recording's header and chunks. */
struct replay_worker {
	pid_t			 pid;
	int			 sock;
	char			 name[1024];	/* the recording, in messages */
	struct record_header	 h;		/* checked: bounded, terminated */
	struct record_info	 info;
};

/*
 * Fork the worker, hand it fd (the recording, opened by the CLI; closed
 * here) and wait for its header and scan.  0; or a cdsgate exit code
 * after saying on stderr why (a damaged header: "NAME: ... at offset N").
 */
int	rw_start(struct replay_worker *w, int fd, const char *name);

/*
 * Run one action in the worker and end it.  RW_FRAME fills rgb
 * (width * height * 3 bytes); RW_EXPORT sets *count to the frames
 * written; RW_SERVE calls serving(arg) once viewers can connect.
 * Returns the worker's exit code (it said why on stderr), or
 * EXIT_INTERNAL when it died or broke the protocol (said here).
 */
int	rw_run(struct replay_worker *w, const struct rw_request *q,
	    uint8_t *rgb, uint64_t *count, void (*serving)(void *),
	    void *arg);

/* Apply c (its name, and for the worker its death signal) with no
 * core and the REPLAY seccomp profile: 0, or -1 with err set. */
struct confine;
int	replay_confine(struct confine *c, char *err, size_t errlen);

/* hh:mm:ss.mmm */
const char *replay_fmt_time(uint64_t us, char *buf, size_t len);

/* End the worker without an action (or after a failed start). */
void	rw_stop(struct replay_worker *w);

#endif
