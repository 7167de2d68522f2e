#!/usr/bin/env bash
# 045-keysyms: what the page received is what the recording's text says,
# for every way a client can send a character, and the recording is tied
# to the signed audit log.  Through a real `cdsgated serve` session and
# libvncclient (cdsgate-vnctest), into the hostile backend's textarea
# (tests/gateway/backend.py records its value):
#   - ASCII and Latin-1 as Unicode keysyms 0x01000020-0x010000ff, the
#     Cyrillic alphabet as legacy keysyms 0x6xx, Return, a word as
#     Unicode keysyms and a Cyrillic word: `replay --keys` rebuilds exactly
#     the textarea's value and `replay --search` finds each part; the
#     keypad's digits and operators likewise;
#   - C1 controls as Unicode keysyms are filtered by the kiosk (marked so
#     on the timeline, absent from page and text); a keysym that names no
#     character (0x8b1) is delivered and shows in the text as «keysym 0x8b1».
# The audit side: the session's record_closed is followed at once by a
# signed checkpoint; an unsigned record is checkpointed after the test
# interval (CDSGATE_TEST_CHECKPOINT_S, a test hook for the minute);
# `replay FILE` says which record_closed vouches for the file (or an exact
# copy), warns for a modified copy (renamed too: its header has the
# session id) and says when it cannot tell; `audit verify --strict`
# fails (exit 3) on a record appended after the last checkpoint, which
# plain verify passes with a note.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-serve.sh"

serve_prereqs
require_session
serve_dirs
serve_backend
[ -z "$NOSESS" ] || skip_all "$NOSESS"
LOG=$D/audit/audit.log
serve_config
export CDSGATE_TEST_CHECKPOINT_S=3
check "cdsgated serve starts (checkpoint interval 3 s)" serve_start

# ---- a record waits at most the interval for its checkpoint ----
# type_of: the type of the JSON record on stdin; last_type: of the log's last line.
type_of() { python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["type"])' 2>/dev/null; }
last_type() { tail -n 1 "$LOG" 2>/dev/null | type_of; }
for _ in $(seq 50); do [ "$(last_type)" = checkpoint ] && break; sleep 0.2; done
"$CDSGATE" recipient add alice --name Alice --max-sessions 2 > /dev/null
t0=$(date +%s.%N)
check "right after recipient add its record is the last line, not yet signed" \
	test "$(last_type)" = recipient.add
for _ in $(seq 50); do [ "$(last_type)" = checkpoint ] && break; sleep 0.1; done
dt=$(python3 -c "import time; print('%.1f' % (time.time() - $t0))")
check "the key holder checkpoints it by itself ${dt}s later (interval 3 s)" \
	python3 -c "import sys; sys.exit(not (2.0 <= $dt <= 6.0))"
check "the record before that checkpoint is the recipient's" test \
	"$(tail -n 2 "$LOG" | head -n 1 | type_of)" = recipient.add

mount_patients
check "a dataset is imported and mounted" test -n "$DS"

# ---- a session, typed into with every kind of keysym ----
session_new
check "a session starts ($SCODE)" test "$SCODE" = 201
REC=$D/rec/$SID.cdsrec

hexes() { local c; for c in "$@"; do printf '0x%x ' "$c"; done; }
uni() { local c; for c in $(seq "$1" "$2"); do printf '0x%x ' $((0x1000000 + c)); done; }
# Cyrillic a-ya and A-YA (0x6c0-0x6ff), yo and YO
CYR="$(hexes $(seq $((0x6c0)) $((0x6ff)))) 0x6a3 0x6b3"
# " SELECT name" as Unicode keysyms; "poisk" (search) in Cyrillic
WORD=$(for ch in ' ' S E L E C T ' ' n a m e; do printf '0x%x ' $((0x1000000 + $(printf '%d' "'$ch"))); done)
POISK="0x6d0 0x6cf 0x6c9 0x6d3 0x6cb"
# the keypad: 1*2+3-0/9=
KP="0xffb1 0xffaa 0xffb2 0xffab 0xffb3 0xffad 0xffb0 0xffaf 0xffb9 0xffbd"
sleep 3
# shellcheck disable=SC2046,SC2086
"$VNCTEST" --host "${VADDR%:*}" --port "${VADDR##*:}" --password-file "$D/s.pw" \
	--timeout 150 click 300 250 \
	keys $(uni 32 126) $(uni 160 255) \
	keys Return $CYR keys $WORD keys Return $POISK $KP \
	keys 0x100007f 0x1000085 0x1000090 keys 0x8b1 sync sleep 2 \
	> "$D/vt.out" 2> "$D/vt.err"
rc=$?
check "the client typed $(( 95 + 96 + 1 + 66 + 12 + 1 + 5 + 10 + 4 )) keysyms (exit $rc)" test "$rc" = 0
[ "$rc" = 0 ] || sed 's/^/# vnctest: /' "$D/vt.err" | tail -5

