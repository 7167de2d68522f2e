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

# ---- helpers for the scenarios that run real processes ----

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

# free_port [ADDR]: a port nobody listens on right now (tests run concurrently).
free_port() {
	python3 -c 'import socket,sys; s=socket.socket(); s.bind((sys.argv[1],0)); print(s.getsockname()[1])' "${1:-127.0.0.1}"
}

# stop_pid PID: SIGTERM, then SIGKILL after 5 s (no-op for an empty PID).
stop_pid() {
	[ -n "${1:-}" ] || return 0
	kill -TERM "$1" 2>/dev/null || return 0
	for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL "$1" 2>/dev/null
}

# stop PID: the same as stop_pid (older scenarios call it so).
stop() { stop_pid "$@"; }

# term_wait PID: SIGTERM a child of this shell and wait for it; its exit
# status is left in $term_rc ("timeout" if it still runs after 15 s).
# Not in $(...): a subshell cannot wait for the shell's children.
term_wait() {
	term_rc=timeout
	kill -TERM "$1" 2>/dev/null
	for _ in $(seq 150); do
		if ! kill -0 "$1" 2>/dev/null; then wait "$1"; term_rc=$?; return; fi
		sleep 0.1
	done
}

# require_session: skip the whole scenario unless a real gateway session
# can run here ($CDSGATED and $VNCTEST built, root, Xvfb, Chromium, python3).
require_session() {
	[ "$(id -u)" -eq 0 ] || skip_all "needs root (cdsgated runs the session as its own users)"
	[ -x "$CDSGATED" ] || skip_all "cdsgated not built at $CDSGATED"
	[ -x "$VNCTEST" ] || skip_all "cdsgate-vnctest not built at $VNCTEST"
	command -v Xvfb >/dev/null || skip_all "Xvfb not installed"
	[ -x /usr/lib/chromium/chromium ] || skip_all "chromium not installed (/usr/lib/chromium/chromium)"
	command -v python3 >/dev/null || skip_all "python3 not installed"
}

# descendants PID: PID's descendants, now.
descendants() {
	ps -eo pid=,ppid= | awk -v root="$1" '
		{ kids[$2] = kids[$2] " " $1 }
		END { n = split(kids[root], q, " ");
		      for (i = 1; i <= n; i++) { printf "%s ", q[i];
		          m = split(kids[q[i]], more, " ");
		          for (j = 1; j <= m; j++) q[++n] = more[j] } }'
}

# gateway_require: the same as require_session (the 02x scenarios).
gateway_require() { require_session; }

# serve_dirs DIR: what `cdsgated serve`/`api` need under DIR, as an
# operator sets it up (state and mount dir the api's, an audit key owned
# by cdsgate-audit); skips the scenario when the tools or users are missing.
serve_dirs() {
	local c u
	[ "$(id -u)" -eq 0 ] || skip_all "needs root (the daemon's users)"
	for c in curl sqlite3 python3; do
		command -v $c >/dev/null || skip_all "$c not installed"
	done
	for u in cdsgate-api cdsgate-audit; do
		getent passwd $u >/dev/null || skip_all "user $u missing (./dev creates it)"
	done
	mkdir -p "$1/state" "$1/audit" "$1/mnt" "$1/in"
	chown cdsgate-api: "$1/state" "$1/mnt"
	"$CDSGATE" audit keygen --private "$1/audit/key.pem" --public "$1/audit.pub"
	chown -R cdsgate-audit: "$1/audit" && chmod 0700 "$1/audit"
}
