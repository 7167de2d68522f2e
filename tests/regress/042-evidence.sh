#!/usr/bin/env bash
# 042-evidence: session recordings as evidence, through
# `cdsgated serve` with its own record_dir.  When a session ends (revoked,
# its worker killed, the disk full) the parent seals its recording and the
# api chains record_closed {session, file, sha256, size, frames,
# duration_us, truncated, end} into the audit log and indexes it in the
# store; the chained files become 0440, group cdsgate-auditor.  `cdsgate audit verify` re-hashes each recording: a replaced one
# is named with its line; a kill -9 of the worker leaves a recording that
# reads up to the kill, record_closed says truncated, verify reports the
# cut.  `cdsgate replay SESSION-ID` resolves the id through the API.
# Retention (retention_max_bytes) removes the oldest closed recordings,
# each after a record_expired entry, never a running session's.  A 2 MB
# tmpfs as record_dir fills up mid-session: the session ends (disk_full),
# its recording reads, a new session is refused with the reason.  An api
# killed while a session runs: at the next start the parent sends the
# digests that never reached the chain (record_closed, end recovered).
. "$(dirname "$0")/lib.sh"

CDSGATED=$top_builddir/cdsgated
VNCTEST=${VNCTEST:-$top_builddir/tests/gateway/cdsgate-vnctest}
BACKEND=$top_srcdir/tests/gateway/backend.py
require_session
for c in curl sqlite3 sha256sum; do
	command -v $c >/dev/null || skip_all "$c not installed"
done
for u in cdsgate-api cdsgate-audit; do
	getent passwd $u >/dev/null || skip_all "user $u missing (./dev creates it)"
done

serve_dirs_make		# lib.sh: $D, $SOCK, $PORT0, the audit key
mkdir -p "$D/full"
LOG=$D/audit/audit.log
REC=$D/rec

SRV_PID= BE_PID=
cleanup() {
	[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null && wait "$SRV_PID" 2>/dev/null
	[ -n "$BE_PID" ] && kill "$BE_PID" 2>/dev/null
	mountpoint -q "$D/full" 2>/dev/null && umount "$D/full"
	rm -rf "$TMP"
}
trap cleanup EXIT

python3 "$BACKEND" --port 0 --record "$D/events.jsonl" > "$D/backend.out" 2> "$D/backend.err" &
BE_PID=$!
wait_line "$D/backend.out" '^ready ' 10 "$BE_PID" || skip_all "the test backend did not start"
BACKEND_URL="http://$(sed -n 's/^ready //p' "$D/backend.out")/"

# write_config RECORD_DIR [EXTRA-JSON-MEMBERS]
write_config() {
	cat > "$D/serve.json" <<JSON
{
  "socket": "$SOCK", "store": "$D/state/store.db", "state_dir": "$D/state",
  "mount_dir": "$D/mnt", "audit_log": "$LOG", "audit_key": "$D/audit/key.pem",
  "cdsgate": "$CDSGATE", "secrets_dir": "$D/secrets", "grant_key": "$D/grant.key",
  "backend_url": "$BACKEND_URL", "session_address": "127.0.0.1",
  "session_ports": "$PORT0-$((PORT0 + 20))", "record_dir": "$1"${2:+, $2}
}
JSON
	chmod 0644 "$D/serve.json"
}
start_serve() {
	"$CDSGATED" serve --config "$D/serve.json" >> "$D/out" 2>> "$D/err" &
	SRV_PID=$!
	wait_line "$D/out" '^ready ' 15 "$SRV_PID"
}
stop_serve() { kill -TERM "$SRV_PID"; wait "$SRV_PID"; SRV_PID=; : > "$D/out"; }
# api METHOD PATH [BODY]: prints the status; the body goes to $D/resp.
api() {
	local out
	out=$(printf '%s' "${3-}" | curl -s -w '\n%{http_code}' --unix-socket "$SOCK" \
		-X "$1" ${3:+-H 'Content-Type: application/json' --data-binary @-} "http://cdsgate$2")
	printf '%s' "${out%$'\n'*}" > "$D/resp"
	echo "${out##*$'\n'}"
}
# new_session NAME: POST /v1/sessions; $D/NAME.json, $D/NAME.pw; prints the id.
new_session() {
	local code
	code=$(api POST /v1/sessions "{\"recipient\": \"alice\", \"dataset\": $DS}")
	cp "$D/resp" "$D/$1.json"
	[ "$code" = 201 ] || { diag "create $1: $code $(head -c 300 "$D/resp")"; return 1; }
	json "$D/$1.json" 'j["secret"]' > "$D/$1.pw"
	json "$D/$1.json" 'j["id"]'
}
# vnc NAME COMMANDS...: one client connection to session NAME.
vnc() {
	local a; a=$(json "$D/$1.json" 'j["vnc"]'); local f=$1; shift
	"$VNCTEST" --host "${a%:*}" --port "${a##*:}" --password-file "$D/$f.pw" \
		--timeout 60 "$@" > "$D/$f-vt.out" 2> "$D/$f-vt.err"
}
# closed SID: the record_closed data of SID as JSON (waits up to 15 s); the
# line number of that record in the log goes to $D/line.
closed() {
	local t
	for t in $(seq 75); do
		python3 - "$LOG" "$1" "${2-}" "$D/line" > "$D/closed.json" <<'PY' && break
import json, sys
for n, l in enumerate(open(sys.argv[1]), 1):
    r = json.loads(l)
    if r["type"] == (sys.argv[3] or "record_closed") and r["data"].get("session") == sys.argv[2]:
        print(json.dumps(r["data"]))
        open(sys.argv[4], "w").write(str(n))
        sys.exit(0)
sys.exit(1)
PY
		sleep 0.2
	done
	cat "$D/closed.json"
}
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }
# worker_of SID: the pid of the session worker (user cdsgate, not Xvfb).
worker_of() {
	local p
	for p in $(descendants "$SRV_PID"); do
		[ "$(stat -c %U /proc/$p 2>/dev/null)" = cdsgate ] &&
			[ "$(cat /proc/$p/comm 2>/dev/null)" = cdsgated ] && { echo "$p"; return; }
	done
}
verify() { "$CDSGATE" audit verify "$LOG" --key "$D/audit.pub" "$@" > "$D/verify.out" 2>&1; }

