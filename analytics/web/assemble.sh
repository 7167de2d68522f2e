#!/bin/sh
# analytics/web/assemble.sh SRC DEST — the static dir cdsgate-analytics
# serves: the app (index.html, app.js, app.css) and the perspective
# packages' dist/{cdn,css,wasm} as DEST/<package>/... (source maps and
# type files left out).  The packages come from SRC/node_modules (`npm ci`,
# run by ./dev) or, in a release tarball, from SRC/vendor (made by `make
# dist`, see below).  Idempotent and quiet; with neither it says so and
# assembles the app only.
#
# analytics/web/assemble.sh --vendor SRC DEST — for `make dist`: only the
# packages (and each one's Apache-2.0 LICENSE.md), as DEST/<package>/...,
# so that a tarball builds the whole front end without npm (from a
# tarball's own vendor copy, a `make dist` there keeps it).  Fails with
# neither: a tarball must not silently lack the app.
set -eu
vendor=0
if [ "${1:-}" = --vendor ]; then
	vendor=1
	shift
fi
src=$1 dest=$2
pkgs="perspective perspective-viewer perspective-viewer-datagrid perspective-viewer-d3fc"
mkdir -p "$dest"
if [ $vendor -eq 0 ]; then
	for f in index.html app.js app.css; do
		cmp -s "$src/$f" "$dest/$f" 2>/dev/null || cp "$src/$f" "$dest/$f"
	done
fi
nm=$src/node_modules/@finos
# from PKG SUB: where the package's files for SUB are, or nothing.
# lic PKG: its licence file.
if [ -d "$nm/perspective/dist/cdn" ]; then
	from() { echo "$nm/$1/dist/$2"; }
	lic() { echo "$nm/$1/LICENSE.md"; }
elif [ -d "$src/vendor/perspective/cdn" ]; then
	from() { echo "$src/vendor/$1/$2"; }
	lic() { echo "$src/vendor/$1/LICENSE.md"; }
elif [ $vendor -eq 1 ]; then
	echo "assemble.sh: $nm missing: run 'npm ci' in $src (./dev build" \
		"does) before make dist" >&2
	exit 1
else
	echo "assemble.sh: $nm missing: run 'npm ci' in $src (./dev build does);" \
		"the analytics app will not load" >&2
	exit 0
fi
for pkg in $pkgs; do
	if [ $vendor -eq 1 ]; then
		mkdir -p "$dest/$pkg"
		cp "$(lic "$pkg")" "$dest/$pkg/LICENSE.md"
	fi
	for sub in cdn css wasm; do
		d=$(from "$pkg" "$sub")
		[ -d "$d" ] || continue
		mkdir -p "$dest/$pkg/$sub"
		(cd "$d" && find . -type f ! -name '*.map' ! -name '*.d.ts' \
			-print) | while read -r f; do
			t="$dest/$pkg/$sub/$f"
			[ "$t" -nt "$d/$f" ] && continue
			mkdir -p "$(dirname "$t")"
			cp "$d/$f" "$t"
		done
	done
done
chmod -R a+rX "$dest"
