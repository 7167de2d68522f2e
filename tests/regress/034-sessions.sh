#!/usr/bin/env bash
# 034-sessions: `cdsgated serve --config FILE`, the root parent.  Its
# config is checked strictly (-n, -T, unsafe modes and unknown keys
# refused); it binds the API socket and forks the api child (which drops
# to cdsgate-api).  Sessions through the API and `cdsgate session`: a real
# VNC client with the one-time secret sees the backend's page; the
# recipient's limit gives 409; revoke ends every process of the session
# within 2 s (measured); an expired session cannot be connected to; a dead
# api child makes the parent stop everything and exit non-zero; SIGTERM
# makes it exit 0, nothing left, with an audit log that verifies.
. "$(dirname "$0")/lib.sh"

CDSGATED=$top_builddir/cdsgated
[ -x "$CDSGATED" ] || skip_all "cdsgated not built"
serve_require

serve_fixture	# lib.sh: $D, $SOCK, $PORT0, the backend, $NOSESS
CONF=$D/serve.json
write_config "$CONF"

SRV_PID=	# start_serve, api_pid: lib.sh
trap 'kill $SRV_PID $BE_PID 2>/dev/null; sleep 1; rm -rf "$TMP"' EXIT

# ---- the config ----
"$CDSGATED" serve -n --config "$CONF" > "$D/n.out" 2>&1; rc=$?
check "serve -n accepts the config (exit $rc)" sh -c "[ $rc -eq 0 ] && grep -q 'configuration ok' '$D/n.out'"
"$CDSGATED" serve -T --config "$CONF" > "$D/T.out" 2>&1; rc=$?
check "serve -T prints the effective config as JSON, defaults filled in" python3 - "$D/T.out" "$SOCK" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
assert c["socket"] == sys.argv[2], c
assert c["session_expires_default"] == 3600 and c["session_expires_max"] == 604800, c
assert c["tls_cert"] is None and c["session_address"] == "127.0.0.1", c
PY
chmod 0664 "$CONF"
"$CDSGATED" serve -n --config "$CONF" > "$D/gw.out" 2>&1; rc=$?
check "a group-writable config is refused (exit $rc)" sh -c "[ $rc -eq 2 ] && grep -q 'group/world-writable' '$D/gw.out'"
write_config "$D/bad1.json" '"sesion_ports": "1-2"'
"$CDSGATED" serve -n --config "$D/bad1.json" > "$D/bad1.out" 2>&1; rc=$?
check "an unknown key is refused (exit $rc)" sh -c "[ $rc -eq 2 ] && grep -q 'unknown key \"sesion_ports\"' '$D/bad1.out'"
write_config "$D/bad2.json" '"session_expires_max": 0'
"$CDSGATED" serve -n --config "$D/bad2.json" > "$D/bad2.out" 2>&1; rc=$?
check "a value out of range is refused (exit $rc)" sh -c "[ $rc -eq 2 ] && grep -q 'out of range' '$D/bad2.out'"
write_config "$D/bad3.json" '"tls_cert": "/nonexistent.pem"'
"$CDSGATED" serve -n --config "$D/bad3.json" > "$D/bad3.out" 2>&1; rc=$?
check "tls_cert without tls_key is refused (exit $rc)" sh -c "[ $rc -eq 2 ] && grep -q 'go together' '$D/bad3.out'"
echo '{"socket": ' > "$D/bad4.json"
"$CDSGATED" serve -n --config "$D/bad4.json" > "$D/bad4.out" 2>&1; rc=$?
check "malformed JSON is refused with line:column (exit $rc)" sh -c "[ $rc -eq 2 ] && grep -q 'bad4.json:[0-9]*:[0-9]*:' '$D/bad4.out'"
chmod 0644 "$CONF"
# every path usable by the user that writes it, checked before "ok"
mkdir -p "$D/rootstate" "$D/wrongaudit"
chmod 0700 "$D/rootstate"
cp -p "$D/audit/key.pem" "$D/wrongaudit/key.pem"
chown cdsgate-api: "$D/wrongaudit"
write_config "$D/paths.json"
sed -i "s|\"$D/state\"|\"$D/rootstate\"|; s|\"$D/audit/audit.log\"|\"$D/wrongaudit/audit.log\"|" "$D/paths.json"
"$CDSGATED" serve -n --config "$D/paths.json" > "$D/paths.out" 2>&1; rc=$?
check "serve -n: a state_dir only root can write is refused, naming key, path and user (exit $rc)" \
	sh -c "[ $rc -eq 2 ] && grep -q 'state_dir: $D/rootstate: cdsgate-api cannot create files in it (owner uid 0' '$D/paths.out'"