# What the page received: the textarea's last value, from the backend.
python3 - "$D/events.jsonl" > "$D/page.txt" <<'PY'
import json, sys
v = ''
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get('type') == 'input' and e.get('path') == '/':
        v = e['value']
sys.stdout.write(v)
PY
# race_check DESCRIPTION COMMAND...: ok on exit 0; exit 3 means the page
# got a different character in at most two places, all else equal: the
# known race of a rebound spare keycode (docs/gateway.md, "Typed text"),
# reported as a TAP TODO so it stays visible without failing the run.
race_check() {
	local d=$1 rc; shift
	"$@"; rc=$?
	case $rc in
	0) ok "$d" ;;
	3) tap_n=$((tap_n + 1)); echo "not ok $tap_n - $d # TODO spare-keycode race: the page read a keycode before its new binding" ;;
	*) not_ok "$d" ;;
	esac
}
race_check "the page received the whole of it: ASCII, Latin-1, Cyrillic, the word, the keypad, no C1 control" \
	python3 - "$D/page.txt" <<'PY'
import sys
got = open(sys.argv[1], encoding='utf-8').read()
# keysymdef.h's Cyrillic 0x6c0-0x6ff are in KOI8-R order: compared as a set
latin = ''.join(chr(c) for c in list(range(0x20, 0x7f)) + list(range(0xa0, 0x100)))
lines = got.split('\n')
ok = (len(lines) == 3 and lines[0] == latin and lines[1].endswith(' SELECT name')
      and set(lines[1][:-12]) == set(chr(c) for c in range(0x410, 0x450)) | {'ё', 'Ё'}
      and len(lines[1]) == 66 + 12 and lines[2] == 'поиск1*2+3-0/9='
      and not any(0x7f <= ord(c) <= 0x9f for c in got))
if not ok:
    print('# page: %r' % got[:400])
    # the same shape with one or two characters swapped: the race
    from collections import Counter
    if len(lines) == 3 and len(lines[0]) == len(latin) and len(lines[1]) == 78:
        want = Counter(chr(c) for c in range(0x410, 0x450)) + Counter('Ёё')
        diff = sum(a != b for a, b in zip(lines[0], latin))
        diff += sum((want - Counter(lines[1][:-12])).values())
        diff += lines[1][-12:] != ' SELECT name'
        if lines[2] == 'поиск1*2+3-0/9=' and diff <= 2:
            sys.exit(3)
sys.exit(not ok)
PY

"$CDSGATE" session revoke "$SID" > /dev/null
for _ in $(seq 75); do grep -q "\"type\":\"record_closed\".*$SID" "$LOG" && break; sleep 0.2; done
LC=$(grep -n '"type":"record_closed"' "$LOG" | grep "$SID" | cut -d: -f1)
check "record_closed for the session is in the log (line ${LC:-none})" test -n "$LC"
check "the next line is a signed checkpoint (the key holder signs each record_closed)" \
	test "$(sed -n "$((LC + 1))p" "$LOG" | type_of)" = checkpoint

# ---- the recording's text is what the page received ----
"$CDSGATE" replay "$REC" --keys --audit-log "$LOG" > "$D/keys.txt" 2> "$D/keys.err"
race_check "replay --keys: the typed text, markers aside and U+00AD shown by number, is exactly the page's textarea" \
	python3 - "$D/keys.txt" "$D/page.txt" <<'PY'
import re, sys
out = open(sys.argv[1], encoding='utf-8').read()
text = out.split('--- typed text ---\n', 1)[1][:-1]
page = open(sys.argv[2], encoding='utf-8').read()
bare = re.sub('«keysym 0x[0-9a-f]+»', '', text)
# zero-width and bidi characters are shown by number (U+00AD here)
bare = re.sub('«U\\+([0-9A-F]{4})»', lambda m: chr(int(m.group(1), 16)), bare)
if bare != page:
    print('# text: %r' % text[-200:]); print('# page: %r' % page[-200:])
    if len(bare) == len(page) and sum(a != b for a, b in zip(bare, page)) <= 2:
        sys.exit(3)
sys.exit(bare != page)
PY
check "the keysym without a character is in the text as «keysym 0x8b1»" \
	grep -q '«keysym 0x8b1»$' "$D/keys.txt"
check "the C1 controls are on the timeline, filtered, and not in the text" sh -c \
	"grep -Eq 'press +0x100007f +filtered' '$D/keys.txt' && grep -Eq 'press +0x1000085 +filtered' '$D/keys.txt'"
