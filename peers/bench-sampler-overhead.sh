#!/usr/bin/env bash
# Benchmark: what the evidence sampler costs a run at its default interval. Runs a
# one-run STREAM sweep with sampling on (--sample-interval 100) and off
# (--sample-interval 0), interleaved in PAIRS pairs (on, off, on, off, ...), and
# prints the median run wall time and triad rate of each side, their ratio, and the
# sampler's own CPU time as recorded in each sampled run.
# Environment: PAIRS (default 10), THREADS (default: all usable CPUs), SIZE (per
# array, default 128MiB), NTIMES (default 20).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/scalescope
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
python3 - "$work" "$pairs" <<'PY'
import json, statistics, sys
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
print(f"sampler CPU time / run wall time: median {med(cost) * 100:.3f}%  max {max(cost) * 100:.3f}%  ({med(samples):.0f} samples per run)")
PY
