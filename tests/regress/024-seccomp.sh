#!/usr/bin/env bash
# 024-seccomp: the session's seccomp filters, live.
#   1. a real session: the worker, Xvfb and the forwarder run with a filter
#      (/proc/PID/status "Seccomp: 2", NoNewPrivs), the log names each
#      child's profile, the root supervisor (SUPERVISOR, a deny-list) and
#      the jail's init (JAILINIT) are filtered too, so every process of
#      the session shows "Seccomp: 2", the rlimits of the table are in
#      force, a VNC client
#      still logs in and gets the picture (the filter lets the worker do its
#      job), and SIGTERM still ends it cleanly (the teardown runs filtered)
#   2. the test hook (CDSGATE_TEST_VIOLATE, --enable-test-hooks) makes the
#      worker call open, execve, ptrace after its filter; Xvfb's child
#      ptrace before its exec; the forwarder open, ptrace: each dies of SIGSYS, the session log says
#      seccomp_violation, stderr says "killed by seccomp", cdsgated exits
#      non-zero, no process of the session remains, its directory is gone
#   3. --sandbox-debug reports the syscall by name instead
# Needs root, Xvfb and Chromium; skips (with the reason) otherwise.
. "$(dirname "$0")/lib.sh"

CDSGATED=${CDSGATED:-$top_builddir/cdsgated}
VNCTEST=${VNCTEST:-$top_builddir/tests/gateway/cdsgate-vnctest}
BACKEND=$top_srcdir/tests/gateway/backend.py
SESSION_USERS=${SESSION_USERS:-cdsgate,cdsgate-browser}
RUN_DIR=/run/cdsgate/sessions

require_session
"$CDSGATED" --version | grep -q '^sandbox: seccomp' ||
	skip_all "cdsgated was built with --with-sandbox=none"
grep -q '^Seccomp:' /proc/self/status || skip_all "the kernel has no seccomp"
HOOKS=0
"$CDSGATED" --version | grep -q 'test hooks' && HOOKS=1

