# Shared by the device scripts: paths, a section runner with its own time limit.
export K=$PWD/.dev/bin S=$PWD/.dev/bin/scalescope GNU_TIME=$PWD/.dev/bin/gnu-time
export OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
T0=$(date +%s)
log() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
section() { # NAME LIMIT CMD...
  local name=$1 lim=$2; shift 2
  log "=== $name (limit ${lim}s) load $(cut -d' ' -f1-3 /proc/loadavg)"
  timeout -k 5 "$lim" "$@"; local rc=$?
  log "=== $name rc=$rc"
}
sweep() { # NAME THREADS ARGS...
  local name=$1 th=$2; shift 2
  section "sweep $name" "${SWEEP_LIMIT:-40}" "$S" sweep -q --threads "$th" --reps 3 --seed 7 --out "$OUT/sweeps/$name" "$@"
  "$S" analyze --from "$OUT/sweeps/$name" > "$OUT/sweeps/$name/analyze.txt" 2>&1 || true
  (cd "$OUT" && tar czf sweeps.tgz --exclude=inputs sweeps)
}
