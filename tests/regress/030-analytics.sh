#!/usr/bin/env bash
# 030-analytics: cdsgate-analytics, the embedded analytics backend.
# Starts the real daemon on a free loopback port with a temporary mount dir
# holding a generated, de-identified dataset (cdsgate sample generate +
# cdsgate deid anonymize, 30,000 records) and a copy of the assembled
# static dir, then:
#   1. every route: status, Content-Type, security headers; HEAD; 404/405;
#      `..`, %2e%2e, hidden names and symlinks refused; body limits (413);
#      oversized headers refused; bad event JSON 400
#   2. the mount-dir contract: a half-written `.tmp` dir, a dir without
#      meta.json, a bad meta.json and a symlinked dataset are not listed
#      nor served; a dataset renamed into place appears, a removed one goes
#   3. confinement (as root): its own user, NoNewPrivs, seccomp filter,
#      own mount namespace, chrooted into the read-only static dir; a
#      forbidden syscall (test hook) kills it with SIGSYS
#   4. real headless Chromium (as cdsgate-browser, its own sandbox on) at
#      1280x800 over the DevTools pipe (tests/analytics/cdp.py): the
#      perspective viewer renders the table (dataset column names in the
#      header, rows in the body), counts, a cross-tab, a histogram, a
#      filter and a sort;
#      every request goes to the backend; no console errors; a dataset
#      unmounted while shown is dropped from the page; OCR of a
#      column name in the screenshot when tesseract is installed
#   5. SIGTERM ends it with exit 0
#   6. systemd/cdsgate-analytics.service: verify is silent, every relaxed
#      directive explained, exposure no worse than measured; the unit's
#      capability bounding set + no_new_privs suffice to confine and serve
# Parts that cannot run here SKIP with the reason.
. "$(dirname "$0")/lib.sh"

ANALYTICS=${ANALYTICS:-$top_builddir/cdsgate-analytics}
STATIC_SRC=${STATIC_SRC:-$top_builddir/analytics/static}
CDP=$top_srcdir/tests/analytics/cdp.py
CHROMIUM=${CHROMIUM:-/usr/lib/chromium/chromium}
BROWSER_USER=${BROWSER_USER:-cdsgate-browser}
RECORDS=30000

[ -x "$ANALYTICS" ] || skip_all "cdsgate-analytics not built at $ANALYTICS"
[ -x "$CDSGATE" ] || skip_all "cdsgate not built at $CDSGATE"
command -v curl >/dev/null || skip_all "curl not installed"
[ -f "$STATIC_SRC/perspective/cdn/perspective.js" ] ||
	skip_all "no perspective in $STATIC_SRC (npm ci in analytics/web: ./dev build)"

