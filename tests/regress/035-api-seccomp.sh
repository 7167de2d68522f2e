#!/usr/bin/env bash
# 035-api-seccomp: the api side's processes run under their own seccomp
# allow-lists: the api itself (profile "api": no exec, no socket), the
# audit key holder ("audit") and the gate runner ("gate", the only
# api-side process that may execve).
#   1. live: the key holder shows "Seccomp: 2", logs its profile, and a
#      change through the api is audited (the head file is replaced through
#      the log's directory fd, under the filter); the log verifies.
#   2. the test hook (CDSGATE_TEST_VIOLATE=audit:CALL, test-hook builds)
#      makes the confined key holder commit a forbidden call: it dies of
#      SIGSYS, the api refuses to start, the log is unchanged.
. "$(dirname "$0")/lib.sh"

CDSGATED=$top_builddir/cdsgated
CDSGATE=$top_builddir/cdsgate
[ -x "$CDSGATED" ] || skip_all "cdsgated not built"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (privilege drop to the key holder's user)"
command -v curl >/dev/null || skip_all "curl not installed"
for u in cdsgate-api cdsgate-audit; do
	getent passwd $u >/dev/null || skip_all "user $u missing (./dev creates it)"
done
grep -q '^Seccomp:' /proc/self/status || skip_all "kernel without seccomp"
"$CDSGATED" --version | grep -q 'sandbox: none' && skip_all "built with --with-sandbox=none"
HOOKS=0
"$CDSGATED" --version | grep -q 'test hooks' && HOOKS=1

D=$TMP/api
mkdir -p "$D/state" && chown cdsgate-api: "$D/state" && chmod 0711 "$TMP"
AUD=$D/audit
mkdir -p "$AUD" && "$CDSGATE" audit keygen --private "$AUD/key.pem" --public "$D/audit.pub" >/dev/null
chown -R cdsgate-audit: "$AUD" && chmod 0700 "$AUD"
LOG=$AUD/audit.log
API_PID=
no_line() { ! grep -q "$@"; }

# start_api [ENV=VALUE...]: the api in the background; 0 once it is ready.
start_api() {
	env "$@" "$CDSGATED" api --socket "$D/sock" --store "$D/state/store.db" \
		--state-dir "$D/state" --audit-log "$LOG" --audit-key "$AUD/key.pem" \
		> "$D/out" 2> "$D/err" &
	API_PID=$!
	for _ in $(seq 50); do
		grep -q '^ready ' "$D/out" 2>/dev/null && return 0
		kill -0 $API_PID 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
trap '[ -n "$API_PID" ] && kill $API_PID 2>/dev/null; rm -rf "$TMP"' EXIT

# ---- 1. live ----------------------------------------------------------------
check "live: the api starts" start_api
KH=$(pgrep -P "$API_PID" -u cdsgate-audit | head -1)
check "live: the key holder runs as cdsgate-audit (pid ${KH:-none})" test -n "$KH"
check "live: the key holder is filtered (Seccomp: 2)" \
	grep -q '^Seccomp:[[:space:]]*2$' "/proc/${KH:-0}/status"
check "live: the daemon names the key holder's profile" \
	grep -q 'audit key holder: sandbox seccomp, profile audit' "$D/err"
check "live: the api is filtered (Seccomp: 2)" \
	grep -q '^Seccomp:[[:space:]]*2$' "/proc/$API_PID/status"
check "live: the daemon names the api's profile" \
	grep -q 'cdsgated api: sandbox seccomp, profile api' "$D/err"
GR=$(pgrep -P "$API_PID" -u cdsgate-api | head -1)
check "live: the gate runner runs as cdsgate-api (pid ${GR:-none})" test -n "$GR"
check "live: the gate runner is filtered (Seccomp: 2)" \
	grep -q '^Seccomp:[[:space:]]*2$' "/proc/${GR:-0}/status"
check "live: the daemon names the gate runner's profile" \
	grep -q 'gate runner: sandbox seccomp, profile gate' "$D/err"
code=$(curl -s -o "$D/resp" -w '%{http_code}' --unix-socket "$D/sock" -X POST \
	-H 'Content-Type: application/json' --data '{"id":"alice","name":"Alice"}' \
	http://cdsgate/v1/recipients)
check "live: a change is accepted and audited under the filter (got $code)" test "$code" = 201
kill "$API_PID"; wait "$API_PID"; rc=$?; API_PID=
check "live: SIGTERM ends the api with 0 (got $rc; key holder closed the log)" test "$rc" = 0
check "live: the head file was replaced through the directory fd" test -s "$LOG.head"
check "live: no temp head file is left" test ! -e "$LOG.head.tmp"
check "live: cdsgate audit verify: intact" \
	quiet "$CDSGATE" audit verify "$LOG" --key "$D/audit.pub"
check "live: no seccomp violation reported" no_line 'does not allow syscall' "$D/err"

# ---- 2. forbidden calls kill ------------------------------------------------
if [ "$HOOKS" -eq 0 ]; then
	skip "violations: cdsgated was built with --disable-test-hooks"
else
	for v in open socket execve ptrace; do
		before=$(sha256sum "$LOG" "$LOG.head")
		if start_api CDSGATE_TEST_VIOLATE=audit:$v; then
			not_ok "violate $v: the api started although its key holder made a forbidden call"
			kill "$API_PID"; wait "$API_PID"
		else
			wait "$API_PID"; rc=$?
			check "violate $v: the api refuses to start (exit $rc)" test "$rc" -ne 0
			check "violate $v: the key holder died of SIGSYS (its filter)" \
				grep -q 'killed by signal 31, SIGSYS' "$D/err"
		fi
		API_PID=
		check "violate $v: the log and its head are unchanged" \
			test "$before" = "$(sha256sum "$LOG" "$LOG.head")"
	done
	# The api itself: it dies of SIGSYS before it serves; nothing changed.
	for v in execve socket ptrace; do
		before=$(sha256sum "$LOG" "$LOG.head"; sqlite3 "$D/state/store.db" .dump 2>/dev/null)
		if start_api CDSGATE_TEST_VIOLATE=api:$v; then
			not_ok "violate api:$v: the api served although it made a forbidden call"
			kill "$API_PID"; wait "$API_PID"
		else
			wait "$API_PID"; rc=$?
			check "violate api:$v: the api died of SIGSYS (status $rc = 128+31)" test "$rc" = 159
		fi
		API_PID=
		sleep 0.2
		check "violate api:$v: the store and the audit log are unchanged" \
			test "$before" = "$(sha256sum "$LOG" "$LOG.head"; sqlite3 "$D/state/store.db" .dump 2>/dev/null)"
	done
	# The gate runner: it dies of SIGSYS; the api stays up without it.
	for v in socket ptrace; do
		check "violate gate:$v: the api starts" start_api CDSGATE_TEST_VIOLATE=gate:$v
		sleep 0.3
		# the api polls the runner's socket: it reaps it and says how
		check "violate gate:$v: the runner was killed by its filter (SIGSYS), the api says so" \
			grep -q 'gate runner is gone.*killed by signal 31' "$D/err"
		check "violate gate:$v: the api keeps serving" kill -0 "$API_PID"
		kill "$API_PID"; wait "$API_PID"; API_PID=
	done
fi
done_testing
