#!/usr/bin/env bash
# 001-deid-hostile: every kind of bad input to `cdsgate deid anonymize`
# exits 2 with a message naming the problem, writes nothing (no output,
# no report, no temporary file) and never crashes (run it under
# ./dev sanitize for ASan/UBSan).
. "$(dirname "$0")/lib.sh"

[ -x "$CDSGATE" ] || skip_all "cdsgate not built at $CDSGATE"

H=$TMP/h
mkdir -p "$H"
printf 'a;x;*\nb;x;*\nc;y;*\n' > "$H/hierarchy_q.csv"
printf '1;*\n2;*\n' > "$H/hierarchy_r.csv"

# expect NAME PATTERN DATAFILE [extra args...]: exit 2, stderr matches
# PATTERN, and the output directory stays empty.
expect() {
	local name=$1 pat=$2 data=$3; shift 3
	local out=$TMP/out.$tap_n rc=0
	mkdir -p "$out"
	"$CDSGATE" deid anonymize --data "$data" --qi q,r --hierarchies "$H" \
		--k 2 --output "$out/o.csv" --report "$out/r.json" "$@" \
		>"$TMP/stdout" 2>"$TMP/stderr" || rc=$?
	if [ $rc -ne 2 ]; then
		not_ok "$name: exit $rc, want 2"; diag "$(head -c 600 "$TMP/stderr")"
	elif ! grep -q -E -- "$pat" "$TMP/stderr"; then
		not_ok "$name: message does not match /$pat/"
		diag "$(head -c 600 "$TMP/stderr")"
	elif [ -n "$(ls -A "$out")" ]; then
		not_ok "$name: wrote files: $(ls -A "$out")"
	else
		ok "$name: exit 2, \"$(head -n1 "$TMP/stderr" | cut -c1-110)\""
	fi
}

d=$TMP/d
: > "$d.empty"
expect "empty file" "empty" "$d.empty"
printf 'q;r\n' > "$d.header"
expect "header only" "no records" "$d.header"
printf 'q;r\na;1\nb\n' > "$d.ragged"
expect "ragged row" ":3.*fields" "$d.ragged"
printf 'q;r\na;1\nzz;2\n' > "$d.missing"
expect "value missing from hierarchy" ':3.*"zz".*not in its hierarchy' "$d.missing"
{ printf 'q;r\na;'; head -c 1048576 /dev/zero | tr '\0' '1'; printf '\n'; } > "$d.bigfield"
expect "1 MB field" ":2.*longer than" "$d.bigfield"
printf 'q;r\na;1\nb\0;2\n' > "$d.nul"
expect "NUL byte" ":3.*NUL" "$d.nul"
printf 'q;r\na;1\nb\xff;2\n' > "$d.utf8"
expect "invalid UTF-8 (0xff)" ":3.*UTF-8" "$d.utf8"
printf 'q;r\na;1\nb\xc0\xaf;2\n' > "$d.overlong"
expect "invalid UTF-8 (overlong)" ":3.*UTF-8" "$d.overlong"
printf 'q;q\na;1\n' > "$d.dup"
expect "duplicate column names" "duplicate column" "$d.dup"
printf 'q;r\n"a;1\n' > "$d.quote"
expect "unterminated quote" "unterminated" "$d.quote"
printf 'q;r\na;1\n' > "$d.ok"
expect "unknown quasi-identifier" 'no column named "nope"' "$d.ok" --qi q,nope
mkdir -p "$TMP/h2"; cp "$H/hierarchy_q.csv" "$TMP/h2/"
expect "missing hierarchy" 'no hierarchy for quasi-identifier "r"' "$d.ok" --hierarchies "$TMP/h2"
printf 'a;x;*\nb;x;*\nc;y\n' > "$TMP/h.ragged"
expect "ragged hierarchy" "h.ragged:3" "$d.ok" --hierarchy q="$TMP/h.ragged"
printf 'a;x;*\nb;x;*\na;y;*\n' > "$TMP/h.dupleaf"
expect "duplicate leaf in hierarchy" "h.dupleaf:3.*\"a\"" "$d.ok" --hierarchy q="$TMP/h.dupleaf"
printf 'a;x;A\nb;x;B\nc;y;B\n' > "$TMP/h.incons"
expect "inconsistent hierarchy" "h.incons:2.*\"x\"" "$d.ok" --hierarchy q="$TMP/h.incons"
: > "$TMP/h.empty"
expect "empty hierarchy" "h.empty.*empty" "$d.ok" --hierarchy q="$TMP/h.empty"
expect "missing data file" "no-such-file" "$TMP/no-such-file.csv"
expect "bad --k" "--k" "$d.ok" --k 1.5
expect "bad --pu-threshold" "pu-threshold" "$d.ok" --pu-threshold 2 --population 1000
expect "--pu-threshold without --population" "population" "$d.ok" --pu-threshold 0.01
expect "unknown option" "unknown" "$d.ok" --frobnicate

done_testing