write_config "$REC"
check "cdsgated serve starts with record_dir $REC" start_serve
check "record_dir is made, root's, 0750 group cdsgate-auditor" \
	test "$(stat -c '%U %G %a' "$REC")" = "root cdsgate-auditor 750"
"$CDSGATE" recipient add alice --name "Alice" --max-sessions 4 > /dev/null
mount_patients		# lib.sh: $DS
check "a dataset is imported and mounted" test -n "$DS"

# ---- 1. a revoked session: its digest in the chain and the index ----
A=$(new_session a)
check "session A runs ($A)" test -n "$A"
sleep 3
vnc a type 'evidence of A' sync
check "a client typed into A" test $? -eq 0
check "A's recording is $REC/$A.cdsrec while it runs" test -s "$REC/$A.cdsrec"
"$CDSGATE" session revoke "$A" > /dev/null
CA=$(closed "$A"); LA=$(cat "$D/line")
diag "record_closed A: $CA"
check "the audit log has record_closed for A: file, sha256 of the file, size, frames, end revoked, complete" \
	python3 - "$CA" "$REC/$A.cdsrec" <<'PY'
import hashlib, json, os, sys
d = json.loads(sys.argv[1]); f = sys.argv[2]
assert d["file"] == f and d["sha256"] == hashlib.sha256(open(f, "rb").read()).hexdigest(), d
assert d["size"] == os.path.getsize(f) and d["frames"] >= 1 and d["duration_us"] > 0, d
assert d["end"] == "revoked" and d["truncated"] is False, d
PY
check "the store's index of recordings has A: path and digest" test \
	"$(sqlite3 "$D/state/store.db" "select path || ' ' || sha256 from recordings where session='$A'")" = \
	"$REC/$A.cdsrec $(field "$CA" sha256)"

# ---- 2. replay by session id ----
"$CDSGATE" replay "$A" --info > "$D/ainfo.txt" 2> "$D/ainfo.err"; rc=$?
check "cdsgate replay SESSION-ID --info resolves through the API (exit $rc)" \
	sh -c "[ $rc = 0 ] && grep -q '$(field "$CA" sha256)' '$D/ainfo.txt' && grep -q '^complete: yes' '$D/ainfo.txt'"
"$CDSGATE" replay "$A" --keys > "$D/akeys.txt" 2>&1
check "replay ID --keys: the typed text" grep -q '^evidence of A$' "$D/akeys.txt"
"$CDSGATE" replay "$A" --search 'of A' > /dev/null 2>&1; rc=$?
check "replay ID --search finds it (exit $rc)" test "$rc" = 0
"$CDSGATE" replay "$A" --events > "$D/aev.txt" 2>&1; rc=$?
check "replay ID --events: JSON lines with the key presses (exit $rc)" \
	sh -c "[ $rc = 0 ] && grep -q '\"type\": *\"key\"' '$D/aev.txt'"
