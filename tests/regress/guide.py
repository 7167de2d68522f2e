#!/usr/bin/env python3
"""guide.py GUIDE.md DIR [EXAMPLE=ACTUAL ...]: run a guide's ```console
blocks as written.  guide.py --list GUIDE.md: print each command, one a
line (a test runs a no-run one its own way, e.g. a viewer under Xvfb).

Each "$ " line (with its backslash continuations) is run in one bash
started in DIR, one after another, as a user types them (variables
carry over); "$ echo $?" after a command gives the status it must exit
with, 0 otherwise.
The lines shown after a command must each appear in its output (stdout
and stderr), whitespace runs read as one space and what differs from run
to run read as one token: numbers of five digits or more (ports, times),
hex strings of 12 or more (hashes, and colon-separated fingerprints),
base64 digests, session ids ("s-" and 16 characters), noVNC link tokens
(20 or more characters), 24-character secrets, ISO times, process ids in audit records;
a "..." line stands for output not shown (timings), and "..." inside a
line for any text.
A block opened as "```console no-run: REASON" is not run (a viewer that
needs a person at a desktop): each of its commands is reported as
skipped with the reason, never silently left out.
EXAMPLE=ACTUAL replaces a value the guide shows (its example session's
port, a site's path) by the one of the run, in commands and in output.
Prints "PASS|FAIL|SKIP description" per command.
"""
import re
import shutil
import subprocess
import sys
import tempfile


def blocks(text):
    """Yield (command, shown output lines, why not run or None) in order."""
    inside, norun = False, None
    cmd, shown = None, []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            if inside and cmd is not None:
                yield cmd, shown, norun
            info = line[3:].strip()
            inside = not inside and (info == "console" or
                                     info.startswith("console no-run:"))
            norun = info.split(":", 1)[1].strip() if inside and \
                info != "console" else None
            cmd, shown = None, []
        elif inside and line.startswith("$ "):
            if cmd is not None:
                yield cmd, shown, norun
            cmd, shown = line[2:], []
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd[:-1] + " " + lines[i].strip()
        elif inside and cmd is not None:
            shown.append(line)
        i += 1


def norm(s):
    s = " ".join(s.split())
    s = re.sub(r"\bs-[A-Za-z0-9_-]{16}(?![A-Za-z0-9_-])", "s-ID", s)
    s = re.sub(r"token(=|%3D)[A-Za-z0-9_-]{20,}", r"token\1TOKEN", s)
    s = re.sub(r"\b[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9:]+)?",
               "TIME", s)
    s = re.sub(r"\b[0-9A-F]{2}(:[0-9A-F]{2}){15,}\b", "HEX", s)
    s = re.sub(r"\b[0-9a-f]{12,}\b", "HEX", s)
    s = re.sub(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{43}=", "B64", s)
    s = re.sub(r"(?<![A-Za-z0-9_-])(?=[A-Za-z0-9_-]*[a-z])"
               r"(?=[A-Za-z0-9_-]*[A-Z])[A-Za-z0-9_-]{24}(?![A-Za-z0-9_-])",
               "SECRET", s)
    s = re.sub(r'"by_(pid|uid)":[0-9]+', r'"by_\1":N', s)
    return re.sub(r"[0-9]{5,}", "N", s)


def shown_in(line, got):
    """Is the shown line among the output lines ("..." inside: any)?"""
    want = norm(line)
    if "..." not in want:
        return want in got
    pat = re.compile(".*".join(re.escape(p) for p in want.split("...")))
    return any(pat.fullmatch(g) for g in got)


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
    if sys.argv[1] == "--list":
        for cmd, _, _ in blocks(open(sys.argv[2], encoding="utf-8").read()):
            print(cmd)
        return 0
    guide, where = sys.argv[1], sys.argv[2]
    subs = [a.split("=", 1) for a in sys.argv[3:]]
    text = open(guide, encoding="utf-8").read()
    steps = list(blocks(text))
    sh = Shell(where)
    fails = 0
    for i, (cmd, shown, norun) in enumerate(steps):
        if cmd == "echo $?":
            continue
        if norun is not None:
            print(f"SKIP $ {cmd[:56]} (not run: {norun})", flush=True)
            continue
        for ex, actual in subs:
            cmd = cmd.replace(ex, actual)
            shown = [l.replace(ex, actual) for l in shown]
        want = 0
        if i + 1 < len(steps) and steps[i + 1][0] == "echo $?":
            want = int(steps[i + 1][1][0])
        rc, out = sh.run(cmd)
        got = {norm(l) for l in out.split("\n")}
        missing = [l for l in shown if l.strip() not in ("", "...")
                   and not shown_in(l, got)]
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
