#!/usr/bin/env bash
# 038-api-async: a long import does not hold up the api.  Under
# `cdsgated serve`, while the gate de-identifies a dataset that takes
# seconds, GET /v1/health and a session revoke answer within 200 ms
# (measured), the revoked session's VNC port closes within 2 s, and the
# import then completes with its verdict.  A client that disconnects in
# the middle does not lose the import (the verdict is stored); a SIGKILL
# of the api in the middle leaves a consistent store after a restart (the
# import recovered as an error, the audit log intact).
. "$(dirname "$0")/lib.sh"

CDSGATED=$top_builddir/cdsgated
[ -x "$CDSGATED" ] || skip_all "cdsgated not built"
serve_require

# lib.sh: $D, $SOCK, $PORT0, the backend, $NOSESS.  Without a session
# here (no Xvfb/Chromium) the revoke is timed on a session that does not
# exist (404, still a custodian change through the audit path).
serve_fixture
CONF=$D/serve.json
write_config "$CONF"
SRV_PID=	# start_serve, api_pid: lib.sh
trap 'kill $SRV_PID $BE_PID 2>/dev/null; sleep 1; rm -rf "$TMP"' EXIT
# ms METHOD PATH: the request's own time (curl's time_total) in ms; the
# status into $D/code.
ms() {
	curl -s -o "$D/resp" -w '%{http_code} %{time_total}\n' --unix-socket "$SOCK" \
		-X "$1" "http://cdsgate$2" > "$D/timing"
	read -r code t < "$D/timing"
	echo "$code" > "$D/code"
	python3 -c "print(int(float('$t') * 1000))"
}
state_of() { sqlite3 "$D/state/store.db" "select state from datasets where name='$1'" 2>/dev/null; }
# wait_state NAME STATE SECONDS
wait_state() {
	for _ in $(seq $(($3 * 10))); do
		[ "$(state_of "$1")" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
# port_closed_ms PORT: until nothing accepts on 127.0.0.1:PORT; the ms.
port_closed_ms() {
	python3 - "$1" <<'PY'
import socket, sys, time
t0 = time.monotonic()
while time.monotonic() - t0 < 5:
    s = socket.socket()
    try:
        s.connect(("127.0.0.1", int(sys.argv[1])))
    except OSError:
        break
    finally:
        s.close()
    time.sleep(0.02)
print(int((time.monotonic() - t0) * 1000))
PY
}
QI=age,sex,zip,race,admission_date
# the columns the small imports (QIs age,sex) leave to classify
REST="--insensitive zip,race,admission_date,diagnosis,length_of_stay"
# import NAME: the custodian's CLI in the background; its pid in $CLI.
import() {
	"$CDSGATE" dataset import "$D/big/patients.csv" --name "$1" --qi "$QI" \
		--identifying patient_id,name --sensitive diagnosis \
		--insensitive length_of_stay --hierarchies "$D/big" --k 5 --json \
		> "$D/$1.json" 2> "$D/$1.err" &
	CLI=$!
}

"$CDSGATE" sample generate --out "$D/big" --records 1000000 --seed 3 > /dev/null
"$CDSGATE" sample generate --out "$D/in" --records 500 --seed 1 > /dev/null
chmod -R go-rwx "$D/big" "$D/in"
check "cdsgated serve starts" start_serve

# ---- a session to revoke while the gate runs ----
SID=none VPORT=
if [ -z "$NOSESS" ]; then
	"$CDSGATE" recipient add alice --name Alice > /dev/null
	"$CDSGATE" dataset import "$D/in/patients.csv" --name small --qi age,sex \
		--identifying patient_id,name $REST --hierarchies "$D/in" --k 2 > /dev/null 2>&1
	"$CDSGATE" dataset mount 1 > /dev/null 2>&1
	"$CDSGATE" session create --recipient alice --dataset 1 --json > "$D/s1.json" 2> "$D/s1.err"
	rc=$?
	check "a session runs (exit $rc $(head -c 200 "$D/s1.err"))" test "$rc" -eq 0
	SID=$(json "$D/s1.json" 'j["id"]')
	VPORT=$(json "$D/s1.json" 'j["vnc"].rsplit(":", 1)[1]')
else
	skip "a real session: $NOSESS"
fi

# ---- the api answers while the gate runs ----
t0=$(date +%s%N)
import big
wait_state big importing 20
check "the big import is running (the store says importing)" test "$(state_of big)" = importing
HMS=$(ms GET /v1/health)
check "GET /v1/health during the import: 200 in $HMS ms (<= 200)" \
	sh -c "[ $(cat "$D/code") = 200 ] && [ $HMS -le 200 ]"
LMS=$(ms GET /v1/datasets)
check "GET /v1/datasets during the import: 200 in $LMS ms, listing it as importing" \
	sh -c "[ $(cat "$D/code") = 200 ] && [ $LMS -le 200 ] && grep -q '\"importing\"' '$D/resp'"
[ -n "$VPORT" ] && check "the session's VNC port accepts before the revoke" \
	python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 2).close()' "$VPORT"
RMS=$(ms POST "/v1/sessions/$SID/revoke")
if [ -z "$NOSESS" ]; then
	check "a session revoke during the import: 200 in $RMS ms (<= 200)" \
		sh -c "[ $(cat "$D/code") = 200 ] && [ $RMS -le 200 ]"
	CMS=$(port_closed_ms "$VPORT")
	check "the revoked session's VNC port closes within 2 s ($CMS ms)" test "$CMS" -le 2000
else
	check "a revoke during the import: answered (404: no such session) in $RMS ms (<= 200)" \
		sh -c "[ $(cat "$D/code") = 404 ] && [ $RMS -le 200 ]"
fi
if [ -z "$NOSESS" ]; then
	# a session start (scrypt of its secret, the parent's answer) does
	# not hold up the api: health probes back to back for 2 s, the start
	# in the middle of them
	python3 - "$SOCK" > "$D/probe" <<'PY' &
import socket, sys, time
lat, t0 = [], time.monotonic()
while time.monotonic() - t0 < 2:
    s = socket.socket(socket.AF_UNIX)
    t = time.monotonic()
    s.connect(sys.argv[1])
    s.sendall(b"GET /v1/health HTTP/1.0\r\n\r\n")
    if s.makefile("rb").readline().split()[1:2] == [b"200"]:
        lat.append((time.monotonic() - t) * 1000)
    s.close()
print(len(lat), int(max(lat or [0])))
PY
	PROBE=$!
	sleep 0.5
	t1=$(date +%s%N)
	"$CDSGATE" session create --recipient alice --dataset 1 --json > "$D/s2.json" 2> "$D/s2.err"
	rc=$?
	took=$(( ($(date +%s%N) - t1) / 1000000 ))
	wait "$PROBE"
	read -r n worst < "$D/probe"
	diag "session create: $took ms; $n health replies around it, slowest $worst ms"
	# (the scrypt hash of the secret, 16 MiB, still runs in the loop:
	# 50-400 ms on this shared machine under the import's load)
	check "GET /v1/health around a session start: $n replies, none waited for the parent (slowest $worst ms <= 1000, start $took ms)" \
		sh -c "[ $n -ge 5 ] && [ $worst -le 1000 ]"
	check "that session then starts: 201 with its secret (exit $rc)" \
		sh -c "[ $rc = 0 ] && [ -n \"\$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[\"secret\"])' '$D/s2.json')\" ]"
fi
check "... and all of it while the import was still running" test "$(state_of big)" = importing
wait "$CLI"; rc=$?
IMS=$(( ($(date +%s%N) - t0) / 1000000 ))
diag "import of 1000000 records: $IMS ms; health $HMS ms, list $LMS ms, revoke $RMS ms during it"
check "the import then completes: exit $rc, passed, the CLI's output unchanged ($(head -c 200 "$D/big.err"))" \
	sh -c "[ $rc = 0 ] && [ '$(json "$D/big.json" 'j["state"]' 2>/dev/null)' = passed ] && [ '$(json "$D/big.json" 'j["report"]["records"]' 2>/dev/null)' = 1000000 ]"
check "it took more than 2 s (the test means something: $IMS ms)" test "$IMS" -gt 2000

# ---- imports queue behind the gate, each answered with its own verdict ----
# small NAME: a 500-record import in the background (pid in $SMALL).
small() {
	"$CDSGATE" dataset import "$D/in/patients.csv" --name "$1" --qi age,sex \
		--identifying patient_id,name $REST --hierarchies "$D/in" --k 2 --json \
		> "$D/$1.json" 2> "$D/$1.err" &
	SMALL=$!
}
importing() { sqlite3 "$D/state/store.db" "select count(*) from datasets where state='importing'" 2>/dev/null; }
import qbig
QBIG=$CLI
wait_state qbig importing 20
small q1; Q1=$SMALL; small q2; Q2=$SMALL; small q3; Q3=$SMALL
for _ in $(seq 100); do [ "$(importing)" = 4 ] && break; sleep 0.05; done
check "4 imports wait for the gate at once" test "$(importing)" = 4
"$CDSGATE" dataset import "$D/in/patients.csv" --name q4 --qi age,sex \
	--identifying patient_id,name $REST --hierarchies "$D/in" --k 2 > /dev/null 2> "$D/q4.err"; rc=$?
check "a fifth is refused while they wait: 503 busy (exit $rc: $(head -c 120 "$D/q4.err"))" \
	sh -c "[ $rc -ne 0 ] && grep -q 'imports are waiting' '$D/q4.err'"
check "... and nothing of it was stored" test -z "$(state_of q4)"
wait "$QBIG" "$Q1" "$Q2" "$Q3"
check "each queued import got its own verdict and report, in order" python3 - "$D" <<'PY'
import json, sys
for name, n in [("qbig", 1000000), ("q1", 500), ("q2", 500), ("q3", 500)]:
    j = json.load(open("%s/%s.json" % (sys.argv[1], name)))
    assert j["name"] == name and j["state"] == "passed", j
    assert j["report"]["records"] == n, (name, j["report"]["records"])
PY

# ---- a client that goes away does not lose its import ----
import gone
wait_state gone importing 20
kill -9 "$CLI"; wait "$CLI" 2>/dev/null
check "the CLI was killed while its import ran" test "$(state_of gone)" = importing
check "the verdict is still recorded (passed)" wait_state gone passed 60
check "the api kept going" sh -c "curl -sf --unix-socket '$SOCK' http://cdsgate/v1/health | grep -q ok"

# ---- SIGTERM of the daemon in the middle of an import ----
import termed
wait_state termed importing 20
t0=$(date +%s%N)
kill -TERM "$SRV_PID"; wait "$SRV_PID"; rc=$?
TMS=$(( ($(date +%s%N) - t0) / 1000000 ))
wait "$CLI"; crc=$?
check "SIGTERM mid-import: the daemon exits 0 in $TMS ms (<= 3000), without waiting for the gate" \
	sh -c "[ $rc = 0 ] && [ $TMS -le 3000 ]"
check "the waiting client is told (exit $crc: $(head -c 160 "$D/termed.err"))" \
	sh -c "[ $crc -ne 0 ] && grep -q stopping '$D/termed.err'"
check "the gate went with it" sh -c '! pgrep -f "[d]eid anonymize --data $0" >/dev/null' "$D/state"
check "restart after the SIGTERM" start_serve
check "the import it stopped is an error, never a pass" test "$(state_of termed)" = error

# ---- SIGKILL of the api in the middle of an import ----
import killed
wait_state killed importing 20
APID=$(api_pid)
kill -9 "$APID"
wait "$CLI" 2>/dev/null
wait "$SRV_PID"; rc=$?
check "the api killed mid-import: the parent fails closed (exit $rc)" test "$rc" -ne 0
sleep 0.5
check "no gate is left running" sh -c '! pgrep -f "[d]eid anonymize --data $0" >/dev/null' "$D/state"
check "restart after the SIGKILL" start_serve
check "the interrupted import is an error, never a pass" \
	sh -c "[ \"\$(sqlite3 '$D/state/store.db' \"select state from datasets where name='killed'\")\" = error ]"
check "the others kept their verdicts" sh -c "[ '$(state_of big)' = passed ] && [ '$(state_of gone)' = passed ]"
check "the store is consistent" test "$(sqlite3 "$D/state/store.db" 'pragma integrity_check')" = ok
kill "$SRV_PID"; wait "$SRV_PID"; SRV_PID=
"$CDSGATE" audit verify "$D/audit/audit.log" --key "$D/audit.pub" > "$D/verify.out" 2>&1
check "the audit log verifies ($(head -c 120 "$D/verify.out"))" grep -q intact "$D/verify.out"
"$CDSGATE" audit list "$D/audit/audit.log" --json > "$D/audit.json"
check "it has the verdicts and the recovery" python3 - "$D/audit.json" <<'PY'
import json, sys
types = [json.loads(l)["type"] for l in open(sys.argv[1])]
assert types.count("dataset.verdict") >= 2 and "recover" in types, types
PY

done_testing
