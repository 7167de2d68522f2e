#!/usr/bin/env bash
# 075-html-report: the risk report a custodian reads.  `deid anonymize
# --report-html` on the synthetic patients (a hostile column name and a
# hostile file name included), rendered by real headless Chromium: the
# verdict found in the page as the CLI printed it, the pictures there as
# inline SVG, the hostile names shown as text and never as markup, and no
# request leaving the page (Chromium's own network log, checked against
# a canary page that does make one).  A failed gate's page names the
# failing criterion with its figure and bound.  Then through the daemon:
# `dataset import` prints the same explanation, `dataset show --html`
# writes the stored report's page, and a mount gives the researcher the
# verdict summary in meta.json.
. "$(dirname "$0")/lib.sh"

[ -x "$CDSGATE" ] || skip_all "cdsgate not built at $CDSGATE"
command -v python3 >/dev/null || skip_all "python3 not installed"
CHROMIUM=${CHROMIUM:-/usr/lib/chromium/chromium}
BROWSER_USER=cdsgate-browser

# A column name and a file name that would be markup if not escaped.
EVIL='<script>alert(1)</script>"&'"'"
S=$TMP/sample
"$CDSGATE" sample generate --out "$S" --records 3000 --seed 5 >/dev/null
python3 - "$S" "$EVIL" <<'PY'
import csv, sys
d, evil = sys.argv[1], sys.argv[2]
rows = list(csv.reader(open(d + "/patients.csv", newline="")))
rows[0] = [evil if c == "race" else c for c in rows[0]]
with open(d + "/evil <b>&.csv", "w", newline="") as f:
    csv.writer(f).writerows(rows)
PY
DATA="$S/evil <b>&.csv"
QI="age,sex,zip,$EVIL,admission_date"
CLS="--identifying patient_id,name --sensitive diagnosis --insensitive length_of_stay"
HIER=(--hierarchy "age=$S/hierarchy_age.csv" --hierarchy "sex=$S/hierarchy_sex.csv"
	--hierarchy "zip=$S/hierarchy_zip.csv" --hierarchy "$EVIL=$S/hierarchy_race.csv"
	--hierarchy "admission_date=$S/hierarchy_admission_date.csv")

rc=0
"$CDSGATE" deid anonymize --data "$DATA" "${HIER[@]}" --qi "$QI" $CLS \
	--k 5 --pu-threshold 0.01 --population 4.031e6 --residual 4.031e6=0.25 \
	--output "$TMP/out.csv" --report "$TMP/r.json" --report-html "$TMP/r.html" \
	> "$TMP/r.txt" 2> "$TMP/r.err" || rc=$?
check "anonymize passes and writes the HTML report (exit $rc: $(head -c 200 "$TMP/r.err"))" \
	test "$rc" -eq 0 -a -s "$TMP/r.html"
HEAD=$(json "$TMP/r.json" 'j["explanation"][0]')
check "the text output prints the explanation's headline: $HEAD" grep -qF "  $HEAD" "$TMP/r.txt"
check "the text names each QI's level in its hierarchy's labels" \
	grep -qE '^  age: (kept as is|level [0-9]+ of [0-9]+, [0-9]+ values → [0-9]+, e\.g\. ")' "$TMP/r.txt"
check "the JSON carries what the page shows (class sizes, generalization, explanation, summary)" \
	python3 - "$TMP/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for side in ("before", "after"):
    b = r["risk"][side]["class_sizes"]
    assert [x["min"] for x in b] == [1, 2, 5, 10] and b[-1]["max"] is None, b
    assert sum(x["records"] for x in b) == r["risk"][side]["records"], b
    assert abs(sum(x["share"] for x in b) - 1) < 1e-9 or r["risk"][side]["records"] == 0
g = r["generalization"]
assert [x["attribute"] for x in g] == list(r["transformation"]), g
for x in g:
    assert x["level"] == r["transformation"][x["attribute"]]
    assert 0 <= x["loss"] <= 1 and len(x["levels"]) >= 2, x
