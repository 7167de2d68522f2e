/*
 * supervisor/membound.h — the supervisor's memory bound for its session
 * (docs/processes.md, "Memory").
 *
 * A cgroup v2 for the browser where the kernel offers one (supervisor/memcg.h:
 * memory.max, memory.oom.group), else a sampler of all the supervisor's
 * descendants (supervisor/memwatch.h) plus RLIMIT_DATA of twice the limit on
 * each browser process.  The session log says which and why
 * (memory_bound), and when the limit is hit (memory_limit).
 *
 * Daemon code: runs in the supervisor (root) and, for membound_join(), in
 * a forked child before its privilege drop.
 */
#ifndef GATEWAY_MEMBOUND_H
#define GATEWAY_MEMBOUND_H

#include <sys/resource.h>

#include "supervisor/memcg.h"
#include "supervisor/memwatch.h"

#define MEMBOUND_SAMPLE_MS	250	/* how often the bound is checked */

struct membound {
	unsigned	 limit_mb;
	struct memcg	 mc;
	struct memwatch	*mw;
	long		 due_ms;	/* next check; 0 = not yet running */
};

void	 membound_init(struct membound *mb, unsigned limit_mb);
/* Choose the mechanism (name: the cgroup's).  -1 if out of memory. */
int	 membound_setup(struct membound *mb, const char *name);
/* The RLIMIT_DATA a bounded process gets (RLIM_INFINITY: none of ours:
 * it keeps the inherited one). */
rlim_t	 membound_data_rlimit(const struct membound *mb);
/* In a bounded role's child: into the cgroup, if there is one.  0/-1. */
int	 membound_join(const struct membound *mb);
/* Check now (the sampler counts root's descendants).  1 if the session
 * is over its limit (logged), 0 if not, -1 if /proc could not be read. */
int	 membound_check(struct membound *mb, pid_t root, long now_ms);
/* Remove the cgroup (after every process has gone), free the sampler. */
void	 membound_free(struct membound *mb);

#endif
