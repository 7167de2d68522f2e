#!/usr/bin/env bash
# 047-memory: a memory bound per session (supervisor/membound.c,
# docs/processes.md).  Where the kernel offers a cgroup v2 memory
# controller the browser runs in a cgroup with memory.max; elsewhere (a
# SKIP says why, from the session log's memory_bound) the supervisor sums
# its processes' private memory and RLIMIT_DATA backs it up.  `cdsgated serve` with session_memory_limit_mb 768
# runs two sessions A and B on a backend page that allocates without bound
# (64 MiB arrays, filled, kept) as soon as a key reaches it.  A client
# types into A: A's supervisor sees its processes' private memory pass
# the limit, logs memory_limit (used, limit, the largest process) and ends
# the session (exit 4); the api chains record_closed with end
# memory_limit.  B, idle, keeps working
# all along: its page still answers a client after A has ended, and B's
# own memory stays far below its limit.  The per-session setting: B is
# made with --memory-limit-mb 640 (audited in session.create); over the
# config's value or under 512 is refused.  Also: RLIMIT_DATA is twice the
# limit on every browser process (a backstop between two samples).
. "$(dirname "$0")/lib.sh"

CDSGATED=$top_builddir/cdsgated
VNCTEST=${VNCTEST:-$top_builddir/tests/gateway/cdsgate-vnctest}
require_session
serve_require
LIMIT=768

