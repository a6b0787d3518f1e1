#!/usr/bin/env bash
# Peak memory of BFS and PageRank against GAP on the same graph (issue 36, item 3):
# one process per cell, one thread, peak RSS from GNU time (`/usr/bin/time -f %M`,
# ru_maxrss from wait4), which does not depend on the load. Each graph is
# scalescope's Kronecker graph of that scale, as a `.csr` for scalescope and GAP's
# serialized form (converted by GAP's `converter -sf`) for GAP; the BFS source is
# the highest-degree vertex on both sides. Rows: GAP `bfs -n 1` / `pr -n 1`, then
# scalescope at its defaults (renumbered, `--verify all`), with `--verify none`, and
# BFS with `--renumber=false`; BEFORE=<an older scalescope binary> adds its default
# row. GAP is built as bench-gap.sh builds it (PEER_SRC) or taken from PEER_BIN:
#
#   SCALESCOPE=target/release/scalescope PEER_SRC=/somewhere/gapbs peers/bench-rss.sh 18,20
set -euo pipefail
for v in SCALESCOPE PEER_BIN PEER_SRC BEFORE; do
  [ -z "${!v:-}" ] || printf -v "$v" '%s' "$(realpath "${!v}")"
done
cd "$(dirname "$0")/.."
: "${SCALESCOPE:?set SCALESCOPE to a scalescope binary}"
[ -n "${PEER_BIN:-}" ] || : "${PEER_SRC:?set PEER_SRC to a gapbs source directory or PEER_BIN to built programs}"
scales=${1:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for k in bfs pr converter; do
  if [ -n "${PEER_BIN:-}" ]; then
    cp "$PEER_BIN/gap-$k" "$work/$k"
  else
    g++ -std=c++11 -O3 -Wall -fopenmp "$PEER_SRC/src/$k.cc" -o "$work/$k"
  fi
done
S=$SCALESCOPE
# Peak RSS in MB of one command; exit status 5 (scalescope's "not checked", under
# --verify none) is a run, any other failure stops the script.
rss() {
  local rc=0
  /usr/bin/time -f %M -o "$work/rss" "$@" >/dev/null 2>&1 || rc=$?
  if [ "$rc" != 0 ] && [ "$rc" != 5 ]; then echo "failed ($rc): $*" >&2; exit 1; fi
  echo $(( $(tail -1 "$work/rss") / 1024 ))
}
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1); peak RSS in MB (ru_maxrss / 1024), one thread"
echo "| graph | kernel | GAP | scalescope (defaults) | ratio | --verify none | --renumber=false |${BEFORE:+ before (defaults) |}"
echo "|---|---|---:|---:|---:|---:|---:|${BEFORE:+---:|}"
for scale in ${scales//,/ }; do
  "$S" graph export --graph "kron:$scale" --out "$work/g.el" >/dev/null
  "$S" graph export --graph "kron:$scale" --out "$work/g.csr" >/dev/null
  "$work/converter" -sf "$work/g.el" -b "$work/g.sg" >/dev/null
  rm -f "$work/g.el"
  src=$("$S" graph bfs --graph "$work/g.csr" -t 1 --json -q |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["source"])')
  export OMP_NUM_THREADS=1
  for k in bfs pr; do
    gap_extra=() ours=("$S" graph "$k" --graph "$work/g.csr" -t 1 -q)
    [ "$k" = bfs ] && gap_extra=(-r "$src") && ours+=(--source "$src")
    g=$(rss "$work/$k" -f "$work/g.sg" -n 1 "${gap_extra[@]}")
    d=$(rss "${ours[@]}")
    none=$(rss "${ours[@]}" --verify none)
    plain="(none)"
    [ "$k" = bfs ] && plain=$(rss "${ours[@]}" --renumber=false)
    before=""
    if [ -n "${BEFORE:-}" ]; then
      before=" $(rss "$BEFORE" "${ours[@]:1}") |"
    fi
    echo "| kron:$scale | $k | $g | $d | $(python3 -c "print(f'{$d/$g:.2f}x')") | $none | $plain |$before"
  done
done
