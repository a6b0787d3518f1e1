#!/usr/bin/env bash
# Benchmark: BFS and PageRank against the GAP Benchmark Suite (gapbs) on the same graph
# file, the same BFS source and the same thread count, kernel time only on both sides.
# GAP is no registry's package: it is built here, in a scratch directory, from the
# source directory you name (never committed):
#
#   git clone https://github.com/sbeamer/gapbs /somewhere/gapbs
#   PEER_SRC=/somewhere/gapbs peers/bench-gap.sh [SCALE] [PAIRS]    (default 18, 5)
#
# The graph is scalescope's Kronecker graph of SCALE, exported as an edge list and
# converted to GAP's serialized form (symmetrized) and to scalescope's .csr cache; both
# report the same vertex and edge counts. Each pair runs GAP once (one trial, `-n 1`)
# and scalescope once, the order alternating pair by pair; a pair's ratio is GAP's time
# over scalescope's (above 1: scalescope is faster), and the median of the pairs is the
# result. GAP runs with OMP_PROC_BIND=close OMP_PLACES=cores (pinned, as scalescope's
# workers are). PageRank is compared per iteration, with both stopping rules (GAP's
# L1 change < 1e-4, max 20 iterations; scalescope's --tolerance 1e-4) and the
# iterations each side ran printed. scalescope runs BFS and PageRank on the graph
# renumbered by degree, made once when the input is prepared (GAP does not renumber):
# its seconds are printed at the end; the source is mapped to its new id and the tree
# or scores mapped back to the original ids inside scalescope's kernel time.
# GAP_ROWS picks the rows, a comma-separated subset of bfs,pr,pr_spmv (default all):
#   GAP_ROWS=pr,pr_spmv PEER_SRC=/somewhere/gapbs peers/bench-gap.sh 20 9
# THREADS picks the thread counts (default "1 2"). On a machine without a compiler or
# cargo (a lent 16-core machine), SCALESCOPE=<a scalescope binary> skips the build and
# PEER_BIN=<dir> takes GAP's programs built elsewhere as gap-bfs, gap-pr, gap-pr_spmv
# and gap-converter (g++ -std=c++11 -O3 -Wall -fopenmp -static, GAP's own flags):
#   THREADS="1 2 4 8 16" SCALESCOPE=/kit/scalescope PEER_BIN=/kit peers/bench-gap.sh 20 5
# (PEER_SRC is then optional: it only names the gapbs commit in the output). Paths are
# taken relative to the directory the script is started from.
set -euo pipefail
# The peers' one statistics helper, imported by the Python parts below.
export PEERS_DIR="${PEERS_DIR:-$(cd "$(dirname "$0")" && pwd)}"
for v in SCALESCOPE PEER_BIN PEER_SRC; do
  [ -z "${!v:-}" ] || printf -v "$v" '%s' "$(realpath "${!v}")"
