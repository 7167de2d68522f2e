#!/usr/bin/env bash
# 023-browser-jail: the session's browser reaches only the backend (docs/jail.md).
#  A real session (tests/gateway/backend.py, cdsgated
# run-session, cdsgate-vnctest) with a decoy listener on another port of
# 127.0.0.1, then, from inside the browser's namespaces as the browser's user
# (nsenter -t BROWSER -n -m -p -r -w) and from the page itself (fetch):
#   1. the backend works (the page renders; HTTP through the forwarder)
#   2. the decoy port, public addresses, DNS and Xvfb's abstract socket fail
#   3. /run/cdsgate of other sessions, /root, /home, the host's /tmp are not
#      there; only this session's X socket is; the root is read-only
#   4. the browser has its own net, pid and mnt namespaces; renderers keep
#      Chromium's sandbox (Seccomp: 2, their own user namespace)
#   5. a killed browser comes back and its old pid namespace is empty;
#      SIGTERM leaves nothing; a jail that cannot be set up fails the start
# Needs root, Xvfb, Chromium, nsenter, unshare; skips (with the reason)
# otherwise.
. "$(dirname "$0")/lib.sh"

CDSGATED=${CDSGATED:-$top_builddir/cdsgated}
VNCTEST=${VNCTEST:-$top_builddir/tests/gateway/cdsgate-vnctest}
BACKEND=$top_srcdir/tests/gateway/backend.py
BROWSER_USER=${BROWSER_USER:-cdsgate-browser}

[ "$(id -u)" -eq 0 ] || skip_all "needs root (cdsgated runs the session as its own users)"
[ -x "$CDSGATED" ] || skip_all "cdsgated not built at $CDSGATED"
[ -x "$VNCTEST" ] || skip_all "cdsgate-vnctest not built at $VNCTEST"
command -v Xvfb >/dev/null || skip_all "Xvfb not installed"
[ -x /usr/lib/chromium/chromium ] || skip_all "chromium not installed (/usr/lib/chromium/chromium)"
command -v python3 >/dev/null || skip_all "python3 not installed"
command -v nsenter >/dev/null || skip_all "nsenter (util-linux) not installed"
command -v unshare >/dev/null || skip_all "unshare (util-linux) not installed"
BUID=$(id -u "$BROWSER_USER" 2>/dev/null) || skip_all "user $BROWSER_USER missing (./dev build creates it)"
BGID=$(id -g "$BROWSER_USER")

