#!/usr/bin/env bash
# 071-scope: a session sees its own dataset only, checked where the data
# is served.  `cdsgated serve` with the real embedded analytics backend
# (cdsgate-analytics --grant-key, the same key as serve's grant_key); two
# datasets imported through the gate and mounted; one session for the
# first.  From inside that session's browser network namespace (nsenter
# -n into the jail's init), through the forwarder:
#   - /api/datasets lists the first only; /data/<first> is 200 and the
#     released file; /data/<second> is 403;
#   - a Cdsgate-Grant header sent by the page is removed: a forged one, a
#     duplicated one, even a genuine grant for the second dataset (made
#     here with the key) changes nothing;
#   - the backend itself refuses a request without a grant, with a forged
#     or expired one, or with two (direct, not through the forwarder);
#   - the capture (pcapng) has the grant on every request, its MAC
#     masked;
#   - the session's network log names each dataset request with its
#     status and the removed header; the backend's log says dataset_open
#     and each refusal; the session log's session_start names the grant;
#     the audit log's record_closed names the dataset beside the network
#     log's digest;
#   - the kiosk's picture: the app shows the first dataset, and its
#     picker, opened, lists nothing else (OCR when tesseract is here).
# The same with PostgreSQL (031's throwaway server, when installed): two
# datasets mounted there, a session for the first gets a login role of
# its own; as that role the first view is readable, the second view, the
# first's version table and writes are refused; the role is gone, and
# its login refused, once the session ends; both steps are audited.
# Parts that cannot run here SKIP with the reason.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-serve.sh"

serve_prereqs
HAVE_PG=
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && command -v psql >/dev/null; then
	HAVE_PG=1
	. "$(dirname "$0")/lib-pg.sh"
fi
ANALYTICS=$top_builddir/cdsgate-analytics
STATIC=$top_builddir/analytics/static
[ -x "$ANALYTICS" ] || skip_all "cdsgate-analytics not built"
[ -f "$STATIC/perspective/cdn/perspective.js" ] ||
	skip_all "the analytics front end is not built (npm ci in analytics/web)"
require_session
command -v nsenter >/dev/null || skip_all "nsenter (util-linux) not installed"
getent passwd cdsgate-analytics >/dev/null || skip_all "user cdsgate-analytics missing"

serve_dirs
AN_PID=
trap 'kill $SRV_PID $AN_PID 2>/dev/null; [ -z "$HAVE_PG" ] || pg_stop; sleep 1; rm -rf "$TMP"' EXIT
PGCONF=
if [ -n "$HAVE_PG" ]; then
	pg_start
	check "PostgreSQL: the analytics database, its admin (CREATEROLE) and reader roles" pg_analytics
	PGCONF="\"pg_conninfo\": \"$PG_ADMIN\", \"pg_reader_role\": \"bi_reader\""
fi
chown cdsgate-api:cdsgate-analytics "$D/mnt" && chmod 0750 "$D/mnt"
KEY=$D/grant.key
(umask 077 && openssl rand -hex 32 > "$KEY")

# ---- the embedded backend, scoped by the key ----
"$ANALYTICS" --listen 127.0.0.1:0 --mount-dir "$D/mnt" --static-dir "$STATIC" \
	--grant-key "$KEY" > "$D/an.out" 2> "$D/an.err" &
AN_PID=$!
wait_line "$D/an.out" '^ready ' 10 "$AN_PID" || { cat "$D/an.err" >&2; skip_all "cdsgate-analytics did not start"; }
AN=$(sed -n 's/^ready //p' "$D/an.out")
check "the backend says it is scoped" grep -q 'scoped: each request sees only' "$D/an.err"
chmod 0644 "$KEY"
"$ANALYTICS" --listen 127.0.0.1:0 --mount-dir "$D/mnt" --static-dir "$STATIC" \
	--grant-key "$KEY" > /dev/null 2> "$D/an2.err"; rc=$?
check "a grant key others may read is refused (exit $rc)" \
	sh -c "[ $rc -eq 1 ] && grep -q 'grant.key' '$D/an2.err'"
