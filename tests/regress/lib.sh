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

# run_guide GUIDE DIR [EXAMPLE=ACTUAL...]: run a guide's console blocks as
# written, in one shell in DIR (tests/regress/guide.py; $GUIDE_AS, e.g.
# "runuser -u USER --", runs it as another user): one TAP line per
# command, a block marked no-run a SKIP with its reason.  Sets guide_run
# (commands run) and guide_skipped (marked not runnable), and says both.
run_guide() {
	local guide=$1 dir=$2 st what; shift 2
	guide_run=0 guide_skipped=0
	${GUIDE_AS:-} python3 "$top_srcdir/tests/regress/guide.py" "$guide" "$dir" "$@" \
		> "$TMP/guide.out" 2> "$TMP/guide.err"
	while read -r st what; do
		case $st in
		PASS) ok "$what"; guide_run=$((guide_run + 1)) ;;
		SKIP) skip "$what"; guide_skipped=$((guide_skipped + 1)) ;;
		*) not_ok "$what"; guide_run=$((guide_run + 1)) ;;
		esac
	done < "$TMP/guide.out"
	[ -s "$TMP/guide.err" ] && diag "$(head -c 2000 "$TMP/guide.err")"
	diag "$(basename "$guide"): $guide_run commands run, $guide_skipped marked no-run"
}

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

# viewer_display [WxHxD]: an Xvfb of its own (1280x800x24 unless given)
# for a VNC viewer under test (e.g. TigerVNC's vncviewer), taking
# clients when this returns: sets XV_PID (the caller stops it) and VD
# (":N", the number Xvfb found free), makes $TMP/vvhome for the viewer's
# HOME.  A display that does not open (seen once in a loaded run: the
# viewer said "Can't open display") is replaced, twice at most.
viewer_display() {
	local try
	mkdir -p "$TMP/vvhome"
	for try in 1 2 3; do
		exec 7> "$TMP/xvfb.disp"
		Xvfb -displayfd 7 -screen 0 "${1:-1280x800x24}" -nolisten tcp 2> "$TMP/xvfb.err" &
		XV_PID=$!
		exec 7>&-
		wait_line "$TMP/xvfb.disp" '^[0-9]+' 10 "$XV_PID"
		VD=:$(head -1 "$TMP/xvfb.disp")
		python3 -c 'import ctypes, ctypes.util, sys
x = ctypes.CDLL(ctypes.util.find_library("X11"))
x.XOpenDisplay.restype = ctypes.c_void_p
x.XOpenDisplay.argtypes = [ctypes.c_char_p]
sys.exit(not x.XOpenDisplay(sys.argv[1].encode()))' "$VD" && return 0
		diag "the viewer's display $VD does not open (try $try): $(tail -2 "$TMP/xvfb.err" | tr '\n' ' ')"
		stop_pid "$XV_PID"
	done
	return 1
}

# tiger_page USER PWFILE CA HOST::PORT OUT: TigerVNC's viewer ($TIGER,
# X509Plain, on a display of its own) logs in as USER and the backend's
# page is on its screen within 30 s (OUT.png, OUT.ppm; its output OUT.out).
tiger_page() {
	local got=1
	viewer_display
	HOME=$TMP/vvhome DISPLAY=$VD VNC_USERNAME=$1 VNC_PASSWORD=$(cat "$2") \
		"$TIGER" -SecurityTypes X509Plain -X509CA "$3" -FullScreen "$4" > "$5.out" 2>&1 &
	VV_PID=$!
	for _ in $(seq 60); do
		sleep 0.5
		DISPLAY=$VD import -window root "$5.png" 2>/dev/null &&
			convert "$5.png" "$5.ppm" 2>/dev/null &&
			banner "$5.ppm" > /dev/null && { got=0; break; }
	done
	[ $got -eq 0 ] || sed 's/^/# vncviewer: /' "$5.out" | tail -6
	stop_pid "$VV_PID"; VV_PID=
	stop_pid "$XV_PID"; XV_PID=
	return $got
}

# gateway_require: the same as require_session (the 02x scenarios).
gateway_require() { require_session; }