assert r["summary"]["verdict"] == "passed" and r["summary"]["headline"] == r["explanation"][0]
PY
check "the file holds no external reference (http:, https:, src=, href=, url()" \
	sh -c '! grep -qE "https?:|src=|href=|url\(" "$0"' "$TMP/r.html"
check "the hostile column name is escaped in the file" \
	sh -c 'grep -qF "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&amp;&#39;" "$0" && ! grep -q "<script" "$0"' \
	"$TMP/r.html"

# A failing gate: its page says which criterion failed, figure and bound.
rc=0
"$CDSGATE" deid anonymize --data "$S/patients.csv" --hierarchies "$S" \
	--qi age,sex,zip,race,admission_date $CLS --pu-threshold 0.5 --population 4.031e6 \
	--residual 4.031e6=0.01 --output "$TMP/f.csv" --report "$TMP/f.json" \
	--report-html "$TMP/f.html" > "$TMP/f.txt" 2>&1 || rc=$?
check "a failing gate: exit 3, the page written, no table" \
	test "$rc" -eq 3 -a -s "$TMP/f.html" -a ! -e "$TMP/f.csv"
check "  the text says which criterion failed with figure and bound" \
	grep -qE '^  Failed, the table must not be released: PU/SU = [0-9.]+ exceeds the bound 0.01 at N = 4.0 million' "$TMP/f.txt"

# The game ran: its section is there.
"$CDSGATE" deid anonymize --data "$S/patients.csv" --hierarchies "$S" \
	--qi age,sex,zip,race,admission_date $CLS --game no-attack \
	--output "$TMP/g.csv" --report "$TMP/g.json" --report-html "$TMP/g.html" > "$TMP/g.txt" 2>&1
check "with the game: its section in the page, its criterion with Gain/Cost in the text" \
	sh -c 'grep -q "<section id=\"game\"><h2>The game-theoretic model (no-attack)" "$0" &&
		grep -q "no released class is worth attacking (the smallest has [0-9]* records, more than Gain/Cost = 75)" "$1"' \
	"$TMP/g.html" "$TMP/g.txt"
check "  and without it no game section" sh -c '! grep -q "id=\"game\"" "$0"' "$TMP/r.html"

# ---- the pages in real headless Chromium -----------------------------------
# chrome ARGS...: Chromium headless on our files only: no proxy reachable,
# no name resolves, as $BROWSER_USER with its own sandbox when root.
chrome() {
	local prof=$TMP/prof.$RANDOM
	mkdir "$prof"
	if [ "$(id -u)" -eq 0 ]; then
		chown "$BROWSER_USER" "$prof"
		set -- setpriv --reuid="$BROWSER_USER" --regid="$(id -g "$BROWSER_USER")" \
			--clear-groups "$CHROMIUM" "$@"
	else
		set -- "$CHROMIUM" "$@"
	fi
	env -i HOME="$prof" PATH=/usr/bin:/bin timeout 60 "$@" --user-data-dir="$prof" \
		--headless=new --disable-gpu --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --proxy-server=127.0.0.1:9 \
		--host-resolver-rules='MAP * ~NOTFOUND' 2>> "$TMP/chrome.err"
}
# requests NETLOG: every URL a file: page asked for (its requests carry the
# page's site in their network isolation key; Chromium's own background
# requests, which no flag quite silences, carry none).
requests() {
	python3 - "$1" <<'PY'
import json, sys
try:
    text = open(sys.argv[1]).read()
except OSError as e:                  # no log: not a pass
    print("no network log: %s" % e)
    sys.exit(1)
try:
    log = json.loads(text)
except ValueError:                    # cut short: close the event list
    log = json.loads(text.rstrip().rstrip(",") + "]}")
start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
urls = sorted({e["params"]["url"] for e in log["events"]
               if e["type"] == start and "url" in e.get("params", {})
               and e["params"].get("network_isolation_key", "").startswith("file:")})
print("\n".join(u for u in urls if not u.startswith("file:")))
PY
}
if [ ! -x "$CHROMIUM" ]; then
	skip "Chromium not installed ($CHROMIUM): the page is not rendered"
