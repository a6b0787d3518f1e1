#!/usr/bin/env bash
# Read loops on one core (peers/read-loops/read_loops.c): the comparison behind
# docs/PERFORMANCE.md's "Two read loops and a trial between them" table, from DRAM
# (ARRAY_BYTES, default 132 MB on 2 MiB pages) and from L2 (256 KiB). Recreated from
# that section's description; the original scratch harness was not committed.
# Built with gcc -O2 into a scratch directory removed on exit; x86-64 with AVX2 and FMA.
# Usage: peers/bench-read-loops.sh [ROUNDS] [SECONDS_PER_READ]   (default 9, 0.5)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-9}
secs=${2:-0.5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -mavx2 -mfma peers/read-loops/read_loops.c -o "$work/read_loops"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)"
"$work/read_loops" "${ARRAY_BYTES:-132000000}" "$rounds" "$secs"
echo
"$work/read_loops" 262144 "$rounds" "$secs"
