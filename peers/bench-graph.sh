#!/usr/bin/env bash
# Benchmark: graph workloads against networkit, python-graphblas (SuiteSparse) and
# igraph from PyPI, on the same graph (scalescope's Kronecker graph exported as an
# edge list and read by every tool) and thread count, graph loading not timed, best
# of 3; counts compared. igraph's 4-vertex motif census is slow, so the motif
# comparison runs at a smaller scale.
# Usage: peers/bench-graph.sh [SCALE] [MOTIF_SCALE]     (default 16 and 10)
set -euo pipefail
cd "$(dirname "$0")/.."
scale=${1:-16}
mscale=${2:-10}
[ -x peers/.venv/bin/python ] || python3 -m venv peers/.venv
peers/.venv/bin/python -c "import networkit, graphblas, igraph" 2>/dev/null || peers/.venv/bin/pip install -q networkit python-graphblas igraph
cargo build --release --quiet
S=target/release/scalescope
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
$S graph export --graph "kron:$scale" --out "$work/g.el" >/dev/null
$S graph export --graph "kron:$mscale" --out "$work/m.el" >/dev/null
src=$(python3 -c "
import collections,sys
d=collections.Counter()
for l in open('$work/g.el'):
    u,v=l.split(); d[u]+=1; d[v]+=1
print(max(d,key=d.get))")
best() { sort -g | head -1; }
ours() { for _ in 1 2 3; do "$@" | python3 -c "import json,sys; print(json.load(sys.stdin)['$1_key'] if False else json.load(sys.stdin)['seconds'])" 2>/dev/null || true; done; }
echo "graph kron:$scale ($(wc -l < "$work/g.el") edges), BFS source $src; motifs on kron:$mscale"
printf "%-8s %-22s %12s %12s %9s\n" threads what peer_s scalescope_s speedup
for t in 1 2; do
  peer=$(peers/.venv/bin/python peers/graph_peers.py "$work/g.el" "$t" "$src" 2>/dev/null)
  tri=$(for _ in 1 2 3; do $S graph count --graph "$work/g.el" --pattern triangle --threads "$t" --json; done | python3 -c "
import json,sys
docs=[json.loads(x) for x in sys.stdin.read().replace('}\n{','}\x00{').split('\x00')]
print(min(d['seconds'] for d in docs), docs[0]['count'])")
  bfs=$(for _ in 1 2 3; do $S graph bfs --graph "$work/g.el" --source "$src" --threads "$t" --json; done | python3 -c "
import json,sys
docs=[json.loads(x) for x in sys.stdin.read().replace('}\n{','}\x00{').split('\x00')]
print(min(d['seconds'] for d in docs))")
  pr=$(for _ in 1 2 3; do $S graph pr --graph "$work/g.el" --threads "$t" --json; done | python3 -c "
import json,sys
docs=[json.loads(x) for x in sys.stdin.read().replace('}\n{','}\x00{').split('\x00')]
print(min(d['seconds_per_iteration'] for d in docs))")
  python3 - "$t" "$peer" $tri "$bfs" "$pr" <<'PY'
import json, sys
t, peer, tri_s, tri_n, bfs_s, pr_s = sys.argv[1], json.loads(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
rows = [
    ("triangles vs networkit", peer["networkit_triangles"]["seconds"], tri_s, peer["networkit_triangles"]["count"] == tri_n),
    ("triangles vs graphblas", peer["graphblas_triangles"]["seconds"], tri_s, peer["graphblas_triangles"]["count"] == tri_n),
    ("BFS vs networkit", peer["networkit_bfs"]["seconds"], bfs_s, True),
    ("PageRank/iteration vs nk", peer["networkit_pagerank"]["seconds_per_iteration"], pr_s, True),
]
for what, p, o, same in rows:
    print(f"{t:<8} {what:<22} {p:12.5f} {o:12.5f} {p/o:8.1f}x{'' if same else '  COUNTS DIFFER'}")
PY
done
mpeer=$(peers/.venv/bin/python peers/graph_peers.py "$work/m.el" 1 0 --motifs 2>/dev/null)
python3 - "$mpeer" "$S" "$work/m.el" <<'PY'
import json, subprocess, sys
peer, S, path = json.loads(sys.argv[1])["igraph_motifs4"], sys.argv[2], sys.argv[3]
for key, args in [("ind_c4", ["c4", "--induced"]), ("ind_diamond", ["diamond", "--induced"]), ("k4", ["k4"])]:
    d = json.loads(subprocess.run([S, "graph", "count", "--graph", path, "--pattern", *args, "--threads", "1", "--json"], capture_output=True, text=True).stdout)
    same = "equal" if d["count"] == peer[key] else "DIFFERENT"
    print(f"1        {key:<12} igraph census {peer['seconds']:.2f} s (all motifs), scalescope {d['seconds']:.4f} s: {peer['seconds']/d['seconds']:.0f}x, counts {same}")
PY
