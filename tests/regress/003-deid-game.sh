#!/usr/bin/env bash
# 003-deid-game: the game-theoretic model through `cdsgate deid anonymize`
# (Wan 2015; Prasser 2017) — No-Attack with Cost 4 / Gain 300 is exactly
# 76-anonymity
# (same transformation, same suppression, every released class >= 76
# records, counted from the output file); the publisher variant keeps only
# profitable records and the payout objective beats the Loss objective on
# payout; the journalist's estimated success probability ((records/N)/
# |class|) makes No-Attack k > Gain*fraction/Cost, re-derived by `deid
# verify`; with a population table (--population-table) SP = 1/F, F the
# class's size in the population: No-Attack releases only classes with
# F > Gain/Cost (counted here from the files), `deid verify` re-derives
# it, a bad population file is exit 2 naming file:line:column; the
# report carries the game's figures; bad parameters are
# usage errors (exit 2) that name the parameter.
. "$(dirname "$0")/lib.sh"

[ -x "$CDSGATE" ] || skip_all "cdsgate not built at $CDSGATE"
command -v python3 >/dev/null || skip_all "python3 not installed"

S=$TMP/sample QI=age,sex,zip,race,admission_date
"$CDSGATE" sample generate --out "$S" --records 20000 --seed 11 >/dev/null
anon() {	# anon NAME ARGS... -> $TMP/NAME.csv, $TMP/NAME.json
	local n=$1; shift
	"$CDSGATE" deid anonymize --data "$S/patients.csv" --hierarchies "$S" \
		--qi "$QI" --identifying patient_id,name --sensitive diagnosis \
		--insensitive length_of_stay --output "$TMP/$n.csv" --report "$TMP/$n.json" "$@" > "$TMP/$n.out"
}

check "no-attack runs" anon na --game no-attack
check "76-anonymity runs" anon k76 --k 76
# same_as_k GAME.json K.json PYTHON: the game's release is k-anonymity's
# (same node, same suppression), and PYTHON holds of a (game) and b (k).
same_as_k() {
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["transformation"] == b["transformation"], (a["transformation"], b["transformation"])
assert a["suppressed_records"] == b["suppressed_records"]
g = a["game"]
assert g["variant"] == "no-attack" and g["attacked_records"] == 0, g
assert a["criteria"]["game"] == "no-attack" and b["game"] is None
assert eval(sys.argv[3]), sys.argv[3]
PY
}
check "no-attack = k >= 76 (Gain/Cost = 75): same node and suppression" \
	same_as_k "$TMP/na.json" "$TMP/k76.json" 'g["risk"] == "prosecutor" and g["sampling_fraction"] == 1'
check "every released class of the no-attack output has >= 76 records" \
	python3 - "$TMP/na.csv" "$QI" <<'PY'
import csv, collections, sys
head = open(sys.argv[1]).readline()
rows = list(csv.DictReader(open(sys.argv[1]), delimiter=";" if ";" in head else ","))
qi = sys.argv[2].split(",")
c = collections.Counter(tuple(r[q] for q in qi) for r in rows)
small = [(k, n) for k, n in c.items() if n < 76 and set(k) != {"*"}]
assert rows and not small, small[:3]
PY

# Publisher variant where publishing costs: a benefit of $100 makes
# uniques (loss 300 * 1) unprofitable even ungeneralized.
check "payout variant with the payout objective runs" \
	anon pay --game payout --game-benefit 100 --quality payout
check "payout variant with the Loss objective runs" \
	anon payl --game payout --game-benefit 100
check "payout: no unprofitable record is released; objective wins on payout" \
	python3 - "$TMP/pay.json" "$TMP/payl.json" <<'PY'
import json, sys
p, l = (json.load(open(x)) for x in sys.argv[1:])
for r in (p, l):
    g = r["game"]
    assert g["unprofitable_records"] == 0 and g["benefit"] == 100, g
    assert 0 <= g["payout"] <= g["payout_max"] == 100 * r["records"], g
assert p["criteria"]["quality_model"] == "payout"
assert p["game"]["payout"] >= l["game"]["payout"] - 1e-6, (p["game"], l["game"])
assert l["quality"]["loss"] >= p["quality"]["loss"] - 1e-9
PY
check "the readable summary states the payout" \
	grep -q '^game (payout, prosecutor): publisher payout \$' "$TMP/pay.out"

