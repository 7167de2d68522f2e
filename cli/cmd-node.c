/*
 * cli/cmd-node.c — `cdsgate node list`: the Slurm runner's compute nodes
 * as Slurm sees them, with the sessions placed on each (GET /v1/nodes).
 *
 * Trust: the reply is the API's.
 */
#include "config.h"

#include <stdio.h>

#include "cli/apiclient.h"
#include "cli/cli.h"

#define USAGE_LIST	"node list [--json] [--socket PATH]"

/* An integer field, or "-" (Slurm said N/A). */
static void
print_mib(json_t *n, const char *key)
{
	json_t *v = json_object_get(n, key);

	if (json_is_integer(v))
		printf(" %10lld", (long long)json_integer_value(v));
	else
		printf(" %10s", "-");
}

static void
print_nodes(json_t *j)
{
	json_t *n;
	size_t i;

	printf("%-16s %-12s %10s %10s %8s\n", "NODE", "STATE", "MEMORY_MB",
	    "FREE_MB", "SESSIONS");
	json_array_foreach(json_object_get(j, "nodes"), i, n) {
		printf("%-16s %-12s", json_string_value(json_object_get(n,
		    "name")), json_string_value(json_object_get(n, "state")));
		print_mib(n, "memory_mb");
		print_mib(n, "free_mb");
		printf(" %8lld\n", (long long)json_integer_value(
		    json_object_get(n, "sessions")));
	}
}

static int
cmd_list(int argc, char **argv)
{
	return apiclient_get_cmd(argc, argv, USAGE_LIST, "/v1/nodes",
	    print_nodes);
}

const struct cmd_entry cmd_node_list_entry = { "node", "list", USAGE_LIST,
    "the Slurm runner's nodes: state, memory and free memory as Slurm "
    "sees them, sessions on each", cmd_list };
