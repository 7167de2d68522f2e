#!/usr/bin/env bash
# 032-admin-api: `cdsgated api` on a UNIX socket with a real SQLite store.
# Every route answers bad JSON, wrong types, unknown fields, oversized
# bodies, unknown ids, wrong methods and unauthorised peers with a clear
# 4xx — and the store is byte-for-byte unchanged after each of them.
# Peers are told apart by the kernel (SO_PEERCRED/SO_PEERGROUPS): root
# and the custodian group may change things, the auditor group may only
# read, anybody else gets 403.
. "$(dirname "$0")/lib.sh"

CDSGATED=$top_builddir/cdsgated
[ -x "$CDSGATED" ] || skip_all "cdsgated not built"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (peer-credential roles, privilege drop)"
for c in curl sqlite3 setpriv; do
	command -v $c >/dev/null || skip_all "$c not installed"
done
for g in cdsgate-custodian cdsgate-auditor; do
	getent group $g >/dev/null || skip_all "group $g missing (./dev creates it)"
done
getent passwd cdsgate-api >/dev/null || skip_all "user cdsgate-api missing (./dev creates it)"

D=$TMP/api
mkdir -p "$D/state" && chown cdsgate-api: "$D/state" && chmod 0711 "$TMP"
SOCK=$D/api.sock
STORE=$D/state/store.db
AUD_GID=$(getent group cdsgate-auditor | cut -d: -f3)
CUS_GID=$(getent group cdsgate-custodian | cut -d: -f3)

# The audit key holder's key and log: its user's only.
AUD=$D/audit
mkdir -p "$AUD" && "$CDSGATE" audit keygen --private "$AUD/key.pem" --public "$D/audit.pub"
chown -R cdsgate-audit: "$AUD" && chmod 0700 "$AUD"
LOG=$AUD/audit.log

start_api() {
	"$CDSGATED" api --socket "$SOCK" --store "$STORE" --state-dir "$D/state" --audit-log "$LOG" \
		--audit-key "$AUD/key.pem" > "$D/out" 2> "$D/err" &
	API_PID=$!
	for _ in $(seq 50); do
		grep -q '^ready ' "$D/out" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
trap 'kill $API_PID 2>/dev/null; rm -rf "$TMP"' EXIT

# req AS METHOD PATH [BODY [CONTENT-TYPE]]: prints the status; body in $D/resp.
# AS is "root", "auditor", "custodian" or "nobody" (uid 65534).
req() {
	local who=$1 m=$2 p=$3 body=${4-} ct=${5:-application/json} pre=()
	case $who in
	auditor) pre=(setpriv --reuid=65534 --regid="$AUD_GID" --clear-groups) ;;
	custodian) pre=(setpriv --reuid=65534 --regid=65534 --groups="$CUS_GID") ;;
	nobody) pre=(setpriv --reuid=65534 --regid=65534 --clear-groups) ;;
	esac
	local args=(-sS -w '\n%{http_code}' --unix-socket "$SOCK" -X "$m") out
	[ -n "$body" ] && args+=(-H "Content-Type: $ct" --data-binary @-)
	# The body goes through a pipe and the reply through the shell, so
	# neither needs a file the unprivileged curl could write.
	out=$(printf '%s' "$body" | "${pre[@]}" curl "${args[@]}" "http://cdsgate$p" 2> "$D/curl.err")
	printf '%s' "${out%$'\n'*}" > "$D/resp"
	echo "${out##*$'\n'}"
}
# is CODE WHO METHOD PATH [BODY [CT]]: one TAP check on the status.
is() {
	local want=$1; shift
	local got; got=$(req "$@")
	if [ "$got" = "$want" ]; then ok "$2 $3 as $1 -> $want"
	else not_ok "$2 $3 as $1 -> $want (got $got: $(head -c 300 "$D/resp"))"
		# what the API said, and whether it still runs
		tail -n 15 "$D/err" 2>/dev/null | sed 's/^/# api: /'
		sed 's/^/# curl: /' "$D/curl.err"
		kill -0 "$API_PID" 2>/dev/null || diag "the API ($API_PID) is gone"
	fi
}
dump() { sqlite3 "$STORE" .dump; }
unchanged() { [ "$(dump)" = "$BEFORE" ]; }

"$CDSGATED" api --socket "$SOCK" --store "$STORE" > /dev/null 2> "$D/noaudit.err"; rc=$?
check "without an audit log the API does not start (exit $rc)" \
	sh -c "[ $rc -eq 2 ] && grep -q 'every change is audited' '$D/noaudit.err'"