# Journalist: SP = (records/N)/|class|, the population's class size
# estimated from the sampling fraction; 20,000 of 100,000 makes No-Attack
# k > 300 * 0.2 / 4 = 15.
check "no-attack, journalist, N = 100,000 runs" \
	anon naj --game no-attack --game-risk journalist --population 100000 --residual 100000=1
check "16-anonymity runs" anon k16 --k 16 --population 100000 --residual 100000=1
check "journalist no-attack = k >= 16: same node and suppression; fraction 0.2 in the report" \
	same_as_k "$TMP/naj.json" "$TMP/k16.json" \
	'g["risk"] == "journalist" and abs(g["sampling_fraction"] - 0.2) < 1e-12 and a["verified"]["smallest_class"] >= 16'
vj() {	# vj ARGS...: deid verify of the journalist table; exit code in $rc
	rc=0
	"$CDSGATE" deid verify --data "$TMP/naj.csv" --hierarchies "$S" --qi "$QI" \
		--game no-attack --residual 100000=1 --json "$@" > "$TMP/vj.json" 2>&1 || rc=$?
}
vj --game-risk journalist --population 100000
check "deid verify re-derives the journalist criterion from the file (exit $rc)" \
	test "$rc" -eq 0 -a "$(json "$TMP/vj.json" 'j["unreleasable_records"]')" = 0
vj --population 100000
check "the same table fails the prosecutor's No-Attack (exit $rc)" \
	test "$rc" -eq 3 -a -n "$(grep "fail the game's no-attack criterion" "$TMP/vj.json")"

# Journalist with a population table: 40,000 generated patients are the
# population, their first 5,000 the released sample; SP = 1/F.
P=$TMP/pop
"$CDSGATE" sample generate --out "$P" --records 40000 --seed 12 >/dev/null
head -n 5001 "$P/patients.csv" > "$TMP/sample5k.csv"
anonp() {	# anonp NAME ARGS...: the 5,000-row sample, the population's hierarchies
	local n=$1; shift
	"$CDSGATE" deid anonymize --data "$TMP/sample5k.csv" --hierarchies "$P" \
		--qi "$QI" --identifying patient_id,name --sensitive diagnosis \
		--insensitive length_of_stay --output "$TMP/$n.csv" --report "$TMP/$n.json" "$@" > "$TMP/$n.out"
}
check "no-attack, journalist, population table runs" \
	anonp nap --game no-attack --game-risk journalist --population-table "$P/patients.csv"
check "the report names the table and the SP source; nothing attacked" \
	python3 - "$TMP/nap.json" "$P/patients.csv" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
g = r["game"]
assert g["sp_source"] == "population table", g
assert g["population_table"] == {"file": sys.argv[2], "rows": 40000, "absent_records": 0}, g
assert g["attacked_records"] == 0 and r["gate"]["verdict"] == "passed", (g, r["gate"])
assert r["verified"]["population_table_rows"] == 40000, r["verified"]
assert any("population table" in l for l in r["explanation"]), r["explanation"]
PY
check "the readable summary says where SP came from" \
	grep -q '^game (no-attack, journalist, SP from the population table): ' "$TMP/nap.out"
check "every released class has > Gain/Cost = 75 population records, counted from the files" \
	python3 - "$TMP/nap.csv" "$TMP/nap.json" "$P" "$QI" <<'PY'
import csv, collections, json, sys
rel, rep, hdir, qi = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4].split(",")
lv = rep["verified"]["levels"]
gen = {}
for q in qi:
    gen[q] = {row[0]: row[lv[q]] for row in csv.reader(open(f"{hdir}/hierarchy_{q}.csv"), delimiter=";") if row}
