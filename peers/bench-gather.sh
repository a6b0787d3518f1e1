#!/usr/bin/env bash
# Random reads into a hot array (peers/gather/gather.c): ns per entry with the ids in
# L1 and streamed from memory, scalar loads and the AVX2 gather, as in
# docs/PERFORMANCE.md's "PageRank: parallel setup, map-back in new-id order, 16-bit hub
# ids". Recreated from that section's description; the original scratch harness was not
# committed. Built with gcc -O2 into a scratch directory removed on exit; x86-64 with AVX2.
# Usage: peers/bench-gather.sh [ENTRIES] [ROUNDS]   (default 33554432, 7)
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -mavx2 peers/gather/gather.c -o "$work/gather" -lm
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$work/gather" "${1:-33554432}" "${2:-7}"
