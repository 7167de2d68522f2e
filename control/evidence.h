/*
 * control/evidence.h — a Slurm node's evidence (the recording, network
 * log and capture of each of its sessions) streamed to the control
 * plane as it is written, and the control plane's receiver that appends
 * it to record_dir under the session's name.
 *
 * The wire: a TCP connection to the receiver (slurm_listen's port + 1)
 * carrying frames, each a header line and its bytes:
 *
 *     put ID FILE OFFSET LEN MAC\n  <LEN bytes>
 *
 * FILE is rec, net or cap (<id>.cdsrec, .network.jsonl, .pcapng); MAC is
 * HMAC-SHA256, lower-case hex, over "ID FILE OFFSET LEN\n" and the bytes,
 * under the session's evidence key: random, made by the control plane
 * when it hands the session to its node (inside that MUNGE-encrypted
 * answer) and known to the receiver, with the node's address, from the
 * node's ready report until the session ends.  A connection from an
 * address that is no such node's is closed unread.  The
 * receiver answers each frame "ok SIZE" (the file's size now), or "no
 * WHY" and closes.  It takes a frame only at the end of what it
 * holds (OFFSET = its size: no gap, no overwrite), at most
 * EVIDENCE_CHUNK_MAX bytes, and a file only up to EVIDENCE_FILE_MAX.
 */
#ifndef GATEWAY_EVIDENCE_H
#define GATEWAY_EVIDENCE_H

#include <stdint.h>
#include <sys/types.h>

#include "api/parentipc.h"
#include "policy/config.h"

#define EVIDENCE_KEY_LEN	43		/* secret_text: 258 bits */
#define EVIDENCE_CHUNK_MAX	(256 * 1024)	/* bytes in one frame */
#define EVIDENCE_FILE_MAX	((uint64_t)16 << 30)
#define EVIDENCE_NET_MS		5000		/* one connection's frames */
#define EVIDENCE_TICK_MS	500		/* the node looks this often */
#define EVIDENCE_PUSH_MAX	(4 * EVIDENCE_CHUNK_MAX) /* a tick's bytes,
						   per session */
#define EVIDENCE_FILES		3

enum evidence_msg {
	EV_OPEN = 1,	/* parent -> receiver: a ready session's key */
	EV_CLOSE,	/* parent -> receiver: the session is over */
	EV_CLOSED	/* receiver -> parent: its files are closed */
};

struct ev_open {
	char		id[STORE_ID_MAX];
	char		key[EVIDENCE_KEY_LEN + 1];
	char		addr[64];	/* the node's (numeric): frames from
					   there only */
};

struct ev_close {
	char		id[STORE_ID_MAX];
	char		end[32];	/* record_closed's "end", echoed */
	uint64_t	bytes;		/* EV_CLOSED: what it received */
};

extern const struct ipc_proto	evidence_proto;

/* "<slurm_listen's address>:<its port + 1>" into buf; -1 if it won't. */
int	evidence_address(const char *listen, char *buf, size_t len);

/* Fork the receiver (root, confined, dies with the parent); it listens
 * on evidence_address(c->slurm_listen).  0, or -1 with err. */
int	evidence_receiver_start(const struct gw_config *c, pid_t *pid,
	    int *sock, char *err, size_t errlen);

/* The node's side: one session's files and how much of each the
 * control plane holds. */
struct ev_stream {
	char		id[STORE_ID_MAX];
	char		key[EVIDENCE_KEY_LEN + 1];	/* "": not streamed */
	uint64_t	sent[EVIDENCE_FILES];
	uint64_t	bytes;		/* sent in all */
};

/* Send what grew in the node's record_dir since the last push: at most
 * EVIDENCE_PUSH_MAX bytes, or (all) until the control plane holds every
 * byte.  0, or -1 with err (what was acknowledged stays counted). */
int	evidence_push(const struct gw_config *c, struct ev_stream *s, int all,
	    char *err, size_t errlen);

/* The node's own copies of session id in record_dir, once the control
 * plane's are chained with the digests want ("-": it holds none of that
 * file): each must be a regular file (never a symlink's target) whose
 * digest is want's, or empty where want is "-"; then all are removed,
 * else none.  0 with *mask (bit f: file f removed) and each file's
 * digest in got ("" when empty), or -1 with why (*mask: what an unlink
 * that failed half-way did remove). */
int	evidence_copies_remove(const struct gw_config *c, const char *id,
	    char want[EVIDENCE_FILES][72], int *mask,
	    char got[EVIDENCE_FILES][72], char *why, size_t len);
/* The name of file f of session id ("<id>.cdsrec", ...) into buf. */
int	evidence_file_name(const char *id, int f, char *buf, size_t len);

#endif