pop = collections.Counter(tuple(gen[q][r[q]] for q in qi) for r in csv.DictReader(open(f"{hdir}/patients.csv")))
released = collections.Counter(tuple(r[q] for q in qi) for r in csv.DictReader(open(rel)))
cls = [k for k in released if set(k) != {"*"}]
assert cls and all(pop[k] > 75 for k in cls), [(k, pop[k]) for k in cls if pop[k] <= 75][:3]
# the estimate would not do: some released class has fewer than 76 sample records
assert min(released[k] for k in cls) < 76, min(released[k] for k in cls)
PY
vp() {	# vp ARGS...: deid verify of the population-table release; exit code in $rc
	rc=0
	"$CDSGATE" deid verify --data "$TMP/nap.csv" --hierarchies "$P" --qi "$QI" \
		--game no-attack --json "$@" > "$TMP/vp.json" 2>&1 || rc=$?
}
vp --game-risk journalist --population-table "$P/patients.csv"
check "deid verify with the population table agrees (exit $rc)" \
	test "$rc" -eq 0 -a "$(json "$TMP/vp.json" '(j["unreleasable_records"], j["attacked_records"], j["population_table_rows"])')" = "(0, 0, 40000)"
vp
check "the same table fails the prosecutor's No-Attack (exit $rc)" test "$rc" -eq 3
awk -F, 'NR == 7 { OFS = ","; $5 = "ZIPX" } 1' "$P/patients.csv" > "$TMP/badpop.csv"
rc=0
anonp badp --game no-attack --game-risk journalist --population-table "$TMP/badpop.csv" 2> "$TMP/err" || rc=$?
check "a population value not in its hierarchy: exit 2 naming badpop.csv:7:5 (exit $rc)" \
	test "$rc" -eq 2 -a -n "$(grep -F "badpop.csv:7:5:" "$TMP/err")"
vp --game-risk journalist --population-table "$TMP/badpop.csv"
check "deid verify names it too (exit $rc)" \
	test "$rc" -eq 2 -a -n "$(grep -F "badpop.csv:7:5:" "$TMP/vp.json")"
# The population without 100 of the sample's rows: their classes fail
# closed (SP = 1); the payout variant still releases them at a loss.
(head -n 1 "$P/patients.csv"; tail -n +102 "$P/patients.csv") > "$TMP/popless.csv"
check "payout, journalist, a population lacking 100 sample rows runs" \
	anonp pl --game payout --game-risk journalist --population-table "$TMP/popless.csv"
check "the report warns of the absent classes; verify counts the same" \
	python3 - "$TMP/pl.json" "$TMP/pl.out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
pt, v = r["game"]["population_table"], r["verified"]
assert pt["rows"] == 39900 and pt["absent_records"] > 0, pt
assert v["population_absent_records"] == pt["absent_records"], (v, pt)
assert any("population table lacks" in w and "SP = 1" in w for w in r["warnings"]), r["warnings"]
assert "population table lacks" in open(sys.argv[2]).read()
PY
rc=0
"$CDSGATE" deid assess --data "$TMP/sample5k.csv" --qi "$QI" --population 4e6 --game no-attack \
	--game-risk journalist --population-table "$P/patients.csv" > /dev/null 2> "$TMP/err" || rc=$?
check "deid assess refuses --population-table (exit $rc)" \
	test "$rc" -eq 2 -a -n "$(grep -F "assess takes no --population-table" "$TMP/err")"

bad() {	# bad DESC PATTERN ARGS...
	local d=$1 pat=$2 rc=0; shift 2
	"$CDSGATE" deid anonymize --data "$S/patients.csv" --hierarchies "$S" \
		--qi "$QI" --json "$@" > /dev/null 2> "$TMP/err" || rc=$?
	check "$d: exit 2 naming it" test "$rc" -eq 2 -a -n "$(grep -- "$pat" "$TMP/err")"
}
bad "--game bogus" "--game: payout, no-attack" --game bogus
bad "a negative cost" "game cost" --game no-attack --game-cost -4
bad "a zero benefit" "game benefit" --game payout --game-benefit 0
bad "a gain that is not a number" "not a number" --game payout --game-gain lots
bad "no criterion at all" "no privacy criterion" --game off
bad "journalist without a population" "journalist needs" --game no-attack --game-risk journalist
bad "a population table without the journalist" "population-table is the game's journalist's" \
	--game no-attack --population-table "$P/patients.csv"
bad "--game-risk bogus" "prosecutor or journalist" --game no-attack --game-risk bogus

done_testing
