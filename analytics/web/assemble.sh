#!/bin/sh
# analytics/web/assemble.sh SRC DEST — the static dir cdsgate-analytics
# serves: the app (index.html, app.js, app.css) and, from SRC/node_modules
# (`npm ci`, run by ./dev), the perspective packages' dist/{cdn,css,wasm}
# as DEST/<package>/... (source maps and type files left out).  Idempotent
# and quiet; without node_modules it says so and assembles the app only.
set -eu
src=$1 dest=$2
mkdir -p "$dest"
for f in index.html app.js app.css; do
	cmp -s "$src/$f" "$dest/$f" 2>/dev/null || cp "$src/$f" "$dest/$f"
done
nm=$src/node_modules/@finos
if [ ! -d "$nm/perspective/dist/cdn" ]; then
	echo "assemble.sh: $nm missing: run 'npm ci' in $src (./dev build does);" \
		"the analytics app will not load" >&2
	exit 0
fi
for pkg in perspective perspective-viewer perspective-viewer-datagrid \
    perspective-viewer-d3fc; do
	for sub in cdn css wasm; do
		[ -d "$nm/$pkg/dist/$sub" ] || continue
		mkdir -p "$dest/$pkg/$sub"
		(cd "$nm/$pkg/dist/$sub" && find . -type f ! -name '*.map' \
			! -name '*.d.ts' -print) | while read -r f; do
			t="$dest/$pkg/$sub/$f"
			[ "$t" -nt "$nm/$pkg/dist/$sub/$f" ] && continue
			mkdir -p "$(dirname "$t")"
			cp "$nm/$pkg/dist/$sub/$f" "$t"
		done
	done
done
chmod -R a+rX "$dest"
