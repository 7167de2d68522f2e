#!/usr/bin/env python3
"""guide.py GUIDE.md DIR: run a guide's ```console blocks as written.

Each "$ " line (with its backslash continuations) is run in one bash
started in DIR, one after another, as a user types them (variables
carry over); "$ echo $?" after a command gives the status it must exit
with, 0 otherwise.
The lines shown after a command must each appear in its output (stdout
and stderr), whitespace runs read as one space and what differs from run
to run read as one token: numbers of five digits or more (ports, times),
hex strings of 12 or more (hashes) and session ids ("s-" and 16
characters); a "..." line stands for output not shown (timings).  Prints "PASS|FAIL description" per command.
"""
import re
import shutil
import subprocess
import sys
import tempfile


def blocks(text):
    """Yield (command, shown output lines) in order."""
    inside = False
    cmd, shown = None, []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            if inside and cmd is not None:
                yield cmd, shown
            inside = not inside and line.strip() == "```console"
            cmd, shown = None, []
        elif inside and line.startswith("$ "):
            if cmd is not None:
                yield cmd, shown
            cmd, shown = line[2:], []
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd[:-1] + " " + lines[i].strip()
        elif inside and cmd is not None:
            shown.append(line)
        i += 1


def norm(s):
    s = re.sub(r"\bs-[A-Za-z0-9_-]{16}\b", "s-ID", " ".join(s.split()))
    s = re.sub(r"\b[0-9a-f]{12,}\b", "HEX", s)
    return re.sub(r"[0-9]{5,}", "N", s)


class Shell:
    """One bash, as a user's terminal: variables and cwd carry over."""

    def __init__(self, where):
        self.tmp = tempfile.mkdtemp(prefix="guide.")
        self.sh = subprocess.Popen(["bash"], cwd=where, text=True,
                                   stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE)

    def run(self, cmd):
        out, rc = f"{self.tmp}/out", f"{self.tmp}/rc"
        self.sh.stdin.write(f"{{ {cmd}\n}} < /dev/null > {out} 2>&1; "
                            f"echo $? > {rc}; echo @done\n")
        self.sh.stdin.flush()
        while self.sh.stdout.readline().strip() != "@done":
            pass
        return int(open(rc).read()), open(out, errors="replace").read()

    def close(self):
        self.sh.stdin.close()
        self.sh.wait()
        shutil.rmtree(self.tmp)


def main():
    guide, where = sys.argv[1], sys.argv[2]
    steps = list(blocks(open(guide, encoding="utf-8").read()))
    sh = Shell(where)
    fails = 0
    for i, (cmd, shown) in enumerate(steps):
        if cmd == "echo $?":
            continue
        want = 0
        if i + 1 < len(steps) and steps[i + 1][0] == "echo $?":
            want = int(steps[i + 1][1][0])
        rc, out = sh.run(cmd)
        got = {norm(l) for l in out.split("\n")}
        missing = [l for l in shown if l.strip() not in ("", "...")
                   and norm(l) not in got]
        ok = not missing and rc == want
        fails += not ok
        why = f"exit {rc}, want {want}"
        if missing:
            why += f"; not printed: {missing[0][:70]}"
        print(f"{'PASS' if ok else 'FAIL'} $ {cmd[:56]} ({why})", flush=True)
        if not ok:
            sys.stderr.write(out)
    sh.close()
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
