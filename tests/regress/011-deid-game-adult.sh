#!/usr/bin/env bash
# 011-deid-game-adult: the game-theoretic variants on ADULT (../shared/data;
# QIs age, sex, race, native-country, as in bench/game).  No-Attack at
# Gain/Cost = 300/4 releases only classes of at least 76 records (counted
# from the written table) and chooses what 76-anonymity chooses; SH-Friendly
# never goes below the Safe Harbor level of age (bench/safe-harbor-age.awk),
# `deid verify` re-derives that from the released file alone, and a table
# released below Safe Harbor fails that check by name.  On the synthetic
# patients the generated safe-harbor/ hierarchies give a release with age
# at 90+, ZIPs at 3 digits and dates at year at least.
. "$(dirname "$0")/lib.sh"

[ -x "$CDSGATE" ] || skip_all "cdsgate not built at $CDSGATE"
SHARED=$(find_shared) || skip_all "ADULT data ../shared/data not found (set CDSGATE_SHARED)"
command -v python3 >/dev/null || skip_all "python3 not installed"
A=$SHARED/data/adult QI=age,sex,race,native-country
H=$TMP/sh
mkdir -p "$H"
cp "$A/hierarchy_sex.csv" "$A/hierarchy_race.csv" "$A/hierarchy_native-country.csv" "$H/"
awk -f "$top_srcdir/bench/safe-harbor-age.awk" "$A/hierarchy_age.csv" > "$H/hierarchy_age.csv"

anon() {	# anon NAME ARGS... -> $TMP/NAME.csv, $TMP/NAME.json
	local n=$1; shift
	"$CDSGATE" deid anonymize --data "$A/adult.csv" --hierarchies "$H" --qi "$QI" \
		--insensitive marital-status,education,workclass,occupation,salary-class \
		--output "$TMP/$n.csv" --report "$TMP/$n.json" "$@" > "$TMP/$n.out" 2>&1
}

check "no-attack at Gain/Cost = 300/4 runs" anon na --game no-attack --game-gain 300 --game-cost 4 --quality payout
check "76-anonymity runs" anon k76 --k 76 --quality payout
read -r recs supp classes mink < <(python3 "$top_srcdir/tests/regress/reassess.py" "$TMP/na.csv" "$QI" ';')
check "no-attack: every released class has >= 76 records (smallest $mink, $supp of $recs suppressed)" \
	test "$mink" -ge 76 -a "$recs" -gt 30000 -a "$supp" -lt "$recs"
check "no-attack = 76-anonymity: same node, same suppression, nothing attacked" \
	python3 - "$TMP/na.json" "$TMP/k76.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["transformation"] == b["transformation"], (a["transformation"], b["transformation"])
assert a["suppressed_records"] == b["suppressed_records"]
assert a["game"]["attacked_records"] == 0 and a["verified"]["attacked_records"] == 0
assert a["verified"]["smallest_class"] >= 76
PY

check "sh-friendly runs" anon shf --game sh-friendly --safe-harbor age=1 --quality payout
check "payout runs" anon pay --game payout --quality payout
check "sh-friendly: age at or above its Safe Harbor level, 90+ in the table, payout <= payout variant's" \
	python3 - "$TMP/shf.json" "$TMP/pay.json" "$TMP/shf.csv" <<'PY'
import csv, json, sys
s, p = (json.load(open(x)) for x in sys.argv[1:3])
assert s["safe_harbor"] == {"sex": 0, "age": 1, "race": 0, "native-country": 0}, s["safe_harbor"]
assert s["transformation"]["age"] >= 1 and s["verified"]["levels"]["age"] >= 1, s["transformation"]
assert s["game"]["variant"] == "sh-friendly" and s["criteria"]["game"] == "sh-friendly"
ages = {r["age"] for r in csv.DictReader(open(sys.argv[3]), delimiter=";")}
assert "90" not in ages and "90+" in ages, sorted(ages)[-3:]
assert s["game"]["payout"] <= p["game"]["payout"] + 1e-6, (s["game"], p["game"])
assert p["transformation"]["age"] == 0 and p["safe_harbor"] is None
PY
check "sh-friendly: the explanation says no QI is below Safe Harbor" \
	grep -q "met: HIPAA Safe Harbor: no quasi-identifier is less generalized" "$TMP/shf.out"

verify() {	# verify NAME ARGS... -> exit code in $rc, JSON in $TMP/NAME.verify
	rc=0
	"$CDSGATE" deid verify --data "$TMP/$1.csv" --hierarchies "$H" --qi "$QI" \
		--game sh-friendly --safe-harbor age=1 --json > "$TMP/$1.verify" 2>&1 || rc=$?
}
verify shf
check "deid verify of the sh-friendly table passes with age at level $(json "$TMP/shf.verify" 'j["levels"]["age"]')" \
	test "$rc" -eq 0 -a "$(json "$TMP/shf.verify" 'j["passed"]')" = True
verify pay
check "deid verify of the payout table under Safe Harbor fails naming age (exit $rc)" \
	test "$rc" -eq 3 -a -n "$(grep 'age is at level 0, below its Safe Harbor level 1' "$TMP/pay.verify")"

# The synthetic patients' generated Safe Harbor hierarchies.
S=$TMP/sample SQI=age,sex,zip,race,admission_date
"$CDSGATE" sample generate --out "$S" --records 5000 --seed 3 >/dev/null
check "sample generate writes the Safe Harbor hierarchies" \
	test -s "$S/safe-harbor/hierarchy_age.csv" -a -s "$S/safe-harbor/hierarchy_zip.csv" \
	-a -s "$S/safe-harbor/hierarchy_admission_date.csv"
check "synthetic sh-friendly release passes" \
	"$CDSGATE" deid anonymize --data "$S/patients.csv" --hierarchies "$S/safe-harbor" --qi "$SQI" \
	--identifying patient_id,name --sensitive diagnosis --insensitive length_of_stay \
	--game sh-friendly --safe-harbor age=1,zip=1,admission_date=1 --quality payout \
	--output "$TMP/syn.csv" --report "$TMP/syn.json"
check "synthetic: no age >= 90, 5-digit ZIP or exact date in the table" \
	python3 - "$TMP/syn.csv" <<'PY'
import csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows
for r in rows:
	assert not (r["age"].isdigit() and int(r["age"]) >= 90), r
	assert not re.fullmatch(r"\d{5}", r["zip"]), r
	assert not re.fullmatch(r"\d{4}-\d\d-\d\d", r["admission_date"]), r
PY

bad() {	# bad DESC PATTERN ARGS...
	local d=$1 pat=$2 rc=0; shift 2
	"$CDSGATE" deid anonymize --data "$A/adult.csv" --hierarchies "$H" --qi "$QI" \
		--insensitive marital-status,education,workclass,occupation,salary-class \
		--json "$@" > /dev/null 2> "$TMP/err" || rc=$?
	check "$d: exit 2 naming it" test "$rc" -eq 2 -a -n "$(grep -- "$pat" "$TMP/err")"
}
bad "sh-friendly without Safe Harbor levels" "needs --safe-harbor" --game sh-friendly
bad "--safe-harbor on a column that is not a QI" "not one of the --qi" --game sh-friendly --safe-harbor zip=1
bad "--safe-harbor without a level" "wants QI=LEVEL" --game sh-friendly --safe-harbor age
bad "--safe-harbor above the hierarchy" "above its hierarchy's top level" --game sh-friendly --safe-harbor age=9

done_testing
