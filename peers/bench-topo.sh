#!/usr/bin/env bash
# Benchmark: `scalescope topo` against hwloc's lstopo on the same recorded tree
# (hwloc's 256-PU ia64 machine, 64 NUMA nodes). Installs hyperfine and hwloc from
# Debian, builds scalescope in release mode, runs both under hyperfine.
# Usage: peers/bench-topo.sh [FIXTURE]   (default 256ia64-64n2s2c)
set -euo pipefail
cd "$(dirname "$0")/.."
fixture=${1:-256ia64-64n2s2c}
need=()
command -v hyperfine >/dev/null || need+=(hyperfine)
command -v lstopo-no-graphics >/dev/null || need+=(hwloc)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dir="tests/fixtures/topology/$fixture"
tar xjf "$dir/$fixture.tar.bz2" -C "$work"
root=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['root_dir'])" "$dir/$fixture.expected.json")
tree="$work/$root"
echo "machine: $(target/release/scalescope topo --sysfs-root "$tree" | head -1)"
hyperfine --warmup 5 --runs 50 -N \
  "target/release/scalescope topo --sysfs-root $tree" \
  "target/release/scalescope topo --json --sysfs-root $tree" \
  "env HWLOC_COMPONENTS=linux,stop HWLOC_FSROOT=$tree lstopo-no-graphics --of console" \
  --export-markdown "$work/result.md"
cat "$work/result.md"
