#!/usr/bin/env bash
# 076-import-criteria: `cdsgate dataset import` with the adversarial risk
# and the SH-Friendly game, through the real daemon.  The voter attacker
# passes and the stored report's figure is the one `deid verify` gives
# on the released file with the same seed; a bound below it fails (exit
# 3) with the reason naming the adversarial risk, said once; a malformed
# attacker file is bad input (exit 2) naming the custodian's own
# path:line:column, never the spool, and its upload goes with the
# failed import; an SH-Friendly import passes and its released table
# holds no age of 90 or over, no five-digit ZIP and no full date; bad
# values of the new fields are 422 `input` naming the field, with
# nothing stored.  The fields are in the job, its digest and the audit.
. "$(dirname "$0")/lib.sh"

CDSGATED=$top_builddir/cdsgated
[ -x "$CDSGATED" ] || skip_all "cdsgated not built"
serve_require
serve_dirs_make		# $D with state/ audit/ mnt/ in/, the audit key, $SOCK
check "the daemon starts" api_start

# The custodian's directory: the synthetic patients, their hierarchies
# (and DIR/safe-harbor/), the shipped voter attacker.
cd "$D/in" || exit 1
"$CDSGATE" sample generate --out . --records 3000 --seed 5 > /dev/null
cp "$top_srcdir/demo/attackers/voter.txt" voter.txt
mkdir bad && printf 'trials 10\ngroup 0.5 age\ngroup 0.2 sex age\n' > bad/dup.txt
QI=age,sex,zip,race,admission_date
IMP=(--qi "$QI" --identifying patient_id,name --sensitive diagnosis
	--insensitive length_of_stay --population 4e6)

# import NAME ARGS...: patients.csv from the custodian's directory; the
# exit code in $rc, stdout in $D/NAME.out, stderr in $D/NAME.err.
import() {
	local name=$1; shift
	rc=0
	"$CDSGATE" dataset import patients.csv --name "$name" "${IMP[@]}" "$@" \
		> "$D/$name.out" 2> "$D/$name.err" || rc=$?
}
id_of() { sqlite3 "$D/state/store.db" "select id from datasets where name='$1'"; }
count() { sqlite3 "$D/state/store.db" 'select count(*) from datasets'; }

# 1. The voter attacker, a loose bound: passes; deid verify agrees.
import adv --hierarchies . --k 3 --attacker voter.txt --seed 7 --max-adversarial-risk 0.5
check "an import with the voter attacker passes (exit $rc: $(head -c 300 "$D/adv.err"))" test "$rc" -eq 0
check "  it prints the verified adversarial risk under the custodian's attacker file" \
	grep -qE '^verified adversarial risk: 0\.[0-9]+ \(bound 0\.5\) under attacker voter\.txt, seed 7$' "$D/adv.out"
ADV=$(id_of adv)
"$CDSGATE" dataset show "$ADV" --json > "$D/adv.json"
rc=0
"$CDSGATE" deid verify --data "$D/state/released/$ADV/data.csv" --hierarchies . \
	--qi "$QI" --k 3 --population 4e6 --attacker voter.txt --seed 7 --json \
	> "$D/adv.verify.json" 2> "$D/adv.verify.err" || rc=$?
check "deid verify on the released file with the same seed passes (exit $rc)" test "$rc" -eq 0
check "  the stored report's adversarial figures are verify's, attacker named as given" \
	python3 - "$D/adv.json" "$D/adv.verify.json" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))["report"]
a = rep["verified"]["adversarial"]
b = json.load(open(sys.argv[2]))["adversarial"]
assert a["attacker"] == "voter.txt" and a["seed"] == 7 and a["bound"] == 0.5, a
for k in ("risk", "attacker_risks", "worst_case", "reduction", "subjects"):
    assert a[k] == b[k], (k, a[k], b[k])
assert 0 < a["risk"] < 0.5 and rep["gate"]["passed"], a
PY
check "the job, its digest and the audit record carry the new fields" \
	python3 - "$D/adv.json" "$D/audit/audit.log" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
