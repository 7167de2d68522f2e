#!/usr/bin/env bash
# 088-slurm-split: the Slurm runner and the front door under the split
# systemd units, on the cluster of lib-slurm.sh (munged, slurmctld, two
# slurmd in their own network namespaces, `cdsgated node` on each).
#   - `cdsgated sessiond` (with cdsgate-sessiond.service's bounding set
#     and no_new_privs) runs the Slurm helper, the evidence receiver and
#     the front door as its children; `cdsgated serve --sessiond` (with
#     cdsgated.service's) runs none of them and binds no network port
#   - a session made through the API runs as a job on a node; a real
#     VNC client (libvncclient) logs in through the front door only and
#     sees the backend's page; `cdsgate node list` counts it
#   - revoke: the job gone from squeue within 2 s, the relayed connection
#     dropped, the node's end reported, the store says revoked, the
#     control node's copy of the recording is the node's whole one
#   - kill -9 of the daemon: the helper cancels its job (fail closed) and
#     keeps its own helpers; a restarted daemon places a session again,
#     and the killed one's session's control copy reaches the chain
#   - SIGTERM: the daemon exits 0, the helper then exits 0 and its
#     helpers are gone; the session it stopped with no api connected has
#     the node's whole recording as its control copy; the audit log
#     verifies, with record_closed for both chained control copies
#     (revoked; recovered after the kill)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-slurm.sh"

CDSGATED=$top_builddir/cdsgated
VNCTEST=${VNCTEST:-$top_builddir/tests/gateway/cdsgate-vnctest}
slurm_require	# lib-slurm.sh: root, Slurm, munge, sessions
command -v setpriv >/dev/null || skip_all "setpriv not installed"

serve_dirs_make	# lib.sh: $D, $SOCK, $PORT0, the audit key
chmod 0755 "$D"	# the api (cdsgate-api) reaches the helper's socket here
SD_PID= SRV_PID= BE_PID= SL_AG1= SL_AG2= HOLD_PID=
trap 'stop_pid $HOLD_PID; stop_pid $SRV_PID; stop_pid $SD_PID; stop_pid $SL_AG1; stop_pid $SL_AG2; stop_pid $BE_PID; cluster_stop; rm -rf "$TMP"' EXIT
cluster_start || skip_all "the Slurm cluster did not start here ($(tail -n 3 "$SL"/log/*.out | tr '\n' ' ' | head -c 300))"

slurm_fixture "$D" || skip_all "$SL_WHY"	# lib-slurm.sh: backend, ports, configs
check "cdsgated node runs on node1 and node2" slurm_agents_start "$D"

# ---- the two units' processes ----
SDSOCK=$D/sessiond.sock
start_sessiond() {
	setpriv --bounding-set "-all,$(caps cdsgate-sessiond.service.in)" --inh-caps -all \
		--no-new-privs "$CDSGATED" sessiond --config "$CONF" --socket "$SDSOCK" \
		> "$D/sd.out" 2>> "$D/sd.err" &
	SD_PID=$!
	wait_line "$D/sd.out" '^ready ' 15 "$SD_PID"
}
start_daemon() {
	: > "$D/out"
	setpriv --bounding-set "-all,$(caps cdsgated.service.in)" --inh-caps -all \
		--no-new-privs "$CDSGATED" serve --config "$CONF" --sessiond "$SDSOCK" \
		> "$D/out" 2>> "$D/err" &
	SRV_PID=$!
	wait_line "$D/out" '^ready ' 15 "$SRV_PID"
}
# kids PID USER: PID's children running as USER
kids() { pgrep -P "$1" -u "$2" | tr '\n' ' '; }
check "cdsgated sessiond (session_runner slurm, front_door_listen) starts" start_sessiond
# the front door drops to cdsgate and the helpers load their filters
# after the fork: wait for that
for _ in $(seq 50); do
	[ -n "$(kids "$SD_PID" cdsgate)" ] && [ "$(grep -c 'sandbox seccomp, profile slurm' "$D/sd.err")" -ge 2 ] &&
		ss -Hltn "sport = :$DOOR" | grep -q . && break
	sleep 0.1
done
check "... its children: the Slurm helper and the evidence receiver (root), the front door (cdsgate)" \
	sh -c "[ \$(pgrep -P $SD_PID -u root | wc -l) -eq 2 ] && [ \$(pgrep -P $SD_PID -u cdsgate | wc -l) -eq 1 ]"
SD_HELPERS=$(kids "$SD_PID" root)
DOOR_PID=$(kids "$SD_PID" cdsgate)
check "... they run under their deny-lists (slurm twice) and the front door's (Seccomp 2)" \
	sh -c "grep -q 'slurm helper: sandbox seccomp, profile slurm' '$D/sd.err' &&
	       grep -q 'evidence receiver: sandbox seccomp, profile slurm' '$D/sd.err' &&
	       grep -q '^Seccomp:[[:space:]]*2' /proc/${DOOR_PID% }/status"
