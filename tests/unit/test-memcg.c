/*
 * tests/unit/test-memcg.c — supervisor/memcg.c: its parsers of
 * /proc/self/cgroup, /proc/self/mountinfo and controller lists, then the
 * real thing.  Where this kernel offers a cgroup v2 memory controller to
 * root, a cgroup is made with memory.max, a child joins it, and a child
 * that allocates past the limit is killed by the kernel (oom_kill counted);
 * elsewhere memcg_create() must say why not, and that part is a SKIP with
 * the reason.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/memcg.h"
#include "tests/tap.h"

static void
test_parsers(void)
{
	char out[256];

	tap_ok(memcg_parse_self("12:memory:/x\n0::/system.slice/a.service\n",
	    out, sizeof(out)) == 0 && strcmp(out, "/system.slice/a.service") ==
	    0, "0:: line found among v1 lines: %s", out);
	tap_ok(memcg_parse_self("0::/\n", out, sizeof(out)) == 0 &&
	    strcmp(out, "/") == 0, "the root cgroup");
	tap_ok(memcg_parse_self("4:memory:/a\n1:cpu:/\n", out, sizeof(out)) ==
	    -1, "v1 only: no 0:: line");
	tap_ok(memcg_parse_self("0::\n", out, sizeof(out)) == -1,
	    "an empty path is refused");
	tap_ok(memcg_parse_mount("25 30 0:22 / /sys/fs/cgroup/memory rw - "
	    "cgroup cgroup rw,memory\n36 25 0:31 / /sys/fs/cgroup/unified "
	    "rw,relatime shared:9 - cgroup2 cgroup2 rw\n", out,
	    sizeof(out)) == 0 && strcmp(out, "/sys/fs/cgroup/unified") == 0,
	    "the cgroup2 mount, not the v1 one: %s", out);
	tap_ok(memcg_parse_mount("36 25 0:31 / /sys/fs/cgroup\\040x rw - "
	    "cgroup2 cgroup2 rw\n", out, sizeof(out)) == 0 &&
	    strcmp(out, "/sys/fs/cgroup x") == 0, "\\040 decoded");
	tap_ok(memcg_parse_mount("36 25 0:31 /sub /mnt/cg rw - cgroup2 cgroup2 "
	    "rw\n", out, sizeof(out)) == -1, "a bind of a subtree is not the "
	    "hierarchy's root");
	tap_ok(memcg_parse_mount("36 25 0:31 / /x rw - tmpfs cgroup2 rw\n",
	    out, sizeof(out)) == -1, "the type field, not the source, counts");
	tap_ok(memcg_has_controller("cpu io memory pids\n", "memory") &&
	    memcg_has_controller("memory", "memory") &&
	    !memcg_has_controller("hugetlb\n", "memory") &&
	    !memcg_has_controller("xmemory memoryx", "memory"),
	    "controller lists: whole words only");
}

/* Where the kernel allows: a cgroup, a child in it, the OOM killer. */
static void
test_live(void)
{
	struct memcg mc;
	char why[384], name[64];
	int r, st;
	pid_t pid;

	snprintf(name, sizeof(name), "cdsgate-test-memcg-%d", (int)getpid());
	r = memcg_create(&mc, name, 64 << 20, why, sizeof(why));
	if (r == MEMCG_EUNAVAIL) {
		tap_ok(why[0] != '\0' && !memcg_active(&mc), "unavailable, "
		    "with a reason: %s", why);
		tap_skip("cgroup v2 memory controller: %s", why);
		return;
	}
	tap_ok(r == MEMCG_OK && memcg_active(&mc), "made %s (%s)", mc.path,
	    r == MEMCG_OK ? "ok" : why);
	if (r != MEMCG_OK)
		return;
	tap_ok(memcg_oom_kills(&mc) == 0, "no OOM kill yet");
	if ((pid = fork()) == 0) {
		static char big[256 << 20];

		if (memcg_join(&mc) != 0)
			_exit(2);
		memset(big, 1, sizeof(big));	/* 256 MiB in a 64 MiB cgroup */
		_exit(0);
	}
	waitpid(pid, &st, 0);
	tap_ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "a child that "
	    "touches 256 MiB in it is killed (status %d)", st);
	tap_ok(memcg_oom_kills(&mc) >= 1, "memory.events counts the OOM kill "
	    "(%ld)", memcg_oom_kills(&mc));
	memcg_destroy(&mc);
	tap_ok(access(mc.path, F_OK) != 0 || mc.path[0] == '\0',
	    "destroyed: the cgroup is gone");
}

int
main(void)
{
	test_parsers();
	if (geteuid() == 0)
		test_live();
	else
		tap_skip("not root: no cgroup is made");
	return tap_done();
}