imp = [json.loads(l) for l in open(sys.argv[2]) if '"dataset.import"' in l]
rec = [r["data"] for r in imp if r["data"]["name"] == "adv"]
assert len(rec) == 1, imp
a = rec[0]
assert a["job"] == d["job"] and a["job_sha256"] == d["job_sha256"], a
assert a["sources"]["attacker"] == "voter.txt", a["sources"]
job = d["job"]
assert job["seed"] == 7 and job["max_adversarial_risk"] == 0.5, job
assert len(job["attacker"]) == 64 and "sources" not in job, job
PY
SPEC=$(sqlite3 "$D/state/store.db" "select job_spec from datasets where name='adv'")
check "  the job digest is the sha256 of the stored job, which names the attacker's upload" \
	sh -c '[ "$(printf %s "$1" | sha256sum | cut -d" " -f1)" = "$2" ] &&
	    printf %s "$1" | grep -q "\"attacker\":\"$3\""' sh "$SPEC" \
	"$(sqlite3 "$D/state/store.db" "select job_sha256 from datasets where name='adv'")" \
	"$(sha256sum < voter.txt | cut -d' ' -f1)"
import adv8 --hierarchies . --k 3 --attacker voter.txt --seed 8 --max-adversarial-risk 0.5
check "another seed is another job digest (exit $rc)" \
	test "$rc" -eq 0 -a "$(sqlite3 "$D/state/store.db" "select count(distinct job_sha256) from datasets where name in ('adv','adv8')")" = 2

# 2. A bound below the risk: the gate fails, the reason says why, once.
import advlow --hierarchies . --k 3 --attacker voter.txt --max-adversarial-risk 0.00001
check "an import whose adversarial bound is too low fails (exit $rc)" test "$rc" -eq 3
check "  the stored reason names the adversarial risk and the custodian's attacker file" \
	test "$(sqlite3 "$D/state/store.db" "select reason like '%adversarial risk = % exceeds the bound %(attacker voter.txt, seed 0)%' from datasets where name='advlow'")" = 1
check "  the reason is printed once, not as reason: and again as the headline" \
	sh -c '[ "$(grep -c "Failed, the table must not be released: adversarial risk = .* exceeds the bound" "$0")" -eq 1 ] && ! grep -q "^reason:" "$0"' "$D/advlow.out"
check "  the FAILED line and its headline are there" \
	sh -c 'grep -q "^gate: FAILED" "$0" && grep -q "^  Failed" "$0"' "$D/advlow.out"

# 3. A malformed attacker file: bad input naming the custodian's path.
N0=$(count)
import badatt --hierarchies . --k 3 --attacker bad/dup.txt
check "a malformed attacker file: exit 2 (got $rc)" test "$rc" -eq 2
check "  names bad/dup.txt:3:15 ($(head -c 300 "$D/badatt.err"))" \
	grep -qF 'bad/dup.txt:3:15: "age" is already in the group of line 2' "$D/badatt.err"
check "  stored as a failed import, reason in the custodian's names" \
	test "$(sqlite3 "$D/state/store.db" "select state, reason like 'bad input: bad/dup.txt:3:15:%' from datasets where name='badatt'")" = "failed|1"
DUP_SHA=$(sha256sum < bad/dup.txt | cut -d' ' -f1)
check "  its attacker upload is in the spool" test -f "$D/state/spool/$DUP_SHA"
"$CDSGATE" dataset remove "$(id_of badatt)" > /dev/null 2>&1
check "  removing the failed import removes the attacker upload" \
	test ! -e "$D/state/spool/$DUP_SHA" -a -z "$(id_of badatt)"
check "  the voter attacker another import names stays" \
	test -f "$D/state/spool/$(sha256sum < voter.txt | cut -d' ' -f1)"

# 4. SH-Friendly on the Safe Harbor hierarchies.
import shf --hierarchies safe-harbor --game sh-friendly \
	--safe-harbor age=1,zip=1,admission_date=1 --quality payout
check "an SH-Friendly import passes (exit $rc: $(head -c 300 "$D/shf.err"))" test "$rc" -eq 0
check "  it prints the verified Safe Harbor levels, in the job's QI order" \
	grep -qE '^verified Safe Harbor levels: age [1-9][0-9]* \(at least 1\) zip [1-9][0-9]* \(at least 1\) admission_date [1-9][0-9]* \(at least 1\)$' "$D/shf.out"
check "  the released table: no age >= 90, no 5-digit ZIP, no full date" \
	python3 - "$D/state/released/$(id_of shf)/data.csv" <<'PY'
import csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) > 0
for r in rows:
    a, z, d = r["age"], r["zip"], r["admission_date"]
    assert not (a.isdigit() and int(a) >= 90), r
    assert not re.fullmatch(r"[0-9]{5}", z), r
    assert not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", d), r
