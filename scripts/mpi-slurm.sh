#!/usr/bin/env bash
# Runs a command against a one-node Slurm on loopback: writes a slurm.conf for this
# machine (its CPUs as `slurmd -C` reports them) in a private directory, starts
# munged, slurmctld and slurmd there (each under `timeout`, so none outlives a hung
# test), waits until the node is idle, runs the command with SLURM_CONF exported,
# and stops the daemons on exit, failure included. One loopback Slurm runs at a time
# on a machine (a lock in /tmp): a second caller waits for the first to finish.
#
#   scripts/mpi-slurm.sh srun -n 2 hostname
#
# Exit status: the command's; 3 when Slurm could not be started (the reason is
# printed as "unavailable here: ...").
set -euo pipefail
LIFETIME=${SCALESCOPE_SLURM_LIFETIME:-600}
for tool in munged slurmctld slurmd srun sinfo; do
  command -v "$tool" >/dev/null || { echo "unavailable here: $tool is not installed" >&2; exit 3; }
done
# One Slurm at a time: two on one machine would compete for the node name and the
# two host cores. The daemons do not inherit the lock's descriptor (9>&- below).
exec 9>/tmp/scalescope-slurm.lock
flock -w "$LIFETIME" 9 || { echo "unavailable here: another scalescope Slurm held the lock for ${LIFETIME}s" >&2; exit 3; }
dir=$(mktemp -d /tmp/scalescope-slurm.XXXXXX)
pids=()
# Each daemon runs in a session of its own (setsid), so stopping it stops its
# process group, the step daemons it started included.
cleanup() {
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  sleep 1
  for pid in "${pids[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 143' INT TERM
fail() {
  echo "unavailable here: $1" >&2
  for log in "$dir"/*.log; do [ -s "$log" ] && { echo "== $log" >&2; tail -5 "$log" >&2; }; done
  exit 3
}
# A free pair of ports below the kernel's ephemeral range (an outgoing connection,
# from srun or an MPI launcher, may take any port inside it at any moment).
port_free() {
  ! ss -Htan "( sport = :$1 )" 2>/dev/null | grep -q .
}
pick_ports() {
  local low
  low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  for _ in $(seq 50); do
    base=$((10000 + (RANDOM % ((low - 10002) / 2)) * 2))
    port_free "$base" && port_free $((base + 1)) && return 0
  done
  fail "no free pair of ports below $low"
}
host=$(hostname -s)
node=$(slurmd -C | head -1 | sed "s/^NodeName=[^ ]*/NodeName=$host NodeAddr=127.0.0.1/")
mkdir -p "$dir/state" "$dir/spool" "$dir/tmp"
install -m 0600 /etc/munge/munge.key "$dir/munge.key"
write_conf() {
cat > "$dir/slurm.conf" <<CONF
ClusterName=scalescope
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
# Step daemons (PMIx included) keep their files here, not in a /tmp another
# Slurm on this machine would share.
TmpFS=$dir/tmp
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
$node State=UNKNOWN
PartitionName=local Nodes=ALL Default=YES MaxTime=10 State=UP OverSubscribe=FORCE:4
CONF
}
export SLURM_CONF=$dir/slurm.conf
setsid timeout -k 5 "$LIFETIME" munged --foreground --force --socket="$dir/munge.sock" \
  --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
  --seed-file="$dir/munge.seed" >/dev/null 2>&1 9>&- &
pids+=($!)
for _ in $(seq 50); do [ -S "$dir/munge.sock" ] && break; sleep 0.1; done
[ -S "$dir/munge.sock" ] || fail "munged did not start"
# slurmctld binds its port when it starts; if another process took the port in
# between (the check above is not atomic), it exits at once: try other ports.
start_controller() {
  for attempt in 1 2 3; do
    pick_ports
    write_conf
    setsid timeout -k 5 "$LIFETIME" slurmctld -D -i -f "$SLURM_CONF" >"$dir/slurmctld.out" 2>&1 9>&- &
    ctld=$!
    for _ in $(seq 20); do
      kill -0 "$ctld" 2>/dev/null || break
      timeout 3 scontrol ping 2>/dev/null | grep -q UP && { pids+=("$ctld"); return 0; }
      sleep 0.25
    done
    kill -0 "$ctld" 2>/dev/null && { pids+=("$ctld"); return 0; }
    wait "$ctld" 2>/dev/null || true
    echo "slurmctld attempt $attempt on port $base stopped: $(tail -1 "$dir/slurmctld.log" 2>/dev/null)" >&2
  done
  fail "slurmctld did not start"
}
start_controller
setsid timeout -k 5 "$LIFETIME" slurmd -D -f "$SLURM_CONF" >"$dir/slurmd.out" 2>&1 9>&- &
pids+=($!)
# Up to 60 s for the node to register; each query bounded, so an unreachable
# controller costs seconds, not minutes.
deadline=$((SECONDS + 60))
state=none
while [ "$SECONDS" -lt "$deadline" ]; do
  state=$(timeout 5 sinfo -h -o %t 2>/dev/null || true)
  [ "$state" = idle ] && break
  kill -0 "${pids[1]}" 2>/dev/null || fail "slurmctld stopped"
  sleep 0.2
done
[ "$state" = idle ] || fail "the local Slurm node did not become idle within 60 s (state: ${state:-none})"
set +e
"$@"
status=$?
set -e
exit "$status"
