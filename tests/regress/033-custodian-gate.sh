#!/usr/bin/env bash
# 033-custodian-gate: the custodian's chain through the real daemon — the
# raw file and hierarchies uploaded into the api's private spool, the
# de-identification gate run by the daemon (the CLI's sandboxed deid
# worker), verdict and report stored and audited, a passing dataset
# mounted into the embedded backend's mount dir atomically, a failing one
# refused with the reason, unmount, and a SIGKILL in the middle of an
# import leaving nothing half-mounted.
. "$(dirname "$0")/lib.sh"

CDSGATED=$top_builddir/cdsgated
[ -x "$CDSGATED" ] || skip_all "cdsgated not built"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (the daemon's users)"
for c in curl sqlite3 setpriv python3; do
	command -v $c >/dev/null || skip_all "$c not installed"
done
for u in cdsgate-api cdsgate-audit cdsgate-analytics; do
	getent passwd $u >/dev/null || skip_all "user $u missing (./dev creates it)"
done

D=$TMP/gw
chmod 0711 "$TMP"
mkdir -p "$D/state" "$D/audit" "$D/mnt" "$D/in"
chown cdsgate-api: "$D/state"
# The mount dir as an operator sets it up: the writer's, group analytics.
chown cdsgate-api:cdsgate-analytics "$D/mnt" && chmod 0750 "$D/mnt"
"$CDSGATE" audit keygen --private "$D/audit/key.pem" --public "$D/audit.pub"
chown -R cdsgate-audit: "$D/audit" && chmod 0700 "$D/audit"
SOCK=$D/api.sock
export CDSGATE_SOCKET=$SOCK

start_api() {
	"$CDSGATED" api --socket "$SOCK" --store "$D/state/store.db" \
		--state-dir "$D/state" --mount-dir "$D/mnt" --cdsgate "$CDSGATE" \
		--audit-log "$D/audit/audit.log" --audit-key "$D/audit/key.pem" \
		> "$D/out" 2> "$D/err" &
	API_PID=$!
	wait_line "$D/out" '^ready ' 10 "$API_PID"
}
trap 'kill $API_PID 2>/dev/null; rm -rf "$TMP"' EXIT

# The custodian's raw data: the synthetic patients (readable by the
# custodian only; the daemon gets it by upload, never by path).
"$CDSGATE" sample generate --out "$D/in" --records 4000 --seed 11 > /dev/null
chmod -R go-rwx "$D/in"
QI=age,sex,zip,race,admission_date

check "the daemon starts" start_api

"$CDSGATE" dataset import "$D/in/patients.csv" --name patients --qi "$QI" \
	--identifying patient_id,name --sensitive diagnosis \
	--insensitive length_of_stay --hierarchies "$D/in" --k 5 \
	--suppression-limit 0.05 --json > "$D/imp.json" 2> "$D/imp.err"; rc=$?
check "import through the gate passes (exit $rc: $(tail -1 "$D/imp.err"))" test "$rc" -eq 0
ID=$(json "$D/imp.json" 'j["id"]')
check "the dataset is stored as passed with its report" \
	test "$(json "$D/imp.json" 'j["state"], j["report"]["gate"]["passed"]')" = "('passed', True)"
check "the job names the uploads by sha256, the raw digest is the file's" \
	test "$(json "$D/imp.json" 'j["raw_sha256"]')" = "$(sha256sum < "$D/in/patients.csv" | cut -d' ' -f1)"
check "the raw upload sits in the api's private spool (0600 cdsgate-api)" \
	test "$(stat -c '%a %U' "$D/state/spool/$(json "$D/imp.json" 'j["raw_sha256"]')")" = "600 cdsgate-api"
check "the spool is not readable by the browser's or anyone else's user" \
	sh -c '! setpriv --reuid=cdsgate-browser --regid=cdsgate-browser --clear-groups ls "$0" 2>/dev/null' "$D/state/spool"
check "nothing is mounted before a mount" test -z "$(ls "$D/mnt")"

"$CDSGATE" dataset mount "$ID" --json > "$D/mnt.json"; rc=$?
check "mount succeeds (exit $rc)" test "$rc" -eq 0
check "the store says mounted, version 1" \
	test "$(json "$D/mnt.json" 'j["state"], j["mount_version"]')" = "('mounted', 1)"
check "the mount dir has data.csv and meta.json, nothing half-written" \
	test "$(ls -A "$D/mnt")" = "$ID" -a -f "$D/mnt/$ID/data.csv" -a -f "$D/mnt/$ID/meta.json"
check "the analytics backend's user can read what was mounted" \
	quiet setpriv --reuid=cdsgate-analytics --regid=cdsgate-analytics --init-groups \
	cat "$D/mnt/$ID/meta.json" "$D/mnt/$ID/data.csv"
check "the mounted data is the gate's output: no identifying column" \
	sh -c '! head -1 "$0" | grep -q "patient_id\|,name,"' "$D/mnt/$ID/data.csv"
check "meta.json has the columns and the record count of the report" python3 - "$D/mnt/$ID/meta.json" "$D/imp.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); d = json.load(open(sys.argv[2]))
assert m["name"] == "patients" and m["version"] == 1, m
assert "age" in m["columns"] and "name" not in m["columns"], m["columns"]
assert m["records"] == d["report"]["records"], (m["records"], d["report"]["records"])
PY

# A dataset that fails the gate: a residual bound nothing can meet.
"$CDSGATE" dataset import "$D/in/patients.csv" --name tight --qi "$QI" \
	--identifying patient_id,name --sensitive diagnosis \
	--insensitive length_of_stay --hierarchies "$D/in" --pu-threshold 0.01 \
	--population 4.031e6 --residual 100=0.0 --suppression-limit 0 \
	--json > "$D/bad.json" 2>/dev/null; rc=$?
check "a dataset that fails the gate: import exits 3" test "$rc" -eq 3
BAD=$(json "$D/bad.json" 'j["id"]')
check "it is stored as failed with its report" \
	test "$(json "$D/bad.json" 'j["state"], j["report"]["gate"]["passed"]')" = "('failed', False)"
"$CDSGATE" dataset mount "$BAD" > /dev/null 2> "$D/badmount.err"; rc=$?
check "mounting it is refused (exit $rc) and the API says why" \
	sh -c "[ $rc -eq 2 ] && grep -q 'failed.*only a dataset that passed the de-identification gate' '$D/badmount.err'"
check "it never reached the mount dir" test "$(ls -A "$D/mnt")" = "$ID"

# The game-theoretic model as the gate's criterion (No-Attack = k >= 76).
"$CDSGATE" dataset import "$D/in/patients.csv" --name game --qi "$QI" \
	--identifying patient_id,name --sensitive diagnosis \
	--insensitive length_of_stay --hierarchies "$D/in" --game no-attack \
	--game-cost 4 --game-gain 300 --json > "$D/game.json" 2>/dev/null; rc=$?
check "a no-attack job passes through the API (exit $rc) with the game's figures" \
	python3 - "$D/game.json" "$rc" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); g = j["report"]["game"]
