#!/usr/bin/env bash
# 072-tls-login: one secret for every client.  `cdsgated serve` with
# tls_cert/tls_key; a session made through the API for recipient alice;
# with the user name alice and the secret the API handed out:
#   a. TigerVNC's viewer (xtigervncviewer, VeNCrypt X509Plain, the test
#      certificate as -X509CA) on its own Xvfb logs in; a screenshot of
#      that Xvfb shows the kiosk's page
#   b. noVNC (the Debian package) in sandboxed headless Chromium logs in
#      over wss:// (VeNCrypt Plain inside the websocket) with the API's
#      noVNC path; its canvas, saved as a PNG, shows the page; and over
#      plain ws:// too (the session is on loopback, where plain is allowed)
#   c. a wrong secret is refused on both (noVNC: securityfailure with the
#      reason; TigerVNC: no page, auth_fail user=alice in the log)
#   d. without TLS (the 8-character secret is the VNC password), noVNC
#      over plain ws:// logs in with it and a wrong one is refused
# CDSGATE_TEST_SHOTS=DIR keeps the pictures (tigervnc.png, novnc-wss.png,
# novnc-ws.png) for a person to look at.
# Needs root, Xvfb, Chromium, noVNC, TigerVNC, ImageMagick; skips otherwise.
. "$(dirname "$0")/lib.sh"

CDSGATED=$top_builddir/cdsgated
NOVNC=${NOVNC:-/usr/share/novnc}
CHROMIUM=/usr/lib/chromium/chromium
VIEWER_USER=${VIEWER_USER:-nobody}	# runs the headless browser, never root
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

serve_fixture	# lib.sh: $D, $SOCK, $PORT0, the kiosk's backend, $NOSESS
[ -z "$NOSESS" ] || skip_all "sessions: $NOSESS"
CONF=$D/serve.json
SRV_PID= NBE_PID= VV_PID= XV_PID= BR_PID=
PROFILE=$TMP/chrome
cleanup() {
	local p
	for p in $BR_PID $VV_PID $XV_PID $SRV_PID $NBE_PID $BE_PID; do stop_pid "$p"; done
	sleep 1
	rm -rf "$TMP"
}
trap cleanup EXIT

# shot NAME FILE: keep a picture where CDSGATE_TEST_SHOTS says.
shot() {
	[ -n "${CDSGATE_TEST_SHOTS:-}" ] || return 0
	mkdir -p "$CDSGATE_TEST_SHOTS" && cp "$2" "$CDSGATE_TEST_SHOTS/$1"
}

