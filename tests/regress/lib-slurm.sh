# tests/regress/lib-slurm.sh — a small real Slurm cluster for the Slurm
# runner's scenarios: our own munged (a test key, its own socket), one
# slurmctld and two slurmd (-N node1, -N node2), each slurmd in its own
# network namespace joined to this one by a veth pair, so node traffic
# crosses a real network boundary (slurm.conf's NodeAddr per node).
# Everything lives under $TMP/slurm with ports from free_port; every
# daemon is stopped by its PID.  Source after lib.sh.
#
#   slurm_require     skip_all unless the cluster can run here (root,
#                     munge, slurmctld, slurmd, the client commands, ip netns)
#                     and so can `cdsgated serve` and sessions (lib.sh's
#                     serve_require, require_session: $CDSGATED, $VNCTEST)
#   cluster_start     munged, the namespaces, slurmctld, both slurmd;
#                     0 once sinfo says both nodes are idle
#   cluster_stop      the daemons (by PID), the namespaces
#   sl_netns N        nsenter's option for node N's namespace (N = 1, 2)
#   node_kill N       SIGKILL every process in node N's namespace
#   slurm_control_keys LPORT   the Slurm keys of the control node's
#                     config (nodes report to $CTL_ADDR1:LPORT)
#   slurm_door_keys DIR DOOR   its front door's keys: 127.0.0.1:DOOR, a
#                     certificate for 127.0.0.1 (DIR/door-cert.pem, made
#                     here), connecting to the nodes from $CTL_ADDR1
#   slurm_node_config N DIR BACKEND_PORT LPORT   node N's agent config,
#                     DIR/nodeN/node.json (and DIR/node-policy.json)
#   slurm_fixture DIR  the test backend ($BE_PID, $BE_PORT), slurm_listen's
#                     port ($LPORT; its port + 1 free too), the front
#                     door's ($DOOR, $DOOR_KEYS), the control node's
#                     config $CONF (DIR/serve.json) and both nodes';
#                     false with $SL_WHY when something did not start
#   slurm_agents_start DIR   `cdsgated node` on both nodes ($SL_AG1,
#                     $SL_AG2; output in DIR/nodeN/out, err)
#   slurm_where ID LOG  "ADDR:PORT NODE JOB" of a session from serve's log
# After cluster_start: $SLURM_CONF (exported), $MUNGE_SOCK, $CTL_ADDR1 and
# $CTL_ADDR2 (this namespace's end of each veth: the control node as node
# 1 and node 2 reach it), $NODE_ADDR1, $NODE_ADDR2 (the nodes').

SL=$TMP/slurm
SL_PIDS=
SL_NS=

slurm_require() {
	[ "$(id -u)" -eq 0 ] || skip_all "needs root (munged, slurmd, network namespaces)"
	serve_require
	require_session
	local c
	for c in munged munge unmunge slurmctld slurmd sbatch squeue scancel scontrol sinfo ip nsenter; do
		command -v $c >/dev/null || skip_all "$c not installed (./dev build installs munge, slurmctld, slurmd, slurm-client)"
	done
	ip netns add "cdsprobe$$" 2>/dev/null || skip_all "cannot make a network namespace here (ip netns add)"
	ip netns del "cdsprobe$$"
}

# nsenter, not `ip netns exec`: that remounts /sys, and slurmd needs
# the cgroup filesystems mounted under it.  `nsenter ... &` itself, not
# a function in the background: then $! is the daemon (nsenter execs it),
# not a subshell that would leave it behind when stopped.
sl_netns() { echo "--net=/run/netns/cds$$n$1"; }

# sl_veth N: namespace cds<pid>n<N>, veth cv<pid>h<N> (here) / cv<pid>n<N>,
# 10.X.Y.1 here and 10.X.Y.2 there, a default route back to here.
sl_veth() {
	local n=$1 ns=cds$$n$1 h=cv$$h$1 v=cv$$n$1 net=$2
	ip netns add "$ns" || return 1
	SL_NS="$SL_NS $ns"
	ip link add "$h" type veth peer name "$v" || return 1
	ip link set "$v" netns "$ns"
	ip addr add "$net.1/24" dev "$h"
	ip link set "$h" up
	ip netns exec "$ns" ip addr add "$net.2/24" dev "$v"
	ip netns exec "$ns" ip link set "$v" up
	ip netns exec "$ns" ip link set lo up
	ip netns exec "$ns" ip route add default via "$net.1"
}

