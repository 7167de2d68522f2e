#!/usr/bin/env bash
# 002-deid-cli: the `cdsgate deid` contract on the synthetic patients
# dataset — the assess JSON shape, anonymize's report fields, exit codes,
# identifying columns dropped, the released table re-checked from the file
# alone, the gate failing (exit 3) when the residual bound is tight, and
# output files that are complete or absent, never partial.
. "$(dirname "$0")/lib.sh"

[ -x "$CDSGATE" ] || skip_all "cdsgate not built at $CDSGATE"
command -v python3 >/dev/null || skip_all "python3 not installed"

S=$TMP/sample
QI=age,sex,zip,race,admission_date
# every other column of the sample, classified
CLS="--identifying patient_id,name --sensitive diagnosis --insensitive length_of_stay"
"$CDSGATE" sample generate --out "$S" --records 5000 --seed 7 >/dev/null
check "sample generate writes data and five hierarchies" \
	test -s "$S/patients.csv" -a "$(ls "$S"/hierarchy_*.csv | wc -l)" -eq 5
"$CDSGATE" sample generate --out "$TMP/sample2" --records 5000 --seed 7 >/dev/null
check "the sample is deterministic for a seed" \
	cmp -s "$S/patients.csv" "$TMP/sample2/patients.csv"

# assess: the documented shape, and consistent numbers.
"$CDSGATE" deid assess --data "$S/patients.csv" --qi "$QI" \
	--population 4.031e6 --population 39.14e6 --json > "$TMP/assess.json"
check "assess --json has the contract's keys" python3 - "$TMP/assess.json" <<'PY'
import json, math, sys
j = json.load(open(sys.argv[1]))
assert j["records"] == 5000 and 0 < j["sample_uniques"] <= j["classes"] <= 5000
assert [p["population"] for p in j["populations"]] == [4.031e6, 39.14e6]
for p in j["populations"]:
    assert math.isclose(p["sampling_fraction"], 5000 / p["population"])
    for m in ("pitman", "zayatz", "snb", "dankar"):
        assert "fraction" in p[m], m
        f = p[m]["fraction"]
        assert (f is None and p[m]["error"]) or 0 <= f <= 1, (m, p[m])
    assert set(p["pitman"]) >= {"fraction", "uniques", "theta", "alpha", "path"} or p["pitman"]["fraction"] is None
    assert p["dankar"]["model"] in ("pitman", "zayatz", "snb")
    assert p["zayatz"]["uniques"] > 0
PY
# Without --hierarchies nothing is generalized: same figures as before.
"$CDSGATE" deid assess --data "$S/patients.csv" --qi age,sex --population 1e6 --json > "$TMP/a2.json"
check "assess on fewer QIs finds fewer uniques" python3 -c "
import json; a=json.load(open('$TMP/assess.json')); b=json.load(open('$TMP/a2.json'))
assert b['sample_uniques'] < a['sample_uniques'] and b['classes'] < a['classes']"

# anonymize: PU <= 1% and 5-anonymity on the demo configuration.
rc=0
"$CDSGATE" deid anonymize --data "$S/patients.csv" --hierarchies "$S" --qi "$QI" \
	$CLS --pu-threshold 0.01 --population 4.031e6 --k 5 \
	--output "$TMP/out.csv" --report "$TMP/r.json" > "$TMP/stdout" || rc=$?
check "anonymize passes the gate (exit 0)" test "$rc" -eq 0
check "readable summary names the gate" grep -q '^gate: PASSED' "$TMP/stdout"
check "report has the contract's fields" python3 - "$TMP/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert set(r["transformation"]) == {"age", "sex", "zip", "race", "admission_date"}
assert r["records"] == 5000 and 0 <= r["suppressed_records"] <= 5000
assert 0 < r["quality"]["loss"] <= 1 and 0 < r["quality"]["nu_entropy"] <= 1
for side in ("before", "after"):
    s = r["risk"][side]
    assert {"sample_uniques", "pu_fraction", "pu_model", "residual"} <= set(s)
    assert s["residual"][0]["population"] == 4.031e6 and s["residual"][0]["bound"] == 0.25
    assert set(s["residual"][0]) >= {"population", "pu", "su", "ratio", "bound", "passed"}
assert r["risk"]["after"]["pu_fraction"] <= 0.01
assert r["risk"]["after"]["sample_uniques"] == 0          # 5-anonymity
assert r["risk"]["before"]["sample_uniques"] > 1000
assert r["gate"] == {"passed": True, "verdict": "passed", "reasons": [], "warnings": []}
v = r["verified"]                 # re-derived from the written file
assert v["records"] == 5000 and v["suppressed_records"] == r["suppressed_records"]
assert v["smallest_class"] >= 5 and v["sample_uniques"] == 0 and v["passed"] is True
assert v["classes"] == r["risk"]["after"]["classes"] and v["pu_fraction"] == 0
assert v["levels"] == r["transformation"]
il = r["information_loss"]
assert abs(v["information_loss"]["loss"] - il["loss"]) < 1e-9
assert abs(r["quality"]["loss"] - (1 - il["loss"])) < 1e-12    # quality = 1 - loss
assert abs(r["quality"]["nu_entropy"] - (1 - il["nu_entropy"])) < 1e-12
l = r["lattice"]
assert l["nodes"] == 5 * 2 * 4 * 3 * 5 and l["evaluated"] + l["pruned"] == l["nodes"]
assert r["elapsed_ms"] > 0
PY
read -r recs supp classes mink < <(python3 "$top_srcdir/tests/regress/reassess.py" "$TMP/out.csv" "$QI" ',')
check "released table re-checks: $recs records, $supp suppressed, smallest class $mink >= 5" \
	test "$recs" -eq 5000 -a "$mink" -ge 5