# logged EVENT USER [REASON]: the sessions' log (serve's stderr) has it.
logged() {
	if [ $# -gt 2 ]; then
		log_events "$D/err" "$1" user="$2" reason="$3"
	else
		log_events "$D/err" "$1" user="$2"
	fi
}

# ---- the noVNC page's server, the certificate, the config --------------
python3 "$top_srcdir/tests/gateway/backend.py" --port 0 --record "$D/nv.jsonl" \
	--novnc "$NOVNC" > "$D/nbe.out" 2> "$D/nbe.err" &
NBE_PID=$!
wait_line "$D/nbe.out" '^ready ' 10 "$NBE_PID" || skip_all "the noVNC page's server did not start"
NORIGIN="http://$(sed -n 's/^ready //p' "$D/nbe.out")"
printf '{"ws_origins": ["%s"]}\n' "$NORIGIN" > "$D/policy.json"
chmod 0644 "$D/policy.json"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
	-addext "subjectAltName=IP:127.0.0.1" -keyout "$D/key.pem" -out "$D/cert.pem" 2> /dev/null
chmod 600 "$D/key.pem"
SPKI=$(openssl x509 -in "$D/cert.pem" -pubkey -noout |
	openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64)
diag "certificate SHA-256 fingerprint: $(openssl x509 -in "$D/cert.pem" -noout -fingerprint -sha256 | cut -d= -f2)"
write_config "$CONF" "\"tls_cert\": \"$D/cert.pem\", \"tls_key\": \"$D/key.pem\", \"session_policy\": \"$D/policy.json\""

# ---- TigerVNC on its own Xvfb ----------------------------------------------
# tiger HOST PORT USER SECRET SECONDS: the viewer logs in (VNC_USERNAME,
# VNC_PASSWORD stand for its dialog); 0 once a screenshot shows the page.
tiger() {
	HOME=$TMP/vvhome DISPLAY=$VD VNC_USERNAME=$3 VNC_PASSWORD=$4 \
		"$TIGER" -SecurityTypes X509Plain -X509CA "$D/cert.pem" \
		-FullScreen "$1::$2" > "$TMP/vv.out" 2>&1 &
	VV_PID=$!
	x_page "$5" "$TMP/tiger.png"
}

# =========================== with TLS ======================================
check "cdsgated serve starts with tls_cert, tls_key and a session policy" start_serve
"$CDSGATE" recipient add alice --name "Alice" > /dev/null
mount_patients; rc=$?	# lib.sh: $DS
check "a dataset is imported through the gate and mounted (exit $rc)" test "$rc" -eq 0
# What the custodian reads and hands on: `cdsgate session create` as text.
"$CDSGATE" session create --recipient alice --dataset "$DS" > "$D/s1.txt" 2> "$D/s1.err"; rc=$?
check "a session for alice over TLS (exit $rc: $(head -c 160 "$D/s1.err"))" test "$rc" -eq 0
sed 's/^secret .*/secret  (not shown here)/; s/^/# /' "$D/s1.txt"
field() { awk -v k="$1" '$1 == k { print $2 }' "$D/s1.txt"; }
SECRET=$(field secret) VADDR=$(field vnc) NPATH=$(field novnc)
check "it shows a 24-character secret, the address and the noVNC path" \
	sh -c "[ \${#1} -eq 24 ] && [ -n '$VADDR' ] && case '$NPATH' in /websockify?token=*) true;; *) false;; esac" - "$SECRET"
check "... and the user name to log in with: the recipient id" test "$(field user)" = alice
INTPW=$(cat "$D"/secrets/*/password)
HOST=${VADDR%:*} PORT=${VADDR##*:}
sleep 2	# the kiosk loads its page

# ---- a. TigerVNC ------------------------------------------------------------
viewer_display
n0=$(logged auth_ok alice)
tiger "$HOST" "$PORT" alice "$SECRET" 30
got=$?
check "TigerVNC (X509Plain, -X509CA, user alice, the API's secret) shows the kiosk's page" test $got -eq 0
[ $got -eq 0 ] || sed 's/^/# vncviewer: /' "$TMP/vv.out" | tail -6
shot tigervnc.png "$TMP/tiger.png"
check "... logged as auth_ok for alice" test "$(logged auth_ok alice)" -gt "$n0"
check "... and a connect over TLS as alice" python3 - "$D/err" <<'PY'
import json, sys
sys.exit(not any(e.get('event') == 'connect' and e.get('user') == 'alice' and e.get('tls') is True
                 and e.get('websocket') is False
                 for l in open(sys.argv[1], errors='replace') if l.startswith('{')
                 for e in [json.loads(l)]))
PY
stop_pid "$VV_PID"; VV_PID=
sleep 1

# ---- b. noVNC over wss ------------------------------------------------------
r=$(try_novnc "wss://$HOST:$PORT$NPATH" alice "$SECRET" "$TMP/novnc-wss.png")
check "noVNC over wss:// (user alice, the API's secret) logs in ($r)" test "${r%% *}" = connected
check "... and its canvas shows the kiosk's page" page "$TMP/novnc-wss.png"
shot novnc-wss.png "$TMP/novnc-wss.png"
check "... logged as a websocket connect over TLS as alice" python3 - "$D/err" <<'PY'
import json, sys
sys.exit(not any(e.get('event') == 'connect' and e.get('user') == 'alice' and e.get('tls') is True
                 and e.get('websocket') is True
                 for l in open(sys.argv[1], errors='replace') if l.startswith('{')
                 for e in [json.loads(l)]))
PY
sleep 1
# On loopback plain VNC is allowed beside TLS: ws:// runs the same login.
r=$(try_novnc "ws://$HOST:$PORT$NPATH" alice "$SECRET" "$TMP/novnc-ws-tls.png")
check "on this loopback session noVNC over plain ws:// logs in with the same user and secret ($r)" \
	test "${r%% *}" = connected
check "... its canvas shows the page" page "$TMP/novnc-ws-tls.png"
check "... logged as a websocket connect without TLS as alice" python3 - "$D/err" <<'PY'
import json, sys
sys.exit(not any(e.get('event') == 'connect' and e.get('user') == 'alice' and e.get('tls') is False
                 and e.get('websocket') is True
                 for l in open(sys.argv[1], errors='replace') if l.startswith('{')
                 for e in [json.loads(l)]))
PY
sleep 1

# ---- c. a wrong secret, both clients ----------------------------------------
# wrong SECRET: the secret with its last character changed.
wrong() { case $1 in *x) echo "${1%?}y";; *) echo "${1%?}x";; esac; }
WRONG=$(wrong "$SECRET")
f0=$(logged auth_fail alice "wrong user name or password")
r=$(try_novnc "wss://$HOST:$PORT$NPATH" alice "$WRONG" "$TMP/nope.png")
diag "noVNC with a wrong secret: $r"
check "noVNC over wss:// with a wrong secret is refused (securityfailure)" \
	sh -c "case '$r' in 'refused securityfailure'*) true;; *) false;; esac"
check "... logged as auth_fail for alice (wrong user name or password)" \
	test "$(logged auth_fail alice "wrong user name or password")" -gt "$f0"
r=$(try_novnc "wss://$HOST:$PORT$NPATH" bob "$SECRET" "$TMP/nope.png")
check "noVNC with the secret but another user name is refused ($r)" \
	sh -c "case '$r' in 'refused securityfailure'*) true;; *) false;; esac"
f0=$(logged auth_fail alice "wrong user name or password")
tiger "$HOST" "$PORT" alice "$WRONG" 8
got=$?
check "TigerVNC with a wrong secret shows no page" test $got -ne 0
shot tigervnc-wrong.png "$TMP/tiger.png"
diag "vncviewer said: $(grep -i -m1 -E 'auth|fail' "$TMP/vv.out")"
check "... logged as auth_fail for alice" \
	test "$(logged auth_fail alice "wrong user name or password")" -gt "$f0"
stop_pid "$VV_PID"; VV_PID=
stop_pid "$XV_PID"; XV_PID=
r=$(try_novnc "wss://$HOST:$PORT$NPATH" alice "$INTPW" "$TMP/nope.png")
check "noVNC with the session's internal VNC password is refused ($r)" \
	sh -c "case '$r' in 'refused securityfailure'*) true;; *) false;; esac"
check "the internal VNC password appears in no reply and no log" \
	sh -c "! grep -qrF -- \"\$1\" '$D/err' '$D/out' '$D/s1.txt'" - "$INTPW"
kill -TERM "$SRV_PID"; wait "$SRV_PID"; SRV_PID=
check "no sanitizer or runtime error was reported (the sessions' stderr)" \
	sh -c "! grep -qE 'Sanitizer|runtime error' '$D/err'"

# =========================== without TLS: plain ws ===========================
write_config "$CONF" "\"session_policy\": \"$D/policy.json\""
check "cdsgated serve starts without TLS" start_serve
"$CDSGATE" session create --recipient alice --dataset "$DS" --json > "$D/s2.json"; rc=$?
SECRET=$(json "$D/s2.json" 'j["secret"]')
VADDR=$(json "$D/s2.json" 'j["vnc"]')
NPATH=$(json "$D/s2.json" 'j["novnc"]')
check "a session for alice without TLS: an 8-character secret (exit $rc)" \
	sh -c "[ $rc -eq 0 ] && [ \${#1} -eq 8 ]" - "$SECRET"
check "... and no user name (tls: false)" \
	test "$(json "$D/s2.json" 'str(j["user"]) + " " + str(j["tls"])')" = "None False"
sleep 2
r=$(try_novnc "ws://$VADDR$NPATH" "" "$SECRET" "$TMP/novnc-ws.png")
check "noVNC over ws:// with the API's secret logs in ($r)" test "${r%% *}" = connected
check "... and its canvas shows the kiosk's page" page "$TMP/novnc-ws.png"
shot novnc-ws.png "$TMP/novnc-ws.png"
r=$(try_novnc "ws://$VADDR$NPATH" "" "$(wrong "$SECRET")" "$TMP/nope.png")
check "noVNC over ws:// with a wrong secret is refused ($r)" \
	sh -c "case '$r' in 'refused securityfailure'*) true;; *) false;; esac"
kill -TERM "$SRV_PID"; wait "$SRV_PID"
check "serve exits 0 on SIGTERM" test $? -eq 0
SRV_PID=
check "... and no sanitizer or runtime error was reported" \
	sh -c "! grep -qE 'Sanitizer|runtime error' '$D/err'"

done_testing
