#!/usr/bin/env bash
# 025-deid-worker: `cdsgate deid assess|anonymize` parse the untrusted CSV
# in a confined child (cli/deid-worker.c).  Proves, with the real CLI:
#   1. the results are the same as parsing in the CLI process itself
#      (hidden --in-process), byte for byte where no clock is involved;
#   2. the live worker runs under seccomp (Seccomp: 2), with NoNewPrivs,
#      as user cdsgate (when run as root), with its rlimits, holding only
#      the descriptors it was handed;
#   3. a forbidden syscall (test hook CDSGATE_TEST_VIOLATE=socket|open|
#      execve after the filter is loaded) kills it with SIGSYS: the CLI
#      says so, exits 1, and leaves no output, report or temp file; a
#      message it may not send (=ipc) makes the parent kill it;
#   4. malformed input comes back through the IPC path as the usual
#      file:line message with exit 2;
#   5. a worker killed with SIGKILL mid-run leaves no output; a CLI killed
#      with SIGKILL takes its worker with it;
#   6. run by an unprivileged user it is confined the same way.
. "$(dirname "$0")/lib.sh"

[ -x "$CDSGATE" ] || skip_all "cdsgate not built at $CDSGATE"
command -v python3 >/dev/null || skip_all "python3 not installed"
CONFIG_H=$top_builddir/config.h
have() { grep -q "^#define $1 1" "$CONFIG_H" 2>/dev/null; }