"$CDSGATE" replay "$A" --frame 1 -o "$D/a.png" > /dev/null 2>&1; rc=$?
check "replay ID --frame 1 -o PNG (exit $rc)" sh -c "[ $rc = 0 ] && [ \"\$(head -c 4 '$D/a.png' | tail -c 3)\" = PNG ]"
"$CDSGATE" replay "s-nosuchsession0" --info > /dev/null 2> "$D/nos.err"; rc=$?
check "replay of an unknown session id: exit 2, the API's reason ($(head -c 120 "$D/nos.err"))" \
	sh -c "[ $rc = 2 ] && grep -q 'no closed recording' '$D/nos.err'"
"$CDSGATE" replay "$REC/$A.cdsrec" --info > /dev/null 2>&1; rc=$?
check "the path form still works (exit $rc)" test "$rc" = 0

# ---- 3. kill -9 of the worker mid-session ----
B=$(new_session b)
sleep 3
vnc b type 'before the kill' sync
WB=$(worker_of)
if [ -n "$WB" ] && kill -9 "$WB"; then ok "kill -9 of B's worker (pid $WB)"; else not_ok "kill -9 of B's worker (none found)"; fi
CB=$(closed "$B"); LB=$(cat "$D/line")
diag "record_closed B: $CB"
check "record_closed for B: truncated, end failed, the digest of what is on disk" \
	python3 - "$CB" "$REC/$B.cdsrec" <<'PY'
import hashlib, json, sys
d = json.loads(sys.argv[1]); f = sys.argv[2]
assert d["truncated"] is True and d["end"] == "failed", d
assert d["sha256"] == hashlib.sha256(open(f, "rb").read()).hexdigest(), d
PY
"$CDSGATE" replay "$B" --info > "$D/binfo.txt" 2>&1
check "replay B --info: truncated" grep -Eq '^complete: no, truncated at offset [0-9]+' "$D/binfo.txt"
"$CDSGATE" replay "$B" --keys > "$D/bkeys.txt" 2>&1
check "replay B --keys: it reads up to the kill" grep -q '^before the kill$' "$D/bkeys.txt"
# ---- 4. a replaced recording; verify (the log checkpointed at stop) ----
cp -p "$REC/$A.cdsrec" "$D/a.keep"
cp "$REC/$B.cdsrec" "$REC/$A.cdsrec"
"$CDSGATE" replay "$A" --info > /dev/null 2> "$D/arep.err"
check "replay by id warns that the file is not the chained one" grep -q 'replaced or modified' "$D/arep.err"
stop_serve
verify; rc=$?
sed 's/^/# /' "$D/verify.out"
check "a replaced recording: verify exit 3, names A's record_closed line $LA and 'replaced'" \
	sh -c "[ $rc = 3 ] && grep -q 'line $LA: $REC/$A.cdsrec was replaced' '$D/verify.out'"
cp -p "$D/a.keep" "$REC/$A.cdsrec"
check "A's record_closed carries its network log's digest" \
	test "$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("type") == "record_closed" and r["data"]["session"] == sys.argv[2]:
        print(r["data"]["network"]["sha256"])' "$LOG" "$A")" = "$(sha256sum < "$REC/$A.network.jsonl" | cut -d' ' -f1)"
cp -p "$REC/$A.network.jsonl" "$D/anet.keep"
printf ' ' >> "$REC/$A.network.jsonl"
verify; rc=$?
check "a modified network log: verify exit 3 names it and A's line $LA" \
	sh -c "[ $rc = 3 ] && grep -q 'line $LA: $REC/$A.network.jsonl was replaced or modified' '$D/verify.out'"
cp -p "$D/anet.keep" "$REC/$A.network.jsonl"
verify; rc=$?
sed 's/^/# /' "$D/verify.out"
check "restored: intact, 2 recordings and their 2 network logs re-hashed, the cut named with its line (exit $rc)" \
	sh -c "[ $rc = 0 ] && grep -q 'intact' '$D/verify.out' && grep -q '4 re-hashed' '$D/verify.out' &&
	       grep -q 'cut short; first: line $LB: $REC/$B.cdsrec is cut at' '$D/verify.out'"
