#!/usr/bin/env bash
# 080-front-door: every session through one address.  `cdsgated serve`
# with front_door_listen (and front_door_source 127.0.0.2, so the front
# door's connections to the workers come from an address no client here
# uses), the local runner, two sessions made through the API (alice, bob):
#   a. both API replies name the front door as the address, the recipient
#      as the user; the front door runs as cdsgate, seccomp on, no new privs
#   b. cdsgate-vnctest (libvncclient, X509Plain) through the front door as
#      alice and as bob: each picture shows the page, and its watermark
#      (corner, "%r") names its own recipient (OCR, when tesseract is here);
#      the session id works as the user name too; the worker logs the
#      connection from the front door's address in the right session
#   c. TigerVNC (X509Plain) and noVNC over wss (headless Chromium, the
#      API's token) through the front door: the page; bob's token with
#      alice's login is refused
#   d. a wrong password and an unknown user get the same refusal (the
#      client sees the same words; the log says "wrong user name or
#      password" for both); a third silent connection from one address is
#      closed at once
#   e. a direct connection to a session's worker is refused ("not the
#      front door"), even with its internal VNC password
#   f. revoking bob's session drops his relayed connection at once
#   g. the split units: `cdsgated sessiond` (with its unit's bounding set)
#      runs the front door, `serve --sessiond` does not; a session made
#      through the API is reached through it (the page on screen)
# Needs root, Xvfb, Chromium, noVNC, TigerVNC, ImageMagick; skips otherwise.
. "$(dirname "$0")/lib.sh"

CDSGATED=$top_builddir/cdsgated
NOVNC=${NOVNC:-/usr/share/novnc}
CHROMIUM=/usr/lib/chromium/chromium
VIEWER_USER=${VIEWER_USER:-nobody}
[ -x "$CDSGATED" ] || skip_all "cdsgated not built"
serve_require
command -v openssl >/dev/null || skip_all "openssl not installed"
[ -f "$NOVNC/core/rfb.js" ] || skip_all "noVNC not installed ($NOVNC/core/rfb.js)"
command -v setpriv >/dev/null || skip_all "setpriv (util-linux) not installed"
id "$VIEWER_USER" >/dev/null 2>&1 || skip_all "no user $VIEWER_USER to run the browser as"
TIGER=$(command -v xtigervncviewer || command -v vncviewer) ||
	skip_all "TigerVNC's viewer (xtigervncviewer) not installed"
for c in import convert; do
	command -v $c >/dev/null || skip_all "ImageMagick's $c not installed"
done

serve_fixture
[ -z "$NOSESS" ] || skip_all "sessions: $NOSESS"
CONF=$D/serve.json
SRV_PID= SD_PID= NBE_PID= VV_PID= XV_PID= BR_PID= HOLD_PID=
PROFILE=$TMP/chrome
cleanup() {
	local p
	for p in $HOLD_PID $BR_PID $VV_PID $XV_PID $SRV_PID $SD_PID $NBE_PID $BE_PID; do stop_pid "$p"; done
	sleep 1
	rm -rf "$TMP"
}
trap cleanup EXIT

# events EVENT [KEY=VALUE...]: how many lines of serve's log have them.
events() { log_events "$D/err" "$@"; }

# ---- the noVNC page's server, the certificate, the policy, the config ------
python3 "$top_srcdir/tests/gateway/backend.py" --port 0 --record "$D/nv.jsonl" \
	--novnc "$NOVNC" > "$D/nbe.out" 2> "$D/nbe.err" &
NBE_PID=$!
wait_line "$D/nbe.out" '^ready ' 10 "$NBE_PID" || skip_all "the noVNC page's server did not start"
NORIGIN="http://$(sed -n 's/^ready //p' "$D/nbe.out")"
printf '{"ws_origins": ["%s"], "watermark_layout": "corner", "watermark_opacity": 0.6, "watermark_text": "%%r"}\n' \
	"$NORIGIN" > "$D/policy.json"
chmod 0644 "$D/policy.json"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
	-addext "subjectAltName=IP:127.0.0.1" -keyout "$D/key.pem" -out "$D/cert.pem" 2> /dev/null
chmod 600 "$D/key.pem"
SPKI=$(openssl x509 -in "$D/cert.pem" -pubkey -noout |
	openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64)
DOOR=$(free_port)
write_config "$CONF" "\"tls_cert\": \"$D/cert.pem\", \"tls_key\": \"$D/key.pem\",
  \"session_policy\": \"$D/policy.json\",
  \"front_door_listen\": \"127.0.0.1:$DOOR\", \"front_door_source\": \"127.0.0.2\""