chmod 0600 "$KEY"

BACKEND_URL=http://$AN/
# the sessions capture their network traffic too (the grant's MAC masked)
echo '{"network_capture": "pcapng"}' > "$D/policy.json"
chmod 0644 "$D/policy.json"
serve_config "\"session_policy\": \"$D/policy.json\"${PGCONF:+, $PGCONF}"
check "cdsgated serve starts" serve_start

# ---- two datasets through the gate, both mounted ----
"$CDSGATE" recipient add alice --name Alice > /dev/null
import_passed cohort_alpha 11 2000; A=$DS
"$CDSGATE" dataset mount "$A" > /dev/null 2>&1; rca=$?
import_passed cohort_beta 12 1500; B=$DS
"$CDSGATE" dataset mount "$B" > /dev/null 2>&1; rcb=$?
check "two datasets passed and mounted ($A: $rca, $B: $rcb)" \
	sh -c "[ $rca -eq 0 ] && [ $rcb -eq 0 ] && [ '$A' != '$B' ]"
DIRA=$A; DIRB=$B	# the mount dir names datasets by id
check "the backend serves both to a client that names no session: no (403 each)" \
	sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' http://$AN/api/datasets)\" = 403 ] &&
	[ \"\$(curl -s -o /dev/null -w '%{http_code}' http://$AN/data/$DIRA)\" = 403 ]"

"$CDSGATE" session create --recipient alice --dataset "$A" --expires-in 600 --json \
	> "$D/s.json" 2> "$D/s.err"; rc=$?
check "a session for dataset $A (exit $rc: $(head -c 200 "$D/s.err"))" test "$rc" -eq 0
SID=$(json "$D/s.json" 'j["id"]')
json "$D/s.json" 'j["secret"]' > "$D/pw"
VADDR=$(json "$D/s.json" 'j["vnc"]')

# the jail's init: the supervisor's child in another network namespace
SUP=$(pgrep -P "$SRV_PID" -u root | head -1)
JPID=
for c in $(pgrep -P "$SUP"); do
	if [ "$(readlink "/proc/$c/ns/net")" != "$(readlink "/proc/$SUP/ns/net")" ]; then JPID=$c; fi
done
check "the session's browser runs in a network namespace of its own (init $JPID)" test -n "$JPID"
check "the grant file is root's, 0600, and names session and dataset" \
	sh -c "[ \"\$(stat -c '%U %a' '$D/secrets/$SID/grant')\" = 'root 600' ] &&
	grep -q '^v1:$SID:$A:[0-9]*:[0-9a-f]\{64\}\$' '$D/secrets/$SID/grant'"

# injail NAME CURL-ARGS...: curl from the browser's network namespace
# (its only way out is the forwarder); status in $D/NAME.code, body .body
injail() {
	local n=$1; shift
	nsenter -t "$JPID" -n curl -s -m 10 -o "$D/$n.body" -w '%{http_code}' "$@" \
		> "$D/$n.code" 2>/dev/null || echo 000 > "$D/$n.code"
}
code() { cat "$D/$1.code"; }
ids_in() { python3 -c 'import json,sys; print(" ".join(str(d.get("dataset")) + "/" + d["id"] for d in json.load(open(sys.argv[1]))["datasets"]))' "$1"; }

injail list "http://$AN/api/datasets"
L=$(ids_in "$D/list.body" 2>/dev/null)
check "inside the jail /api/datasets lists dataset $A only: $L" \
	sh -c "[ $(code list) = 200 ] && [ '$L' = '$A/$DIRA' ]"
injail dataA "http://$AN/data/$DIRA"
check "inside the jail /data/$DIRA is 200 and the released file" \
	sh -c "[ $(code dataA) = 200 ] && cmp -s '$D/dataA.body' '$D/state/released/$A/data.csv'"
injail dataB "http://$AN/data/$DIRB"
check "inside the jail /data/$DIRB is 403 ($(code dataB)), none of its rows" \
	sh -c "[ $(code dataB) = 403 ] && ! grep -qF \"\$(sed -n 2p '$D/state/released/$B/data.csv')\" '$D/dataB.body'"
injail headB -I "http://$AN/data/$DIRB"
check "HEAD /data/$DIRB is 403 too ($(code headB))" test "$(code headB)" = 403

# grants the page might send: forged, another session's, a real one for B
GOOD=$(cat "$D/secrets/$SID/grant")
mkgrant() {	# SESSION DATASET EXPIRES: signed with the real key
	python3 - "$KEY" "$@" <<'PY'
import hmac, hashlib, sys
key = bytes.fromhex(open(sys.argv[1]).read().strip())
s, d, e = sys.argv[2:5]
msg = ("cdsgate-grant v1:%s:%s:%s" % (s, d, e)).encode()
print("v1:%s:%s:%s:%s" % (s, d, e, hmac.new(key, msg, hashlib.sha256).hexdigest()))
PY
}
REALB=$(mkgrant "$SID" "$B" $(( $(date +%s) + 600 )))
OTHERB=$(mkgrant s-other "$B" $(( $(date +%s) + 600 )))
check "the test's own signing agrees with cdsgated's (the grant for $A made here is the file's)" \
	test "$(mkgrant "$SID" "$A" "$(echo "$GOOD" | cut -d: -f4)")" = "$GOOD"
injail fB1 -H "Cdsgate-Grant: $REALB" "http://$AN/data/$DIRB"
injail fB2 -H "cdsgate-grant: $OTHERB" -H "CDSGATE-GRANT: $REALB" "http://$AN/data/$DIRB"
injail fB3 -H "Cdsgate-Grant: v1:$SID:$B:9999999999:$(printf '0%.0s' $(seq 64))" "http://$AN/data/$DIRB"
check "a grant for dataset $B sent by the page is removed: still 403 (genuine $(code fB1), two $(code fB2), forged $(code fB3))" \
	sh -c "[ $(code fB1) = 403 ] && [ $(code fB2) = 403 ] && [ $(code fB3) = 403 ]"
injail fL -H "Cdsgate-Grant: $REALB" "http://$AN/api/datasets"
L=$(ids_in "$D/fL.body" 2>/dev/null)
check "with it /api/datasets still lists $A only: $L" \
	sh -c "[ $(code fL) = 200 ] && [ '$L' = '$A/$DIRA' ]"
injail fA -H "Cdsgate-Grant: $OTHERB" -H "Cdsgate-Grant: garbage" "http://$AN/data/$DIRA"
check "and a page that sends grants of its own still gets its dataset $A (200)" test "$(code fA)" = 200

# the backend decides, not the forwarder: direct requests
direct() { curl -s -m 10 -o /dev/null -w '%{http_code}' "$@"; }
check "direct: the session's grant opens $DIRA (200) and not $DIRB (403)" \
	sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -H 'Cdsgate-Grant: $GOOD' http://$AN/data/$DIRA)\" = 200 ] &&
	[ \"\$(curl -s -o /dev/null -w '%{http_code}' -H 'Cdsgate-Grant: $GOOD' http://$AN/data/$DIRB)\" = 403 ]"
EXPIRED=$(mkgrant "$SID" "$A" $(( $(date +%s) - 1 )))
TAMPER=$(echo "$GOOD" | sed "s/^v1:$SID:$A:/v1:$SID:$B:/")
check "direct: expired ($(direct -H "Cdsgate-Grant: $EXPIRED" "http://$AN/data/$DIRA")), tampered ($(direct -H "Cdsgate-Grant: $TAMPER" "http://$AN/data/$DIRB")), two ($(direct -H "Cdsgate-Grant: $GOOD" -H "Cdsgate-Grant: $GOOD" "http://$AN/data/$DIRA")): 403" \
	sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -H 'Cdsgate-Grant: $EXPIRED' http://$AN/data/$DIRA)\" = 403 ] &&
	[ \"\$(curl -s -o /dev/null -w '%{http_code}' -H 'Cdsgate-Grant: $TAMPER' http://$AN/data/$DIRB)\" = 403 ] &&
	[ \"\$(curl -s -o /dev/null -w '%{http_code}' -H 'Cdsgate-Grant: $GOOD' -H 'Cdsgate-Grant: $GOOD' http://$AN/data/$DIRA)\" = 403 ]"

# ---- what the logs say ----
check "the backend logged dataset_open for session $SID, dataset $A" \
	grep -q "dataset_open session=$SID dataset=$A dir=$DIRA" "$D/an.err"
check "and each refusal: /data/$DIRB not granted, no header, bad MAC, expired, two headers" \
	sh -c "grep -q 'refused GET /data/$DIRB: session $SID is granted dataset $A only' '$D/an.err' &&
	grep -q 'refused GET /api/datasets: no Cdsgate-Grant header' '$D/an.err' &&
	grep -q 'grant not made with this key' '$D/an.err' && grep -q 'grant expired' '$D/an.err' &&
	grep -q 'more than one Cdsgate-Grant' '$D/an.err'"
NETLOG=$D/rec/$SID.network.jsonl
check "the network log: /data/$DIRA 200, /data/$DIRB 403, the page's grant lines counted as removed" \
	python3 - "$NETLOG" "$DIRA" "$DIRB" <<'PY'
import json, sys
ls = [json.loads(l) for l in open(sys.argv[1])]
ls = [l for l in ls if l["event"] == "http"]
st = lambda t: [l["status"] for l in ls if l["target"] == t]
assert 200 in st("/data/" + sys.argv[2]), st("/data/" + sys.argv[2])
assert set(st("/data/" + sys.argv[3])) == {403}, st("/data/" + sys.argv[3])
dropped = sorted(l.get("grant_dropped", 0) for l in ls)
assert dropped[-1] == 2 and dropped.count(1) >= 2, dropped
PY
SLOG=$(ls "$D"/rec/"$SID".*log* 2>/dev/null | head -1)
check "the session's start names its grant: session, dataset $A, added" \
	sh -c "grep -h '\"session_start\"' '$D/err' $D/rec/* 2>/dev/null | grep -q '\"grant\": *{[^}]*\"dataset\": *$A'" 
check "the grant's MAC is in no log, nor in the capture" \
	sh -c "! grep -rqF '$(echo "$GOOD" | cut -d: -f5)' '$D/err' '$D/out' '$D/an.err' '$D/audit' '$NETLOG' '$D/rec'"
check "the capture has the session's grant line on each request, its MAC as x's" \
	python3 - "$D/rec/$SID.pcapng" "$(echo "$GOOD" | cut -d: -f1-4)" <<'PY'
import re, struct, sys
# Reassemble each direction of each synthetic TCP flow from the pcapng's
# Enhanced Packet Blocks (raw IPv4): a head the forwarder sent in two
# writes lies in two segments, so the file's raw bytes are not the stream.
d, streams, i = open(sys.argv[1], "rb").read(), {}, 0
bo = "<" if d[8:12] == b"\x4d\x3c\x2b\x1a" else ">"
while i + 12 <= len(d):
    t, n = struct.unpack(bo + "II", d[i:i + 8])
    if n < 12 or i + n > len(d):
        break                   # a block still being written: the end
    if t == 6:
        cap = struct.unpack(bo + "I", d[i + 20:i + 24])[0]
        pkt = d[i + 28:i + 28 + cap]
        ihl = (pkt[0] & 15) * 4
        sp, dp = struct.unpack(">HH", pkt[ihl:ihl + 4])
        off = ihl + (pkt[ihl + 12] >> 4) * 4
        streams.setdefault((pkt[12:16], sp, pkt[16:20], dp), bytearray()).extend(pkt[off:])
    i += n
line = re.escape(("Cdsgate-Grant: " + sys.argv[2] + ":").encode() + b"x" * 64 + b"\r\n")
rl = rb"(?:GET|HEAD|POST) /\S* HTTP/1\.[01]\r\n"
reqs = sum(len(re.findall(rl, s)) for s in streams.values())
withg = sum(len(re.findall(rl + line, s)) for s in streams.values())
print("# %d request lines in %d directions of the capture, %d followed by the masked grant"
      % (reqs, len(streams), withg))
assert streams and reqs >= 10 and withg == reqs
PY

# ---- the picture: the app on dataset A, its picker lists nothing else ----
sleep 4
"$VNCTEST" --host "${VADDR%:*}" --port "${VADDR##*:}" --password-file "$D/pw" \
	snapshot "$D/app.ppm" > /dev/null 2>&1; rc=$?
check "a VNC client sees the session (exit $rc)" test "$rc" -eq 0
PICK=${SCOPE_PICKER_XY:-370 17}	# the Dataset picker (app.css)
"$VNCTEST" --host "${VADDR%:*}" --port "${VADDR##*:}" --password-file "$D/pw" \
	click $PICK sleep 1 snapshot "$D/picker.ppm" keys Escape > /dev/null 2>&1
if command -v convert >/dev/null; then
	convert "$D/app.ppm" "$D/app.png" && convert "$D/picker.ppm" "$D/picker.png"
	mkdir -p "$top_builddir/tests/regress/071-scope.artifacts"
	cp "$D/app.png" "$D/picker.png" "$top_builddir/tests/regress/071-scope.artifacts/"
	diag "pictures: $top_builddir/tests/regress/071-scope.artifacts/{app,picker}.png"
fi
# Opened, the picker drops a list below itself: one option is one light
# row (y 30-50; blue when the pointer is taken to highlight it, grey when
# not) over the app's dark header bar; a second option would be a light
# row where the bar is (y 52-64).
check "the picker, opened, holds one option: one light row, then the header bar" \
	python3 - "$D/app.ppm" "$D/picker.ppm" <<'PY'
import re, sys
def load(p):
    d = open(p, 'rb').read()
    m = re.match(rb'P6\s+(\d+)\s+(\d+)\s+255\s', d)
    return int(m.group(1)), d[m.end():]
def px(img, x, y):
    w, d = img; i = 3 * (y * w + x); return tuple(d[i:i + 3])
closed, opened = load(sys.argv[1]), load(sys.argv[2])
dark = lambda p: sum(p) < 400	# the bar, watermark text over it
blue = lambda p: p[2] > 180 and p[2] > p[0] + 60	# highlighted
light = lambda p: sum(p) > 600				# not highlighted
rows = [px(opened, x, y) for x in range(270, 470, 10) for y in (32, 48)]
below = [px(opened, x, y) for x in range(270, 470, 10) for y in (56, 60)]
print('# closed (300,40) %s; opened row %s; below %s' % (px(closed, 300, 40), rows[:2], below[:3]))
assert dark(px(closed, 300, 40)), 'the closed picker is not over the header bar'
assert sum(blue(p) or light(p) for p in rows) >= 0.8 * len(rows), 'no option row'
assert all(map(dark, below)), 'a second row below the first option'
PY
if command -v tesseract >/dev/null && [ -f "$D/picker.png" ]; then
	convert "$D/picker.png" -crop 240x60+255+0 -resize 400% "$D/picker-big.png"
	tesseract "$D/picker-big.png" "$D/picker" > /dev/null 2>&1
	diag "the picker as read: $(tr '\n' ' ' < "$D/picker.txt" | head -c 200)"
	check "the picker and its list read cohort_alpha, never cohort_beta (OCR)" \
		sh -c "[ \$(grep -ci 'alpha' '$D/picker.txt') -ge 1 ] && ! grep -qi 'beta' '$D/picker.txt'"
else
	skip "no tesseract or convert: the picture is not read"
fi

"$CDSGATE" session revoke "$SID" > /dev/null 2>&1
for _ in $(seq 50); do grep -q "\"record_closed\".*$SID\|$SID.*\"record_closed\"" "$D/audit/audit.log" && break; sleep 0.1; done
check "the audit log's record_closed names the granted dataset beside the network log's digest" \
	python3 - "$D/audit/audit.log" "$SID" "$A" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("type") == "record_closed" and r["data"]["session"] == sys.argv[2]:
        assert r["data"]["dataset"] == int(sys.argv[3]), r["data"]
        assert r["data"]["network"]["sha256"], r["data"]
        break
else:
    sys.exit("no record_closed for " + sys.argv[2])
PY

# ---- PostgreSQL: a reader role per session ----
if [ -z "$HAVE_PG" ]; then
	for _ in 1 2 3 4 5; do skip "no PostgreSQL server here (/usr/lib/postgresql/*/bin/initdb, psql)"; done
	done_testing
	exit
fi
import_passed pg_alpha 13 1200; PA=$DS
"$CDSGATE" dataset mount "$PA" --backend postgres > /dev/null 2> "$D/pa.err"; rca=$?
import_passed pg_beta 14 900; PB=$DS
"$CDSGATE" dataset mount "$PB" --backend postgres > /dev/null 2> "$D/pb.err"; rcb=$?
check "two datasets mounted in PostgreSQL ($PA: $rca, $PB: $rcb $(cat "$D/pa.err" "$D/pb.err" | head -c 200))" \
	sh -c "[ $rca -eq 0 ] && [ $rcb -eq 0 ]"
"$CDSGATE" session create --recipient alice --dataset "$PA" --expires-in 600 --json \
	> "$D/p.json" 2> "$D/p.err"; rc=$?
PSID=$(json "$D/p.json" 'j["id"]' 2>/dev/null)
ROLE=cdsgate_$PSID
LOGIN=$(sql analytics "SELECT rolcanlogin FROM pg_roles WHERE rolname = '$ROLE'")
check "a session for $PA (exit $rc: $(head -c 200 "$D/p.err")); its login role $ROLE exists ($LOGIN)" \
	sh -c "[ $rc -eq 0 ] && [ '$LOGIN' = t ]"
PCRED=$D/secrets/$PSID/postgres
check "its credentials are root's, 0600, beside the session's other secrets" \
	sh -c "[ \"\$(stat -c '%U %a' '$PCRED')\" = 'root 600' ] && grep -q '^user=$ROLE password=' '$PCRED'"
# as_role SQL: the session's connection, over TCP with the role's password
as_role() {
	PGPASSWORD=$(sed 's/.* password=//' "$PCRED") psql -X -q -At -v ON_ERROR_STOP=1 \
		"host=127.0.0.1 port=$PGPORT dbname=analytics user=$ROLE" -c "$1" 2>&1
}
RA=$(as_role "SELECT count(*) FROM cdsgate_$PA.pg_alpha")
RB=$(as_role "SELECT count(*) FROM cdsgate_$PB.pg_beta")
RT=$(as_role "SELECT count(*) FROM cdsgate_$PA.pg_alpha_v1")
RW=$(as_role 'CREATE TEMP TABLE t (a int)')
diag "as $ROLE: alpha '$RA'; beta '$(echo "$RB" | head -1)'; alpha_v1 '$(echo "$RT" | head -1)'; write '$(echo "$RW" | head -1)'"
check "the session's role reads its view ($RA rows) and not the other's, nor the version table, nor writes" \
	sh -c "[ '$RA' -gt 0 ] 2>/dev/null && echo '$RB' | grep -q 'permission denied' &&
	echo '$RT' | grep -q 'permission denied' && echo '$RW' | grep -qi 'permission denied\|read-only'"
"$CDSGATE" session revoke "$PSID" > /dev/null 2>&1
for _ in $(seq 50); do
	[ -z "$(sql analytics "SELECT 1 FROM pg_roles WHERE rolname = '$ROLE'")" ] && break
	sleep 0.1
done
LEFT=$(sql analytics "SELECT 1 FROM pg_roles WHERE rolname = '$ROLE'")
check "after the session ends the role is gone and its login refused; both steps audited" \
	sh -c "[ -z '$LEFT' ] &&
	! PGPASSWORD=x psql -X -q -At -c 'SELECT 1' 'host=127.0.0.1 port=$PGPORT dbname=analytics user=$ROLE' >/dev/null 2>&1 &&
	grep -q '\"session.pg_role\"' '$D/audit/audit.log' && grep -q '\"session.pg_role_drop\"' '$D/audit/audit.log' &&
	[ ! -e '$PCRED' ]"
done_testing
