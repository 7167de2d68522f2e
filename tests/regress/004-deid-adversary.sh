#!/usr/bin/env bash
# 004-deid-adversary: Xia 2021's adversarial risk through `cdsgate deid
# anonymize` and `deid verify` — the shipped attacker files run on the
# synthetic patients; the report's verified.adversarial carries the four
# risks and the reductions; `deid verify` on the released file with the
# same seed gives the same figures (the gate's second opinion), another
# seed other ones; a bound below the risk fails the gate and leaves no
# table, one above passes; a bad attacker file is bad input (exit 2)
# naming file:line:column.
. "$(dirname "$0")/lib.sh"

[ -x "$CDSGATE" ] || skip_all "cdsgate not built at $CDSGATE"
command -v python3 >/dev/null || skip_all "python3 not installed"

S=$TMP/sample QI=age,sex,zip,race,admission_date
A=$(cd "$(dirname "$0")/../.." && pwd)/demo/attackers
"$CDSGATE" sample generate --out "$S" --records 3000 --seed 5 >/dev/null
anon() {	# anon NAME ARGS... -> $TMP/NAME.csv, $TMP/NAME.json
	local n=$1; shift
	"$CDSGATE" deid anonymize --data "$S/patients.csv" --hierarchies "$S" \
		--qi "$QI" --identifying patient_id,name --sensitive diagnosis \
		--insensitive length_of_stay --k 3 --population 4e6 \
		--output "$TMP/$n.csv" --report "$TMP/$n.json" "$@" > "$TMP/$n.out"
}
verify() {	# verify NAME SEED -> $TMP/NAME.v.json
	local n=$1 seed=$2 rc=0
	"$CDSGATE" deid verify --data "$TMP/$n.csv" --hierarchies "$S" \
		--qi "$QI" --k 3 --population 4e6 --attacker "$A/voter.txt" \
		--seed "$seed" --json > "$TMP/$n.v.json" || rc=$?
	[ "$rc" -eq 0 ]
}

check "anonymize with the voter attacker and a loose bound passes" \
	anon pass --attacker "$A/voter.txt" --seed 7 --max-adversarial-risk 0.5 \
	--report-html "$TMP/pass.html"
check "the table is written" test -s "$TMP/pass.csv"
check "the report carries the four risks, the worst case and the reductions" \
	python3 - "$TMP/pass.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
a = r["verified"]["adversarial"]
assert a["seed"] == 7 and a["trials"] == 1000 and a["bound"] == 0.5, a
assert a["subjects"] == r["verified"]["released_records"], a
for k in ("prosecutor", "journalist", "marketer", "overall"):
    m, w = a["attacker_risks"][k]["mean"], a["worst_case"][k]["mean"]
    assert 0 <= m <= 1 and 0 <= w <= 1, (k, m, w)
    red = a["reduction"][k]
    assert red["subjects"] == 0 or red["q1"] <= red["median"] <= red["q3"], red
assert a["risk"] == a["attacker_risks"]["overall"]["mean"]
assert a["risk"] < a["worst_case"]["overall"]["mean"], a
assert r["gate"]["passed"]
PY
check "the HTML page has the adversarial section" \
	grep -q '<section id="adversarial"><h2>Adversarial risk (Xia 2021)</h2>' "$TMP/pass.html"
check "the explanation has the criterion and the sentence" \
	grep -q "met: adversarial risk = .* is within the bound 50.0 %" "$TMP/pass.out"
check "verify on the released file, same seed: passes" verify pass 7
check "... and gives the very same figures" python3 - "$TMP/pass.json" "$TMP/pass.v.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["verified"]["adversarial"]
b = json.load(open(sys.argv[2]))["adversarial"]
for k in ("attacker_risks", "worst_case", "reduction", "risk", "subjects"):
    assert a[k] == b[k], (k, a[k], b[k])
PY
check "verify with another seed: another Monte Carlo figure" verify pass 8
check "... differs" python3 - "$TMP/pass.v.json" "$TMP/pass.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["adversarial"]
b = json.load(open(sys.argv[2]))["verified"]["adversarial"]
assert a["seed"] == 8 and a["attacker_risks"] != b["attacker_risks"], a
PY

rc=0; anon fail --attacker "$A/voter.txt" --max-adversarial-risk 0.00001 || rc=$?
check "a bound below the risk: the gate fails (exit 3)" test "$rc" -eq 3
check "... and no table is left" test ! -e "$TMP/fail.csv"
check "... the reason names the figure, the bound and the attacker" \
	grep -q "FAILED: adversarial risk = .* exceeds the bound 0.001 % (attacker .*voter.txt, seed 0)" "$TMP/fail.out"

bad() {	# bad DESC PATTERN ARGS...
	local d=$1 pat=$2 rc=0; shift 2
	"$CDSGATE" deid anonymize --data "$S/patients.csv" --hierarchies "$S" \
		--qi "$QI" --identifying patient_id,name --sensitive diagnosis \
		--insensitive length_of_stay --k 3 --output "$TMP/bad.csv" \
		--report "$TMP/bad.json" "$@" > /dev/null 2> "$TMP/err" || rc=$?
	check "$d: exit 2 naming it" test "$rc" -eq 2 -a -n "$(grep -- "$pat" "$TMP/err")"
	check "$d: nothing written" test ! -e "$TMP/bad.csv" -a ! -e "$TMP/bad.json"
}
printf 'trials 10\ngroup 0.5 age\ngroup 0.2 sex age\n' > "$TMP/dup.txt"
printf 'group 0.5 age\ngroup 0.2 height\n' > "$TMP/noqi.txt"
bad "an attribute in two groups" "dup.txt:3:15: \"age\" is already in the group of line 2" \
	--population 4e6 --attacker "$TMP/dup.txt"
bad "an attribute that is no QI" "noqi.txt:2: \"height\" is not a quasi-identifier" \
	--population 4e6 --attacker "$TMP/noqi.txt"
bad "no population" "--attacker needs --population" --attacker "$A/voter.txt"
bad "a bound without an attacker" "needs --attacker" --population 4e6 \
	--max-adversarial-risk 0.1
bad "a missing attacker file" "nonexistent.txt" --population 4e6 \
	--attacker "$TMP/nonexistent.txt"

rc=0; "$CDSGATE" deid assess --data "$S/patients.csv" --qi "$QI" --population 4e6 \
	--attacker "$A/voter.txt" > /dev/null 2> "$TMP/err" || rc=$?
check "assess refuses --attacker and points to verify (exit 2)" \
	test "$rc" -eq 2 -a -n "$(grep -- "deid verify --attacker" "$TMP/err")"
rc=0; "$CDSGATE" deid verify --data "$S/patients.csv" --qi "$QI" --population 4e6 \
	--attacker "$A/twitter.txt" --seed 1 > "$TMP/raw.out" || rc=$?
check "verify --attacker alone on the raw table: the risk, no other criterion needed" \
	test "$rc" -eq 3 -a -n "$(grep '^adversarial risk 0\.0' "$TMP/raw.out")"

done_testing
