# tests/regress/lib-serve.sh — `cdsgated serve` on a temporary config for
# the API scenarios (038, 039, 037).  Source after lib.sh.
#
#   serve_prereqs          skip_all unless root, cdsgated, curl, sqlite3,
#                          python3 and the cdsgate-api/-audit users
#   serve_dirs             $D with state/ audit/ mnt/ in/, an audit key,
#                          $SOCK exported as CDSGATE_SOCKET
#   serve_backend          the test web backend, or $NOSESS says why not
#   serve_config [JSON]    $CONF, extra members appended
#   serve_start            start it; 0 once the api is ready
#   api METHOD PATH [BODY] status on stdout, body in $D/resp (as root)
#   dump                   the store's SQL dump
#   session_new            a session for alice on $DS: $SCODE, $SID, $VADDR

CDSGATED=$top_builddir/cdsgated
VNCTEST=${VNCTEST:-$top_builddir/tests/gateway/cdsgate-vnctest}
SRV_PID=
BE_PID=

serve_prereqs() {
	[ -x "$CDSGATED" ] || skip_all "cdsgated not built"
	serve_require
}

# lib.sh's serve_dirs_make, with $CONF and a clean-up at exit.
serve_dirs() {
	serve_dirs_make
	CONF=$D/serve.json
	trap 'kill $SRV_PID $BE_PID 2>/dev/null; sleep 1; rm -rf "$TMP"' EXIT
}

# serve_backend: lib.sh's.

# The config and the start are lib.sh's (write_config, start_serve).
serve_config() { write_config "$CONF" "${1-}"; }
serve_start() { start_serve; }

api() {
	local out
	out=$(printf '%s' "${3-}" | curl -s -w '\n%{http_code}' --unix-socket "$SOCK" \
		-X "$1" ${3:+-H 'Content-Type: application/json' --data-binary @-} "http://cdsgate$2")
	printf '%s' "${out%$'\n'*}" > "$D/resp"
	echo "${out##*$'\n'}"
}

dump() { sqlite3 "$D/state/store.db" .dump; }

# import_passed [NAME [SEED [RECORDS]]]: sample data (seed 11, 2000
# records) through the gate (k=5: passes); $DS its id.
import_passed() {
	"$CDSGATE" sample generate --out "$D/in" --records "${3:-2000}" --seed "${2:-11}" > /dev/null
	chmod -R go-rwx "$D/in"
	"$CDSGATE" dataset import "$D/in/patients.csv" --name "${1:-patients}" \
		--qi age,sex,zip,race,admission_date --identifying patient_id,name \
		--sensitive diagnosis --insensitive length_of_stay \
		--hierarchies "$D/in" --k 5 --suppression-limit 0.05 --json > "$D/imp.json" 2> "$D/imp.err"
	DS=$(json "$D/imp.json" 'j["id"]')
}

# session_new [RECIPIENT]: POST /v1/sessions for RECIPIENT (alice) on $DS;
# the status in $SCODE, the reply in $D/s.json, the secret in $D/s.pw,
# the id in $SID and the VNC address (host:port) in $VADDR.
session_new() {
	SCODE=$(api POST /v1/sessions "{\"recipient\": \"${1:-alice}\", \"dataset\": $DS}")
	cp "$D/resp" "$D/s.json"
	[ "$SCODE" = 201 ] || return 1
	SID=$(json "$D/s.json" 'j["id"]')
	json "$D/s.json" 'j["secret"]' > "$D/s.pw"
	VADDR=$(json "$D/s.json" 'j["vnc"]')
}
