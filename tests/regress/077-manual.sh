#!/usr/bin/env bash
# 077-manual: the manual is true and readable.  The man pages lint clean
# under mandoc and render with man -l; cdsgated.conf(5) lists every key
# `cdsgated serve -T` prints, and no other; every line of every
# `cdsgate ... --help` is at most 80 columns and each exits 0; the bash
# completion offers nouns, verbs and a command's options from the
# command table; `make install` puts the pages and the completion where
# man and bash-completion look.
. "$(dirname "$0")/lib.sh"

CDSGATED=$top_builddir/cdsgated
MAN="$top_srcdir/man/cdsgate.1 $top_srcdir/man/cdsgated.8 $top_builddir/man/cdsgated.conf.5"
for p in $MAN; do
	check "$(basename "$p") exists" test -s "$p"
done

# Lint: nothing at all but references to pages not installed here, and
# those must be ours.
if command -v mandoc >/dev/null; then
	for p in $MAN; do
		mandoc -Tlint "$p" > "$TMP/lint" 2>&1
		others=$(grep -v 'referenced manual not found' "$TMP/lint")
		check "mandoc -Tlint $(basename "$p") is clean ($others)" test -z "$others"
		for x in $(grep -o 'Xr [a-z.]* [0-9]' "$TMP/lint" | awk '{print $2 "." $3}'); do
			check "  its reference $x is one of our pages" \
				test -e "$top_srcdir/man/$x" -o -e "$top_builddir/man/$x"
		done
	done
else
	skip "mandoc not installed (./dev installs it): no lint"
fi
if command -v man >/dev/null; then
	for p in $MAN; do
		MANWIDTH=80 man -l "$p" > "$TMP/render" 2> "$TMP/render.err"
		rc=$?
		check "man -l $(basename "$p") renders (exit $rc, $(wc -l < "$TMP/render") lines)" \
			test "$rc" -eq 0 -a -s "$TMP/render" -a ! -s "$TMP/render.err"
		check "  with NAME, SYNOPSIS and DESCRIPTION" eval \
			"grep -q '^NAME' '$TMP/render' && grep -q '^SYNOPSIS' '$TMP/render' && grep -q '^DESCRIPTION' '$TMP/render'"
	done
else
	skip "man not installed: pages not rendered"
fi

# cdsgate(1) names every command of the table (a new one must be added).
MANWIDTH=200 man -l "$top_srcdir/man/cdsgate.1" > "$TMP/cdsgate.txt" 2>/dev/null
missing=
for n in $("$CDSGATE" --complete); do
	verbs=$("$CDSGATE" --complete "$n" | grep -v '^--')
	for v in ${verbs:-""}; do
		grep -Eq "^ +$n( .*)?( |\|)${v:-}( |$)" "$TMP/cdsgate.txt" ||
			grep -Eq "^ +$n $v" "$TMP/cdsgate.txt" || missing="$missing $n $v,"
	done
done
check "cdsgate(1) describes every command (missing:${missing:- none})" test -z "$missing"

# The config page's keys are the daemon's: -T prints every key.
printf '{"backend_url": "http://127.0.0.1:9/"}\n' > "$TMP/c.json"
chmod 0644 "$TMP/c.json"
"$CDSGATED" serve -T --config "$TMP/c.json" > "$TMP/eff.json"
python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))))' \
	"$TMP/eff.json" | sort > "$TMP/keys.daemon"
sed -n 's/^\.It Ic \([a-z_]*\) .*/\1/p' "$top_builddir/man/cdsgated.conf.5" | sort > "$TMP/keys.man"
check "cdsgated.conf(5) documents the $(wc -l < "$TMP/keys.daemon") keys of serve -T" \
	test -s "$TMP/keys.daemon" -a "$(wc -l < "$TMP/keys.daemon")" -ge 20
check "  exactly ($(diff "$TMP/keys.daemon" "$TMP/keys.man" | tr '\n' ' '))" \
	cmp -s "$TMP/keys.daemon" "$TMP/keys.man"

# --help: every command's, every noun's and the whole one, <= 80 columns.
helps=("--help" "help")
for n in $("$CDSGATE" --complete); do
	helps+=("$n --help")
	for v in $("$CDSGATE" --complete "$n" | grep -v '^--'); do
		helps+=("$n $v --help")
	done
done
long=0 bad=0
for h in "${helps[@]}"; do
	# shellcheck disable=SC2086
	"$CDSGATE" $h > "$TMP/h" 2>&1 || { bad=$((bad + 1)); diag "cdsgate $h: exit $?"; }
	n=$(awk 'length > 80' "$TMP/h" | wc -l)
	[ -s "$TMP/h" ] || bad=$((bad + 1))
	[ "$n" -eq 0 ] || { long=$((long + n)); diag "cdsgate $h: $n lines over 80"; }
done
check "${#helps[@]} --help outputs exit 0 and print something ($bad did not)" test "$bad" -eq 0
check "  no line of them is over 80 columns ($long are)" test "$long" -eq 0
check "cdsgate dataset import --help is that command's usage" eval \
	"'$CDSGATE' dataset import --help | grep -q '^  cdsgate dataset import FILE --name NAME' && \
	 ! '$CDSGATE' dataset import --help | grep -q 'dataset list'"
check "cdsgated --help is at most 80 columns" eval \
	"'$CDSGATED' --help | awk 'length > 80 { exit 1 }'"
check "cdsgated api --help prints its usage and exits 0" eval \
	"'$CDSGATED' api --help > '$TMP/h' 2>&1 && grep -q '^usage: cdsgated api ' '$TMP/h'"

# The bash completion, as bash runs it.
comp() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1));
		_cdsgate; [ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}"' \
		comp "$top_srcdir/completion/cdsgate" "$CDSGATE" "$@" | sort | tr '\n' ' '
}
got=$(comp da)
check "completion: 'da' gives dataset ($got)" test "$got" = "dataset "
got=$(comp dataset im)
check "completion: 'dataset im' gives import ($got)" test "$got" = "import "
got=$(comp dataset import --hie)
check "completion: 'dataset import --hie' gives its options ($got)" \
	test "$got" = "--hierarchies --hierarchy "
got=$(comp --api https://x:1 session revoke --j)
check "completion: past the global options too ($got)" test "$got" = "--json "
got=$(comp dataset import pat)
check "completion: a file argument is left to bash ($got)" test -z "$got"
got=$(comp replay --inf)
check "completion: a noun without verbs ($got)" test "$got" = "--info "

# make install: the pages under man/manN, the completion where bash looks.
if make -s -C "$top_builddir" install-man install-dist_bashcompletionDATA \
	DESTDIR="$TMP/inst" > "$TMP/inst.log" 2>&1; then
	for p in man1/cdsgate.1 man5/cdsgated.conf.5 man8/cdsgated.8; do
		check "make install: $p" test -n "$(find "$TMP/inst" -path "*/man/$p")"
	done
	check "make install: the bash completion" \
		test -n "$(find "$TMP/inst" -path '*/bash-completion/completions/cdsgate')"
else
	not_ok "make install of the manual ($(tail -3 "$TMP/inst.log"))"
fi
done_testing
