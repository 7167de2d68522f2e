/*
 * tests/unit/test-memwatch.c — supervisor/memwatch.c against the real
 * kernel: a grandchild that touches 64 MiB is counted under us and under
 * its parent, by its name, and not under itself; memory that is only
 * reserved, or shared, is not counted.
 */
#include "config.h"

#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/memwatch.h"
#include "tests/tap.h"

#define MIB		(UINT64_C(1) << 20)
#define TOUCHED		(64 * MIB)

/* A process named `name` that maps `len` bytes (touched if `touch`,
 * shared if `shared`), says so on fd `ready`, and waits to be killed. */
static void __attribute__((noreturn))
holder(const char *name, size_t len, int touch, int shared, int ready)
{
	char *p;

	prctl(PR_SET_NAME, name, 0, 0, 0);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, (shared ? MAP_SHARED :
	    MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(1);
	if (touch)
		memset(p, 1, len);
	if (write(ready, "x", 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

/* Fork a holder; wait until it is ready.  Its pid. */
static pid_t
spawn(const char *name, size_t len, int touch, int shared)
{
	int fds[2];
	char c;
	pid_t pid;

	if (pipe(fds) != 0 || (pid = fork()) < 0)
		return -1;
	if (pid == 0)
		holder(name, len, touch, shared, fds[1]);
	close(fds[1]);
	if (read(fds[0], &c, 1) != 1)
		pid = -1;
	close(fds[0]);
	return pid;
}

int
main(void)
{
	struct memwatch *mw = memwatch_alloc();
	struct memwatch_sample s, mid, leaf;
	int fds[2], st;
	pid_t mid_pid, gc = -1, res, shm;
	char c;

	if (pipe(fds) != 0 || (mid_pid = fork()) < 0)
		return 1;
	if (mid_pid == 0) {	/* the middle: forks the 64 MiB grandchild */
		close(fds[0]);
		prctl(PR_SET_NAME, "mw-middle", 0, 0, 0);
		gc = spawn("mw-grandchild", TOUCHED, 1, 0);
		if (write(fds[1], &gc, sizeof(gc)) != sizeof(gc))
			_exit(1);
		for (;;)
			pause();
	}
	close(fds[1]);
	if (read(fds[0], &gc, sizeof(gc)) != sizeof(gc) || gc <= 0)
		return 1;
	res = spawn("mw-reserved", 512 * MIB, 0, 0);
	shm = spawn("mw-shared", TOUCHED, 1, 1);

	tap_ok(mw != NULL && memwatch_sample(mw, getpid(), &s) == 0,
	    "a sample of our descendants");
	tap_ok(s.nprocs == 4 && !s.truncated, "4 descendants (middle, "
	    "grandchild, reserved, shared): %u", s.nprocs);
	/* Each forked copy of this process has private pages of its own
	   (under ASan a few MiB of allocator and shadow each): the margin
	   allows that for four, and still fails if the 64 MiB shared or
	   the 512 MiB reserved mapping were counted. */
	tap_ok(s.anon >= TOUCHED && s.anon < TOUCHED + 40 * MIB,
	    "their private resident memory is the grandchild's 64 MiB "
	    "(%.1f MiB): reserved and shared memory not counted",
	    (double)s.anon / MIB);
	tap_ok(s.top_pid == gc && strcmp(s.top_comm, "mw-grandchild") == 0,
	    "the largest is the grandchild, by pid and name (%s)", s.top_comm);
	st = memwatch_sample(mw, mid_pid, &mid);
	tap_ok(st == 0 && mid.nprocs == 1 && mid.top_pid == gc &&
	    mid.anon >= TOUCHED, "under its parent: the grandchild alone "
	    "(%u)", mid.nprocs);
	st = memwatch_sample(mw, gc, &leaf);
	tap_ok(st == 0 && leaf.nprocs == 0 && leaf.anon == 0, "under itself: "
	    "nothing (a root is not its own descendant)");

	kill(gc, SIGKILL);
	kill(mid_pid, SIGKILL);
	kill(res, SIGKILL);
	kill(shm, SIGKILL);
	while (waitpid(-1, &st, 0) > 0)
		;
	tap_ok(memwatch_sample(mw, getpid(), &s) == 0 && s.nprocs == 0 &&
	    s.anon == 0, "all gone: nothing counted");
	(void)c;
	memwatch_free(mw);
	memwatch_free(NULL);
	return tap_done();
}
