#!/usr/bin/env bash
# Speed check: NAS EP, IS and FT over MPI (scalescope-mpi-nas, ranks placed by
# `scalescope mpi-check` through Open MPI's mpirun) against the threaded kernels
# (`scalescope npb`) at equal total workers on this node, both placed compactly,
# one worker per CPU. Prints each side's median Mop/s over the repetitions (every
# run verified) and the ratio MPI / threaded.
# Usage: peers/bench-mpi.sh [CLASS] [WORKERS] [REPS]   (default W, every core, 5)
# Only meaningful on a quiet machine: the load average is printed first, and a
# load above half the CPUs is flagged (do not record such numbers).
set -euo pipefail
cd "$(dirname "$0")/.."
class=${1:-W}
reps=${3:-5}
command -v mpirun.openmpi >/dev/null || { echo "unavailable here: mpirun.openmpi is not installed (scripts/install-test-deps.sh installs it)" >&2; exit 3; }
cargo build --release --quiet -p scalescope -p scalescope-mpi-nas
bin=target/release
workers=${2:-$("$bin/scalescope" topo --json | python3 -c "import json,sys; print(len({p['core'] for p in json.load(sys.stdin)['pus'] if p['online'] and p['allowed']}))")}
cpus=$(nproc)
load=$(cut -d' ' -f1 /proc/loadavg)
echo "class $class, $workers workers, $reps runs each; load average $load on $cpus CPUs"
python3 -c "import sys; sys.exit(0 if float('$load') <= $cpus / 2 else 1)" \
  || echo "warning: the machine is busy (load $load): these timings are not a benchmark result"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-6s %14s %14s %8s\n' kernel "threaded Mop/s" "MPI Mop/s" "MPI/thr"
for kernel in ep is ft; do
  for _ in $(seq "$reps"); do
    "$bin/scalescope" npb "$kernel" --class "$class" --threads "$workers" \
      --placement compact --quiet --json >>"$work/$kernel-threaded.json"
  done
  "$bin/scalescope" mpi-check --launcher mpirun --launcher-path mpirun.openmpi \
    --ranks-per-node "$workers" --strategy compact --reps "$reps" --json \
    -- "$bin/scalescope-mpi-nas" "$kernel" "$class" >"$work/$kernel-mpi.json"
  python3 - "$kernel" "$work/$kernel-threaded.json" "$work/$kernel-mpi.json" <<'PY'
import json, statistics, sys
kernel, threaded, mpi = sys.argv[1:]
dec = json.JSONDecoder()
text, docs, i = open(threaded).read(), [], 0
while i < len(text):
    if text[i].isspace():
        i += 1
        continue
    doc, i = dec.raw_decode(text, i)
    docs.append(doc)
t = [d["mops"] for d in docs if d["verified"]]
runs = [r for l in json.load(open(mpi))["launches"] for r in l["runs"]]
m = [r["report"]["figures"]["mops"] for r in runs if r["report"] and r["report"]["verified"]]
if len(t) != len(docs) or len(m) != len(runs) or not t or not m:
    sys.exit(f"{kernel}: a run did not verify ({len(t)}/{len(docs)} threaded, {len(m)}/{len(runs)} MPI)")
a, b = statistics.median(t), statistics.median(m)
print(f"{kernel:<6} {a:14.1f} {b:14.1f} {b / a:7.2f}x")
PY
done
