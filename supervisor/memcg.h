/*
 * supervisor/memcg.h — a session's memory bound as a cgroup v2.
 *
 * Where the kernel offers it, the browser of a session runs in a cgroup of
 * its own, made beside the supervisor's (a sibling: the supervisor's own
 * cgroup holds processes, so it may not have controlled children), with
 * memory.max = the limit, memory.swap.max = 0 and memory.oom.group = 1:
 * at the limit the kernel kills the whole browser at once, and the
 * supervisor, seeing oom_kill in memory.events, ends the session
 * (memory_limit).  It needs the cgroup2 hierarchy with the memory
 * controller enabled for the supervisor's cgroup's parent's children
 * (cgroup.subtree_control); under systemd a delegated unit whose main
 * process sits in a subgroup (Delegate=memory, DelegateSubgroup=).
 * Otherwise memcg_create() says why not, and the supervisor falls back to
 * supervisor/memwatch.h and RLIMIT_DATA (docs/processes.md).
 *
 * Library code: file I/O under /proc and the cgroup2 mount, no logging;
 * statuses and a reason string.
 */
#ifndef GATEWAY_MEMCG_H
#define GATEWAY_MEMCG_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

enum memcg_status {
	MEMCG_OK = 0,
	MEMCG_EUNAVAIL,		/* no usable cgroup v2 memory controller */
	MEMCG_EIO		/* it is there, but making ours failed */
};

struct memcg {
	int	 base_fd;	/* the parent directory, for the rmdir */
	int	 procs_fd;	/* cgroup.procs: a child writes "0" */
	int	 events_fd;	/* memory.events */
	char	 name[64];
	char	 path[PATH_MAX];
};

void	 memcg_init(struct memcg *mc);		/* all fds -1 */
/* Make cgroup `name` with memory.max = limit bytes. */
int	 memcg_create(struct memcg *mc, const char *name, uint64_t limit,
	    char *why, size_t whylen);
int	 memcg_active(const struct memcg *mc);
/* In a forked child: move the calling process into the cgroup.  0/-1. */
int	 memcg_join(const struct memcg *mc);
/* How many processes the kernel's OOM killer ended in it (memory.events
 * oom_kill), or -1. */
long	 memcg_oom_kills(const struct memcg *mc);
/* Close the fds and remove the (empty) cgroup. */
void	 memcg_destroy(struct memcg *mc);

/* Parsers, for the tests: the "0::PATH" line of /proc/self/cgroup, and
 * the mount point of the cgroup2 file system in /proc/self/mountinfo.
 * 0 with out filled, -1 if absent or too long. */
int	 memcg_parse_self(const char *proc_cgroup, char *out, size_t len);
int	 memcg_parse_mount(const char *mountinfo, char *out, size_t len);
/* 1 if the space-separated controller list names `ctl`. */
int	 memcg_has_controller(const char *list, const char *ctl);

#endif
