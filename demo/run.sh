#!/usr/bin/env bash
# demo/run.sh — the whole chain as a custodian runs it, as `./dev demo`
# does: a config file for `cdsgated serve`, the daemon started on it, and
# from then on only the `cdsgate` CLI over the admin API — add a
# recipient, import the synthetic patients through the de-identification
# gate, mount what passed into the embedded analytics backend, create the
# researcher's session (the daemon starts it) — then say how to connect
# (VNC, noVNC) and how to revoke.  With --snapshot FILE.png it takes a
# picture through a real VNC client (vncsnapshot), lists and revokes the
# session, and stops; otherwise it runs until ^C.
#
# Everything lives in a temporary directory that is removed at the end;
# the audit log is verified before it goes.  Needs root (the daemon's
# users, the session's namespaces) and the build in $BUILD.
set -euo pipefail

BUILD=${BUILD:?}
records=20000 snapshot=
while [ $# -gt 0 ]; do
	case $1 in
	--records) records=$2; shift 2 ;;
	--snapshot) snapshot=$2; shift 2 ;;
	*) echo "usage: ./dev demo [--records N] [--snapshot FILE.png]" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "demo: the daemon needs root" >&2; exit 2; }

say() { printf '==> %s\n' "$*" >&2; }
CDSGATE=$BUILD/cdsgate CDSGATED=$BUILD/cdsgated
NOVNC=${NOVNC:-/usr/share/novnc}
D=$(mktemp -d /tmp/cdsgate-demo.XXXXXX)
chmod 0711 "$D"
pids=()
cleanup() {
	local p
	# the daemon first: it stops the session, then the api, whose key
	# holder closes the audit log with a checkpoint
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if [ -s "$D/audit/audit.log" ]; then
		say "verifying the audit log"
		"$CDSGATE" audit verify "$D/audit/audit.log" --key "$D/audit.pub" >&2 || true
	fi
	rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

# wait_ready FILE PID: the "ready ADDR" line a daemon prints.
wait_ready() {
	local _
	for _ in $(seq 300); do
		grep -q '^ready ' "$1" 2>/dev/null && { sed -n 's/^ready //p' "$1" | head -1; return 0; }
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	echo "demo: $(basename "$1" .out) did not start:" >&2
	cat "${1%.out}.err" >&2
	return 1
}
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

say "generating the synthetic patients dataset ($records records)"
mkdir -p "$D/in" "$D/state" "$D/audit" "$D/mnt"
"$CDSGATE" sample generate --out "$D/in" --records "$records" --seed 1 > /dev/null
chmod -R go-rwx "$D/in"
"$CDSGATE" audit keygen --private "$D/audit/key.pem" --public "$D/audit.pub"
chown -R cdsgate-audit: "$D/audit" && chmod 0700 "$D/audit"
chown cdsgate-api: "$D/state"
chown cdsgate-api:cdsgate-analytics "$D/mnt" && chmod 0750 "$D/mnt"

say "starting the embedded analytics backend"
# the key the sessions' dataset grants are signed with (serve's grant_key)
(umask 077 && openssl rand -hex 32 > "$D/grant.key")
"$BUILD/cdsgate-analytics" --listen 127.0.0.1:0 --mount-dir "$D/mnt" \
	--grant-key "$D/grant.key" --static-dir "$BUILD/analytics/static" > "$D/analytics.out" 2> "$D/analytics.err" &
pids+=($!)
BACKEND=$(wait_ready "$D/analytics.out" "${pids[-1]}")

# noVNC: the Debian package's files, served read-only by an unprivileged
# web server; the session's websocket accepts that page's Origin (the
# session policy's ws_origins) and the token the API hands out.
NOVNC_URL=
if [ -f "$NOVNC/vnc.html" ]; then
	NPORT=$(free_port)
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		/usr/bin/python3 -m http.server --bind 127.0.0.1 --directory "$NOVNC" "$NPORT" \
		> "$D/novnc.out" 2> "$D/novnc.err" &
	pids+=($!)
	NOVNC_URL=http://127.0.0.1:$NPORT
	printf '{"ws_origins": ["%s"]}\n' "$NOVNC_URL" > "$D/session-policy.json"
else
	echo '{}' > "$D/session-policy.json"
fi

say "writing $D/serve.json and starting cdsgated serve"
PORT0=$(free_port)
cat > "$D/serve.json" <<JSON
{
  "socket": "$D/api.sock",
  "store": "$D/state/store.db",
  "state_dir": "$D/state",
  "mount_dir": "$D/mnt",
  "audit_log": "$D/audit/audit.log",
  "audit_key": "$D/audit/key.pem",
  "cdsgate": "$CDSGATE",
  "secrets_dir": "$D/secrets",
  "grant_key": "$D/grant.key",
  "record_dir": "$D/recordings",
  "backend_url": "http://$BACKEND/",
  "session_address": "127.0.0.1",
  "session_ports": "$PORT0-$((PORT0 + 20))",
  "session_policy": "$D/session-policy.json"
}
JSON
chmod 0644 "$D/serve.json" "$D/session-policy.json"
"$CDSGATED" serve --config "$D/serve.json" > "$D/serve.out" 2> "$D/serve.err" &
pids=("$!" "${pids[@]}")	# stopped first
wait_ready "$D/serve.out" "${pids[0]}" > /dev/null
export CDSGATE_SOCKET=$D/api.sock

say "cdsgate recipient add demo-researcher"
"$CDSGATE" recipient add demo-researcher --name "Demo researcher" > /dev/null
say "cdsgate dataset import: upload, then the de-identification gate (PU <= 1%, 5-anonymity)"
"$CDSGATE" dataset import "$D/in/patients.csv" --name patients \
	--qi age,sex,zip,race,admission_date --identifying patient_id,name \
	--sensitive diagnosis --insensitive length_of_stay \
	--hierarchies "$D/in" --pu-threshold 0.01 \
	--population 4.031e6 --k 5 --json > "$D/import.json"
python3 - "$D/import.json" <<'PY' >&2
import json, sys
d = json.load(open(sys.argv[1])); r = d["report"]
print("    verdict: %s; records %d, suppressed %d; transformation %s"
      % (d["state"], r["records"], r["suppressed_records"], r["transformation"]))
print("    population uniqueness after: %s (%s)"
      % (r["risk"]["after"]["pu_fraction"], r["risk"]["after"]["pu_model"]))
PY
ID=$(field "$D/import.json" id)
say "cdsgate dataset mount $ID"
"$CDSGATE" dataset mount "$ID" > /dev/null

say "cdsgate session create: the daemon starts the researcher's session on http://$BACKEND/"
"$CDSGATE" session create --recipient demo-researcher --dataset "$ID" \
	--expires-in 3600 --json > "$D/session.json"
SID=$(field "$D/session.json" id)
VNC=$(field "$D/session.json" vnc)
SECRET=$(field "$D/session.json" secret)
WSPATH=$(field "$D/session.json" novnc)
VHOST=${VNC%:*} VPORT=${VNC##*:}
if [ -n "$NOVNC_URL" ]; then
	ENC=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1].lstrip("/"), safe=""))' "$WSPATH")
	NOVNC_LINK="$NOVNC_URL/vnc.html?host=$VHOST&port=$VPORT&path=$ENC&autoconnect=1"
	NOVNC_NOTE="(noVNC from $NOVNC; type the secret when it asks)"
