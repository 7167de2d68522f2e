#!/bin/bash
# tests/regress/084-replay-worker.sh — `cdsgate replay` reads the
# recording only in its worker (cli/replay-worker.c), under the REPLAY
# seccomp profile:
#   1. a corrupt recording is refused by the worker's answer, naming the
#      file and the offset, for every action (nothing else is printed);
#   2. while --serve runs, the worker (the CLI's child) has Seccomp: 2,
#      and so does the CLI, which then only waits;
#   3. --keys still prints (the worker's stdout is the CLI's);
#   4. a forbidden syscall in the worker (test hook) kills it with
#      SIGSYS, and the CLI says so and fails; a worker that sends a
#      message only the CLI may send is killed by the CLI.
. "$(dirname "$0")/lib.sh"

RB=$top_builddir/bench/recording/record-bench
[ -x "$CDSGATE" ] || skip_all "cdsgate not built at $CDSGATE"
[ -x "$RB" ] || skip_all "record-bench not built at $RB"
CONFIG_H=$top_builddir/config.h
have() { grep -q "^#define $1 1" "$CONFIG_H" 2>/dev/null; }

REC=$TMP/s.rec
check "record-bench writes a 4 s session" quiet "$RB" --seconds 4 \
	--out "$REC" --text 'abc'

# ---- 1. corrupt: refused with file and offset, by every action ----
cp "$REC" "$TMP/bad.rec"
printf 'X' | dd of="$TMP/bad.rec" bs=1 seek=30 conv=notrunc 2>/dev/null
for act in --info --keys --events "--frame 1 -o $TMP/x.png" \
	"--export $TMP/x.mp4"; do
	rc=0
	# shellcheck disable=SC2086
	"$CDSGATE" replay "$TMP/bad.rec" $act >"$TMP/out" 2>"$TMP/err" || rc=$?
	if [ "$rc" = 2 ] &&
	    grep -q "^cdsgate: $TMP/bad.rec: .*header chunk at offset 0: CRC mismatch" "$TMP/err" &&
	    [ ! -s "$TMP/out" ] && [ ! -e "$TMP/x.png" ] && [ ! -e "$TMP/x.mp4" ]; then
		ok "corrupt header, ${act%% *}: exit 2, file and offset named, nothing written"
	else
		not_ok "corrupt header, ${act%% *}: rc $rc: $(cat "$TMP/err")"
	fi
done

# ---- 3. the worker's output is the CLI's ----
check "--keys: the worker prints the typed text" sh -c \
	"'$CDSGATE' replay '$REC' --keys 2>/dev/null | grep -qx abc"

# ---- 2. --serve: the worker is filtered ----
port=$(free_port)
echo 'pw-084' >"$TMP/pw"
"$CDSGATE" replay "$REC" --serve "127.0.0.1:$port" --password-file "$TMP/pw" \
	>"$TMP/serve.out" 2>&1 &
spid=$!
if wait_line "$TMP/serve.out" '^serving on' 10 "$spid"; then
	wpid=$(cat "/proc/$spid/task/$spid/children" 2>/dev/null | awk '{print $1}')
	if [ -n "$wpid" ] && grep -q '^Seccomp:[[:space:]]*2' "/proc/$wpid/status"; then
		ok "--serve: the worker (pid $wpid) runs filtered (Seccomp: 2)"
	else
		not_ok "--serve: worker '${wpid:-none}' not filtered: $(grep Seccomp "/proc/$wpid/status" 2>&1)"
	fi
	check "--serve: the CLI, only waiting now, is filtered too" \
		grep -q '^Seccomp:[[:space:]]*2' "/proc/$spid/status"
	stop "$spid"
	check "--serve: the worker ends with the CLI" sh -c \
		"for i in \$(seq 50); do kill -0 $wpid 2>/dev/null || exit 0; sleep 0.1; done; exit 1"
else
	not_ok "--serve did not start: $(cat "$TMP/serve.out")"
	stop "$spid"
fi

# ---- 4. a violation kills the worker, and the CLI says so ----
if ! have HAVE_SECCOMP || ! have ENABLE_TEST_HOOKS; then
	skip "seccomp violation: needs --with-sandbox=seccomp and --enable-test-hooks"
else
	# open, socket, execve: the filter kills it; ipc: a message only the
	# CLI may send, and the CLI kills it
	for call in open socket execve ipc; do
		want='replay worker killed by signal 31 (SIGSYS)'
		[ "$call" = ipc ] && want='replay worker broke the protocol (.*): killed'
		rc=0
		CDSGATE_TEST_VIOLATE=$call timeout 20 "$CDSGATE" replay "$REC" \
			--events >"$TMP/out" 2>"$TMP/err" || rc=$?
		if [ "$rc" = 1 ] && grep -q "$want" "$TMP/err" && [ ! -s "$TMP/out" ]; then
			ok "CDSGATE_TEST_VIOLATE=$call: the worker is killed ($want), the CLI fails"
		else
			not_ok "CDSGATE_TEST_VIOLATE=$call: rc $rc: $(cat "$TMP/err")"
		fi
	done
fi

done_testing
