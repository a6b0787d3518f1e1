#!/usr/bin/env bash
# Benchmark: what `scalescope sweep` adds to a 1-second command. Builds a
# compute-bound C program that runs for about one second, then under hyperfine runs
# it directly and as a one-run sweep (pinned, sampled, logged, recorded), and
# compares scalescope's own recorded wall time of the program with the direct time.
# Installs hyperfine and gcc from Debian if missing.
set -euo pipefail
# The peers' one statistics helper, imported by the Python parts below.
export PEERS_DIR="${PEERS_DIR:-$(cd "$(dirname "$0")" && pwd)}"
cd "$(dirname "$0")/.."
need=()
command -v hyperfine >/dev/null || need+=(hyperfine)
command -v gcc >/dev/null || need+=(gcc)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/spin.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000000L;
    volatile double x = 0;
    for (long i = 0; i < n; i++) x += 1e-9;
    printf("%f\n", x);
    return 0;
}
C
gcc -O2 -o "$work/spin" "$work/spin.c"
# Calibrate to about one second on this machine.
iters=400000000
t=$( { /usr/bin/time -f %e "$work/spin" $iters >/dev/null; } 2>&1 )
iters=$(python3 -c "print(int($iters / max($t, 0.05)))")
echo "spin iterations for ~1 s: $iters"
runs=${RUNS:-20}
# A one-thread sweep pins to the first usable CPU; pinning alone changes the time on
# a busy VM, so the fair comparison is with the program pinned the same way.
first_cpu=$(target/release/scalescope place --threads 1 --json | python3 -c "import json,sys; print(json.load(sys.stdin)['threads'][0]['cpus'][0])")
hyperfine --warmup 2 --runs "$runs" -N \
  --prepare "rm -rf $work/out" \
  "$work/spin $iters" \
  "taskset -c $first_cpu $work/spin $iters" \
  "target/release/scalescope sweep --quiet --threads 1 --reps 1 --warmup 0 --out $work/out -- $work/spin $iters" \
  --export-json "$work/h.json" | tail -n 16
# scalescope's own measurement of the program inside the sweep, over several runs:
target/release/scalescope sweep --quiet --threads 1 --reps "$runs" --warmup 1 --out "$work/rec" -- "$work/spin" "$iters" >/dev/null
python3 - "$work/h.json" "$work/rec/results.jsonl" <<'PY'
import json, os, sys
sys.path.insert(0, os.environ.get('PEERS_DIR', 'peers'))
import stats as statistics  # peers/stats.py: the peers' one statistics helper
h = json.load(open(sys.argv[1]))["results"]
direct, pinned, swept = h[0], h[1], h[2]
recs = [json.loads(l) for l in open(sys.argv[2])][1:]
rec = statistics.median(r["wall_secs"] for r in recs if not r["warmup"])
print(f"direct median                 {direct['median']:.4f} s")
print(f"direct, pinned (taskset) median {pinned['median']:.4f} s")
print(f"sweep end-to-end median       {swept['median']:.4f} s  vs pinned {100*(swept['median']/pinned['median']-1):+.2f}%")
print(f"sweep-recorded wall time      {rec:.4f} s  vs pinned {100*(rec/pinned['median']-1):+.2f}%")
PY

# Deterministic view, immune to the VM's wall-time noise: a program that needs no
# CPU (sleep 1). scalescope's own CPU time over the sweep is its overhead; the
# recorded wall time against 1.000 s is the measurement's bias.
rm -rf "$work/sleep"
/usr/bin/time -f "sweep of 10 x sleep 1: elapsed %e s, CPU %U s user + %S s sys (scalescope and children)" \
  target/release/scalescope sweep --quiet --threads 1 --reps 10 --warmup 0 --out "$work/sleep" -- sleep 1 >/dev/null
python3 - "$work/sleep/results.jsonl" <<'PY'
import json, os, sys
sys.path.insert(0, os.environ.get('PEERS_DIR', 'peers'))
import stats as statistics  # peers/stats.py: the peers' one statistics helper
r = [json.loads(l) for l in open(sys.argv[1])][1:]
w = [x["wall_secs"] for x in r]
print(f"recorded wall of sleep 1: median {statistics.median(w):.5f} s (min {min(w):.5f}, max {max(w):.5f})")
print(f"child CPU per run: {statistics.median(x['user_secs'] + x['sys_secs'] for x in r):.5f} s; "
      f"placement samples per run: {statistics.median(x['placement_check']['samples'] for x in r)}")
PY
