#!/usr/bin/env bash
# 021-gateway-novnc: a browser viewer through the websocket door.
# noVNC (the Debian package's files, served by tests/gateway/backend.py)
# runs in headless Chromium as an unprivileged user with its sandbox on,
# and connects to `cdsgated run-session --ws-token-file` — it gets the
# session's picture with the token and the allowed Origin, and is refused
# without the token, with a wrong one, and from another Origin.  The session
# survives all of it.  Needs root, Xvfb, Chromium and noVNC; skips otherwise.
. "$(dirname "$0")/lib.sh"

CDSGATED=${CDSGATED:-$top_builddir/cdsgated}
VNCTEST=${VNCTEST:-$top_builddir/tests/gateway/cdsgate-vnctest}
BACKEND=$top_srcdir/tests/gateway/backend.py
NOVNC=${NOVNC:-/usr/share/novnc}
CHROMIUM=/usr/lib/chromium/chromium
VIEWER_USER=${VIEWER_USER:-nobody}	# runs the headless viewer, never root

[ "$(id -u)" -eq 0 ] || skip_all "needs root (cdsgated runs the session as its own users)"
[ -x "$CDSGATED" ] || skip_all "cdsgated not built at $CDSGATED"
[ -x "$VNCTEST" ] || skip_all "cdsgate-vnctest not built at $VNCTEST"
command -v Xvfb >/dev/null || skip_all "Xvfb not installed"
[ -x "$CHROMIUM" ] || skip_all "chromium not installed ($CHROMIUM)"
[ -f "$NOVNC/core/rfb.js" ] || skip_all "noVNC not installed ($NOVNC/core/rfb.js)"
command -v setpriv >/dev/null || skip_all "setpriv (util-linux) not installed"
id "$VIEWER_USER" >/dev/null 2>&1 || skip_all "no user $VIEWER_USER to run the viewer as"
command -v python3 >/dev/null || skip_all "python3 not installed"

GW_PID=
BE_PID=
VIEWER_PID=
PROFILE=$(mktemp -d "${TMPDIR:-/tmp}/cdsgate-novnc.XXXXXX")
cleanup() {
	local p
	for p in $VIEWER_PID $GW_PID $BE_PID; do stop_pid "$p"; done
	rm -rf "$TMP" "$PROFILE"
}
trap cleanup EXIT

EV=$TMP/events.jsonl
LOG=$TMP/session.log

# viewer ORIGIN-HOST WS-URL: headless Chromium on the noVNC test page,
# as $VIEWER_USER with Chromium's own sandbox (never switched off).
viewer() {
	local url
	url="http://$1:$BPORT/novnc-test?url=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$2")&password=$(cat "$TMP/pw")"
	rm -rf "$PROFILE/p" && mkdir "$PROFILE/p" && chown "$VIEWER_USER" "$PROFILE/p"
	setpriv --reuid="$VIEWER_USER" --regid="$(id -g "$VIEWER_USER")" --clear-groups \
		env -i HOME="$PROFILE/p" PATH=/usr/bin:/bin \
		"$CHROMIUM" --headless --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$PROFILE/p" --window-size=1300,900 "$url" \
		> "$TMP/viewer.out" 2>&1 &
	VIEWER_PID=$!
}

# try NAME ORIGIN-HOST WS-URL: run the viewer, print its verdict.
try() {
	local m r
	m=$(python3 -c 'import json,sys; print(max([json.loads(l).get("n",0) for l in open(sys.argv[1])] or [0]))' "$EV")
	viewer "$2" "$3"
	r=$(novnc_verdict "$EV" "$m" 20)
	stop_pid "$VIEWER_PID"
	VIEWER_PID=
	echo "$r"
}

# ---- start -------------------------------------------------------------------
chmod 755 "$PROFILE"
python3 "$BACKEND" --port 0 --record "$EV" --novnc "$NOVNC" \
	> "$TMP/backend.out" 2> "$TMP/backend.err" &
