#!/usr/bin/env bash
# 037-api-badinput: every route of the admin API, taken from its own
# route table (`cdsgated api --list-routes`), gets bad JSON, a body over
# the limit, each field with a wrong type, an unknown field, unknown ids
# and callers that may not (nobody; the auditor on custodian routes):
# each answer is a 4xx JSON error, and afterwards the store's SQL dump
# and the audit log are byte-identical to before.  The cases
# are made by tests/regress/badinput.py; a route it has no example for
# fails the test.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-serve.sh"

serve_prereqs
command -v setpriv >/dev/null || skip_all "setpriv not installed"
AUD_GID=$(getent group cdsgate-auditor | cut -d: -f3)
[ -n "$AUD_GID" ] || skip_all "group cdsgate-auditor missing (./dev creates it)"
serve_dirs
serve_config
check "cdsgated serve starts" serve_start || { diag "$(tail -5 "$D/err")"; done_testing; exit 1; }

# Something to be wrong about: a recipient and a dataset that passed.
"$CDSGATE" recipient add alice --name Alice > /dev/null
import_passed patients
check "a recipient and a dataset exist (dataset $DS)" test -n "$DS"
python3 -c 'import sys; open(sys.argv[1], "w").write("{\"a\": \"" + "x" * (1 << 20) + "\"}")' "$D/big.json"

BEFORE_DUMP=$(dump)
BEFORE_SPOOL=$(ls -A "$D/state/spool")
BEFORE_AUDIT=$(sha256sum < "$D/audit/audit.log")
python3 "$top_srcdir/tests/regress/badinput.py" "$CDSGATED" "$SOCK" "$D/big.json" \
	"$DS" "$AUD_GID" > "$D/cases.out" 2> "$D/cases.err"; rc=$?
check "the case generator ran (exit $rc$( [ -s "$D/cases.err" ] && echo ": $(tail -1 "$D/cases.err")"))" test "$rc" -eq 0
while read -r verdict rest; do
	case $verdict in
	PASS) ok "$rest" ;;
	FAIL) not_ok "$rest" ;;
	ROUTES) NROUTES=$rest ;;
	esac
done < "$D/cases.out"
NCASES=$(grep -c '^PASS\|^FAIL' "$D/cases.out")
diag "$NCASES bad requests over ${NROUTES:-0} routes"
NLISTED=$("$CDSGATED" api --list-routes | wc -l)
check "every route in the table was covered (${NROUTES:-0} of $NLISTED)" \
	test "${NROUTES:-0}" -eq "$NLISTED"
check "the store's SQL dump is byte-identical after all of them" test "$BEFORE_DUMP" = "$(dump)"
check "the audit log is byte-identical after all of them" test "$BEFORE_AUDIT" = "$(sha256sum < "$D/audit/audit.log")"
check "nothing new in the upload spool" test "$BEFORE_SPOOL" = "$(ls -A "$D/state/spool")"

kill -TERM "$SRV_PID"; wait "$SRV_PID"; rc=$?; SRV_PID=
check "SIGTERM: exit 0 (exit $rc)" test "$rc" -eq 0
done_testing