# ---- sessions of `cdsgated serve` (034, 036) ----
# tree PIDS...: the pids and all their descendants.
tree() { local p; for p in "$@"; do echo -n "$p $(descendants "$p")"; done; }
alive() { local p n=0; for p in "$@"; do kill -0 "$p" 2>/dev/null && n=$((n + 1)); done; echo $n; }
# gone_ms PIDS...: waits (up to 5 s) until none is alive; prints the ms it took.
gone_ms() {
	local t0 p; t0=$(date +%s%N)
	for _ in $(seq 250); do [ "$(alive "$@")" -eq 0 ] && break; sleep 0.02; done
	echo $(( ($(date +%s%N) - t0) / 1000000 ))
}
# caps UNIT: a unit's CapabilityBoundingSet (systemd/UNIT) as setpriv
# spells it, for running its process as the unit would.
caps() {
	sed -n 's/^CapabilityBoundingSet=//p' "$top_srcdir/systemd/$1" |
		tr 'A-Z ' 'a-z,' | sed 's/cap_/+/g'
}

# log_events LOG EVENT [KEY=VALUE...]: how many JSON lines of LOG have them.
log_events() {
	python3 - "$@" <<'PY'
import json, sys
path, event, conds = sys.argv[1], sys.argv[2], [a.split('=', 1) for a in sys.argv[3:]]
n = 0
for line in open(path, errors='replace'):
    if not line.startswith('{'):
        continue
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get('event') == event and all(str(e.get(k)) == v for k, v in conds):
        n += 1
print(n)
PY
}

# ocr_names PPM WORD: tesseract reads WORD in the picture's corner mark.
ocr_names() {
	local v o
	for v in "300" "400" "300 60" "400 70"; do
		set -- "$1" "$2" $v
		convert "$1" -gravity SouthEast -crop 400x60+0+0 -colorspace Gray \
			-scale "$3%" ${4:+-threshold "$4%"} "$1-$3${4:+-$4}.png"
		o=$(tesseract "$1-$3${4:+-$4}.png" - --psm 7 2> /dev/null | tr -d ' \n')
		diag "OCR of $(basename "$1") at $3 ${4:-}: $o"
		case "$o" in *"$2"*) return 0;; esac
	done
	return 1
}

