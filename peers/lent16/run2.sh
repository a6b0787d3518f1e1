#!/usr/bin/env bash
# Device call 2: DuckDB TPC-H to 16 threads, triangles and BFS kron:22 against GAP, more sweeps.
. "$(dirname "$0")/common.sh"
chmod +x .dev/bin/* 2>/dev/null
if [ -d .dev/whl ] && [ ! -d peers/.venv/lib ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .dev/whl/*.whl && export PYTHONPATH=/tmp/site
  # peers/venv.sh's check: a venv whose pinned set is "installed" (the wheels above, on PYTHONPATH).
  mkdir -p peers/.venv/bin && ln -sf "$(command -v python3)" peers/.venv/bin/python && cp peers/requirements.txt peers/.venv/.requirements
fi
mkdir -p "$OUT/sweeps"
if [ -n "${SMALL:-}" ]; then TH="1 2" TL=1..2 G=12 G22=13 SFS=0.05; else TH="1 4 16" TL=1..16 G=18 G22=22 SFS=1 DUCK_TH="1 16"; fi
PAIRS=3 SFS=$SFS THREADS="${DUCK_TH:-$TH}" SCALESCOPE=$S section "duckdb tpch SF $SFS" ${DUCK_LIMIT:-130} peers/bench-tpch.sh $SFS 5
THREADS="$TH" GAP_ROWS=tc TIMINGS=warm TRIALS=4 SCALESCOPE=$S PEER_BIN=$K section "gap tc kron:$G" 70 peers/bench-gap.sh $G 3
THREADS="${TH##* }" GAP_ROWS=bfs TIMINGS=warm TRIALS=8 SCALESCOPE=$S PEER_BIN=$K section "gap bfs kron:$G22" 90 peers/bench-gap.sh $G22 3
SWEEP_LIMIT=35 sweep pr-kron20 $TL --workload graph --param graph=kron:${G20:-20} --param kernel=pr
log "done"
