/*
 * gateway/dooripc.h — the parent -> front door protocol (common/ipc.h),
 * one SOCK_SEQPACKET socketpair the parent makes when it forks the
 * front door (gateway/frontdoor.c).
 *
 *   type         from    payload      fd
 *   DOOR_ADD     parent  door_add     -
 *   DOOR_REMOVE  parent  door_remove  -
 *
 * DOOR_ADD comes once a session is ready: where its worker accepts
 * (upstream), what names it at the door (its id; its recipient id while
 * that recipient has no other session), the scrypt line its researcher's
 * password is checked against, its internal VNC password (what the door
 * answers the worker's VncAuth with) and its websocket token.
 * DOOR_REMOVE comes at revoke, expiry or any end: the door drops the
 * session's connections at once and forgets it.  The front door sends
 * nothing: the parent reads its socket only to see it go away (then the
 * parent stops every session and exits 1, as when the api dies).
 * Shares IPC_VERSION: bump it when a type number or a struct changes.
 */
#ifndef GATEWAY_DOORIPC_H
#define GATEWAY_DOORIPC_H

#include <stdint.h>
#include <sys/socket.h>

#include "api/parentipc.h"
#include "common/ipc.h"

enum door_type {
	DOOR_ADD = 1,
	DOOR_REMOVE
};

#define DOOR_HASH_MAX		256	/* "$scrypt$ln=..,r=..,p=..$salt$key" */
#define DOOR_PASSWORD_MAX	16	/* the library's VncAuth: 8 used */

struct door_add {
	char			 id[STORE_ID_MAX];
	char			 recipient[STORE_ID_MAX];
	char			 hash[DOOR_HASH_MAX];
	char			 inner_password[DOOR_PASSWORD_MAX];
	char			 ws_token[PIPC_TOKEN_MAX];
	struct sockaddr_storage	 upstream;
	uint32_t		 upstream_len;
};

struct door_remove {
	char			 id[STORE_ID_MAX];
};

extern const struct ipc_proto	door_proto;

#endif
