#!/usr/bin/env bash
# 078-guide-custodian: docs/guide-custodian.md stays true.  Its console
# blocks run as written (tests/regress/guide.py), in one shell in an
# empty directory, against a real `cdsgated serve` with sessions: every
# command exits with the status the guide gives (0 unless an `echo $?`
# follows) and prints every line the guide shows.  Then the files the
# guide says it wrote are there, and what it says it did was done.
. "$(dirname "$0")/lib.sh"

CDSGATED=$top_builddir/cdsgated
[ -x "$CDSGATED" ] || skip_all "cdsgated not built"
serve_require
serve_fixture		# $D, $SOCK (CDSGATE_SOCKET), the backend or $NOSESS
[ -z "$NOSESS" ] || skip_all "the guide starts a session: $NOSESS"
CONF=$D/serve.json
write_config "$CONF"
trap 'stop_pid $SRV_PID; stop_pid $BE_PID; rm -rf "$TMP"' EXIT
check "cdsgated serve starts" start_serve

W=$TMP/custodian
mkdir -p "$W" && chmod 0711 "$W"
export PATH=$top_builddir:$PATH
run_guide "$top_srcdir/docs/guide-custodian.md" "$W"
check "the guide has its commands ($guide_run run, $guide_skipped not)" \
	test "$guide_run" -ge 20 -a "$guide_skipped" = 0

for f in gate/patients.csv released.csv report.json report.html patients.html; do
	check "  it wrote $f" test -s "$W/$f"
done
check "  the HTML report is one" grep -qi '<html' "$W/patients.html"
state() { sqlite3 "$D/state/store.db" "select state from $1 where $2"; }
check "  dataset 1 is mounted" test "$(state datasets 'id = 1')" = mounted
check "  dataset 3 (the failed one) is gone" test -z "$(state datasets 'id = 3')"
check "  the session is revoked" test "$(state sessions "recipient = 'alice'")" = revoked
"$CDSGATE" audit verify "$D/audit/audit.log" --key "$D/audit.pub" --no-recordings \
	> "$D/verify.out" 2>&1
check "  and the audit log verifies (exit $?)" test "$?" -eq 0
done_testing
