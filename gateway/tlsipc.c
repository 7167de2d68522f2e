/*
 * gateway/tlsipc.c — the worker <-> tls protocol's wire table (see
 * gateway/tlsipc.h).  Data only.
 */
#include "config.h"

#include "gateway/tlsipc.h"

static const struct ipc_type tipc_types[] = {
	{ TIPC_CLIENT, sizeof(struct tipc_client), IPC_F_FD, "client" },
	{ TIPC_WANT, sizeof(struct tipc_want), 0, "want inner" },
	{ TIPC_INNER, sizeof(struct tipc_slot), IPC_F_FD, "inner" },
	{ TIPC_REFUSE, sizeof(struct tipc_refuse), 0, "refuse" },
	{ TIPC_CLOSED, sizeof(struct tipc_slot), 0, "closed" },
	{ TIPC_WS_OK, sizeof(struct tipc_slot), 0, "websocket ok" },
};

const struct ipc_proto tipc_proto = {
	tipc_types, sizeof(tipc_types) / sizeof(tipc_types[0])
};
