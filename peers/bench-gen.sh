#!/usr/bin/env bash
# Benchmark: input generation against the peers, same size, same thread count.
# - TPC-H lineitem: scalescope generating the `.cols` cache (`tpch q6 --input-cache`,
#   its setup.build_secs: generation on every thread, then the file written) against
#   tpchgen-cli (crates.io, pinned below; the same generator library scalescope
#   uses) writing lineitem as `tbl` on as many threads, both into a
#   scratch directory (wall seconds of the whole command for the peer).
# - Graphs: scalescope's Kronecker generator and CSR build (`graph bfs`,
#   setup.build_secs) against GAP's (`converter -g SCALE -s`: "Generate Time" plus
#   "Build Time", the same undirected graph size), GAP built from PEER_SRC (a gapbs
#   checkout; skipped when unset).
# Each comparison runs REPS interleaved pairs (peer, then scalescope) and prints
# every pair and the medians; ratio = peer / scalescope (above 1: scalescope faster).
# Everything installed or written goes under a scratch directory removed on exit;
# nothing is committed. Set TPCHGEN_CLI to an installed binary to skip the install.
# Usage: PEER_SRC=/path/to/gapbs [REPS=3] peers/bench-gen.sh [SF] [SCALE] [THREADS...]
#        (default SF 1, SCALE 20, threads 1 2)
set -euo pipefail
cd "$(dirname "$0")/.."
sf=${1:-1}
scale=${2:-20}
shift $(( $# > 2 ? 2 : $# ))
threads=("${@:-1 2}")
[ ${#threads[@]} -eq 1 ] && read -r -a threads <<< "${threads[0]}"
reps=${REPS:-3}
TPCHGEN_CLI_VERSION=2.0.2
cargo build --release --quiet
S=$PWD/target/release/scalescope
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tpchgen=${TPCHGEN_CLI:-}
if [ -z "$tpchgen" ]; then
  cargo install --quiet --locked tpchgen-cli --version "$TPCHGEN_CLI_VERSION" --root "$work/tools" 2>/dev/null ||
    cargo install --quiet tpchgen-cli --version "$TPCHGEN_CLI_VERSION" --root "$work/tools"
  tpchgen=$work/tools/bin/tpchgen-cli
fi
if [ -n "${PEER_SRC:-}" ]; then
  cp -r "$PEER_SRC" "$work/gapbs"
  make -C "$work/gapbs" converter >/dev/null
fi
setup() { python3 -c 'import json,sys; print(json.load(sys.stdin)["setup"]["build_secs"])'; }
# Medians and ratios from the peers' one statistics helper (peers/stats.py).
median() { python3 "$(dirname "$0")/stats.py" median $(cat); }
# row WHAT THREADS PEER "PEER_SECS..." "OURS_SECS...": the pairs and their medians.
row() {
  local p o
  p=$(echo "$4" | median); o=$(echo "$5" | median)
  printf "%-9s %-7s %-36s %8.3f %8.3f %6.2fx  pairs: peer %s / ours %s\n" "$1" "$2" "$3" \
    "$p" "$o" "$(python3 "$(dirname "$0")/stats.py" ratio "$p" "$o")" "$4" "$5"
}
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; ${reps} pairs each, medians"
printf "%-9s %-7s %-36s %8s %8s %7s\n" what threads peer peer_s ours_s ratio
for t in "${threads[@]}"; do
  peer=() ours=()
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  for _ in $(seq "$reps"); do
    rm -rf "$work/cache" "$work/tbl"; mkdir -p "$work/tbl"
    peer+=("$( { /usr/bin/time -f %e "$tpchgen" -s "$sf" -T lineitem -f tbl \
      -n "$t" -o "$work/tbl" >/dev/null; } 2>&1 | tail -1)")
    rm -rf "$work/tbl"
    ours+=("$("$S" tpch q6 --sf "$sf" --threads "$t" --repeat 1 --json \
      --input-cache "$work/cache" | setup)")
  done
  row "SF $sf" "$t" "tpchgen-cli $TPCHGEN_CLI_VERSION (tbl)" "${peer[*]}" "${ours[*]}"
  rm -rf "$work/cache"
  if [ -n "${PEER_SRC:-}" ]; then
    peer=() ours=()
    for _ in $(seq "$reps"); do
      peer+=("$(OMP_NUM_THREADS=$t "$work/gapbs/converter" -g "$scale" -s -b "$work/g.sg" |
        awk '/Generate Time|Build Time/ {s += $NF} END {print s}')")
      rm -f "$work/g.sg"
      ours+=("$("$S" graph bfs --graph "kron:$scale" --threads "$t" --json | setup)")
    done
    row "kron:$scale" "$t" "GAP converter -s (generate + build)" "${peer[*]}" "${ours[*]}"
  fi
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
done