check "serve -n: an audit log in a directory the key holder cannot write is refused" \
	grep -q "audit_log: $D/wrongaudit: cdsgate-audit cannot create files in it" "$D/paths.out"
check "serve -n: no 'configuration ok' when a path is unusable" sh -c "! grep -q 'configuration ok' '$D/paths.out'"
"$CDSGATED" serve --config "$D/paths.json" > "$D/paths2.out" 2>&1; rc=$?
check "serve refuses to start on it too, before anything runs (exit $rc)" \
	sh -c "[ $rc -eq 2 ] && grep -q 'state_dir:' '$D/paths2.out' && [ ! -S '$SOCK' ]"

# ---- the parent and its api child ----
check "cdsgated serve starts; the api prints ready" start_serve
APID=$(api_pid)
check "the api child runs as cdsgate-api, the parent as root" \
	sh -c "[ -n '$APID' ] && [ \"\$(stat -c %U /proc/$SRV_PID)\" = root ]"
check "GET /v1/health answers through the parent's socket" \
	sh -c "curl -sf --unix-socket '$SOCK' http://cdsgate/v1/health | grep -q ok"
check "the secrets dir is root's, 0700" test "$(stat -c '%U %a' "$D/secrets")" = "root 700"


# ---- sessions through the API ----
# api METHOD PATH [BODY]: as root; prints the status, the body in $D/resp.
api() {
	local out
	out=$(printf '%s' "${3-}" | curl -s -w '\n%{http_code}' --unix-socket "$SOCK" \
		-X "$1" ${3:+-H 'Content-Type: application/json' --data-binary @-} "http://cdsgate$2")
	printf '%s' "${out%$'\n'*}" > "$D/resp"
	echo "${out##*$'\n'}"
}
# supervisor_pids: the parent's root children (the api runs as cdsgate-api).
supervisors() { pgrep -P "$SRV_PID" -u root | tr '\n' ' '; }
# tree, alive, gone_ms, banner: lib.sh
# session_vnc FILE: host and port from a 201 reply.
vnc_of() { json "$1" 'j["vnc"]'; }

if [ -n "$NOSESS" ]; then
	skip "sessions: $NOSESS"
else
"$CDSGATE" recipient add alice --name "Alice" --max-sessions 1 > /dev/null
mount_patients; rc=$?	# lib.sh: sets $DS
check "a dataset is imported through the gate and mounted (exit $rc)" test "$rc" -eq 0

t0=$(date +%s%N)
"$CDSGATE" session create --recipient alice --dataset "$DS" --expires-in 600 --json \
	> "$D/s1.json" 2> "$D/s1.err"; rc=$?
