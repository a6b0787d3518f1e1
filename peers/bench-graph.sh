#!/usr/bin/env bash
# Benchmark: graph workloads against networkit, python-graphblas (SuiteSparse) and
# igraph from PyPI, on the same graph (scalescope's Kronecker graph exported as an
# edge list and read by every tool) and thread count, graph loading not timed, counts
# compared. The host's speed drifts, so peers/graph_peers.py times each peer and then
# scalescope back to back (best of 3 each), ROUNDS times; each round's ratio is
# printed and the median ratio is the result. igraph's 4-vertex motif census is slow,
# so the motif comparison runs once, on one thread, at a smaller scale.
# Usage: peers/bench-graph.sh [SCALE] [MOTIF_SCALE] [ROUNDS]   (default 16, 10, 3;
#        MOTIF_SCALE 0 skips the motifs)
set -euo pipefail
# The peers' one statistics helper, imported by the Python parts below.
export PEERS_DIR="${PEERS_DIR:-$(cd "$(dirname "$0")" && pwd)}"
cd "$(dirname "$0")/.."
scale=${1:-16}
mscale=${2:-10}
rounds=${3:-3}
PY=$(peers/venv.sh)   # peers/.venv with the pinned versions of peers/requirements.txt
cargo build --release --quiet
S=$PWD/target/release/scalescope
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
$S graph export --graph "kron:$scale" --out "$work/g.el" >/dev/null
# BFS starts at the highest-degree vertex (in the giant component).
src=$(python3 -c "
import collections
d=collections.Counter()
for l in open('$work/g.el'):
    u,v=l.split(); d[u]+=1; d[v]+=1
print(max(d,key=d.get))")
echo "graph kron:$scale ($(wc -l < "$work/g.el") edges), BFS source $src, $rounds rounds; $("$PY" -c 'import networkit, graphblas; print("networkit", networkit.__version__, "python-graphblas", graphblas.__version__)')"
printf "%-8s %-26s %-40s %s\n" threads what "per round: peer_s / scalescope_s = ratio" "median"
for t in 1 2; do
  "$PY" peers/graph_peers.py "$S" "$work/g.el" "$t" "$src" "$rounds" 2>/dev/null |
    python3 -c "
import json, os, sys
sys.path.insert(0, os.environ.get('PEERS_DIR', 'peers'))
import stats as statistics  # peers/stats.py: the peers' one statistics helper
t = sys.argv[1]
rounds = json.load(sys.stdin)['rounds']
for what in rounds[0]:
    cells = [r[what] for r in rounds]
    ratios = [c['peer'] / c['ours'] for c in cells]
    per = '  '.join(f\"{c['peer']:.4g}/{c['ours']:.4g}={x:.1f}x\" for c, x in zip(cells, ratios))
    same = '' if all(c['same'] for c in cells) else '  COUNTS DIFFER'
    iters = f\"  iterations (peer, ours) {cells[0]['iterations']}\" if 'iterations' in cells[0] else ''
    print(f'{t:<8} {what:<26} {per}  median {statistics.median(ratios):.1f}x{same}{iters}')
" "$t"
done
[ "$mscale" = 0 ] && exit 0
$S graph export --graph "kron:$mscale" --out "$work/m.el" >/dev/null
"$PY" peers/graph_peers.py "$S" "$work/m.el" 1 0 0 --motifs 2>/dev/null | python3 -c "
import json, sys
m = json.load(sys.stdin)['motifs']
for key in ['ind_c4', 'ind_diamond', 'k4']:
    c = m[key]
    same = 'equal' if c['igraph'] == c['ours'] else 'DIFFERENT'
    print(f\"1        {key:<12} igraph census {m['seconds']:.2f} s (all motifs), scalescope {c['ours_seconds']:.4f} s: {m['seconds'] / c['ours_seconds']:.0f}x, counts {same}\")
"