# ---- a. the daemon, the front door, two sessions ---------------------------
check "cdsgated serve starts with front_door_listen" start_serve
for _ in $(seq 50); do [ "$(events door_start)" -ge 1 ] && break; sleep 0.1; done
ps -o pid=,user=,comm= --ppid "$SRV_PID" | sed 's/^/# child of serve: /'
FD_PID=$(ps -o pid=,user= --ppid "$SRV_PID" | awk '$2 == "cdsgate" { print $1; exit }')
check "the front door is a child of serve running as cdsgate" test -n "$FD_PID"
st=/proc/${FD_PID:-0}/status
check "... with its seccomp filter on (Seccomp: 2) and no new privileges" \
	sh -c "grep -q '^Seccomp:[[:space:]]*2' $st && grep -q '^NoNewPrivs:[[:space:]]*1' $st"
check "... and it listens on the front door's address" \
	sh -c "ss -Hltnp 'sport = :$DOOR' | grep -q 'pid=$FD_PID,'"
"$CDSGATE" recipient add alice --name "Alice" > /dev/null
"$CDSGATE" recipient add bob --name "Bob" > /dev/null
mount_patients; rc=$?
check "a dataset is imported through the gate and mounted (exit $rc)" test "$rc" -eq 0
for r in alice bob; do
	"$CDSGATE" session create --recipient $r --dataset "$DS" > "$D/$r.txt" 2> "$D/$r.err"
	check "a session for $r through the API (exit $?: $(head -c 160 "$D/$r.err"))" \
		test -s "$D/$r.txt"
done
field() { awk -v k="$2" '$1 == k { print $2 }' "$D/$1.txt"; }
check "both replies name the front door as the address to connect to" \
	test "$(field alice vnc) $(field bob vnc)" = "127.0.0.1:$DOOR 127.0.0.1:$DOOR"
check "... and the recipient as the user name" \
	test "$(field alice user) $(field bob user)" = "alice bob"
A_ID=$(awk '$1 == "session" { print $2 }' "$D/alice.txt")
B_ID=$(awk '$1 == "session" { print $2 }' "$D/bob.txt")
for r in alice bob; do
	printf '%s\n' "$(field $r secret)" > "$TMP/$r.pw"