check "cdsgated api starts and prints ready" start_api
check "the API process dropped to cdsgate-api" \
	test "$(stat -c %U /proc/$API_PID)" = cdsgate-api
check "the store file is the api user's only (0600)" \
	test "$(stat -c %a "$STORE")" = 600

is 200 root GET /v1/health
check "health says ok with the schema version" grep -q '"status":"ok"' "$D/resp"
is 201 root POST /v1/recipients '{"id":"alice","name":"Alice A.","max_sessions":2}'
is 201 custodian POST /v1/recipients '{"id":"bob","name":"Bob"}'
is 200 auditor GET /v1/recipients
check "the auditor sees both recipients" \
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert [r["id"] for r in j["recipients"]]==["alice","bob"]' "$D/resp"
is 200 auditor GET /v1/recipients/alice
check "max_sessions came through" grep -q '"max_sessions":2' "$D/resp"
is 200 root GET /v1/datasets
is 200 auditor GET /v1/metrics
check "metrics are Prometheus text" grep -q '^cdsgate_recipients 2$' "$D/resp"

# Everything below must be refused and change nothing.
BEFORE=$(dump)
big=$(head -c 1100000 /dev/zero | tr '\0' 'a')
is 400 root POST /v1/recipients '{"id":'
is 400 root POST /v1/recipients '[1,2]'
is 400 root POST /v1/recipients '{"id":"x","id":"y","name":"dup keys"}'
is 400 root POST /v1/recipients '{"id":5,"name":"B"}'
is 400 root POST /v1/recipients '{"id":"carol","name":["C"]}'
is 400 root POST /v1/recipients '{"id":"carol","name":"C","max_sessions":"2"}'
is 400 root POST /v1/recipients '{"id":"carol","name":"C","admin":true}'
is 400 root POST /v1/recipients '{"name":"no id"}'
is 422 root POST /v1/recipients '{"id":"../etc","name":"C"}'
is 422 root POST /v1/recipients '{"id":"carol","name":""}'
is 422 root POST /v1/recipients '{"id":"carol","name":"C","max_sessions":0}'
is 422 root POST /v1/recipients '{"id":"carol","name":"C","max_sessions":-1}'
is 409 root POST /v1/recipients '{"id":"alice","name":"again"}'
is 413 root POST /v1/recipients "{\"id\":\"carol\",\"name\":\"$big\"}"
is 415 root POST /v1/recipients '{"id":"carol","name":"C"}' text/plain
is 400 root POST /v1/recipients
is 400 root GET /v1/recipients '{"x":1}'
is 404 root GET /v1/recipients/nobody
is 404 root GET /v1/recipients/a..b/x
is 404 root POST /v1/recipients/nobody/disable
is 404 root GET /v1/datasets/999
is 404 root GET /v1/datasets/abc
is 404 root GET /v1/nothing
is 405 root DELETE /v1/recipients
is 405 root PUT /v1/recipients/alice
is 403 auditor POST /v1/recipients '{"id":"carol","name":"C"}'
is 403 auditor POST /v1/recipients/alice/disable
is 403 nobody GET /v1/recipients
is 403 nobody POST /v1/recipients '{"id":"carol","name":"C"}'
check "after all of that the store is unchanged" unchanged
check "error replies are JSON with a message" \
	python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["error"]; assert e["status"]==403 and "custodian or auditor" in e["message"]' "$D/resp"

is 200 root POST /v1/recipients/bob/disable
check "disable is recorded" grep -q '"disabled":true' "$D/resp"

# The custodian CLI over the same API.
export CDSGATE_SOCKET=$SOCK
check "cdsgate recipient add prints the new recipient" \
	sh -c '"$0" recipient add carol --name "Carol C." --max-sessions 3 | grep -q "^carol .*enabled .*3  Carol C\.$"' "$CDSGATE"
"$CDSGATE" recipient list --json > "$D/list.json"
check "cdsgate recipient list --json lists all three" \
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert [r["id"] for r in j["recipients"]]==["alice","bob","carol"]' "$D/list.json"
"$CDSGATE" recipient add carol --name again > /dev/null 2> "$D/cli.err"; rc=$?
check "a refused request exits 2 with the daemon's message ($(cat "$D/cli.err"))" \
	sh -c "[ $rc -eq 2 ] && grep -q 'already exists (HTTP 409)' '$D/cli.err'"