elif [ "$(id -u)" -eq 0 ] && ! id "$BROWSER_USER" >/dev/null 2>&1; then
	skip "Chromium runs as $BROWSER_USER, which does not exist (./dev creates it)"
else
	chmod 0755 "$TMP"
	chmod 0644 "$TMP"/*.html
	O=$TMP/chrome-out		# what Chromium writes: the logs, the shot
	mkdir "$O"
	[ "$(id -u)" -ne 0 ] || chown "$BROWSER_USER" "$O"
	printf '<!DOCTYPE html><p>canary</p><img src="http://canary.invalid/x.png">\n' > "$TMP/canary.html"
	chmod 0644 "$TMP/canary.html"
	chrome --log-net-log="$O/canary.netlog" --dump-dom "file://$TMP/canary.html" > /dev/null
	net=$(requests "$O/canary.netlog"); netrc=$?
	check "the network check sees a request when a page makes one (canary: $(echo "$net" | head -1))" \
		sh -c '[ "$0" -eq 0 ] && echo "$1" | grep -q canary.invalid' "$netrc" "$net"
	chrome --log-net-log="$O/r.netlog" --dump-dom "file://$TMP/r.html" > "$TMP/r.dom"
	check "Chromium renders the report ($(wc -c < "$TMP/r.dom") bytes of DOM)" test -s "$TMP/r.dom"
	net=$(requests "$O/r.netlog"); netrc=$?
	check "  no request left the page (${net:-none})" test "$netrc" -eq 0 -a -z "$net"
	check "  the verdict is in the page as the CLI printed it" \
		grep -qF "$(python3 -c 'import html,sys; print(html.escape(sys.argv[1], quote=False))' "$HEAD")" "$TMP/r.dom"
	check "  pictures as inline SVG ($(grep -o '<svg' "$TMP/r.dom" | wc -l) of them: class sizes, PU/SU, quality, lattice)" \
		test "$(grep -o '<svg' "$TMP/r.dom" | wc -l)" -ge 4
	check "  the hostile column name is text in the page, no script element" \
		sh -c 'grep -qF "&lt;script&gt;alert(1)&lt;/script&gt;" "$0" && ! grep -q "<script" "$0"' "$TMP/r.dom"
	check "  the hostile file name is the page's title, as text" \
		grep -qF 'evil &lt;b&gt;&amp;.csv</title>' "$TMP/r.dom"
	chrome --dump-dom "file://$TMP/f.html" > "$TMP/f.dom"
	check "the failed gate's page names the criterion, figure and bound" \
		grep -qE 'Failed, the table must not be released: PU/SU = [0-9.]+ exceeds the bound 0.01 at N = 4.0 million' "$TMP/f.dom"
	chrome --screenshot="$O/r.png" --window-size=1000,2400 "file://$TMP/r.html" > /dev/null
	check "a screenshot of the report ($(stat -c %s "$O/r.png" 2>/dev/null) bytes)" \
		test "$(stat -c %s "$O/r.png" 2>/dev/null || echo 0)" -gt 20000
	if command -v tesseract >/dev/null; then
		tesseract "$O/r.png" "$TMP/ocr" >/dev/null 2>&1
		check "  OCR of the screenshot reads the verdict and a section title" \
			sh -c 'grep -qi "Verdict: passed" "$0" && grep -qi "Risk before and after" "$0"' "$TMP/ocr.txt"
	else
		skip "tesseract not installed: the screenshot is not read back"
	fi
	[ -n "${KEEP_REPORT_PNG:-}" ] && cp "$O/r.png" "$KEEP_REPORT_PNG"
fi

# ---- through the daemon: import, show --html, the researcher's summary ------
CDSGATED=$top_builddir/cdsgated
if [ ! -x "$CDSGATED" ] || [ "$(id -u)" -ne 0 ] || ! command -v curl >/dev/null ||
    ! getent passwd cdsgate-api >/dev/null || ! getent passwd cdsgate-audit >/dev/null ||
    ! getent passwd cdsgate-analytics >/dev/null; then
	skip "the daemon part needs root, cdsgated and the cdsgate-api/-audit/-analytics users"
	done_testing
	exit
fi
D=$TMP/gw
chmod 0711 "$TMP"
mkdir -p "$D/state" "$D/audit" "$D/mnt" "$D/in"
chown cdsgate-api: "$D/state"
chown cdsgate-api:cdsgate-analytics "$D/mnt" && chmod 0750 "$D/mnt"
"$CDSGATE" audit keygen --private "$D/audit/key.pem" --public "$D/audit.pub"
chown -R cdsgate-audit: "$D/audit" && chmod 0700 "$D/audit"
export CDSGATE_SOCKET=$D/api.sock
check "the daemon starts" api_start
cp "$S"/patients.csv "$S"/hierarchy_*.csv "$D/in/" && chmod -R go-rwx "$D/in"
IMP=(--qi age,sex,zip,race,admission_date $CLS --hierarchies "$D/in")
rc=0
"$CDSGATE" dataset import "$D/in/patients.csv" --name patients "${IMP[@]}" --k 5 \
	--suppression-limit 0.1 > "$D/imp.txt" 2>&1 || rc=$?
check "import passes and prints the explanation (exit $rc)" \
	sh -c 'grep -q "^gate: passed" "$0" && grep -q "^  Passed: the released table meets every criterion" "$0" && grep -qE "^  age: " "$0"' \
	"$D/imp.txt"
rc=0
"$CDSGATE" dataset import "$D/in/patients.csv" --name tight "${IMP[@]}" --pu-threshold 0.5 \
	--population 4.031e6 --residual 4.031e6=0.01 > "$D/bad.txt" 2>&1 || rc=$?
check "a failing import says which criterion failed, figure and bound (exit $rc)" \
	sh -c '[ "$1" -eq 3 ] && grep -qE "^  Failed, the table must not be released: PU/SU = [0-9.]+ exceeds the bound 0.01" "$0"' \
	"$D/bad.txt" "$rc"
check "  said once: the dataset's reason is that line, not printed again" \
	sh -c '[ "$(grep -cE "Failed, the table must not be released: PU/SU = [0-9.]+ exceeds the bound 0.01" "$0")" -eq 1 ] && ! grep -q "^reason:" "$0"' "$D/bad.txt"
check "  and it is the stored reason, which dataset list shows" \
	sh -c '"$0" dataset list --failed | grep -qE " tight +\(Failed, the table must not be released: PU/SU = [0-9.]+ exceeds the bound 0.01"' "$CDSGATE"
rc=0
"$CDSGATE" dataset show 1 --html "$D/show.html" > "$D/show.txt" 2>&1 || rc=$?
check "dataset show --html writes the stored report's page (exit $rc)" \
	sh -c 'grep -q "Verdict: passed" "$0" && grep -q "<svg" "$0" && grep -qF "dataset 1: patients" "$0"' "$D/show.html"
check "  and prints the same explanation" grep -q "^  Passed: the released table meets every criterion" "$D/show.txt"
rc=0
"$CDSGATE" dataset show 999 --html "$D/none.html" > /dev/null 2>&1 || rc=$?
check "dataset show --html of no dataset: an error, no file (exit $rc)" test "$rc" -ne 0 -a ! -e "$D/none.html"
"$CDSGATE" dataset mount 1 > /dev/null 2>&1
check "the mount's meta.json carries the verdict summary for the researcher" \
	python3 - "$D/mnt/1/meta.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))["gate"]
assert g["verdict"] == "passed" and g["headline"].startswith("Passed: "), g
assert len(g["generalization"]) == 5 and g["records"] == 3000, g
assert 0 <= g["suppressed_share"] <= 0.1 and g["released_records"] + g["suppressed_records"] == 3000, g
PY
done_testing
