/*
 * supervisor/memwatch.h — how much memory a session's processes hold.
 *
 * The session's memory bound (docs/processes.md): the supervisor samples
 * the private resident memory (RssAnon: what a page's allocations grow)
 * of every process descended from it -- Xvfb, the worker, the forwarder,
 * the browser's init, Chromium and its zygotes, renderers and helpers,
 * whatever namespaces they made -- and ends the session when the sum
 * passes its limit.  Shared and file-backed pages are not counted: the
 * jail's /dev/shm and /tmp are tmpfs mounts with their own size limits.
 *
 * Library code: reads /proc, no logging; one fixed table allocated once
 * (no allocation per sample).
 */
#ifndef GATEWAY_MEMWATCH_H
#define GATEWAY_MEMWATCH_H

#include <stdint.h>
#include <sys/types.h>

#define MEMWATCH_MAX_PROCS	8192	/* /proc entries looked at */

struct memwatch_sample {
	uint64_t	 anon;		/* bytes, summed */
	unsigned	 nprocs;	/* descendants counted */
	pid_t		 top_pid;	/* the largest of them */
	uint64_t	 top_anon;
	char		 top_comm[16];
	int		 truncated;	/* more than MEMWATCH_MAX_PROCS */
};

struct memwatch;

struct memwatch *memwatch_alloc(void);
void	 memwatch_free(struct memwatch *mw);	/* NULL: no-op */

/* Sum over every descendant of root (not root itself).  0, or -1 with
 * errno if /proc cannot be read. */
int	 memwatch_sample(struct memwatch *mw, pid_t root,
	    struct memwatch_sample *out);

#endif
