#!/usr/bin/env bash
# Benchmark: BFS, PageRank and triangle counting against the GAP Benchmark Suite
# (gapbs) on the same graph file, the same BFS source and the same thread count,
# kernel time only on both sides, over graph sizes and thread counts, each run's peak
# RSS beside its time. GAP is no registry's package: it is built here, in a scratch
# directory, from the source directory you name (never committed):
#
#   git clone https://github.com/sbeamer/gapbs /somewhere/gapbs
#   PEER_SRC=/somewhere/gapbs peers/bench-gap.sh [SCALES] [PAIRS]   (default 18, 5)
#
# SCALES is one Kronecker scale or several, comma-separated ("16,18,20,22"). Each
# graph is scalescope's Kronecker graph of that scale, exported as an edge list and
# converted to GAP's serialized form (symmetrized) and to scalescope's .csr cache;
# both report the same vertex and edge counts.
#
# Timing (PEERS.md, "Measuring like for like"), TIMINGS picks (default "warm cold"):
# - warm: one process per side runs TRIALS trials (default 16) on the input it
#   loaded once, GAP with `-n TRIALS`, scalescope with `--trials TRIALS`; the first
#   trial (thread start-up, first-touch faults) is dropped on both sides and the
#   process's figure is the median of the rest (GAP's "Average Time" is the mean of
#   all, first included; it is printed beside).
# - cold: one trial per process on both sides (GAP `-n 1`, scalescope `--trials 1`).
# A pair runs GAP once and scalescope once, the order alternating pair by pair; a
# pair's ratio is GAP's time over scalescope's (above 1: scalescope is faster), and
# the row gives the median of the pairs, each side's median and spread (IQR / median
# over the pairs) and each side's median peak RSS (ru_maxrss through GNU time, see
# peers/pairs.py) with their ratio (scalescope / GAP). GAP runs with
# OMP_PROC_BIND=close OMP_PLACES=cores (pinned, as scalescope's workers are).
# PageRank is compared per iteration, with both stopping rules (GAP's L1 change <
# 1e-4, max 20 iterations; scalescope's --tolerance 1e-4) and the iterations each
# side ran printed. scalescope runs BFS and PageRank on the graph renumbered by
# degree, made once when the input is prepared (GAP does not renumber): its seconds
# are printed at the end; the source is mapped to its new id and the tree or scores
# mapped back to the original ids inside scalescope's kernel time. Triangles: GAP's
# `tc -a` (which may relabel by degree inside its trial; `-a` prints its count after
# the timed trials) against `graph count --pattern
# triangle`; past the independent counter's reach scalescope's triangle verdict is
# "unavailable", and the script checks that both sides report the same count in
# every process. scalescope checks its result under VERIFY (default `first`: the last
# trial of each process, after its copies are released, outside the kernel time;
# its seconds are printed).
# GAP_ROWS picks the rows, a comma-separated subset of bfs,pr,pr_spmv,tc (default
# bfs,pr,pr_spmv):
#   GAP_ROWS=pr,pr_spmv PEER_SRC=/somewhere/gapbs peers/bench-gap.sh 20 9
# THREADS picks the thread counts (default "1 2"). On a machine without a compiler or
# cargo (a lent 16-core machine), SCALESCOPE=<a scalescope binary> skips the build and
# PEER_BIN=<dir> takes GAP's programs built elsewhere as gap-bfs, gap-pr, gap-pr_spmv,
# gap-tc and gap-converter (g++ -std=c++11 -O3 -Wall -fopenmp -static, GAP's flags):
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
scales=${1:-18}
pairs=${2:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# GAP's own Makefile flags (CXX_FLAGS = -std=c++11 -O3 -Wall, PAR_FLAG = -fopenmp).
for k in bfs pr pr_spmv tc converter; do
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
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1); gapbs $(git -C "${PEER_SRC:-/nonexistent}" log -1 --format=%h 2>/dev/null || echo '?'); $pairs pairs per row; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for scale in ${scales//,/ }; do
"$S" graph export --graph "kron:$scale" --out "$work/g.el" >/dev/null
"$S" graph export --graph "kron:$scale" --out "$work/g.csr" >/dev/null
"$work/converter" -sf "$work/g.el" -b "$work/g.sg" >/dev/null
rm -f "$work/g.el"
src=$("$S" graph bfs --graph "$work/g.csr" -t 1 --json -q |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["source"])')
echo
echo "graph kron:$scale, BFS source $src (highest degree); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$S" "$work" "$src" "$pairs" "${THREADS:-1 2}" "$scale" <<'PY'
import json, os, re, sys
sys.path.insert(0, os.environ.get('PEERS_DIR', 'peers'))
import pairs as pr  # peers/pairs.py: interleaved pairs, peak RSS, summaries
import stats as statistics  # peers/stats.py: the peers' one statistics helper

S, work, src, npairs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
thread_counts = [int(t) for t in sys.argv[5].split()]
scale = sys.argv[6]
graph_sg, graph_csr = f"{work}/g.sg", f"{work}/g.csr"
trials = int(os.environ.get("TRIALS", "16"))
verify = os.environ.get("VERIFY", "first")
relabel, verify_secs, gap_avg = [], [], []
# Triangle counts each side reported: past the independent counter's reach
# (kron:16 and up) scalescope's verdict is "unavailable", so the two sides' counts
# are compared with each other instead, every process.
triangles = {"gap": set(), "ours": set()}


def gap(binary, threads, extra, n):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="close", OMP_PLACES="cores")
    out, rss = pr.run([f"{work}/{binary}", "-f", graph_sg, "-n", str(n), *extra], env=env)
    # Each trial's time, and its iterations (PageRank's log lines before it).
    times, iters, count = [], [], 0
    for line in out.splitlines():
        if re.match(r"^\s*\d+\s+[\d.e+-]+\s*$", line):
            count += 1
        m = re.search(r"Trial Time:\s+([\d.]+)", line)
        if m:
            times.append(float(m.group(1)))
            iters.append(count)
            count = 0
    triangles["gap"].update(int(c) for c in re.findall(r"^(\d+) triangles", out, re.M))
    avg = re.search(r"Average Time:\s+([\d.]+)", out)
    if avg and n > 1:
        gap_avg.append(float(avg.group(1)))
    return times, iters, rss


