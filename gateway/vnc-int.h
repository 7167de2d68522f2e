/*
 * gateway/vnc-int.h — what vnc.c, vnc-door.c and vnc-front.c share: the
 * server's state and the functions one of them calls in another.
 * Private to those three files; the worker uses gateway/vnc.h.
 */
#ifndef CDSGATE_GATEWAY_VNC_INT_H
#define CDSGATE_GATEWAY_VNC_INT_H

#include <stdint.h>
#include <sys/socket.h>

#include <rfb/rfb.h>

#include "gateway/preauth.h"
#include "gateway/ratelimit.h"
#include "gateway/tlsipc.h"
#include "gateway/vnc.h"
#include "gateway/websocket.h"

#define VNC_ACCEPT_BATCH	64	/* accepts per wake-up */
#define VNC_RECHECK_US		20000	/* partial websocket request */
#define VNC_LOG_LINE		512

struct vnc_door {
	int		 fd;		/* -1: free */
	uint64_t	 t0;
	int		 more;		/* partial request: re-check on a timer */
	uint64_t	 recheck;
	char		 addr[64];
	struct preauth_addr src;
	uint32_t	 preauth_id;
};

/* A connection handed to the tls process, by slot (gateway/tlsipc.h). */
enum vnc_front_state {
	FRONT_FREE = 0,
	FRONT_TLS,	/* at the tls process, not logged in: pre-auth */
	FRONT_INNER,	/* logged in; ifd waits for the first bytes */
	FRONT_LIBRARY,	/* relayed into the library until TIPC_CLOSED */
	FRONT_EVICTED	/* refused unasked; taken until TIPC_CLOSED */
};

struct vnc_front {
	enum vnc_front_state	 state;
	int			 ifd;		/* FRONT_INNER: the library's end */
	int			 wss;		/* a TLS ClientHello: wss */
	int			 ws_ok;		/* its token and Origin passed */
	int			 encrypted;
	char			 addr[64];
	char			 user[CREDS_USER_MAX + 1];
	struct preauth_addr	 src;
	uint32_t		 preauth_id;	/* still counted as pre-auth */
};

struct vnc {
	rfbScreenInfoPtr	 screen;
	struct vnc_params	 prm;
	struct vnc_ops		 ops;
	char			*passwords[2];	/* authPasswdData list */
	struct vnc_door		 door[VNC_MAX_PREAUTH];
	struct vnc_peer		*peers;
	struct vnc_peer		*interactive;
	struct vnc_peer		*observer;
	const char		*handing_addr;	/* set around rfbNewClient */
	const char		*handing_user;	/* ... VeNCrypt user or NULL */
	int			 handing_tls;
	int			 handing_ws;
	const struct preauth_addr *handing_src;	/* ... its address */
	uint32_t		 handing_pa;	/* ... pre-auth id, 0 once taken */
	struct preauth		*pa;		/* pre-auth table, back-off */
	struct vnc_front	 front[VNC_MAX_FRONT];	/* at the tls process */
	const char		*tls_fatal;	/* the tls process failed us */
	int			 relay_sndbuf;	/* library side of a relay */
	struct tbucket		 auth_bucket;	/* logins, all addresses */
	struct tbucket		 refuse_bucket;	/* client_refused lines */
	unsigned long		 refused_quiet;	/* refusals not logged */
	struct tbucket		 msg_bucket;	/* message_refused lines */
	unsigned long		 msg_quiet;	/* ... not logged */
};

/* vnc.c */
uint64_t vnc_now(const struct vnc *v);
uint64_t vnc_since(uint64_t now, uint64_t t);
void vnc_refused(struct vnc *v, const char *addr, const char *reason);

/* vnc-door.c: the door, before LibVNCServer sees a connection */
int vnc_role_free(const struct vnc *v);
void vnc_refused_src(struct vnc *v, const char *addr,
    const struct preauth_addr *src, const char *reason);
void vnc_door_close(struct vnc *v, struct vnc_door *d);
void vnc_accept(struct vnc *v, uint64_t now);
const char *vnc_ws_check(const struct vnc *v, const struct ws_request *r);
void vnc_door_check(struct vnc *v, struct vnc_door *d, uint64_t now);

/* vnc-front.c: the TLS front door, handed to the tls process */
void vnc_front_take(struct vnc *v, struct vnc_door *d, enum tipc_mode mode);
void vnc_front_refuse(struct vnc *v, uint32_t slot, const char *why);
void vnc_tls_dispatch(struct vnc *v);
void vnc_front_attach(struct vnc *v, struct vnc_front *f);
void vnc_front_setup(struct vnc *v);

#endif
