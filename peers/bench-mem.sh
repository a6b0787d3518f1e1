#!/usr/bin/env bash
# Benchmark: scalescope's bandwidth ceilings against likwid-bench (Debian likwid 5.2)
# and stream.c, and its core-to-core latency against nviennot's core-to-core-latency
# (crates.io), on the same working set / CPU pair and thread count, in one run.
#
# Sizes: every tool gets the same array size, SIZE_MB/3 per array (likwid-bench's
# -w S0:SIZE:T is the total over a kernel's arrays, so its one-array load and store
# kernels get one array's size). scalescope `read` is compared with likwid
# `load_avx`, `write` (ordinary stores) with `store_avx` (ordinary stores),
# `write_nt` (non-temporal stores) with `store_mem_avx` (non-temporal), `copy` and
# `triad` with stream.c built here with gcc -O3
# -march=native -fopenmp from PEER_SRC/stream.c (McCalpin's, never committed; no
# registry carries it: without PEER_SRC that comparison is skipped). Pages: huge
# pages on every side. scalescope's allocator advises transparent huge pages for
# large blocks (src/alloc.rs), likwid-bench gets the same advice from glibc's
# malloc (GLIBC_TUNABLES=glibc.malloc.hugetlb=1), and stream.c's static arrays from
# a constructor compiled beside it (below); the THP setting is printed (with
# `never`, every side falls back to 4 KiB pages alike). The tools run
# interleaved REPS times (one pair per repetition); the script prints each tool's
# median and every pair's ratio (scalescope / peer GB/s, above 1: scalescope faster)
# with their median. likwid-bench reports the average rate over about one second of
# back-to-back repetitions of one kernel between two barriers; scalescope's
# `sustained` rows are measured the same way (`mem stream --sustain 1`: each of
# read, write and write_nt alone, back to back for about a second between two
# barriers, average rate over the block), the like-for-like figure against likwid.
# The best-iteration rows (as stream.c reports) are printed beside them. Each
# tool's resident huge pages (AnonHugePages) are sampled during its first run and
# printed, so the page size is shown, not assumed.
# Usage: [PEER_SRC=dir] peers/bench-mem.sh [SIZE_MB] [REPS]   (default 396 MB = 3 x 4 x 33 MiB L3, 7 reps)
# THREADS picks the thread counts (default "1 2"). On a machine without a compiler,
# cargo or a package registry (a lent 16-core machine): SCALESCOPE=<a scalescope
# binary> skips the build, STREAM_BIN=<stream built elsewhere from the same wrapper
# and -DSTREAM_ARRAY_SIZE=SIZE_MB*1e6/24, checked against what it reports> replaces
# the build of stream.c, likwid-bench is taken from PATH as found (where it cannot be
# installed its columns are skipped, saying so), and C2C_RUNS=0 skips core-to-core.
# Paths are taken relative to the directory the script is started from.
set -euo pipefail
# The peers' one statistics helper, imported by the Python parts below.
export PEERS_DIR="${PEERS_DIR:-$(cd "$(dirname "$0")" && pwd)}"
for v in SCALESCOPE STREAM_BIN PEER_SRC; do
  [ -z "${!v:-}" ] || printf -v "$v" '%s' "$(realpath "${!v}")"
done
cd "$(dirname "$0")/.."
total_mb=${1:-396}
reps=${2:-7}
if ! command -v likwid-bench >/dev/null; then
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq likwid; } >/dev/null 2>&1 ||
    echo "unavailable here: likwid-bench is not installed and apt-get could not install it; its columns are skipped"
fi
if [ -n "${SCALESCOPE:-}" ]; then
  S=$SCALESCOPE
else
  cargo build --release --quiet
  S=target/release/scalescope
fi
per_array=$((total_mb * 1000000 / 3))
array_mb=$((total_mb / 3))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stream_c=""
if [ -n "${PEER_SRC:-}" ]; then
  [ -f "$PEER_SRC/stream.c" ] || { echo "PEER_SRC=$PEER_SRC has no stream.c" >&2; exit 2; }
  # stream.c unchanged, plus huge-page advice for its arrays before main touches them.
  cat > "$work/stream_thp.c" <<C