GW_PID=
BE_PID=
ARTIFACTS=$top_builddir/tests/regress/024-seccomp.artifacts
rm -rf "$ARTIFACTS"
cleanup() {
	local p
	if [ "$tap_failed" -gt 0 ] && mkdir -p "$ARTIFACTS" 2>/dev/null; then
		cp "$TMP"/*.log "$TMP"/*.err "$TMP"/*.out "$ARTIFACTS"/ 2>/dev/null
		echo "# failed: logs kept in $ARTIFACTS"
	fi
	for p in $GW_PID $BE_PID; do stop "$p"; done
	rm -rf "$TMP"
}
trap cleanup EXIT

# ev LOG PYTHON-EXPR: evaluate over `ev`, the log's events (a list of dicts);
# exit status 0 when it is truthy.  evv: print the value too.
ev() { evv "$@" >/dev/null; }
evv() {
	python3 - "$1" "$2" <<'PY'
import json, sys
ev = []
for line in open(sys.argv[1], encoding='utf-8', errors='replace'):
    try:
        ev.append(json.loads(line))
    except ValueError:
        pass
def child(role, event='child_start'):
    return [e for e in ev if e.get('event') == event and e.get('role') == role]
v = eval(sys.argv[2])
print(v if not isinstance(v, bool) else ('yes' if v else 'no'))
sys.exit(0 if v else 1)
PY
}

# session_procs SID: processes of the session users that belong to session
# SID (its id or our temporary directory is on their command line).
session_procs() {
	local p cmd
	for p in $(pgrep -u "$SESSION_USERS" 2>/dev/null); do
		cmd=$(tr '\0' ' ' 2>/dev/null < "/proc/$p/cmdline") || continue
		case $cmd in *"$1"* | *"$TMP"*) echo -n "$p " ;; esac
	done
}

# start_session NAME [ARGS...]: cdsgated run-session in the background,
# output in $TMP/NAME.{out,err,log}; sets GW_PID.
start_session() {
	local name=$1; shift
	"$CDSGATED" run-session "$@" --backend "$BURL" \
		--listen "127.0.0.1:$(free_port)" --password-file "$TMP/pw" \
		--log "$TMP/$name.log" --geometry 1024x768 --record-dir "$TMP/rec" \
		> "$TMP/$name.out" 2> "$TMP/$name.err" &
	GW_PID=$!
}

# wait_exit SECONDS: until cdsgated ends; its exit status in RC ("timeout").
wait_exit() {
	RC=timeout
	for _ in $(seq $(($1 * 10))); do
		if ! kill -0 "$GW_PID" 2>/dev/null; then
			wait "$GW_PID"
			RC=$?
			break
		fi
		sleep 0.1
	done
	[ "$RC" = timeout ] || GW_PID=
}

# sid NAME: the session id from its log.
sid() { evv "$TMP/$1.log" "ev[0]['session'] if ev else ''" 2>/dev/null; }

# The end of a session that was meant to die: status, log, processes, dir.
check_gone() {
	local name=$1 rc=$2 id
	id=$(sid "$name")
	check "$name: cdsgated exits non-zero (got $rc)" test "$rc" != 0 -a "$rc" != timeout
	sleep 0.5
	check "$name: no process of the session is left" test -z "$(session_procs "${id:-none}")"
	check "$name: the session directory $RUN_DIR/$id is gone" \
		test -n "$id" -a ! -e "$RUN_DIR/$id"
	check "$name: the log ends with session_stop" ev "$TMP/$name.log" "ev[-1]['event'] == 'session_stop'"
}

# ---- the backend and the secrets ------------------------------------------
python3 "$BACKEND" --port 0 --record "$TMP/events.jsonl" > "$TMP/backend.out" 2> "$TMP/backend.err" &
BE_PID=$!
wait_line "$TMP/backend.out" '^ready ' 10 "$BE_PID" || skip_all "the test backend did not start"
BURL="http://$(sed -n 's/^ready //p' "$TMP/backend.out")/"
python3 -c 'import secrets,string; print("".join(secrets.choice(string.ascii_letters+string.digits) for _ in range(8)))' > "$TMP/pw"
chmod 600 "$TMP/pw"

# ---- 1. a live session is filtered and works ------------------------------
start_session live
if ! wait_line "$TMP/live.out" '^ready ' 30 "$GW_PID"; then
	not_ok "live: cdsgated run-session prints ready"
	sed 's/^/# /' "$TMP/live.err" | tail -15
	done_testing
	exit 1
fi
ok "live: cdsgated run-session prints ready"
ADDR=$(sed -n 's/^ready //p' "$TMP/live.out" | head -1)
L=$TMP/live.log
WPID=$(evv "$L" "child('worker')[0]['pid']")
XPID=$(evv "$L" "child('xvfb')[0]['pid']")
FPID=$(evv "$L" "child('forward')[0]['pid'] if child('forward') else ''")
diag "worker pid $WPID, xvfb pid $XPID, forward pid ${FPID:-none}"
check "live: child_start says the worker runs seccomp:worker" \
	ev "$L" "child('worker')[0].get('sandbox') == 'seccomp:worker'"
check "live: child_start says Xvfb runs seccomp:xvfb" \
	ev "$L" "child('xvfb')[0].get('sandbox') == 'seccomp:xvfb'"
check "live: child_start says the browser runs none of ours (Chromium's own sandbox)" \
	ev "$L" "child('browser')[0].get('sandbox') == 'none'"
check "live: stderr names the worker's profile" \
	grep -q "worker started, pid $WPID, sandbox seccomp:worker" "$TMP/live.err"
check "live: stderr names Xvfb's profile" \
	grep -q "xvfb started, pid $XPID, sandbox seccomp:xvfb" "$TMP/live.err"
check "live: session_start names the mode seccomp" \
	ev "$L" "[e for e in ev if e['event'] == 'session_start'][0].get('sandbox') == 'seccomp'"
if [ -n "$FPID" ]; then
	check "live: child_start says the forwarder runs seccomp:forward" \
		ev "$L" "child('forward')[0].get('sandbox') == 'seccomp:forward'"
	check "live: the forwarder's RLIMIT_NOFILE is 256" \
		grep -qE '^Max open files +256 +256 ' "/proc/$FPID/limits"
else
	skip "live: no forwarder in this session (a build without the browser jail)"
fi
for r in worker:$WPID xvfb:$XPID ${FPID:+forward:$FPID}; do
	n=${r%%:*}; p=${r#*:}
	diag "$n: $(grep -E '^(Seccomp|Seccomp_filters|NoNewPrivs):' "/proc/$p/status" 2>/dev/null | tr '\n\t' '  ')"
	check "live: the $n (pid $p) is in seccomp filter mode (Seccomp: 2)" \
		grep -qE '^Seccomp:[[:space:]]+2$' "/proc/$p/status"
	check "live: the $n has NoNewPrivs: 1" grep -qE '^NoNewPrivs:[[:space:]]+1$' "/proc/$p/status"
	u=cdsgate; [ "$n" = forward ] && u=cdsgate-browser
	check "live: the $n runs as $u" test "$(stat -c %U "/proc/$p" 2>/dev/null)" = "$u"
	check "live: the $n may not dump core (RLIMIT_CORE 0)" \
		grep -qE '^Max core file size +0 +0 ' "/proc/$p/limits"
done
# The root supervisor runs under its deny-list, the jail's init under
# JAILINIT, and so every process of the session is filtered (Chromium's
# inherit the supervisor's list under their own).
BPID=$(evv "$L" "child('browser')[0]['pid'] if child('browser') else ''")
check "live: the supervisor (pid $GW_PID, root) is filtered (Seccomp: 2)" \
	grep -qE '^Seccomp:[[:space:]]+2$' "/proc/$GW_PID/status"
if [ -n "$BPID" ]; then
	check "live: the jail's init (pid $BPID) is filtered (Seccomp: 2)" \
		grep -qE '^Seccomp:[[:space:]]+2$' "/proc/$BPID/status"
else
	skip "live: no browser in this session (a build without the browser jail)"
fi
descendants() {
	local p c
	for p in "$@"; do
		echo "$p"
		for c in $(cat /proc/$p/task/*/children 2>/dev/null); do
			descendants "$c"
		done
	done
}
unfiltered=; nproc=0
for p in $(descendants "$GW_PID"); do
	s=$(awk '/^Seccomp:/ {print $2}' "/proc/$p/status" 2>/dev/null) || continue
	[ -n "$s" ] || continue		# gone meanwhile
	nproc=$((nproc + 1))
	diag "pid $p $(cat /proc/$p/comm 2>/dev/null) uid $(awk '/^Uid:/ {print $2}' /proc/$p/status) Seccomp: $s"
	[ "$s" = 2 ] || unfiltered="$unfiltered $p($(cat /proc/$p/comm 2>/dev/null))"
