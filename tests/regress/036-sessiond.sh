#!/usr/bin/env bash
# 036-sessiond: the split of the systemd units (systemd/README.md),
# run for real without systemd as PID 1.
#   - `cdsgated sessiond --socket PATH` (the root helper) runs with
#     cdsgate-sessiond.service's CapabilityBoundingSet and no_new_privs;
#     its socket is the api user's alone (0600)
#   - refused and logged: a connection from another uid (root: SO_PEERCRED;
#     nobody: the socket mode), a second connection while the daemon is
#     connected, and from the api user: garbage, an oversized datagram, a
#     wrong version, a type the api may not send, a wrong size, a START
#     whose strings have no NUL; the helper lives on after each
#   - `cdsgated serve --sessiond PATH` runs with cdsgated.service's
#     bounding set (SETUID SETGID) and no_new_privs; its api connects as
#     cdsgate-api; a session made through the API starts under the helper
#     (a libvncclient picture of the backend's page), a revoke ends it
#   - the decision: killing the daemon ends its sessions (the helper sees
#     its api go and stops them: fail closed); a restarted daemon connects
#     again and the store says the old session ended
#   - SIGTERM to the helper: its sessions stop, it exits 0, its socket is
#     gone, and the daemon (which cannot start sessions any more) exits 1
#   - socket activation as cdsgate-sessiond.socket does it (LISTEN_FDS,
#     through systemd-socket-activate): the same checks on the passed
#     socket; a stream socket or none at all is refused
. "$(dirname "$0")/lib.sh"

CDSGATED=$top_builddir/cdsgated
[ -x "$CDSGATED" ] || skip_all "cdsgated not built"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (the helper spawns root supervisors)"
for c in curl sqlite3 python3 setpriv; do
	command -v $c >/dev/null || skip_all "$c not installed"
done
for u in cdsgate-api cdsgate-audit nobody; do
	getent passwd $u >/dev/null || skip_all "user $u missing (./dev creates it)"
done

serve_fixture	# lib.sh: $D, $SOCK, $PORT0, the backend, $NOSESS
chmod 0755 "$D"	# the probe below runs as cdsgate-api and nobody
SDSOCK=$D/sessiond.sock
CONF=$D/cdsgated.json
write_config "$CONF"

# nbits PID: how many capabilities are in its bounding set.
nbits() {
	python3 -c "print(bin(int('$(awk '/^CapBnd/ {print $2}' "/proc/$1/status")', 16)).count('1'))"
}
SD_CAPS=$(caps cdsgate-sessiond.service.in)
API_CAPS=$(caps cdsgated.service.in)
SD_PID=
SRV_PID=
cleanup() {
	local p
	for p in $SRV_PID $SD_PID $BE_PID; do stop "$p"; done
	rm -rf "$TMP"
}
trap cleanup EXIT

start_sessiond() {
	setpriv --bounding-set "-all,$SD_CAPS" --inh-caps -all --no-new-privs \
		"$CDSGATED" sessiond --config "$CONF" --socket "$SDSOCK" \
		> "$D/sd.out" 2>> "$D/sd.err" &
	SD_PID=$!
	wait_line "$D/sd.out" '^ready ' 10 "$SD_PID"
}
start_serve() {
	: > "$D/out"
	setpriv --bounding-set "-all,$API_CAPS" --inh-caps -all --no-new-privs \
		"$CDSGATED" serve --config "$CONF" --sessiond "$SDSOCK" \
		> "$D/out" 2>> "$D/err" &
	SRV_PID=$!
	wait_line "$D/out" '^ready ' 15 "$SRV_PID"
}
api_pid() { pgrep -P "$SRV_PID" -u cdsgate-api | head -1; }
supervisors() { pgrep -P "$SD_PID" | tr '\n' ' '; }
# tree, alive, gone_ms, banner: lib.sh
state_of() { sqlite3 "$D/state/store.db" "select state from sessions where id='$1'"; }

