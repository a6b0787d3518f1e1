#!/usr/bin/env bash
# Benchmark: input generation against the peers, same size, same thread count.
# - TPC-H lineitem: scalescope generating the `.cols` cache (`tpch q6 --input-cache`,
#   its setup.build_secs: generation on every thread, then the file written) against
#   tpchgen-cli (crates.io, pinned below; the same generator library scalescope
#   uses) writing lineitem as `tbl`, both into a scratch directory.
# - Graphs: scalescope's Kronecker generator and CSR build (`graph count`,
#   setup.build_secs) against GAP's (`converter -g SCALE`: "Generate Time" plus
#   "Build Time"), GAP built from PEER_SRC (a gapbs checkout; skipped when unset).
# Everything installed or written goes under a scratch directory removed on exit;
# nothing is committed.
# Usage: PEER_SRC=/path/to/gapbs peers/bench-gen.sh [SF] [SCALE] [THREADS...]
#        (default SF 1, SCALE 20, threads 1 2)
set -euo pipefail
cd "$(dirname "$0")/.."
sf=${1:-1}
scale=${2:-20}
shift $(( $# > 2 ? 2 : $# ))
threads=("${@:-1 2}")
[ ${#threads[@]} -eq 1 ] && read -r -a threads <<< "${threads[0]}"
TPCHGEN_CLI_VERSION=2.0.2
cargo build --release --quiet
S=$PWD/target/release/scalescope
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cargo install --quiet --locked tpchgen-cli --version "$TPCHGEN_CLI_VERSION" --root "$work/tools" 2>/dev/null ||
  cargo install --quiet tpchgen-cli --version "$TPCHGEN_CLI_VERSION" --root "$work/tools"
if [ -n "${PEER_SRC:-}" ]; then
  cp -r "$PEER_SRC" "$work/gapbs"
  make -C "$work/gapbs" converter >/dev/null
fi
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-9s %-7s %-40s %12s %12s %7s\n" what threads peer peer_s scalescope_s ratio
for t in "${threads[@]}"; do
  rm -rf "$work/cache" "$work/tbl"; mkdir -p "$work/tbl"
  peer=$( { /usr/bin/time -f %e "$work/tools/bin/tpchgen-cli" -s "$sf" -T lineitem -f tbl \
    -n "$t" -o "$work/tbl" >/dev/null; } 2>&1 | tail -1)
  ours=$("$S" tpch q6 --sf "$sf" --threads "$t" --repeat 1 --json --input-cache "$work/cache" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["setup"]["build_secs"])')
  printf "%-9s %-7s %-40s %12.3f %12.3f %6.2fx\n" "SF $sf" "$t" "tpchgen-cli $TPCHGEN_CLI_VERSION (tbl)" \
    "$peer" "$ours" "$(python3 -c "print($peer/$ours)")"
  if [ -n "${PEER_SRC:-}" ]; then
    peer=$(OMP_NUM_THREADS=$t "$work/gapbs/converter" -g "$scale" -b "$work/g.sg" |
      awk '/Generate Time|Build Time/ {s += $NF} END {print s}')
    ours=$("$S" graph count --pattern triangle --graph "kron:$scale" --threads "$t" \
      --verify none --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["setup"]["build_secs"])' || true)
    printf "%-9s %-7s %-40s %12.3f %12.3f %6.2fx\n" "kron:$scale" "$t" "GAP converter (generate + build)" \
      "$peer" "$ours" "$(python3 -c "print($peer/$ours)")"
  fi
done
