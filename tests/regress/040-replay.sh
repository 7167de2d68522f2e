#!/bin/sh
# tests/regress/040-replay.sh — `cdsgate replay` on real recordings made by
# the recording library (a 20 s scripted 1280x800 session from
# bench/recording/record-bench, which also saves the frames it had at
# three moments): --info, --frame pixel-exact against those frames with
# ImageMagick, --keys text, --search, --events as JSON lines, a truncated
# and a corrupted copy, hostile arguments, and --export to mp4/webm
# checked with ffprobe.
. "$(dirname "$0")/lib.sh"

RB=$top_builddir/bench/recording/record-bench
[ -x "$CDSGATE" ] || skip_all "cdsgate not built at $CDSGATE"
[ -x "$RB" ] || skip_all "record-bench not built at $RB"
command -v python3 >/dev/null || skip_all "python3 not installed"

TEXT='select * from visits'
REC=$TMP/s.rec
check "record-bench writes a 20 s session" quiet "$RB" --seconds 20 \
	--out "$REC" --text "$TEXT" --expect "1:$TMP/e1.ppm" \
	--expect "8.05:$TMP/e8.ppm" --expect "15.5:$TMP/e15.ppm"

# ---- --info ----
"$CDSGATE" replay "$REC" --info >"$TMP/info" 2>&1
check "--info: complete" grep -q '^complete: yes' "$TMP/info"
check "--info: duration 20 s" grep -q '^duration: 00:00:20.000' "$TMP/info"
check "--info: geometry and recipient" sh -c \
	"grep -q '^geometry: 1280x800' '$TMP/info' && grep -q '^recipient: synthetic' '$TMP/info'"
check "--info: sha256 is the file's (what the audit log holds)" grep -q \
	"^sha256: $(sha256sum "$REC" | cut -d' ' -f1)\$" "$TMP/info"
check "--info: indexed, keyframes counted" sh -c \
	"grep -q '^index: yes' '$TMP/info' && grep -Eq 'keyframes [1-9]' '$TMP/info'"

# ---- --frame: pixel-exact against what the writer had ----
# ae A B: ImageMagick's count of differing pixels (0 = identical).
ae() { compare -metric AE "$1" "$2" null: 2>&1 | awk '{print int($1)}'; }
if command -v compare >/dev/null; then
	for t in 1 8.05 15.5; do
		n=${t%.*}
		"$CDSGATE" replay "$REC" --frame "$t" -o "$TMP/f$n.png"
		d=$(ae "$TMP/f$n.png" "$TMP/e$n.ppm")
		if [ "$d" = 0 ]; then ok "--frame $t: PNG equals the writer's frame"
		else not_ok "--frame $t: $d pixels differ"; fi
	done
	d=$(ae "$TMP/f1.png" "$TMP/f15.png")
	if [ "${d:-0}" -gt 100 ]; then ok "frames at 1 s and 15.5 s differ ($d px)"
	else not_ok "frames at 1 s and 15.5 s differ (only ${d:-?} px)"; fi
else
	skip "ImageMagick compare not installed"
fi
"$CDSGATE" replay "$REC" --frame 0:08.05 -o "$TMP/g8.png"
"$CDSGATE" replay "$REC" --frame 00:00:08.05 -o "$TMP/h8.png"
check "TIME as mm:ss and hh:mm:ss gives the same frame" sh -c \
	"cmp -s '$TMP/f8.png' '$TMP/g8.png' && cmp -s '$TMP/f8.png' '$TMP/h8.png'"

# ---- --keys, --search ----
"$CDSGATE" replay "$REC" --keys >"$TMP/keys"
got=$(sed -n '/^--- typed text ---$/,$p' "$TMP/keys" | sed 1d | head -1)
if [ "$got" = "$TEXT" ]; then ok "--keys: typed text is exactly '$TEXT'"
else not_ok "--keys: typed text '$got'"; fi
check "--keys: press and release on the timeline" sh -c \
	"grep -Eq '^00:00:02.000 press +s' '$TMP/keys' && grep -Eq '^00:00:02.000 release +s' '$TMP/keys'"
check "--keys: the filtered F12 and the rate-limited X are marked" sh -c \
	"grep -Eq 'press +F12 +filtered' '$TMP/keys' && grep -Eq 'press +X +rate-limited' '$TMP/keys'"
"$CDSGATE" replay "$REC" --search 'from visits' >"$TMP/search"
check "--search finds when 'from visits' was typed" \
	grep -Eq '^00:00:07.700 typed \(started 00:00:04.700\)' "$TMP/search"
