#!/usr/bin/env bash
# 022-gateway-badclients: hostile VNC clients against a real session;
# tests/gateway/badclients.py plays each one:
#   garbage          random bytes instead of a handshake
#   truncated        half a protocol version, then silence (held 11 s,
#                    past the 5 s limit for that handshake message)
#   hugecut          an authenticated 2 GiB ClientCutText
#   badmsg           an authenticated unknown message type
#   extclip          the ExtendedClipboard pseudo-encoding: the server
#                    sends only its 16-byte capability message
#   noread           an authenticated client that asks for frames and
#                    never reads
#   badauth 8        eight wrong passwords in a row, from 127.0.0.3 (an
#                    address of its own: it backs off, 127.0.0.1 not)
#   floodconnect     10,000 connections as fast as possible, with the
#                    legitimate client working during the flood
# After each one: the supervisor and the same worker (pid unchanged) are
# alive, the browser was not restarted, a normal client (cdsgate-vnctest)
# connects and types text that arrives at the backend page, the worker's
# VmRSS stays within WORKER_RSS_BOUND_KB of where it started, and the
# session log has the event that scenario must leave (never the content).
# Needs root, Xvfb and Chromium; skips (with the reason) otherwise.
. "$(dirname "$0")/lib.sh"

CDSGATED=${CDSGATED:-$top_builddir/cdsgated}
VNCTEST=${VNCTEST:-$top_builddir/tests/gateway/cdsgate-vnctest}
BACKEND=$top_srcdir/tests/gateway/backend.py
BAD=$top_srcdir/tests/gateway/badclients.py
FLOOD_N=${FLOOD_N:-10000}
# The worker's resident memory may grow by at most this much over all the
# scenarios: 4 MiB (measured: +164 kB over the whole run, 9.9 -> 10.1 MB).
WORKER_RSS_BOUND_KB=${WORKER_RSS_BOUND_KB:-4096}
# Under AddressSanitizer freed memory stays in its quarantine (measured
# +7 MB over the run): the bound there is 64 MiB and says nothing about leaks.
if ldd "$CDSGATED" 2>/dev/null | grep -q libasan; then
	WORKER_RSS_BOUND_KB=65536
fi

require_session
python3 -c 'import ctypes.util, sys; sys.exit(not ctypes.util.find_library("crypto"))' ||
	skip_all "libcrypto not found by ctypes (badclients.py's VncAuth)"

GW_PID=
BE_PID=
HOLD_PIDS=
cleanup() {
	local p
	for p in $HOLD_PIDS $GW_PID $BE_PID; do stop "$p"; done
	rm -rf "$TMP"
}
trap cleanup EXIT

EV=$TMP/events.jsonl
LOG=$TMP/session.log

# ---- helpers -------------------------------------------------------------------
cat > "$TMP/chk.py" <<'PY'
import json, sys, time

def lines(path):
    out = []
    try:
        for l in open(path, encoding="utf-8", errors="replace"):
            try:
                out.append(json.loads(l))
            except ValueError:
                pass
    except FileNotFoundError:
        pass
    return out

cmd, a = sys.argv[1], sys.argv[2:]
if cmd == "typed":          # EVENTS TEXT TIMEOUT: the textarea ends with TEXT
    end = time.time() + float(a[2])
    val = None
    while time.time() < end:
        vals = [e.get("value", "") for e in lines(a[0]) if e.get("type") == "input"]
        val = vals[-1] if vals else None
        if val is not None and val.endswith(a[1]):
            sys.exit(0)
        time.sleep(0.2)
    print("# textarea ends %r, not %r" % ((val or "")[-40:], a[1]))
    sys.exit(1)
elif cmd == "loaded":       # EVENTS TIMEOUT
    end = time.time() + float(a[1])
    while time.time() < end:
        if any(e.get("type") == "load" for e in lines(a[0])):
            sys.exit(0)
        time.sleep(0.2)
    sys.exit(1)
elif cmd == "count":        # LOG SINCE EVENT [KEY=SUBSTRING...]: events after line SINCE
    evs = lines(a[0])[int(a[1]):]
    kvs = [kv.partition("=")[::2] for kv in a[3:]]
    print(sum(1 for e in evs if e.get("event") == a[2] and
              all(v in str(e.get(k, "")) for k, v in kvs)))