S=$TMP/s
QI=age,sex,zip,race,admission_date
"$CDSGATE" sample generate --out "$S" --records 3000 --seed 11 >/dev/null
anon() {	# anon OUTDIR [args...]
	local o=$1; shift
	mkdir -p "$o"
	"$CDSGATE" deid anonymize --data "$S/patients.csv" --hierarchies "$S" \
		--qi "$QI" --identifying patient_id,name --sensitive diagnosis \
		--insensitive length_of_stay \
		--k 5 --pu-threshold 0.01 --population 4.031e6 \
		--output "$o/out.csv" --report "$o/r.json" "$@"
}
# no_files DIR: nothing at all in it (no output, report or temp file).
no_files() { [ -z "$(ls -A "$1")" ]; }
# gone PID: exited (reaped, or a zombie waiting for init).
gone() { [ ! -e "/proc/$1" ] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

# ---- 1. same results as in-process ----------------------------------------
rc=0; anon "$TMP/w" > "$TMP/w.stdout" 2>"$TMP/w.err" || rc=$?
check "anonymize through the worker passes the gate (exit 0)" test "$rc" -eq 0
rc=0; anon "$TMP/n" --in-process > "$TMP/n.stdout" 2>/dev/null || rc=$?
check "the same in-process (--in-process) (exit 0)" test "$rc" -eq 0
check "released table is byte-identical" cmp -s "$TMP/w/out.csv" "$TMP/n/out.csv"
check "reports agree on everything but clocks and thread timing" python3 - "$TMP/w/r.json" "$TMP/n/r.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for r in (a, b):	# clocks, and a counter that depends on thread timing
    for k in ("elapsed_ms", "search_ms", "verify_ms", "cpu_ms",
              "verify_cpu_ms"):
        r.pop(k)
    r["lattice"].pop("rollups")
    r["output"] = r["output"].rsplit("/", 1)[1]
assert a == b, (a, b)
PY
check "summaries agree but for the timing line" cmp -s \
	<(grep -v '^lattice:' "$TMP/w.stdout") <(grep -v '^lattice:' "$TMP/n.stdout")
check "the worker run printed nothing on stderr" test ! -s "$TMP/w.err"
"$CDSGATE" deid assess --data "$S/patients.csv" --qi "$QI" --population 1e6 \
	--population 4e7 --json > "$TMP/a.w" 2>&1
"$CDSGATE" deid assess --data "$S/patients.csv" --qi "$QI" --population 1e6 \
	--population 4e7 --json --in-process > "$TMP/a.n" 2>&1
check "assess --json is byte-identical ($(wc -c < "$TMP/a.w") bytes)" \
	cmp -s "$TMP/a.w" "$TMP/a.n"
"$CDSGATE" deid assess --data "$S/patients.csv" --qi age,sex --population 1e6 > "$TMP/t.w"
"$CDSGATE" deid assess --data "$S/patients.csv" --qi age,sex --population 1e6 --in-process > "$TMP/t.n"
check "assess summary is byte-identical" cmp -s "$TMP/t.w" "$TMP/t.n"
rc=0; anon "$TMP/j" --json > "$TMP/j.stdout" || rc=$?
check "anonymize --json prints exactly the report file" \
	cmp -s <(cat "$TMP/j/r.json"; echo) "$TMP/j.stdout"

# ---- 2. the live worker ------------------------------------------------------
B=$TMP/big
"$CDSGATE" sample generate --out "$B" --records 400000 --seed 5 >/dev/null
big() {	# big OUTDIR: a long anonymize in the background; pid in $cli
	mkdir -p "$1"
	"$CDSGATE" deid anonymize --data "$B/patients.csv" --hierarchies "$B" \
		--qi "$QI" --identifying patient_id,name --sensitive diagnosis \
		--insensitive length_of_stay --k 5 --output "$1/out.csv" --report "$1/r.json" >/dev/null 2>"$1.err" &
	cli=$!
}
# confined_child CLI: wait until the CLI's child has loaded its filter;
# prints the child's pid.
confined_child() {
	local c
	for _ in $(seq 500); do
		c=$(pgrep -P "$1" | head -n1)
		if [ -n "$c" ] && grep -q '^Seccomp:[[:space:]]*2' "/proc/$c/status" 2>/dev/null; then
			echo "$c"; return 0
		fi
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.01
	done
	return 1
}
if ! have HAVE_SECCOMP; then
	skip "live worker checks: built --with-sandbox=none"
else
	big "$TMP/live"
	if w=$(confined_child "$cli"); then
		st=$(cat "/proc/$w/status"); lim=$(cat "/proc/$w/limits")
		fds=$(ls -l "/proc/$w/fd" 2>/dev/null | awk 'NR > 1 {print $NF}' | sort | tr '\n' ' ')
		ok "the worker ($w) is a child of the CLI ($cli) and runs under seccomp (Seccomp: 2)"
		check "NoNewPrivs: 1" grep -q '^NoNewPrivs:[[:space:]]*1' <<<"$st"
		if [ "$(id -u)" -eq 0 ] && id cdsgate >/dev/null 2>&1; then
			u=$(id -u cdsgate)
			check "run as root, the worker runs as cdsgate (uid $u)" \
				grep -qE "^Uid:[[:space:]]+$u[[:space:]]+$u[[:space:]]+$u[[:space:]]+$u\$" <<<"$st"
		else
			skip "privilege drop: not root, or no user cdsgate"
		fi
		check "no core files (RLIMIT_CORE 0)" grep -qE '^Max core file size +0 +0 ' <<<"$lim"
		check "few descriptors (RLIMIT_NOFILE $(awk '/Max open files/ {print $4}' <<<"$lim"))" \
			test "$(awk '/Max open files/ {print $4}' <<<"$lim")" -le 16
		diag "worker fds: $fds"
		check "it holds only /dev/null, stderr, its socket and the handed-over files" \
			python3 - "$fds" "$B" "$TMP/live" <<'PY'
import sys
fds, data, out = sys.argv[1].split(), sys.argv[2], sys.argv[3]
for f in fds:
    assert (f == "/dev/null" or f == out + ".err" or f.startswith("socket:")
            or f.startswith(data + "/") or f.startswith(out + "/out.csv.tmp.")), f
assert sum(f.startswith("socket:") for f in fds) == 1, "one socket, to the parent"
PY
	else
		not_ok "no confined worker appeared under the CLI ($cli)"
	fi
	rc=0; wait "$cli" || rc=$?
	check "the big run finishes (exit $rc)" test "$rc" -eq 0 -o "$rc" -eq 3
fi

# ---- 3. a forbidden syscall kills the worker --------------------------------
if ! have HAVE_SECCOMP || ! have ENABLE_TEST_HOOKS; then
	skip "seccomp violation: needs --with-sandbox=seccomp and --enable-test-hooks"
else
	for call in socket open execve; do
		o=$TMP/v-$call; rc=0
		CDSGATE_TEST_VIOLATE=$call anon "$o" >/dev/null 2>"$o.err" || rc=$?
		if [ "$rc" -eq 1 ] && grep -q 'deid worker killed by signal 31 (SIGSYS: seccomp violation?)' "$o.err" &&
		    no_files "$o"; then
			ok "$call() in the worker: SIGSYS, exit 1, no output/report/temp file"
		else
			not_ok "$call() in the worker: exit $rc, files: $(ls -A "$o")"
			diag "$(cat "$o.err")"
		fi
	done
	rc=0; CDSGATE_TEST_VIOLATE=socket "$CDSGATE" deid assess --data "$S/patients.csv" \
		--qi "$QI" --population 1e6 >"$TMP/va.out" 2>"$TMP/va.err" || rc=$?
	check "assess: the same (exit $rc), nothing printed on stdout" \
		test "$rc" -eq 1 -a ! -s "$TMP/va.out"
	check "assess names the signal" grep -q 'signal 31 (SIGSYS' "$TMP/va.err"
	o=$TMP/v-ipc; rc=0
	CDSGATE_TEST_VIOLATE=ipc anon "$o" >/dev/null 2>"$o.err" || rc=$?
	check "a worker sending a parent-only message is killed (exit $rc)" \
		grep -q 'deid worker broke the protocol (message type not permitted from this peer): killed' "$o.err"
	check "  and leaves nothing" no_files "$o"
	o=$TMP/v-debug; rc=0
	CDSGATE_TEST_VIOLATE=socket anon "$o" --sandbox-debug >/dev/null 2>"$o.err" || rc=$?
	check "--sandbox-debug reports the syscall by name instead (exit $rc)" \
		test "$rc" -eq 1 -a -n "$(grep 'syscall .*(socket)' "$o.err")"
	check "and also leaves nothing" no_files "$o"
fi

# ---- 4. bad input through the IPC path ---------------------------------------
printf 'age,sex,zip,race,admission_date\n34,m,12345,w,2020-01-01\n35,f\n' > "$TMP/ragged.csv"
mkdir -p "$TMP/bad"; rc=0
"$CDSGATE" deid anonymize --data "$TMP/ragged.csv" --hierarchies "$S" --qi "$QI" --k 2 \
	--output "$TMP/bad/o.csv" --report "$TMP/bad/r.json" >/dev/null 2>"$TMP/bad.err" || rc=$?
check "a ragged row: exit 2 (got $rc)" test "$rc" -eq 2
check "  with the file:line message from the worker" \
	grep -q "^cdsgate: $TMP/ragged.csv:3.*fields" "$TMP/bad.err"
check "  and no files" no_files "$TMP/bad"
printf 'age,sex,zip,race,admission_date\n34,m,12345,w,2020-01-01\n3\0335\033[2J,f,1,w,2020-01-01\n' > "$TMP/esc.csv"
rc=0
"$CDSGATE" deid anonymize --data "$TMP/esc.csv" --hierarchies "$S" --qi "$QI" --k 2 \
	--output "$TMP/bad/o.csv" --report "$TMP/bad/r.json" >/dev/null 2>"$TMP/esc.err" || rc=$?
check "a value with terminal escapes: exit 2, shown as \\x1b, never sent raw" \
	test "$rc" -eq 2 -a -n "$(grep -F '3\x1b5\x1b[2J' "$TMP/esc.err")" -a \
	-z "$(tr -d '\n' < "$TMP/esc.err" | tr -d '[:print:]')"
mkfifo "$TMP/bad/hierarchy_race.csv.fifo"
rc=0
"$CDSGATE" deid assess --data "$S/patients.csv" --qi "$QI" --population 1e6 \
	--hierarchy race="$TMP/bad/hierarchy_race.csv.fifo" >/dev/null 2>"$TMP/fifo.err" || rc=$?
check "a FIFO as hierarchy: exit 2, refused, never read (got $rc)" \
	test "$rc" -eq 2 -a -n "$(grep 'not a regular file' "$TMP/fifo.err")"
rc=0
"$CDSGATE" deid assess --data "$TMP" --qi "$QI" --population 1e6 >/dev/null 2>"$TMP/dir.err" || rc=$?
check "a directory as data: exit 2 from the parent (got $rc)" \
	test "$rc" -eq 2 -a -n "$(grep 'Is a directory' "$TMP/dir.err")"

# ---- 5. killed mid-run -------------------------------------------------------
if ! have HAVE_SECCOMP; then
	skip "kill mid-run: built --with-sandbox=none"
else
	big "$TMP/k9"
	if w=$(confined_child "$cli"); then
		kill -KILL "$w"
		rc=0; wait "$cli" || rc=$?
		check "worker SIGKILLed mid-run: the CLI exits 1 (got $rc)" test "$rc" -eq 1
		check "  saying so" grep -q 'deid worker killed by signal 9 (SIGKILL' "$TMP/k9.err"
		check "  and leaves no output, report or temp file" no_files "$TMP/k9"
	else
		not_ok "no worker to kill"; wait "$cli"
	fi
	big "$TMP/kp"
	if w=$(confined_child "$cli"); then
		kill -KILL "$cli"; wait "$cli" 2>/dev/null
		for _ in $(seq 100); do gone "$w" && break; sleep 0.05; done
		check "the CLI SIGKILLed: its worker dies with it (PDEATHSIG)" gone "$w"
		check "  and no output was renamed into place" test ! -e "$TMP/kp/out.csv"
		rm -f "$TMP"/kp/*.tmp.*	# the dead CLI could not clean up
	else
		not_ok "no worker for the parent-kill check"; wait "$cli"
	fi
fi

# ---- 6. an unprivileged custodian ------------------------------------------
nobody() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"; }
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null || ! id nobody >/dev/null 2>&1; then
	skip "unprivileged run: needs root, setpriv and user nobody to switch to"
elif ! nobody test -x "$CDSGATE"; then
	skip "unprivileged run: user nobody cannot run $CDSGATE"
else
	U=$(mktemp -d "${TMPDIR:-/tmp}/cdsgate-025u.XXXXXX")
	trap 'rm -rf "$TMP" "$U"' EXIT
	cp -r "$S" "$U/s" && chmod -R a+rX "$U" && chmod a+w "$U"
	rc=0
	(cd "$U" && nobody "$CDSGATE" deid anonymize --data s/patients.csv --hierarchies s \
		--qi "$QI" --identifying patient_id,name --sensitive diagnosis \
		--insensitive length_of_stay \
		--k 5 --pu-threshold 0.01 --population 4.031e6 \
		--output out.csv --report r.json >/dev/null 2>"$TMP/u.err") || rc=$?
	check "as user nobody (no privileges to drop) the worker still runs (exit $rc)" \
		test "$rc" -eq 0
	check "  with the same released table" cmp -s "$U/out.csv" "$TMP/w/out.csv"
	if have HAVE_SECCOMP && have ENABLE_TEST_HOOKS; then
		rc=0
		(cd "$U" && CDSGATE_TEST_VIOLATE=open nobody "$CDSGATE" deid assess \
			--data s/patients.csv --qi age --population 1e6 >/dev/null 2>"$TMP/u2.err") || rc=$?
		check "  and under its filter: open() kills it (exit $rc)" \
			test "$rc" -eq 1 -a -n "$(grep 'signal 31 (SIGSYS' "$TMP/u2.err")"
	fi
	rm -rf "$U"
fi

done_testing
