/*
 * supervisor/memwatch.c — a session's memory, summed over its processes (see
 * memwatch.h).
 *
 * Runs in the supervisor (root).  Reads /proc/PID/stat (parent, name)
 * and /proc/PID/statm (pages) of every process; the names are chosen by
 * the processes themselves, so they are only copied, never parsed past
 * the last ')'.  A process that exits between the two reads is skipped.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/memwatch.h"

struct mw_proc {
	pid_t	 pid, ppid;
	int	 mine;		/* 1 a descendant of the root, -1 not,
				   0 not known yet */
	char	 comm[16];
};

struct memwatch {
	struct mw_proc	 p[MEMWATCH_MAX_PROCS];
	unsigned	 n;
	long		 page;
};

struct memwatch *
memwatch_alloc(void)
{
	struct memwatch *mw = calloc(1, sizeof(*mw));

	if (mw != NULL && (mw->page = sysconf(_SC_PAGESIZE)) <= 0)
		mw->page = 4096;
	return mw;
}

void
memwatch_free(struct memwatch *mw)
{
	free(mw);
}

/* /proc/<pid>/<name> into buf (NUL-terminated); its length or -1. */
static ssize_t
proc_read(pid_t pid, const char *name, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* "pid (comm) S ppid ...": comm may hold anything, the last ')' ends it. */
static int
proc_stat(struct mw_proc *p)
{
	char buf[512], *open_paren, *close_paren;
	long ppid;
	size_t n;

	if (proc_read(p->pid, "stat", buf, sizeof(buf)) < 0 ||
	    (open_paren = strchr(buf, '(')) == NULL ||
	    (close_paren = strrchr(buf, ')')) == NULL ||
	    close_paren < open_paren ||
	    sscanf(close_paren + 1, " %*c %ld", &ppid) != 1)
		return -1;
	n = (size_t)(close_paren - open_paren - 1);
	if (n >= sizeof(p->comm))
		n = sizeof(p->comm) - 1;
	memcpy(p->comm, open_paren + 1, n);
	p->comm[n] = '\0';
	p->ppid = (pid_t)ppid;
	return 0;
}

/* Every process's parent, from one pass over /proc. */
static int
table_fill(struct memwatch *mw, int *truncated)
{
	struct dirent *de;
	DIR *d;

	mw->n = 0;
	*truncated = 0;
	if ((d = opendir("/proc")) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		if (mw->n == MEMWATCH_MAX_PROCS) {
			*truncated = 1;
			break;
		}
		memset(&mw->p[mw->n], 0, sizeof(mw->p[0]));
		mw->p[mw->n].pid = (pid_t)atol(de->d_name);
		if (proc_stat(&mw->p[mw->n]) == 0)
			mw->n++;
	}
	closedir(d);
	return 0;
}

static int
proc_cmp(const void *a, const void *b)
{
	const struct mw_proc *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The entry of pid in the pid-sorted table, or NULL. */
static struct mw_proc *
table_find(struct memwatch *mw, pid_t pid)
{
	struct mw_proc key = { .pid = pid };

	return bsearch(&key, mw->p, mw->n, sizeof(mw->p[0]), proc_cmp);
}

/* Mark root's descendants (mine: 1 yes, -1 no): each process walks up
 * its parents until one is known, root, or pid 1/0; the walk's chain
 * then gets the answer.  O(n log n) per sample. */
static void
table_mark(struct memwatch *mw, pid_t root)
{
	struct mw_proc *chain[64], *q;
	unsigned i, k;
	int ans;

	qsort(mw->p, mw->n, sizeof(mw->p[0]), proc_cmp);
	for (i = 0; i < mw->n; i++) {
		for (k = 0, q = &mw->p[i], ans = 0; ans == 0; ) {
			if (q->mine != 0)
				ans = q->mine;
			else if (q->ppid == root)
				ans = 1;
			else if (q->ppid <= 1 || k == 63)
				ans = -1;
			chain[k++] = q;
			if (ans == 0 && (q = table_find(mw, q->ppid)) == NULL)
				ans = -1;
		}
		while (k > 0)
			chain[--k]->mine = ans;
	}
}

/* Private resident bytes of pid: statm's resident minus shared pages
 * (file-backed and shmem), i.e. RssAnon.  0 if it is gone. */
static uint64_t
proc_anon(const struct memwatch *mw, pid_t pid)
{
	unsigned long size, resident, shared;
	char buf[256];

	if (proc_read(pid, "statm", buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%lu %lu %lu", &size, &resident, &shared) != 3 ||
	    shared > resident)
		return 0;
	return (uint64_t)(resident - shared) * (uint64_t)mw->page;
}

int
memwatch_sample(struct memwatch *mw, pid_t root, struct memwatch_sample *out)
{
	uint64_t a;
	unsigned i;

	memset(out, 0, sizeof(*out));
	if (table_fill(mw, &out->truncated) != 0)
		return -1;
	table_mark(mw, root);
	for (i = 0; i < mw->n; i++) {
		if (mw->p[i].mine != 1)
			continue;
		a = proc_anon(mw, mw->p[i].pid);
		out->anon += a;
		out->nprocs++;
		if (a > out->top_anon) {
			out->top_anon = a;
			out->top_pid = mw->p[i].pid;
			memcpy(out->top_comm, mw->p[i].comm,
			    sizeof(out->top_comm));
		}
	}
	return 0;
}