check "suppressed count in the file equals the report's" \
	test "$supp" -eq "$(json "$TMP/r.json" "j['suppressed_records']")"
check "identifying columns are dropped, the others kept" \
	test "$(head -n1 "$TMP/out.csv")" = "age,sex,zip,race,admission_date,diagnosis,length_of_stay"
frac=$("$CDSGATE" deid assess --data "$TMP/out.csv.released" --qi "$QI" --population 4.031e6 --json |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["populations"][0]["dankar"]["fraction"])')
check "re-assessed PU of the released rows ($frac) <= 1%" python3 -c "assert $frac <= 0.01"

# `deid verify`: the same check on the released file alone.
rc=0
"$CDSGATE" deid verify --data "$TMP/out.csv" --hierarchies "$S" --qi "$QI" \
	--pu-threshold 0.01 --population 4.031e6 --k 5 --json > "$TMP/v.json" || rc=$?
check "deid verify on the release agrees with the report's verified figures (exit $rc)" \
	python3 - "$TMP/r.json" "$TMP/v.json" "$rc" <<'PY'
import json, sys
r, v = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert sys.argv[3] == "0" and v.pop("warnings") == []
assert v == r["verified"], [k for k in v if v[k] != r["verified"].get(k)]
PY
rc=0
"$CDSGATE" deid verify --data "$TMP/out.csv" --qi "$QI" --k 5 > "$TMP/v.txt" || rc=$?
check "  without hierarchies: the counts, no quality, passed (exit $rc)" \
	sh -c "[ $rc -eq 0 ] && grep -q '^gate: PASSED' '$TMP/v.txt' && ! grep -q 'information loss' '$TMP/v.txt'"
{ cat "$TMP/out.csv"; echo '1,f,99999,x,1999-01-01,A41 Other sepsis,1'; } > "$TMP/bad.csv"
rc=0
"$CDSGATE" deid verify --data "$TMP/bad.csv" --qi "$QI" --k 5 > "$TMP/v2.txt" || rc=$?
check "  one row added to the file: exit 3, the class of 1 named" \
	sh -c "[ $rc -eq 3 ] && grep -q 'a released class has 1 records, fewer than k = 5' '$TMP/v2.txt'"
rc=0
"$CDSGATE" deid verify --data "$TMP/out.csv" --qi age,nope --k 5 > /dev/null 2> "$TMP/v3.err" || rc=$?
check "  a QI the file does not have: exit 2 naming it" \
	sh -c "[ $rc -eq 2 ] && grep -q 'no column named \"nope\"' '$TMP/v3.err'"

# A residual bound nobody can meet: gate fails, exit 3, the report says
# why, and no table is left behind.
rc=0
"$CDSGATE" deid anonymize --data "$S/patients.csv" --hierarchies "$S" --qi "$QI" $CLS \
	--pu-threshold 0.05 --population 1e5 --residual 1e5=0 --residual 4.031e6=1 \
	--output "$TMP/o3.csv" --report "$TMP/r3.json" --json > "$TMP/r3.stdout" || rc=$?
check "a failed residual check exits 3" test "$rc" -eq 3
check "the report says why and is also printed with --json" python3 - "$TMP/r3.json" "$TMP/r3.stdout" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
assert r == s and r["gate"]["passed"] is False
res = r["risk"]["after"]["residual"]
assert len(res) == 2 and res[0]["bound"] == 0 and res[1]["population"] == 4.031e6
assert r["risk"]["after"]["sample_uniques"] > 0
assert res[0]["passed"] is False and "PU/SU" in r["gate"]["reasons"][0]
assert res[1]["passed"] is True and len(r["gate"]["reasons"]) == 1
assert r["gate"]["verdict"] == "failed" and r["output"] is None
PY
check "a failed gate leaves no released table" test ! -e "$TMP/o3.csv"

# k = n: only the top node, every record suppressed — never "passed".
for lim in 0 1; do
	rc=0
	"$CDSGATE" deid anonymize --data "$S/patients.csv" --hierarchies "$S" --qi "$QI" $CLS \
		--k 5000 --suppression-limit $lim --output "$TMP/o4.csv" --report "$TMP/r4.json" \
		> "$TMP/o4.out" || rc=$?
	check "k = n, suppression limit $lim: exit 3, no table ($(grep -A1 '^gate' "$TMP/o4.out" | tr '\n' ' '))" \
		test "$rc" -eq 3 -a ! -e "$TMP/o4.csv"