serve_dirs_make		# lib.sh: $D, $SOCK, $PORT0, the audit key
LOG=$D/audit/audit.log
SRV_PID= BE_PID=
cleanup() {
	[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null && wait "$SRV_PID" 2>/dev/null
	[ -n "$BE_PID" ] && kill "$BE_PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# ---- the backend: one page that allocates on the first key -------------------
cat > "$D/backend.py" <<'PY'
import http.server, sys
PAGE = b'''<!doctype html><html><head><title>cdsgate 047</title></head>
<body style="margin:0;background:#fff">
<div style="height:160px;background:rgb(216,27,96)"></div>
<input id="f" autofocus style="font-size:30px">
<p id="n">0 MiB</p>
<script>
const keep = [];
function grow() {            // without bound: 64 MiB at a time, filled, kept
  try { const a = new Uint8Array(64 << 20); a.fill(7); keep.push(a); }
  catch (e) { document.title = 'refused ' + keep.length; }
  document.getElementById('n').textContent = (keep.length * 64) + ' MiB';
  setTimeout(grow, 20);
}
document.addEventListener('keydown', () => { if (!keep.length) grow(); }, {once: true});
</script></body></html>'''
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    def log_message(self, *a): pass
    def do_GET(self):
        body = PAGE if self.path == '/' else b'no'
        self.send_response(200 if self.path == '/' else 404)
        self.send_header('Content-Type', 'text/html' if self.path == '/' else 'text/plain')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
print('ready 127.0.0.1:%d' % s.server_address[1], flush=True)
s.serve_forever()
PY
python3 "$D/backend.py" > "$D/backend.out" 2> "$D/backend.err" &
BE_PID=$!
wait_line "$D/backend.out" '^ready ' 10 "$BE_PID" || skip_all "the test backend did not start"
BACKEND_URL="http://$(sed -n 's/^ready //p' "$D/backend.out")/"

CONF=$D/serve.json
write_config "$CONF" "\"session_memory_limit_mb\": $LIMIT"
check "cdsgated serve starts (session_memory_limit_mb $LIMIT)" start_serve
"$CDSGATE" recipient add alice --name "Alice" --max-sessions 4 > /dev/null
mount_patients		# lib.sh: $DS
check "a dataset is imported and mounted" test -n "$DS"

# new_session NAME [ARGS]: POST /v1/sessions; $D/NAME.json, $D/NAME.pw; prints the id.
new_session() {
	local n=$1; shift
	"$CDSGATE" session create --recipient alice --dataset "$DS" --json "$@" \
		> "$D/$n.json" 2> "$D/$n.err" || { diag "create $n: $(head -c 300 "$D/$n.err")"; return 1; }
	json "$D/$n.json" 'j["secret"]' > "$D/$n.pw"
	json "$D/$n.json" 'j["id"]'
}
# vnc NAME COMMANDS...: one client connection to session NAME.
vnc() {
	local a; a=$(json "$D/$1.json" 'j["vnc"]'); local f=$1; shift
	"$VNCTEST" --host "${a%:*}" --port "${a##*:}" --password-file "$D/$f.pw" \
		--timeout 30 "$@" > "$D/$f-vt.out" 2> "$D/$f-vt.err"
}
# supervisor NAME: the pid of session NAME's supervisor: the child of
# serve that holds its recording open.
supervisor() {
	local p id
	id=$(json "$D/$1.json" 'j["id"]')
	for p in $(pgrep -P "$SRV_PID" -u root); do
		ls -l /proc/$p/fd 2>/dev/null | grep -q "/$id.cdsrec" && { echo "$p"; return; }
	done
}
# anon_mib PID: the private resident memory of PID's descendants, MiB.
anon_mib() {
	local p sum=0 kb
	for p in $(descendants "$1"); do
		kb=$(awk '/^RssAnon:/ { print $2 }' /proc/$p/status 2>/dev/null)
		sum=$((sum + ${kb:-0}))
	done
	echo $((sum / 1024))
}

# the per-session setting: at most the config's, at least 512
"$CDSGATE" session create --recipient alice --dataset "$DS" --memory-limit-mb 4096 > /dev/null 2> "$D/over.err"
rc=$?
check "session create --memory-limit-mb 4096 over the config's $LIMIT is refused (exit $rc: $(head -c 120 "$D/over.err"))" \
	sh -c "[ $rc -ne 0 ] && grep -q '512..$LIMIT' '$D/over.err'"
"$CDSGATE" session create --recipient alice --dataset "$DS" --memory-limit-mb 100 > /dev/null 2> "$D/under.err"
rc=$?
check "session create --memory-limit-mb 100 (under 512) is refused (exit $rc)" test "$rc" -ne 0
A=$(new_session a)
B=$(new_session b --memory-limit-mb 640)
check "two sessions run (A $A, B $B with --memory-limit-mb 640)" sh -c "[ -n '$A' ] && [ -n '$B' ]"
check "the audit log: session.create says B's memory_limit_mb 640, A's $LIMIT (the config's)" python3 -c '
import json, sys
got = {r["data"]["id"]: r["data"].get("memory_limit_mb") for r in map(json.loads, open(sys.argv[1]))
       if r.get("type") == "session.create"}
print("# %s" % got)
sys.exit(got.get(sys.argv[2]) != int(sys.argv[4]) or got.get(sys.argv[3]) != 640)' "$LOG" "$A" "$B" "$LIMIT"
SA=$(supervisor a); SB=$(supervisor b)
diag "supervisors: A $SA, B $SB"
sleep 4		# both pages loaded
MA0=$(anon_mib "$SA"); MB0=$(anon_mib "$SB")
diag "idle: A's processes hold $MA0 MiB private memory, B's $MB0 MiB (limit $LIMIT MiB)"
check "idle, both are below their limits" sh -c "[ $MA0 -lt $LIMIT ] && [ $MB0 -lt 640 ]"
check "the session logs say the limits at session_start (memory_limit_mb $LIMIT for A, 640 for B)" \
	sh -c "grep -q '\"memory_limit_mb\":$LIMIT' '$D/err' && grep -q '\"memory_limit_mb\":640' '$D/err'"
MECH=$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    try:
        e = json.loads(l)
    except ValueError:
        continue
    if e.get("event") == "memory_bound":
        print(e["mechanism"], e.get("no_cgroup", e.get("cgroup")))
        break' "$D/err")
diag "memory_bound: $MECH"
check "the session log says which mechanism bounds the memory (memory_bound)" test -n "$MECH"
case $MECH in
cgroup*) ;;
*) skip "the cgroup v2 path cannot be used here (${MECH#watch }); the fallback is tested" ;;
esac
[ "${MECH%% *}" = watch ] && WANT_DATA=$((LIMIT * 2)) || WANT_DATA=unlimited
check "every browser process of A has RLIMIT_DATA = $WANT_DATA MiB (twice the limit without a cgroup)" python3 - "$SA" "$WANT_DATA" <<'PY'
import os, subprocess, sys
kids = subprocess.run(['ps', '-eo', 'pid=,ppid=,comm='], capture_output=True, text=True).stdout
tree, todo = set(), [sys.argv[1]]
rows = [l.split(None, 2) for l in kids.splitlines()]
while todo:
    p = todo.pop()
    for pid, ppid, comm in rows:
        if ppid == p and pid not in tree:
            tree.add(pid); todo.append(pid)
