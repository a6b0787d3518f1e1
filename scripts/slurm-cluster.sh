#!/usr/bin/env bash
# Runs a command against a multi-node Slurm cluster on this one machine: each node is
# a network namespace with its own hostname (a UTS namespace) and address on a bridge
# this script makes, running its own slurmd (`slurmd -N nodeK`); slurmctld and munged
# run once, on the bridge's address in the host's namespace, where the command runs
# with SLURM_CONF exported. The nodes share this machine's CPUs: each declares them
# all (what `slurmd -C` reports here).
#
#   scripts/slurm-cluster.sh --nodes 2 srun -N2 hostname        # node1, node2
#   scripts/slurm-cluster.sh --check                            # can it start here?
#
# Nothing is left behind: the daemons, the namespaces, the bridge and the private
# directory go when the command ends, fails or the script is interrupted; if the
# script itself is killed (SIGKILL), a watcher it started cleans up within a second,
# and the next start removes what a dead run left (namespaces and bridges named after
# a process that no longer exists). One scalescope Slurm runs at a time on a machine
# (the lock scripts/mpi-slurm.sh takes): a second caller waits.
#
# Environment: SCALESCOPE_SLURM_LIFETIME (seconds, default 600) bounds every daemon
# and the wait for the lock. Exit status: the command's; 3 when the cluster could not
# be started (the reason is printed as "unavailable here: ...").
set -euo pipefail
LIFETIME=${SCALESCOPE_SLURM_LIFETIME:-600}
NODES=2
CHECK=
while [ $# -gt 0 ]; do
  case $1 in
    --nodes) NODES=$2; shift 2 ;;
    --check) CHECK=1; shift ;;
    --) shift; break ;;
    *) break ;;
  esac