START_MS=$(( ($(date +%s%N) - t0) / 1000 / 1000 ))
diag "session create -> ready: $START_MS ms"
check "cdsgate session create (POST /v1/sessions) succeeds in $START_MS ms (exit $rc: $(head -c 200 "$D/s1.err"))" test "$rc" -eq 0
SID=$(json "$D/s1.json" 'j["id"]')
json "$D/s1.json" 'j["secret"]' > "$D/pw"
VADDR=$(vnc_of "$D/s1.json")
check "the reply has the secret, the VNC address in session_ports and a websocket path" python3 - "$D/s1.json" "$PORT0" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); lo = int(sys.argv[2])
host, port = j["vnc"].rsplit(":", 1)
assert host == "127.0.0.1" and lo <= int(port) <= lo + 20, j["vnc"]
assert len(j["secret"]) == 8 and j["novnc"].startswith("/websockify?token="), j
assert j["recipient"] == "alice" and j["state"] == "running", j
PY
"$VNCTEST" --host "${VADDR%:*}" --port "${VADDR##*:}" --password-file "$D/pw" snapshot "$D/s1.ppm" \
	> "$D/vnc.out" 2> "$D/vnc.err"; rc=$?
check "a VNC client with the secret connects (exit $rc)" test "$rc" -eq 0
sleep 3
"$VNCTEST" --host "${VADDR%:*}" --port "${VADDR##*:}" --password-file "$D/pw" snapshot "$D/s1.ppm" \
	> "$D/vnc.out" 2> "$D/vnc.err"
check "its screenshot shows the backend's page" banner "$D/s1.ppm"
code=$(api GET "/v1/sessions/$SID")
check "GET /v1/sessions/ID: running, no secret, no hash" \
	sh -c "[ $code = 200 ] && grep -q '\"state\": *\"running\"' '$D/resp' && ! grep -qi 'secret\|hash\|scrypt' '$D/resp'"
code=$(api GET /v1/sessions)
check "GET /v1/sessions lists it, without the secret" \
	sh -c "[ $code = 200 ] && grep -q '$SID' '$D/resp' && ! grep -q \"\$(cat '$D/pw')\" '$D/resp'"
"$CDSGATE" session list > "$D/list.out"; rc=$?
check "cdsgate session list shows it running (exit $rc)" grep -qE "^$SID +alice +$DS +running" "$D/list.out"
check "the store says running" \
	test "$(sqlite3 "$D/state/store.db" "select state from sessions where id='$SID'")" = running
check "the secret is not in the store, the audit log or the daemon's output" \
	sh -c "! grep -rqF \"\$(cat '$D/pw')\" '$D/state' '$D/audit' '$D/out' '$D/err'"
"$CDSGATE" session create --recipient alice --dataset "$DS" > "$D/s2.out" 2> "$D/s2.err"; rc=$?
check "a second session for alice (limit 1) is refused: 409 (exit $rc: $(head -c 160 "$D/s2.err"))" \
	sh -c "[ $rc -ne 0 ] && grep -q 'limit' '$D/s2.err' && ! grep -q secret '$D/s2.out'"
code=$(api POST /v1/sessions "{\"recipient\": \"alice\", \"dataset\": $DS}")
check "the API says 409 limit" sh -c "[ $code = 409 ] && grep -q '\"limit\"' '$D/resp'"
check "the refusal names the limit: max_sessions ($(head -c 160 "$D/s2.err"))" \
	grep -q 'alice already has 1 live session: its limit (max_sessions)' "$D/s2.err"
check "the audit log records the refusal with that reason" \
	wait_line "$D/audit/audit.log" 'session.create.refused.*max_sessions|max_sessions.*session.create.refused' 5
"$CDSGATE" dataset import "$D/in/patients.csv" --name patients2 \
	--qi age,sex,zip,race,admission_date --identifying patient_id,name --sensitive diagnosis --insensitive length_of_stay \
	--hierarchies "$D/in" --k 5 --suppression-limit 0.05 --json > "$D/imp2.json" 2>&1
DS2=$(json "$D/imp2.json" 'j["id"]')
code=$(api POST /v1/sessions "{\"recipient\": \"alice\", \"dataset\": $DS2}")
check "a session on a dataset that passed but is not mounted -> 409 not_mounted, said so ($(head -c 200 "$D/resp"))" \
	sh -c "[ $code = 409 ] && grep -q '\"not_mounted\"' '$D/resp' && grep -q 'passed the gate but is not mounted' '$D/resp' && ! grep -q 'refused by the de-identification gate' '$D/resp'"
