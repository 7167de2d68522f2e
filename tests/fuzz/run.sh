#!/bin/sh
# tests/fuzz/run.sh — run libFuzzer targets for a bounded time each
# (`make fuzz` in a --enable-fuzzing build directory).
#
#   run.sh SRCDIR SECONDS TARGET...
#
# Each target starts from its seed corpus, SRCDIR/tests/fuzz/corpus/NAME
# (read only), and grows a working corpus in fuzz-corpus/NAME; a crash,
# leak, timeout or sanitizer report is kept in fuzz-crash/ and fails the
# run.  SRCDIR/tests/fuzz/NAME.options, when there is one, adds libFuzzer
# flags for that target (one per line, # comments).  One line per target:
# runs, seconds, working corpus size.
set -u
src=$1 secs=$2
shift 2
mkdir -p fuzz-corpus fuzz-crash
rc=0
for t in "$@"; do
	name=$(basename "$t")
	seeds=$src/tests/fuzz/corpus/$name
	work=fuzz-corpus/$name
	log=fuzz-crash/$name.log
	mkdir -p "$work"
	flags=
	[ -f "$src/tests/fuzz/$name.options" ] &&
		flags=$(sed 's/#.*//' "$src/tests/fuzz/$name.options")
	set -- "$work"
	[ -d "$seeds" ] && set -- "$work" "$seeds"
	if "$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="fuzz-crash/$name-" \
		$flags "$@" >"$log" 2>&1; then
		status=ok
	else
		status="FAILED (fuzz-crash/$name.log)"
		rc=1
	fi
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	[ "$status" = ok ] && rm -f "$log"
	nseeds=0
	[ -d "$seeds" ] && nseeds=$(ls "$seeds" | wc -l)
	printf '%-20s %s: %s runs in %s s, corpus %s files (%s seeds)\n' \
		"$name" "$status" "${runs:-?}" "$secs" "$(ls "$work" | wc -l)" \
		"$nseeds"
done
exit $rc
