#!/usr/bin/env bash
# demo/run.sh — the whole chain on the embedded defaults, as `./dev demo`
# runs it: generate the synthetic patients, start the admin API (with its
# audit key holder), import the dataset through the de-identification
# gate, mount what passed into the embedded analytics backend, start the
# backend and one researcher's gateway session on it, and say how to
# connect.  With --snapshot FILE.png it takes a picture through a real VNC
# client (vncsnapshot) and stops; otherwise it runs until ^C.
#
# Everything lives in a temporary directory that is removed at the end;
# the audit log is verified before it goes.  Needs root (the session's
# users, namespaces) and the build in $BUILD.
set -euo pipefail

BUILD=${BUILD:?}
top=$(cd "$(dirname "$0")/.." && pwd)
records=20000 snapshot=
while [ $# -gt 0 ]; do
	case $1 in
	--records) records=$2; shift 2 ;;
	--snapshot) snapshot=$2; shift 2 ;;
	*) echo "usage: ./dev demo [--records N] [--snapshot FILE.png]" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "demo: the gateway session needs root" >&2; exit 2; }

say() { printf '==> %s\n' "$*" >&2; }
CDSGATE=$BUILD/cdsgate CDSGATED=$BUILD/cdsgated
D=$(mktemp -d /tmp/cdsgate-demo.XXXXXX)
chmod 0711 "$D"
pids=()
cleanup() {
	local p
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

say "generating the synthetic patients dataset ($records records)"
mkdir -p "$D/in" "$D/state" "$D/audit" "$D/mnt"
"$CDSGATE" sample generate --out "$D/in" --records "$records" --seed 1 > /dev/null
chmod -R go-rwx "$D/in"

say "starting the admin API and its audit key holder"
"$CDSGATE" audit keygen --private "$D/audit/key.pem" --public "$D/audit.pub"
chown -R cdsgate-audit: "$D/audit" && chmod 0700 "$D/audit"
chown cdsgate-api: "$D/state"
chown cdsgate-api:cdsgate-analytics "$D/mnt" && chmod 0750 "$D/mnt"
export CDSGATE_SOCKET=$D/api.sock
"$CDSGATED" api --socket "$CDSGATE_SOCKET" --store "$D/state/store.db" \
	--state-dir "$D/state" --mount-dir "$D/mnt" --cdsgate "$CDSGATE" \
	--audit-log "$D/audit/audit.log" --audit-key "$D/audit/key.pem" \
	> "$D/api.out" 2> "$D/api.err" &
pids+=($!)
wait_ready "$D/api.out" "${pids[-1]}" > /dev/null

"$CDSGATE" recipient add demo-researcher --name "Demo researcher" > /dev/null
say "importing through the de-identification gate (PU <= 1%, 5-anonymity)"
"$CDSGATE" dataset import "$D/in/patients.csv" --name patients \
	--qi age,sex,zip,race,admission_date --identifying patient_id,name \
	--sensitive diagnosis --hierarchies "$D/in" --pu-threshold 0.01 \
	--population 4.031e6 --k 5 --json > "$D/import.json"
python3 - "$D/import.json" <<'PY' >&2
import json, sys
d = json.load(open(sys.argv[1])); r = d["report"]
print("    verdict: %s; records %d, suppressed %d; transformation %s"
      % (d["state"], r["records"], r["suppressed_records"], r["transformation"]))
print("    population uniqueness after: %s (%s)"
      % (r["risk"]["after"]["pu_fraction"], r["risk"]["after"]["pu_model"]))
PY
ID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$D/import.json")
say "mounting dataset $ID into the analytics backend"
"$CDSGATE" dataset mount "$ID" > /dev/null

"$BUILD/cdsgate-analytics" --listen 127.0.0.1:0 --mount-dir "$D/mnt" \
	--static-dir "$BUILD/analytics/static" > "$D/analytics.out" 2> "$D/analytics.err" &
pids+=($!)
BACKEND=$(wait_ready "$D/analytics.out" "${pids[-1]}")

say "starting the researcher's gateway session on http://$BACKEND/"
python3 -c 'import secrets,string; print("".join(secrets.choice(string.ascii_letters+string.digits) for _ in range(8)))' > "$D/pw"
chmod 0600 "$D/pw"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$CDSGATED" run-session --backend "http://$BACKEND/" --listen "127.0.0.1:$PORT" \
	--password-file "$D/pw" --recipient demo-researcher \
	> "$D/session.out" 2> "$D/session.err" &
pids+=($!)
VNC=$(wait_ready "$D/session.out" "${pids[-1]}")

if [ -n "$snapshot" ]; then
	say "taking a picture through vncsnapshot"
	"$BUILD/tests/gateway/cdsgate-vnctest" mkpasswd "$D/pw" "$D/pw.vnc"
	sleep 6		# the app loads perspective and renders the table
	timeout 20 vncsnapshot -quiet -passwd "$D/pw.vnc" -quality 95 \
		"${VNC%:*}::${VNC##*:}" "$D/shot.jpg" > /dev/null 2>&1
	convert "$D/shot.jpg" "$snapshot"
	say "wrote $snapshot"
	exit 0
fi
cat <<EOF

  The session is up. Connect any VNC client:
      address:  $VNC   (e.g. vncviewer ${VNC%:*}::${VNC##*:})
      password: $(cat "$D/pw")   (shown once)
  The researcher sees the de-identified table in the analytics app and
  nothing else. ^C stops everything and verifies the audit log.

EOF
wait "${pids[-1]}" || true