#include <stdint.h>
#include <sys/mman.h>
#include "$PEER_SRC/stream.c"
__attribute__((constructor)) static void advise_huge_pages(void) {
  const uintptr_t huge = 2u << 20;
  char *arrays[3] = {(char *)a, (char *)b, (char *)c};
  for (int i = 0; i < 3; i++) {
    uintptr_t s = ((uintptr_t)arrays[i] + huge - 1) & ~(huge - 1);
    uintptr_t e = ((uintptr_t)arrays[i] + sizeof(a)) & ~(huge - 1);
    if (e > s) madvise((void *)s, e - s, MADV_HUGEPAGE);
  }
}
C
  gcc -O3 -march=native -fopenmp -mcmodel=medium -DSTREAM_ARRAY_SIZE=$((per_array / 8)) -DNTIMES=10 \
    "$work/stream_thp.c" -o "$work/stream"
  stream_c="$work/stream"
elif [ -n "${STREAM_BIN:-}" ]; then
  elements=$(OMP_NUM_THREADS=1 "$STREAM_BIN" | awk '/^Array size/ {print $4}')
  [ "$elements" = $((per_array / 8)) ] ||
    { echo "STREAM_BIN=$STREAM_BIN has arrays of $elements elements, not $((per_array / 8))" >&2; exit 2; }
  stream_c=$STREAM_BIN
else
  echo "PEER_SRC not set: stream.c comparison skipped (PEER_SRC=dir holding McCalpin's stream.c)"
fi
# Runs "${@:2}" with stdout to $work/out, printing (on stderr, named $1) the most
# AnonHugePages and Rss (MiB) its process held, sampled every 0.1 s.
huge_pages() {
  local what=$1
  shift
  "$@" > "$work/out" 2>/dev/null & local pid=$! most=0 rss=0
  while kill -0 "$pid" 2>/dev/null; do
    read -r h r < <(awk '/^AnonHugePages/ {h = $2} /^Rss/ {r = $2} END {print h + 0, r + 0}' "/proc/$pid/smaps_rollup" 2>/dev/null || echo 0 0)
    [ "$h" -gt "$most" ] && { most=$h; rss=$r; }
    sleep 0.1
  done
  wait "$pid" || true
  echo "  $what: at most $((most / 1024)) MiB of $((rss / 1024)) MiB resident in transparent huge pages" >&2
}
# GB/s of one likwid-bench kernel over one array.
likwid() {
  command -v likwid-bench >/dev/null || { echo nan; return; }
  local rate
  rate=$(GLIBC_TUNABLES=glibc.malloc.hugetlb=1 likwid-bench -t "$1" -w "S0:${array_mb}MB:$2" 2>"$work/likwid.err" |
    awk '/^MByte\/s/ {print $2 / 1000}') || true
  [ -n "$rate" ] || { echo "likwid-bench $1 at $2 threads failed: $(head -c 300 "$work/likwid.err")" >&2; rate=nan; }
  echo "$rate"
}
# GB/s of stream.c's Copy and Triad (best rates), one line.
stream() {
  OMP_NUM_THREADS=$1 OMP_PROC_BIND=true OMP_PLACES=cores "$stream_c" |
    awk '/^Copy:/ {c = $2 / 1000} /^Triad:/ {t = $2 / 1000} END {print c, t}'
}
# GB/s of scalescope's copy, triad, write, write_nt and read (best iteration, as
# stream.c reports), then write, write_nt and read over their sustained blocks (as
# likwid-bench reports), then the loop its sustained read ran through (its trial's
# pick, `wide` or `paced`; docs/json.md).
ours() {
  "$S" mem stream --threads "$1" --placement cores-first --size "$per_array" --ntimes 10 --sustain 1 --json |
    python3 -c "import json,sys; d=json.load(sys.stdin); assert d['verified']; k=d['kernels']; print(*(k[n]['gb_per_s'] for n in ('copy','triad','write','write_nt','read')), *(k[n]['sustained']['gb_per_s'] for n in ('write','write_nt','read')), (k['read'].get('loop') or {}).get('chosen', 'wide'))"
}
echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)"
echo "arrays of ${array_mb} MB; ${reps} interleaved pairs per thread count; GB/s medians, per-pair ratios scalescope/peer"
echo "load average at the start: $(cat /proc/loadavg)"
echo "huge pages, sampled during one run of each tool at 1 thread:"
huge_pages "scalescope mem stream" "$S" mem stream --threads 1 --size "$per_array" --ntimes 10 --sustain 1
command -v likwid-bench >/dev/null && huge_pages "likwid-bench load_avx" env GLIBC_TUNABLES=glibc.malloc.hugetlb=1 likwid-bench -t load_avx -w "S0:${array_mb}MB:1"
[ -n "$stream_c" ] && OMP_NUM_THREADS=1 huge_pages "stream.c" "$stream_c"
for t in ${THREADS:-1 2}; do
  for r in $(seq "$reps"); do
    # Each peer kernel runs next to the scalescope figure it is compared with (the
    # host's bandwidth regime can switch within seconds): stream.c and the likwid
    # store kernels before scalescope (iterations, then the write, write_nt and read
    # blocks), likwid load_avx right after its read block.
    sc=$([ -n "$stream_c" ] && stream "$t" || echo nan nan)
    sa=$(likwid store_avx "$t")
    sm=$(likwid store_mem_avx "$t")
    o=$(ours "$t")
    la=$(likwid load_avx "$t")
    echo "$r ${o% *} $la $sm $sa $sc ${o##* }"
  done > "$work/t$t"
  echo "load average after $t thread(s): $(cat /proc/loadavg)"
  python3 - "$t" "$work/t$t" <<'PY'
