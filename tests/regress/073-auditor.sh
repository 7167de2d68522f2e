#!/usr/bin/env bash
# 073-auditor: an auditor does the job without root.  A user made here,
# a member of cdsgate-auditor and nothing else, after a scripted session
# of `cdsgated serve` (typed text, one failed login, the browser's
# requests): replays it by the API's session id (--info, --keys,
# --search, --events, --frame, --serve), verifies the audit log, lists it
# by session, recipient, dataset and time (full lines, --json, an unknown
# --type refused), and reads `cdsgate session report` (text and --json):
# the typed text, the URLs, the dataset, the connections (also of a
# session behind the TLS front door: the VeNCrypt login and a failed
# one).  One id in the
# API, the recording's name and header, the audit log.  A tampered copy of
# the log exits 3; an unreadable head file or log exits 2 naming the file.
# A user outside the group is refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-serve.sh"

CDSGATED=$top_builddir/cdsgated
VNCTEST=${VNCTEST:-$top_builddir/tests/gateway/cdsgate-vnctest}
require_session
serve_require
getent group cdsgate-auditor >/dev/null || skip_all "group cdsgate-auditor missing (./dev creates it)"
command -v useradd >/dev/null && command -v runuser >/dev/null ||
	skip_all "useradd/runuser not installed"