if "$CDSGATE" replay "$REC" --search 'drop table' >/dev/null 2>&1; then
	not_ok "--search for text never typed fails"
else ok "--search for text never typed fails"; fi

# ---- --events ----
"$CDSGATE" replay "$REC" --events >"$TMP/events"
check "--events: JSON lines with keys, pointer and session events" python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
kinds = {e["type"] for e in ev}
keys = [e for e in ev if e["type"] == "key"]
assert kinds == {"key", "pointer", "event"}, kinds
assert len(keys) == 2 * (len(sys.argv[2]) + 1) + 4, len(keys)
assert ev[0]["event"] == {"event": "session-start"}
assert all(a["t_us"] <= b["t_us"] for a, b in zip(ev, ev[1:]))
' "$TMP/events" "$TEXT"

# ---- damaged copies ----
size=$(wc -c <"$REC")
head -c $((size * 6 / 10)) "$REC" >"$TMP/cut.rec"
"$CDSGATE" replay "$TMP/cut.rec" --info >"$TMP/cinfo" 2>&1
check "truncated copy: --info says where" grep -Eq \
	'^complete: no, truncated at offset [0-9]+ \(time 00:00:[0-9.]+\)' "$TMP/cinfo"
"$CDSGATE" replay "$TMP/cut.rec" --frame 1 -o "$TMP/c1.png" 2>"$TMP/cerr"
if command -v compare >/dev/null && [ "$(ae "$TMP/c1.png" "$TMP/e1.ppm")" = 0 ]; then
	ok "truncated copy: the frame at 1 s is still exact"
