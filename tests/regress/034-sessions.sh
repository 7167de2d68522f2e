#!/usr/bin/env bash
# 034-sessions: `cdsgated serve --config FILE`, the root parent.  Its
# config is checked strictly (-n, -T, unsafe modes and unknown keys
# refused); it binds the API socket and forks the api child (which drops
# to cdsgate-api); a dead api child makes it stop everything and exit
# non-zero; SIGTERM makes it exit 0 with an audit log that verifies.
. "$(dirname "$0")/lib.sh"

CDSGATED=$top_builddir/cdsgated
[ -x "$CDSGATED" ] || skip_all "cdsgated not built"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (the parent spawns root supervisors)"
for c in curl sqlite3 python3; do
	command -v $c >/dev/null || skip_all "$c not installed"
done
for u in cdsgate-api cdsgate-audit; do
	getent passwd $u >/dev/null || skip_all "user $u missing (./dev creates it)"
done

D=$TMP/srv
chmod 0711 "$TMP"
mkdir -p "$D/state" "$D/audit" "$D/mnt" "$D/in"
chown cdsgate-api: "$D/state" "$D/mnt"
"$CDSGATE" audit keygen --private "$D/audit/key.pem" --public "$D/audit.pub"
chown -R cdsgate-audit: "$D/audit" && chmod 0700 "$D/audit"
SOCK=$D/api.sock
export CDSGATE_SOCKET=$SOCK
PORT0=$(free_port)
BACKEND_URL=${BACKEND_URL:-http://127.0.0.1:9/}

# write_config FILE [EXTRA-JSON-MEMBERS]
write_config() {
	cat > "$1" <<JSON
{
  "socket": "$SOCK",
  "store": "$D/state/store.db",
  "state_dir": "$D/state",
  "mount_dir": "$D/mnt",
  "audit_log": "$D/audit/audit.log",
  "audit_key": "$D/audit/key.pem",
  "cdsgate": "$CDSGATE",
  "secrets_dir": "$D/secrets",
  "backend_url": "$BACKEND_URL",
  "session_address": "127.0.0.1",
  "session_ports": "$PORT0-$((PORT0 + 20))"${2:+,
  $2}
}
JSON
	chmod 0644 "$1"
}
CONF=$D/serve.json
write_config "$CONF"

SRV_PID=
start_serve() {
	"$CDSGATED" serve --config "$CONF" > "$D/out" 2> "$D/err" &
	SRV_PID=$!
	wait_line "$D/out" '^ready ' 15 "$SRV_PID"
}
trap 'kill $SRV_PID 2>/dev/null; sleep 0.5; rm -rf "$TMP"' EXIT
api_pid() { pgrep -P "$SRV_PID" -u cdsgate-api | head -1; }

# ---- the config ----
"$CDSGATED" serve -n --config "$CONF" > "$D/n.out" 2>&1; rc=$?
check "serve -n accepts the config (exit $rc)" sh -c "[ $rc -eq 0 ] && grep -q 'configuration ok' '$D/n.out'"
"$CDSGATED" serve -T --config "$CONF" > "$D/T.out" 2>&1; rc=$?
check "serve -T prints the effective config as JSON, defaults filled in" python3 - "$D/T.out" "$SOCK" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
assert c["socket"] == sys.argv[2], c
assert c["session_expires_default"] == 3600 and c["session_expires_max"] == 604800, c
assert c["tls_cert"] is None and c["session_address"] == "127.0.0.1", c
PY
chmod 0664 "$CONF"
"$CDSGATED" serve -n --config "$CONF" > "$D/gw.out" 2>&1; rc=$?
check "a group-writable config is refused (exit $rc)" sh -c "[ $rc -eq 2 ] && grep -q 'group/world-writable' '$D/gw.out'"
write_config "$D/bad1.json" '"sesion_ports": "1-2"'
"$CDSGATED" serve -n --config "$D/bad1.json" > "$D/bad1.out" 2>&1; rc=$?
check "an unknown key is refused (exit $rc)" sh -c "[ $rc -eq 2 ] && grep -q 'unknown key \"sesion_ports\"' '$D/bad1.out'"
write_config "$D/bad2.json" '"session_expires_max": 0'
"$CDSGATED" serve -n --config "$D/bad2.json" > "$D/bad2.out" 2>&1; rc=$?
check "a value out of range is refused (exit $rc)" sh -c "[ $rc -eq 2 ] && grep -q 'out of range' '$D/bad2.out'"
write_config "$D/bad3.json" '"tls_cert": "/nonexistent.pem"'
"$CDSGATED" serve -n --config "$D/bad3.json" > "$D/bad3.out" 2>&1; rc=$?
check "tls_cert without tls_key is refused (exit $rc)" sh -c "[ $rc -eq 2 ] && grep -q 'go together' '$D/bad3.out'"
echo '{"socket": ' > "$D/bad4.json"
"$CDSGATED" serve -n --config "$D/bad4.json" > "$D/bad4.out" 2>&1; rc=$?
check "malformed JSON is refused with line:column (exit $rc)" sh -c "[ $rc -eq 2 ] && grep -q 'bad4.json:[0-9]*:[0-9]*:' '$D/bad4.out'"
chmod 0644 "$CONF"

# ---- the parent and its api child ----
check "cdsgated serve starts; the api prints ready" start_serve
APID=$(api_pid)
check "the api child runs as cdsgate-api, the parent as root" \
	sh -c "[ -n '$APID' ] && [ \"\$(stat -c %U /proc/$SRV_PID)\" = root ]"
check "GET /v1/health answers through the parent's socket" \
	sh -c "curl -sf --unix-socket '$SOCK' http://cdsgate/v1/health | grep -q ok"
check "the secrets dir is root's, 0700" test "$(stat -c '%U %a' "$D/secrets")" = "root 700"

#@SESSIONS@

# ---- a dead api child: the parent fails closed ----
kill -9 "$(api_pid)"
wait "$SRV_PID"; rc=$?
check "kill -9 of the api child: the parent exits non-zero (exit $rc)" test "$rc" -ne 0
check "and says why" grep -q 'the api.*stopping every session' "$D/err"
# the api, its key holder and the parent all have the parent's command line
left() { pgrep -f "^[^ ]*cdsgated serve --config $CONF"; }
sleep 0.5
LEFT=$(left | tr '\n' ' ')
check "and nothing of it is left (api, key holder, parent: '$LEFT')" test -z "$LEFT"

# ---- SIGTERM: stop everything, exit 0, the audit log verifies ----
check "cdsgated serve starts again" start_serve
kill -TERM "$SRV_PID"; wait "$SRV_PID"; rc=$?
SRV_PID=
check "SIGTERM: the parent exits 0 (exit $rc)" test "$rc" -eq 0
check "the API socket is gone" test ! -e "$SOCK"
"$CDSGATE" audit verify "$D/audit/audit.log" --key "$D/audit.pub" > "$D/verify.out"; rc=$?
check "the audit log verifies ($(cat "$D/verify.out"))" test "$rc" -eq 0

done_testing
