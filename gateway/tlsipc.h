/*
 * gateway/tlsipc.h — the worker <-> tls protocol (common/ipc.h), one
 * SOCK_SEQPACKET socketpair the supervisor makes before either starts.
 *
 * The worker accepts every connection and sniffs it (gateway/vnc.c); a
 * connection that needs TLS (a native RFB client on a TLS listener, or a
 * TLS ClientHello for wss) or the credentials (a ws:// request where
 * plain VNC is allowed beside TLS) is handed over, descriptor and all.  The tls
 * process (gateway/tlsfront.c) runs the RFB version + VeNCrypt + TLS +
 * Plain part (or terminates wss) and, once the user has logged in, asks
 * the worker for a plaintext way into LibVNCServer; the worker answers
 * with one end of a fresh socketpair, or a refusal with a reason.  The
 * worker may also refuse, unasked, a connection still handshaking at the
 * tls process: one it evicts from its pre-authentication table
 * (gateway/preauth.h); it then ignores a TIPC_WANT for that slot, which
 * stays taken until TIPC_CLOSED.  The
 * worker never sees the key, the certificate's key material or the
 * credentials; the tls process never sees X or the library.
 *
 *   type           from    payload          fd
 *   TIPC_CLIENT    worker  tipc_client      the client's TCP socket
 *   TIPC_WANT      tls     tipc_want        -
 *   TIPC_INNER     worker  tipc_slot        the library's peer (plaintext)
 *   TIPC_REFUSE    worker  tipc_refuse      -
 *   TIPC_CLOSED    tls     tipc_slot        -
 *   TIPC_WS_OK     worker  tipc_slot        -
 *
 * wss takes two TIPC_WANTs: the first (no user, the HTTP request) asks
 * the worker to check the token and Origin before any login; TIPC_WS_OK
 * (or TIPC_REFUSE) answers it, the slot stays pre-authentication, and
 * the tls process runs the websocket and the VeNCrypt Plain login
 * inside it; the second (the user, no request) asks for the library.
 *
 * A slot names one connection (0 .. VNC_MAX_FRONT-1), chosen by the
 * worker.  Each side checks every slot against its own table: a message
 * for a slot in the wrong state is a violation, like a wrong size.
 * Shares IPC_VERSION: bump it when a type number, a struct below or an
 * fd rule changes.
 */
#ifndef GATEWAY_TLSIPC_H
#define GATEWAY_TLSIPC_H

#include <stdint.h>

#include "common/ipc.h"

enum tipc_type {
	TIPC_CLIENT = 1,
	TIPC_WANT,
	TIPC_INNER,
	TIPC_REFUSE,
	TIPC_CLOSED,
	TIPC_WS_OK
};

#define TIPC_ADDR_MAX		64
#define TIPC_USER_MAX		72	/* CREDS_USER_MAX + 1, rounded up */
#define TIPC_REQUEST_MAX	4104	/* VENCRYPT_REQUEST_MAX + 1, rounded */
#define TIPC_REASON_MAX		128
#define TIPC_SLOTS		18	/* >= VNC_MAX_FRONT (checked in vnc.c) */

/* WS: a plain ws:// request on a listener with TLS where plain VNC is
 * allowed (loopback): the same login as wss, without the TLS. */
enum tipc_mode { TIPC_MODE_RFB = 0, TIPC_MODE_WSS = 1, TIPC_MODE_WS = 2 };

struct tipc_client {
	uint32_t	 slot;
	uint32_t	 mode;			/* enum tipc_mode */
	char		 addr[TIPC_ADDR_MAX];	/* "ip:port", for the log */
};

/* Logged in (user set), or wss: TLS up and a whole HTTP request read
 * (request set, user ""). */
struct tipc_want {
	uint32_t	 slot;
	uint32_t	 encrypted;		/* 0: plain VncAuth relayed */
	char		 user[TIPC_USER_MAX];	/* VeNCrypt user, "" if none */
	char		 request[TIPC_REQUEST_MAX]; /* wss only, else "" */
};

struct tipc_slot {
	uint32_t	 slot;
};

struct tipc_refuse {
	uint32_t	 slot;
	char		 reason[TIPC_REASON_MAX];
};

extern const struct ipc_proto	tipc_proto;

#endif