assert sys.argv[2] == "0" and j["state"] == "passed", j["state"]
assert g["variant"] == "no-attack" and g["attacked_records"] == 0, g
assert g["cost"] == 4 and g["gain"] == 300, g
PY

# The gate is true of what it releases (through the API as on the CLI).
CLS="--identifying patient_id,name --sensitive diagnosis --insensitive length_of_stay"
# Every column classified: a forgotten one is refused, naming it.
"$CDSGATE" dataset import "$D/in/patients.csv" --name unclassified --qi "$QI" \
	--identifying patient_id,name --hierarchies "$D/in" --k 5 \
	> /dev/null 2> "$D/uncl.err"; rc=$?
check "an import leaving a column unclassified is refused (exit $rc: 2, HTTP 422), naming it" \
	sh -c "[ $rc -eq 2 ] && grep -q 'column \"diagnosis\" is not classified.*HTTP 422' '$D/uncl.err'"
UNCL=$(sqlite3 "$D/state/store.db" "select id from datasets where name='unclassified'")
check "  recorded as a failed import with that reason" \
	test "$(sqlite3 "$D/state/store.db" "select state from datasets where id=$UNCL and reason like '%diagnosis%not classified%'")" = failed
"$CDSGATE" dataset mount "$UNCL" > /dev/null 2>&1; rc=$?
check "  and it cannot be mounted (exit $rc)" test "$rc" -ne 0 -a "$(ls -A "$D/mnt")" = "$ID"
# Dates kept as they are (a one-column hierarchy) with k = 5 and no
# suppression: the top of the lattice is no way out any more.
mkdir -p "$D/flat"; cp "$D/in"/hierarchy_*.csv "$D/flat/"
cut -d';' -f1 "$D/in/hierarchy_admission_date.csv" > "$D/flat/hierarchy_admission_date.csv"
"$CDSGATE" dataset import "$D/in/patients.csv" --name flatdates --qi "$QI" $CLS \
	--hierarchies "$D/flat" --k 5 --suppression-limit 0 --json > "$D/flat.json" 2>/dev/null; rc=$?