want = str(int(sys.argv[2]) << 20) if sys.argv[2] != 'unlimited' else 'unlimited'
chrome = [p for p in tree if open('/proc/%s/comm' % p).read().strip() in ('chromium', 'chrome')]
bad = []
for p in chrome:
    for l in open('/proc/%s/limits' % p):
        if l.startswith('Max data size'):
            if l.split()[3] != want:
                bad.append((p, l.split()[3]))
print('# %d chromium processes, RLIMIT_DATA off the limit: %s' % (len(chrome), bad))
sys.exit(0 if chrome and not bad else 1)
PY

# ---- A: a key reaches the page; it allocates until the session ends ----------
T0=$(date +%s%N)
vnc a type 'x' sync
gone=
for _ in $(seq 300); do kill -0 "$SA" 2>/dev/null || { gone=1; break; }; sleep 0.1; done
T1=$(date +%s%N)
diag "A ended $(( (T1 - T0) / 1000000 )) ms after the key"
check "A's supervisor ended by itself (the page allocated without bound)" test -n "$gone"
check "A's session log: memory_limit (used over the limit and the largest process, or the cgroup's OOM kills)" python3 - "$D/err" "$A" "$LIMIT" <<'PY'
import json, sys
ev = []
for l in open(sys.argv[1]):
    try:
        ev.append(json.loads(l))
    except ValueError:
        continue
m = [e for e in ev if e.get('event') == 'memory_limit']
for e in m:
    print('# memory_limit: %s' % {k: v for k, v in e.items() if k not in ('ts', 'proc', 'event')})
ok = len(m) == 1 and m[0]['limit_mib'] == int(sys.argv[3])
if ok and m[0]['mechanism'] == 'watch':
    ok = m[0]['used_mib'] > int(sys.argv[3]) and m[0]['top_name']
elif ok:
    ok = m[0]['oom_kills'] >= 1
sys.exit(0 if ok else 1)
PY
check "A stopped for it: session_stop reason memory_limit, exit 4" python3 -c '
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if "\"session_stop\"" in l]
print("# session_stop: %s" % [(e.get("reason"), e.get("exit")) for e in s])
sys.exit(not any(e.get("reason") == "memory_limit" and e.get("exit") == 4 for e in s))' "$D/err"
rc=1
for _ in $(seq 75); do grep '"type":"record_closed"' "$LOG" 2>/dev/null | grep -q "$A" && { rc=0; break; }; sleep 0.2; done
CA=$(grep '"type":"record_closed"' "$LOG" | grep "$A" | head -1)
diag "record_closed A: $(printf '%s' "$CA" | head -c 300)"
check "the audit log: record_closed for A with end memory_limit, the recording complete (a clean end)" \
	python3 -c 'import json,sys; d = json.loads(sys.argv[1])["data"]; sys.exit(d["end"] != "memory_limit" or d["truncated"] is not False)' "$CA"

# ---- B kept working ---------------------------------------------------------
check "B's supervisor is still running" kill -0 "$SB"
vnc b sleep 0.5 snapshot "$D/b.ppm"		# no key: B's page stays idle
check "B answers a client after A ended: its page is on screen" banner "$D/b.ppm"
MB1=$(anon_mib "$SB")
diag "B after A ended: $MB1 MiB private memory"
check "B stayed below its limit" test "$MB1" -lt 640
check "no memory_limit for B" sh -c "! grep '\"event\":\"memory_limit\"' '$D/err' | grep -q '$B'"
done_testing
