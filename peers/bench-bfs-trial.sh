#!/bin/sh
# Where one warm BFS trial's time goes (issue 36, fourth round): one process of
# `scalescope graph bfs --trials 64 --verify none` on GRAPH from SOURCE at THREADS;
# prints the warm trials' median (and spread), the last trial's seconds, the sum of
# its steps' seconds and the rest (the tree's initialisation, the team's start and
# end; before the fifth round also the map back to original ids: what a trial pays
# besides its levels).
# Not a comparison by itself: run it interleaved for two binaries, under the lock:
#
#   peers/bench-bfs-trial.sh target/release/scalescope 2 g16.csr 23
set -eu
B=$1 t=$2 g=$3 src=$4
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$B" graph bfs --graph "$g" --source "$src" -t "$t" --trials 64 --verify none --json -q 2>/dev/null >"$out" || [ $? = 5 ]
python3 - "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
w, steps = d['trials']['warm'], d['steps']
tot = sum(s['seconds'] for s in steps)
print('warm median %.1f us (iqr %.2f), last trial %.1f us, its steps %.1f us, outside %.1f us'
      % (w['median_seconds'] * 1e6, w['iqr_over_median'], d['seconds'] * 1e6, tot * 1e6,
         (d['seconds'] - tot) * 1e6))
PY