check "the audit log records it as not mounted, not as a gate refusal" \
	sh -c "grep '\"session.create.refused\"' '$D/audit/audit.log' | tail -n 1 | grep -q 'not mounted'"
"$CDSGATE" session show "$SID" > "$D/show.out"; rc=$?
check "cdsgate session show ID: one line, running (exit $rc)" grep -qE "^$SID +alice +$DS +running" "$D/show.out"
"$CDSGATE" session show no-such-session > /dev/null 2> "$D/show.err"; rc=$?
check "cdsgate session show of an unknown id: exit 2, said so (exit $rc)" \
	sh -c "[ $rc -eq 2 ] && grep -q 'no such' '$D/show.err'"
"$CDSGATE" recipient show alice --json > "$D/rshow.json"; rc=$?
check "cdsgate recipient show alice --json (exit $rc)" \
	sh -c "[ $rc -eq 0 ] && [ \"\$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j[\"id\"], j[\"max_sessions\"])' '$D/rshow.json')\" = 'alice 1' ]"
code=$(api POST /v1/sessions "{\"recipient\": \"nobody\", \"dataset\": $DS}")
check "a session for an unknown recipient -> 404 ($(head -c 120 "$D/resp"))" test "$code" = 404
code=$(api POST /v1/sessions "{\"recipient\": \"alice\", \"dataset\": 999}")
check "a session on a dataset that is not mounted -> 4xx, not started ($code)" \
	sh -c "[ $code = 404 ] || [ $code = 409 ]"
code=$(api POST /v1/sessions "{\"recipient\": \"alice\", \"dataset\": $DS, \"expires_in\": 700000}")
check "expires_in over 7 days -> 422" test "$code" = 422
code=$(api POST "/v1/sessions/$SID/extend" '{"expires_in": 1200}')
check "extend -> 200, later expiry" \
	sh -c "[ $code = 200 ] && [ \$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[\"expires\"])' '$D/resp') -gt $(json "$D/s1.json" 'j["expires"]') ]"
"$CDSGATE" session extend "$SID" --expires-in 1800 --json > "$D/ext.json"; rc=$?
left=$(( $(json "$D/ext.json" 'j["expires"]' 2>/dev/null || echo 0) - $(date +%s) ))
check "cdsgate session extend ID --expires-in 1800: expires in $left s (exit $rc)" \
	sh -c "[ $rc -eq 0 ] && [ $left -ge 1790 ] && [ $left -le 1800 ]"
"$CDSGATE" session extend "$SID" --expires-in soon > /dev/null 2> "$D/ext.err"; rc=$?
check "session extend with a bad number: usage error, exit 2 (exit $rc)" \
	sh -c "[ $rc -eq 2 ] && grep -q 'not a positive number' '$D/ext.err'"

# revoke: every process of the session gone within 2 s
PIDS=$(tree $(supervisors))
check "the session has processes (supervisor and children: $(echo $PIDS | wc -w))" test "$(echo $PIDS | wc -w)" -ge 3
"$CDSGATE" session revoke "$SID" > "$D/rev.out" 2>&1; code=$?
[ $code = 0 ] && code=200
MS=$(gone_ms $PIDS)
diag "revoke: the session's processes were gone after $MS ms"
check "cdsgate session revoke; all its processes gone within 2 s ($MS ms)" sh -c "[ $code = 200 ] && [ $MS -le 2000 ]"
check "the store says revoked" \
	test "$(sqlite3 "$D/state/store.db" "select state from sessions where id='$SID'")" = revoked
"$VNCTEST" --host "${VADDR%:*}" --port "${VADDR##*:}" --password-file "$D/pw" snapshot "$D/s2.ppm" \
	> "$D/vnc2.out" 2>&1; rc=$?
check "a connect after the revoke fails (exit $rc)" test "$rc" -ne 0
check "the session's secret files are gone" test -z "$(ls -A "$D/secrets")"