BE_PID=$!
wait_line "$TMP/backend.out" '^ready ' 10 "$BE_PID" || skip_all "the test backend did not start"
BPORT=$(sed -n 's/^ready .*:\([0-9]*\)$/\1/p' "$TMP/backend.out")
python3 -c 'import secrets,string; a=string.ascii_letters+string.digits
print("".join(secrets.choice(a) for _ in range(8)))' > "$TMP/pw"
python3 -c 'import secrets; print(secrets.token_urlsafe(24))' > "$TMP/token"
chmod 600 "$TMP/pw" "$TMP/token"
TOKEN=$(cat "$TMP/token")
VPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

"$CDSGATED" run-session --record-dir "$TMP/rec" --backend "http://127.0.0.1:$BPORT/" \
	--listen "127.0.0.1:$VPORT" --password-file "$TMP/pw" \
	--ws-token-file "$TMP/token" --ws-origins "http://127.0.0.1:$BPORT" \
	--log "$LOG" > "$TMP/gw.out" 2> "$TMP/gw.err" &
GW_PID=$!
if wait_line "$TMP/gw.out" '^ready ' 30 "$GW_PID"; then
	ok "cdsgated run-session --ws-token-file prints ready"
else
	not_ok "cdsgated run-session --ws-token-file prints ready"
	tail -15 "$TMP/gw.err" | sed "s/^/# /"
	done_testing
	exit 1
fi
WS=ws://127.0.0.1:$VPORT

# ---- refused: no token, a wrong token, another Origin -----------------------
refused0=$(grep -c '"client_refused"' "$LOG")
r=$(try none 127.0.0.1 "$WS/")
check "noVNC without the token is refused ($r)" test "${r%% *}" = refused
r=$(try wrong 127.0.0.1 "$WS/?token=${TOKEN}x")
check "noVNC with a wrong token is refused ($r)" test "${r%% *}" = refused
r=$(try origin localhost "$WS/?token=$TOKEN")
check "noVNC with the token from an Origin not allowed is refused ($r)" test "${r%% *}" = refused
refused=$(( $(grep -c '"client_refused"' "$LOG") - refused0 ))
check "the log has client_refused for them ($refused)" test "$refused" -ge 3
check "the refusals name their reasons (token twice, origin once)" python3 - "$LOG" <<'PY'
import json, sys
why = [json.loads(l).get('reason', '') for l in open(sys.argv[1])
       if '"client_refused"' in l]
print('# reasons: %s' % why)
sys.exit(not (sum('token' in w for w in why) >= 2 and any('origin' in w.lower() for w in why)))
PY

# ---- connected: the token and the allowed Origin -----------------------------
r=$(try token 127.0.0.1 "$WS/?token=$TOKEN")
check "noVNC with the token connects ($r)" test "${r%% *}" = connected
check "and shows the backend page (banner pixel $r)" python3 -c "
import sys; rgb = [int(x) for x in '${r#* }'.split(',')]
sys.exit(not all(abs(a - b) <= 24 for a, b in zip(rgb, (216, 27, 96))))" 2>/dev/null
r=$(try path 127.0.0.1 "$WS/$TOKEN")
check "the token also works as the whole path ($r)" test "${r%% *}" = connected

# ---- the session survived ------------------------------------------------------
check "a native client still gets in afterwards" quiet \
	"$VNCTEST" --port "$VPORT" --password-file "$TMP/pw" sync
check "the log has the websocket connects" python3 -c '
import json, sys
sys.exit(sum(1 for l in open(sys.argv[1]) for e in [json.loads(l)]
             if e.get("event") == "connect" and e.get("websocket") is True) < 2)' "$LOG"
stop_pid "$GW_PID"
wait "$GW_PID"
rc=$?
GW_PID=
check "cdsgated exits 0 on SIGTERM (got $rc)" test "$rc" -eq 0
check "no processes of $VIEWER_USER's viewer are left" \
	test -z "$(pgrep -u "$VIEWER_USER" -f "$PROFILE" 2>/dev/null)"

done_testing
