#!/usr/bin/env bash
# 087-slurm: the Slurm runner on a small real cluster (lib-slurm.sh:
# munged, slurmctld, slurmd -N node1 / -N node2, each node in its own
# network namespace).  `cdsgated serve` with session_runner "slurm"
# submits one job per session; on each node `cdsgated node` takes the
# job's request, asks the control plane (MUNGE) which session it is,
# starts it and reports where it is ready, which the control plane checks
# with Slurm.  Sessions are made through the API until both nodes hold
# one; squeue shows their jobs; a real VNC client (libvncclient, and
# TigerVNC to one) logs in to each session through the front door on the
# control node (its recipient and secret) and sees the backend's page and the recipient's watermark,
# while a direct connection to a node's session is refused (not the front
# door's address) and the node never holds the researcher's secret; a
# slurm config without a front door is refused; a job's request
# for another node's job, a request from a user other than the jobs', a
# credential not made by root, a second ask for a handed-out session and
# a ready report from off the node are refused; revoke cancels the job
# (gone from squeue within 2 s), drops the relayed connection at once
# and ends the node's session; `cdsgate
# node list` shows the sessions per node; every process of one node is
# killed: its session is failed in the store and the API (audited
# session.failed; a revoke of it refused) and the next goes to the other
# node; the Slurm helper, the evidence receiver and the
# live node's uplink run filtered (Seccomp 2); SIGTERM to the daemon
# cancels the rest; the audit log verifies.  Evidence: each session's
# recording and network log are on the control node while it runs
# (growing, a prefix of the node's file), the whole recording after its
# end (replay SESSION reads it), the dead node's up to the last chunk
# received (replay reads it), and record_closed chains each control
# copy's digest; once it is chained the live node removes its own copies
# (logged with the chained digest, audited record_node_removed), the
# dead node nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-slurm.sh"

CDSGATED=$top_builddir/cdsgated
VNCTEST=${VNCTEST:-$top_builddir/tests/gateway/cdsgate-vnctest}
slurm_require	# lib-slurm.sh: root, Slurm, munge, sessions

serve_dirs_make	# lib.sh: $D, $SOCK, $PORT0, the audit key
SRV_PID= BE_PID= SL_AG1= SL_AG2= LAG_PID= HOLD_PID= VV_PID= XV_PID=
trap 'stop_pid $LAG_PID; stop_pid $VV_PID; stop_pid $XV_PID; stop_pid $HOLD_PID; stop_pid $SRV_PID; stop_pid $SL_AG1; stop_pid $SL_AG2; stop_pid $BE_PID; cluster_stop; rm -rf "$TMP"' EXIT
cluster_start || skip_all "the Slurm cluster did not start here ($(tail -n 3 "$SL"/log/*.out | tr '\n' ' ' | head -c 300))"
ok "munged, slurmctld and two slurmd (node1, node2 in their own network namespaces) run; sinfo says both idle"

slurm_fixture "$D" || skip_all "$SL_WHY"	# lib-slurm.sh: backend, ports, configs

# ---- the config ----
write_config "$D/bad1.json" '"session_runner": "kubernetes"'
"$CDSGATED" serve -n --config "$D/bad1.json" > "$D/bad1.out" 2>&1; rc=$?
check "session_runner other than local or slurm is refused (exit $rc)" \
	sh -c "[ $rc -eq 2 ] && grep -q 'session_runner: \"local\" or \"slurm\"' '$D/bad1.out'"
write_config "$D/bad2.json" '"session_runner": "slurm"'
"$CDSGATED" serve -n --config "$D/bad2.json" > "$D/bad2.out" 2>&1; rc=$?
check "session_runner slurm without slurm_listen is refused (exit $rc)" \
	sh -c "[ $rc -eq 2 ] && grep -q 'needs slurm_listen' '$D/bad2.out'"
write_config "$D/bad3.json" "$(slurm_control_keys "$LPORT" | sed "s|$MUNGE_SOCK|$D/no.sock|"), $DOOR_KEYS"
"$CDSGATED" serve -n --config "$D/bad3.json" > "$D/bad3.out" 2>&1; rc=$?
check "serve -n: a munge_socket that is not there is named (exit $rc)" \
	sh -c "[ $rc -eq 2 ] && grep -q 'munge_socket: $D/no.sock: No such file' '$D/bad3.out'"
