/*
 * common/ipc.h — typed messages between the processes of one cdsgate
 * role table (docs/processes.md), over a SOCK_SEQPACKET socketpair.
 *
 * Modelled on OpenSSH's monitor (MON_PERMIT: the allow-list is data) and
 * relayd's imsg (one dispatcher per peer).  A message is one datagram:
 *
 *   uint32 version   IPC_VERSION, big-endian
 *   uint32 type      one of the protocol's types, big-endian
 *   uint32 len       payload bytes, big-endian; must equal the type's size
 *   payload          a fixed-size struct of fixed-width fields and bounded
 *                    char arrays (no pointers), host byte order (both ends
 *                    are the same binary on the same host)
 *
 * plus at most one descriptor (SCM_RIGHTS) where the type says so.  Each
 * protocol lists every type once with its exact size and fd rule
 * (struct ipc_type); each peer has a handler table naming the types it
 * may send.  The receiver treats anything else as a protocol violation —
 * unknown type, a type this peer may not send, a wrong size or version,
 * a missing or unexpected descriptor, a truncated datagram — and returns
 * an error code the caller turns into fatalx()/exit: a peer that breaks
 * the protocol is taken over or broken, and is never talked to again.
 *
 * Variable-length data (a report JSON) goes as a series of fixed-size
 * chunks the receiver appends to a capped struct wbuf, or through a
 * descriptor.  Library-style: no logging, no exit.
 */
#ifndef COMMON_IPC_H
#define COMMON_IPC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The wire version.  Bump it when a message changes: a type number, a
 * payload struct's fields or size, or an fd rule.  Both ends are always
 * the same binary today (fork without exec); the check catches a stale
 * helper binary once roles are exec'd.
 */
#define IPC_VERSION		8

#define IPC_HDR_LEN		12		/* version, type, len */
#define IPC_MAX_PAYLOAD		(32u * 1024)	/* largest payload struct */

enum ipc_status {
	IPC_OK = 0,
	IPC_EOF,	/* the peer closed the socket (or died) */
	IPC_ESYS,	/* a system call failed: errno is set */
	IPC_EVERSION,	/* header version is not IPC_VERSION */
	IPC_EUNKNOWN,	/* type not in the protocol */
	IPC_EPERM,	/* type known, but this peer may not send it */
	IPC_ESIZE,	/* header len or datagram size not the type's size */
	IPC_EFD,	/* descriptor missing, unexpected, or more than one */
	IPC_ETRUNC,	/* datagram or control data truncated */
	IPC_EHANDLER	/* the handler refused the message (details in ctx) */
};

#define IPC_F_FD	0x1	/* carries exactly one descriptor */

/* One entry per message type of a protocol: the wire contract. */
struct ipc_type {
	uint32_t	 type;
	uint32_t	 size;		/* exact payload size */
	uint32_t	 flags;		/* IPC_F_* */
	const char	*name;		/* for messages */
};

struct ipc_proto {
	const struct ipc_type	*types;
	size_t			 ntypes;
};

/* A received message.  fd is -1 unless the type carries one; the
 * handler owns it (closes it or keeps it). */
struct ipc_msg {
	const struct ipc_type	*t;
	uint32_t		 len;
	int			 fd;
	uint8_t			 data[IPC_MAX_PAYLOAD];
};

/* One handler per type this peer may send: the permit table. */
typedef int (*ipc_handler_fn)(void *ctx, struct ipc_msg *m);
struct ipc_handler {
	uint32_t	 type;
	ipc_handler_fn	 fn;
};

/* What one end knows about the peer across a socket. */
struct ipc_peer {
	int				 sock;
	const char			*name;		/* "deid worker" */
	const struct ipc_proto		*proto;
	const struct ipc_handler	*permit;	/* types the peer may send */
	size_t				 npermit;
};

/*
 * Send one message: len must be the type's size and fd (-1 for none)
 * must match its fd rule, or IPC_ESIZE/IPC_EFD (a bug on our side).
 * The descriptor is duplicated into the peer; ours stays open.
 */
int	ipc_send(int sock, const struct ipc_proto *proto, uint32_t type,
	    const void *payload, size_t len, int fd);

/*
 * Receive and check one message from the peer (blocking).  On any error
 * every descriptor that came with the datagram is closed and m->fd is -1.
 */
int	ipc_recv(const struct ipc_peer *p, struct ipc_msg *m);

/*
 * Receive one message and hand it to the peer's handler for its type.
 * Returns IPC_OK, the ipc_recv() error, or IPC_EHANDLER when the handler
 * returned non-zero.  *typep (may be NULL) gets the type received.
 * Not reentrant (one static message buffer): call it from one thread.
 */
int	ipc_dispatch(const struct ipc_peer *p, void *ctx, uint32_t *typep);

/* The type's entry in the protocol, or NULL. */
const struct ipc_type	*ipc_type_find(const struct ipc_proto *proto,
			    uint32_t type);

const char	*ipc_strerror(int status);

/*
 * Copy a bounded char array out of a payload into dst (dstlen bytes),
 * refusing one without a NUL inside its bounds: a peer's string is never
 * trusted to be terminated.  Returns 0 or -1.
 */
int	ipc_str_get(char *dst, size_t dstlen, const char *src, size_t srclen);

/*
 * Fork a helper joined to us by a SOCK_SEQPACKET socketpair: the child
 * runs fn(its end, arg), which must not return; we keep the other end.
 * 0, or -1 with err set.  ipc_helper_stop closes our end (the helper
 * sees EOF) and reaps it, returning its wait status (0 if there was
 * none); a helper still there after IPC_HELPER_STOP_MS (a copy of our
 * end left open elsewhere, a hang) is killed, so a stop never blocks
 * for ever; both may be -1 (a no-op).
 */
int	ipc_helper_start(void (*fn)(int, void *), void *arg, pid_t *pid,
	    int *sock, char *err, size_t errlen);
#define IPC_HELPER_STOP_MS	10000
int	ipc_helper_stop(pid_t *pid, int *sock);

#endif
