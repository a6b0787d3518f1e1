#!/usr/bin/env bash
# Speed check: NAS EP, IS and FT over MPI (scalescope-mpi-nas, ranks placed by
# `scalescope mpi-check` through Open MPI's mpirun) against the threaded kernels
# (`scalescope npb`) at equal total workers on this node, both placed compactly,
# one worker per CPU. Prints each side's median Mop/s over the repetitions (every
# run verified) and the ratio MPI / threaded.
# Usage: peers/bench-mpi.sh [CLASS] [WORKERS] [REPS]   (default W, every core, 5)
#
# With PEER_SRC=<a checkout of GMAP/NPB-CPP> it first compares the threaded kernels
# with NPB-CPP's OpenMP build (NPB-OMP, built here with its own config/make.def:
# g++ -O3 -fopenmp; never committed, no registry carries it) at 1 and WORKERS
# threads, NPB_KERNELS (default "ep:A is:B ft:A ft:B"), REPS interleaved pairs
# each, both pinned one thread per core. Timed regions, the same on both sides:
# EP the whole generation and tally, IS the ten rankings (NPB's T_BENCHMARKING),
# FT index map + initial conditions + FFTs + iterations (NPB's T_TOTAL). The pairs
# alternate their order (NPB first in even pairs); every process runs under GNU
# time for its peak RSS (peers/pairs.py). Prints each side's median seconds,
# spread (IQR / median) and median peak RSS, the median of the pairs' ratios NPB
# seconds / scalescope seconds (above 1: scalescope faster) and the RSS ratio
# scalescope / NPB, also as a table row. Classes are sizes: NPB_KERNELS="is:A is:B
# is:C ft:A ft:B ft:C" sweeps them. Then the MPI comparison, where mpirun is installed
# (NPB_ONLY=1 stops before it).
# THREADS overrides the thread counts of that comparison (default "1 WORKERS"). On a
# machine without a compiler or cargo (a lent 16-core machine), SCALESCOPE=<a
# scalescope binary> skips the build and PEER_BIN=<dir> takes NPB-CPP's binaries
# built elsewhere (ep.A, is.B, ... as NPB-OMP's make writes them; -static there);
# the MPI comparison then needs scalescope-mpi-nas beside that scalescope binary.
# Paths are taken relative to the directory the script is started from.
# Only meaningful on a quiet machine: the load average is printed first, and a
# load above half the CPUs is flagged (do not record such numbers).
set -euo pipefail
# The peers' one statistics helper, imported by the Python parts below.
export PEERS_DIR="${PEERS_DIR:-$(cd "$(dirname "$0")" && pwd)}"
for v in SCALESCOPE PEER_BIN PEER_SRC; do
  [ -z "${!v:-}" ] || printf -v "$v" '%s' "$(realpath "${!v}")"
done
cd "$(dirname "$0")/.."
class=${1:-W}
reps=${3:-5}
if [ -n "${SCALESCOPE:-}" ]; then
  S=$SCALESCOPE bin=$(dirname "$SCALESCOPE")
else
  cargo build --release --quiet -p scalescope
  bin=target/release S=target/release/scalescope