write_config "$D/bad4.json" "$(slurm_control_keys "$LPORT")"
"$CDSGATED" serve -n --config "$D/bad4.json" > "$D/bad4.out" 2>&1; rc=$?
check "session_runner slurm without a front door is refused, naming the keys (exit $rc)" \
	sh -c "[ $rc -eq 2 ] && grep -q 'needs front_door_listen and front_door_source' '$D/bad4.out'"
write_config "$D/bad5.json" "$(slurm_control_keys "$LPORT"), $(echo "$DOOR_KEYS" | sed "s|$CTL_ADDR1|127.0.0.1|")"
"$CDSGATED" serve -n --config "$D/bad5.json" > "$D/bad5.out" 2>&1; rc=$?
check "... and with a loopback front_door_source (exit $rc)" \
	sh -c "[ $rc -eq 2 ] && grep -q 'needs front_door_listen and front_door_source' '$D/bad5.out'"
grep -v front_door_source "$D/node1/node.json" > "$D/bad-node.json"
"$CDSGATED" node --config "$D/bad-node.json" > "$D/bad-node.out" 2>&1; rc=$?
check "a node config without front_door_source is refused (exit $rc)" \
	sh -c "[ $rc -eq 2 ] && grep -q 'a node (control_address) needs front_door_source' '$D/bad-node.out'"
"$CDSGATED" serve -n --config "$CONF" > "$D/n.out" 2>&1; rc=$?
check "serve -n accepts the slurm config (exit $rc: $(head -c 200 "$D/n.out"))" test "$rc" -eq 0
"$CDSGATED" serve -T --config "$CONF" > "$D/T.out" 2>&1
check "serve -T prints the slurm keys" python3 - "$D/T.out" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
assert c["session_runner"] == "slurm" and c["slurm_job_user"] == "nobody", c
assert c["slurm_memory_mb"] == 0 and c["slurm_partition"] is None, c
PY

# ---- the node agents and the control plane ----
check "cdsgated node runs on node1 and node2" slurm_agents_start "$D"
check "cdsgated serve (session_runner slurm) starts" start_serve

"$CDSGATE" recipient add alice --name Alice > /dev/null
"$CDSGATE" recipient add bob --name Bob > /dev/null
mount_patients; rc=$?	# lib.sh: $DS
check "a dataset is imported through the gate and mounted (exit $rc)" test "$rc" -eq 0