done
check "live: every process of the session ($nproc) shows Seccomp: 2${unfiltered:+ (not:$unfiltered)}" \
	test -z "$unfiltered" -a "$nproc" -ge 4
check "live: the worker's RLIMIT_NOFILE is 64" grep -qE '^Max open files +64 +64 ' "/proc/$WPID/limits"
check "live: the worker's RLIMIT_NPROC is 0 (it may not fork)" \
	grep -qE '^Max processes +0 +0 ' "/proc/$WPID/limits"
check "live: Xvfb's RLIMIT_NOFILE is 1024" grep -qE '^Max open files +1024 +1024 ' "/proc/$XPID/limits"
# The filtered worker still does its job: VNC auth (libgcrypt), frames, input.
"$VNCTEST" --host "${ADDR%:*}" --port "${ADDR##*:}" --password-file "$TMP/pw" \
	snapshot "$TMP/live.ppm" > "$TMP/vnc.out" 2> "$TMP/vnc.err"
check "live: a VNC client logs in and gets a frame from the filtered worker" \
	test $? -eq 0 -a -s "$TMP/live.ppm"
"$VNCTEST" --host "${ADDR%:*}" --port "${ADDR##*:}" --password-file "$TMP/pw" \
	type 'seccomp' >> "$TMP/vnc.out" 2>> "$TMP/vnc.err"
