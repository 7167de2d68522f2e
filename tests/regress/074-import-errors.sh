#!/usr/bin/env bash
# 074-import-errors: a custodian's own CSV and hierarchies through
# `cdsgate dataset import` and the real daemon, wrong in the ways files
# are wrong: every error names the custodian's file as given on the
# command line (never the daemon's spool), its line and column and the
# column's name; exit codes as `deid anonymize` (2 bad input, 3 gate
# failed); a failed import is listed as failed with its reason, shown,
# never mountable, and removable with its files.
. "$(dirname "$0")/lib.sh"

CDSGATED=$top_builddir/cdsgated
[ -x "$CDSGATED" ] || skip_all "cdsgated not built"
serve_require
serve_dirs_make		# $D with state/ audit/ mnt/, the audit key, $SOCK
mkdir -p "$D/custodian/data" "$D/custodian/hier"

check "the daemon starts" api_start

# The custodian's files, written by hand: 12 visits, two QIs with their
# hierarchies (';'-separated, as ARX writes them).
cd "$D/custodian" || exit 1
{
	echo "visit,age,zip,diagnosis"
	for i in $(seq 12); do
		echo "V$i,$((30 + i % 4)),1000$((i % 2)),J$((i % 3))"
	done
} > data/visits.csv
printf '%s\n' "30;30-34;*" "31;30-34;*" "32;30-34;*" "33;30-34;*" \
	> hier/hierarchy_age.csv
printf '%s\n' "10000;1000*;*" "10001;1000*;*" > hier/hierarchy_zip.csv
CLS="--identifying visit --sensitive diagnosis"

# import NAME FILE ARGS...: run it from the custodian's directory; the
# exit code in $rc, stderr in $D/NAME.err, stdout (JSON) in $D/NAME.json.
import() {
	local name=$1 file=$2; shift 2
	"$CDSGATE" dataset import "$file" --name "$name" "$@" --json \
		> "$D/$name.json" 2> "$D/$name.err"
	rc=$?
}
# said NAME TEXT: the import's stderr has TEXT (fixed string).
said() { grep -qF -- "$2" "$D/$1.err"; }
# state_of NAME: the store's state of the import called NAME.
state_of() { sqlite3 "$D/state/store.db" "select state from datasets where name='$1'"; }
id_of() { sqlite3 "$D/state/store.db" "select id from datasets where name='$1'"; }

import good data/visits.csv --qi age,zip $CLS --hierarchies hier --k 2
check "the well-formed import passes (exit $rc: $(tail -1 "$D/good.err"))" test "$rc" -eq 0

# 1. A malformed row: line 5 lacks its last field.
sed '5s/,J[0-9]$//' data/visits.csv > data/short.csv
import short data/short.csv --qi age,zip $CLS --hierarchies hier --k 2
check "a short row: exit 2 (got $rc)" test "$rc" -eq 2
check "  names data/short.csv:5:4 and the column \"diagnosis\" ($(head -c 300 "$D/short.err"))" \
	said short 'data/short.csv:5:4: record has 3 fields, the header has 4: no value for column 4 "diagnosis"'
check "  the JSON error carries file, line and column" python3 - "$D/short.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))["error"]
assert e["status"] == 422 and e["code"] == "input", e
assert (e["file"], e["line"], e["column"]) == ("data/short.csv", 5, 4), e
PY

# 2. A hierarchy missing a value: age 34 is in the data, not in the file.
sed '7s/^\(V[0-9]*\),3[0-9],/\1,34,/' data/visits.csv > data/age34.csv
import age34 data/age34.csv --qi age,zip $CLS --hierarchy age=hier/hierarchy_age.csv \
	--hierarchy zip=hier/hierarchy_zip.csv --k 2
check "a value missing from its hierarchy: exit 2 (got $rc)" test "$rc" -eq 2
check "  names data/age34.csv:7:2, column \"age\" and hier/hierarchy_age.csv ($(head -c 300 "$D/age34.err"))" \
	said age34 'data/age34.csv:7:2: value "34" of column 2 "age" is not in its hierarchy hier/hierarchy_age.csv'

# ... with a terminal escape in the value: shown, never obeyed.
sed "7s/^\(V[0-9]*\),3[0-9],/\1,3$(printf '\033')[2J,/" data/visits.csv > data/esc.csv
import esc data/esc.csv --qi age,zip $CLS --hierarchies hier --k 2
check "a value with an escape byte: exit 2 (got $rc), shown as \\x1b ($(head -c 200 "$D/esc.err" | cat -v))" \
	sh -c "[ $rc -eq 2 ] && grep -qF 'data/esc.csv:7:2: value \"3\\x1b[2J\" of column 2' '$D/esc.err' &&
	    ! grep -q \"\$(printf '\\033')\" '$D/esc.err' '$D/esc.json'"

# 3. A malformed hierarchy: a row with one level too few.
cp -r hier hier2 && echo "10002;*" >> hier2/hierarchy_zip.csv
import badhier data/visits.csv --qi age,zip $CLS --hierarchies hier2 --k 2
check "a hierarchy row with a level missing: exit 2 (got $rc), naming hier2/hierarchy_zip.csv:3 ($(head -c 300 "$D/badhier.err"))" \
	sh -c "[ $rc -eq 2 ] && grep -qF 'hier2/hierarchy_zip.csv:3: row has 2 columns, expected 3' '$D/badhier.err'"