elif cmd == "show":         # LOG SINCE EVENT...: print those events
    for e in lines(a[0])[int(a[1]):]:
        if e.get("event") in a[2:]:
            e = {k: v for k, v in e.items() if k not in ("ts", "session", "proc")}
            print("#   %s" % json.dumps(e)[:230])
elif cmd == "suppressed":   # LOG SINCE EVENT: lines and the sum of "suppressed"
    evs = [e for e in lines(a[0])[int(a[1]):] if e.get("event") == a[2]]
    print(len(evs), sum(e.get("suppressed", 0) for e in evs))
elif cmd == "pid":          # LOG ROLE: pid of the first child_start of ROLE
    for e in lines(a[0]):
        if e.get("event") == "child_start" and e.get("role") == a[1]:
            print(e["pid"])
            break
PY
chk() { python3 "$TMP/chk.py" "$@"; }
loglines() { wc -l < "$LOG"; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
bad() { "${BADC[@]}" "$@"; }	# BADC: below, once the session listens

# The legitimate client types a fresh word; it must reach the page.
n_typed=0
legit_types() {
	local word
	n_typed=$((n_typed + 1))
	word="ok${n_typed}x"
	if ! "$VNCTEST" --host "$VHOST" --port "$VPORT" --password-file "$TMP/pw" \
	    type " $word" > "$TMP/vnc.out" 2> "$TMP/vnc.err"; then
		sed 's/^/#   vnctest: /' "$TMP/vnc.err" | tail -3
		return 1
	fi
	chk typed "$EV" " $word" 8
}

# after_scenario NAME: the session is whole and serves the real client.
after_scenario() {
	local rss
	check "$1: the supervisor is alive" kill -0 "$GW_PID"
	check "$1: the same worker (pid $WORKER) is alive" \
		test "$(chk pid "$LOG" worker)" = "$WORKER" -a -d "/proc/$WORKER"
	check "$1: a normal client then connects and its typing reaches the page" legit_types
	rss=$(rss_kb "$WORKER")
	[ "$rss" -gt "$rss_peak" ] && rss_peak=$rss
	diag "$1: worker VmRSS $rss kB (start $rss0 kB)"
	check "$1: the worker's VmRSS ($rss kB) is within $WORKER_RSS_BOUND_KB kB of the start" \
		test "$rss" -le $((rss0 + WORKER_RSS_BOUND_KB))
}

# ---- the session ----------------------------------------------------------------
python3 "$BACKEND" --port 0 --record "$EV" > "$TMP/backend.out" 2> "$TMP/backend.err" &
BE_PID=$!
wait_line "$TMP/backend.out" '^ready ' 10 "$BE_PID" || skip_all "the test backend did not start"
BURL="http://$(sed -n 's/^ready //p' "$TMP/backend.out")/"
python3 -c 'import secrets,string; print("".join(secrets.choice(string.ascii_letters) for _ in range(8)))' > "$TMP/pw"
echo "wrong${RANDOM}" | cut -c1-8 > "$TMP/badpw"
chmod 600 "$TMP/pw" "$TMP/badpw"
"$CDSGATED" run-session --record-dir "$TMP/rec" --backend "$BURL" --listen "127.0.0.1:$(free_port)" \
	--password-file "$TMP/pw" --log "$LOG" \
	> "$TMP/gw.out" 2> "$TMP/gw.err" &
GW_PID=$!
if ! wait_line "$TMP/gw.out" '^ready ' 30 "$GW_PID"; then
	not_ok "cdsgated run-session prints ready"
	sed 's/^/# /' "$TMP/gw.err" | tail -10
	done_testing
	exit 1
fi
ADDR=$(sed -n 's/^ready //p' "$TMP/gw.out")
VHOST=${ADDR%:*}
VPORT=${ADDR##*:}
# The bad client as a command (not a function): in the background its $!
# is timeout's pid, and timeout passes the cleanup's SIGTERM on to python.
BADC=(timeout 120 python3 "$BAD" "$VHOST" "$VPORT" "$TMP/pw")
WORKER=$(chk pid "$LOG" worker)
check "the session is ready at $ADDR, worker pid ${WORKER:-?}" test -n "$WORKER"
check "the backend page loaded" chk loaded "$EV" 20
check "before any bad client, the normal client types into the page" legit_types
# Past the first periodic keyframe (30 s): the worker's buffers grow once
# then (~3.7 MB with the watermark; measured: peak - start 0.26 MB after
# it, 3.8 MB before), which is not the clients' doing.
age=$(( $(date +%s) - $(stat -c %Y "/proc/$WORKER") ))
[ "$age" -ge 35 ] || sleep $((35 - age))
rss0=$(rss_kb "$WORKER")
rss_peak=$rss0
restarts0=$(chk count "$LOG" 0 browser_restart)
diag "worker VmRSS at the start: $rss0 kB"

# ---- garbage ---------------------------------------------------------------------
m=$(loglines)
check "garbage: the server closes the connection" bad garbage
sleep 0.3
check "garbage: client_refused (unexpected bytes) is logged" \
	test "$(chk count "$LOG" "$m" client_refused reason=unexpected)" -ge 1
after_scenario garbage

# ---- truncated: held past the handshake limit ------------------------------------
m=$(loglines)
mkfifo "$TMP/hold"
"${BADC[@]}" truncated < "$TMP/hold" > "$TMP/trunc.out" 2>&1 &
tr_pid=$!
HOLD_PIDS="$tr_pid"
exec 7> "$TMP/hold"	# keeps its stdin open
wait_line "$TMP/trunc.out" '^holding' 10 "$tr_pid"
check "truncated: a normal client types while the half handshake is held" legit_types
sleep 11	# 5 s for the protocol version (VNC_STAGE_US)
exec 7>&-
wait "$tr_pid"
HOLD_PIDS=
diag "$(grep '^truncated:' "$TMP/trunc.out")"
check "truncated: the server closed it after the 5 s limit for the version" \
	grep -q 'server closed=True' "$TMP/trunc.out"
check "truncated: client_refused (handshake timeout) is logged" \
	test "$(chk count "$LOG" "$m" client_refused reason=handshake)" -ge 1
after_scenario truncated

# ---- hugecut: 2 GiB of cut text announced ------------------------------------------
m=$(loglines)
check "hugecut: the server closes the connection" bad hugecut
sleep 0.3
chk show "$LOG" "$m" clipboard_dropped disconnect
check "hugecut: clipboard_dropped with size 2147483647 is logged" \
	test "$(chk count "$LOG" "$m" clipboard_dropped size=2147483647)" -ge 1
check "hugecut: the log holds none of the cut text's bytes" \
	sh -c "! grep -q AAAAAAAA '$LOG'"
check "hugecut: its disconnect carries a reason" \
	test "$(chk count "$LOG" "$m" disconnect reason=)" -ge 1
after_scenario hugecut

# ---- badmsg: an unknown message type after authentication ---------------------------
m=$(loglines)
check "badmsg: the server closes the connection" bad badmsg
sleep 0.3
chk show "$LOG" "$m" vnc_log disconnect
check "badmsg: the protocol error is logged (vnc_log: unknown message type)" \
	test "$(chk count "$LOG" "$m" vnc_log msg=unknown)" -ge 1
check "badmsg: then the disconnect, with a reason" \
	test "$(chk count "$LOG" "$m" disconnect reason=protocol)" -ge 1
after_scenario badmsg

# ---- extclip: the one thing LibVNCServer sends on its own ----------------------------
m=$(loglines)
bad extclip > "$TMP/extclip.out" 2>&1
rc=$?
sed 's/^/# /' "$TMP/extclip.out"
check "extclip: the client ran (exit $rc)" test "$rc" -eq 0
# 03 000000 | fffffff8 (-8: extended, 8 bytes) | 17000001 (caps: text;
# request, peek, provide) | 00100000 (1 MiB of text)
check "extclip: on SetEncodings the server sends exactly its 16-byte capability message" \
	grep -q '^extclip: on SetEncodings 16 bytes: 03000000fffffff81700000100100000$' "$TMP/extclip.out"
check "extclip: Request, Peek and Provide get no answer (no clipboard data, ever)" \
	grep -q '^extclip: after Request/Peek/Provide 0 bytes' "$TMP/extclip.out"
check "extclip: the offered text is dropped and logged by size" \
	test "$(chk count "$LOG" "$m" clipboard_dropped form=utf8)" -ge 1
check "extclip: the log does not hold the offered text" \
	sh -c "! grep -q EXTCLIP-SECRET '$LOG'"
after_scenario extclip

# ---- noread: asks for frames, never reads ---------------------------------------------
m=$(loglines)
"${BADC[@]}" noread < "$TMP/hold" > "$TMP/noread.out" 2>&1 &
nr_pid=$!
HOLD_PIDS="$nr_pid"
exec 7> "$TMP/hold"
wait_line "$TMP/noread.out" '^holding' 20 "$nr_pid"
t0=$(date +%s.%N)
rc=1
for _ in 1 2 3 4 5; do	# the slot frees once the server gives up on it
	legit_types && { rc=0; break; }
	sleep 1
done
dt=$(python3 -c "import time; print('%.1f' % (time.time() - $t0))")
check "noread: a normal client gets in and types while it holds (after ${dt}s)" test "$rc" -eq 0
exec 7>&-
wait "$nr_pid" 2>/dev/null
HOLD_PIDS=
chk show "$LOG" "$m" disconnect client_refused
check "noread: the server dropped the reader that never read (disconnect logged)" \
	test "$(chk count "$LOG" "$m" disconnect)" -ge 1
after_scenario noread

# ---- badauth: wrong passwords ---------------------------------------------------------
m=$(loglines)
CDSGATE_BAD_SOURCE=127.0.0.3 timeout 120 python3 "$BAD" "$VHOST" "$VPORT" "$TMP/badpw" \
	badauth 8 > "$TMP/badauth.out" 2>&1
rc=$?
diag "$(cat "$TMP/badauth.out")"
check "badauth: all 8 wrong passwords are refused" test "$rc" -eq 0
af=$(chk count "$LOG" "$m" auth_fail)
bo=$(chk count "$LOG" "$m" client_refused "reason=failed logins" address=127.0.0.3)
diag "auth_fail events: $af; back-off refusal lines: $bo"
check "badauth: each password checked is logged as auth_fail (3 free, then the back-off: $af)" \
	test "$af" -ge 4
check "badauth: the address's back-off refusals are logged once for the burst ($bo)" \
	test "$bo" -eq 1
after_scenario badauth

# ---- floodconnect: 10,000 connections, the real client working meanwhile --------------
m=$(loglines)
"${BADC[@]}" floodconnect "$FLOOD_N" > "$TMP/flood.out" 2>&1 &
fl_pid=$!
HOLD_PIDS="$fl_pid"
sleep 1
during=0
for i in 1 2 3 4 5 6; do	# a busy door may refuse one attempt
	legit_types && { during=$i; break; }
	sleep 0.5
done
r=$(rss_kb "$WORKER"); [ "$r" -gt "$rss_peak" ] && rss_peak=$r
wait "$fl_pid"
HOLD_PIDS=
diag "$(cat "$TMP/flood.out")"
if kill -0 "$fl_pid" 2>/dev/null || ! grep -q '^floodconnect:' "$TMP/flood.out"; then
	not_ok "floodconnect: the flood ran"
else
	ok "floodconnect: the flood ran"
fi
check "floodconnect: during the flood the normal client got in and typed (attempt $during of up to 6)" \
	test "$during" -gt 0
read -r nref nsup <<EOF
$(chk suppressed "$LOG" "$m" client_refused)
EOF
diag "client_refused lines: $nref, suppressed (counted, not written): $nsup"
check "floodconnect: the log stays small ($nref client_refused lines for $FLOOD_N connections)" \
	test "$nref" -le 500
after_scenario floodconnect

# ---- the whole run -----------------------------------------------------------------------
restarts=$(chk count "$LOG" 0 browser_restart)
check "no browser restart during all of it ($restarts)" test "$restarts" -eq "$restarts0"
check "no child died during all of it" test "$(chk count "$LOG" 0 child_exit)" -eq 0
diag "worker VmRSS: start $rss0 kB, peak $rss_peak kB, bound start + $WORKER_RSS_BOUND_KB kB"
term_wait "$GW_PID"
GW_PID=
check "SIGTERM still ends the session cleanly (exit $term_rc)" test "$term_rc" = 0
# The worker's own exit status (under the sanitizers: no error, no leak).
wexit=$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("event") == "child_exit" and e.get("role") == "worker":
        print(json.dumps(e.get("wait")))' "$LOG")
check "the worker itself exited 0 at the end ($wexit)" \
	grep -q '"code": 0' <<< "$wexit"
check "every log line is JSON" python3 -c '
import json, sys
for l in open(sys.argv[1], encoding="utf-8"): json.loads(l)' "$LOG"

done_testing
