#!/usr/bin/env bash
# 050-demo-chain: `./dev demo --snapshot` end to end, as a custodian runs
# it — a config file for `cdsgated serve`, the daemon, and only the
# `cdsgate` CLI over its API: recipient, import of the synthetic dataset
# through the de-identification gate, mount into the embedded analytics
# app, a session the daemon starts.  The picture a real VNC client
# (vncsnapshot) took shows the de-identified table (pixels and OCR);
# noVNC's page and the session's websocket answer; the session is listed,
# revoked, and its VNC port closes within 2 s; the audit log verifies.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root (the daemon and the gateway session)"
for c in vncsnapshot convert tesseract python3 curl setpriv; do
	command -v $c >/dev/null || skip_all "$c not installed"
done
[ -x "$top_builddir/cdsgate-analytics" ] || skip_all "cdsgate-analytics not built"
[ -d "$top_builddir/analytics/static" ] || skip_all "the analytics front end is not built (npm)"

BUILD=$top_builddir "$top_srcdir/demo/run.sh" --records 3000 \
	--snapshot "$TMP/demo.png" > "$TMP/demo.out" 2> "$TMP/demo.err"; rc=$?
grep -E 'verdict|noVNC|closed' "$TMP/demo.err" | while read -r l; do diag "$l"; done
check "the demo chain runs (exit $rc)" test "$rc" -eq 0
check "it started cdsgated serve on a config file, then used only the cdsgate CLI" \
	sh -c 'grep -q "starting cdsgated serve" "$0" && grep -q "cdsgate session create" "$0"' "$TMP/demo.err"
check "the import passed the gate" grep -q 'verdict: passed' "$TMP/demo.err"
check "the daemon's session was listed as running" \
	grep -Eq '^s-[A-Za-z0-9_-]+ +demo-researcher +[0-9]+ running' "$TMP/demo.err"
MS=$(sed -n 's/.*VNC port closed \([0-9]*\) ms after the revoke.*/\1/p' "$TMP/demo.err")
check "revoked: its VNC port closed within 2 s (${MS:-?} ms)" sh -c "[ -n '$MS' ] && [ '$MS' -le 2000 ]"
if [ -f /usr/share/novnc/vnc.html ]; then
	check "noVNC's page is served and the session's websocket opens with the token" \
		grep -q 'noVNC: page 200; websocket with the token from http://127.0.0.1:[0-9]*: HTTP/1.1 101' "$TMP/demo.err"
else
	skip "noVNC: the Debian novnc package is not installed"
fi
check "the audit log of the run verifies" grep -q 'audit.log: intact' "$TMP/demo.err"

# The picture: the app's dark title bar, a white table with dark text.
check "the snapshot is the analytics app's table (pixels)" python3 - "$TMP/demo.png" <<'PY'
import re, subprocess, sys
d = subprocess.run(["convert", sys.argv[1], "ppm:-"], capture_output=True).stdout
m = re.match(rb'P6\s+(\d+)\s+(\d+)\s+255\s', d)
w, h, px = int(m.group(1)), int(m.group(2)), d[m.end():]
def frac(y0, y1, test):
    n = good = 0
    for y in range(y0, y1, 3):
        for x in range(0, w, 3):
            i = 3 * (y * w + x); n += 1
            good += test(px[i], px[i + 1], px[i + 2])
    return good / n
bar = frac(2, 30, lambda r, g, b: abs(r - 31) < 30 and abs(g - 59) < 30 and abs(b - 87) < 30)
light = frac(100, h - 10, lambda r, g, b: min(r, g, b) > 220)
ink = frac(100, h - 10, lambda r, g, b: max(r, g, b) < 140)
print("# title bar %.2f, light %.2f, text %.3f" % (bar, light, ink))
sys.exit(0 if bar > 0.4 and light > 0.7 and 0.01 < ink < 0.25 else 1)
PY
# The session's watermark (on by default, opacity 0.15: white becomes 217)
# is lifted to white before OCR, which otherwise reads it into the text
# ("lengthzof_stay"); the app's dark text is far below 80%.
convert "$TMP/demo.png" -white-threshold 80% "$TMP/ocr.png"
tesseract "$TMP/ocr.png" - 2> /dev/null | tr -s ' \n' ' ' > "$TMP/ocr.txt"
diag "OCR: $(head -c 300 "$TMP/ocr.txt")"
# (OCR reads the dark title bar poorly; the toolbar and the header row well.)
check "the snapshot shows the analytics app on the mounted dataset" \
	sh -c 'grep -q "Cross-tab" "$0" && grep -q "patients (3000 records)" "$0"' "$TMP/ocr.txt"
check "... with the de-identified table's columns" \
	sh -c 'grep -qi "length_of_stay" "$0" && grep -qi "diagnosis" "$0"' "$TMP/ocr.txt"
check "... and no identifying column" sh -c '! grep -qi "patient_id" "$0"' "$TMP/ocr.txt"
check "nothing of the demo is left running" \
	sh -c '! pgrep -f "[c]dsgate-demo\." >/dev/null'

done_testing