else
	NOVNC_LINK="ws://$VHOST:$VPORT$WSPATH"
	NOVNC_NOTE="(install Debian's novnc package for a page to open it with)"
fi

# port_closed_ms PORT: until nothing accepts on 127.0.0.1:PORT; the ms.
port_closed_ms() {
	python3 - "$1" <<'PY'
import socket, sys, time
t0 = time.monotonic()
while time.monotonic() - t0 < 5:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()
    except OSError:
        break
    time.sleep(0.02)
print(int((time.monotonic() - t0) * 1000))
PY
}

# novnc_check: the page is served, and the websocket opens (101) with
# the token and the page's Origin.
novnc_check() {
	local page=000 _
	for _ in $(seq 50); do
		page=$(curl -s -o /dev/null -w '%{http_code}' "$NOVNC_URL/vnc.html" || true)
		[ "$page" = 200 ] && break
		sleep 0.1
	done
	python3 - "$VHOST" "$VPORT" "$WSPATH" "$NOVNC_URL" "$page" <<'PY'
import base64, os, socket, sys
host, port, path, origin, page = sys.argv[1:]
s = socket.create_connection((host, int(port)), 5)
key = base64.b64encode(os.urandom(16)).decode()
s.sendall(("GET %s HTTP/1.1\r\nHost: %s:%s\r\nUpgrade: websocket\r\n"
           "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
           "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: binary\r\n"
           "Origin: %s\r\n\r\n" % (path, host, port, key, origin)).encode())
status = s.recv(4096).split(b"\r\n", 1)[0].decode(errors="replace")
print("    noVNC: page %s; websocket with the token from %s: %s"
      % (page, origin, status))
PY
}

if [ -n "$snapshot" ]; then
	say "taking a picture through vncsnapshot"
	printf '%s\n' "$SECRET" > "$D/pw" && chmod 0600 "$D/pw"
	"$BUILD/tests/gateway/cdsgate-vnctest" mkpasswd "$D/pw" "$D/pw.vnc"
	sleep 6		# the app loads perspective and renders the table
	timeout 20 vncsnapshot -quiet -passwd "$D/pw.vnc" -quality 95 \
		"$VHOST::$VPORT" "$D/shot.jpg" > /dev/null 2>&1
	convert "$D/shot.jpg" "$snapshot"
	say "wrote $snapshot"
	[ -n "$NOVNC_URL" ] && novnc_check >&2
	say "cdsgate session list"
	"$CDSGATE" session list >&2
	say "cdsgate session revoke $SID"
	"$CDSGATE" session revoke "$SID" > /dev/null
	say "the session's VNC port closed $(port_closed_ms "$VPORT") ms after the revoke"
	exit 0
fi
cat <<EOF

  Session $SID is up: the daemon started it for demo-researcher.
      VNC:     $VNC   (e.g. vncviewer $VHOST::$VPORT)
      secret:  $SECRET   (shown once)
      noVNC:   $NOVNC_LINK
               $NOVNC_NOTE
      revoke:  CDSGATE_SOCKET=$D/api.sock $CDSGATE session revoke $SID
  The researcher sees the de-identified table in the analytics app and
  nothing else. ^C stops everything and verifies the audit log.

EOF
wait "${pids[0]}" || true