check "dates kept as they are, k = 5, no suppression: failed (exit $rc) with the reason" \
	python3 - "$D/flat.json" "$rc" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert sys.argv[2] == "3" and j["state"] == "failed", j["state"]
assert "no transformation reaches k = 5" in j["report"]["gate"]["reasons"][0], j["report"]["gate"]
PY
"$CDSGATE" dataset mount "$(json "$D/flat.json" 'j["id"]')" > /dev/null 2>&1; rc=$?
check "  and it cannot be mounted (exit $rc)" test "$rc" -eq 2 -a "$(ls -A "$D/mnt")" = "$ID"
# A passed release changed after the gate verified it is never mounted.
"$CDSGATE" dataset import "$D/in/patients.csv" --name tampered --qi "$QI" $CLS \
	--hierarchies "$D/in" --k 5 --json > "$D/tam.json" 2>/dev/null
TAM=$(json "$D/tam.json" 'j["id"]')
OUT=$(sqlite3 "$D/state/store.db" "select output_path from datasets where id=$TAM")
check "a passed import records the release's sha256 in its report" \
	test "$(json "$D/tam.json" 'j["report"]["release_sha256"]')" = "$(sha256sum < "$OUT" | cut -d' ' -f1)"
echo '1,m,1234*,w,2022-01-01,A41 Other sepsis,1' >> "$OUT"
"$CDSGATE" dataset mount "$TAM" > /dev/null 2> "$D/tam.err"; rc=$?
check "its released file altered afterwards: mount refused (exit $rc), saying so" \
	sh -c "[ $rc -eq 2 ] && grep -q 'not the one the de-identification gate verified' '$D/tam.err'"
check "  nothing of it reached the mount dir, the store still says passed" \
	test "$(ls -A "$D/mnt")" = "$ID" -a \
	"$(sqlite3 "$D/state/store.db" "select state from datasets where id=$TAM")" = passed

# Two datasets of one name: each its own directory (by id), neither can
# replace or remove the other's files.
"$CDSGATE" dataset import "$D/in/patients.csv" --name patients --qi "$QI" \
	$CLS --hierarchies "$D/in" --k 10 \
	--json > "$D/twin.json" 2>/dev/null
TWIN=$(json "$D/twin.json" 'j["id"]')
sum0=$(cat "$D/mnt/$ID/data.csv" "$D/mnt/$ID/meta.json" | sha256sum)
"$CDSGATE" dataset mount "$TWIN" > /dev/null 2> "$D/twin.err"; rc=$?
check "a second dataset named patients is mounted beside the first, in its own directory (exit $rc: $(head -c 200 "$D/twin.err"))" \
	sh -c "[ $rc -eq 0 ] && [ \"\$(ls -A '$D/mnt' | sort -n | tr '\n' ' ')\" = '$ID $TWIN ' ] && grep -q '\"dataset\": $TWIN' '$D/mnt/$TWIN/meta.json'"
check "the first one's files are untouched, still its own" \
	sh -c "[ \"\$(cat '$D/mnt/$ID/data.csv' '$D/mnt/$ID/meta.json' | sha256sum)\" = '$sum0' ] && grep -q '\"dataset\": $ID' '$D/mnt/$ID/meta.json'"
"$CDSGATE" dataset unmount "$TWIN" > /dev/null 2>&1
check "unmounting the second leaves the first's files" \
	sh -c "[ ! -e '$D/mnt/$TWIN' ] && [ \"\$(cat '$D/mnt/$ID/data.csv' '$D/mnt/$ID/meta.json' | sha256sum)\" = '$sum0' ]"
check "the store says the first is mounted, the second passed" \
	test "$(sqlite3 "$D/state/store.db" "select state from datasets where id in ($ID, $TWIN) order by id" | tr '\n' ' ')" = "mounted passed "