verify --no-recordings; rc=$?
check "--no-recordings: the chain alone, the cut still noted from it (exit $rc)" \
	sh -c "[ $rc = 0 ] && grep -q '^recordings: 0 re-hashed (with network logs and captures), 0 expired by retention, 1 cut short' '$D/verify.out'"

# ---- 4b. the api dies while a session runs: its recording is chained later ----
check "serve starts again" start_serve
G=$(new_session g)
sleep 3
check "A's recording, chained, is marked 0440 (the auditors'); G's, running, is 0600" \
	sh -c "[ \"\$(stat -c %a '$REC/$A.cdsrec')\" = 440 ] && [ \"\$(stat -c %a '$REC/$G.cdsrec')\" = 600 ]"
kill -9 "$(pgrep -P "$SRV_PID" -u cdsgate-api | head -1)"
wait "$SRV_PID"; rc=$?; SRV_PID=; : > "$D/out"
check "kill -9 of the api: the parent stops G and exits non-zero (exit $rc); G's record_closed never reached the chain" \
	sh -c "[ $rc != 0 ] && ! grep '\"type\":\"record_closed\"' '$LOG' | grep -q '$G'"
# A standalone session writing into the same directory (as another
# daemon's would): its file is locked while it runs, so this parent's
# recovery at start-up must leave it alone.
printf 'pw123456\n' > "$D/spw"; chmod 0600 "$D/spw"
"$CDSGATED" run-session --backend "$BACKEND_URL" --listen "127.0.0.1:$(free_port)" \
	--password-file "$D/spw" --record-dir "$REC" --record-name standalone-s \
	> "$D/sa.out" 2> "$D/sa.err" &
SA_PID=$!
check "a standalone session records into the same directory" \
	wait_line "$D/sa.out" '^ready ' 20 "$SA_PID"
check "serve starts after the api's death" start_serve
CG=$(closed "$G")
diag "record_closed G: $CG"
check "at start-up the parent sends G's digest: record_closed end recovered, the digest of the file" \
	sh -c "[ '$(field "$CG" end 2>/dev/null)' = recovered ] && [ '$(field "$CG" sha256 2>/dev/null)' = \"\$(sha256sum < '$REC/$G.cdsrec' | cut -d' ' -f1)\" ]"
check "A and B, chained before, are not chained twice" test \
	"$(grep -c '"type":"record_closed"' "$LOG")" = 3
check "the standalone's running recording is neither chained nor marked (locked: 0600)" \
	sh -c "! grep -q standalone-s '$LOG' && [ \"\$(stat -c %a '$REC/standalone-s.cdsrec')\" = 600 ]"
kill -TERM "$SA_PID"; wait "$SA_PID" 2>/dev/null
rm -f "$REC"/standalone-s.*	# not this daemon's: out of the later counts
stop_serve

# ---- 5. retention: oldest closed first, audited, never a running one ----
write_config "$REC" '"retention_max_bytes": 1'
check "serve starts with retention_max_bytes 1" start_serve
C=$(new_session c)
check "session C runs while retention works ($C)" test -n "$C"
XA=$(closed "$A" record_expired); XB=$(closed "$B" record_expired)
check "record_expired for A and B with their digests" sh -c \
	"[ '$(field "$XA" sha256 2>/dev/null)' = '$(field "$CA" sha256)' ] && [ '$(field "$XB" sha256 2>/dev/null)' = '$(field "$CB" sha256)' ]"
check "A's and B's files are gone" sh -c "[ ! -e '$REC/$A.cdsrec' ] && [ ! -e '$REC/$B.cdsrec' ]"
sleep 11	# a periodic scan (every 10 s) with C over the limit
check "C's recording, running and over the limit, is kept" test -s "$REC/$C.cdsrec"
"$CDSGATE" session revoke "$C" > /dev/null
CC=$(closed "$C"); XC=$(closed "$C" record_expired)
check "once closed, C is chained (record_closed) and then expired" \
	sh -c "[ -n '$XC' ] && [ '$(field "$XC" sha256 2>/dev/null)' = '$(field "$CC" sha256 2>/dev/null)' ] && [ ! -e '$REC/$C.cdsrec' ]"
"$CDSGATE" replay "$A" --info > /dev/null 2> "$D/aexp.err"; rc=$?
check "replay of an expired session says so (exit $rc)" grep -q 'removed by retention' "$D/aexp.err"
stop_serve
verify; rc=$?
sed 's/^/# /' "$D/verify.out"
check "audit verify after retention: intact, 4 expired (A, B, G, C) (exit $rc)" \
	sh -c "[ $rc = 0 ] && grep -q '4 expired by retention' '$D/verify.out'"

