#!/usr/bin/env bash
# Benchmark: what the evidence sampler costs a run at its default interval. Runs a
# one-run STREAM sweep with sampling on (--sample-interval 100) and off
# (--sample-interval 0), interleaved in PAIRS pairs (on, off, on, off, ...), and
# prints the median run wall time, run CPU time (user + sys of the run's process, from
# wait4) and triad rate of each side, their ratio, and the sampler's own CPU time as
# recorded in each sampled run. CPU time is the robust side of the comparison on a
# shared machine: other work stretches a run's wall time, much less the CPU time
# its own threads burn. For the per-pair ratios of CPU time it also prints a 95%
# bootstrap interval of their median. The CPU model and load average are printed
# before and after.
# Environment: PAIRS (default 10), THREADS (default: all usable CPUs), SIZE (per
# array, default 128MiB), NTIMES (default 20), BIN (a built scalescope to use
# instead of building the release binary).
set -euo pipefail
# The peers' one statistics helper, imported by the Python parts below.
export PEERS_DIR="${PEERS_DIR:-$(cd "$(dirname "$0")" && pwd)}"
cd "$(dirname "$0")/.."
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet
fi
bin=${BIN:-target/release/scalescope}
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pairs=${PAIRS:-10}
threads=${THREADS:-$(nproc)}
for i in $(seq 1 "$pairs"); do
  for mode in on off; do
    interval=100
    [ "$mode" = off ] && interval=0
    "$bin" sweep --quiet --workload stream --param "size=${SIZE:-128MiB}" \
      --param "ntimes=${NTIMES:-20}" --threads "$threads" --reps 1 --warmup 0 \
      --sample-interval "$interval" --out "$work/$mode-$i" >/dev/null
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work" "$pairs" <<'PY'
import json, os, random, sys
sys.path.insert(0, os.environ.get('PEERS_DIR', 'peers'))
import stats as statistics  # peers/stats.py: the peers' one statistics helper
work, pairs = sys.argv[1], int(sys.argv[2])
def runs(mode):
    out = []
    for i in range(1, pairs + 1):
        lines = open(f"{work}/{mode}-{i}/results.jsonl").read().splitlines()[1:]
        out += [json.loads(l) for l in lines]
    return out
on, off = runs("on"), runs("off")
print("pairs (sampled, unsampled wall s):", ", ".join(f"({a['wall_secs']:.2f}, {b['wall_secs']:.2f})" for a, b in zip(on, off)))
med = lambda v: statistics.median(v)
for name, key in [("wall s", lambda r: r["wall_secs"]), ("run CPU s", lambda r: r["user_secs"] + r["sys_secs"]), ("triad GB/s", lambda r: r["metrics"]["triad_gb_per_s"])]:
    a, b = med([key(r) for r in on]), med([key(r) for r in off])
    print(f"{name:12} sampled {a:.4f}  unsampled {b:.4f}  sampled/unsampled {a / b:.4f}")
cost = [r["evidence"]["sampler"]["fraction_of_wall"] for r in on]
samples = [r["evidence"]["samples"] for r in on]
cpu = lambda r: r["user_secs"] + r["sys_secs"]
ratios = [cpu(a) / cpu(b) for a, b in zip(on, off)]
rng = random.Random(17)
boot = sorted(med([rng.choice(ratios) for _ in ratios]) for _ in range(2000))
print(f"run CPU time, per-pair ratio sampled/unsampled: median {med(ratios):.4f}, 95% bootstrap interval [{boot[50]:.4f}, {boot[1949]:.4f}] over {len(ratios)} pairs")
print(f"sampler CPU time / run wall time: median {med(cost) * 100:.3f}%  max {max(cost) * 100:.3f}%  ({med(samples):.0f} samples per run)")
PY