check "... the front door listens on 127.0.0.1:$DOOR" \
	sh -c "ss -Hltnp 'sport = :$DOOR' | grep -q 'pid=${DOOR_PID% },'"
check "cdsgated serve --sessiond starts with the daemon unit's bounding set" start_daemon
check "... it forks the api only: no front door, no Slurm helper of its own ($(pgrep -P "$SRV_PID" | wc -l) child)" \
	sh -c "[ -n '$(kids "$SRV_PID" cdsgate-api)' ] && [ \$(pgrep -P $SRV_PID | wc -l) -eq 1 ]"
check "... and nothing of the daemon's listens on TCP" \
	sh -c "! ss -Hltnp | grep -qE 'pid=($SRV_PID|$(pgrep -P "$SRV_PID" | paste -sd '|')),'"
"$CDSGATE" recipient add alice --name Alice > /dev/null
mount_patients; rc=$?	# lib.sh: $DS
check "a dataset is imported through the gate and mounted (exit $rc)" test "$rc" -eq 0

# create N: a session for alice; its id, secret, node, address in $D/sN.*
create() {
	"$CDSGATE" session create --recipient alice --dataset "$DS" --expires-in 600 --json \
		> "$D/s$1.json" 2> "$D/s$1.err" || return 1
	json "$D/s$1.json" 'j["id"]' > "$D/s$1.id"
	json "$D/s$1.json" 'j["secret"]' > "$D/s$1.pw"
	slurm_where "$(cat "$D/s$1.id")" "$D/sd.err" > "$D/s$1.where"
	[ -s "$D/s$1.where" ]
}
door_vnc() {
	local pw=$1
	shift
	"$VNCTEST" --host 127.0.0.1 --port "$DOOR" --user alice --ca "$D/door-cert.pem" \
		--password-file "$pw" --timeout 30 "$@"
}
# gone_from_squeue JOB [TRIES]: true once squeue no longer has JOB
# (TRIES x 20 ms; 2 s by default)
gone_from_squeue() {
	for _ in $(seq "${2:-100}"); do
		squeue --noheader --jobs "$1" 2>/dev/null | grep -q . || return 0
		sleep 0.02
	done
	return 1
}

# ---- one session on a node, through the front door only ----
check "a session through the API: its job ran and its node reported ready to the helper ($(head -c 200 "$D/s1.err"))" create 1
read -r A1 N1 J1 < "$D/s1.where"
ID1=$(cat "$D/s1.id")
diag "session 1: job $J1 on $N1 at $A1"
check "... the api printed the front door as its address" \
	test "$(json "$D/s1.json" 'j["vnc"]')" = "127.0.0.1:$DOOR"
check "... squeue shows its job running as nobody" \
	sh -c "squeue --noheader --format='%i %j %u %T' | grep -q '^$J1 cdsgate-$ID1 nobody RUNNING\$'"
sleep 2
door_vnc "$D/s1.pw" snapshot "$D/s1.ppm" > "$D/vnc.out" 2> "$D/vnc.err"; rc=$?
check "a VNC client logs in as alice through the front door (exit $rc)" test "$rc" -eq 0
sleep 2
door_vnc "$D/s1.pw" snapshot "$D/s1.ppm" > "$D/vnc.out" 2> "$D/vnc.err"
check "... its picture shows the backend's page" banner "$D/s1.ppm"
check "... relayed by the helper's front door to $A1" \
	test "$(log_events "$D/sd.err" door_relay user=alice session="$ID1" upstream="$A1")" -ge 1
"$CDSGATE" node list --json > "$D/nodes.json" 2>&1
check "cdsgate node list (asked of the helper): $N1 holds the session" python3 - "$D/nodes.json" "$N1" <<'PY'
import json, sys
n = {x["name"]: x for x in json.load(open(sys.argv[1]))["nodes"]}
assert n[sys.argv[2]]["sessions"] == 1 and sum(x["sessions"] for x in n.values()) == 1, n
PY

# ---- revoke ----
door_vnc "$D/s1.pw" --timeout 60 hold 50 > "$D/hold.out" 2> "$D/hold.err" &
HOLD_PID=$!
for _ in $(seq 100); do grep -q '^holding' "$D/hold.out" && break; sleep 0.1; done
check "alice holds a connection through the front door" grep -q '^holding' "$D/hold.out"
t0=$(date +%s%N)
"$CDSGATE" session revoke "$ID1" > "$D/rev.out" 2>&1; rc=$?
gone_from_squeue "$J1"
MS=$(( ($(date +%s%N) - t0) / 1000000 ))
check "cdsgate session revoke (exit $rc); job $J1 gone from squeue within 2 s ($MS ms)" \
	sh -c "[ $rc -eq 0 ] && [ $MS -le 2000 ]"
