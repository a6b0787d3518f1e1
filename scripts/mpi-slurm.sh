#!/usr/bin/env bash
# Runs a command against a one-node Slurm on loopback: writes a slurm.conf for this
# machine (its CPUs as `slurmd -C` reports them) in a private directory, starts
# munged, slurmctld and slurmd there (each under `timeout`, so none outlives a hung
# test), waits until the node is idle, runs the command with SLURM_CONF exported,
# and stops the daemons on exit, failure included.
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
# Ports of their own, so two test runs on one machine do not meet.
base=$((20000 + ($$ % 10000) * 4))
host=$(hostname -s)
node=$(slurmd -C | head -1 | sed "s/^NodeName=[^ ]*/NodeName=$host NodeAddr=127.0.0.1/")
mkdir -p "$dir/state" "$dir/spool" "$dir/tmp"
install -m 0600 /etc/munge/munge.key "$dir/munge.key"
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
export SLURM_CONF=$dir/slurm.conf
setsid timeout -k 5 "$LIFETIME" munged --foreground --force --socket="$dir/munge.sock" \
  --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
  --seed-file="$dir/munge.seed" >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$dir/munge.sock" ] && break; sleep 0.1; done
[ -S "$dir/munge.sock" ] || fail "munged did not start"
setsid timeout -k 5 "$LIFETIME" slurmctld -D -i -f "$SLURM_CONF" >"$dir/slurmctld.out" 2>&1 &
pids+=($!)
setsid timeout -k 5 "$LIFETIME" slurmd -D -f "$SLURM_CONF" >"$dir/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  state=$(sinfo -h -o %t 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.2
done
[ "${state:-}" = idle ] || fail "the local Slurm node did not become idle (state: ${state:-none})"
set +e
"$@"
status=$?
set -e
exit "$status"