PY
"$CDSGATE" dataset show "$(id_of shf)" --json > "$D/shf.json"
check "  the stored report has the floor and the levels verified at or above it" \
	python3 - "$D/shf.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["report"]
assert r["safe_harbor"] == {"age": 1, "sex": 0, "zip": 1, "race": 0,
                            "admission_date": 1}, r["safe_harbor"]
for q, l in r["safe_harbor"].items():
    assert r["verified"]["levels"][q] >= l, (q, r["verified"]["levels"])
assert r["gate"]["passed"] and r["game"]["variant"] == "sh-friendly", r["game"]
PY

# 5. Bad values: 422 input naming the field, nothing stored.
N0=$(count)
bad() {	# bad DESC TEXT ARGS...
	local d=$1 text=$2; shift 2
	import badval --hierarchies . "$@"
	check "$d: exit 2 naming it ($(head -c 200 "$D/badval.err"))" \
		sh -c '[ "$1" -eq 2 ] && grep -qF -- "$2" "$0"' "$D/badval.err" "$rc" "$text"
}
bad "an unknown game risk" "field 'game_risk': prosecutor or journalist, not 'bogus'" \
	--k 3 --game payout --game-risk bogus
bad "a Safe Harbor level out of range" "field 'safe_harbor': the level of 'age' is 300, not 0..255" \
	--game sh-friendly --safe-harbor age=300
bad "a Safe Harbor QI that is no QI" "field 'safe_harbor': 'height' is not one of 'qi'" \
	--game sh-friendly --safe-harbor height=1
bad "sh-friendly without Safe Harbor levels" "field 'game': sh-friendly needs 'safe_harbor'" \
	--game sh-friendly
bad "an adversarial bound over 1" "field 'max_adversarial_risk': 2 is not within (0, 1]" \
	--k 3 --attacker voter.txt --max-adversarial-risk 2
bad "a seed out of range" "field 'seed': -1 is not 0..2^53" \
	--k 3 --attacker voter.txt --seed -1
check "  the API's replies: 422 input naming the field, for each needed companion too" \
	python3 - "$CDSGATE_SOCKET" <<'PY'
import json, subprocess, sys
SHA = "0" * 64
base = {"name": "x", "data": SHA, "qi": ["age", "zip"], "k": 3}
cases = [
    ({"game_risk": "nobody"}, "field 'game_risk': prosecutor or journalist, not 'nobody'"),
    ({"game": "payout", "game_risk": "journalist"}, "field 'game_risk': journalist needs 'population'"),
    ({"game": "sometimes"}, "field 'game': payout, no-attack, sh-friendly or off, not 'sometimes'"),
    ({"safe_harbor": {"zip": -1}}, "field 'safe_harbor': the level of 'zip' is -1, not 0..255"),
    ({"attacker": SHA}, "field 'attacker': needs 'population'"),
    ({"population": [4e6], "max_adversarial_risk": 0.1}, "field 'max_adversarial_risk': needs 'attacker'"),
    ({"population": [4e6], "attacker": SHA, "max_adversarial_risk": 0}, "field 'max_adversarial_risk': 0 is not within (0, 1]"),
    ({"seed": 7}, "field 'seed': needs 'attacker'"),
    ({"population": [4e6], "attacker": SHA, "seed": 2 ** 53 + 1}, "field 'seed': 9007199254740993 is not 0..2^53"),
]
for extra, want in cases:
    body = json.dumps(dict(base, **extra))
    out = subprocess.run(["curl", "-s", "-w", "\n%{http_code}", "--unix-socket",
                          sys.argv[1], "-X", "POST", "-H",
                          "Content-Type: application/json", "--data-binary",
                          body, "http://cdsgate/v1/datasets"],
                         capture_output=True, check=True).stdout.decode()
    text, _, code = out.rpartition("\n")
    e = json.loads(text)["error"]
    assert code == "422" and e["code"] == "input" and e["message"] == want, (extra, out)
PY
check "  none of them was stored" test "$(count)" = "$N0"

check "no message or stored reason names the daemon's spool" \
	sh -c "! cat '$D'/*.err '$D'/*.out | grep -q -e spool -e '$D/state' &&
	    [ \"\$(sqlite3 '$D/state/store.db' \"select count(*) from datasets where reason like '%spool%'\")\" = 0 ]"
cd / || exit 1
done_testing
