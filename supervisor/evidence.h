/*
 * supervisor/evidence.h — a session's evidence files, made by the supervisor
 * (root) before any child: the recording for the worker, the network log
 * and (if the policy asks) the capture for the forwarder, in record_dir,
 * O_EXCL, 0600 root (docs/recording-format.md).  No file, no session.
 */
#ifndef GATEWAY_EVIDENCE_H
#define GATEWAY_EVIDENCE_H

#include <limits.h>

#include "policy/spec.h"

struct evidence {
	int	 record_fd;	/* the recording, until the worker has it */
	int	 lock_fd;	/* its flock, held until we are gone */
	char	 record_path[PATH_MAX];
	int	 netlog_fd;	/* network.jsonl, until the forwarder has it */
	char	 netlog_path[PATH_MAX];
	int	 pcap_fd;	/* .pcapng, until the forwarder has it */
	char	 pcap_path[PATH_MAX];
};

void	evidence_init(struct evidence *ev);
/* Make the files for session id: 0, or the session's exit status
 * (SESSION_EXIT_DISK_FULL, SESSION_EXIT_CONFIG); logged. */
int	evidence_open(struct evidence *ev, const struct session_spec *sp,
	    const char *id);
/* The worker / the forwarder has its copies: close ours. */
void	evidence_worker_has(struct evidence *ev);
void	evidence_forwarder_has(struct evidence *ev);
/* The session is over: remove files no child ever had; if the worker
 * could not close the recording, log its digest (record_closed). */
void	evidence_close(struct evidence *ev, const char *stop_reason);
/* Last: drop the lock (a parent may seal the file from now on). */
void	evidence_free(struct evidence *ev);

#endif