done
case $NODES in ''|*[!0-9]*) echo "--nodes takes a count from 1 to 16, not '$NODES'" >&2; exit 2 ;; esac
[ "$NODES" -ge 1 ] && [ "$NODES" -le 16 ] || { echo "--nodes takes a count from 1 to 16" >&2; exit 2; }
[ -n "$CHECK" ] || [ $# -gt 0 ] || { echo "usage: $0 [--nodes N] COMMAND [ARGS...] | --check" >&2; exit 2; }
unavailable() { echo "unavailable here: $1" >&2; exit 3; }
for tool in munged slurmctld slurmd srun sinfo ip unshare nsenter flock ss; do
  command -v "$tool" >/dev/null || unavailable "$tool is not installed (scripts/install-test-deps.sh installs it)"
done
[ "$(id -u)" -eq 0 ] || unavailable "network namespaces and slurmd need root"

PREFIX=scalescope-slurm
# What a dead run left: namespaces and bridges carry the creating script's PID.
sweep_stale() {
  local ns pid link
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$PREFIX-[0-9]*-" || true); do
    pid=${ns#"$PREFIX"-}; pid=${pid%%-*}
    kill -0 "$pid" 2>/dev/null || ip netns del "$ns" 2>/dev/null || true
  done
  for link in $(ip -o link show type bridge 2>/dev/null | awk -F': ' '{print $2}' | grep '^ssbr[0-9]*$' || true); do
    pid=${link#ssbr}
    kill -0 "$pid" 2>/dev/null || ip link del "$link" 2>/dev/null || true
  done
}

exec 9>/tmp/scalescope-slurm.lock
flock -w "$LIFETIME" 9 || unavailable "another scalescope Slurm held the lock for ${LIFETIME}s"
sweep_stale
me=$$
dir=$(mktemp -d /tmp/scalescope-cluster.XXXXXX)
bridge=ssbr$me
namespaces=()
pids=()
# Stops the daemons (each in a session of its own, so its step daemons and tasks go
# with it), then removes the namespaces, the bridge and the directory.
cleanup() {
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  sleep 1
  for pid in "${pids[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  for ns in "${namespaces[@]}"; do ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true; done
  for ns in "${namespaces[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  ip link del "$bridge" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 143' INT TERM
fail() {
  echo "unavailable here: $1" >&2
  for log in "$dir"/*.log; do [ -s "$log" ] && { echo "== $log" >&2; tail -5 "$log" >&2; }; done
  exit 3
}
# The watcher: if this script dies without running its trap (SIGKILL), it stops the
# daemons' sessions and removes the namespaces, the bridge and the directory. It
# reads the daemons' session ids from a file, as they are started.
start_watcher() {
  setsid bash -c '
    me=$1 dir=$2 bridge=$3 prefix=$4
    while kill -0 "$me" 2>/dev/null; do sleep 0.5; done
    [ -d "$dir" ] || exit 0
    for pid in $(cat "$dir/sessions" 2>/dev/null); do kill -KILL -- "-$pid" 2>/dev/null; done
    for ns in $(ip netns list | awk "{print \$1}" | grep "^$prefix-$me-"); do
      ip netns pids "$ns" | xargs -r kill -KILL; ip netns del "$ns"
    done
    ip link del "$bridge" 2>/dev/null
    rm -rf "$dir"' watcher "$me" "$dir" "$bridge" "$PREFIX" </dev/null >/dev/null 2>&1 9>&- &
}
start_watcher
started() { pids+=("$1"); echo "$1" >>"$dir/sessions"; }

# A /24 on the bridge that no interface here uses yet.
pick_subnet() {
  local taken
  taken=$(ip -o -4 addr show 2>/dev/null | awk '{print $4}')
  for _ in $(seq 50); do
    net=10.$((100 + RANDOM % 100)).$((RANDOM % 250)).
    grep -q "^$net" <<<"$taken" || return 0
  done
  fail "no free 10.x.y.0/24 for the bridge"
}
make_network() {
  pick_subnet
  ip link add "$bridge" type bridge || fail "cannot create a bridge (ip link add type bridge)"
  ip addr add "${net}1/24" dev "$bridge"
  ip link set "$bridge" up
  for i in $(seq "$NODES"); do
    local ns=$PREFIX-$me-node$i
    ip netns add "$ns" || fail "cannot create network namespace $ns"
    namespaces+=("$ns")
    ip link add "ssv${me}n$i" type veth peer name eth0 netns "$ns" || fail "cannot create a veth pair"
    ip link set "ssv${me}n$i" master "$bridge" up
    ip -n "$ns" addr add "${net}$((i + 1))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
  done
}
make_network
[ -n "$CHECK" ] && { echo "a $NODES-node cluster can be made here (bridge $bridge, ${net}0/24)"; exit 0; }

port_free() { ! ss -Htan "( sport = :$1 )" 2>/dev/null | grep -q .; }
pick_ports() {
  local low
  low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  for _ in $(seq 50); do
    base=$((10000 + (RANDOM % ((low - 10002) / 2)) * 2))
    port_free "$base" && return 0
  done
  fail "no free port below $low"
}
host=$(hostname -s)
# Every node declares this machine's CPUs and memory; they share them.
hardware=$(slurmd -C | head -1 | sed 's/^NodeName=[^ ]* //')
mkdir -p "$dir/state" "$dir/tmp"
for i in $(seq "$NODES"); do mkdir -p "$dir/spool-node$i" "$dir/tmp-node$i"; done
install -m 0600 /etc/munge/munge.key "$dir/munge.key"
write_conf() {
  {
    cat <<CONF
ClusterName=scalescope
SlurmctldHost=$host(${net}1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool-%n
TmpFS=$dir/tmp
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
CONF
    for i in $(seq "$NODES"); do
      echo "NodeName=node$i NodeAddr=${net}$((i + 1)) NodeHostname=node$i $hardware State=UNKNOWN"
    done
    echo "PartitionName=cluster Nodes=ALL Default=YES MaxTime=30 State=UP OverSubscribe=NO"
  } >"$dir/slurm.conf"
}
export SLURM_CONF=$dir/slurm.conf
setsid timeout -k 5 "$LIFETIME" munged --foreground --force --socket="$dir/munge.sock" \
  --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
  --seed-file="$dir/munge.seed" >/dev/null 2>&1 9>&- &
started $!
for _ in $(seq 50); do [ -S "$dir/munge.sock" ] && break; sleep 0.1; done
[ -S "$dir/munge.sock" ] || fail "munged did not start"
start_controller() {
  for attempt in 1 2 3; do
    pick_ports
    write_conf
    setsid timeout -k 5 "$LIFETIME" slurmctld -D -i -f "$SLURM_CONF" >"$dir/slurmctld.out" 2>&1 9>&- &
    ctld=$!
    for _ in $(seq 20); do
      kill -0 "$ctld" 2>/dev/null || break
      timeout 3 scontrol ping 2>/dev/null | grep -q UP && { started "$ctld"; return 0; }
      sleep 0.25
    done
    kill -0 "$ctld" 2>/dev/null && { started "$ctld"; return 0; }
    wait "$ctld" 2>/dev/null || true
    echo "slurmctld attempt $attempt on port $base stopped: $(tail -1 "$dir/slurmctld.log" 2>/dev/null)" >&2
  done
  fail "slurmctld did not start"
}
start_controller
daemons=()
for i in $(seq "$NODES"); do
  # nsenter, not `ip netns exec`: that one remounts /sys, hiding the cgroup tree
  # slurmd reads.
  # Each node has its own TmpFS (a private mount of its own directory there), as
  # real nodes have local /tmp: PMIx's step directories are named by job and step
  # alone, and two nodes of one step would collide in a shared one.
  setsid timeout -k 5 "$LIFETIME" nsenter --net="/run/netns/$PREFIX-$me-node$i" \
    unshare --uts --mount --propagation private sh -c \
    'hostname "$1" && mount --bind "$3" "$4" && exec slurmd -D -N "$1" -f "$2"' \
    slurmd "node$i" "$SLURM_CONF" "$dir/tmp-node$i" "$dir/tmp" \
    >"$dir/slurmd-node$i.out" 2>&1 9>&- &
  started $!
  daemons+=($!)
done
# Up to 60 s for every node to register.
deadline=$((SECONDS + 60))
idle=0
while [ "$SECONDS" -lt "$deadline" ]; do
  idle=$(timeout 5 sinfo -h -N -o '%N %t' 2>/dev/null | grep -c ' idle$' || true)
  [ "$idle" -eq "$NODES" ] && break
  kill -0 "$ctld" 2>/dev/null || fail "slurmctld stopped"
  for pid in "${daemons[@]}"; do kill -0 "$pid" 2>/dev/null || fail "a slurmd stopped"; done
  sleep 0.2
done
[ "$idle" -eq "$NODES" ] || fail "$idle of $NODES nodes became idle within 60 s ($(timeout 5 sinfo -h -N -o '%N:%t' 2>/dev/null | tr '\n' ' '))"
# The command runs in a session of its own (its input still this script's), so
# the watcher can stop it, and whatever it started, if this script is killed.
set +e
setsid "$@" 0<&0 9>&- &
command_pid=$!
started "$command_pid"
wait "$command_pid"
status=$?
set -e
exit "$status"
