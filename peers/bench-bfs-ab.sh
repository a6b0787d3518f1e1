#!/usr/bin/env bash
# A/B of two scalescope binaries on one BFS: the same .csr graph, the same source
# (the highest-degree vertex), the same threads, one search per process (cold, as a
# sweep run), PAIRS interleaved pairs whose order alternates; each process's
# `seconds` (kernel only) and peak RSS (GNU time, peers/pairs.py). Prints both
# sides' medians and spreads and the median of the pairs' ratios A / B (above 1: B
# is faster). Made to check a change to the BFS against the binary before it:
#
#   A=/tmp/scalescope-before B=target/release/scalescope peers/bench-bfs-ab.sh [SCALE] [PAIRS] [THREADS]
#
# (default scale 20, 15 pairs, 2 threads). TRIALS=N (N > 1) times warm instead: each
# process runs N trials on the input it loaded once (`--trials N`), and its figure is
# the median of its warm trials (the first dropped), as bench-gap.sh's warm rows;
# the last trial is verified. KERNEL=pr compares PageRank instead
# (`graph pr` at its defaults, each process's kernel seconds). Paths are taken relative to the
# directory the script is started from; the graph is written under a scratch
# directory removed on exit.
set -euo pipefail
export PEERS_DIR="${PEERS_DIR:-$(cd "$(dirname "$0")" && pwd)}"
: "${A:?set A to the scalescope binary before the change}" "${B:?set B to the scalescope binary after it}"
A=$(realpath "$A") B=$(realpath "$B")
scale=${1:-20} pairs=${2:-15} threads=${3:-2} kernel=${KERNEL:-bfs}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$B" graph export --graph "kron:$scale" --out "$work/g.csr" >/dev/null
src=$("$B" graph bfs --graph "$work/g.csr" -t 1 --json -q |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["source"])')
trials=${TRIALS:-1}
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1); $kernel on kron:$scale, source $src, $threads threads, $pairs pairs, $trials trials a process; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$A" "$B" "$work/g.csr" "$src" "$threads" "$pairs" "$kernel" "$trials" <<'PY'
import json, os, sys
sys.path.insert(0, os.environ["PEERS_DIR"])
import pairs as pr  # peers/pairs.py: interleaved pairs, peak RSS, summaries
A, B, g, src, t, n, kernel, trials = sys.argv[1:]
extra = ["--source", src] if kernel == "bfs" else []
if int(trials) > 1:
    extra += ["--trials", trials]


def side(binary):
    def go():
        out, rss = pr.run([binary, "graph", kernel, "--graph", g, *extra, "-t", t, "--json", "-q"])
        d = json.loads(out)
        if d["verdict"] != "passed":
            sys.exit(f"{binary}: {d['verification']}")
        if int(trials) > 1:
            return d["trials"]["warm"]["median_seconds"], rss
        return d["seconds"], rss
    return go


pr.print_ab(pr.summary(pr.pairs(int(n), side(A), side(B))))
PY
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