# 4. An unclassified column.
import uncl data/visits.csv --qi age,zip --identifying visit --hierarchies hier --k 2
check "an unclassified column: exit 2 (got $rc), naming data/visits.csv:1:4 \"diagnosis\" ($(head -c 300 "$D/uncl.err"))" \
	sh -c "[ $rc -eq 2 ] && grep -qF 'data/visits.csv:1:4: column \"diagnosis\" is not classified' '$D/uncl.err'"

# 5. A typo in a QI name: the column is named, not a hierarchy file.
import typo data/visits.csv --qi age,zipcode $CLS --hierarchies hier --k 2
check "a QI that is no column: exit 2 (got $rc), 'no column named \"zipcode\"' ($(head -c 300 "$D/typo.err"))" \
	sh -c "[ $rc -eq 2 ] && grep -qF 'data/visits.csv:1: no column named \"zipcode\" in the header' '$D/typo.err'"

# 6. A file that is not there: refused before anything is uploaded.
n0=$(sqlite3 "$D/state/store.db" 'select count(*) from datasets')
import nofile data/nothere.csv --qi age,zip $CLS --hierarchies hier --k 2
check "a missing file: exit 2 (got $rc), naming it ($(head -c 200 "$D/nofile.err"))" \
	sh -c "[ $rc -eq 2 ] && grep -qF 'data/nothere.csv: No such file or directory' '$D/nofile.err'"
check "  and nothing was stored" test "$(sqlite3 "$D/state/store.db" 'select count(*) from datasets')" = "$n0"

# 7. A gate failure: k = 13 of 12 records with no suppression.
import strict data/visits.csv --qi age,zip $CLS --hierarchies hier --k 13 \
	--suppression-limit 0
check "a failed gate: exit 3 (got $rc)" test "$rc" -eq 3
check "  stored as failed with the gate's reason" \
	test "$(sqlite3 "$D/state/store.db" "select state, reason like '%k = 13%' from datasets where name='strict'")" = "failed|1"

check "no message names the daemon's spool or state directory" \
	sh -c "! cat '$D'/*.err | grep -e spool -e '$D/state'"
for n in short age34 esc badhier uncl typo; do
	check "$n is stored as a failed import whose reason names the custodian's file" \
		test "$(sqlite3 "$D/state/store.db" "select state, reason like 'bad input: data/%' or reason like 'bad input: hier2/%' from datasets where name='$n'")" = "failed|1"
done

# The list shows failed imports as failed, with the reason.
"$CDSGATE" dataset list > "$D/list" 2>&1
check "dataset list shows each failed import as failed, with its reason" \
	sh -c "grep -E '^ *$(id_of short) failed .*short +\(bad input: data/short.csv:5:4: ' '$D/list' >/dev/null &&
	    grep -E '^ *$(id_of strict) failed .*strict +\(Failed, nothing is written: no transformation' '$D/list' >/dev/null"
"$CDSGATE" dataset list --failed --json > "$D/failed.json"
check "dataset list --failed lists the failed imports only" python3 - "$D/failed.json" <<'PY'
import json, sys
names = sorted(d["name"] for d in json.load(open(sys.argv[1]))["datasets"])
assert names == ["age34", "badhier", "esc", "short", "strict", "typo", "uncl"], names
PY
"$CDSGATE" dataset show "$(id_of age34)" > "$D/show" 2>&1
check "dataset show gives the reason" \
	grep -qF 'reason: bad input: data/age34.csv:7:2: value "34" of column 2 "age"' "$D/show"

# Nothing failed is mountable.
for n in short strict uncl; do
	"$CDSGATE" dataset mount "$(id_of $n)" > /dev/null 2>&1; rc=$?
	check "mounting the failed import $n is refused (exit $rc)" test "$rc" -eq 2
done
check "  and nothing reached the mount dir" test -z "$(ls -A "$D/mnt")"

# Removal: the failed import and its files go; a pass cannot be removed.
STRICT=$(id_of strict) SHORT=$(id_of short)
SHORT_SHA=$(sqlite3 "$D/state/store.db" "select raw_sha256 from datasets where id=$SHORT")
check "before: the gate's files of the failed import exist" test -d "$D/state/released/$STRICT"
"$CDSGATE" dataset remove "$STRICT" > "$D/rm.out" 2>&1; rc=$?
check "dataset remove of a failed import (exit $rc: $(cat "$D/rm.out"))" test "$rc" -eq 0
check "  it is gone from the store and its released dir with it" \
	test -z "$(id_of strict)" -a ! -e "$D/state/released/$STRICT"
check "  the uploads a remaining dataset names stay in the spool" \
	test -f "$D/state/spool/$(sqlite3 "$D/state/store.db" "select raw_sha256 from datasets where name='good'")"
"$CDSGATE" dataset remove "$SHORT" > /dev/null 2>&1
check "removing the short-row import removes its upload (no other dataset names it)" \
	test -n "$SHORT_SHA" -a ! -e "$D/state/spool/$SHORT_SHA" -a -z "$(id_of short)"
"$CDSGATE" dataset remove "$(id_of good)" > /dev/null 2> "$D/rmgood.err"; rc=$?
check "a dataset that passed cannot be removed (exit $rc: $(head -c 200 "$D/rmgood.err"))" \
	sh -c "[ $rc -eq 2 ] && grep -q 'only a failed import can be removed' '$D/rmgood.err' && [ '$(state_of good)' = passed ]"
"$CDSGATE" dataset remove 999 > /dev/null 2>&1; rc=$?
check "removing an unknown id: exit 2 (got $rc)" test "$rc" -eq 2
check "the removals are in the audit log" \
	test "$(grep -c '"dataset.remove"' "$D/audit/audit.log")" -ge 2

cd / || exit 1
done_testing
