#!/usr/bin/env bash
# 000-test-lists: every test file in the tree runs in `make check`.
# tests/regress/034-sessions.sh existed for a stop without being in
# REGRESS_TESTS, so CI never ran its 56 checks.  Each tests/regress/NNN-*.sh
# must be in REGRESS_TESTS and each tests/unit/test-*.c a check program
# (UNIT_TESTS) in Makefile.am; and every listed file must exist.
. "$(dirname "$0")/lib.sh"

AM=$top_srcdir/Makefile.am
[ -r "$AM" ] || skip_all "no Makefile.am at $AM (not a source tree)"

# The words of one variable's (backslash-continued) definition.
listed() {
	awk -v v="$1" '
		$0 ~ "^" v " *[+]?= *" { on = 1; sub("^" v " *[+]?= *", "") }
		on { cont = sub(/\\$/, ""); print; if (!cont) on = 0 }
	' "$AM" | tr -s ' \t' '\n\n' | sed '/^$/d'
}

regress=$(listed REGRESS_TESTS)
units=$(listed UNIT_TESTS)	# check_PROGRAMS = $(UNIT_TESTS)
check "REGRESS_TESTS is found and not empty" test -n "$regress"
check "UNIT_TESTS is found and lists unit tests" \
	sh -c 'printf "%s\n" "$0" | grep -q "^tests/unit/test-"' "$units"

for f in "$top_srcdir"/tests/regress/[0-9][0-9][0-9]-*.sh; do
	t=tests/regress/${f##*/}
	check "$t is in REGRESS_TESTS" sh -c 'printf "%s\n" "$1" | grep -qx "$0"' "$t" "$regress"
done
for f in "$top_srcdir"/tests/unit/test-*.c; do
	t=tests/unit/$(basename "$f" .c)
	check "$t is a check program" sh -c 'printf "%s\n" "$1" | grep -qx "$0"' "$t" "$units"
done
for t in $regress; do
	check "listed $t exists" test -f "$top_srcdir/$t"
done

done_testing
