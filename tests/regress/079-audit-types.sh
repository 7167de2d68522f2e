#!/usr/bin/env bash
# 079-audit-types: every record type the daemon writes to the audit log is
# one `cdsgate audit list --type` knows (audit/query.c keeps the list by
# hand: a type added in api/ and not there would make --type refuse it,
# and an auditor could not filter for it).
. "$(dirname "$0")/lib.sh"

CDSGATE=$top_builddir/cdsgate
[ -x "$CDSGATE" ] || skip_all "cdsgate not built"
[ -d "$top_srcdir/api" ] || skip_all "no api/ at $top_srcdir (not a source tree)"

# The types the code writes: the string literals that name one, in the
# files that write records (api/, the key holder's checkpoint).
written=$(grep -ohE '"((dataset|recipient|session)\.[a-z_.]+|record_(closed|expired)|upload|checkpoint)"' \
	"$top_srcdir"/api/*.c "$top_srcdir"/audit/keyholder.c "$top_srcdir"/audit/log.c 2>/dev/null |
	tr -d '"' | sed 's/\.refused$//' | sort -u)
check "the code's record types are found" test "$(printf '%s\n' "$written" | wc -l)" -ge 15

# The types audit list knows: its error for an unknown one lists them.
: > "$TMP/empty.log"
"$CDSGATE" audit list "$TMP/empty.log" --type no-such-type 2> "$TMP/err" >/dev/null
known=$(sed -n 's/.*(known: \(.*\); each also.*/\1/p' "$TMP/err" | tr -d ' ' | tr ',' '\n')
check "audit list names the types it knows" test -n "$known"
for t in $written; do
	check "audit list --type knows $t" sh -c 'printf "%s\n" "$1" | grep -qxF "$0"' "$t" "$known"
done
done_testing