def ours(kernel, threads, extra, n):
    counting = kernel == "count"
    out, rss = pr.run([S, "graph", kernel, "--graph", graph_csr, "-t", str(threads), "--json", "-q",
                       "--trials", str(n), "--verify", verify, *extra], ok=(0, 5) if counting else (0,))
    d = json.loads(out)
    checked = d["verdict"] == "passed" or (counting and d["verdict"] == "unavailable")
    if d["verdict"] == "failed" or (verify != "none" and not checked):
        sys.exit(f"scalescope {kernel}: verification {d['verdict']}: {d['verification']}")
    if counting:
        triangles["ours"].add(int(d["count"]))
    relabel.append(d.get("relabel_seconds") or 0.0)
    verify_secs.append(d["setup"]["verify_secs"])
    times = d["trials"]["seconds"] if n > 1 else [d["seconds"]]
    return times, [int(d.get("iterations") or 0)] * len(times), rss


def figure(side, per_iter, warm):
    """A side's (seconds, rss, iterations) for one process: the warm trials' median
    (first dropped) or the one cold trial, per iteration for PageRank."""
    def go():
        times, iters, rss = side(trials if warm else 1)
        if per_iter:
            times = [t / max(i, 1) for t, i in zip(times, iters)]
        kept = times[1:] if warm else times
        return statistics.median(kept), rss, iters[0]
    return go


rows = {
    "bfs": ("bfs", lambda t, n: gap("bfs", t, ["-r", src], n), lambda t, n: ours("bfs", t, ["--source", src], n), False),
    "pr": ("pr (GS) per iteration", lambda t, n: gap("pr", t, ["-l"], n), lambda t, n: ours("pr", t, ["--tolerance", "1e-4"], n), True),
    "pr_spmv": ("pr_spmv per iteration", lambda t, n: gap("pr_spmv", t, ["-l"], n), lambda t, n: ours("pr", t, ["--tolerance", "1e-4"], n), True),
    "tc": ("tc (triangles)", lambda t, n: gap("tc", t, ["-a"], n), lambda t, n: ours("count", t, ["--pattern", "triangle"], n), False),
}
picked = os.environ.get("GAP_ROWS", "bfs,pr,pr_spmv").split(",")
unknown = [r for r in picked if r not in rows]
if unknown:
    sys.exit(f"GAP_ROWS: unknown row(s) {unknown}; choose from {list(rows)}")
timings = os.environ.get("TIMINGS", "warm cold").split()
print(f"warm: {trials} trials per process, the first dropped, median of the rest; cold: one trial per process; "
      f"scalescope --verify {verify}")
print(pr.HEADER)
for threads in thread_counts:
    for name, peer, mine, per_iter in (rows[r] for r in picked):
        for timing in timings:
            warm = timing == "warm"
            gap_avg.clear()
            cells = pr.pairs(npairs,
                             figure(lambda n: peer(threads, n), per_iter, warm),
                             figure(lambda n: mine(threads, n), per_iter, warm))
            s = pr.summary(cells)
            iters = f" (iterations gap {cells[0][0][2]}, scalescope {cells[0][1][2]})" if per_iter else ""
            if gap_avg:
                iters += f"; GAP's Average Time (all {trials} trials) median {statistics.median(gap_avg):.4g} s"
            print(pr.line(f"kron:{scale}", threads, name + iters, timing, s), flush=True)
            if triangles["ours"] and triangles["ours"] != triangles["gap"]:
                sys.exit(f"triangle counts differ: GAP {sorted(triangles['gap'])}, scalescope {sorted(triangles['ours'])}")
# GAP reads its graph as it is; scalescope renumbers it by degree once per prepared
# input (outside both kernels' time): what that costs here.
print(f"scalescope's renumbering by degree when the input is prepared (not in the kernel time): "
      f"median {statistics.median(relabel):.3f} s over {len(relabel)} runs; its checks (--verify {verify}, "
      f"outside the kernel time): median {statistics.median(verify_secs):.4f} s per process")
PY
done