serve_fixture		# lib.sh: $D, $SOCK, $PORT0, the audit key, the backend
LOG=$D/audit/audit.log
REC=$D/rec
CONF=$D/serve.json
AUD=cdsaud$$		# an auditor (cdsgate-auditor only)
OUT=cdsout$$		# a user in no cdsgate group
SRV_PID=
cleanup() {
	[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null && wait "$SRV_PID" 2>/dev/null
	[ -n "$BE_PID" ] && kill "$BE_PID" 2>/dev/null
	userdel "$AUD" 2>/dev/null
	userdel "$OUT" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
[ -z "$NOSESS" ] || skip_all "$NOSESS"
useradd -M -N -s /usr/sbin/nologin -G cdsgate-auditor "$AUD" ||
	skip_all "useradd $AUD failed"
useradd -M -N -s /usr/sbin/nologin "$OUT" || skip_all "useradd $OUT failed"
# The auditor's own directory (outputs, copies of the log).
A_DIR=$TMP/aud
mkdir "$A_DIR" && chown "$AUD" "$A_DIR" && chmod 0700 "$A_DIR"
chmod 0644 "$D/audit.pub"

# as_aud CMD...: run as the auditor (its groups from /etc/group).
as_aud() { runuser -u "$AUD" -- env CDSGATE_SOCKET="$SOCK" "$@"; }
aud() { as_aud "$CDSGATE" "$@"; }

write_config "$CONF"
check "cdsgated serve starts" start_serve
check "record_dir is 0750 root, group cdsgate-auditor: $(stat -c '%U %G %a' "$REC")" \
	test "$(stat -c '%U %G %a' "$REC")" = "root cdsgate-auditor 750"
check "the audit log's directory is setgid cdsgate-auditor: $(stat -c '%U %G %a' "$D/audit")" \
	test "$(stat -c '%U %G %a' "$D/audit")" = "cdsgate-audit cdsgate-auditor 2750"
"$CDSGATE" recipient add alice --name "Alice" > /dev/null
mount_patients		# lib.sh: $DS
check "a dataset is imported and mounted ($DS)" test -n "$DS"

# ---- a scripted session: typed text, a failed login, revoked ----
session_new		# lib-serve.sh: $SID, $D/s.pw, $VADDR
check "a session is created ($SCODE)" test "$SCODE" = 201
echo 'not-the-secret' > "$D/bad.pw"
vt() { "$VNCTEST" --host "${VADDR%:*}" --port "${VADDR##*:}" --timeout 60 "$@"; }
sleep 3
TEXT='select count(*) from patients'
vt --password-file "$D/s.pw" sleep 2 type "$TEXT" sync sleep 1 > "$D/vt.out" 2>&1
check "the researcher typed into the session" test $? -eq 0
check "a wrong secret is refused" quiet vt --password-file "$D/bad.pw" expect-refused
"$CDSGATE" session revoke "$SID" > /dev/null
for _ in $(seq 100); do grep -q "\"record_closed\".*$SID\|$SID.*\"record_closed\"" "$LOG" 2>/dev/null && break; sleep 0.2; done
check "record_closed of $SID is in the audit log" grep -q "record_closed" "$LOG"
sleep 0.5

# ---- one id everywhere ----
check "the recording is named by the API's id: $SID.cdsrec" test -f "$REC/$SID.cdsrec"
for f in "$SID.cdsrec" "$SID.network.jsonl"; do
	check "$f: 0440 root, group cdsgate-auditor ($(stat -c '%a %U %G' "$REC/$f"))" \
		test "$(stat -c '%a %U %G' "$REC/$f")" = "440 root cdsgate-auditor"
done
check "the audit log and head: group cdsgate-auditor, 0640 ($(stat -c '%G %a' "$LOG" "$LOG.head" | tr '\n' ' '))" \
	test "$(stat -c '%G %a' "$LOG" "$LOG.head" | sort -u)" = "cdsgate-auditor 640"

# ---- replay, as the auditor ----
aud replay "$SID" --info --audit-log "$LOG" > "$A_DIR/info" 2> "$A_DIR/info.err"; rc=$?
check "auditor: replay ID --info (exit $rc: $(head -c 200 "$A_DIR/info.err"))" test "$rc" = 0
check "the recording's header has the API's session id" grep -q "^session: $SID\$" "$A_DIR/info"
check "replay --info shows the dataset (from the audit log)" grep -q "^dataset: $DS (patients)\$" "$A_DIR/info"
aud replay "$SID" --keys > "$A_DIR/keys" 2>&1
check "auditor: replay ID --keys shows the typed text" grep -qF "$TEXT" "$A_DIR/keys"
aud replay "$SID" --search 'from patients' > "$A_DIR/search" 2>&1; rc=$?
check "auditor: replay ID --search finds it (exit $rc)" sh -c "[ $rc = 0 ] && grep -q 'typed (started' '$A_DIR/search'"
aud replay "$SID" --events > "$A_DIR/events" 2>&1; rc=$?
check "auditor: replay ID --events has the connect event (exit $rc)" \
	sh -c "[ $rc = 0 ] && grep -q '\"connect\"' '$A_DIR/events'"
aud replay "$SID" --frame 1 -o "$A_DIR/f1.png" > /dev/null 2>&1; rc=$?
check "auditor: replay ID --frame 1 -o PNG (exit $rc)" \
	sh -c "[ $rc = 0 ] && [ \"\$(head -c 4 '$A_DIR/f1.png' | tail -c 3)\" = PNG ]"
rport=$(free_port)
echo 'replay-pw' > "$A_DIR/pw"; chown "$AUD" "$A_DIR/pw"; chmod 0600 "$A_DIR/pw"
# setpriv execs (runuser would stay as a parent that keeps SIGTERM to
# itself): $! is the replay process, the one stop kills.
setpriv --reuid="$AUD" --regid="$(id -g "$AUD")" --init-groups \
	env CDSGATE_SOCKET="$SOCK" "$CDSGATE" replay "$SID" \
	--serve "127.0.0.1:$rport" --password-file "$A_DIR/pw" --at 1 \
	> "$D/serve.out" 2>&1 &
rpid=$!
if wait_line "$D/serve.out" '^serving on' 10 "$rpid"; then
	"$VNCTEST" --port "$rport" --password-file "$A_DIR/pw" --timeout 20 \
		snapshot "$D/r1.ppm" > /dev/null 2>&1
	check "auditor: replay ID --serve shows the frame at 1 s to a viewer" \
		test "$(head -c 2 "$D/r1.ppm" 2>/dev/null)" = P6
else
	not_ok "auditor: replay ID --serve did not start: $(head -c 300 "$D/serve.out")"
fi
stop "$rpid"

# ---- a session behind the TLS front door: VeNCrypt logins in the report ----
kill -TERM "$SRV_PID"; wait "$SRV_PID"; SRV_PID=
if command -v openssl >/dev/null && openssl req -x509 -newkey rsa:2048 -nodes -days 2 \
	-subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" \
	-keyout "$D/key.pem" -out "$D/cert.pem" 2> /dev/null; then
	chmod 600 "$D/key.pem"
	write_config "$CONF" "\"tls_cert\": \"$D/cert.pem\", \"tls_key\": \"$D/key.pem\""
	check "cdsgated serve starts with TLS" start_serve
	S1=$SID
	session_new
	T=$SID SID=$S1
	sleep 3
	tv() { "$VNCTEST" --host "${VADDR%:*}" --port "${VADDR##*:}" --user alice \
		--ca "$D/cert.pem" --timeout 30 "$@" > /dev/null 2>&1; }
	check "VeNCrypt: alice logs in with the secret ($SCODE)" tv --password-file "$D/s.pw" type 'tls text' sync
	check "VeNCrypt: a wrong secret is refused" tv --password-file "$D/bad.pw" expect-refused
	"$CDSGATE" session revoke "$T" > /dev/null
	for _ in $(seq 100); do grep '"record_closed"' "$LOG" | grep -q "$T" && break; sleep 0.2; done
	aud session report "$T" --audit-log "$LOG" --json > "$A_DIR/tls.json" 2> "$A_DIR/tls.err"
	check "report (TLS): alice's VeNCrypt login ok, the failed one as no login, the text" \
		python3 - "$A_DIR/tls.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r["connections"]
ok = [x for x in c if x["event"] == "connect"]
assert ok and ok[0]["login"] == "ok" and ok[0]["user"] == "alice" and ok[0]["tls"] is True, c
assert any(x["event"] == "front_closed" and x["login"] == "none" for x in c), c
assert "tls text" in r["typed"], r["typed"]
PY
	kill -TERM "$SRV_PID"; wait "$SRV_PID"; SRV_PID=
else
	skip "sessions over TLS: openssl cannot make a certificate"
fi

# ---- verify and list, as the auditor (the daemon stopped: its last
# checkpoint signed) ----
aud audit verify "$LOG" --key "$D/audit.pub" > "$A_DIR/verify" 2>&1; rc=$?
check "auditor: audit verify: intact, recordings re-hashed (exit $rc: $(head -c 300 "$A_DIR/verify"))" \
	sh -c "[ $rc = 0 ] && grep -q ': intact:' '$A_DIR/verify' && grep -q 'recordings: [1-9]' '$A_DIR/verify'"
aud audit list "$LOG" --session "$SID" > "$A_DIR/list" 2>&1
check "list --session: its session.create, session.revoke and record_closed" sh -c \
	"grep -q 'session.create' '$A_DIR/list' && grep -q 'session.revoke' '$A_DIR/list' && grep -q 'record_closed' '$A_DIR/list' && ! grep -q 'dataset.import' '$A_DIR/list'"
check "list: full lines (record_closed's sha256 and file uncut)" \
	grep -q "record_closed .*\"file\":\"$REC/$SID.cdsrec\".*\"sha256\":\"[0-9a-f]\{64\}\"" "$A_DIR/list"
aud audit list "$LOG" --type session > "$A_DIR/ltype" 2>&1
check "list --type session: the session.* records and nothing else" sh -c \
	"grep -q session.create '$A_DIR/ltype' && ! grep -qv ' session\.' '$A_DIR/ltype'"
aud audit list "$LOG" --type sesion > /dev/null 2> "$A_DIR/lbad"; rc=$?
check "list --type sesion (unknown): exit 2 listing the types (exit $rc)" \
	sh -c "[ $rc = 2 ] && grep -q 'unknown record type .sesion.' '$A_DIR/lbad' && grep -q 'session.create' '$A_DIR/lbad'"
aud audit list "$LOG" --recipient alice --json > "$A_DIR/lrc" 2>&1
check "list --recipient alice --json: the session's records, JSON lines" python3 - "$A_DIR/lrc" "$SID" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
types = {r["type"] for r in recs}
assert {"recipient.add", "session.create", "record_closed"} <= types, types
assert "dataset.import" not in types, types
PY
aud audit list "$LOG" --dataset "$DS" > "$A_DIR/lds" 2>&1
check "list --dataset $DS: its mount and the session on it" sh -c \
	"grep -q dataset.mount '$A_DIR/lds' && grep -q record_closed '$A_DIR/lds' && ! grep -q recipient.add '$A_DIR/lds'"
today=$(date -u +%F)
n_all=$(aud audit list "$LOG" | wc -l)
n_today=$(aud audit list "$LOG" --since "$today" --until "$today" | wc -l)
n_past=$(aud audit list "$LOG" --until 2001-01-01T00:00:00Z | wc -l)
check "list --since/--until $today: all $n_all records; before 2001: $n_past" \
	test "$n_today" = "$n_all" -a "$n_past" = 0 -a "$n_all" -gt 5
aud audit list "$LOG" --since yesterday > /dev/null 2> "$A_DIR/lsince"; rc=$?
check "list --since yesterday: exit 2, not ISO-8601 (exit $rc)" \
	sh -c "[ $rc = 2 ] && grep -q 'not an ISO-8601 time' '$A_DIR/lsince'"

# ---- session report, as the auditor ----
aud session report "$SID" --audit-log "$LOG" > "$A_DIR/report" 2> "$A_DIR/report.err"; rc=$?
diag "report (exit $rc):"; head -c 3000 "$A_DIR/report" "$A_DIR/report.err" | sed 's/^/# /'
check "auditor: session report (exit $rc)" test "$rc" = 0
check "report: recipient and dataset with its name" sh -c \
	"grep -q '^recipient: *alice\$' '$A_DIR/report' && grep -q '^dataset: *$DS (patients)\$' '$A_DIR/report'"
check "report: the typed text" sh -c \
	"sed -n '/^--- typed text ---\$/,/^--- end of typed text ---\$/p' '$A_DIR/report' | grep -qxF '$TEXT'"
check "report: the URLs the browser requested (GET /, POST /event)" sh -c \
	"grep -Eq '^  [0-9T:.Z-]+  GET / ' '$A_DIR/report' && grep -Eq '^  [0-9T:.Z-]+  POST /event ' '$A_DIR/report'"
check "report: created, started, ended, revoked" sh -c \
	"grep -Eq '^created: +20' '$A_DIR/report' && grep -Eq '^started: +20' '$A_DIR/report' && grep -Eq '^ended: +20' '$A_DIR/report' && grep -Eq '^end: +revoked' '$A_DIR/report'"
aud session report "$SID" --audit-log "$LOG" --json > "$A_DIR/report.json" 2>&1
check "report --json: connections (a failed login and one ok), digest matches, URLs" \
	python3 - "$A_DIR/report.json" "$SID" "$DS" "$TEXT" "$REC" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
sid, ds, text, rec = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
assert r["session"] == sid and r["recipient"] == "alice" and r["dataset"] == ds, r
assert r["dataset_name"] == "patients", r
assert text in r["typed"], r["typed"]
logins = [c["login"] for c in r["connections"] if c["event"] != "disconnect"]
assert "ok" in logins and "failed" in logins, r["connections"]
assert all(c["client"].startswith("127.0.0.1") for c in r["connections"]), r["connections"]
assert r["recording"]["file"] == rec + "/" + sid + ".cdsrec", r["recording"]
assert r["recording"]["sha256_matches"] is True, r["recording"]
assert r["recording"]["network_log"]["sha256_matches"] is True, r["recording"]
urls = {(q["method"], q["url"].split("?")[0]) for q in r["requests"]}
assert ("GET", "/") in urls and ("POST", "/event") in urls, urls
assert r["problems"] == [], r["problems"]
assert any(e["type"] == "session.revoke" for e in r["api_events"]), r["api_events"]
PY
aud session report s-nosuchsession --audit-log "$LOG" > /dev/null 2> "$A_DIR/rnone"; rc=$?
check "report of an unknown session: exit 2 ($(head -c 150 "$A_DIR/rnone"))" \
	sh -c "[ $rc = 2 ] && grep -q 'no session.create' '$A_DIR/rnone'"

# ---- tampered and unreadable logs ----
cp "$LOG" "$LOG.head" "$A_DIR/" && chown "$AUD" "$A_DIR"/audit.log*
CP=$A_DIR/audit.log
aud audit verify "$CP" --key "$D/audit.pub" > /dev/null 2>&1; rc=$?
check "auditor: a copy of the log verifies (exit $rc)" test "$rc" = 0
sed -i '3s/"seq":2/"seq":2 /' "$CP"
aud audit verify "$CP" --key "$D/audit.pub" > "$A_DIR/t.out" 2>&1; rc=$?
check "a tampered log: exit 3, naming the line ($(head -c 200 "$A_DIR/t.out"))" \
	sh -c "[ $rc = 3 ] && grep -q 'line 4: its prev is not the hash of line 3' '$A_DIR/t.out'"
cp "$LOG" "$CP" && chown "$AUD" "$CP"
chown root "$CP.head" && chmod 0600 "$CP.head"
aud audit verify "$CP" --key "$D/audit.pub" > "$A_DIR/u.out" 2>&1; rc=$?
check "an unreadable head file: exit 2 naming it and why ($(head -c 200 "$A_DIR/u.out"))" \
	sh -c "[ $rc = 2 ] && grep -q '$CP.head: Permission denied' '$A_DIR/u.out' && ! grep -q broken '$A_DIR/u.out'"
chown "$AUD" "$CP.head"; chown root "$CP" && chmod 0600 "$CP"
aud audit verify "$CP" --key "$D/audit.pub" > "$A_DIR/u2.out" 2>&1; rc=$?
check "an unreadable log: exit 2 naming it ($(head -c 200 "$A_DIR/u2.out"))" \
	sh -c "[ $rc = 2 ] && grep -q '$CP: Permission denied' '$A_DIR/u2.out'"

# ---- someone outside the group ----
runuser -u "$OUT" -- "$CDSGATE" replay "$REC/$SID.cdsrec" --info > /dev/null 2> "$D/out.err"; rc=$?
check "a user outside cdsgate-auditor cannot read the recording (exit $rc)" \
	sh -c "[ $rc = 2 ] && grep -q 'Permission denied' '$D/out.err'"
runuser -u "$OUT" -- "$CDSGATE" audit verify "$LOG" --key "$D/audit.pub" > /dev/null 2> "$D/out2.err"; rc=$?
check "nor verify the log: exit 2, not 3 (exit $rc: $(head -c 150 "$D/out2.err"))" test "$rc" = 2

done_testing