done
check "  and with a 100% limit the verdict is \"nothing released\"" \
	test "$(json "$TMP/r4.json" 'j["gate"]["verdict"]')" = "nothing released"
check "  said so in the text" grep -q '^gate: FAILED - nothing released' "$TMP/o4.out"

# A release suppressing more than the call-out share passes, called out.
rc=0
"$CDSGATE" deid anonymize --data "$S/patients.csv" --hierarchies "$S" --qi "$QI" $CLS \
	--k 5 --warn-suppressed 0.01 --output "$TMP/o7.csv" --report "$TMP/r7.json" \
	> "$TMP/o7.out" || rc=$?
check "a suppressed share above --warn-suppressed is called out in the verdict (exit $rc)" \
	python3 - "$TMP/r7.json" "$rc" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert sys.argv[2] == "0" and r["gate"]["passed"] is True, r["gate"]
assert r["suppressed_records"] > 50, r["suppressed_records"]
assert len(r["gate"]["warnings"]) == 1 and "suppressed" in r["gate"]["warnings"][0]
PY
check "  and in the text" grep -q '^  warning: .*% of the records are suppressed' "$TMP/o7.out"

# Every column must be classified: forgetting --identifying is an error.
rc=0
"$CDSGATE" deid anonymize --data "$S/patients.csv" --hierarchies "$S" --qi "$QI" --k 5 \
	--sensitive diagnosis --insensitive length_of_stay \
	--output "$TMP/o8.csv" --report "$TMP/r8.json" > /dev/null 2> "$TMP/o8.err" || rc=$?
check "an unclassified column: exit 2 naming it, nothing written" \
	sh -c "[ $rc -eq 2 ] && grep -q 'column \"patient_id\" is not classified' '$TMP/o8.err' &&
	[ ! -e '$TMP/o8.csv' ] && [ ! -e '$TMP/r8.json' ]"

# A hierarchy whose top is not one value (dates kept as they are): the
# top node is an ordinary node, and the release is what the report says.
mkdir -p "$TMP/flat"; cp "$S"/hierarchy_*.csv "$TMP/flat/"
cut -d';' -f1 "$S/hierarchy_admission_date.csv" > "$TMP/flat/hierarchy_admission_date.csv"
rc=0
"$CDSGATE" deid anonymize --data "$S/patients.csv" --hierarchies "$TMP/flat" --qi "$QI" $CLS \
	--k 5 --suppression-limit 0 --output "$TMP/o9.csv" --report "$TMP/r9.json" > /dev/null || rc=$?
if [ "$rc" -eq 3 ]; then
	check "dates kept as they are with k = 5, no suppression: gate fails (exit 3), no table" \
		test ! -e "$TMP/o9.csv"
else
	read -r recs supp classes mink < <(python3 "$top_srcdir/tests/regress/reassess.py" "$TMP/o9.csv" "$QI" ',')
	check "dates kept as they are: released only if every class >= 5 (exit $rc, smallest $mink, $supp suppressed)" \
		test "$rc" -eq 0 -a "$mink" -ge 5 -a "$supp" -eq 0
fi

# The released bytes disagree with the search (test hook: the last row
# written twice): exit 1 naming the figure, no table, no report.
rc=0
CDSGATE_TEST_TAMPER=1 "$CDSGATE" deid anonymize --data "$S/patients.csv" --hierarchies "$S" \
	--qi "$QI" $CLS --k 5 --output "$TMP/o10.csv" --report "$TMP/r10.json" \
	> /dev/null 2> "$TMP/o10.err" || rc=$?
if [ "$rc" -eq 0 ]; then
	skip "a corrupted release: built without test hooks (--disable-test-hooks)"
else
	check "a release that disagrees with the search: exit 1 naming the figure ($(cat "$TMP/o10.err"))" \
		sh -c "[ $rc -eq 1 ] && grep -q 'disagrees with the search: records is 5001 in the file, 5000' '$TMP/o10.err'"
	check "  and nothing is left: no table, no report, no temp file" \
		sh -c "[ ! -e '$TMP/o10.csv' ] && [ ! -e '$TMP/r10.json' ] && ! ls '$TMP' | grep -q 'o10.csv.tmp'"
fi

check "entropy quality model runs" quiet "$CDSGATE" deid anonymize --data "$S/patients.csv" $CLS \
	--hierarchies "$S" --qi "$QI" --k 3 --quality entropy --output "$TMP/o5.csv" --report "$TMP/r5.json"
check "no temporary files are left behind" test -z "$(ls "$TMP" | grep '\.tmp\.')"

# Output is never partial: an unwritable output directory fails cleanly.
rc=0
"$CDSGATE" deid anonymize --data "$S/patients.csv" --hierarchies "$S" --qi "$QI" $CLS --k 5 \
	--output "$TMP/nodir/o.csv" --report "$TMP/r6.json" >/dev/null 2>"$TMP/err" || rc=$?
check "an unwritable output exits 1 naming the path" \
	test "$rc" -eq 1 -a -n "$(grep nodir "$TMP/err")"
check "and writes no report" test ! -e "$TMP/r6.json"

done_testing