sl_munged() {
	MUNGE_SOCK=$SL/munge/sock
	mkdir -p "$SL/munge"
	chmod 0711 "$SL" "$SL/munge"
	head -c 1024 /dev/urandom > "$SL/munge/key"
	chmod 0400 "$SL/munge/key"
	munged -F -f --socket="$MUNGE_SOCK" --key-file="$SL/munge/key" \
		--log-file="$SL/munge/log" --pid-file="$SL/munge/pid" \
		--seed-file="$SL/munge/seed" > "$SL/munge/out" 2>&1 &
	SL_PIDS="$SL_PIDS $!"
	for _ in $(seq 50); do [ -S "$MUNGE_SOCK" ] && return 0; sleep 0.1; done
	return 1
}

# sl_conf: slurm.conf for slurmctld here and node1/node2 in their
# namespaces; one CPU a node, so each node holds one session's job.
sl_conf() {
	local ctl_port=$(free_port) p1=$(free_port) p2=$(free_port)
	mkdir -p "$SL/state" "$SL/spool/node1" "$SL/spool/node2" "$SL/log"
	SLURM_CONF=$SL/slurm.conf
	export SLURM_CONF
	cat > "$SLURM_CONF" <<CONF
ClusterName=cds$$
SlurmctldHost=$(hostname)($CTL_ADDR1)
SlurmctldPort=$ctl_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCK
CredType=cred/munge
StateSaveLocation=$SL/state
SlurmdSpoolDir=$SL/spool/%n
SlurmctldPidFile=$SL/slurmctld.pid
SlurmdPidFile=$SL/slurmd-%n.pid
SlurmctldLogFile=$SL/log/slurmctld.log
SlurmdLogFile=$SL/log/slurmd-%n.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/linear
SchedulerType=sched/builtin
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SlurmdParameters=config_overrides
SlurmctldTimeout=30
SlurmdTimeout=10
KillWait=2
NodeName=node1 NodeAddr=$NODE_ADDR1 NodeHostname=$(hostname) Port=$p1 CPUs=1 RealMemory=8192 State=UNKNOWN
NodeName=node2 NodeAddr=$NODE_ADDR2 NodeHostname=$(hostname) Port=$p2 CPUs=1 RealMemory=8192 State=UNKNOWN
PartitionName=cds Nodes=node1,node2 Default=YES MaxTime=INFINITE State=UP
CONF
	chmod 0644 "$SLURM_CONF"
}

cluster_start() {
	local x=$((RANDOM % 200 + 20)) y=$((RANDOM % 120 * 2))
	mkdir -p "$SL"
	sl_veth 1 "10.$x.$y" && sl_veth 2 "10.$x.$((y + 1))" || return 1
	CTL_ADDR1=10.$x.$y.1 CTL_ADDR2=10.$x.$((y + 1)).1
	NODE_ADDR1=10.$x.$y.2 NODE_ADDR2=10.$x.$((y + 1)).2
	sl_munged || return 1
	sl_conf
	slurmctld -D -i -f "$SLURM_CONF" > "$SL/log/slurmctld.out" 2>&1 &
	SL_PIDS="$SL_PIDS $!"
	nsenter "$(sl_netns 1)" slurmd -D -N node1 -f "$SLURM_CONF" > "$SL/log/slurmd1.out" 2>&1 &
	SL_PIDS="$SL_PIDS $!"
	nsenter "$(sl_netns 2)" slurmd -D -N node2 -f "$SLURM_CONF" > "$SL/log/slurmd2.out" 2>&1 &
	SL_PIDS="$SL_PIDS $!"
	for _ in $(seq 150); do
		[ "$(sinfo --noheader --Node --format='%N %t' 2>/dev/null | grep -c ' idle$')" = 2 ] && return 0
		sleep 0.2
	done
	return 1
}

# node_kill N: every process in node N's network namespace, at once
# (slurmd, slurmstepd, the job, the agent, its sessions): a node's death.
node_kill() {
	local p
	for p in $(ip netns pids "cds$$n$1"); do kill -KILL "$p" 2>/dev/null; done
}

cluster_stop() {
	local p n
	for p in $SL_PIDS; do stop_pid "$p"; done
	for n in 1 2; do node_kill $n; done	# a job's processes left behind
	for n in $SL_NS; do ip netns del "$n" 2>/dev/null; done
	SL_PIDS= SL_NS=
}