AN_PID=
ARTIFACTS=$top_builddir/tests/regress/030-analytics.artifacts
rm -rf "$ARTIFACTS"
cleanup() {
	if [ "$tap_failed" -gt 0 ] && mkdir -p "$ARTIFACTS" 2>/dev/null; then
		cp "$TMP"/*.png "$TMP"/*.json "$TMP"/*.err "$TMP"/*.out "$ARTIFACTS"/ 2>/dev/null
		echo "# failed: screenshots and logs kept in $ARTIFACTS"
	fi
	[ -n "$AN_PID" ] && stop "$AN_PID"
	rm -rf "$TMP"
}
trap cleanup EXIT
chmod 755 "$TMP"

# ---- the data: generated, de-identified, mounted as the contract says ----
MNT=$TMP/mnt
mkdir -p "$MNT" "$TMP/gen"
"$CDSGATE" sample generate --out "$TMP/gen" --records "$RECORDS" --seed 7 >/dev/null 2>&1 &&
"$CDSGATE" deid anonymize --data "$TMP/gen/patients.csv" --qi age,sex,zip \
	--hierarchies "$TMP/gen" --identifying patient_id,name \
	--insensitive race,admission_date,diagnosis,length_of_stay --k 5 \
	--suppression-limit 0.05 --output "$TMP/deid.csv" --report "$TMP/report.json" \
	>/dev/null 2>&1 || skip_all "cdsgate could not generate and de-identify the sample"

# mount NAME CSV [DIR]: write the dataset the way the custodian does
# (complete temp dir, then rename into place).
mount_ds() {
	local d=$MNT/.tmp-$1
	mkdir -p "$d" && cp "$2" "$d/data.csv" &&
	python3 - "$2" "$1" "$d/meta.json" ${3:+"$3"} <<'PY'
import csv, json, sys
with open(sys.argv[1]) as f:
    r = csv.reader(f); cols = next(r); n = sum(1 for _ in r)
meta = {"name": sys.argv[2], "version": 1, "records": n, "columns": cols,
        "mounted_at": "2026-11-25T10:00:00Z"}
if len(sys.argv) > 4:                   # the gate's summary, as the daemon adds it
    meta["gate"] = json.load(open(sys.argv[4]))["summary"]
json.dump(meta, open(sys.argv[3], "w"))
PY
	chmod -R a+rX "$d" && mv "$d" "$MNT/$1"
}
mount_ds patients "$TMP/deid.csv" "$TMP/report.json"
# what must never be listed or served
mkdir -p "$MNT/.tmp-halfway" "$MNT/nometa" "$MNT/badmeta" "$TMP/outside"
cp "$TMP/deid.csv" "$MNT/.tmp-halfway/data.csv"
cp "$TMP/deid.csv" "$MNT/nometa/data.csv"
cp "$TMP/deid.csv" "$MNT/badmeta/data.csv"
echo '{"name": "badmeta", "columns": "age"}' > "$MNT/badmeta/meta.json"
cp -r "$MNT/patients/." "$TMP/outside/"
ln -s "$TMP/outside" "$MNT/evil"
chmod -R a+rX "$MNT"

# the static dir (a copy: the test plants a symlink and a hidden file)
ST=$TMP/static
cp -r "$STATIC_SRC" "$ST"
ln -s /etc/passwd "$ST/passwd-link"
echo secret > "$ST/.hidden"
chmod -R a+rX "$ST"

# ---- start ------------------------------------------------------------------
start() {
	local port
	port=$(free_port)
	"$ANALYTICS" --listen "127.0.0.1:$port" --mount-dir "$MNT" \
		--static-dir "$ST" --unscoped "$@" > "$TMP/an.out" 2> "$TMP/an.err" &
	AN_PID=$!
	wait_line "$TMP/an.out" '^ready 127\.0\.0\.1:[0-9]+$' 10 "$AN_PID"
}
check "bad options: no --mount-dir is a usage error (exit 2)" \
	sh -c '"$1" --listen 127.0.0.1:0 --static-dir "$2" >/dev/null 2>&1; [ $? -eq 2 ]' _ "$ANALYTICS" "$ST"
check "neither --grant-key nor --unscoped is a usage error (exit 2)" \
	sh -c '"$1" --listen 127.0.0.1:0 --static-dir "$2" --mount-dir "$3" >/dev/null 2>&1; [ $? -eq 2 ]' _ "$ANALYTICS" "$ST" "$MNT"
check "both --grant-key and --unscoped is a usage error (exit 2)" \
	sh -c '"$1" --listen 127.0.0.1:0 --static-dir "$2" --mount-dir "$3" --unscoped --grant-key /dev/null >/dev/null 2>&1; [ $? -eq 2 ]' _ "$ANALYTICS" "$ST" "$MNT"
check "a missing mount dir: exit 1 with a message naming it" \
	sh -c '"$1" --listen 127.0.0.1:0 --static-dir "$2" --mount-dir /nonexistent-mnt --unscoped 2>&1 >/dev/null |
	grep -q nonexistent-mnt' _ "$ANALYTICS" "$ST"
start || { cat "$TMP/an.err" >&2; skip_all "cdsgate-analytics did not start"; }
ok "ready $(sed -n 's/^ready //p' "$TMP/an.out")"
PORT=$(sed -n 's/^ready .*:\([0-9]*\)$/\1/p' "$TMP/an.out")
URL=http://127.0.0.1:$PORT

# req NAME CURL-ARGS...: status in $TMP/NAME.code, headers .hdr, body .body
req() {
	local n=$1; shift
	curl -s --path-as-is -m 10 -D "$TMP/$n.hdr" -o "$TMP/$n.body" \
		-w '%{http_code}' "$@" > "$TMP/$n.code" 2>/dev/null || echo 000 > "$TMP/$n.code"
}
code() { cat "$TMP/$1.code"; }
hdr() { sed -n "s/^$2: *//Ip" "$TMP/$1.hdr" | tr -d '\r' | head -1; }
is() { [ "$(code "$1")" = "$2" ]; }

# ---- 1. routes --------------------------------------------------------------
req index "$URL/"
check "GET / is 200 text/html with the viewer" \
	sh -c '[ "$1" = 200 ] && echo "$2" | grep -q "^text/html" && grep -q "<perspective-viewer" "$3"' _ \
	"$(code index)" "$(hdr index Content-Type)" "$TMP/index.body"
CSP=$(hdr index Content-Security-Policy)
check "CSP: default-src 'self', wasm-unsafe-eval, no external origin" \
	sh -c 'echo "$1" | grep -q "default-src '"'self'"'" && echo "$1" | grep -q wasm-unsafe-eval &&
	! echo "$1" | grep -Eq "https?:|\*"' _ "$CSP"
check "X-Frame-Options DENY, nosniff, no-store" \
	sh -c '[ "$1" = DENY ] && [ "$2" = nosniff ] && [ "$3" = no-store ]' _ \
	"$(hdr index X-Frame-Options)" "$(hdr index X-Content-Type-Options)" "$(hdr index Cache-Control)"
check "HEAD / is 200 with no body" [ "$(curl -s -I -m 10 -o /dev/null -w '%{http_code} %{size_download}' "$URL/")" = "200 0" ]
req appjs "$URL/static/app.js"
check "GET /static/app.js: 200 text/javascript" \
	sh -c '[ "$1" = 200 ] && echo "$2" | grep -q "^text/javascript"' _ "$(code appjs)" "$(hdr appjs Content-Type)"
req wasm "$URL/static/perspective/wasm/perspective-server.wasm"
check "the engine: application/wasm, byte-identical" \
	sh -c '[ "$1" = 200 ] && [ "$2" = application/wasm ] && cmp -s "$3" "$4"' _ "$(code wasm)" \
	"$(hdr wasm Content-Type)" "$TMP/wasm.body" "$ST/perspective/wasm/perspective-server.wasm"
req css "$URL/static/perspective-viewer/css/themes.css"
check "a theme: text/css" sh -c '[ "$1" = 200 ] && echo "$2" | grep -q "^text/css"' _ "$(code css)" "$(hdr css Content-Type)"
for p in /static/../../../../etc/passwd /static/%2e%2e/%2e%2e/%2e%2e/etc/passwd \
    /static/perspective/../../../etc/passwd /static/passwd-link /static/.hidden \
    /static//etc/passwd /static/perspective; do
	req trav "$URL$p"
	check "refused: $p ($(code trav))" sh -c '[ "$1" = 403 ] || [ "$1" = 404 ]; r=$?;
		! grep -q -e "root:" -e secret "$2" && [ $r -eq 0 ]' _ "$(code trav)" "$TMP/trav.body"
done
req nope "$URL/nope"
check "an unknown path: 404" is nope 404
req nope2 "$URL/api/datasets/x"
check "no sub-paths of /api/datasets: 404" is nope2 404
req del -X DELETE "$URL/"
check "DELETE /: 405 with Allow: GET, HEAD" sh -c '[ "$1" = 405 ] && [ "$2" = "GET, HEAD" ]' _ "$(code del)" "$(hdr del Allow)"
req put -X PUT -d x "$URL/data/patients"
check "PUT /data/patients: 405" is put 405
req postget -X POST -H 'Content-Type: application/json' -d '{}' "$URL/api/datasets"
check "POST /api/datasets: 405" is postget 405
req ev -H 'Content-Type: application/json' -d '{"event":"rendered","dataset":"patients","rows":3,"ms":12}' "$URL/api/event"
check "POST /api/event: 200" is ev 200
req evbad -H 'Content-Type: application/json' -d '{"event":' "$URL/api/event"
check "POST /api/event with bad JSON: 400" is evbad 400
req evtype -H 'Content-Type: application/json' -d '{"event":"x","rows":"many"}' "$URL/api/event"
check "POST /api/event with a wrong type: 400" is evtype 400
python3 -c 'import json; b = json.dumps({"event": "edge", "rows": 1})
print(b + " " * (4096 - len(b)), end="")' > "$TMP/b4096"
{ cat "$TMP/b4096"; printf ' '; } > "$TMP/b4097"
req ev4096 -H 'Content-Type: application/json' --data-binary "@$TMP/b4096" "$URL/api/event"
req ev4097 -H 'Content-Type: application/json' --data-binary "@$TMP/b4097" "$URL/api/event"
check "POST /api/event: 4096 bytes taken (200), 4097 refused (413)" \
	sh -c '[ "$1" = 200 ] && [ "$2" = 413 ]' _ "$(code ev4096)" "$(code ev4097)"
req getbody -X GET --data-binary 'abc' "$URL/api/datasets"
check "GET with a body: 413 (GET takes none)" is getbody 413
req hugehdr -H "X-Big: $(head -c 70000 /dev/zero | tr '\0' b)" "$URL/"
check "a 70 KB header is refused ($(code hugehdr))" sh -c '[ "$1" != 200 ]' _ "$(code hugehdr)"

# ---- 2. the mount-dir contract ----------------------------------------------
req ds "$URL/api/datasets"
check "GET /api/datasets: 200 application/json" \
	sh -c '[ "$1" = 200 ] && [ "$2" = application/json ]' _ "$(code ds)" "$(hdr ds Content-Type)"
check "listed: exactly patients (not .tmp-halfway, nometa, badmeta, evil)" \
	[ "$(json "$TMP/ds.body" '",".join(d["id"] for d in j["datasets"])')" = patients ]
check "its meta: $RECORDS records, the de-identified columns" \
	[ "$(json "$TMP/ds.body" 'str(j["datasets"][0]["records"]) + " " + ",".join(j["datasets"][0]["columns"])')" = \
	"$RECORDS $(head -1 "$TMP/deid.csv")" ]
req csv "$URL/data/patients"
check "GET /data/patients: text/csv, byte-identical to data.csv" \
	sh -c '[ "$1" = 200 ] && echo "$2" | grep -q "^text/csv" && cmp -s "$3" "$4"' _ \
	"$(code csv)" "$(hdr csv Content-Type)" "$TMP/csv.body" "$MNT/patients/data.csv"
for n in .tmp-halfway nometa badmeta evil ../mnt/patients %2e%2e/outside nope; do
	req dn "$URL/data/$n"
	check "not served: /data/$n ($(code dn))" sh -c '[ "$1" = 403 ] || [ "$1" = 404 ]' _ "$(code dn)"
done
head -200 "$TMP/deid.csv" > "$TMP/small.csv"
mount_ds small "$TMP/small.csv"
req ds2 "$URL/api/datasets"
check "a dataset renamed into place is listed at the next request" \
	[ "$(json "$TMP/ds2.body" '",".join(d["id"] for d in j["datasets"])')" = patients,small ]
rm -rf "$MNT/small"
req ds3 "$URL/api/datasets"
req gone "$URL/data/small"
check "an unmounted dataset is gone (list and /data: $(code gone))" \
	sh -c '[ "$1" = patients ] && [ "$2" = 404 ]' _ \
	"$(json "$TMP/ds3.body" '",".join(d["id"] for d in j["datasets"])')" "$(code gone)"

# ---- 3. confinement ---------------------------------------------------------
if [ "$(id -u)" -eq 0 ] && id cdsgate-analytics >/dev/null 2>&1; then
	st=/proc/$AN_PID/status
	check "runs as cdsgate-analytics (uid $(id -u cdsgate-analytics))" \
		sh -c 'awk "/^Uid:/{print \$2,\$3,\$4,\$5}" "$1" | grep -qx "$2 $2 $2 $2"' _ "$st" "$(id -u cdsgate-analytics)"
	check "NoNewPrivs 1, Seccomp 2 (filter)" \
		sh -c 'grep -q "^NoNewPrivs:[[:space:]]*1" "$1" && grep -q "^Seccomp:[[:space:]]*2" "$1"' _ "$st"
	check "its own mount namespace" [ "$(readlink "/proc/$AN_PID/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ]
	check "chrooted: its / is the static dir (index.html, no etc/)" \
		sh -c '[ -f "/proc/$1/root/index.html" ] && [ ! -e "/proc/$1/root/etc" ]' _ "$AN_PID"
	ro_in_ns() {	# ro_in_ns DIR: is DIR a read-only mount in its namespace?
		nsenter -t "$AN_PID" -m awk -v m="$(cd "$1" && pwd -P)" \
			'$5 == m { print $6 }' /proc/self/mountinfo | grep -q '^ro'
	}
	check "the mount dir and the static dir are read-only in its view" \
		sh -c "$(declare -f ro_in_ns); AN_PID=$AN_PID; ro_in_ns '$MNT' && ro_in_ns '$ST'"
else
	for i in 1 2 3 4 5; do skip "confinement checks need root and user cdsgate-analytics"; done
fi
# (ports are picked before `&`: a background subshell killed while still
# expanding would run the EXIT trap)
VPORT=$(free_port)
CDSGATE_TEST_VIOLATE=socket "$ANALYTICS" --listen "127.0.0.1:$VPORT" --mount-dir "$MNT" \
	--static-dir "$ST" --unscoped > "$TMP/viol.out" 2> "$TMP/viol.err" &
VPID=$!
for _ in $(seq 50); do kill -0 "$VPID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$VPID" 2>/dev/null; then
	stop "$VPID"
	skip "the seccomp test hook is not built (configure --disable-test-hooks)"
else
	wait "$VPID"; rc=$?
	check "socket() after confinement: killed by SIGSYS (status $rc)" [ "$rc" -eq 159 ]
fi

# ---- 4. the app in real headless Chromium -----------------------------------
browser() {
	local prof=$TMP/profile
	rm -rf "$prof" && mkdir "$prof" && chown "$BROWSER_USER" "$prof"
	python3 "$CDP" "$URL/" "$TMP/app.png" 90 "mv '$MNT/patients' '$MNT/.gone-patients'" -- \
		setpriv --reuid="$BROWSER_USER" --regid="$(id -g "$BROWSER_USER")" --clear-groups \
		env -i HOME="$prof" PATH=/usr/bin:/bin "$CHROMIUM" --headless=new --disable-gpu \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --proxy-server=127.0.0.1:9 --proxy-bypass-list='127.0.0.1' \
		--user-data-dir="$prof" --window-size=1280,800 > "$TMP/cdp.json" 2> "$TMP/cdp.err"
}
if [ "$(id -u)" -ne 0 ] || ! id "$BROWSER_USER" >/dev/null 2>&1; then
	skip "the browser part runs Chromium as $BROWSER_USER (needs root and that user)"
elif [ ! -x "$CHROMIUM" ] || ! command -v setpriv >/dev/null; then
	skip "Chromium ($CHROMIUM) or setpriv not installed"
else
	browser
	J=$TMP/cdp.json
	check "the app says the dataset is rendered ($(json "$J" 'j.get("table",{}).get("status")'))" \
		[ "$(json "$J" 'j.get("table",{}).get("state")')" = rendered ]
	check "perspective loaded all $RECORDS records" [ "$(json "$J" 'j["table"]["rows_loaded"]')" = "$RECORDS" ]
	check "the datagrid's header row is the dataset's columns" \
		[ "$(json "$J" '",".join(j["table"]["headers"])')" = "$(head -1 "$TMP/deid.csv")" ]
	check "the datagrid shows rows ($(json "$J" 'j["table"]["body_rows"]'))" \
		[ "$(json "$J" 'int(j["table"]["body_rows"] >= 10)')" = 1 ]
	check "counts by age: one row per age band, a column named count ($(json "$J" 'j["counts"]["body_rows"]'))" \
		[ "$(json "$J" 'int(j["counts"]["body_rows"] >= 5 and "count" in j["counts"]["headers"])')" = 1 ]
	check "  the suppressed records' group says it is suppressed ($(json "$J" 'j["counts"]["first_rows"][:2]'))" \
		[ "$(json "$J" 'int(any("* (suppressed)" in r for r in j["counts"]["first_rows"]) and not any("*" in r for r in j["counts"]["first_rows"]))')" = 1 ]
	check "cross-tab age x sex: F and M columns" \
		[ "$(json "$J" 'int("F" in j["crosstab"]["headers"] and "M" in j["crosstab"]["headers"])')" = 1 ]
	check "histogram: a Y bar chart with bars and the age bands on its axis" \
		[ "$(json "$J" 'int(j["histogram"]["plugin"].endswith("YBAR") and j["histogram"]["chart_marks"] >= 5 and "60-69" in j["histogram"]["chart_labels"])')" = 1 ]
	check "  its axes say age and count ($(json "$J" 'j["histogram"]["axis_titles"]'))" \
		[ "$(json "$J" 'int(set(j["histogram"]["axis_titles"]) >= {"age", "count"})')" = 1 ]
	check "About this dataset: the gate's verdict, generalization and suppressed share" \
		[ "$(json "$J" 'int(all(s in j["table"]["about"] for s in ("Gate: passed", "age: level", "Suppressed: ")))')" = 1 ]
	check "filter sex == F, sort by length_of_stay desc: only F, descending" \
		[ "$(json "$J" 'int((lambda r: len(r) >= 5 and all(x[-2] == "F" for x in r) and [int(x[-1]) for x in r] == sorted([int(x[-1]) for x in r], reverse=True))(j["filter_sort"]["first_rows"]))')" = 1 ]
	check "every request went to the backend (or data:/blob: of it)" \
		[ "$(json "$J" 'int(len(j["requests"]) > 5 and all(u.startswith(("'"$URL/"'", "data:", "blob:'"$URL/"'")) for u in j["requests"]))')" = 1 ]
	check "no console errors, no failed loads ($(json "$J" 'j["console_errors"][:2] + j["failed"][:2]'))" \
		[ "$(json "$J" 'len(j["console_errors"]) + len(j["failed"])')" = 0 ]
	check "unmounted while shown: the page drops it ($(json "$J" 'j.get("unmount_ms")') ms): no rows, says so" \
		[ "$(json "$J" 'int(j["unmounted"]["state"] == "unmounted" and j["unmounted"]["body_rows"] == 0)')" = 1 ]
	mv "$MNT/.gone-patients" "$MNT/patients"
	check "the backend logged the render" grep -q "event rendered dataset=patients rows=$RECORDS" "$TMP/an.err"
	diag "time to show $RECORDS rows: $(json "$J" 'j["table"]["app_ms"]') ms in the app (fetch + load + render), $(json "$J" 'j["wall_ms"]') ms from navigation"
	if command -v tesseract >/dev/null; then
		tesseract "$TMP/app.png" "$TMP/ocr" >/dev/null 2>&1
		check "OCR of the screenshot reads the column name 'diagnosis'" grep -qi diagnosis "$TMP/ocr.txt"
	else
		skip "tesseract not installed (apt-get install tesseract-ocr) for the OCR check"
	fi
fi

# ---- 6. the systemd unit -----------------------------------------------------
UNIT=$top_builddir/systemd/cdsgate-analytics.service
EXPOSURE_NOW=2.5	# measured with systemd 252 (Debian 12); must not grow
if ! command -v systemd-analyze >/dev/null; then
	skip "systemd-analyze not installed (Debian package systemd): unit not checked"
elif [ ! -f "$UNIT" ]; then
	not_ok "the generated unit exists ($UNIT; make builds it)"
else
	sed "s|^ExecStart=[^ ]*/cdsgate-analytics |ExecStart=$ANALYTICS |" "$UNIT" \
		> "$TMP/cdsgate-analytics.service"
	check "the unit: no @placeholder@ left" sh -c "! grep -q '@[a-z]*@' '$UNIT'"
	(cd "$TMP" && systemd-analyze verify ./cdsgate-analytics.service) > "$TMP/verify.out" 2>&1
	check "systemd-analyze verify: exit 0, nothing said" \
		sh -c '[ "$1" -eq 0 ] && [ ! -s "$2" ]' _ $? "$TMP/verify.out"
	for d in User= CapabilityBoundingSet RestrictNamespaces= SystemCallFilter PrivateNetwork=no; do
		check "the hardening comment gives a reason for $d" grep -q "^# $d" "$UNIT"
	done
	e=$(cd "$TMP" && systemd-analyze security --offline=true ./cdsgate-analytics.service 2>/dev/null |
		sed -n 's/.*Overall exposure level for cdsgate-analytics.service: \([0-9.]*\).*/\1/p')
	check "exposure ${e:-?} is no worse than the measured $EXPOSURE_NOW" \
		python3 -c "import sys; sys.exit(not ${e:-99} <= $EXPOSURE_NOW)"
fi
# The unit's capabilities and no_new_privs suffice (setpriv stands in for
# systemd here): it confines itself and serves.
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$top_srcdir/systemd/cdsgate-analytics.service.in" |
	tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null || [ -z "$caps" ]; then
	skip "running with the unit's capabilities needs root and setpriv"
else
	SPORT=$(free_port)
	setpriv --bounding-set=-all,"$caps" --inh-caps=-all --no-new-privs \
		"$ANALYTICS" --listen "127.0.0.1:$SPORT" --mount-dir "$MNT" --static-dir "$ST" \
		--unscoped > "$TMP/unit.out" 2> "$TMP/unit.err" &
	UPID=$!
	if wait_line "$TMP/unit.out" '^ready ' 10 "$UPID"; then
		req unitcsv "http://127.0.0.1:$SPORT/data/patients"
		check "with only the unit's capabilities ($caps) + no_new_privs: confined and serving" \
			sh -c '[ "$1" = 200 ] && grep -q "confined: uid $2," "$3"' _ "$(code unitcsv)" \
			"$(id -u cdsgate-analytics)" "$TMP/unit.err"
	else
		not_ok "with only the unit's capabilities ($caps): it did not start ($(tail -1 "$TMP/unit.err"))"
	fi
	stop "$UPID"
fi

# ---- 5. SIGTERM -------------------------------------------------------------
kill -TERM "$AN_PID"
for _ in $(seq 50); do kill -0 "$AN_PID" 2>/dev/null || break; sleep 0.1; done
wait "$AN_PID"; rc=$?
AN_PID=
check "SIGTERM: exit 0 (status $rc)" [ "$rc" -eq 0 ]
done_testing
