/*
 * api/nodes.c — GET /v1/nodes: the Slurm runner's compute nodes, as
 * Slurm sees them (sinfo: state, memory, free memory) with the sessions
 * the parent placed on each.  The request waits suspended while the
 * parent asks its Slurm helper (control/parent-slurm.c); one at a time.
 *
 * Trust: the parent's text is parsed strictly; a line that does not
 * parse is left out, and the reply says how many were.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/parentipc.h"

static struct api_req *waiting;

int
nodes_list(struct api_req *r)
{
	struct pipc_nodes n = { 0 };

	if (r->cfg->parent_fd < 0)
		return api_error(r, 503, "no_parent", "this api starts no "
		    "sessions (cdsgated api alone): there are no nodes");
	if (waiting != NULL)
		return api_error(r, 503, "busy", "a node list is being made: "
		    "ask again");
	if (ipc_send(r->cfg->parent_fd, &pipc_proto, PIPC_NODES, &n,
	    sizeof(n), -1) != IPC_OK)
		return api_error(r, 503, "no_parent", "the parent is gone");
	waiting = r;
	api_suspend(r);
	return 0;
}

/* "-"/"N/A" or a number of MiB: JSON null or the integer. */
static json_t *
mib(const char *s)
{
	char *end;
	long long v = strtoll(s, &end, 10);

	return end != s && *end == '\0' && v >= 0 ? json_integer(v) :
	    json_null();
}

/* One "NAME STATE MEMORY FREE SESSIONS" line into the array. */
static int
node_line(const char *line, json_t *nodes)
{
	char name[64], state[32], mem[24], fr[24];
	int sessions;

	if (sscanf(line, "%63s %31s %23s %23s %d", name, state, mem, fr,
	    &sessions) != 5 || sessions < 0)
		return -1;
	json_array_append_new(nodes, json_pack("{s:s, s:s, s:o, s:o, s:i}",
	    "name", name, "state", state, "memory_mb", mib(mem), "free_mb",
	    mib(fr), "sessions", sessions));
	return 0;
}

/* NODES_DONE: reply to the waiting request. */
int
api_nodes_done(void *ctx, struct ipc_msg *m)
{
	struct pipc_nodes_done d;
	struct api_req *r = waiting;
	json_t *nodes;
	char *line, *save = NULL;
	int bad = 0;

	(void)ctx;
	memcpy(&d, m->data, sizeof(d));
	d.text[sizeof(d.text) - 1] = '\0';
	if (r == NULL)
		return 0;	/* stale: that request was abandoned */
	waiting = NULL;
	if (d.ok == 0)
		api_error(r, 409, "local_runner", "%s", d.text);
	else if (d.ok < 0)
		api_error(r, 503, "slurm", "%s", d.text);
	else {
		nodes = json_array();
		for (line = strtok_r(d.text, "\n", &save); line != NULL;
		    line = strtok_r(NULL, "\n", &save))
			bad += node_line(line, nodes) != 0;
		api_reply(r, 200, json_pack("{s:o, s:i}", "nodes", nodes,
		    "unparsed_lines", bad));
	}
	api_resume(r);
	return 0;
}

void
nodes_abandon(void)
{
	if (waiting == NULL)
		return;
	api_error(waiting, 503, "stopping", "the api is stopping");
	api_resume(waiting);
	waiting = NULL;
}
