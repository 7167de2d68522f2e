#!/bin/sh
# tools/libdeps.sh — the link-time dependency graph of the built libraries.
#
#   tools/libdeps.sh [BUILDDIR]        (default: .; `make deps` runs it)
#
# Reads the symbols of every convenience library (DIR/libNAME.a) under
# BUILDDIR with nm: library A needs library B when A leaves a symbol
# undefined that B defines.  Prints one line per edge with a few of the
# symbols, then, for each program built in BUILDDIR, the libraries whose
# code it holds (a global symbol of the library is defined in the
# program), then the libraries in link order (each before those it needs).
# Exits 1 if the graph has a cycle (printing it), 2 on a usage error.
# It reads what the linker sees, not Makefile.am: a call added across a
# layer shows up here whatever the link lines say.
set -eu

b=${1:-.}
[ -d "$b" ] || { echo "libdeps: $b: not a directory" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libdeps.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The libraries, as DIR/libNAME.a relative to BUILDDIR.
(cd "$b" && find . -mindepth 2 -maxdepth 2 -name 'lib*.a' | sed 's|^\./||' |
	LC_ALL=C sort) > "$tmp/libs"
[ -s "$tmp/libs" ] || { echo "libdeps: no DIR/lib*.a under $b (not built?)" >&2; exit 2; }

# "symbol library" for every global definition and every undefined use.
while read -r lib; do
	nm -P -g --defined-only "$b/$lib" 2>/dev/null |
		awk -v l="$lib" 'NF >= 2 && $2 ~ /^[TDBRCVWGS]$/ { print $1, l }'
	nm -P -g -u "$b/$lib" 2>/dev/null | awk -v l="$lib" 'NF >= 2 { print $1, l }' \
		>> "$tmp/undef"
done < "$tmp/libs" | LC_ALL=C sort -u > "$tmp/def"
touch "$tmp/undef"

# Edges "user provider symbol", one per symbol, without self-edges.
awk 'FNR == NR { if (!($1 in d)) d[$1] = $2; next }
	($1 in d) && d[$1] != $2 { print $2, d[$1], $1 }' \
	"$tmp/def" "$tmp/undef" | LC_ALL=C sort -u > "$tmp/edges"

echo "# library -> library it needs (some of the symbols)"
awk '{ k = $1 " -> " $2; n[k]++; if (n[k] <= 3) s[k] = s[k] (n[k] > 1 ? " " : "") $3 }
	END { for (k in n) printf "%s (%s%s)\n", k, s[k], (n[k] > 3 ? " ..." : "") }' \
	"$tmp/edges" | LC_ALL=C sort

echo "# program: the libraries whose code it holds"
for p in cdsgated cdsgate cdsgate-analytics; do
	[ -x "$b/$p" ] || continue
	nm -P -g --defined-only "$b/$p" 2>/dev/null | awk '{ print $1 }' |
		LC_ALL=C sort -u > "$tmp/prog"
	held=$(awk '{ print $2, $1 }' "$tmp/def" | LC_ALL=C sort -k2,2 |
		LC_ALL=C join -1 2 -2 1 -o 1.1 - "$tmp/prog" | LC_ALL=C sort -u |
		tr '\n' ' ')
	echo "$p: ${held% }"
done

echo "# link order (each library before those it needs)"
awk '{ print $1, $2 }' "$tmp/edges" | LC_ALL=C sort -u > "$tmp/pairs"
# libraries nothing needs and that need nothing are still listed
awk '{ print $1, $1 }' "$tmp/libs" >> "$tmp/pairs"
if ! tsort "$tmp/pairs" > "$tmp/order" 2> "$tmp/loop"; then
	echo "libdeps: cycle between libraries:" >&2
	sed -n 's/^tsort: //p' "$tmp/loop" | grep -v 'input contains a loop' >&2 || true
	exit 1
fi
tr '\n' ' ' < "$tmp/order" | sed 's/ $//'
echo
echo "# no cycle: $(wc -l < "$tmp/libs") libraries, $(grep -cv '^\(.*\) \1$' \
	"$tmp/pairs") edges"
