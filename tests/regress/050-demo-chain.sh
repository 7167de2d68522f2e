#!/usr/bin/env bash
# 050-demo-chain: `./dev demo --snapshot` end to end — the synthetic
# dataset through the de-identification gate, mounted into the embedded
# analytics app, shown in a real gateway session — and the picture a real
# VNC client (vncsnapshot) took shows the de-identified table (OCR).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root (the gateway session)"
for c in vncsnapshot convert tesseract python3; do
	command -v $c >/dev/null || skip_all "$c not installed"
done
[ -x "$top_builddir/cdsgate-analytics" ] || skip_all "cdsgate-analytics not built"
[ -d "$top_builddir/analytics/static" ] || skip_all "the analytics front end is not built (npm)"

BUILD=$top_builddir "$top_srcdir/demo/run.sh" --records 3000 \
	--snapshot "$TMP/demo.png" > "$TMP/demo.out" 2> "$TMP/demo.err"; rc=$?
check "the demo chain runs (exit $rc)" test "$rc" -eq 0
check "the import passed the gate" grep -q 'verdict: passed' "$TMP/demo.err"
check "the audit log of the run verifies" grep -q 'audit.log: intact' "$TMP/demo.err"
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
	sh -c 'grep -q "length_of_stay" "$0" && grep -q "diagnosis" "$0"' "$TMP/ocr.txt"
check "... and no identifying column" sh -c '! grep -qi "patient_id" "$0"' "$TMP/ocr.txt"
check "nothing of the demo is left running" \
	sh -c '! pgrep -f "cdsgate-demo\." >/dev/null'

done_testing
