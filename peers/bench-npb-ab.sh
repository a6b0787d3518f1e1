#!/usr/bin/env bash
# A/B of two scalescope binaries on one NAS kernel: `scalescope npb KERNEL --class
# CLASS --threads T` (every run verified), PAIRS interleaved pairs whose order
# alternates, one process per run; each process's `seconds` (the timed region: IS
# the ten rankings, FT NPB's T_TOTAL, EP the whole tally) and peak RSS (GNU time,
# peers/pairs.py). Prints both sides' medians and spreads and the median of the
# pairs' ratios A / B (above 1: B is faster). Made to check a change to a kernel
# against the binary before it:
#
#   A=/tmp/scalescope-before B=target/release/scalescope peers/bench-npb-ab.sh is B [PAIRS] [THREADS]
#
# (default 9 pairs, 2 threads). Paths are taken relative to the directory the script
# is started from.
set -euo pipefail
export PEERS_DIR="${PEERS_DIR:-$(cd "$(dirname "$0")" && pwd)}"
: "${A:?set A to the scalescope binary before the change}" "${B:?set B to the scalescope binary after it}"
A=$(realpath "$A") B=$(realpath "$B")
kernel=${1:?kernel: is, ft or ep} class=${2:?class: S, W, A, B or C} pairs=${3:-9} threads=${4:-2}
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1); npb $kernel class $class, $threads threads, $pairs pairs; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$A" "$B" "$kernel" "$class" "$threads" "$pairs" <<'PY'
import json, os, sys
sys.path.insert(0, os.environ["PEERS_DIR"])
import pairs as pr  # peers/pairs.py: interleaved pairs, peak RSS, summaries
A, B, k, c, t, n = sys.argv[1:]


def side(binary):
    def go():
        out, rss = pr.run([binary, "npb", k, "--class", c, "--threads", t,
                           "--placement", "cores-first", "--quiet", "--json"])
        d = json.loads(out)
        if not d["verified"]:
            sys.exit(f"{binary}: npb {k} class {c} did not verify")
        return d["seconds"], rss
    return go


pr.print_ab(pr.summary(pr.pairs(int(n), side(A), side(B))))
PY
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