check "live: typing through the filtered worker works" test $? -eq 0
check "live: the worker is still alive afterwards" kill -0 "$WPID"
LID=$(sid live)
kill -TERM "$GW_PID"
wait_exit 20; rc=$RC
check "live: SIGTERM ends it with exit 0 (got $rc)" test "$rc" = 0
check "live: the worker's teardown ran under the filter (it exited 0, no violation)" \
	ev "$L" "[e for e in child('worker', 'child_exit') if e['wait'].get('code') == 0 and not e.get('seccomp_violation')]"
check "live: no seccomp violation in the whole session" \
	ev "$L" "not [e for e in ev if e.get('seccomp_violation')]"
sleep 0.5
check "live: no process of the session is left" test -z "$(session_procs "${LID:-none}")"

# ---- 2. forbidden calls kill ------------------------------------------------
if [ "$HOOKS" -eq 0 ]; then
	skip "violations: cdsgated was built with --disable-test-hooks"
else
	hooks="open execve ptrace xvfb:ptrace"
	[ -n "$FPID" ] && hooks="$hooks forward:open forward:ptrace"
	for v in $hooks; do
		name=violate-${v/:/-}
		role=worker
		case $v in *:*) role=${v%%:*} ;; esac
		CDSGATE_TEST_VIOLATE=$v start_session "$name"
		wait_exit 40; rc=$RC
		LOGF=$TMP/$name.log
		check "$name: the $role's child_exit says signal 31 (SIGSYS) and seccomp_violation" \
			ev "$LOGF" "[e for e in child('$role', 'child_exit') if e['wait'].get('signal') == 31 and e['wait'].get('signal_name') == 'SIGSYS' and e.get('seccomp_violation') is True]"
		check "$name: the log records the test hook" \
			ev "$LOGF" "[e for e in ev if e['event'] == 'test_hook' and e.get('role') == '$role']"
		check "$name: stderr says \"$role killed by seccomp (SIGSYS)\"" \
			grep -q "$role killed by seccomp (SIGSYS)" "$TMP/$name.err"
		check_gone "$name" "$rc"
	done
	# a hook that names no known call is refused before anything starts
	CDSGATE_TEST_VIOLATE=mount start_session bad-hook
	wait_exit 10; rc=$RC
	check "an unknown CDSGATE_TEST_VIOLATE value is a configuration error (exit 2, got $rc)" \
		test "$rc" = 2
fi

# ---- 3. --sandbox-debug reports instead of killing ---------------------------
if [ "$HOOKS" -eq 1 ]; then
	CDSGATE_TEST_VIOLATE=open start_session debug --sandbox-debug
	wait_exit 40; rc=$RC
	check "debug: stderr names the syscall (openat) and the profile" \
		grep -q 'cdsgate sandbox: profile worker does not allow syscall [0-9]* (openat)' "$TMP/debug.err"
	check "debug: the worker exited 159 and the log says seccomp_violation" \
		ev "$TMP/debug.log" "[e for e in child('worker', 'child_exit') if e['wait'].get('code') == 159 and e.get('seccomp_violation')]"
	check_gone debug "$rc"
else
	skip "debug: cdsgated was built with --disable-test-hooks"
fi

done_testing
