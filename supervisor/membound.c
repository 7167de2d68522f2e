/*
 * supervisor/membound.c — the supervisor's memory bound (see membound.h).
 *
 * Trust: the supervisor's own choices and kernel text (memory.events,
 * /proc); the process names it logs are chosen by the processes and are
 * escaped by the JSON encoder.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "supervisor/membound.h"
#include "gateway/slog.h"

void
membound_init(struct membound *mb, unsigned limit_mb)
{
	memset(mb, 0, sizeof(*mb));
	mb->limit_mb = limit_mb;
	memcg_init(&mb->mc);
}

static uint64_t
limit_bytes(const struct membound *mb)
{
	return (uint64_t)mb->limit_mb << 20;
}

int
membound_setup(struct membound *mb, const char *name)
{
	char why[384];

	if (memcg_create(&mb->mc, name, limit_bytes(mb), why,
	    sizeof(why)) == MEMCG_OK) {
		slog_event("memory_bound", json_pack("{s:s, s:s, s:I}",
		    "mechanism", "cgroup", "cgroup", mb->mc.path, "limit_mib",
		    (json_int_t)mb->limit_mb));
		return 0;
	}
	if ((mb->mw = memwatch_alloc()) == NULL)
		return -1;
	slog_event("memory_bound", json_pack("{s:s, s:s, s:I, s:I}",
	    "mechanism", "watch", "no_cgroup", why, "limit_mib",
	    (json_int_t)mb->limit_mb, "rlimit_data_mib",
	    (json_int_t)mb->limit_mb * 2));
	return 0;
}

/*
 * Twice the limit: a backstop for what one process can take between two
 * samples, high enough that the sum passes the limit first.  RLIMIT_DATA
 * counts private writable mappings only, so Chromium's PROT_NONE
 * reservations (V8's cage, PartitionAlloc's pools) still work where
 * RLIMIT_AS would stop it starting; and Chromium maps more than it holds
 * (measured: a renderer ~180 MiB more, the idle browser process 331 MiB
 * for 38 MiB): at the limit itself the page's allocations failed while
 * the sum stayed below it.
 */
rlim_t
membound_data_rlimit(const struct membound *mb)
{
	if (memcg_active(&mb->mc))
		return RLIM_INFINITY;
	return (rlim_t)mb->limit_mb << 21;
}

int
membound_join(const struct membound *mb)
{
	return memcg_active(&mb->mc) ? memcg_join(&mb->mc) : 0;
}

/* The cgroup: did the kernel's OOM killer act in it (memory.oom.group:
 * the whole browser at once)? */
static int
check_cgroup(const struct membound *mb)
{
	long kills = memcg_oom_kills(&mb->mc);

	if (kills <= 0)
		return 0;
	slog_event("memory_limit", json_pack("{s:s, s:I, s:i}", "mechanism",
	    "cgroup", "limit_mib", (json_int_t)mb->limit_mb, "oom_kills",
	    (int)kills));
	return 1;
}

/* The sampler: the private memory of all root's descendants, summed. */
static int
check_watch(struct membound *mb, pid_t root)
{
	struct memwatch_sample m;

	if (memwatch_sample(mb->mw, root, &m) != 0)
		return -1;
	if (m.anon <= limit_bytes(mb) && !m.truncated)
		return 0;
	slog_event("memory_limit", json_pack("{s:s, s:I, s:I, s:i, s:i, s:s, "
	    "s:I, s:b}", "mechanism", "watch", "used_mib",
	    (json_int_t)(m.anon >> 20), "limit_mib", (json_int_t)mb->limit_mb,
	    "processes", (int)m.nprocs, "top_pid", (int)m.top_pid, "top_name",
	    m.top_comm, "top_mib", (json_int_t)(m.top_anon >> 20), "truncated",
	    m.truncated));
	return 1;
}

int
membound_check(struct membound *mb, pid_t root, long now_ms)
{
	mb->due_ms = now_ms + MEMBOUND_SAMPLE_MS;
	if (memcg_active(&mb->mc))
		return check_cgroup(mb);
	return mb->mw != NULL ? check_watch(mb, root) : 0;
}

void
membound_free(struct membound *mb)
{
	memcg_destroy(&mb->mc);
	memwatch_free(mb->mw);
	mb->mw = NULL;
}