# create WHO N: a session for WHO; its id, secret, node, address in $D/sN.*
create() {
	local t0=$(date +%s%N) rc
	"$CDSGATE" session create --recipient "$1" --dataset "$DS" --expires-in 600 --json \
		> "$D/s$2.json" 2> "$D/s$2.err"; rc=$?
	eval "MS$2=$(( ($(date +%s%N) - t0) / 1000000 ))"
	[ "$rc" -eq 0 ] || return 1
	json "$D/s$2.json" 'j["id"]' > "$D/s$2.id"
	json "$D/s$2.json" 'j["secret"]' > "$D/s$2.pw"
	slurm_where "$(cat "$D/s$2.id")" "$D/err" > "$D/s$2.where"
	[ -s "$D/s$2.where" ]
}
check "session 1 (alice) through the API: its job ran and its node reported ready ($(head -c 200 "$D/s1.err"))" create alice 1
diag "session create -> ready through Slurm: $MS1 ms"
check "session 2 (bob) through the API ($(head -c 200 "$D/s2.err"))" create bob 2
diag "session create -> ready through Slurm: $MS2 ms"
read -r A1 N1 J1 < "$D/s1.where"
read -r A2 N2 J2 < "$D/s2.where"
diag "session 1: job $J1 on $N1 at $A1; session 2: job $J2 on $N2 at $A2"
# at_nodeaddr ADDR:PORT NODE: ADDR is that node's NodeAddr
at_nodeaddr() { local v=NODE_ADDR${2#node}; [ "${1%:*}" = "${!v}" ]; }
check "the two sessions are on the two nodes, each at its NodeAddr" \
	eval '[ "$N1" != "$N2" ] && at_nodeaddr "$A1" "$N1" && at_nodeaddr "$A2" "$N2"'
squeue --noheader --format='%i %j %u %T %N' > "$D/squeue.out"
check "squeue shows both jobs running as nobody, named after their sessions ($(tr '\n' ';' < "$D/squeue.out"))" \
	sh -c "grep -q '^$J1 cdsgate-$(cat "$D/s1.id") nobody RUNNING $N1\$' '$D/squeue.out' &&
	       grep -q '^$J2 cdsgate-$(cat "$D/s2.id") nobody RUNNING $N2\$' '$D/squeue.out'"
check "the jobs' time limit is the sessions' expiry (10 minutes)" \
	sh -c "[ \"\$(squeue --noheader -j $J1 --format=%l)\" = 10:00 ]"
"$CDSGATE" session extend "$(cat "$D/s2.id")" --expires-in 1800 > /dev/null 2>&1; rc=$?
# limit_min JOB: squeue's time limit (M:SS or H:MM:SS) in minutes
limit_min() {
	squeue --noheader --jobs "$1" --format=%l | awk -F: '{ print NF == 3 ? $1 * 60 + $2 : $1 }'
}
extended() {
	local m
	for _ in $(seq 50); do
		m=$(limit_min "$J2")
		[ "${m:-0}" -ge 30 ] && [ "$m" -le 32 ] && return 0
		sleep 0.1
	done
	diag "job $J2's time limit: ${m:-?} min"
	return 1
}
check "session extend (exit $rc) moves its job's time limit to the new expiry (30 min from submission)" extended
check "the secrets are not in the daemon's or the agents' output" \
	sh -c "! grep -qF \"\$(cat '$D/s1.pw')\" '$D/out' '$D/err' '$D'/node*/out '$D'/node*/err"
check "both replies name the front door as the address to connect to" \
	test "$(json "$D/s1.json" 'j["vnc"]') $(json "$D/s2.json" 'j["vnc"]')" = "127.0.0.1:$DOOR 127.0.0.1:$DOOR"
# own_password I: session I's node holds a VNC password (secrets_dir,
# root's) that is not the researcher's secret, which it holds nowhere
own_password() {
	local n=N$1 f
	f=$D/${!n}/secrets/$(cat "$D/s$1.id")/password
	[ -s "$f" ] && [ "$(head -c 8 "$D/s$1.pw")" != "$(head -c 8 "$f")" ] &&
		! grep -rqF "$(cat "$D/s$1.pw")" "$D/${!n}/secrets"
}
check "each node's session has an internal VNC password of its own, never the researcher's secret" \
	eval 'own_password 1 && own_password 2'

"$CDSGATE" node list > "$D/nodes.out" 2>&1; rc=$?
"$CDSGATE" node list --json > "$D/nodes.json" 2>&1
check "cdsgate node list: both nodes allocated, one session each, memory as Slurm says (exit $rc; $(tr '\n' ';' < "$D/nodes.out"))" \
	python3 - "$D/nodes.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
n = {x["name"]: x for x in j["nodes"]}
assert sorted(n) == ["node1", "node2"] and j["unparsed_lines"] == 0, j
for x in n.values():
    assert x["sessions"] == 1 and x["state"] == "allocated", x
    assert x["memory_mb"] == 8192 and isinstance(x["free_mb"], int), x
PY

# ---- evidence: each node's files stream to the control node ----
# size F: F's size in bytes, 0 when it is not there
size() { stat -c %s "$1" 2> /dev/null || echo 0; }
REC1=$D/rec/$(cat "$D/s1.id").cdsrec NREC1=$D/$N1/rec/$(cat "$D/s1.id").cdsrec
REC2=$D/rec/$(cat "$D/s2.id").cdsrec NREC2=$D/$N2/rec/$(cat "$D/s2.id").cdsrec
for _ in $(seq 50); do [ "$(size "$REC1")" -gt 0 ] && break; sleep 0.1; done
C1A=$(size "$REC1")

# node minus control copy of session 1's recording, every 0.1 s, while
# the VNC clients below make it write
( while :; do echo $(( $(size "$NREC1") - $(size "$REC1") )); sleep 0.1; done ) > "$D/lag.txt" &
LAG_PID=$!

# ---- a real VNC client on each node's session, through the front door only ----
# door_vnc USER PWFILE CMD...: cdsgate-vnctest through the front door.
door_vnc() {
	local u=$1 pw=$2
	shift 2
	"$VNCTEST" --host 127.0.0.1 --port "$DOOR" --user "$u" --ca "$D/door-cert.pem" \
		--password-file "$pw" --timeout 30 "$@"
}
WHO1=alice WHO2=bob
for i in 1 2; do
	eval a=\$A$i who=\$WHO$i
	sleep 2
	door_vnc "$who" "$D/s$i.pw" snapshot "$D/s$i.ppm" > "$D/vnc$i.out" 2> "$D/vnc$i.err"; rc=$?
	check "a VNC client logs in as $who through the front door to session $i on its node (exit $rc)" test "$rc" -eq 0
	sleep 2
	door_vnc "$who" "$D/s$i.pw" snapshot "$D/s$i.ppm" > "$D/vnc$i.out" 2> "$D/vnc$i.err"
	check "... its picture shows the backend's page" banner "$D/s$i.ppm"
	if command -v tesseract > /dev/null; then
		check "... and its watermark names $who" ocr_names "$D/s$i.ppm" "$who"
	else
		skip "the watermark's recipient: tesseract not installed"
	fi
	check "... relayed by the front door to $a" \
		test "$(log_events "$D/err" door_relay user="$who" session="$(cat "$D/s$i.id")" upstream="$a")" -ge 1
done
# TigerVNC (X509Plain) as bob through the front door to session 2's node
TIGER=$(command -v xtigervncviewer || command -v vncviewer)
if [ -n "$TIGER" ] && command -v import > /dev/null; then
	tiger_page bob "$D/s2.pw" "$D/door-cert.pem" "127.0.0.1::$DOOR" "$D/tiger"; got=$?
	check "TigerVNC (X509Plain) as bob through the front door shows session 2's page on $N2" test $got -eq 0
else
	skip "TigerVNC through the front door: xtigervncviewer or ImageMagick's import not installed"
fi
# refused_from SRC ADDR:PORT: a TCP connection from SRC gets no RFB
# greeting (the worker closes it at once)
refused_from() {
	python3 - "$@" <<'PY'
import socket, sys
src, dst = sys.argv[1], sys.argv[2].rsplit(':', 1)
s = socket.socket()
s.settimeout(10)
s.bind((src, 0))
s.connect((dst[0], int(dst[1])))
try:
    b = s.recv(12)
except ConnectionResetError:
    b = b''
print('# from %s: %r' % (src, b))
sys.exit(0 if not b.startswith(b'RFB') else 1)
PY
}
for i in 1 2; do
	eval a=\$A$i n=\$N$i
	check "a direct connection to session $i at $a from the control node's other address ($CTL_ADDR2) is refused" \
		refused_from "$CTL_ADDR2" "$a"
	sleep 0.5
	check "... logged on $n: not the front door" \
		test "$(log_events "$D/$n/err" client_refused session="$(cat "$D/s$i.id")" reason="not the front door")" -ge 1
done
"$VNCTEST" --host "${A2%:*}" --port "${A2##*:}" --password-file "$D/s2.pw" --timeout 10 expect-refused \
	> /dev/null 2>&1; rc=$?
check "a VNC client with session 2's secret, straight to its node, is refused (exit $rc)" test "$rc" -eq 0

stop_pid $LAG_PID
sleep 1
C1B=$(size "$REC1")
diag "session 1's recording: node $(size "$NREC1") bytes, control copy $C1B; node minus control while VNC clients were on, every 0.1 s: $(sort -n "$D/lag.txt" | awk '{ a[NR] = $1 } END { printf "%d samples, median %d, max %d bytes", NR, a[int((NR + 1) / 2)], a[NR] }')"
check "session 1's recording is on the control node while it runs and grows ($C1A -> $C1B bytes)" \
	sh -c "[ $C1A -gt 0 ] && [ $C1B -gt $C1A ]"
check "the control copy is the node's file so far (a prefix of it, byte for byte)" \
	cmp -n "$C1B" "$REC1" "$NREC1"
check "the network log streams too ($(size "${REC1%.cdsrec}.network.jsonl") bytes on the control node)" \
	test "$(size "${REC1%.cdsrec}.network.jsonl")" -gt 0

# frame N 'HEAD' BYTES: one frame to the evidence receiver from node N's
# namespace (0: from here, no node); its answer
frame() {
	local ns=
	[ "$1" = 0 ] || ns=$(sl_netns "$1")
	${ns:+nsenter "$ns"} python3 - "$CTL_ADDR1" "$((LPORT + 1))" "$2" "$3" <<'PY'
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
try:
    s.sendall(sys.argv[3].encode() + b"\n" + b"x" * int(sys.argv[4]))
    print(s.recv(4096).decode().strip())
except OSError as e:
    print("closed:", e)
PY
}
S1=$(cat "$D/s1.id") MAC0=$(printf '0%.0s' $(seq 64)) NN1=${N1#node} NN2=${N2#node}
frame "$NN1" "put $S1 rec 0 10 $MAC0" 10 > "$D/f1.out"
frame "$NN1" "put $S1 rec $(( $(size "$REC1") + 100 )) 10 $MAC0" 10 > "$D/f2.out"
for _ in 1 2 3; do	# at its end (unless it grew meanwhile): the MAC decides
	frame "$NN1" "put $S1 rec $(size "$REC1") 10 $MAC0" 10 > "$D/f3.out"
	grep -q '^no not at the end' "$D/f3.out" || break
done
frame "$NN1" "put $S1 rec $(size "$REC1") 300000 $MAC0" 0 > "$D/f4.out"
frame "$NN1" "put s-nosuchsession rec 0 10 $MAC0" 10 > "$D/f5.out"
frame "$NN2" "put $S1 rec $(size "$REC1") 10 $MAC0" 10 > "$D/f6.out"
frame 0 "put $S1 rec $(size "$REC1") 10 $MAC0" 10 > "$D/f7.out"
check "the evidence receiver refuses an overwrite, a gap, a bad MAC, an oversized frame, an unknown session, another node's frame ($(cat "$D"/f[1-6].out | tr '\n' ';'))" \
	sh -c "grep -q '^no not at the end' '$D/f1.out' && grep -q '^no not at the end' '$D/f2.out' &&
	       grep -q '^no a bad MAC' '$D/f3.out' && grep -q '^no a frame of 1 to' '$D/f4.out' &&
	       grep -q '^no no such session' '$D/f5.out' && grep -q '^no not from that session' '$D/f6.out' &&
	       cmp -n $(size "$REC1") '$REC1' '$NREC1'"
check "and closes a connection from an address that is no running session's node unread ($(cat "$D/f7.out"))" \
	sh -c "! grep -q '^ok' '$D/f7.out' && grep -q 'a connection from $CTL_ADDR1, no node' '$D/err'"

# ---- what a node does not take on a job's word ----
NJ=${N1#node}
SLURM_JOB_ID=$J2 SLURMD_NODENAME=$N1 "$CDSGATED" node-job --socket "$SL/agent-%n.sock" > "$D/root-job.out" 2>&1
check "a request from a user other than slurm_job_user is refused by the agent" \
	grep -q "only nobody's jobs ask here" "$D/root-job.out"
SLURM_JOB_ID=$J2 SLURMD_NODENAME=$N1 runuser -u nobody -- "$CDSGATED" node-job --socket "$SL/agent-%n.sock" \
	> "$D/other-job.out" 2>&1
check "a job asking $N1's agent for $N2's job gets nothing: Slurm does not run it there" \
	sh -c "grep -q 'no session for this job here' '$D/other-job.out' &&
	       grep -q 'not running on $N1' '$D/err'"
# send_cred FILE: one credential line to slurm_listen; the answer line
send_cred() {
	python3 - "$CTL_ADDR1" "$LPORT" "$1" <<'PY'
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
s.sendall(open(sys.argv[3], 'rb').read())
a = b''
while not a.endswith(b'\n'):
    b = s.recv(4096)
    if not b:
        break
    a += b
sys.stdout.write(a.decode())
PY
}
echo "ask $J1 $N1" | runuser -u nobody -- munge --socket="$MUNGE_SOCK" > "$D/cred"
send_cred "$D/cred" > "$D/cred.ans"
check "a MUNGE credential not made by root is refused, unanswered" \
	sh -c "[ ! -s '$D/cred.ans' ] && grep -q 'not root' '$D/err'"
printf 'ask %s %s' "$J1" "$N1" | munge --socket="$MUNGE_SOCK" > "$D/cred"
send_cred "$D/cred" | unmunge --socket="$MUNGE_SOCK" --metadata=/dev/null > "$D/ask2.ans" 2>&1
check "root asking again for a session already handed out gets no secrets ($(cat "$D/ask2.ans"))" \
	sh -c "grep -q \"^no that job's session was handed out already\" '$D/ask2.ans' &&
	       ! grep -qF \"\$(cat '$D/s1.pw')\" '$D/ask2.ans'"
printf 'ready %s %s %s 5999 tok' "$J2" "$N2" "$CTL_ADDR1" | munge --socket="$MUNGE_SOCK" > "$D/cred"
send_cred "$D/cred" > /dev/null
check "a ready report for $N2's session at another address, sent from off the node, is refused" \
	grep -q "ready at $CTL_ADDR1 from $CTL_ADDR1, but $N2's NodeAddr is" "$D/err"

# ---- revoke: the job cancelled, the relayed connection dropped ----
door_vnc alice "$D/s1.pw" --timeout 60 hold 50 > "$D/hold.out" 2> "$D/hold.err" &
HOLD_PID=$!
for _ in $(seq 100); do grep -q '^holding' "$D/hold.out" && break; sleep 0.1; done
check "alice holds a connection to session 1 through the front door" grep -q '^holding' "$D/hold.out"
t0=$(date +%s%N)
"$CDSGATE" session revoke "$(cat "$D/s1.id")" > "$D/rev.out" 2>&1; rc=$?
for _ in $(seq 100); do
	squeue --noheader --jobs "$J1" 2>/dev/null | grep -q . || break
	sleep 0.02
done
MS=$(( ($(date +%s%N) - t0) / 1000000 ))
diag "revoke: job $J1 gone from squeue after $MS ms"
check "cdsgate session revoke (exit $rc); job $J1 gone from squeue within 2 s ($MS ms)" \
	sh -c "[ $rc -eq 0 ] && [ $MS -le 2000 ]"
for _ in $(seq 60); do kill -0 "$HOLD_PID" 2>/dev/null || break; sleep 0.05; done
n=$(log_events "$D/err" door_remove session="$(cat "$D/s1.id")" connections_dropped=1)
check "the relayed connection ended (front door: door_remove, connections_dropped $n)" \
	sh -c "! kill -0 $HOLD_PID 2>/dev/null && [ $n -eq 1 ]"
wait "$HOLD_PID" 2>/dev/null; HOLD_PID=
revoked_ended() {
	wait_line "$D/err" "session $(cat "$D/s1.id") .job $J1 on $N1.: ended" 10 &&
		[ "$(sqlite3 "$D/state/store.db" "select state from sessions where id='$(cat "$D/s1.id")'")" = revoked ]
}
check "the node reported the session's end; the store says revoked" revoked_ended
for _ in $(seq 50); do grep -q "session $(cat "$D/s1.id"): [0-9]* bytes of evidence came" "$D/err" && break; sleep 0.1; done
# sha F: F's SHA-256 in hex
sha() { sha256sum "$1" | cut -d' ' -f1; }
# the node's digest of its whole recording when it closed (its log)
NSHA1=$(sed -n "s/.*session $(cat "$D/s1.id"): recording closed here (sha256 \([0-9a-f]*\)).*/\1/p" "$D/$N1/err" | head -n 1)
check "after the end the control copy is the node's whole recording (sha256 $(sha "$REC1" | head -c 16)..., the node's at its close $(echo "$NSHA1" | head -c 16)...)" \
	test "$(sha "$REC1")" = "$NSHA1"
# ---- the node's own copies go once the control copy is chained ----
wait_line "$D/$N1/err" "session $(cat "$D/s1.id"): removed its recording" 15
diag "revoke -> the node's own copies removed: $(( ($(date +%s%N) - t0) / 1000000 )) ms (at most this)"
NRM1=$(sed -n "s|.*session $(cat "$D/s1.id"): removed its recording $D/$N1/rec/$(cat "$D/s1.id").cdsrec here (sha256 \([0-9a-f]*\)).*|\1|p" "$D/$N1/err")
check "$N1 removed its own copy of session 1's recording, logged with the chained digest ($(echo "$NRM1" | head -c 16)...)" \
	sh -c "[ -n '$NRM1' ] && [ '$NRM1' = '$(sha "$REC1")' ] && [ ! -e '$NREC1' ]"
diag "$N1: $(grep -m1 "session $(cat "$D/s1.id"): removed its recording" "$D/$N1/err" | cut -c1-300)"
check "and its network log and capture: $N1's record_dir holds nothing of session 1" \
	sh -c "! ls '$D/$N1/rec' | grep -qF '$(cat "$D/s1.id")' && grep -q 'session $(cat "$D/s1.id"): removed its network log' '$D/$N1/err'"
check "the control plane said its copy was chained before (chained; node $N1 may remove its own)" \
	grep -q "session $(cat "$D/s1.id"): its control copy is chained; node $N1 may remove its own" "$D/err"
printf 'copies %s %s' "$J1" "$N1" | munge --socket="$MUNGE_SOCK" > "$D/cred"
send_cred "$D/cred" | unmunge --socket="$MUNGE_SOCK" --metadata=/dev/null > "$D/copies.ans" 2>&1
check "root asking about $N1's copies from off the node is refused ($(head -c 120 "$D/copies.ans"))" \
	sh -c "grep -q '^no a request for $N1 from $CTL_ADDR1, but its NodeAddr is' '$D/copies.ans'"
"$CDSGATE" replay "$(cat "$D/s1.id")" --info > "$D/info1.txt" 2>&1; rc=$?
check "cdsgate replay SESSION --info reads it on the control node (exit $rc; $(grep -m1 '^complete' "$D/info1.txt"))" \
	sh -c "[ $rc -eq 0 ] && grep -q '^complete: yes' '$D/info1.txt'"
door_vnc alice "$D/s1.pw" --timeout 5 snapshot "$D/x.ppm" > /dev/null 2>&1; rc=$?
check "a login to the revoked session through the front door fails (exit $rc)" test "$rc" -ne 0

"$CDSGATE" node list --json > "$D/nodes2.json" 2>&1
check "node list after the revoke: $N1 holds no session, $N2 one" python3 - "$D/nodes2.json" "$N1" "$N2" <<'PY'
import json, sys
n = {x["name"]: x for x in json.load(open(sys.argv[1]))["nodes"]}
assert n[sys.argv[2]]["sessions"] == 0 and n[sys.argv[3]]["sessions"] == 1, n
PY

# ---- a node dies: its session ends failed, new ones go to the other ----
t0=$(date +%s%N)
node_kill "${N2#node}"
node_failed() {
	wait_line "$D/err" "session $(cat "$D/s2.id") .job $J2 on $N2.: failed: Slurm no longer runs its job" 60 &&
		sqlite3 "$D/state/store.db" "select state || ' ' || reason from sessions where id='$(cat "$D/s2.id")'" > "$D/s2.state" &&
		grep -q "^failed Slurm no longer runs its job" "$D/s2.state"
}
check "every process of $N2 killed: its session is failed in the store, reason: Slurm no longer runs its job" node_failed
diag "store: $(cat "$D/s2.state")"
diag "node death -> session failed: $(( ($(date +%s%N) - t0) / 1000000 )) ms (SlurmdTimeout 10 s)"
"$CDSGATE" session list > "$D/list.out" 2>&1
check "cdsgate session list shows it failed, with the reason ($(grep "^$(cat "$D/s2.id") " "$D/list.out" | head -c 200))" \
	grep -Eq "^$(cat "$D/s2.id") .* failed .*Slurm no longer runs its job" "$D/list.out"
"$CDSGATE" session show "$(cat "$D/s2.id")" --json > "$D/show2.json" 2>&1
check "the API says so too (GET /v1/sessions/ID: state failed, its reason)" python3 - "$D/show2.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["state"] == "failed" and s["reason"].startswith("Slurm no longer runs its job"), s
PY
"$CDSGATE" session revoke "$(cat "$D/s2.id")" > "$D/rev2.out" 2>&1; rc=$?
check "revoking the failed session is refused as for an ended one (exit $rc: $(head -c 120 "$D/rev2.out"))" \
	sh -c "[ $rc -eq 2 ] && grep -q 'state' '$D/rev2.out'"
for _ in $(seq 50); do grep -q "session $(cat "$D/s2.id"): [0-9]* bytes of evidence came" "$D/err" && break; sleep 0.1; done
check "the dead node's recording is on the control node: a prefix of what the node wrote ($(size "$REC2") of $(size "$NREC2") bytes)" \
	sh -c "[ $(size "$REC2") -gt 0 ] && cmp -n $(size "$REC2") '$REC2' '$NREC2'"
"$CDSGATE" replay "$(cat "$D/s2.id")" --info > "$D/info2.txt" 2>&1; rc=$?
check "cdsgate replay --info reads it up to the last chunk received (exit $rc; $(grep -m1 '^complete' "$D/info2.txt"))" \
	sh -c "[ $rc -eq 0 ] && grep -q '^complete: ' '$D/info2.txt'"
"$CDSGATE" replay "$REC2" --keys > "$D/keys2.txt" 2>&1; rc=$?
check "cdsgate replay --keys reads it (exit $rc)" test "$rc" -eq 0
check "nothing was removed on the dead node: its recording is still in its record_dir ($(size "$NREC2") bytes)" \
	sh -c "[ $(size "$NREC2") -ge $(size "$REC2") ] && ! grep -q 'session $(cat "$D/s2.id"): removed' '$D/$N2/err'"
check "session 3 (alice) after the node died ($(head -c 200 "$D/s3.err"))" create alice 3
read -r A3 N3 J3 < "$D/s3.where"
check "it went to the live node ($N3, job $J3; $N2 is dead)" test "$N3" = "$N1"

# ---- the runner's root helpers are filtered (SLURM, UPLINK) ----
# listener_pid: the pid ss -p names for the one listener it is given
listener_pid() { grep -o 'pid=[0-9]*' | head -n 1 | cut -d= -f2; }
filtered() {	# PID PARENT: a child of PARENT, Seccomp 2, NoNewPrivs 1
	[ -n "$1" ] && [ "$1" != "$2" ] &&
		grep -q "^PPid:[[:space:]]*$2\$" "/proc/$1/status" &&
		grep -q '^Seccomp:[[:space:]]*2$' "/proc/$1/status" &&
		grep -q '^NoNewPrivs:[[:space:]]*1$' "/proc/$1/status"
}
HLP=$(ss -Hltnp "sport = :$LPORT" | listener_pid)
UPL=$(nsenter "$(sl_netns 1)" ss -Hlxp | grep -F "$SL/agent-$N1.sock" | listener_pid)
check "the Slurm helper (pid $HLP, on slurm_listen) runs under a seccomp filter (Seccomp: 2)" filtered "$HLP" "$SRV_PID"
check "$N1's uplink (pid $UPL, on node_socket) runs under a seccomp filter (Seccomp: 2)" filtered "$UPL" "$SL_AG1"
EVR=$(ss -Hltnp "sport = :$((LPORT + 1))" | listener_pid)
check "the evidence receiver (pid $EVR, on slurm_listen's port + 1) runs under a seccomp filter (Seccomp: 2)" filtered "$EVR" "$SRV_PID"
check "the logs name their deny-lists (profile slurm twice, profile uplink)" \
	sh -c "grep -q 'slurm helper: sandbox seccomp, profile slurm' '$D/err' && grep -q 'evidence receiver: sandbox seccomp, profile slurm' '$D/err' && grep -q 'uplink: sandbox seccomp, profile uplink' '$D/node1/err'"

# ---- shutdown cancels the rest ----
kill -TERM "$SRV_PID"; wait "$SRV_PID"; rc=$?
SRV_PID=
check "SIGTERM: the daemon exits 0 (exit $rc)" test "$rc" -eq 0
for _ in $(seq 100); do squeue --noheader --jobs "$J3" 2>/dev/null | grep -q . || break; sleep 0.05; done
check "its remaining job ($J3) is cancelled" sh -c "! squeue --noheader --jobs $J3 2>/dev/null | grep -q ."

"$CDSGATE" audit verify "$D/audit/audit.log" --key "$D/audit.pub" > "$D/verify.out"; rc=$?
check "the audit log verifies ($(cat "$D/verify.out"))" test "$rc" -eq 0
check "the audit log has both sessions' creates and the revoke" python3 - "$D/audit/audit.log" "$(cat "$D/s1.id")" "$(cat "$D/s2.id")" <<'PY'
import sys
t = open(sys.argv[1]).read()
for sid in sys.argv[2:]:
    assert sid in t, sid
assert "session.create" in t and "session.revoke" in t, "types"
PY
check "record_closed chains both control copies by their digest (ended: revoked, the dead node's: failed)" python3 - "$D/audit/audit.log" "$REC1" "$REC2" <<'PY'
import hashlib, json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
c = {r["data"]["file"]: r["data"] for r in recs if r.get("type") == "record_closed"}
for f, end in ((sys.argv[2], "revoked"), (sys.argv[3], "failed")):
    assert f in c, (f, list(c))
    assert c[f]["sha256"] == hashlib.sha256(open(f, "rb").read()).hexdigest(), c[f]
    assert c[f]["end"] == end, c[f]
PY
check "the dead node's session is audited session.failed with the reason" python3 - "$D/audit/audit.log" "$(cat "$D/s2.id")" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
f = [r for r in recs if r.get("type") == "session.failed"]
assert any(json.dumps(r).find(sys.argv[2]) >= 0 and
           "Slurm no longer runs its job" in json.dumps(r) for r in f), f
PY
check "record_node_removed: $N1 removed session 1's copies, the chained digests; none of the dead node's" python3 - "$D/audit/audit.log" "$(cat "$D/s1.id")" "$(cat "$D/s2.id")" "$N1" "$REC1" <<'PY'
import hashlib, json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rm = [r["data"] for r in recs if r.get("type") == "record_node_removed"]
closed = {r["data"]["session"]: r["data"] for r in recs if r.get("type") == "record_closed"}
s1 = [d for d in rm if d["session"] == sys.argv[2]]
assert len(s1) == 1 and s1[0]["node"] == sys.argv[4], rm
assert s1[0]["recording"] == closed[sys.argv[2]]["sha256"] == hashlib.sha256(open(sys.argv[5], "rb").read()).hexdigest(), s1
assert s1[0].get("network") == closed[sys.argv[2]]["network"]["sha256"], (s1, closed[sys.argv[2]])
assert not [d for d in rm if d["session"] == sys.argv[3]], rm
PY

done_testing