else not_ok "truncated copy: the frame at 1 s is still exact"; fi
check "truncated copy: a warning on stderr" grep -q 'warning: .*truncated at offset' "$TMP/cerr"
python3 -c '
import sys
d = bytearray(open(sys.argv[1], "rb").read()); d[len(d) // 2] ^= 0x5a
open(sys.argv[2], "wb").write(d)' "$REC" "$TMP/flip.rec"
"$CDSGATE" replay "$TMP/flip.rec" --info >"$TMP/finfo" 2>&1
check "flipped byte: reported as a CRC mismatch" grep -Eq \
	'^complete: no, truncated at offset [0-9]+ .*CRC mismatch' "$TMP/finfo"

# ---- kill -9 of a writer mid-session ----
"$RB" --seconds 3600 --out "$TMP/killed.rec" >/dev/null 2>&1 &
kpid=$!
for _ in $(seq 100); do
	[ "$(wc -c 2>/dev/null <"$TMP/killed.rec" || echo 0)" -gt 2000000 ] && break
	sleep 0.05
done
kill -KILL "$kpid" 2>/dev/null; wait "$kpid" 2>/dev/null
"$CDSGATE" replay "$TMP/killed.rec" --info >"$TMP/kinfo" 2>&1
check "kill -9: --info reports the cut (no END chunk)" grep -Eq \
	'^complete: no, truncated at offset [0-9]+ \(time [0-9:.]+\): (no END chunk|incomplete chunk)' "$TMP/kinfo"
grep -E '^(duration|complete)' "$TMP/kinfo" | while read -r l; do diag "$l"; done
"$CDSGATE" replay "$TMP/killed.rec" --frame 1 -o "$TMP/k1.png" 2>/dev/null
if command -v compare >/dev/null && [ "$(ae "$TMP/k1.png" "$TMP/e1.ppm")" = 0 ]; then
	ok "kill -9: the frame at 1 s is exact"
else not_ok "kill -9: the frame at 1 s is exact"; fi

# ---- hostile or wrong input: clear errors, exit 2 ----
# fails_with CODE PATTERN ARGS...: exit status CODE and PATTERN on stderr.
fails_with() {
	local code=$1 pat=$2 rc; shift 2
	"$CDSGATE" replay "$@" >/dev/null 2>"$TMP/err"; rc=$?
	[ "$rc" -eq "$code" ] && grep -q "$pat" "$TMP/err"
}
check "not a recording: refused" fails_with 2 'not a cdsgate recording' /etc/passwd --info
check "missing file: refused" fails_with 2 'No such file' "$TMP/nope.rec" --info
mkfifo "$TMP/fifo"
check "a FIFO is refused, not waited on" sh -c \
	"timeout 10 '$CDSGATE' replay '$TMP/fifo' --info 2>&1 | grep -q 'not a regular file'"
check "bad TIME refused" fails_with 2 'bad TIME' "$REC" --frame 1:99 -o "$TMP/x.png"
check "TIME after the end refused" fails_with 2 'after the end' "$REC" --frame 21 -o "$TMP/x.png"
check "--export to an unknown format refused" fails_with 2 'mp4 or .webm' "$REC" --export "$TMP/x.avi"
check "--serve refuses a non-loopback address" fails_with 2 'loopback only' "$REC" --serve 0.0.0.0:5999
cp "$REC" "$TMP/badhead.rec"
printf 'X' | dd of="$TMP/badhead.rec" bs=1 seek=30 conv=notrunc 2>/dev/null
check "a corrupt header chunk: refused, naming the file and offset 0" \
	fails_with 2 "$TMP/badhead.rec: .*header chunk at offset 0: CRC mismatch" \
	"$TMP/badhead.rec" --events
# --events reads the recording under the replay seccomp profile: it must
# still print every item (the profile lacks nothing it needs).
check "--events runs to the end under the replay profile" sh -c \
	"'$CDSGATE' replay '$REC' --events 2>/dev/null | tail -n 1 | grep -q session-end"

# ---- --serve: a read-only VNC player, driven by the viewer's keys ----
VNCTEST=${VNCTEST:-$top_builddir/tests/gateway/cdsgate-vnctest}
if [ -x "$VNCTEST" ] && command -v compare >/dev/null; then
	port=$(free_port)
	echo 'replay-pw' >"$TMP/pw"
	echo 'wrong-pw' >"$TMP/badpw"
	"$CDSGATE" replay "$REC" --serve "127.0.0.1:$port" --password-file "$TMP/pw" \
		--at 8.05 >"$TMP/serve.out" 2>&1 &
	spid=$!
	if wait_line "$TMP/serve.out" '^serving on' 10 "$spid"; then
		check "--serve: the process serving is filtered (Seccomp: 2)" \
			grep -q '^Seccomp:[[:space:]]*2' "/proc/$spid/status"
		vt() { "$VNCTEST" --port "$port" --timeout 20 "$@" >/dev/null 2>&1; }
		vt --password-file "$TMP/pw" snapshot "$TMP/v8.ppm"
		d=$(ae "$TMP/v8.ppm" "$TMP/e8.ppm")
		if [ "$d" = 0 ]; then ok "--serve --at 8.05: the viewer sees the writer's frame"
		else not_ok "--serve --at 8.05: $d pixels differ"; fi
		vt --password-file "$TMP/pw" keys Right sleep 1 snapshot "$TMP/v18.ppm"
		"$CDSGATE" replay "$REC" --frame 18.05 -o "$TMP/f18.png"
		d=$(ae "$TMP/v18.ppm" "$TMP/f18.png")
		if [ "$d" = 0 ]; then ok "--serve: Right seeks +10 s (frame at 18.05 s)"
		else not_ok "--serve: Right seeks +10 s: $d pixels differ"; fi
		vt --password-file "$TMP/pw" keys space sleep 3 snapshot "$TMP/vend.ppm"
		"$CDSGATE" replay "$REC" --frame 20 -o "$TMP/f20.png"
		d=$(ae "$TMP/vend.ppm" "$TMP/f20.png")
		if [ "$d" = 0 ]; then ok "--serve: Space plays on and stops at the end"
		else not_ok "--serve: Space plays on to the end: $d pixels differ"; fi
		check "--serve: a wrong password is refused" \
			vt --password-file "$TMP/badpw" expect-refused
	else
		not_ok "--serve did not start: $(cat "$TMP/serve.out")"
	fi
	stop "$spid"
else
	skip "--serve: cdsgate-vnctest or ImageMagick missing"
fi

# ---- --export through ffmpeg ----
# duration FILE: container duration in seconds (ffprobe).
duration() { ffprobe -v error -show_entries format=duration -of csv=p=0 "$1"; }
if command -v ffmpeg >/dev/null && command -v ffprobe >/dev/null; then
	for f in mp4 webm; do
		if "$CDSGATE" replay "$REC" --export "$TMP/o.$f" >/dev/null; then
			d=$(duration "$TMP/o.$f")
			if python3 -c "import sys; sys.exit(abs(float('$d') - 20) > 0.5)"; then
				ok "--export $f plays for $d s (session: 20 s)"
			else not_ok "--export $f duration $d s (session: 20 s)"; fi
		else
			not_ok "--export $f"
		fi
	done
else
	skip "ffmpeg/ffprobe not installed (./dev installs the ffmpeg package)"
fi

done_testing
