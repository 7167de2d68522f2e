#!/usr/bin/env bash
# 043-watermark: the watermark in real sessions over a plain
# white page (the pointer, parked top left, and the window's edge line aside) (served by python3 -m http.server), seen by a real VNC client
# (cdsgate-vnctest, libvncclient):
#   1. default policy (on, tiled, opacity 0.15): the snapshot has text
#      pixels all over the screen and none darker than the opacity allows;
#      most text pixels are exactly 255 - round(0.15 * 255); session_start
#      names the watermark; after the minute turns (only the changed
#      blocks are redrawn) the same holds and a little changed; the
#      recording's frame (`cdsgate replay --frame`) equals that live
#      snapshot, watermark included
#   2. corner layout, opacity 0.6, text "%r %t": only the bottom-right
#      corner is marked; after the minute turns (the worker redraws under
#      its seccomp filter) exactly the minute's digits changed; OCR
#      (tesseract, if installed) reads the recipient and the date
#   3. `watermark: false` in a policy file: the page is pure white
#   4. a bad opacity is refused before anything starts
# Needs root, Xvfb and Chromium; skips (with the reason) otherwise.
. "$(dirname "$0")/lib.sh"

CDSGATED=${CDSGATED:-$top_builddir/cdsgated}
VNCTEST=${VNCTEST:-$top_builddir/tests/gateway/cdsgate-vnctest}
RECIPIENT=wm-alice

require_session
[ -x "$CDSGATE" ] || skip_all "cdsgate not built at $CDSGATE"