"$CDSGATE" recipient disable ../datasets > /dev/null 2>&1; rc=$?
check "an id with ../ cannot walk to another route (exit $rc)" test "$rc" -eq 2
check "cdsgate dataset list works on an empty store" \
	sh -c '"$0" dataset list | grep -q "^ *ID STATE"' "$CDSGATE"
"$CDSGATE" recipient list --socket "$D/none.sock" > /dev/null 2> "$D/cli.err"; rc=$?
check "no daemon: exit 1 and a message naming the socket" \
	sh -c "[ $rc -eq 1 ] && grep -q 'cannot reach the cdsgate daemon at $D/none.sock' '$D/cli.err'"
check "the auditor's CLI is refused a change (exit 2)" \
	sh -c 'setpriv --reuid=65534 --regid="$1" --clear-groups "$0" recipient disable alice 2>/dev/null; [ $? -eq 2 ]' "$CDSGATE" "$AUD_GID"

# Every change is in the audit log, signed by the key holder alone.
KH_PID=$(ps -o pid=,user= --ppid "$API_PID" | awk '$2 == "cdsgate-audit" { print $1; exit }')
check "the audit key holder is the API's child, running as cdsgate-audit" \
	test -n "$KH_PID"
# The helpers (key holder, gate runner) outlive the API for a moment (the
# key holder by a checkpoint): holding its listening socket, they would
# make a restarted API find "another API listening".
socks() { ls -l /proc/"$1"/fd 2>/dev/null | grep -o 'socket:\[[0-9]*\]' | sort -u; }
SHARED=$(for c in $(pgrep -P "$API_PID"); do comm -12 <(socks "$API_PID") <(socks "$c"); done)
check "the API's helpers ($(pgrep -P "$API_PID" | wc -l)) hold none of its sockets:$(echo " $SHARED")" \
	test "$(pgrep -P "$API_PID" | wc -l)" -ge 2 -a -z "$SHARED"
check "the API process cannot read the signing key" \
	sh -c '! setpriv --reuid=cdsgate-api --regid=cdsgate-api --clear-groups cat "$0" 2>/dev/null' "$AUD/key.pem"
"$CDSGATE" audit list "$LOG" --json > "$D/audit.json"
check "the audit log has every change and every refusal" \
	python3 -c '
import json,sys
recs=[json.loads(l) for l in open(sys.argv[1])]
adds=[r["data"]["id"] for r in recs if r["type"]=="recipient.add"]
dis=[r["data"]["id"] for r in recs if r["type"]=="recipient.disable"]
refused=[r["type"] for r in recs if r["type"].endswith(".refused")]
assert adds[:2]==["alice","bob"] and "carol" in adds, adds
assert dis[-1]=="bob", dis
assert "recipient.add.refused" in refused, refused
assert all("by_uid" in r["data"] for r in recs if r["type"]!="checkpoint")
' "$D/audit.json"

# The key holder dies: the API must stop accepting changes (fail closed).
kill -9 "$KH_PID"
is 503 root POST /v1/recipients '{"id":"dave","name":"D"}'
check "the 503 says why" grep -q 'could not be audited.*so it was not made' "$D/resp"
is 503 root POST /v1/recipients '{"id":"erin","name":"E"}'
check "later changes are refused before they happen" grep -q 'no changes are accepted' "$D/resp"
is 200 auditor GET /v1/recipients/alice
is 404 auditor GET /v1/recipients/erin
is 404 auditor GET /v1/recipients/dave

# SIGKILL the API, restart on the same store: consistent, data kept.
kill -9 $API_PID; wait $API_PID 2>/dev/null
check "after SIGKILL the store passes integrity_check" \
	test "$(sqlite3 "$STORE" 'PRAGMA integrity_check;')" = ok
check "a restart on the same store works (stale socket replaced)" start_api
is 200 auditor GET /v1/recipients/bob
check "what was written before the kill is still there" grep -q '"disabled":true' "$D/resp"
kill -TERM $API_PID
wait $API_PID; rc=$?
check "SIGTERM ends the API with status 0" test "$rc" -eq 0
"$CDSGATE" audit verify "$LOG" --key "$D/audit.pub" > "$D/verify.out"; rc=$?
check "cdsgate audit verify: the log is intact after all of that ($(cat "$D/verify.out"))" \
	test "$rc" -eq 0
check "it was closed with a checkpoint (nothing unsigned at the end)" \
	grep -q ', 0 records after the last one' "$D/verify.out"

done_testing