for _ in $(seq 60); do kill -0 "$HOLD_PID" 2>/dev/null || break; sleep 0.05; done
n=$(log_events "$D/sd.err" door_remove session="$ID1" connections_dropped=1)
check "the relayed connection ended (door_remove, connections_dropped $n)" \
	sh -c "! kill -0 $HOLD_PID 2>/dev/null && [ $n -eq 1 ]"
wait "$HOLD_PID" 2>/dev/null; HOLD_PID=
revoked_ended() {
	wait_line "$D/sd.err" "session $ID1 .job $J1 on $N1.: ended" 10 &&
		[ "$(sqlite3 "$D/state/store.db" "select state from sessions where id='$ID1'")" = revoked ]
}
check "the node reported the session's end; the store says revoked" revoked_ended
REC1=$D/rec/$ID1.cdsrec
for _ in $(seq 50); do grep -q "session $ID1: [0-9]* bytes of evidence came" "$D/sd.err" && break; sleep 0.1; done
check "the control node's copy of its recording is the node's whole one" cmp "$REC1" "$D/$N1/rec/$ID1.cdsrec"
door_vnc "$D/s1.pw" --timeout 5 snapshot "$D/x.ppm" > /dev/null 2>&1; rc=$?
check "a login to the revoked session through the front door fails (exit $rc)" test "$rc" -ne 0

# ---- the daemon killed: fail closed, the helper's helpers stay ----
check "a second session runs on a node ($(head -c 200 "$D/s2.err"))" create 2
read -r A2 N2 J2 < "$D/s2.where"
kill -KILL "$SRV_PID"; wait "$SRV_PID" 2>/dev/null; SRV_PID=
check "kill -9 of the daemon: the helper cancels its job ($J2 gone from squeue)" \
	gone_from_squeue "$J2" 500
check "... and logs why" grep -q 'the daemon went away; stopping its' "$D/sd.err"
check "... its Slurm helper, evidence receiver and front door still run" \
	test "$(alive $SD_HELPERS $DOOR_PID)" -eq 3
check "a restarted daemon connects again" start_daemon
check "... and places a session again ($(head -c 200 "$D/s3.err"))" create 3
read -r A3 N3 J3 < "$D/s3.where"
sleep 2
door_vnc "$D/s3.pw" snapshot "$D/s3.ppm" > /dev/null 2>&1
check "... whose page a VNC client sees through the front door" banner "$D/s3.ppm"

# ---- shutdown ----
kill -TERM "$SRV_PID"; wait "$SRV_PID"; rc=$?
SRV_PID=
check "SIGTERM: the daemon exits 0 (exit $rc)" test "$rc" -eq 0
check "... the helper cancels its job ($J3)" \
	gone_from_squeue "$J3" 500
kill -TERM "$SD_PID"; wait "$SD_PID"; rc=$?
SD_PID=
gone_ms $SD_HELPERS $DOOR_PID > /dev/null
check "SIGTERM: the helper exits 0 (exit $rc) and its helpers are gone" \
	sh -c "[ $rc -eq 0 ] && [ $(alive $SD_HELPERS $DOOR_PID) -eq 0 ]"
# the daemon's SIGTERM took its api: the helper cancelled job 3 with no
# api connected, after the node had sent all of its evidence
ID3=$(cat "$D/s3.id")
check "... the session it stopped with no api connected: its control copy is the node's whole one" \
	cmp "$D/rec/$ID3.cdsrec" "$D/$N3/rec/$ID3.cdsrec"

"$CDSGATE" audit verify "$D/audit/audit.log" --key "$D/audit.pub" > "$D/verify.out"; rc=$?
check "the audit log verifies ($(cat "$D/verify.out"))" test "$rc" -eq 0
check "it has the sessions' creates, the revoke, and record_closed with each control copy's digest (revoked; recovered)" \
	python3 - "$D/audit/audit.log" "$ID1" "$ID3" "$REC1" "$D/rec/$(cat "$D/s2.id").cdsrec" <<'PY'
import hashlib, json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
t = open(sys.argv[1]).read()
for sid in sys.argv[2:4]:
    assert sid in t, sid
assert "session.create" in t and "session.revoke" in t, "types"
c = {r["data"]["file"]: r["data"] for r in recs if r.get("type") == "record_closed"}
for f, end in ((sys.argv[4], "revoked"), (sys.argv[5], "recovered")):
    if f not in c or c[f]["end"] != end or \
       c[f]["sha256"] != hashlib.sha256(open(f, "rb").read()).hexdigest():
        print("# %s: %s (record_closed for %s)" % (f, c.get(f), list(c)))
        sys.exit(1)
PY
check "no sanitizer or runtime error was reported" \
	sh -c "! grep -qE 'Sanitizer|runtime error' '$D/err' '$D/sd.err'"
done_testing
