/*
 * gateway/dooripc.c — the parent -> front door protocol's wire table
 * (see gateway/dooripc.h).  Data only.
 */
#include "config.h"

#include "gateway/dooripc.h"

static const struct ipc_type door_types[] = {
	{ DOOR_ADD, sizeof(struct door_add), 0, "add session" },
	{ DOOR_REMOVE, sizeof(struct door_remove), 0, "remove session" },
};

const struct ipc_proto door_proto = {
	door_types, sizeof(door_types) / sizeof(door_types[0])
};
