/*
 * api/parentipc.c — the parent <-> api protocol's wire table (see
 * api/parentipc.h).  Data only.
 */
#include "config.h"

#include "api/parentipc.h"

static const struct ipc_type pipc_types[] = {
	{ PIPC_SESSION_START, sizeof(struct pipc_start), 0, "session start" },
	{ PIPC_SESSION_STOP, sizeof(struct pipc_stop), 0, "session stop" },
	{ PIPC_SESSION_STARTED, sizeof(struct pipc_started), 0,
	  "session started" },
	{ PIPC_SESSION_FAILED, sizeof(struct pipc_failed), 0,
	  "session failed" },
	{ PIPC_SESSION_ENDED, sizeof(struct pipc_ended), 0, "session ended" },
	{ PIPC_RECORD_CLOSED, sizeof(struct pipc_record), 0,
	  "recording closed" },
	{ PIPC_RECORD_EXPIRE, sizeof(struct pipc_record), 0,
	  "recording to expire" },
	{ PIPC_RECORD_EXPIRED, sizeof(struct pipc_expired), 0,
	  "recording expired" },
	{ PIPC_NODES, sizeof(struct pipc_nodes), 0, "nodes" },
	{ PIPC_NODES_DONE, sizeof(struct pipc_nodes_done), 0, "nodes done" },
	{ PIPC_SESSION_EXTEND, sizeof(struct pipc_extend), 0,
	  "session extend" },
	{ PIPC_RECORD_CHAINED, sizeof(struct pipc_expired), 0,
	  "recording chained" },
	{ PIPC_COPY_REMOVED, sizeof(struct pipc_copy_removed), 0,
	  "node copy removed" },
};

const struct ipc_proto pipc_proto = {
	pipc_types, sizeof(pipc_types) / sizeof(pipc_types[0])
};
