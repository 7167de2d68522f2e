/*
 * api/sessions.c — sessions through the admin API, and the api's side
 * of the parent protocol (api/parentipc.h).
 *
 * Unprivileged (cdsgate-api).  The parent is trusted more than we are,
 * but its messages are still checked; anything malformed ends the api.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api/api.h"
#include "api/parentipc.h"

static int	answer_ended(void *, struct ipc_msg *);

/* What the parent may send us unasked. */
static const struct ipc_handler api_permit[] = {
	{ PIPC_SESSION_ENDED, answer_ended },
};

/* SESSION_ENDED: the supervisor exited; record it unless already over. */
static int
answer_ended(void *ctx, struct ipc_msg *m)
{
	struct store *st = ctx;
	struct pipc_ended e;
	char id[STORE_ID_MAX], why[64];

	memcpy(&e, m->data, sizeof(e));
	if (ipc_str_get(id, sizeof(id), e.id, sizeof(e.id)) != 0 ||
	    !store_id_valid(id))
		return -1;
	snprintf(why, sizeof(why), "supervisor exited (%d)", (int)e.status);
	store_session_end(st, id, STORE_SESSION_ENDED, why,
	    (int64_t)time(NULL));
	return 0;
}

int
api_parent_input(int fd, struct store *st)
{
	const struct ipc_peer peer = { fd, "parent", &pipc_proto, api_permit,
	    sizeof(api_permit) / sizeof(api_permit[0]) };
	int r;

	if ((r = ipc_dispatch(&peer, st, NULL)) != IPC_OK) {
		fprintf(stderr, "cdsgated api: the parent: %s; exiting\n",
		    ipc_strerror(r));
		return -1;
	}
	return 0;
}

void
api_sessions_tick(int fd, struct store *st)
{
	(void)fd;
	(void)st;
}