# Bad jobs: refused before anything is stored.
req() { curl -s -o "$D/resp" -w '%{http_code}' --unix-socket "$SOCK" -X POST \
	-H 'Content-Type: application/json' --data-binary "$1" http://x/v1/datasets; }
N0=$(sqlite3 "$D/state/store.db" 'select count(*) from datasets')
check "a job naming an unknown upload: 422" \
	test "$(req '{"name":"x","data":"'"$(printf '%064d' 0)"'","qi":["age"],"k":2}')" = 422
check "a job with an attribute that would change the CLI syntax: 400" \
	test "$(req '{"name":"x","data":"'"$(printf '%064d' 0)"'","qi":["age,zip"],"k":2}')" = 400
check "a job without a privacy model: 400" \
	test "$(req '{"name":"x","data":"'"$(printf '%064d' 0)"'","qi":["age"]}')" = 400
check "a bad dataset name: 422" \
	test "$(req '{"name":"../x","data":"'"$(printf '%064d' 0)"'","qi":["age"],"k":2}')" = 422
check "none of them stored anything" \
	test "$(sqlite3 "$D/state/store.db" 'select count(*) from datasets')" = "$N0"

# Unmount: gone from the backend at once, the store says passed.
"$CDSGATE" dataset unmount "$ID" --json > "$D/um.json"; rc=$?
check "unmount (exit $rc): the store says passed again" \
	test "$(json "$D/um.json" 'j["state"]')" = passed
check "the mount dir is empty" test -z "$(ls -A "$D/mnt")"
"$CDSGATE" dataset mount "$ID" --json > "$D/mnt2.json"
check "mounting again gives version 2" test "$(json "$D/mnt2.json" 'j["mount_version"]')" = 2

# SIGKILL of the daemon in the middle of an import.
"$CDSGATE" sample generate --out "$D/big" --records 300000 --seed 3 > /dev/null
"$CDSGATE" dataset import "$D/big/patients.csv" --name big --qi "$QI" \
	--identifying patient_id,name --sensitive diagnosis \
	--insensitive length_of_stay --hierarchies "$D/big" --k 5 > /dev/null 2>&1 &
CLI=$!
for _ in $(seq 100); do
	[ "$(sqlite3 "$D/state/store.db" "select count(*) from datasets where state='importing'" 2>/dev/null)" = 1 ] && break
	sleep 0.1
done
check "the big import is running" \
	test "$(sqlite3 "$D/state/store.db" "select count(*) from datasets where state='importing'")" = 1
kill -9 $API_PID; wait $API_PID 2>/dev/null; wait $CLI 2>/dev/null
sleep 0.5
check "the gate died with the daemon (no orphan deid)" \
	sh -c '! pgrep -f "deid anonymize --data $0" >/dev/null' "$D/state/spool"
check "restart after SIGKILL" start_api
BIG=$(sqlite3 "$D/state/store.db" "select state || ': ' || reason from datasets where name='big'")
check "the interrupted import is an error, never a pass ($BIG)" \
	test "${BIG%%:*}" = error || {
	diag "datasets: $(sqlite3 "$D/state/store.db" 'select id, name, state, reason, created, updated from datasets' | tr '\n' '|')"
	diag "api: $(tail -n 5 "$D/err" | tr '\n' '|')"
}
check "and nothing of it is mounted" test "$(ls -A "$D/mnt")" = "$ID"
check "the store is consistent" test "$(sqlite3 "$D/state/store.db" 'PRAGMA integrity_check')" = ok

kill -TERM $API_PID; wait $API_PID
"$CDSGATE" audit list "$D/audit/audit.log" --json > "$D/audit.json"
check "the audit log has import, verdict, mount, refusal, unmount, recovery" python3 - "$D/audit.json" <<'PY'
import json, sys
types = [json.loads(l)["type"] for l in open(sys.argv[1])]
for t in ["upload", "dataset.import", "dataset.verdict", "dataset.mount",
          "dataset.mount.refused", "dataset.unmount", "recover"]:
    assert t in types, (t, sorted(set(types)))
PY
check "the verdict records carry the verified figures and the release's sha256" \
	python3 - "$D/audit.json" "$D/imp.json" "$D/mnt2.json" "$D/mnt/$ID/data.csv" <<'PY'
import hashlib, json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
imp = json.load(open(sys.argv[2]))
v = [r["data"] for r in recs if r["type"] == "dataset.verdict" and r["data"]["id"] == imp["id"]]
assert len(v) == 1, v
v = v[0]
assert v["verdict"] == "passed" and v["verified"] == imp["report"]["verified"], v
assert v["verified"]["smallest_class"] >= 5 and v["verified"]["passed"] is True
mounted = hashlib.sha256(open(sys.argv[4], "rb").read()).hexdigest()
assert v["release_sha256"] == imp["report"]["release_sha256"] == mounted, (v, mounted)
failed = [r["data"] for r in recs if r["type"] == "dataset.verdict" and r["data"]["verdict"] == "failed"]
assert failed and all(f["release_sha256"] == "" for f in failed), failed
PY
"$CDSGATE" audit verify "$D/audit/audit.log" --key "$D/audit.pub" > "$D/verify.out"; rc=$?
check "and it verifies ($(cat "$D/verify.out"))" test "$rc" -eq 0

done_testing