slurm_control_keys() {
	printf '"session_runner": "slurm", "slurm_listen": "%s:%s", "cdsgated": "%s",
  "munge_socket": "%s", "node_socket": "%s/agent-%%n.sock",
  "slurm_job_user": "nobody", "slurm_conf": "%s"' \
		"$CTL_ADDR1" "$1" "$CDSGATED" "$MUNGE_SOCK" "$SL" "$SLURM_CONF"
}

slurm_door_keys() {
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
		-addext "subjectAltName=IP:127.0.0.1" -keyout "$1/door-key.pem" \
		-out "$1/door-cert.pem" 2> /dev/null || return 1
	chmod 600 "$1/door-key.pem"
	printf '"tls_cert": "%s/door-cert.pem", "tls_key": "%s/door-key.pem",
  "front_door_listen": "127.0.0.1:%s", "front_door_source": "%s"' \
		"$1" "$1" "$2" "$CTL_ADDR1"
}

# The nodes serve plain VNC to the front door (TLS ends there): their
# session policy allows it on their non-loopback address, and their
# sessions accept only the front door's source ($CTL_ADDR1, which both
# nodes reach through their default route).
slurm_node_config() {
	local n=$1 d=$2 addr ctl port
	eval addr=\$NODE_ADDR$n ctl=\$CTL_ADDR$n
	port=$(free_port)
	mkdir -p "$d/node$n"
	echo '{"allow_plain_vnc": true, "watermark_layout": "corner", "watermark_opacity": 0.6, "watermark_text": "%r"}' \
		> "$d/node-policy.json"
	chmod 0644 "$d/node-policy.json"
	cat > "$d/node$n/node.json" <<JSON
{
  "backend_url": "http://$ctl:$3/",
  "session_address": "$addr",
  "session_ports": "$port-$((port + 5))",
  "secrets_dir": "$d/node$n/secrets",
  "grant_key": "$d/node$n/grant.key",
  "record_dir": "$d/node$n/rec",
  "session_policy": "$d/node-policy.json",
  "node_name": "node$n",
  "control_address": "$CTL_ADDR1:$4",
  "front_door_source": "$CTL_ADDR1",
  "munge_socket": "$MUNGE_SOCK",
  "node_socket": "$SL/agent-%n.sock",
  "slurm_job_user": "nobody"
}
JSON
	chmod 0644 "$d/node$n/node.json"
}

slurm_fixture() {
	# the test backend where both nodes reach it: this end of each veth
	python3 "$top_srcdir/tests/gateway/backend.py" --port 0 --bind 0.0.0.0 \
		--record "$1/events.jsonl" > "$1/backend.out" 2> "$1/backend.err" &
	BE_PID=$!
	SL_WHY="the test backend did not start"
	wait_line "$1/backend.out" '^ready ' 10 "$BE_PID" || return 1
	BE_PORT=$(sed -n 's/^ready .*:\([0-9]*\)$/\1/p' "$1/backend.out")
	# slurm_listen and its port + 1 (the evidence receiver) both free
	for _ in $(seq 20); do
		LPORT=$(free_port "$CTL_ADDR1")
		python3 -c 'import socket,sys; socket.socket().bind((sys.argv[1], int(sys.argv[2]) + 1))' \
			"$CTL_ADDR1" "$LPORT" 2> /dev/null && break
	done
	DOOR=$(free_port)
	CONF=$1/serve.json
	SL_WHY="openssl could not make the front door's certificate"
	DOOR_KEYS=$(slurm_door_keys "$1" "$DOOR") || return 1
	write_config "$CONF" "$(slurm_control_keys "$LPORT"), $DOOR_KEYS"
	slurm_node_config 1 "$1" "$BE_PORT" "$LPORT"
	slurm_node_config 2 "$1" "$BE_PORT" "$LPORT"
}

slurm_agents_start() {
	nsenter "$(sl_netns 1)" "$CDSGATED" node --config "$1/node1/node.json" > "$1/node1/out" 2> "$1/node1/err" &
	SL_AG1=$!
	nsenter "$(sl_netns 2)" "$CDSGATED" node --config "$1/node2/node.json" > "$1/node2/out" 2> "$1/node2/err" &
	SL_AG2=$!
	wait_line "$1/node1/out" '^ready node1' 10 "$SL_AG1" &&
		wait_line "$1/node2/out" '^ready node2' 10 "$SL_AG2"
}

slurm_where() {
	sed -n "s/.*session $1: ready at \([0-9.]*:[0-9]*\) on \([a-z0-9_.-]*\) (job \([0-9]*\)).*/\1 \2 \3/p" "$2"
}