done
cd "$(dirname "$0")/.."
[ -n "${PEER_BIN:-}" ] || : "${PEER_SRC:?set PEER_SRC to a gapbs source directory (git clone https://github.com/sbeamer/gapbs)}"
scale=${1:-18}
pairs=${2:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# GAP's own Makefile flags (CXX_FLAGS = -std=c++11 -O3 -Wall, PAR_FLAG = -fopenmp).
for k in bfs pr pr_spmv converter; do
  if [ -n "${PEER_BIN:-}" ]; then
    cp "$PEER_BIN/gap-$k" "$work/$k"
  else
    g++ -std=c++11 -O3 -Wall -fopenmp "$PEER_SRC/src/$k.cc" -o "$work/$k"
  fi
done
if [ -n "${SCALESCOPE:-}" ]; then
  S=$SCALESCOPE
else
  cargo build --release --quiet
  S=$PWD/target/release/scalescope
fi
"$S" graph export --graph "kron:$scale" --out "$work/g.el" >/dev/null
"$S" graph export --graph "kron:$scale" --out "$work/g.csr" >/dev/null
"$work/converter" -sf "$work/g.el" -b "$work/g.sg" >/dev/null
src=$("$S" graph bfs --graph "$work/g.csr" -t 1 --json -q |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["source"])')
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "graph kron:$scale, BFS source $src (highest degree), gapbs $(git -C "${PEER_SRC:-/nonexistent}" log -1 --format=%h 2>/dev/null || echo '?'), $pairs pairs per row"
python3 - "$S" "$work" "$src" "$pairs" "${THREADS:-1 2}" <<'PY'
import json, os, re, subprocess, sys
sys.path.insert(0, os.environ.get('PEERS_DIR', 'peers'))
import stats as statistics  # peers/stats.py: the peers' one statistics helper

S, work, src, pairs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
thread_counts = [int(t) for t in sys.argv[5].split()]
graph_sg, graph_csr = f"{work}/g.sg", f"{work}/g.csr"


def gap(binary, threads, extra):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="close", OMP_PLACES="cores")
    out = subprocess.run([f"{work}/{binary}", "-f", graph_sg, "-n", "1", *extra],
                         env=env, capture_output=True, text=True, check=True).stdout
    secs = float(re.search(r"Trial Time:\s+([\d.]+)", out).group(1))
    iters = len(re.findall(r"^\s*\d+\s+[\d.e+-]+\s*$", out, re.M))
    return secs, iters


def ours(kernel, threads, extra):
    out = subprocess.run([S, "graph", kernel, "--graph", graph_csr, "-t", str(threads),
                          "--json", "-q", *extra], capture_output=True, text=True, check=True).stdout
    d = json.loads(out)
    if d["verdict"] != "passed":
        sys.exit(f"scalescope {kernel}: verification {d['verdict']}: {d['verification']}")
    relabel.append(d.get("relabel_seconds") or 0.0)
    return d["seconds"], int(d.get("iterations") or 0)


relabel = []


rows = {
    "bfs": ("bfs", lambda t: gap("bfs", t, ["-r", src]), lambda t: ours("bfs", t, ["--source", src]), False),
    "pr": ("pr (GS) per iteration", lambda t: gap("pr", t, ["-l"]), lambda t: ours("pr", t, ["--tolerance", "1e-4"]), True),
    "pr_spmv": ("pr_spmv per iteration", lambda t: gap("pr_spmv", t, ["-l"]), lambda t: ours("pr", t, ["--tolerance", "1e-4"]), True),
}
picked = os.environ.get("GAP_ROWS", "bfs,pr,pr_spmv").split(",")
unknown = [r for r in picked if r not in rows]
if unknown:
    sys.exit(f"GAP_ROWS: unknown row(s) {unknown}; choose from {list(rows)}")
rows = [rows[r] for r in picked]
print(f"{'threads':<8} {'kernel':<24} {'per pair: gap_s / scalescope_s = ratio':<60} median")
for threads in thread_counts:
    for name, peer, mine, per_iter in rows:
        cells = []
        for i in range(pairs):
            first, second = (peer, mine) if i % 2 == 0 else (mine, peer)
            a = first(threads)
            b = second(threads)
            (p, pi), (o, oi) = (a, b) if i % 2 == 0 else (b, a)
            if per_iter:
                p, o = p / max(pi, 1), o / max(oi, 1)
            cells.append((p, o, pi, oi))
        ratios = [p / o for p, o, _, _ in cells]
        per = "  ".join(f"{p:.4g}/{o:.4g}={r:.2f}x" for (p, o, _, _), r in zip(cells, ratios))
        iters = f" (iterations gap {cells[0][2]}, scalescope {cells[0][3]})" if per_iter else ""
        print(f"{threads:<8} {name:<24} {per}  median {statistics.median(ratios):.2f}x{iters}")
# GAP reads its graph as it is; scalescope renumbers it by degree once per prepared
# input (outside both kernels' time): what that costs here.
print(f"scalescope's renumbering by degree when the input is prepared (not in the kernel time): "
      f"median {statistics.median(relabel):.3f} s over {len(relabel)} runs")
PY