import os, sys
sys.path.insert(0, os.environ.get('PEERS_DIR', 'peers'))
import stats as st  # peers/stats.py: the peers' one statistics helper
t, lines = sys.argv[1], [l.split() for l in open(sys.argv[2])]
rows, loops = [list(map(float, f[1:-1])) for f in lines], [f[-1] for f in lines]
col = lambda i: [r[i] for r in rows]
# columns: 0 copy, 1 triad, 2 write, 3 write_nt, 4 read, 5-7 write, write_nt, read sustained,
# 8 load_avx, 9 store_mem_avx, 10 store_avx, 11 stream.c Copy, 12 Triad
pairs = [("read sustained", 7, "likwid load_avx", 8), ("read best", 4, "likwid load_avx", 8),
         ("write sustained", 5, "likwid store_avx", 10), ("write best", 2, "likwid store_avx", 10),
         ("write_nt sustained", 6, "likwid store_mem_avx (nt)", 9), ("write_nt best", 3, "likwid store_mem_avx (nt)", 9),
         ("copy", 0, "stream.c Copy", 11), ("triad", 1, "stream.c Triad", 12)]
for ours, i, peer, j in pairs:
    if any(x != x for x in col(j)):
        continue
    ratios = [a / b for a, b in zip(col(i), col(j))]
    print(f"{t} threads  {ours:<18} {st.median(col(i)):7.2f}  {peer:<26} {st.median(col(j)):7.2f}"
          f"  median ratio {st.median(ratios):.3f}  pairs {' '.join(f'{x:.2f}' for x in ratios)}")
print(f"{t} threads  sustained read loop by pair: {' '.join(loops)}")
PY
done

runs=${C2C_RUNS:-7}   # 0 skips the core-to-core comparison
[ "$runs" -gt 0 ] || exit 0
command -v core-to-core-latency >/dev/null || cargo install --quiet core-to-core-latency
cpus=$("$S" place --threads 2 --json | python3 -c "import json,sys; print(','.join(str(t['cpus'][0]) for t in json.load(sys.stdin)['threads']))")
echo
echo "core-to-core latency between CPUs $cpus: one-way ns (mean of 300 samples of 1000 round trips, as"
echo "core-to-core-latency defines it); the tools alternate ${runs} times, and since a VM's host placement drifts,"
echo "each of our runs is compared with the peer's run just before it"
peer_runs=(); our_runs=()
for _ in $(seq "$runs"); do
  # Its --csv prints the lower triangle; the pair's mean is the one number in it.
  peer_runs+=("$(core-to-core-latency 1000 300 --cores "$cpus" --csv 2>/dev/null | tr ',' '\n' | grep -E '^[0-9.]+$' | head -1)")
  our_runs+=("$("$S" mem c2c --cpus "$cpus" --round-trips 1000 --samples 300 --json | python3 -c "import json,sys; print(json.load(sys.stdin)['c2c']['pairs'][0]['mean_ns'])")")
done
median() { python3 "$(dirname "$0")/stats.py" median "$@"; }
ratios=()
read -ra ratios <<< "$(python3 "$(dirname "$0")/stats.py" ratios "${our_runs[*]}" "${peer_runs[*]}")"
p=$(median "${peer_runs[@]}"); o=$(median "${our_runs[@]}"); r=$(median "${ratios[@]}")
echo "  core-to-core-latency runs: ${peer_runs[*]}"
echo "  scalescope mem c2c runs:   ${our_runs[*]}"
printf "  medians: core-to-core-latency %.1f ns, scalescope %.1f ns; median ratio of adjacent runs %.3f\n" "$p" "$o" "$r"