done
chmod 600 "$TMP"/*.pw
sleep 3	# the kiosks load their page
# shared PID: the socket inodes PID holds that serve holds too.
shared() {
	comm -12 <(ls -l /proc/"$SRV_PID"/fd | grep -o 'socket:\[[0-9]*\]' | sort -u) \
		<(ls -l /proc/"$1"/fd 2>/dev/null | grep -o 'socket:\[[0-9]*\]' | sort -u)
}
SUPS=$(ps -o pid=,user= --ppid "$SRV_PID" | awk '$2 == "root" { print $1 }')
SHARED=$(for s in $SUPS; do shared "$s"; done)
check "the session supervisors ($(echo $SUPS)) hold none of serve's sockets (front door, api):$(echo " $SHARED")" \
	test -n "$SUPS" -a -z "$SHARED"

# ---- b. libvncclient through the front door ----------------------------------
# door_vnc USER PWFILE CMD...: cdsgate-vnctest through the front door.
door_vnc() {
	local u=$1 pw=$2
	shift 2
	"$VNCTEST" --host 127.0.0.1 --port "$DOOR" --user "$u" --ca "$D/cert.pem" \
		--password-file "$pw" --timeout 30 "$@" > "$TMP/vt.out" 2> "$TMP/vt.err"
}
for r in alice bob; do
	door_vnc $r "$TMP/$r.pw" snapshot "$TMP/$r.ppm"; rc=$?
	check "cdsgate-vnctest logs in as $r through the front door (exit $rc)" test $rc -eq 0
	check "... and the picture shows the page" banner "$TMP/$r.ppm"
	if command -v tesseract > /dev/null; then
		check "... and its watermark names $r" ocr_names "$TMP/$r.ppm" "$r"
	else
		skip "the watermark's recipient: tesseract not installed"
	fi
done
check "the two pictures differ (each session's own watermark)" \
	sh -c "! cmp -s '$TMP/alice.ppm' '$TMP/bob.ppm'"
check "the front door relayed alice to her session and bob to his" \
	test "$(events door_relay user=alice session="$A_ID") $(events door_relay user=bob session="$B_ID")" = "1 1"
check "... each worker logged the connection in its own session, as TLS (the front door's leg)" \
	test "$(events connect session="$A_ID" proc=worker tls=True) $(events connect session="$B_ID" proc=worker tls=True)" = "1 1"
check "... and no worker saw any other address" \
	test "$(python3 -c 'import json,sys
print(sum(1 for l in open(sys.argv[1]) if l.startswith("{") for e in [json.loads(l)]
          if e.get("event") == "connect" and e.get("proc") == "worker" and not e["client"].startswith("127.0.0.2:")))' "$D/err")" = 0
check "each relay's bytes are logged when it ends (relay_end, bytes_down > 0)" \
	python3 - "$D/err" "$A_ID" <<'PY'
import json, sys
sys.exit(not any(e.get('event') == 'relay_end' and e.get('session') == sys.argv[2]
                 and e.get('bytes_down', 0) > 0 and e.get('proc') == 'frontdoor'
                 for l in open(sys.argv[1]) if l.startswith('{') for e in [json.loads(l)]))
PY
door_vnc "$A_ID" "$TMP/alice.pw" snapshot "$TMP/byid.ppm"; rc=$?
check "the session id works as the user name too (exit $rc)" test $rc -eq 0

# ---- c. TigerVNC and noVNC through the front door -----------------------------
page() { convert "$1" "$1.ppm" 2>/dev/null && banner "$1.ppm"; }
tiger_page alice "$TMP/alice.pw" "$D/cert.pem" "127.0.0.1::$DOOR" "$TMP/tiger"; got=$?
check "TigerVNC (X509Plain) through the front door shows alice's page" test $got -eq 0

r=$(try_novnc "wss://127.0.0.1:$DOOR$(field bob novnc)" bob "$(cat "$TMP/bob.pw")" "$TMP/novnc.png")
case $r in timeout*)	# headless Chromium's start under load (seen at load 9)
	diag "noVNC: $r; once more"
	r=$(try_novnc "wss://127.0.0.1:$DOOR$(field bob novnc)" bob "$(cat "$TMP/bob.pw")" "$TMP/novnc.png");;
esac
check "noVNC over wss through the front door (bob's token and login) connects ($r)" \
	test "${r%% *}" = connected
check "... and its canvas shows the page" page "$TMP/novnc.png"
check "... relayed to bob's session" test "$(events door_relay user=bob session="$B_ID")" -ge 2
r=$(try_novnc "wss://127.0.0.1:$DOOR$(field bob novnc)" alice "$(cat "$TMP/alice.pw")" "$TMP/nope.png")
check "bob's token with alice's login is refused ($r)" \
	sh -c "case '$r' in 'refused securityfailure'*) true;; *) false;; esac"

# ---- d. wrong password, unknown user: the same refusal ------------------------
printf 'not-the-secret-at-all-x\n' > "$TMP/wrong.pw"; chmod 600 "$TMP/wrong.pw"
f0=$(events auth_fail reason="wrong user name or password")
door_vnc alice "$TMP/wrong.pw" snapshot "$TMP/x.ppm"; rc1=$?
why1=$(grep -i -m1 -E 'auth|fail' "$TMP/vt.err")
door_vnc carol "$TMP/alice.pw" snapshot "$TMP/x.ppm"; rc2=$?
why2=$(grep -i -m1 -E 'auth|fail' "$TMP/vt.err")
diag "wrong password: exit $rc1, $why1"
diag "unknown user:   exit $rc2, $why2"
check "a wrong password is refused" test $rc1 -eq 3
check "an unknown user (carol, with alice's secret) is refused the same way" \
	test "$rc2 $why2" = "$rc1 $why1"
check "... both logged as auth_fail: wrong user name or password" \
	test "$(events auth_fail reason="wrong user name or password")" -eq $((f0 + 2))

# Three silent connections from one address: the third is closed at once
# (two unauthenticated connections an address, as at a session's door).
check "a third unauthenticated connection from one address is closed at once" \
	python3 - "$DOOR" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
held = [socket.create_connection(('127.0.0.1', port)) for _ in range(2)]
time.sleep(0.3)
third = socket.create_connection(('127.0.0.1', port))
third.settimeout(2)
try:
    closed = third.recv(64) == b''
except (socket.timeout, ConnectionResetError):
    closed = False
sys.exit(0 if closed else 1)
PY
sleep 0.3
check "... logged: too many unauthenticated connections from this address" \
	test "$(events client_refused reason="too many unauthenticated connections from this address")" -ge 1

# ---- e. straight to a worker: refused ---------------------------------------------
UP=$(python3 -c 'import json,sys
print([e["upstream"] for l in open(sys.argv[1]) if l.startswith("{") for e in [json.loads(l)]
       if e.get("event") == "door_relay" and e.get("session") == sys.argv[2]][0])' "$D/err" "$A_ID")
cat "$D"/secrets/"$A_ID"/password > "$TMP/inner.pw"; chmod 600 "$TMP/inner.pw"
r0=$(events client_refused session="$A_ID" reason="not the front door")
"$VNCTEST" --host "${UP%:*}" --port "${UP##*:}" --password-file "$TMP/inner.pw" \
	--timeout 10 expect-refused > /dev/null 2>&1; rc=$?
check "a direct connection to alice's worker ($UP), with its internal password, is refused" test $rc -eq 0
sleep 0.5
check "... logged by the worker: not the front door" \
	test "$(events client_refused session="$A_ID" reason="not the front door")" -gt "$r0"

# ---- f. revoke drops the relayed connection --------------------------------------
sleep 2	# the back-off of d's failures (3 free) is not reached; be gentle
"$VNCTEST" --host 127.0.0.1 --port "$DOOR" --user bob --ca "$D/cert.pem" \
	--password-file "$TMP/bob.pw" --timeout 60 hold 50 > "$TMP/hold.out" 2> "$TMP/hold.err" &
HOLD_PID=$!
for _ in $(seq 50); do
	[ "$(events door_relay user=bob session="$B_ID")" -ge 3 ] && break
	sleep 0.2
done
check "bob holds a connection through the front door" kill -0 "$HOLD_PID"
t0=$(date +%s%N)
"$CDSGATE" session revoke "$B_ID" > /dev/null
for _ in $(seq 100); do kill -0 "$HOLD_PID" 2>/dev/null || break; sleep 0.05; done
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "revoking bob's session ends his relayed connection (in $ms ms)" \
	sh -c "! kill -0 $HOLD_PID 2>/dev/null && [ $ms -lt 3000 ]"
wait "$HOLD_PID" 2>/dev/null; HOLD_PID=
check "... the front door dropped it (door_remove, connections_dropped 1)" \
	test "$(events door_remove session="$B_ID" connections_dropped=1)" -eq 1
door_vnc bob "$TMP/bob.pw" snapshot "$TMP/x.ppm"; rc=$?
check "... and bob's login is refused afterwards" test $rc -eq 3

kill -TERM "$SRV_PID"; wait "$SRV_PID"
check "serve exits 0 on SIGTERM (the front door with it)" test $? -eq 0
SRV_PID=
check "the front door is gone" sh -c "! kill -0 $FD_PID 2>/dev/null"

# ---- g. the split units: the session helper runs the front door ------------
chmod 0755 "$D"	# the api (cdsgate-api) reaches the helper's socket here
setpriv --bounding-set "-all,$(caps cdsgate-sessiond.service.in)" --inh-caps -all --no-new-privs \
	"$CDSGATED" sessiond --config "$CONF" --socket "$D/sessiond.sock" > "$D/sd.out" 2> "$D/sd.err" &
SD_PID=$!
check "split units: cdsgated sessiond starts with front_door_listen" wait_line "$D/sd.out" '^ready ' 15 "$SD_PID"
setpriv --bounding-set "-all,$(caps cdsgated.service.in)" --inh-caps -all --no-new-privs \
	"$CDSGATED" serve --config "$CONF" --sessiond "$D/sessiond.sock" > "$D/out" 2>> "$D/err" &
SRV_PID=$!
check "... and serve --sessiond" wait_line "$D/out" '^ready ' 15 "$SRV_PID"
for _ in $(seq 50); do ps -o user= --ppid "$SD_PID" | grep -qx cdsgate && break; sleep 0.1; done
check "... the front door is the helper's child (as cdsgate), not serve's" \
	sh -c "ps -o user= --ppid $SD_PID | grep -qx cdsgate && ! ps -o user= --ppid $SRV_PID | grep -qx cdsgate"
"$CDSGATE" session create --recipient alice --dataset "$DS" > "$D/split.txt" 2> "$D/split.err"
check "... a session for alice through the API (exit $?: $(head -c 160 "$D/split.err"))" test -s "$D/split.txt"
printf '%s\n' "$(field split secret)" > "$TMP/split.pw"
chmod 600 "$TMP/split.pw"
sleep 3	# the kiosk loads its page
door_vnc alice "$TMP/split.pw" snapshot "$TMP/split.ppm"; rc=$?
check "... reached through the helper's front door (exit $rc): the page on screen" banner "$TMP/split.ppm"
kill -TERM "$SRV_PID"; wait "$SRV_PID"; rc=$?
SRV_PID=
kill -TERM "$SD_PID"; wait "$SD_PID"; rc2=$?
SD_PID=
check "SIGTERM: serve --sessiond and the helper exit 0 ($rc, $rc2)" test "$rc $rc2" = "0 0"
check "no sanitizer or runtime error was reported" \
	sh -c "! grep -qE 'Sanitizer|runtime error' '$D/err' '$D/sd.err'"
[ "$tap_failed" -eq 0 ] || grep -E '"event":"(client_refused|auth_fail|door_[a-z]*|upstream_failed|relay_end|connect|disconnect|setup_failed)"' \
	"$D/err" | tail -60 | sed 's/^/# /'
done_testing