# The probe: one connection to the helper; sends what it is told and
# prints what became of it ("closed" = the helper hung up on us).
# the protocol version the build speaks (common/ipc.h)
export IPC_V=$(sed -n 's/^#define IPC_VERSION[[:space:]]*\([0-9]*\).*/\1/p' "$top_srcdir/common/ipc.h")
cat > "$D/probe.py" <<'PY'
import os, socket, struct, sys
path, what = sys.argv[1], sys.argv[2]
V, START, STOP, STARTED = int(os.environ["IPC_V"]), 1, 2, 3
def hdr(t, n, v=V): return struct.pack(">III", v, t, n)
def start(id_=b"s1", rcpt=b"alice", nul=True):
    f = lambda s, n: s.ljust(n, b"\0") if nul else s * n
    # struct pipc_start: id, recipient, expires, secret, memory_limit_mb
    # (0: the config's), padding to 8, dataset, pg_role, pg_password
    p = f(id_, 64)[:64] + f(rcpt, 64)[:64] + struct.pack("<q", 0) + f(b"secretsecret", 64)[:64] \
        + struct.pack("<I", 0) + b"\0" * 4 + struct.pack("<q", 1) + b"\0" * 72 + b"\0" * 64
    assert len(p) == 352
    return hdr(START, 352) + p
msgs = {
    "connect": None,
    "garbage": b"hello",
    "oversized": hdr(START, 65536) + b"A" * 65536,
    "version": start()[:0] + hdr(START, 352, v=99) + start()[12:],
    "notpermitted": hdr(STARTED, 132) + b"\0" * 132,
    "size": hdr(STOP, 10) + b"\0" * 10,
    "nonul": start(nul=False),
}
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
try:
    s.connect(path)
except OSError as e:
    print("connect-error", e.errno); sys.exit(0)
if msgs[what] is not None:
    s.send(msgs[what])
s.settimeout(2)
try:
    print("closed" if s.recv(4096) == b"" else "answered")
except socket.timeout:
    print("open")
PY
chmod 0644 "$D/probe.py"
# the probe as another user: the system python (a root-only pyenv shim
# may come first in PATH)
PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3)
as_api() { setpriv --reuid cdsgate-api --regid cdsgate-api --clear-groups "$@"; }

# ---- the helper ----
check "cdsgated sessiond starts with the helper unit's bounding set (${SD_CAPS})" start_sessiond
check "... it runs with exactly those ($(tr ',' '\n' <<< "$SD_CAPS" | wc -l)) and no_new_privs" \
	sh -c "[ $(nbits "$SD_PID") -eq $(tr ',' '\n' <<< "$SD_CAPS" | wc -l) ] && grep -q '^NoNewPrivs:[[:space:]]*1' /proc/$SD_PID/status"
check "its socket is cdsgate-api's alone: $(stat -c '%U %a %F' "$SDSOCK")" \
	test "$(stat -c '%U %a %F' "$SDSOCK")" = "cdsgate-api 600 socket"