# banner PPM: tests/gateway/backend.py's page (its magenta banner) is on
# screen in a vnctest snapshot.
banner() {
	python3 - "$1" <<'PY'
import re, sys
d = open(sys.argv[1], 'rb').read()
m = re.match(rb'P6\s+(\d+)\s+(\d+)\s+255\s', d)
w, h, px = int(m.group(1)), int(m.group(2)), d[m.end():]
good = n = 0
for y in range(40, 150, 2):
    for x in range(w // 2 - 100, w // 2 + 100, 2):
        i = 3 * (y * w + x); n += 1
        good += all(abs(px[i + k] - v) <= 40 for k, v in enumerate((216, 27, 96)))
print('# banner: %.1f%% of pixels match' % (100.0 * good / n))
sys.exit(0 if good / n >= 0.9 else 1)
PY
}

# page PNG: the kiosk's page (the backend's banner) is in the picture.
page() {
	convert "$1" "$1.ppm" 2>/dev/null && banner "$1.ppm"
}

# x_page SECONDS PNG: 0 once a screenshot of $VD (viewer_display) shows
# the kiosk's page (a viewer on it logged in); the last one in PNG.
x_page() {
	local i
	for i in $(seq $(($1 * 2))); do
		sleep 0.5
		DISPLAY=$VD import -window root "$2" 2>/dev/null &&
			page "$2" > /dev/null && return 0
	done
	return 1
}

# novnc_verdict EVENTS SINCE SECONDS [PNG]: the verdict of noVNC's test
# page (tests/gateway/backend.py, /novnc-test) after event SINCE: prints
# "connected R,G,B" once a frame pixel that is not black arrived (with PNG:
# once the page's whole canvas arrived too, written there), "refused
# STATE REASON" (security failure, credentials asked for, disconnected
# before connecting, an error), or "timeout STATES...".
novnc_verdict() {
	python3 - "$@" <<'PY'
import base64, json, sys, time
path, since, end = sys.argv[1], int(sys.argv[2]), time.time() + float(sys.argv[3])
png = sys.argv[4] if len(sys.argv) > 4 else None
evs, gone = [], None
while time.time() < end:
    evs = []
    for line in open(path, encoding='utf-8'):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get('n', 0) > since and e.get('type') == 'novnc':
            evs.append(e)
    states = [e['state'] for e in evs]
    px = [e for e in evs if e['state'] == 'pixel' and e['rgb'] != [0, 0, 0]]
    frame = [e for e in evs if e['state'] == 'frame']
    if 'connected' in states and px and (png is None or frame):
        if png:
            open(png, 'wb').write(base64.b64decode(frame[0]['png'].split(',', 1)[1]))
        print('connected %s' % ','.join(map(str, px[-1]['rgb'])))
        sys.exit(0)
    for e in evs:
        if e['state'] in ('securityfailure', 'credentialsrequired', 'error'):
            print('refused %s %s' % (e['state'], e.get('reason') or e.get('err') or ''))
            sys.exit(0)
    # The page reports each event with its own request: a security failure
    # may arrive after the disconnect that follows it.
    if 'disconnected' in states and 'connected' not in states:
        gone = gone or time.time()
        if time.time() - gone > 1.5:
            print('refused disconnected')
            sys.exit(0)
    time.sleep(0.2)
print('timeout %s' % ' '.join(sorted(set(e['state'] for e in evs))))
PY
}

# novnc URL USER SECRET: noVNC in headless Chromium.  The test page
# (tests/gateway/backend.py at $NORIGIN) connects noVNC's RFB object to URL
# and reports; Chromium runs as $VIEWER_USER with its sandbox on, in the
# profile $PROFILE, and trusts exactly the test certificate ($SPKI pinned).
# Sets $BR_PID.
novnc() {
	local q
	q=$(python3 -c 'import sys, urllib.parse as u
print(u.urlencode({"url": sys.argv[1], "username": sys.argv[2], "password": sys.argv[3], "frame": "1"}))' "$@")
	rm -rf "$PROFILE" && mkdir -p "$PROFILE" && chown "$VIEWER_USER" "$PROFILE"
	setpriv --reuid="$VIEWER_USER" --regid="$(id -g "$VIEWER_USER")" --clear-groups \
		env -i HOME="$PROFILE" PATH=/usr/bin:/bin "$CHROMIUM" \
		--headless --disable-gpu --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --user-data-dir="$PROFILE" \
		--ignore-certificate-errors-spki-list="$SPKI" --window-size=1300,900 \
		"$NORIGIN/novnc-test?$q" > "$TMP/chrome.out" 2>&1 &
	BR_PID=$!
}

# try_novnc URL USER SECRET PNG: run the page (events in $D/nv.jsonl),
# print its verdict (novnc_verdict).
try_novnc() {
	local m r
	m=$(python3 -c 'import json,sys; print(max([json.loads(l).get("n",0) for l in open(sys.argv[1])] or [0]))' "$D/nv.jsonl")
	novnc "$1" "$2" "$3"
	r=$(novnc_verdict "$D/nv.jsonl" "$m" 40 "$4")
	stop_pid "$BR_PID"; BR_PID=
	echo "$r"
}

# serve_require: skip the scenario unless `cdsgated serve` can run here
# (root, its users, the tools the scenarios drive it with).
serve_require() {
	[ "$(id -u)" -eq 0 ] || skip_all "needs root (the parent spawns root supervisors)"
	for c in curl sqlite3 python3; do
		command -v $c >/dev/null || skip_all "$c not installed"
	done
	for u in cdsgate-api cdsgate-audit; do
		getent passwd $u >/dev/null || skip_all "user $u missing (./dev creates it)"
	done
}

# serve_dirs_make: what `cdsgated serve` needs in $TMP: $D with the state,
# mount and audit dirs (owned by cdsgate-api, cdsgate-audit), an audit
# key, $SOCK (and CDSGATE_SOCKET), $PORT0 for session_ports.
serve_dirs_make() {
	D=$TMP/srv
	chmod 0711 "$TMP"
	mkdir -p "$D/state" "$D/audit" "$D/mnt" "$D/in"
	chown cdsgate-api: "$D/state" "$D/mnt"
	"$CDSGATE" audit keygen --private "$D/audit/key.pem" --public "$D/audit.pub"
	chown -R cdsgate-audit: "$D/audit" && chmod 0700 "$D/audit"
	SOCK=$D/api.sock
	export CDSGATE_SOCKET=$SOCK
	PORT0=$(free_port)
}

# api_start [ARG...]: `cdsgated api` on the dirs of $D (state, mnt, audit
# and its key, $CDSGATE_SOCKET) with ARGs; $API_PID is the daemon itself,
# stopped on exit.  True once it says ready.
api_start() {
	"$CDSGATED" api --socket "$CDSGATE_SOCKET" --store "$D/state/store.db" \
		--state-dir "$D/state" --mount-dir "$D/mnt" --cdsgate "$CDSGATE" \
		--audit-log "$D/audit/audit.log" --audit-key "$D/audit/key.pem" \
		"$@" > "$D/out" 2> "$D/err" &
	API_PID=$!
	trap 'stop_pid $API_PID; rm -rf "$TMP"' EXIT
	wait_line "$D/out" '^ready ' 10 "$API_PID"
}

# serve_backend: when sessions can run here, the test backend ($BE_PID,
# $BACKEND_URL); otherwise $NOSESS says why not.
serve_backend() {
	NOSESS=
	BE_PID=
	BACKEND_URL=http://127.0.0.1:9/
	VNCTEST=${VNCTEST:-$top_builddir/tests/gateway/cdsgate-vnctest}
	# Sessions need Xvfb, Chromium and the test VNC client (require_session's
	# list); without them the parent and config checks still run.
	[ -x "$VNCTEST" ] || NOSESS="cdsgate-vnctest not built"
	command -v Xvfb >/dev/null || NOSESS="Xvfb not installed"
	[ -x /usr/lib/chromium/chromium ] || NOSESS="chromium not installed"
	[ -z "$NOSESS" ] || return 0
	python3 "$top_srcdir/tests/gateway/backend.py" --port 0 --record "$D/events.jsonl" \
		> "$D/backend.out" 2> "$D/backend.err" &
	BE_PID=$!
	if wait_line "$D/backend.out" '^ready ' 10 "$BE_PID"; then
		BACKEND_URL="http://$(sed -n 's/^ready //p' "$D/backend.out")/"
	else
		NOSESS="the test backend did not start"
	fi
}

# serve_fixture: both of the above.
serve_fixture() {
	serve_dirs_make
	serve_backend
}

# write_config FILE [EXTRA-JSON-MEMBERS]: a `cdsgated serve` config over
# serve_fixture's paths (mode 0644: a writable one is refused).
write_config() {
	cat > "$1" <<JSON
{
  "socket": "$SOCK",
  "store": "$D/state/store.db",
  "state_dir": "$D/state",
  "mount_dir": "$D/mnt",
  "audit_log": "$D/audit/audit.log",
  "audit_key": "$D/audit/key.pem",
  "cdsgate": "$CDSGATE",
  "secrets_dir": "$D/secrets",
  "grant_key": "$D/grant.key",
  "record_dir": "$D/rec",
  "backend_url": "${BACKEND_URL:-http://127.0.0.1:9/}",
  "session_address": "127.0.0.1",
  "session_ports": "$PORT0-$((PORT0 + 20))"${2:+,
  $2}
}
JSON
	chmod 0644 "$1"
}

# start_serve: `cdsgated serve --config $CONF` in the background
# ($SRV_PID), until its api says ready.  api_pid: that api child.
start_serve() {
	"$CDSGATED" serve --config "$CONF" > "$D/out" 2> "$D/err" &
	SRV_PID=$!
	wait_line "$D/out" '^ready ' 15 "$SRV_PID"
}
api_pid() { pgrep -P "$SRV_PID" -u cdsgate-api | head -1; }

# mount_patients: a sample patients table imported through the gate of a
# running `cdsgated serve` and mounted; its id in $DS; the mount's status.
mount_patients() {
	"$CDSGATE" sample generate --out "$D/in" --records 2000 --seed 11 > /dev/null
	chmod -R go-rwx "$D/in"
	"$CDSGATE" dataset import "$D/in/patients.csv" --name patients \
		--qi age,sex,zip,race,admission_date --identifying patient_id,name \
		--sensitive diagnosis --insensitive length_of_stay \
		--hierarchies "$D/in" --k 5 --suppression-limit 0.05 --json > "$D/imp.json" 2> "$D/imp.err"
	DS=$(json "$D/imp.json" 'j["id"]')
	"$CDSGATE" dataset mount "$DS" > /dev/null
}