for s in 'SELECT name' 'поиск1*2+3-0/9=' '!"#$%&'"'"'()*+,-./0123456789:;<=>?@ABC' '¡¢£¤¥¦§¨©ª«¬' 'ÀÁÂÃÄÅÆÇ' 'юабцдефг'; do
	"$CDSGATE" replay "$REC" --search "$s" --audit-log "$LOG" > "$D/search.txt" 2>&1; rc=$?
	check "replay --search finds '$s' (exit $rc)" sh -c "[ $rc = 0 ] && grep -q 'typed (started' '$D/search.txt'"
done
"$CDSGATE" replay "$REC" --search 'SELECT namex' --audit-log "$LOG" > /dev/null 2>&1; rc=$?
check "and not what was not typed (exit $rc)" test "$rc" != 0

# ---- replay FILE and the audit log ----
"$CDSGATE" replay "$REC" --info --audit-log "$LOG" > "$D/info.txt" 2> "$D/info.err"
check "replay FILE --info: the record_closed on line $LC vouches for it, no warning" sh -c \
	"grep -q '^audit log: vouched for by $LOG line $LC (record_closed of session $SID' '$D/info.txt' && ! grep -q warning '$D/info.err'"
mkdir -p "$D/copy"
COPY=$D/copy/$SID.cdsrec
cp "$REC" "$COPY"
"$CDSGATE" replay "$COPY" --keys --audit-log "$LOG" > /dev/null 2> "$D/copy.err"
check "an exact copy elsewhere is vouched for by its digest: no warning" sh -c "! grep -q warning '$D/copy.err'"
python3 -c '
import sys
d = bytearray(open(sys.argv[1], "rb").read()); d[len(d) // 2] ^= 0x20
open(sys.argv[1], "wb").write(d)' "$COPY"
"$CDSGATE" replay "$COPY" --keys --audit-log "$LOG" > /dev/null 2> "$D/tamper.err"
sed 's/^/# /' "$D/tamper.err"
check "a modified copy: replay warns it is not the recording line $LC vouches for" \
	grep -q "warning: $COPY: not the recording the audit log vouches for: $LOG line $LC (record_closed of session $SID) has sha256 .* replaced or modified" "$D/tamper.err"
cp "$COPY" "$D/copy/renamed.cdsrec"
"$CDSGATE" replay "$D/copy/renamed.cdsrec" --info --audit-log "$LOG" > "$D/ren.txt" 2>&1
check "modified and renamed: its header's session id (the API's) still names it: not the recording line $LC vouches for" \
	grep -q "^audit log: not the recording the audit log vouches for: $LOG line $LC (record_closed of session $SID)" "$D/ren.txt"
"$CDSGATE" replay "$REC" --events --audit-log "$D/none.log" > /dev/null 2> "$D/none.err"
check "no audit log to read: replay says it cannot tell" \
	grep -q "warning: .*cannot tell whether it is the recording the audit log vouches for: $D/none.log: No such file" "$D/none.err"

# ---- audit verify --strict ----
kill -TERM "$SRV_PID"; wait "$SRV_PID"; SRV_PID=
verify() { "$CDSGATE" audit verify "$LOG" --key "$D/audit.pub" "$@" > "$D/verify.out" 2>&1; }
verify --strict; rc=$?
check "the closed log passes --strict (exit $rc)" sh -c "[ $rc = 0 ] && grep -q ', 0 records after the last one' '$D/verify.out'"
N=$(wc -l < "$LOG")
python3 - "$LOG" <<'PY'
import hashlib, json, sys
lines = open(sys.argv[1], 'rb').read().split(b'\n')[:-1]
last = json.loads(lines[-1])
rec = {"data": {"name": "mallory"}, "prev": hashlib.sha256(lines[-1]).hexdigest(),
       "seq": last["seq"] + 1, "time": "2026-11-27T12:00:00Z", "type": "recipient.add"}
open(sys.argv[1], 'ab').write(json.dumps(rec, separators=(',', ':'), sort_keys=True).encode() + b'\n')
PY
verify; rc=$?
sed 's/^/# /' "$D/verify.out"
check "an appended unsigned record: verify passes (exit $rc) with the note naming line $((N + 1))" sh -c \
	"[ $rc = 0 ] && grep -q '1 records after the last one' '$D/verify.out' && grep -q 'note: the 1 records from line $((N + 1)) on are not signed' '$D/verify.out'"
verify --strict; rc=$?
sed 's/^/# /' "$D/verify.out"
check "verify --strict fails on it: exit 3, line $((N + 1))" sh -c \
	"[ $rc = 3 ] && grep -q 'line $((N + 1)): 1 record after the last signed checkpoint' '$D/verify.out'"
verify --strict --json; rc=$?
check "--strict --json: intact false, unsigned_line $((N + 1)) (exit $rc)" sh -c \
	"[ $rc = 3 ] && python3 -c 'import json,sys; j = json.load(open(sys.argv[1])); sys.exit(not (j[\"intact\"] is False and j[\"unsigned_line\"] == $((N + 1))))' '$D/verify.out'"

done_testing