GW_PID=
WS_PID=
ARTIFACTS=$top_builddir/tests/regress/043-watermark.artifacts
rm -rf "$ARTIFACTS"
cleanup() {
	local p
	if [ "$tap_failed" -gt 0 ] && mkdir -p "$ARTIFACTS" 2>/dev/null; then
		cp "$TMP"/*.ppm "$TMP"/*.png "$TMP"/*.log "$TMP"/*.err \
			"$ARTIFACTS"/ 2>/dev/null
		echo "# failed: snapshots and logs kept in $ARTIFACTS"
	fi
	for p in $GW_PID $WS_PID; do stop "$p"; done
	rm -rf "$TMP"
}
trap cleanup EXIT

mkdir -p "$TMP/www"
printf '<!doctype html><title>white</title><body style="margin:0;background:#fff"></body>\n' \
	> "$TMP/www/index.html"
WPORT=$(free_port)
python3 -m http.server --bind 127.0.0.1 --directory "$TMP/www" "$WPORT" \
	> "$TMP/www.log" 2>&1 &
WS_PID=$!
for _ in $(seq 50); do
	python3 -c 'import sys,urllib.request; urllib.request.urlopen(sys.argv[1])' \
		"http://127.0.0.1:$WPORT/" 2>/dev/null && break
	sleep 0.1
done
python3 -c 'import secrets,string; print("".join(secrets.choice(string.ascii_letters) for _ in range(8)))' > "$TMP/pw"
chmod 600 "$TMP/pw"

# session NAME ARGS...: start one; sets GW_PID and VPORT; 1 if never ready.
session() {
	local n=$1; shift
	"$CDSGATED" run-session --backend "http://127.0.0.1:$WPORT/" \
		--listen "127.0.0.1:$(free_port)" --password-file "$TMP/pw" \
		--log "$TMP/$n.log" --geometry 1280x800 --recipient "$RECIPIENT" \
		--record-dir "$TMP/rec-$n" "$@" > "$TMP/$n.out" 2> "$TMP/$n.err" &
	GW_PID=$!
	if ! wait_line "$TMP/$n.out" '^ready ' 30 "$GW_PID"; then
		tail -15 "$TMP/$n.err" | sed 's/^/# /'
		return 1
	fi
	VPORT=$(sed -n 's/^ready //p' "$TMP/$n.out" | head -1)
	VPORT=${VPORT##*:}
}
# The pointer is part of the frame (docs/gateway.md, "The pointer"): it
# is parked in the top-left corner, which the checks leave out.
snapshot() {
	"$VNCTEST" --port "$VPORT" --password-file "$TMP/pw" --timeout 30 \
		move 0 0 sleep 0.3 snapshot "$1" > /dev/null 2> "$TMP/vt.err"
}
# page_snapshot FILE: a snapshot once the page is painted (most pixels
# pure white, not the window's grey before the first paint), up to 15 s.
page_snapshot() {
	local i
	for i in $(seq 15); do
		snapshot "$1" && python3 "$TMP/wm.py" painted "$1" && return 0
		sleep 1
	done
	return 1
}
# page_loaded: wait until the browser fetched the page once more than
# before this session, then let it settle.
NLOADS=0
page_loaded() {
	local i
	NLOADS=$((NLOADS + 1))
	for i in $(seq 200); do
		[ "$(grep -c 'GET / ' "$TMP/www.log")" -ge "$NLOADS" ] && { sleep 2; return 0; }
		sleep 0.1
	done
	return 1
}
end_session() { term_wait "$GW_PID"; GW_PID=; }

# All picture statistics live in one helper.
cat > "$TMP/wm.py" <<'PY'
import re, sys

def ppm(path):
    d = open(path, 'rb').read()
    m = re.match(rb'P6\s+(\d+)\s+(\d+)\s+255\s', d)
    if not m:
        sys.exit('%s: not a binary PPM' % path)
    w, h = int(m.group(1)), int(m.group(2))
    px = d[m.end():]
    return w, h, [min(px[i], px[i + 1], px[i + 2]) for i in range(0, 3 * w * h, 3)]

# Not the page: the pointer parked at the top left and the one-pixel window
# edge Chromium leaves at the right and bottom.
def page(i, w, h):
    x, y = i % w, i // w
    return x < w - 2 and y < h - 2 and not (x < 32 and y < 32)

cmd, a = sys.argv[1], sys.argv[2:]
w, h, g = ppm(a[0])
g = [v if page(i, w, h) else 255 for i, v in enumerate(g)]
marked = [i for i, v in enumerate(g) if v < 255]
if cmd == 'painted':                    # IMAGE: the page's white is up
    sys.exit(sum(v == 255 for v in g) < 0.5 * w * h)
elif cmd == 'tile':                     # IMAGE OPACITY
    full = 255 - round(float(a[1]) * 255)
    cells = set((i % w // 160, i // w // 160) for i in marked)
    frac = len(marked) / (w * h)
    darkest = min(g)
    at_full = sum(v == full for v in g) / max(1, len(marked))
    print('# %.1f%% of pixels marked, darkest %d (opacity gives %d), %.0f%% of '
          'them at full strength, %d of %d cells of 160 px' %
          (100 * frac, darkest, full, 100 * at_full, len(cells),
           (w // 160) * (h // 160)))
    sys.exit(not (0.02 <= frac <= 0.40 and darkest >= full and at_full >= 0.3
                  and len(cells) == (w // 160) * (h // 160)))
elif cmd == 'corner':                   # IMAGE: marks only bottom-right
    out = [i for i in marked if i % w < w // 2 or i // w < h - 60]
    print('# %d pixels marked, %d outside the bottom-right corner' %
          (len(marked), len(out)))
    sys.exit(not (len(marked) > 100 and not out))
elif cmd == 'minute':                   # IMAGE1 IMAGE2 HH:MM HH:MM
    # The corner line ends 8 px from the right edge; the built-in "fixed"
    # font is 6 px wide, drawn at 2x: character i from the right ('Z' = 0)
    # covers x in [w - 8 - 12 (i + 1), w - 8 - 12 i).
    _, _, g2 = ppm(a[1])
    g2 = [v if page(i, w, h) else 255 for i, v in enumerate(g2)]
    diff = [i for i in range(w * h) if g[i] != g2[i]]
    changed = {5 - k for k in range(5) if a[2][k] != a[3][k]}
    cells = {(w - 8 - (i % w) - 1) // 12 for i in diff}
    print('# %d pixels differ, in character cells %s (from the right); '
          'the minute changes cells %s' % (len(diff), sorted(cells), sorted(changed)))
    sys.exit(not (diff and cells == changed))
elif cmd == 'changed':                  # IMAGE1 IMAGE2: a little changed
    _, _, g2 = ppm(a[1])
    g2 = [v if page(i, w, h) else 255 for i, v in enumerate(g2)]
    n = sum(g[i] != g2[i] for i in range(w * h))
    print('# %d pixels differ (%.2f%%)' % (n, 100.0 * n / (w * h)))
    sys.exit(not (0 < n < 0.02 * w * h))
elif cmd == 'white':                    # IMAGE: pure white
    print('# %d pixels not white (darkest %d)' % (len(marked), min(g)))
    sys.exit(bool(marked))
PY

# ---- 1. the default: on, tiled, 0.15 ---------------------------------------
if session tile; then
	ok "a session with the default policy starts"
	page_loaded || diag "the browser did not fetch the page"
	check "client snapshot of the painted page" page_snapshot "$TMP/tile.ppm"
	check "the picture carries the tiled watermark, no darker than opacity 0.15" \
		python3 "$TMP/wm.py" tile "$TMP/tile.ppm" 0.15
	check "session_start names the watermark (text, opacity, layout)" python3 - "$TMP/tile.log" <<'PY'
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if '"session_start"' in l][0]
print('# watermark: %s' % json.dumps(s.get('watermark')))
sys.exit(s.get('watermark') != {'text': '%r %s %t', 'opacity': 0.15, 'layout': 'tile'})
PY
	# The minute turns: the worker grabs again only the blocks where the
	# digits changed, and blends them once (none darker than 217).
	sleep $((62 - $(date -u +%-S)))
	check "client snapshot after the minute turned" snapshot "$TMP/tile-2.ppm"
	t_snap=$(date +%s.%N)
	check "after the redraw: the same watermark statistics, nothing blended twice" \
		python3 "$TMP/wm.py" tile "$TMP/tile-2.ppm" 0.15
	check "... and the picture changed where the minute is written" \
		python3 "$TMP/wm.py" changed "$TMP/tile.ppm" "$TMP/tile-2.ppm"
	sleep 1
	end_session
	REC=$(ls "$TMP"/rec-tile/*.cdsrec 2>/dev/null | head -1)
	"$CDSGATE" replay "$REC" --info > "$TMP/info.txt" 2>&1
	# The frame at the snapshot's moment (start is whole seconds: at most
	# 1 s later, the page is static).
	t_rec=$(python3 -c 'import sys,datetime; s=datetime.datetime.strptime(sys.argv[1], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc).timestamp(); print("%.2f" % (float(sys.argv[2]) - s))' \
		"$(sed -n 's/^started: //p' "$TMP/info.txt")" "$t_snap")
	"$CDSGATE" replay "$REC" --frame "$t_rec" -o "$TMP/frame.png" 2> "$TMP/frame.err"
	if command -v compare > /dev/null; then
		d=$(compare -metric AE "$TMP/frame.png" "$TMP/tile-2.ppm" null: 2>&1 | awk '{print int($1)}')
		check "the recording's frame at ${t_rec} s equals the live snapshot (${d:-?} px differ)" \
			test "${d:-x}" = 0
	else
		skip "recording frame vs snapshot: ImageMagick compare not installed"
	fi
else
	not_ok "a session with the default policy starts"
fi

# ---- 2. corner, strong, recipient and minute -----------------------------------
# ocr_corner N SCALE [THRESHOLD]: OCR of the bottom-right corner of
# corner-N.ppm, scaled by SCALE % (and cut to black and white at THRESHOLD
# % when given), without spaces.
ocr_corner() {
	convert "$TMP/corner-$1.ppm" -gravity SouthEast -crop 400x60+0+0 \
		-colorspace Gray -scale "$2%" ${3:+-threshold "$3%"} \
		"$TMP/corner-$1-$2${3:+-$3}.png"
	tesseract "$TMP/corner-$1-$2${3:+-$3}.png" - --psm 7 2> /dev/null | tr -d ' \n'
}
# ocr_reads N WORD DATE: some reading of corner N holds WORD, then DATE.
# tesseract misreads single glyphs of this small font now and then ("wm-"
# as "wa-", a digit of the date): each reading is one more chance, and
# every reading is printed.
ocr_reads() {
	for v in "300" "400" "300 60" "400 70"; do
		o=$(ocr_corner "$1" $v)
		diag "OCR at $v: $o"
		case "$o" in *"$2"*"$3"*) return 0;; esac
	done
	return 1
}
if session corner --watermark-layout corner --watermark-opacity 0.6 \
    --watermark-text '%r %t'; then
	ok "a session with --watermark-layout corner starts"
	page_loaded || diag "the browser did not fetch the page"
	m1=$(date -u +%H:%M)
	check "client snapshot of the painted page" page_snapshot "$TMP/corner-1.ppm"
	check "only the bottom-right corner is marked" \
		python3 "$TMP/wm.py" corner "$TMP/corner-1.ppm"
	# The minute turns: the worker (under its filter) redraws the text.
	sleep $((62 - $(date -u +%-S)))
	m2=$(date -u +%H:%M)
	check "client snapshot after the minute turned" snapshot "$TMP/corner-2.ppm"
	check "the minute's digits, and only they, were redrawn ($m1 -> $m2)" \
		python3 "$TMP/wm.py" minute "$TMP/corner-1.ppm" "$TMP/corner-2.ppm" "$m1" "$m2"
	if command -v tesseract > /dev/null && command -v convert > /dev/null; then
		check "OCR reads the recipient and the date" \
			ocr_reads 1 "${RECIPIENT##*-}" "$(date -u +%F)"
	else
		skip "OCR of the watermark: tesseract or ImageMagick not installed"
	fi
	check "the worker lived through the redraw (no watermark_failed, no exit)" \
		python3 -c 'import json,sys; ev=[json.loads(l) for l in open(sys.argv[1])]; sys.exit(any(e["event"] == "watermark_failed" or (e["event"] == "child_exit" and e.get("role") == "worker") for e in ev))' "$TMP/corner.log"
	end_session
else
	not_ok "a session with --watermark-layout corner starts"
fi

# ---- 3. off by policy ---------------------------------------------------------
printf '{"watermark": false}\n' > "$TMP/off.json"
chmod 600 "$TMP/off.json"
if session off --policy "$TMP/off.json"; then
	ok "a session with {\"watermark\": false} starts"
	page_loaded || diag "the browser did not fetch the page"
	check "client snapshot of the painted page" page_snapshot "$TMP/off.ppm"
	check "without the watermark the page is pure white" \
		python3 "$TMP/wm.py" white "$TMP/off.ppm"
	check "session_start says watermark: false" \
		grep -q '"watermark":false' "$TMP/off.log"
	end_session
else
	not_ok "a session with {\"watermark\": false} starts"
fi

# ---- 4. bad values are refused before anything runs ----------------------------
"$CDSGATED" run-session --backend "http://127.0.0.1:$WPORT/" \
	--listen "127.0.0.1:$(free_port)" --password-file "$TMP/pw" \
	--watermark-opacity 0.9 > "$TMP/bad.out" 2> "$TMP/bad.err"
rc=$?
diag "$(head -1 "$TMP/bad.err")"
check "--watermark-opacity 0.9 refused (exit $rc) with a clear error" sh -c \
	"[ $rc -ne 0 ] && grep -q 'watermark-opacity: 0.9 is out of range' '$TMP/bad.err'"

done_testing
