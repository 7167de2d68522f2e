#!/usr/bin/env python3
"""tests/reaped.py [-q] COMMAND...: run a test run (`make check`) as the
child subreaper of everything it starts, and fail when any of it outlives
the run.  -q: COMMAND's output goes to /dev/null (the report does not).

Every process the run starts, however it detaches — a backgrounded shell
function's child, a double fork, a new session, a cleared environment, a
PID namespace's init — is re-parented to this process when its parent
dies, never to init (PR_SET_CHILD_SUBREAPER).  While COMMAND runs the
orphans that exit are reaped.  When it has exited, what is still below
this process after a 10 s grace is named (pid, command line), stopped
(SIGTERM, SIGKILL after 2 s) and the exit status is 1; else COMMAND's.

Nothing is exempt: PostgreSQL is started and stopped by each scenario that
needs it (tests/regress/lib-pg.sh), every daemon and session by the test
that starts it.  A process left behind is a test that does not clean up.
"""
import ctypes
import os
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
GRACE = 10.0


def children(pid):
    """The pids whose parent is pid."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                stat = f.read()
        except OSError:
            continue
        # the command may hold spaces and parentheses: fields after the last ')'
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(d))
    return out


def tree(pid):
    """pid's descendants, parents before children."""
    out = []
    for c in children(pid):
        out.append(c)
        out.extend(tree(c))
    return out


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "(gone)"


def reap():
    """Collect every exited child without blocking."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def main():
    argv, quiet = sys.argv[1:], False
    if argv[:1] == ["-q"]:
        argv, quiet = argv[1:], True
    if not argv:
        sys.exit("usage: reaped.py [-q] COMMAND...")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("reaped.py: prctl(PR_SET_CHILD_SUBREAPER): %s"
                 % os.strerror(ctypes.get_errno()))
    run = os.fork()
    if run == 0:
        if quiet:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
        os.execvp(argv[0], argv)
    status = None
    while status is None:       # the run, and the orphans it leaves meanwhile
        pid, st = os.wait()
        if pid == run:
            status = os.waitstatus_to_exitcode(st)
    me = os.getpid()
    end = time.monotonic() + GRACE
    while tree(me) and time.monotonic() < end:
        reap()
        time.sleep(0.2)
    reap()
    left = tree(me)
    if not left:
        return status if status >= 0 else 128 - status
    print("the test run left these processes running:")
    for pid in left:
        print("  left: %d %s" % (pid, cmdline(pid)))
    for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 1.0)):
        for pid in tree(me):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        end = time.monotonic() + wait
        while tree(me) and time.monotonic() < end:
            reap()
            time.sleep(0.1)
    reap()
    return 1


if __name__ == "__main__":
    sys.exit(main())