# ---- 6. a full disk: a 2 MB tmpfs as record_dir ----
if ! mount -t tmpfs -o size=2m,mode=0700 tmpfs "$D/full" 2> "$D/mount.err"; then
	skip "full disk: cannot mount a tmpfs here ($(head -1 "$D/mount.err"))"
else
	write_config "$D/full" '"record_min_free_mb": 1'
	check "serve starts with record_dir on a 2 MB tmpfs, record_min_free_mb 1" start_serve
	F=$(new_session f)
	check "session F starts (2 MB free)" test -n "$F"
	sleep 3
	vnc f type 'ab' sync
	dd if=/dev/zero of="$D/full/fill" bs=4k 2> /dev/null
	vnc f type 'cdefghijkl' sync
	CF=$(closed "$F")
	diag "record_closed F: $CF"
	check "record_closed for F: end disk_full, truncated" \
		sh -c "[ '$(field "$CF" end 2>/dev/null)' = disk_full ] && [ '$(field "$CF" truncated 2>/dev/null)' = True ]"
	check "the session log says disk_full (the worker) and the session stopped for it" \
		sh -c "grep -q '\"event\":\"disk_full\"' '$D/err' && grep -q '\"reason\":\"disk_full\"' '$D/err'"
	for _ in $(seq 50); do
		[ "$(sqlite3 "$D/state/store.db" "select state from sessions where id='$F'")" = ended ] && break
		sleep 0.2
	done
	check "the store says F ended (status 3)" sh -c \
		"sqlite3 '$D/state/store.db' \"select state || ' ' || reason from sessions where id='$F'\" | grep -q 'ended.*status 3'"
	"$CDSGATE" replay "$F" --events > "$D/fev.txt" 2> "$D/fev.err"; rc=$?
	check "replay F --events reads up to the end (exit $rc, $(wc -l < "$D/fev.txt") events)" \
		sh -c "[ $rc = 0 ] && [ \$(wc -l < '$D/fev.txt') -ge 2 ] && python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' '$D/fev.txt'"
	code=$(api POST /v1/sessions "{\"recipient\": \"alice\", \"dataset\": $DS}")
	check "a new session is refused: 503, the reason says disk full ($(head -c 200 "$D/resp"))" \
		sh -c "[ $code = 503 ] && grep -q 'disk full' '$D/resp'"
	stop_serve
	rm -f "$D/full/fill"
	verify --recordings "$D/full"; rc=$?
	sed 's/^/# /' "$D/verify.out"
	check "audit verify --recordings DIR: intact, F re-hashed there, its cut named (exit $rc)" \
		sh -c "[ $rc = 0 ] && grep -q '2 re-hashed' '$D/verify.out' && grep -q 'cut short' '$D/verify.out'"

	# retention by age: F (2 days old, chained) goes; an old file the chain
	# does not know is refused by the api and kept; a young one is not asked
	touch -d '2 days ago' "$D/full/$F.cdsrec"
	cp "$D/full/$F.cdsrec" "$D/full/s-forged.cdsrec"
	touch -d '3 days ago' "$D/full/s-forged.cdsrec"
	cp "$D/full/$F.cdsrec" "$D/full/s-young.cdsrec"
	write_config "$D/full" '"retention_max_age_days": 1'
	check "serve starts with retention_max_age_days 1" start_serve
	XF=$(closed "$F" record_expired)
	check "F (2 days old) expired: record_expired reason age, its digest; the file is gone" \
		sh -c "[ '$(field "$XF" reason 2>/dev/null)' = age ] && [ '$(field "$XF" sha256 2>/dev/null)' = '$(field "$CF" sha256)' ] && [ ! -e '$D/full/$F.cdsrec' ]"
	check "an old recording whose digest is not in the chain is kept, and the parent says why" \
		sh -c "[ -e '$D/full/s-forged.cdsrec' ] && grep -q 'retention: the api keeps .*s-forged.cdsrec' '$D/err' && ! grep -q s-forged '$LOG'"
	check "a young recording is left alone" test -e "$D/full/s-young.cdsrec"
	stop_serve
	umount "$D/full"
fi

check "no cdsgated serve left" test -z "$(pgrep -f "^[^ ]*cdsgated serve --config $D/serve.json")"
done_testing
