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

CDSGATED=$top_builddir/cdsgated
VNCTEST=${VNCTEST:-$top_builddir/tests/gateway/cdsgate-vnctest}
SRV_PID=
BE_PID=

serve_prereqs() {
	local c u
	[ -x "$CDSGATED" ] || skip_all "cdsgated not built"
	[ "$(id -u)" -eq 0 ] || skip_all "needs root (the parent spawns root supervisors)"
	for c in curl sqlite3 python3; do
		command -v $c >/dev/null || skip_all "$c not installed"
	done
	for u in cdsgate-api cdsgate-audit; do
		getent passwd $u >/dev/null || skip_all "user $u missing (./dev creates it)"
	done
}

serve_dirs() {
	D=$TMP/srv
	chmod 0711 "$TMP"
	mkdir -p "$D/state" "$D/audit" "$D/mnt" "$D/in"
	chown cdsgate-api: "$D/state" "$D/mnt"
	"$CDSGATE" audit keygen --private "$D/audit/key.pem" --public "$D/audit.pub"
	chown -R cdsgate-audit: "$D/audit" && chmod 0700 "$D/audit"
	SOCK=$D/api.sock
	export CDSGATE_SOCKET=$SOCK
	PORT0=$(free_port)
	CONF=$D/serve.json
	trap 'kill $SRV_PID $BE_PID 2>/dev/null; sleep 1; rm -rf "$TMP"' EXIT
}

serve_backend() {
	NOSESS=
	BACKEND_URL=http://127.0.0.1:9/
	[ -x "$VNCTEST" ] || NOSESS="cdsgate-vnctest not built"
	command -v Xvfb >/dev/null || NOSESS="Xvfb not installed"
	[ -x /usr/lib/chromium/chromium ] || NOSESS="chromium not installed"
	[ -z "$NOSESS" ] || return 0
	python3 "$top_srcdir/tests/gateway/backend.py" --port 0 --record "$D/events.jsonl" \
		> "$D/backend.out" 2> "$D/backend.err" &
	BE_PID=$!
	if wait_line "$D/backend.out" '^ready ' 10 "$BE_PID"; then
		BACKEND_URL="http://$(sed -n 's/^ready //p' "$D/backend.out")/"
	else
		NOSESS="the test backend did not start"
	fi
}

serve_config() {
	cat > "$CONF" <<JSON
{
  "socket": "$SOCK",
  "store": "$D/state/store.db",
  "state_dir": "$D/state",
  "mount_dir": "$D/mnt",
  "audit_log": "$D/audit/audit.log",
  "audit_key": "$D/audit/key.pem",
  "cdsgate": "$CDSGATE",
  "secrets_dir": "$D/secrets",
  "backend_url": "${BACKEND_URL:-http://127.0.0.1:9/}",
  "session_address": "127.0.0.1",
  "session_ports": "$PORT0-$((PORT0 + 20))"${1:+,
  $1}
}
JSON
	chmod 0644 "$CONF"
}

serve_start() {
	"$CDSGATED" serve --config "$CONF" > "$D/out" 2> "$D/err" &
	SRV_PID=$!
	wait_line "$D/out" '^ready ' 15 "$SRV_PID"
}

api() {
	local out
	out=$(printf '%s' "${3-}" | curl -s -w '\n%{http_code}' --unix-socket "$SOCK" \
		-X "$1" ${3:+-H 'Content-Type: application/json' --data-binary @-} "http://cdsgate$2")
	printf '%s' "${out%$'\n'*}" > "$D/resp"
	echo "${out##*$'\n'}"
}

dump() { sqlite3 "$D/state/store.db" .dump; }

# import_passed [NAME]: sample data through the gate (k=5: passes); $DS its id.
import_passed() {
	"$CDSGATE" sample generate --out "$D/in" --records 2000 --seed 11 > /dev/null
	chmod -R go-rwx "$D/in"
	"$CDSGATE" dataset import "$D/in/patients.csv" --name "${1:-patients}" \
		--qi age,sex,zip,race,admission_date --identifying patient_id,name \
		--hierarchies "$D/in" --k 5 --suppression-limit 0.05 --json > "$D/imp.json" 2> "$D/imp.err"
	DS=$(json "$D/imp.json" 'j["id"]')
}
