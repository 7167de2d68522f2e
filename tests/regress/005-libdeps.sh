#!/usr/bin/env bash
# 005-libdeps: the libraries' link-time graph (tools/libdeps.sh, `make
# deps`) has no cycle and its layers point one way: the control plane
# (control/) is only in cdsgated; api/ needs nothing of the gateway; the
# session supervisor needs the children's library, never the reverse;
# the CLI holds the RFB screen helper but no gateway, supervisor or
# control code.  And the script does fail on a cycle.
. "$(dirname "$0")/lib.sh"

script=$top_srcdir/tools/libdeps.sh
b=$top_builddir
command -v nm >/dev/null || skip_all "no nm (binutils)"
[ -f "$b/control/libcontrol.a" ] || skip_all "not built: $b/control/libcontrol.a"

out=$(sh "$script" "$b" 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/# /'
check "libdeps.sh finds no cycle in the build (exit $rc)" test "$rc" -eq 0
not() { ! "$@"; }
has() { printf '%s\n' "$out" | grep -q -- "$1"; }
check "it prints the edges (control needs api)" has '^control/libcontrol.a -> api/libapi.a '
check "... and the link order" has '^# no cycle: '

edge() { printf '%s\n' "$out" | grep -q "^$1 -> $2 "; }
for l in control/libcontrol.a supervisor/libsupervisor.a gateway/libgateway.a; do
	check "api/ needs nothing of $l" not edge api/libapi.a "$l"
done
check "the supervisor needs the children's library" \
	edge supervisor/libsupervisor.a gateway/libgateway.a
for l in control/libcontrol.a supervisor/libsupervisor.a; do
	check "gateway/ (the children) needs nothing of $l" \
		not edge gateway/libgateway.a "$l"
done
check "the supervisor needs nothing of control/" \
	not edge supervisor/libsupervisor.a control/libcontrol.a

holds() { printf '%s\n' "$out" | grep "^$1: " | tr ' ' '\n' | grep -qx "$2"; }
check "cdsgated holds the control plane" holds cdsgated control/libcontrol.a
for p in cdsgate cdsgate-analytics; do
	for l in control/libcontrol.a supervisor/libsupervisor.a gateway/libgateway.a; do
		check "$p holds nothing of $l" not holds "$p" "$l"
	done
done
check "cdsgate holds the RFB screen helper" holds cdsgate gateway/libvncscreen.a

# The script itself: two libraries that call each other are a cycle.
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
mkdir -p "$t/x" "$t/y" "$t/z"
echo 'int b(int); int a(int n) { return n ? b(n - 1) : 0; }' > "$t/a.c"
echo 'int a(int); int b(int n) { return n ? a(n - 1) : 1; }' > "$t/b.c"
echo 'int a(int); int c(int n) { return a(n); }' > "$t/c.c"
for f in a b c; do ${CC:-cc} -c -o "$t/$f.o" "$t/$f.c"; done
ar cr "$t/x/liba.a" "$t/a.o"; ar cr "$t/y/libb.a" "$t/b.o"; ar cr "$t/z/libc.a" "$t/c.o"
cyc=$(sh "$script" "$t" 2>&1); rc=$?
printf '%s\n' "$cyc" | sed 's/^/# /'
check "a -> b -> a: the script exits 1 (exit $rc)" test "$rc" -eq 1
check "... and names the cycle" sh -c 'printf "%s\n" "$0" | grep -q "cycle between libraries"' "$cyc"
rm "$t/y/libb.a"; ar cr "$t/y/libb.a" "$t/c.o"
rm "$t/z/libc.a"; echo 'int b(int n) { return n; }' > "$t/b.c"
${CC:-cc} -c -o "$t/b.o" "$t/b.c"; ar cr "$t/z/libc.a" "$t/b.o"
ok=$(sh "$script" "$t" 2>&1); rc=$?
check "without the back edge it passes (exit $rc)" test "$rc" -eq 0
check "... x/liba.a -> z/libc.a" sh -c 'printf "%s\n" "$0" | grep -q "^x/liba.a -> z/libc.a (b)"' "$ok"

done_testing
