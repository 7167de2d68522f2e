# tests/regress/lib.sh — shared helpers for the shell scenarios (TAP).
# Sourced by tests/regress/NNN-*.sh; automake's TAP driver reads the output.

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir/build}"
CDSGATE=${CDSGATE:-$top_builddir/cdsgate}

tap_n=0
tap_failed=0

ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $*"; }
not_ok() { tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1)); echo "not ok $tap_n - $*"; }
diag() { printf '# %s\n' "$@"; }
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP $*"; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
done_testing() { echo "1..$tap_n"; [ "$tap_failed" -eq 0 ]; }

# check DESCRIPTION COMMAND...: ok when the command succeeds.
check() {
	local d=$1; shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}

# quiet COMMAND...: run it with its output discarded (for check).
quiet() { "$@" >/dev/null 2>&1; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/cdsgate-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# The benchmark data lives beside the checkout in ../shared/data (never
# copied into the repository).  Set CDSGATE_SHARED to point elsewhere.
find_shared() {
	local d
	for d in "${CDSGATE_SHARED:-}" "$top_srcdir/../shared" \
	    "$top_srcdir/../../shared" "$top_srcdir/../../../shared" \
	    "$top_srcdir/../../../../shared"; do
		[ -n "$d" ] && [ -f "$d/data/SOURCES.md" ] &&
			{ (cd "$d" && pwd); return 0; }
	done
	return 1
}

# json FILE PYTHON-EXPR: evaluate an expression over the parsed JSON `j`.
json() {
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# ---- the gateway scenarios (02x) --------------------------------------------
# gateway_require: skip the whole test unless a real session can run here
# (root, the built daemon and test client, Xvfb, Chromium, python3).
gateway_require() {
	[ "$(id -u)" -eq 0 ] || skip_all "needs root (cdsgated runs the session as its own users)"
	[ -x "$CDSGATED" ] || skip_all "cdsgated not built at $CDSGATED"
	[ -x "$VNCTEST" ] || skip_all "cdsgate-vnctest not built at $VNCTEST"
	command -v Xvfb >/dev/null || skip_all "Xvfb not installed"
	[ -x /usr/lib/chromium/chromium ] || skip_all "chromium not installed (/usr/lib/chromium/chromium)"
	command -v python3 >/dev/null || skip_all "python3 not installed"
}

# wait_line FILE REGEX SECONDS [PID]: until FILE has a matching line (or PID dies).
wait_line() {
	local i
	for i in $(seq $(($3 * 10))); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		[ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null && return 1
		sleep 0.1
	done
	return 1
}

# free_port: a TCP port free on loopback now (others run tests concurrently).
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# stop_pid PID: TERM, then KILL after 5 s.
stop_pid() {
	kill -TERM "$1" 2>/dev/null || return 0
	for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL "$1" 2>/dev/null
}