# expiry
code=$(api POST /v1/sessions "{\"recipient\": \"alice\", \"dataset\": $DS, \"expires_in\": 4}")
cp "$D/resp" "$D/s3.json"
check "a session with expires_in 4 -> 201" test "$code" = 201
SID3=$(json "$D/s3.json" 'j["id"]'); VADDR=$(vnc_of "$D/s3.json")
json "$D/s3.json" 'j["secret"]' > "$D/pw"
PIDS=$(tree $(supervisors))
for _ in $(seq 60); do
	[ "$(sqlite3 "$D/state/store.db" "select state from sessions where id='$SID3'")" = expired ] && break
	sleep 0.25
done
check "after its expiry the store says expired" \
	test "$(sqlite3 "$D/state/store.db" "select state from sessions where id='$SID3'")" = expired
MS=$(gone_ms $PIDS)
check "and its processes are gone ($MS ms after the store said expired)" test "$(alive $PIDS)" -eq 0
"$VNCTEST" --host "${VADDR%:*}" --port "${VADDR##*:}" --password-file "$D/pw" snapshot "$D/s3.ppm" \
	> "$D/vnc3.out" 2>&1; rc=$?
check "it can no longer be connected to (exit $rc)" test "$rc" -ne 0

# one more, alive when the api is killed
code=$(api POST /v1/sessions "{\"recipient\": \"alice\", \"dataset\": $DS}")
check "a fresh session for the kill test -> 201" test "$code" = 201
fi
SESS_PIDS=$(tree $(supervisors))

# ---- a dead api child: the parent fails closed ----
kill -9 "$(api_pid)"
wait "$SRV_PID"; rc=$?
check "kill -9 of the api child: the parent exits non-zero (exit $rc)" test "$rc" -ne 0
check "and says why" grep -q 'the api.*stopping every session' "$D/err"
# the api, its key holder and the parent all have the parent's command line
left() { pgrep -f "^[^ ]*cdsgated serve --config $CONF"; }
sleep 0.5
LEFT="$(left | tr '\n' ' ')$(for p in $SESS_PIDS; do kill -0 $p 2>/dev/null && echo -n "$p "; done)"
check "and nothing of it is left (api, key holder, parent, $(echo $SESS_PIDS | wc -w) session processes: '$LEFT')" test -z "$LEFT"

# ---- SIGTERM: stop everything, exit 0, the audit log verifies ----
check "cdsgated serve starts again" start_serve
SESS_PIDS=
if [ -z "$NOSESS" ]; then
	"$CDSGATE" session create --recipient alice --dataset "$DS" --json > "$D/s4.json"; rc=$?
	check "a session runs when the parent gets SIGTERM (exit $rc)" test "$rc" -eq 0
	SESS_PIDS=$(tree $(supervisors))
fi
kill -TERM "$SRV_PID"; wait "$SRV_PID"; rc=$?
check "SIGTERM: the parent exits 0 (exit $rc)" test "$rc" -eq 0
LEFT="$(left | tr '\n' ' ')$(for p in $SESS_PIDS; do kill -0 $p 2>/dev/null && echo -n "$p "; done)"
SRV_PID=
check "nothing is left ($(echo $SESS_PIDS | wc -w) session processes before: '$LEFT')" test -z "$LEFT"
if [ -z "$NOSESS" ]; then
	SID4=$(json "$D/s4.json" 'j["id"]')
	check "the store recorded its end before the api exited (not left running)" \
		test "$(sqlite3 "$D/state/store.db" "select state from sessions where id='$SID4'")" = ended
fi
check "the API socket is gone" test ! -e "$SOCK"
# ---- a session that cannot start: 503 with the reason, store says ended ----
if [ -n "$NOSESS" ]; then
	skip "a failing session start: $NOSESS"
