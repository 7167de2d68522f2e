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
	--identifying patient_id,name --sensitive diagnosis \
	--pu-threshold 0.01 --population 4.031e6 --k 5 \
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
assert r["gate"] == {"passed": True, "reasons": []}
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

# A residual bound nobody can meet: gate fails, exit 3, files still written.
rc=0
"$CDSGATE" deid anonymize --data "$S/patients.csv" --hierarchies "$S" --qi "$QI" \
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
PY

# No feasible transformation under a 0% suppression limit with k = 5000.
rc=0
"$CDSGATE" deid anonymize --data "$S/patients.csv" --hierarchies "$S" --qi "$QI" \
	--k 5000 --suppression-limit 0 --output "$TMP/o4.csv" --report "$TMP/r4.json" >/dev/null || rc=$?
check "k = n with no suppression: only the top node, gate still decided" test "$rc" -eq 0 -o "$rc" -eq 3
check "entropy quality model runs" quiet "$CDSGATE" deid anonymize --data "$S/patients.csv" \
	--hierarchies "$S" --qi "$QI" --k 3 --quality entropy --output "$TMP/o5.csv" --report "$TMP/r5.json"
check "no temporary files are left behind" test -z "$(ls "$TMP" | grep '\.tmp\.')"

# Output is never partial: an unwritable output directory fails cleanly.
rc=0
"$CDSGATE" deid anonymize --data "$S/patients.csv" --hierarchies "$S" --qi "$QI" --k 5 \
	--output "$TMP/nodir/o.csv" --report "$TMP/r6.json" >/dev/null 2>"$TMP/err" || rc=$?
check "an unwritable output exits 1 naming the path" \
	test "$rc" -eq 1 -a -n "$(grep nodir "$TMP/err")"
check "and writes no report" test ! -e "$TMP/r6.json"

done_testing
