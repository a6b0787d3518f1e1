#!/usr/bin/env bash
# Benchmark: scalescope's STREAM triad against likwid-bench (Debian likwid 5.2), and
# scalescope's core-to-core latency against nviennot's core-to-core-latency
# (crates.io), on the same working set / CPU pair and thread count, in one run.
#
# Working set: likwid-bench's -w S0:SIZE:T is the total over all of a kernel's
# arrays; scalescope's --size is per array, so STREAM triad (3 arrays) gets SIZE/3.
# likwid's triad_avx is A = B + C*D (4 streams); its stream_avx is STREAM's own
# A = B*c + C (3 streams). Both are reported. The tools run interleaved REPS times
# and medians are compared (single runs on a shared VM vary by 5-10%).
# Usage: peers/bench-mem.sh [TOTAL_MB] [REPS]     (default 396 MB = 3 x 4 x 33 MiB L3, 10 reps)
set -euo pipefail
cd "$(dirname "$0")/.."
total_mb=${1:-396}
reps=${2:-10}
if ! command -v likwid-bench >/dev/null; then
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq likwid >/dev/null
fi
command -v core-to-core-latency >/dev/null || cargo install --quiet core-to-core-latency
cargo build --release --quiet
S=target/release/scalescope
per_array=$((total_mb * 1000000 / 3))
one_likwid() { likwid-bench -t "$1" -w "S0:${total_mb}MB:$2" 2>/dev/null | awk '/^MByte\/s/ {print $2}'; }
one_ours() {
  $S mem stream --threads "$1" --placement cores-first --size "$per_array" --ntimes 10 --json |
    python3 -c "import json,sys; d=json.load(sys.stdin); assert d['verified']; print(d['kernels']['triad']['gb_per_s']*1000)"
}
med() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "working set ${total_mb} MB in all; ${reps} interleaved runs of each tool, medians (MB/s)"
printf "%-8s %18s %20s %20s %10s %10s\n" threads "scalescope triad" "likwid triad_avx" "likwid stream_avx" "vs triad" "vs stream"
for t in 1 2; do
  : > /tmp/bench-mem-$$.o; : > /tmp/bench-mem-$$.a; : > /tmp/bench-mem-$$.b
  for _ in $(seq "$reps"); do
    one_ours "$t" >> /tmp/bench-mem-$$.o
    one_likwid triad_avx "$t" >> /tmp/bench-mem-$$.a
    one_likwid stream_avx "$t" >> /tmp/bench-mem-$$.b
  done
  o=$(med < /tmp/bench-mem-$$.o); a=$(med < /tmp/bench-mem-$$.a); b=$(med < /tmp/bench-mem-$$.b)
  printf "%-8s %13.0f MB/s %15.0f MB/s %15.0f MB/s %9.2fx %9.2fx\n" "$t" "$o" "$a" "$b" "$(echo "$o/$a" | bc -l)" "$(echo "$o/$b" | bc -l)"
done
rm -f /tmp/bench-mem-$$.*
cpus=$($S place --threads 2 --json | python3 -c "import json,sys; print(','.join(str(t['cpus'][0]) for t in json.load(sys.stdin)['threads']))")
echo
runs=${C2C_RUNS:-7}
echo "core-to-core latency between CPUs $cpus: one-way ns (mean of 300 samples of 1000 round trips, as"
echo "core-to-core-latency defines it); the tools alternate ${runs} times, and since a VM's host placement drifts,"
echo "each of our runs is compared with the peer's run just before it"
peer_runs=(); our_runs=()
for _ in $(seq "$runs"); do
  # Its --csv prints the lower triangle; the pair's mean is the one number in it.
  peer_runs+=("$(core-to-core-latency 1000 300 --cores "$cpus" --csv 2>/dev/null | tr ',' '\n' | grep -E '^[0-9.]+$' | head -1)")
  our_runs+=("$($S mem c2c --cpus "$cpus" --round-trips 1000 --samples 300 --json | python3 -c "import json,sys; print(json.load(sys.stdin)['c2c']['pairs'][0]['mean_ns'])")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratios=()
for i in "${!peer_runs[@]}"; do ratios+=("$(echo "${our_runs[$i]}/${peer_runs[$i]}" | bc -l)"); done
p=$(median "${peer_runs[@]}"); o=$(median "${our_runs[@]}"); r=$(median "${ratios[@]}")
echo "  core-to-core-latency runs: ${peer_runs[*]}"
echo "  scalescope mem c2c runs:   ${our_runs[*]}"
printf "  medians: core-to-core-latency %.1f ns, scalescope %.1f ns; median ratio of adjacent runs %.3f\n" "$p" "$o" "$r"