else
	echo '{"key_rate": 1e9}' > "$D/badpolicy.json"
	write_config "$CONF" "\"session_policy\": \"$D/badpolicy.json\""
	check "cdsgated serve starts with a session policy the supervisor refuses" start_serve
	t0=$(date +%s%N)
	code=$(api POST /v1/sessions "{\"recipient\": \"alice\", \"dataset\": $DS}")
	MS=$(( ($(date +%s%N) - t0) / 1000000 ))
	check "POST /v1/sessions -> 503 session_failed at once ($MS ms: $(head -c 160 "$D/resp"))" \
		sh -c "[ $code = 503 ] && grep -q session_failed '$D/resp' && [ $MS -lt 10000 ]"
	check "the store says it did not start (revoked, with the reason); nothing live" \
		sh -c "[ \"\$(sqlite3 '$D/state/store.db' \"select count(*) from sessions where state in ('created','running')\")\" = 0 ] &&
		       sqlite3 '$D/state/store.db' \"select reason from sessions where state='revoked'\" | grep -q 'did not start'"
	kill -TERM "$SRV_PID"; wait "$SRV_PID"; SRV_PID=
	write_config "$CONF"
fi

# ---- with TLS: the secret is the recipient's VeNCrypt password ----
if [ -n "$NOSESS" ] || ! command -v openssl >/dev/null; then
	skip "sessions over TLS: ${NOSESS:-openssl not installed}"
else
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
		-addext "subjectAltName=IP:127.0.0.1" -keyout "$D/key.pem" -out "$D/cert.pem" 2> /dev/null
	chmod 600 "$D/key.pem"
	write_config "$CONF" "\"tls_cert\": \"$D/cert.pem\", \"tls_key\": \"$D/key.pem\""
	check "cdsgated serve starts with tls_cert and tls_key" start_serve
	"$CDSGATE" session create --recipient alice --dataset "$DS" --json > "$D/s5.json" 2> "$D/s5.err"; rc=$?
	check "a session with TLS: created, a 24-character secret (exit $rc: $(head -c 160 "$D/s5.err"))" \
		sh -c "[ $rc -eq 0 ] && [ \$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))[\"secret\"]))' '$D/s5.json') -eq 24 ]"
	json "$D/s5.json" 'j["secret"]' > "$D/pw"
	VADDR=$(vnc_of "$D/s5.json")
	sleep 3
	"$VNCTEST" --host "${VADDR%:*}" --port "${VADDR##*:}" --user alice --ca "$D/cert.pem" \
		--password-file "$D/pw" --timeout 30 snapshot "$D/s5.ppm" > "$D/vt.out" 2> "$D/vt.err"; rc=$?
	check "VeNCrypt as alice with the secret connects (exit $rc: $(tail -1 "$D/vt.err"))" test "$rc" -eq 0
	[ "$rc" -eq 0 ] || { sed 's/^/#   /' "$D/vt.err" | tail -8; grep -v '^{' "$D/err" | sed 's/^/#   /' | tail -8; grep auth "$D/err" | tail -3 | sed 's/^/#   /'; }
	check "and sees the backend's page" banner "$D/s5.ppm"
	echo wrong-secret-wrong-secret > "$D/badpw"
	"$VNCTEST" --host "${VADDR%:*}" --port "${VADDR##*:}" --user alice --ca "$D/cert.pem" \
		--password-file "$D/badpw" --timeout 30 snapshot "$D/s6.ppm" > /dev/null 2>&1; rc=$?
	check "a wrong secret is refused (exit $rc)" test "$rc" -ne 0
	kill -TERM "$SRV_PID"; wait "$SRV_PID"; rc=$?
	SRV_PID=
	check "SIGTERM: exit 0 (exit $rc)" test "$rc" -eq 0
fi

"$CDSGATE" audit verify "$D/audit/audit.log" --key "$D/audit.pub" > "$D/verify.out"; rc=$?
check "the audit log verifies ($(cat "$D/verify.out"))" test "$rc" -eq 0

done_testing