GW_PID=
BE_PID=
DECOY_PID=
ARTIFACTS=$top_builddir/tests/regress/023-browser-jail.artifacts
rm -rf "$ARTIFACTS"
cleanup() {
	local p
	if [ "$tap_failed" -gt 0 ] && mkdir -p "$ARTIFACTS" 2>/dev/null; then
		cp "$TMP"/*.ppm "$TMP"/*.log "$TMP"/*.jsonl "$TMP"/*.out "$TMP"/*.err \
			"$ARTIFACTS"/ 2>/dev/null
		echo "# failed: logs kept in $ARTIFACTS"
	fi
	for p in $GW_PID $BE_PID $DECOY_PID $NS6; do
		kill -TERM "$p" 2>/dev/null || continue
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT

# ---- helpers -------------------------------------------------------------
# Host side: the decoy listener, the session log, page events, pixels.
cat > "$TMP/host.py" <<'PY'
import json, re, socket, sys, time

def log(path):
    out = []
    for line in open(path, encoding='utf-8', errors='replace'):
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out

def events(path):
    return log(path)

cmd, a = sys.argv[1], sys.argv[2:]
if cmd == 'decoy':                      # FILE: listen, note every connection
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    s.listen(16)
    print('ready %d' % s.getsockname()[1], flush=True)
    while True:
        c, peer = s.accept()
        with open(a[0], 'a') as f:
            f.write('%s:%d\n' % peer)
        c.close()
elif cmd == 'role-pid':                 # LOG ROLE -> pid of its last start
    pids = [e['pid'] for e in log(a[0]) if e.get('event') == 'child_start'
            and e.get('role') == a[1]]
    print(pids[-1] if pids else '')
elif cmd == 'log-count':                # LOG EVENT [KEY=VALUE]
    n = 0
    for e in log(a[0]):
        if e.get('event') != a[1]:
            continue
        if len(a) > 2 and str(e.get(a[2].split('=')[0])) != a[2].split('=')[1]:
            continue
        n += 1
    print(n)
elif cmd == 'net-bytes':                # LOG -> connections with bytes both ways
    print(sum(1 for e in log(a[0]) if e.get('event') == 'net_close'
              and e.get('bytes_up', 0) > 0 and e.get('bytes_down', 0) > 0))
elif cmd == 'wait-load':                # EVENTS TIMEOUT
    end = time.time() + float(a[1])
    while time.time() < end:
        if any(e.get('type') == 'load' for e in events(a[0])):
            sys.exit(0)
        time.sleep(0.2)
    sys.exit(1)
elif cmd == 'probe':                    # EVENTS TARGET ok|failed TIMEOUT
    end = time.time() + float(a[3])
    while time.time() < end:
        for e in events(a[0]):
            if e.get('type') == 'probe' and e.get('target') == a[1]:
                print('# fetch %s: ok=%s %s' % (a[1], e.get('ok'), e.get('err') or e.get('status')))
                sys.exit(0 if e.get('ok') == (a[2] == 'ok') else 1)
        time.sleep(0.2)
    print('# no probe event for %s' % a[1])
    sys.exit(1)
elif cmd == 'banner':                   # PPM: the backend's banner is on screen
    d = open(a[0], 'rb').read()
    m = re.match(rb'P6\s+(\d+)\s+(\d+)\s+255\s', d)
    w, px = int(m.group(1)), d[m.end():]
    good = n = 0
    for y in range(10, 150, 5):
        for x in range(10, w - 10, 7):
            i = 3 * (y * w + x)
            n += 1
            good += all(abs(px[i + k] - (216, 27, 96)[k]) <= 40 for k in range(3))
    print('# banner: %.1f%% of sampled pixels' % (100.0 * good / n))
    sys.exit(0 if good >= 0.9 * n else 1)
PY
host() { python3 "$TMP/host.py" "$@"; }

# Jail side: run by python3 inside the browser's namespaces (the jail has no
# view of $TMP, so the code goes in as an argument).  Each command prints one
# line and exits 0 when the outcome is the one named.
read -r -d '' JAILPY <<'PY'
import errno, os, socket, sys, time
cmd, a = sys.argv[1], sys.argv[2:]
def connect(host, port, timeout=3.0):
    fam = socket.AF_INET6 if ':' in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(timeout)
    t = time.time()
    try:
        s.connect((host, int(port)))
        return 'connected', time.time() - t, s
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e)), time.time() - t, None
if cmd == 'connect':                    # HOST PORT EXPECT(connected|ERRNO|failed)
    r, dt, s = connect(a[0], a[1])
    print('connect %s:%s -> %s in %.2fs' % (a[0], a[1], r, dt))
    ok = r == a[2] or (a[2] == 'failed' and r != 'connected')
    sys.exit(0 if ok and dt < 2.5 else 1)
elif cmd == 'http':                     # HOST PORT: GET / through the jail
    r, dt, s = connect(a[0], a[1])
    if s is None:
        print('connect failed: %s' % r); sys.exit(1)
    s.sendall(b'GET / HTTP/1.1\r\nHost: %s:%s\r\nConnection: close\r\n\r\n' % (a[0].encode(), a[1].encode()))
    data = b''
    while True:
        b = s.recv(65536)
        if not b: break
        data += b
    print(data.split(b'\r\n')[0].decode(), len(data), 'bytes')
    sys.exit(0 if data.startswith(b'HTTP/1.') and b' 200 ' in data[:20] and b'cdsgate test backend' in data else 1)
elif cmd == 'flood':                    # HOST PORT N: N connections at once
    ss = []
    for i in range(int(a[2])):
        r, dt, s = connect(a[0], a[1])
        if s:
            ss.append(s)
    time.sleep(1.0)
    closed = 0
    for s in ss:
        s.setblocking(False)
        try:
            closed += s.recv(1) == b''
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    print('%d connected, %d closed at once by the forwarder' % (len(ss), closed))
    sys.exit(0 if len(ss) == int(a[2]) and int(a[2]) - 64 <= closed < int(a[2]) else 1)
elif cmd == 'hosts':                    # NAME ADDR: /etc/hosts maps it
    ok = any(l.split()[:2] == [a[1], a[0]] for l in open('/etc/hosts') if l.strip() and not l.startswith('#'))
    print('/etc/hosts: %s' % ' | '.join(l.strip() for l in open('/etc/hosts') if not l.startswith('#')))
    sys.exit(0 if ok else 1)
elif cmd == 'dns':                      # NAME: resolution fails, fast
    t = time.time()
    try:
        r = socket.getaddrinfo(a[0], 443)
        print('resolved %s: %s' % (a[0], r[0][4])); sys.exit(1)
    except socket.gaierror as e:
        print('getaddrinfo %s: %s in %.2fs' % (a[0], e, time.time() - t))
        sys.exit(0 if time.time() - t < 2 else 1)
elif cmd == 'no-routes':                # only lo's own routes
    v4 = [l.split() for l in open('/proc/net/route').read().splitlines()[1:]]
    v6 = [l.split() for l in open('/proc/net/ipv6_route').read().splitlines()]
    ifs = sorted(set(l[0] for l in v4) | set(l[-1] for l in v6))
    defaults = [l for l in v6 if l[0] == '0' * 32 and l[-1] != 'lo']
    print('route interfaces: %s; v4 routes %d; v6 defaults %d; links %s' % (
        ifs, len(v4), len(defaults), sorted(os.listdir('/sys/class/net')) if os.path.isdir('/sys/class/net') else
        [l.split(':')[0].strip() for l in open('/proc/net/dev').read().splitlines()[2:]]))
    links = [l.split(':')[0].strip() for l in open('/proc/net/dev').read().splitlines()[2:]]
    sys.exit(0 if not v4 and not defaults and links == ['lo'] else 1)
elif cmd == 'unix':                     # PATH|@ABSTRACT EXPECT
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    p = '\0' + a[0][1:] if a[0].startswith('@') else a[0]
    try:
        s.connect(p); r = 'connected'
    except OSError as e:
        r = errno.errorcode.get(e.errno, str(e))
    print('connect unix %s -> %s' % (a[0], r))
    sys.exit(0 if r == a[1] or (a[1] == 'failed' and r != 'connected') else 1)
elif cmd == 'ls':                       # DIR: its entries, one line
    try:
        print(' '.join(sorted(os.listdir(a[0]))))
    except OSError as e:
        print('-', errno.errorcode.get(e.errno)); sys.exit(1)
elif cmd == 'absent':                   # PATH...: none of them exists
    bad = [p for p in a if os.path.lexists(p)]
    print('present: %s' % bad if bad else 'absent: %s' % ' '.join(a))
    sys.exit(1 if bad else 0)
elif cmd == 'mounts':                   # the jail's mount points and options
    for l in open('/proc/self/mountinfo'):
        f = l.split()
        print(f[4], f[5].split(',')[0], f[f.index('-') + 1])
elif cmd == 'ro':                       # PATH...: each is on a read-only mount
    mi = {}
    for l in open('/proc/self/mountinfo'):
        f = l.split()
        mi[f[4]] = f[5]
    bad = []
    for p in a:
        best = max((m for m in mi if p == m or p.startswith(m.rstrip('/') + '/')), key=len)
        if not mi[best].startswith('ro'):
            bad.append('%s (on %s, %s)' % (p, best, mi[best]))
    print('writable: %s' % bad if bad else 'read-only: %s' % ' '.join(a))
    sys.exit(1 if bad else 0)
elif cmd == 'procs':                    # what the jail's /proc shows
    ps = [p for p in os.listdir('/proc') if p.isdigit()]
    uids = set(os.stat('/proc/' + p).st_uid for p in ps)
    print('%d processes, uids %s, pid 1 is %s' % (len(ps), sorted(uids),
          open('/proc/1/comm').read().strip()))
    sys.exit(0 if uids == {int(a[0])} else 1)
PY
# injail COMMAND ARGS...: run the jail-side check in the browser's namespaces
# as the browser user; its line goes to the TAP output as a comment.
injail() {
	local out rc
	out=$(nsenter -t "$BPID" -n -m -p -r -w -S "$BUID" -G "$BGID" \
		python3 -c "$JAILPY" "$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/#   /'
	return $rc
}

# browser_of INIT: the Chromium browser process under the jail's init.
browser_of() {
	local c
	for c in $(pgrep -P "$1" 2>/dev/null); do
		[ "$(cat "/proc/$c/comm" 2>/dev/null)" = chromium ] && { echo "$c"; return 0; }
	done
	return 1
}

# jail_procs INIT: "pid:start-time" of the jail's init, everything in its pid
# namespace and the browser's processes in nested ones (Chromium's sandbox).
# A namespace's inode number is reused once it is gone, so a process is
# known by pid and start time.
jail_procs() {
	local p ns
	ns=$(readlink "/proc/$1/ns/pid") || return 0
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$ns" ] ||
			tr '\0' ' ' 2>/dev/null < "$p/cmdline" | grep -q "sessions/$SID/browser" ||
			continue
		echo -n "${p#/proc/}:$(awk '{print $22}' "$p/stat" 2>/dev/null) "
	done
}

# still_running "PID:START ...": those that still run, the same processes.
still_running() {
	local e
	for e in $1; do
		[ "$(awk '{print $22}' "/proc/${e%%:*}/stat" 2>/dev/null)" = "${e##*:}" ] &&
			echo -n "${e%%:*} "
	done
}

# snapshot FILE: a VNC snapshot of the session at $ADDR, retried for up to
# 8 s until it shows the banner (the first paint may still be coming).
snapshot() {
	rm -f "$1"
	for _ in 1 2 3 4 5 6 7 8; do
		"$VNCTEST" --host "${ADDR%:*}" --port "${ADDR##*:}" --password-file "$TMP/pw" \
			snapshot "$1" > "$TMP/vnc.out" 2> "$TMP/vnc.err" &&
			host banner "$1" >/dev/null && return 0
		sleep 1
	done
	return 1
}

EV=$TMP/events.jsonl
LOG=$TMP/session.log

# ---- start the backend, the decoy and the session -------------------------
python3 "$BACKEND" --port 0 --record "$EV" > "$TMP/backend.out" 2> "$TMP/backend.err" &
BE_PID=$!
wait_line "$TMP/backend.out" '^ready ' 10 "$BE_PID" || skip_all "the test backend did not start"
BPORT=$(sed -n 's/^ready .*:\([0-9]*\)$/\1/p' "$TMP/backend.out")
# python3 itself in the background (not the host function: $! would be
# its subshell's pid, and the listener would outlive the cleanup)
python3 "$TMP/host.py" decoy "$TMP/decoy.hits" > "$TMP/decoy.out" 2> "$TMP/decoy.err" &
DECOY_PID=$!
wait_line "$TMP/decoy.out" '^ready ' 10 "$DECOY_PID" || skip_all "the decoy listener did not start"
DPORT=$(sed -n 's/^ready //p' "$TMP/decoy.out")
touch "$TMP/decoy.hits" "$TMP/host-only-marker"

python3 -c 'import secrets,string; print("".join(secrets.choice(string.ascii_letters+string.digits) for _ in range(8)))' > "$TMP/pw"
chmod 600 "$TMP/pw"
"$CDSGATED" run-session --record-dir "$TMP/rec" --backend "http://127.0.0.1:$BPORT/?probe=$DPORT" \
	--listen "127.0.0.1:$(free_port)" --password-file "$TMP/pw" --log "$LOG" \
	> "$TMP/gw.out" 2> "$TMP/gw.err" &
GW_PID=$!
if ! wait_line "$TMP/gw.out" '^ready ' 30 "$GW_PID"; then
	not_ok "cdsgated run-session prints ready"
	tail -15 "$TMP/gw.err" | sed "s/^/# /"
	done_testing
	exit 1
fi
ok "cdsgated run-session prints ready"
ADDR=$(sed -n 's/^ready //p' "$TMP/gw.out" | head -1)
SID=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["session"])' "$LOG")

# ---- 1. the backend works through the jail --------------------------------
check "the backend page loaded in the jailed browser" host wait-load "$EV" 20
snapshot "$TMP/s1.ppm"
check "the page renders: the VNC snapshot shows the backend's banner" host banner "$TMP/s1.ppm"
check "the log names the forwarder's backend (browser_net)" \
	test "$(host log-count "$LOG" browser_net backend="127.0.0.1:$BPORT")" -eq 1
check "the forwarder runs as $BROWSER_USER (child_start role forward)" \
	test "$(host log-count "$LOG" child_start user="$BROWSER_USER")" -ge 2

INIT=$(host role-pid "$LOG" browser)
BPID=$(browser_of "$INIT")
if [ -z "$BPID" ]; then
	not_ok "found the browser under the jail's init (pid ${INIT:-none})"
	ps -eo user,pid,ppid,comm | grep -E "chrom|cdsgate" | head | sed "s/^/# /"
	done_testing
	exit 1
fi
ok "the browser (pid $BPID) runs under the jail's init (pid $INIT)"
check "the jail's init is pid 1 of its namespace, the browser pid 2" \
	test "$(awk '/^NSpid/ {print $3}' "/proc/$INIT/status") $(awk '/^NSpid/ {print $3}' "/proc/$BPID/status")" = "1 2"
check "from inside, HTTP to the backend (127.0.0.1:$BPORT) works" injail http 127.0.0.1 "$BPORT"

# ---- 2. nothing else is reachable ------------------------------------------
check "from inside, the decoy port 127.0.0.1:$DPORT is refused" \
	injail connect 127.0.0.1 "$DPORT" ECONNREFUSED
check "from inside, another port on ::1 is refused" injail connect ::1 "$DPORT" failed
if injail no-routes; then
	ok "the jail has only lo and no route off it"
	# No route: these fail inside the kernel, no packet leaves the jail.
	check "from inside, 1.1.1.1:443 is unreachable" injail connect 1.1.1.1 443 ENETUNREACH
	check "from inside, 8.8.8.8:53 is unreachable" injail connect 8.8.8.8 53 ENETUNREACH
	check "from inside, [2606:4700:4700::1111]:443 is unreachable" \
		injail connect 2606:4700:4700::1111 443 failed
	check "from inside, DNS resolution fails at once" injail dns example.com
else
	not_ok "the jail has only lo and no route off it"
	skip "public addresses and DNS not tried: the jail has a route out"
fi
DISP=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("event") == "display_ready": print(e["display"][1:])' "$LOG")
check "from inside, Xvfb's abstract socket @/tmp/.X11-unix/X$DISP is unreachable" \
	injail unix "@/tmp/.X11-unix/X$DISP" failed
check "from inside, the session's X socket file works" \
	injail unix "/tmp/.X11-unix/X$DISP" connected
check "the page's own fetch() to the backend works" host probe "$EV" backend ok 15
check "the page's own fetch() to 127.0.0.1:$DPORT fails" host probe "$EV" other failed 15
sleep 0.5
check "the decoy listener never saw a connection" test ! -s "$TMP/decoy.hits"
check "the forwarder logged connections with bytes both ways" \
	test "$(host net-bytes "$LOG")" -ge 1
check "80 connections at once: the forwarder keeps at most 64, closes the rest" \
	injail flood 127.0.0.1 "$BPORT" 80
check "and logs net_refused for them" \
	test "$(host log-count "$LOG" net_refused why="connection cap")" -ge 16

# ---- 3. what the jail shows ---------------------------------------------------
check "only this session's X socket is in the jail (X$DISP)" \
	test "$(injail ls /tmp/.X11-unix | sed 's/^#   //')" = "X$DISP"
check "/run/cdsgate/sessions in the jail holds only this session ($SID)" \
	test "$(injail ls /run/cdsgate/sessions | sed 's/^#   //')" = "$SID"
check "/root, /home, /srv, /opt, /mnt, /work, /var/lib, the host's /tmp files are not there" \
	injail absent /root /home /srv /opt /mnt /work /var/lib /var/tmp "$TMP" \
	"/run/cdsgate/sessions/$SID/x" "/run/cdsgate/sessions/$SID/supervisor.lock"
check "/ /usr /etc and the managed policy are read-only" \
	injail ro / /usr /etc /etc/chromium/policies/managed /etc/hosts /dev
check "/etc/resolv.conf names no server" \
	nsenter -t "$BPID" -m -r -S "$BUID" -G "$BGID" sh -c '! grep -q "^nameserver" /etc/resolv.conf'
check "the jail's /proc shows only the browser user's processes" injail procs "$BUID"
injail mounts > /dev/null

# ---- 4. namespaces and Chromium's own sandbox --------------------------------
for ns in net pid mnt; do
	check "the browser's $ns namespace differs from the supervisor's" \
		test "$(readlink "/proc/$BPID/ns/$ns")" != "$(readlink "/proc/$GW_PID/ns/$ns")"
done
FWD=$(host role-pid "$LOG" forward)
check "the forwarder (pid $FWD) is in the supervisor's network namespace" \
	test "$(readlink "/proc/$FWD/ns/net")" = "$(readlink "/proc/$GW_PID/ns/net")"
renderers=
for _ in $(seq 20); do
	for p in $(descendants "$INIT"); do
		tr '\0' ' ' 2>/dev/null < "/proc/$p/cmdline" | grep -q -- '--type=renderer' &&
			renderers="$renderers $p"
	done
	[ -n "$renderers" ] && break
	sleep 0.5
done
if [ -z "$renderers" ]; then
	not_ok "found the browser's renderer processes"
else
	bad=
	for p in $renderers; do
		[ "$(awk '/^Seccomp:/ {print $2}' "/proc/$p/status")" = 2 ] || bad="$bad $p"
	done
	check "every renderer ($(echo $renderers | wc -w)) runs under seccomp-bpf (Seccomp: 2)" test -z "$bad"
	p=$(echo $renderers | awk '{print $1}')
	check "renderers are in their own user namespace (Chromium's sandbox works in the jail)" \
		test "$(readlink "/proc/$p/ns/user")" != "$(readlink "/proc/$BPID/ns/user")"
fi

# ---- 5. restart, stop, fail closed ---------------------------------------------
OLD=$(jail_procs "$INIT")
OLDNET=$(readlink "/proc/$BPID/ns/net")
diag "the jail's processes before the kill: $OLD"
br0=$(host log-count "$LOG" browser_restart)
kill -KILL "$BPID"
for _ in $(seq 100); do
	[ "$(host log-count "$LOG" child_start role=browser)" -ge 2 ] && break
	sleep 0.1
done
check "the killed browser is started again" \
	test "$(host log-count "$LOG" browser_restart)" -gt "$br0" -a "$(host log-count "$LOG" child_start role=browser)" -ge 2
sleep 0.5
left=$(still_running "$OLD")
check "nothing of the old jail is left${left:+ (left: $left)}" test -z "$left"
INIT2=$(host role-pid "$LOG" browser)
for _ in $(seq 50); do BPID=$(browser_of "$INIT2") && break; sleep 0.2; done
check "the new browser (pid $BPID) is in the same network jail, pid 2 of a new pid namespace" \
	test "$(readlink "/proc/$BPID/ns/net")" = "$OLDNET" -a \
	"$(awk '/^NSpid/ {print $3}' "/proc/$BPID/status")" = 2 -a "$INIT2" != "$INIT"
check "the restarted browser still reaches the backend" injail http 127.0.0.1 "$BPORT"
snapshot "$TMP/s5.ppm"
check "the restarted browser shows the page again (VNC snapshot)" host banner "$TMP/s5.ppm"
NEW=$(jail_procs "$INIT2")

# The jail gets the socket inode its Xvfb made (pinned by the supervisor),
# never whatever the path holds: replace the file in the session's private
# X11-unix directory with a decoy server's socket and kill the browser; the
# restart must fail closed, the decoy must see nothing.
python3 - "/run/cdsgate/sessions/$SID/x/X11-unix/X$DISP" "$TMP/xdecoy.hits" > "$TMP/xdecoy.out" 2>&1 <<'PY' &
import os, socket, sys
os.unlink(sys.argv[1])
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777)
s.listen(8)
s.settimeout(20)
print('ready', flush=True)
try:
    while True:
        c, _ = s.accept()
        open(sys.argv[2], 'a').write('connection\n')
        c.close()
except socket.timeout:
    pass
finally:
    os.unlink(sys.argv[1])
PY
XDECOY=$!
wait_line "$TMP/xdecoy.out" '^ready' 10 "$XDECOY"
fails0=$(grep -c '"error":"jail:' "$LOG")
kill -KILL "$BPID"
for _ in $(seq 50); do
	[ "$(grep -c '"error":"jail:' "$LOG")" -gt "$fails0" ] && break
	sleep 0.1
done
check "with another socket at the X path, the restart fails closed (child_exit error jail: ...X$DISP)" \
	grep -q "\"error\":\"jail: [0-9]* /tmp/.X11-unix/X$DISP\"" "$LOG"
check "and the decoy X server saw no connection" test ! -s "$TMP/xdecoy.hits"
kill "$XDECOY" 2>/dev/null
wait "$XDECOY" 2>/dev/null
kill -TERM "$GW_PID"
rc=timeout
for _ in $(seq 150); do
	if ! kill -0 "$GW_PID" 2>/dev/null; then wait "$GW_PID"; rc=$?; break; fi
	sleep 0.1
done
GW_PID=
check "cdsgated exits 0 on SIGTERM (got $rc)" test "$rc" = 0
left=$(still_running "$NEW")
check "nothing of the jail is left after the stop${left:+ (left: $left)}" test -z "$left"
check "the session directory is gone" test ! -e "/run/cdsgate/sessions/$SID"

# ---- 6. a backend by name, on a non-loopback address ----------------------------
# In a network and mount namespace of the test's own, where nothing leaves lo:
# lo also gets 192.0.2.10 (TEST-NET-1), and /etc/hosts there (bound over the
# host's in that mount namespace only) names it backend.cdsgate.test.  The
# supervisor resolves the name once, adds the address to the jail's lo and
# listens there; the browser finds the name in the jail's own /etc/hosts.
if ! command -v ip >/dev/null; then
	skip "a backend by name on a non-loopback address: no ip(8) to set up the test's namespace"
else
	EV6=$TMP/events6.jsonl
	LOG6=$TMP/session6.log
	printf '127.0.0.1 localhost\n192.0.2.10 backend.cdsgate.test\n' > "$TMP/hosts6"
	cat > "$TMP/ns6.sh" <<SH
set -e
ip link set lo up
ip addr add 192.0.2.10/32 dev lo
mount --bind "$TMP/hosts6" /etc/hosts
python3 "$BACKEND" --bind 192.0.2.10 --port 0 --record "$EV6" > "$TMP/be6.out" 2> "$TMP/be6.err" &
be=\$!
trap 'kill \$be 2>/dev/null' EXIT	# also when the test's cleanup stops us
for _ in \$(seq 100); do grep -q '^ready ' "$TMP/be6.out" && break; sleep 0.1; done
port=\$(sed -n 's/^ready .*:\([0-9]*\)\$/\1/p' "$TMP/be6.out")
echo "\$port" > "$TMP/port6"
"$CDSGATED" run-session --record-dir "$TMP/rec" --backend "http://backend.cdsgate.test:\$port/" \\
	--listen 127.0.0.1:0 --password-file "$TMP/pw" --log "$LOG6" > "$TMP/gw6.out" 2> "$TMP/gw6.err" &
echo \$! > "$TMP/gw6.pid"
wait \$! || true
kill \$be
SH
	unshare -n -m bash "$TMP/ns6.sh" > "$TMP/ns6.out" 2>&1 &
	NS6=$!
	GW6=
	for _ in $(seq 100); do [ -s "$TMP/gw6.pid" ] && GW6=$(cat "$TMP/gw6.pid") && break; sleep 0.1; done
	if [ -n "$GW6" ] && wait_line "$TMP/gw6.out" '^ready ' 30 "$GW6"; then
		GW_PID=$GW6	# cleanup stops it
		P6=$(cat "$TMP/port6")
		A6=$(sed -n 's/^ready //p' "$TMP/gw6.out")
		check "the forwarder connects to the resolved address (browser_net 192.0.2.10:$P6)" \
			test "$(host log-count "$LOG6" browser_net backend="192.0.2.10:$P6")" -eq 1
		check "the page loaded by name" python3 - "$EV6" "http://backend.cdsgate.test:$P6/" <<'PY'
import json, sys, time
end = time.time() + 25
while time.time() < end:
    for l in open(sys.argv[1]):
        e = json.loads(l)
        if e.get('type') == 'load':
            print('# load: url %s (peer %s)' % (e.get('url'), e.get('peer')))
            sys.exit(0 if e.get('url') == sys.argv[2] else 1)
    time.sleep(0.2)
sys.exit(1)
PY
		nsenter -t "$GW6" -n "$VNCTEST" --host "${A6%:*}" --port "${A6##*:}" \
			--password-file "$TMP/pw" snapshot "$TMP/s6.ppm" > /dev/null 2>&1
		check "and renders (the banner in a VNC snapshot)" host banner "$TMP/s6.ppm"
		BPID=
		for _ in $(seq 50); do BPID=$(browser_of "$(host role-pid "$LOG6" browser)") && break; sleep 0.2; done
		check "in that jail, /etc/hosts maps backend.cdsgate.test to 192.0.2.10" \
			injail hosts backend.cdsgate.test 192.0.2.10
		check "in that jail, HTTP to 192.0.2.10:$P6 works" injail http 192.0.2.10 "$P6"
		check "in that jail, 127.0.0.1:$P6 is refused (only the backend's own address listens)" \
			injail connect 127.0.0.1 "$P6" ECONNREFUSED
		kill -TERM "$GW6"
		wait "$NS6"
		GW_PID=
		check "that session ends cleanly (session_stop signal)" \
			test "$(host log-count "$LOG6" session_stop reason=signal)" -eq 1
	else
		not_ok "a session with a backend by name on 192.0.2.10 starts"
		sed 's/^/# /' "$TMP/ns6.out" "$TMP/gw6.err" 2>/dev/null | tail -15
		[ -n "$GW6" ] && kill -TERM "$GW6" 2>/dev/null
		wait "$NS6"
	fi
fi

# A jail step that cannot be done fails the start.  The backend's name cannot
# be resolved (run in a network namespace of our own with only lo, so the
# host's resolver is not asked and nothing leaves the machine).
unshare -n "$CDSGATED" run-session --record-dir "$TMP/rec" --backend "http://no-such-host.invalid:8080/" \
	--listen 127.0.0.1:0 --password-file "$TMP/pw" --log "$TMP/fail.log" \
	> "$TMP/fail.out" 2> "$TMP/fail.err"
rc=$?
sed 's/^/#   /' "$TMP/fail.err"
check "a session whose jail cannot be set up exits 1 (got $rc)" test "$rc" = 1
check "it says why on stderr" grep -q "cannot resolve the backend host" "$TMP/fail.err"
check "it never printed ready nor started a browser" \
	test ! -s "$TMP/fail.out" -a "$(host log-count "$TMP/fail.log" child_start)" -eq 0
check "its log ends with session_stop setup_failed" \
	test "$(host log-count "$TMP/fail.log" session_stop reason=setup_failed)" -eq 1

done_testing