fi
workers=${2:-$("$S" topo --json | python3 -c "import json,sys; print(len({p['core'] for p in json.load(sys.stdin)['pus'] if p['online'] and p['allowed']}))")}
npb_cpp() {
  local omp="${PEER_SRC:-}/NPB-OMP" k c t r peers
  [ -n "${PEER_BIN:-}" ] || [ -f "$omp/config/make.def" ] || { echo "PEER_SRC=$PEER_SRC has no NPB-OMP/config/make.def" >&2; exit 2; }
  peers=${PEER_BIN:-$omp/bin}
  echo "NPB-CPP OpenMP (${PEER_BIN:+PEER_BIN=$PEER_BIN }PEER_SRC=${PEER_SRC:-unset}) against scalescope npb; load $(cut -d' ' -f1-3 /proc/loadavg)"
  for kc in ${NPB_KERNELS:-ep:A is:B ft:A ft:B}; do
    k=${kc%:*} c=${kc#*:}
    if [ -n "${PEER_BIN:-}" ]; then
      [ -x "$peers/$k.$c" ] || { echo "PEER_BIN=$PEER_BIN has no $k.$c" >&2; exit 2; }
    else
      [ -x "$peers/$k.$c" ] || make -s -C "$omp" "$k" CLASS="$c" >/dev/null
    fi
    for t in ${THREADS:-1 $workers}; do
      python3 - "$k" "$c" "$t" "$reps" "$peers/$k.$c" "$S" <<'PY'
import os, re, sys
sys.path.insert(0, os.environ.get('PEERS_DIR', 'peers'))
import json
import pairs as pr  # peers/pairs.py: interleaved pairs, peak RSS, summaries
k, c, t, reps, peer_bin, S = sys.argv[1:]


def peer():
    env = dict(os.environ, OMP_NUM_THREADS=t, OMP_PROC_BIND="true", OMP_PLACES="cores")
    out, rss = pr.run([peer_bin], env=env)
    if not re.search(r"Verification\s*=\s*SUCCESSFUL", out):
        sys.exit(f"NPB-CPP {k}.{c} at {t} threads did not verify")
    return float(re.findall(r"Time in seconds\s*=\s*([\d.]+)", out)[-1]), rss


def ours():
    out, rss = pr.run([S, "npb", k, "--class", c, "--threads", t, "--placement", "cores-first",
                       "--quiet", "--json"])
    d = json.loads(out)
    if not d["verified"]:
        sys.exit(f"scalescope npb {k} class {c} at {t} threads did not verify")
    return d["seconds"], rss


s = pr.summary(pr.pairs(int(reps), peer, ours))
print(f"{k.upper()} {c} {t} threads: NPB-CPP {s['peer']:.3f} s (IQR/median {s['peer_spread']:.2f}, "
      f"{s['peer_mb']:.0f} MB), scalescope {s['ours']:.3f} s (IQR/median {s['ours_spread']:.2f}, "
      f"{s['ours_mb']:.0f} MB), median ratio {s['ratio']:.2f}x, RSS ratio {s['mem_ratio']:.2f}, "
      f"pairs {' '.join(f'{x:.2f}' for x in s['ratios'])}")
print(pr.line(f"class {c}", t, k.upper(), "one process each", s), flush=True)
PY
    done
  done
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -z "${PEER_SRC:-}${PEER_BIN:-}" ] || npb_cpp
# NPB_ONLY=1: the NPB-CPP comparison alone (no MPI, no mpirun).
[ -z "${NPB_ONLY:-}" ] || exit 0
command -v mpirun.openmpi >/dev/null || { echo "unavailable here: mpirun.openmpi is not installed (scripts/install-test-deps.sh installs it)" >&2; exit 3; }
if [ -n "${SCALESCOPE:-}" ]; then
  [ -x "$bin/scalescope-mpi-nas" ] || { echo "unavailable here: no scalescope-mpi-nas beside SCALESCOPE=$SCALESCOPE for the MPI comparison" >&2; exit 3; }
else
  cargo build --release --quiet -p scalescope -p scalescope-mpi-nas
fi
cpus=$(nproc)
load=$(cut -d' ' -f1 /proc/loadavg)
echo "class $class, $workers workers, $reps runs each; load average $load on $cpus CPUs"
python3 -c "import sys; sys.exit(0 if float('$load') <= $cpus / 2 else 1)" \
  || echo "warning: the machine is busy (load $load): these timings are not a benchmark result"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
printf '%-6s %14s %14s %8s\n' kernel "threaded Mop/s" "MPI Mop/s" "MPI/thr"
for kernel in ep is ft; do
  for _ in $(seq "$reps"); do
    "$S" npb "$kernel" --class "$class" --threads "$workers" \
      --placement compact --quiet --json >>"$work/$kernel-threaded.json"
  done
  "$S" mpi-check --launcher mpirun --launcher-path mpirun.openmpi \
    --ranks-per-node "$workers" --strategy compact --reps "$reps" --json \
    -- "$bin/scalescope-mpi-nas" "$kernel" "$class" >"$work/$kernel-mpi.json"
  python3 - "$kernel" "$work/$kernel-threaded.json" "$work/$kernel-mpi.json" <<'PY'
import json, os, sys
sys.path.insert(0, os.environ.get('PEERS_DIR', 'peers'))
import stats as statistics  # peers/stats.py: the peers' one statistics helper
kernel, threaded, mpi = sys.argv[1:]
dec = json.JSONDecoder()
text, docs, i = open(threaded).read(), [], 0
while i < len(text):
    if text[i].isspace():
        i += 1
        continue
    doc, i = dec.raw_decode(text, i)
    docs.append(doc)
t = [d["mops"] for d in docs if d["verified"]]
runs = [r for l in json.load(open(mpi))["launches"] for r in l["runs"]]
m = [r["report"]["figures"]["mops"] for r in runs if r["report"] and r["report"]["verified"]]
if len(t) != len(docs) or len(m) != len(runs) or not t or not m:
    sys.exit(f"{kernel}: a run did not verify ({len(t)}/{len(docs)} threaded, {len(m)}/{len(runs)} MPI)")
a, b = statistics.median(t), statistics.median(m)
print(f"{kernel:<6} {a:14.1f} {b:14.1f} {b / a:7.2f}x")
PY
done