# ---- refused connections and requests ----
r=$(python3 "$D/probe.py" "$SDSOCK" connect)
check "root (not the api user) connects and is hung up on at once ($r)" test "$r" = closed
check "... and it is logged with the uid" grep -q 'refused a connection from uid 0 .*only uid' "$D/sd.err"
r=$(setpriv --reuid nobody --regid nogroup --clear-groups $PY "$D/probe.py" "$SDSOCK" connect 2>&1)
check "nobody cannot even connect: the socket's mode ($r)" test "$r" = "connect-error 13"
r=$(as_api $PY "$D/probe.py" "$SDSOCK" connect)
check "the api user connects and is kept ($r)" test "$r" = open
n=0
for probe in garbage:'wrong message size' oversized:'message truncated' \
    version:'protocol version mismatch' notpermitted:'not permitted' \
    size:'wrong message size' nonul:'refused by its handler'; do
	what=${probe%%:*} why=${probe#*:}
	before=$(grep -c "request refused: .*$why" "$D/sd.err")
	r=$(as_api $PY "$D/probe.py" "$SDSOCK" "$what")
	after=$(grep -c "request refused: .*$why" "$D/sd.err")
	check "a request '$what' from the api user is refused, logged ('$why'), the connection dropped ($r)" \
		sh -c "[ '$r' = closed ] && [ $after -gt $before ]"
	n=$((n + 1))
done
check "the helper is still there after $n bad requests, with no session" \
	sh -c "kill -0 $SD_PID && [ -z '$(supervisors)' ]"
sed 's/^/#   /' "$D/sd.err" | tail -4

# ---- the daemon, split ----
"$CDSGATED" serve --config "$CONF" --sessiond "$D/nohelper.sock" > "$D/nohelper.out" 2>&1; rc=$?
check "serve --sessiond without a helper there exits non-zero and says so (exit $rc)" \
	sh -c "[ $rc -ne 0 ] && grep -q 'session helper at $D/nohelper.sock' '$D/nohelper.out' && [ ! -e '$SOCK' ]"
check "cdsgated serve --sessiond starts with the daemon unit's bounding set ($API_CAPS)" start_serve
APID=$(api_pid)
check "the serve parent: exactly those ($(tr ',' '\n' <<< "$API_CAPS" | wc -l)) and no_new_privs" \
	sh -c "[ $(nbits "$SRV_PID") -eq $(tr ',' '\n' <<< "$API_CAPS" | wc -l) ] && grep -q '^NoNewPrivs:[[:space:]]*1' /proc/$SRV_PID/status"
check "its api runs as cdsgate-api, and the helper logged the connection from that uid" \
	sh -c "[ -n '$APID' ] && grep -q \"the daemon connected (uid $(id -u cdsgate-api) pid $APID)\" '$D/sd.err'"
r=$(as_api $PY "$D/probe.py" "$SDSOCK" connect)
check "a second connection, even from the api user, is refused while the daemon is connected ($r)" \
	sh -c "[ '$r' = closed ] && grep -q 'refused a second connection' '$D/sd.err'"
check "the API answers" sh -c "curl -sf --unix-socket '$SOCK' http://cdsgate/v1/health | grep -q ok"
check "serve made no secrets dir (the helper's, root 0700: $(stat -c '%U %a' "$D/secrets" 2>&1))" \
	test "$(stat -c '%U %a' "$D/secrets")" = "root 700"

if [ -n "$NOSESS" ]; then
	skip "sessions through the helper: $NOSESS"
else
"$CDSGATE" recipient add alice --name "Alice" > /dev/null
mount_patients; rc=$?	# lib.sh: sets $DS
check "a dataset is imported and mounted through the split daemon (exit $rc)" test "$rc" -eq 0
t0=$(date +%s%N)
"$CDSGATE" session create --recipient alice --dataset "$DS" --expires-in 600 --json \
	> "$D/s1.json" 2> "$D/s1.err"; rc=$?
diag "session create -> ready through the helper: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
check "a session is created (exit $rc: $(head -c 200 "$D/s1.err"))" test "$rc" -eq 0
SID=$(json "$D/s1.json" 'j["id"]'); VADDR=$(json "$D/s1.json" 'j["vnc"]')
json "$D/s1.json" 'j["secret"]' > "$D/pw"
SUP=$(supervisors)
check "its supervisor is the helper's child, as root; the daemon has no root child" \
	sh -c "[ -n '$SUP' ] && [ \"\$(stat -c %U /proc/${SUP%% *})\" = root ] && [ -z \"\$(pgrep -P $SRV_PID -u root)\" ]"
sleep 3
"$VNCTEST" --host "${VADDR%:*}" --port "${VADDR##*:}" --password-file "$D/pw" snapshot "$D/s1.ppm" \
	> "$D/vnc.out" 2> "$D/vnc.err"; rc=$?
check "a VNC client (libvncclient) with the secret connects (exit $rc)" test "$rc" -eq 0
check "and sees the backend's page" banner "$D/s1.ppm"

PIDS=$(tree $SUP)
"$CDSGATE" session revoke "$SID" > "$D/rev.out" 2>&1; rc=$?
MS=$(gone_ms $PIDS)
diag "revoke: the session's $(echo $PIDS | wc -w) processes were gone after $MS ms"
check "revoke (exit $rc): every process of the session gone within 2 s ($MS ms)" \
	sh -c "[ $rc -eq 0 ] && [ $MS -le 2000 ]"
check "the store says revoked" test "$(state_of "$SID")" = revoked
"$VNCTEST" --host "${VADDR%:*}" --port "${VADDR##*:}" --password-file "$D/pw" snapshot "$D/s2.ppm" \
	> /dev/null 2>&1; rc=$?
check "a connect after the revoke fails (exit $rc)" test "$rc" -ne 0

# ---- killing the daemon ends its sessions ----
"$CDSGATE" session create --recipient alice --dataset "$DS" --json > "$D/s3.json" 2> "$D/s3.err"; rc=$?
check "a second session runs (exit $rc)" test "$rc" -eq 0
SID3=$(json "$D/s3.json" 'j["id"]')
PIDS=$(tree $(supervisors))
kill -9 "$SRV_PID"
wait "$SRV_PID" 2>/dev/null
SRV_PID=
MS=$(gone_ms $PIDS)
diag "kill -9 of the daemon: its session's $(echo $PIDS | wc -w) processes gone after $MS ms"
check "kill -9 of the daemon: its session's processes are gone within 5 s ($MS ms)" \
	test "$(alive $PIDS)" -eq 0
check "the helper logged why" grep -q 'the daemon went away; stopping its 1 session' "$D/sd.err"
sed 's/^/#  sd: /' "$D/sd.err" | tail -5; grep -v '^{' "$D/err" | sed 's/^/#  serve: /' | tail -8
check "the helper itself lives on" kill -0 "$SD_PID"
check "a restarted daemon connects to it again" start_serve
check "and its store says the killed daemon's session ended ($(state_of "$SID3"))" \
	test "$(state_of "$SID3")" = ended
"$CDSGATE" session create --recipient alice --dataset "$DS" --json > "$D/s4.json" 2> "$D/s4.err"; rc=$?
check "and starts sessions again (exit $rc)" test "$rc" -eq 0
fi

# ---- SIGTERM to the helper ----
[ -n "$SRV_PID" ] || start_serve
PIDS=$(tree $(supervisors))
term_wait "$SD_PID"
rc=$term_rc
SD_PID=
check "SIGTERM: the helper exits 0 (exit $rc)" test "$rc" = 0
check "... its sessions' processes are gone ($(echo $PIDS | wc -w) before)" test "$(alive $PIDS)" -eq 0
check "... its socket is gone" test ! -e "$SDSOCK"
for _ in $(seq 50); do kill -0 "$SRV_PID" 2>/dev/null || break; sleep 0.1; done
wait "$SRV_PID" 2>/dev/null; rc=$?
SRV_PID=
check "the daemon without its helper exits non-zero (exit $rc): fail closed" test "$rc" -ne 0
# ---- socket activation (LISTEN_FDS), as cdsgate-sessiond.socket does it ----
"$CDSGATED" sessiond --config "$CONF" > "$D/nosock.out" 2>&1; rc=$?
check "no --socket and no socket from systemd: refused (exit $rc)" \
	sh -c "[ $rc -eq 2 ] && grep -q 'no socket from systemd' '$D/nosock.out'"
if ! command -v systemd-socket-activate >/dev/null; then
	skip "socket activation: systemd-socket-activate not installed"
else
	SA=$D/sa.sock
	: > "$D/sd.out"
	systemd-socket-activate --seqpacket -l "$SA" "$CDSGATED" sessiond --config "$CONF" \
		> "$D/sd.out" 2> "$D/sa.err" &
	SD_PID=$!	# systemd-socket-activate execs the helper: the same pid
	wait_line "$D/sa.err" '^Listening on' 10 "$SD_PID"
	chown cdsgate-api: "$SA"	# what SocketUser= does
	r=$(as_api $PY "$D/probe.py" "$SA" connect)
	check "a helper started by its first connection (LISTEN_FDS) keeps the api user's ($r)" \
		sh -c "[ '$r' = open ] && grep -q '^ready (systemd)' '$D/sd.out' && grep -q 'the daemon connected' '$D/sa.err'"
	r=$(python3 "$D/probe.py" "$SA" connect)
	check "... and refuses root's ($r)" sh -c "[ '$r' = closed ] && grep -q 'refused a connection from uid 0' '$D/sa.err'"
	term_wait "$SD_PID"
	SD_PID=
	check "... and exits 0 on SIGTERM ($term_rc)" test "$term_rc" = 0
	rm -f "$SA"
	systemd-socket-activate -l "$SA" "$CDSGATED" sessiond --config "$CONF" \
		> /dev/null 2> "$D/sa2.err" &
	SD_PID=$!
	wait_line "$D/sa2.err" '^Listening on' 10 "$SD_PID"
	python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' "$SA" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$SD_PID" 2>/dev/null || break; sleep 0.1; done
	wait "$SD_PID"; rc=$?
	SD_PID=
	check "a stream socket from systemd is refused (exit $rc)" \
		sh -c "[ $rc -eq 2 ] && grep -q 'not SOCK_SEQPACKET' '$D/sa2.err'"
fi

"$CDSGATE" audit verify "$D/audit/audit.log" --key "$D/audit.pub" > "$D/verify.out"; rc=$?
check "the audit log verifies ($(cat "$D/verify.out"))" test "$rc" -eq 0

done_testing
