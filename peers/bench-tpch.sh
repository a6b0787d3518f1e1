#!/usr/bin/env bash
# Benchmark: TPC-H Q1 and Q6, scalescope against DuckDB (PyPI duckdb + duckdb-ext-tpch,
# dbgen inside DuckDB), same scale factor and thread count, timing only the query
# with the data already in memory (best of REPEAT after a warm-up on both sides),
# answers compared. Then Q6's scanned bytes per second against the read ceiling
# (`mem stream`'s read-only kernel) and the STREAM triad scalescope measures at the
# same thread count.
# Usage: peers/bench-tpch.sh [SF] [REPEAT]     (default SF 1, 5 repeats)
# With PAIRS=N it first sweeps sizes: for every scale factor of SFS (default the
# SF argument; "1,3,10" sweeps) and thread count of THREADS (default "1 2"), N
# interleaved pairs per query of one DuckDB process (dbgen, then the query warm:
# best of REPEAT after a warm-up) and one scalescope process (`tpch qN`, lineitem
# generated in memory, best of REPEAT after a warm-up), each under GNU time for its
# peak RSS (peers/pairs.py); the rows give both sides' median seconds, spread and
# RSS. DuckDB's RSS holds every TPC-H table dbgen makes (it has no lineitem-only
# dbgen); scalescope's the lineitem columns the query reads.
set -euo pipefail
export PEERS_DIR="${PEERS_DIR:-$(cd "$(dirname "$0")" && pwd)}"
[ -z "${SCALESCOPE:-}" ] || SCALESCOPE=$(realpath "$SCALESCOPE")
cd "$(dirname "$0")/.."
sf=${1:-1}
repeat=${2:-5}
PY=$(peers/venv.sh)   # peers/.venv with the pinned versions of peers/requirements.txt
# SCALESCOPE=<a scalescope binary> skips the build (the other scripts' convention).
if [ -n "${SCALESCOPE:-}" ]; then
  S=$SCALESCOPE
else
  cargo build --release --quiet
  S=target/release/scalescope
fi
# Exit status 5 is the "unavailable" verdict (no reference answer at this scale
# factor): the run is measured, only not checked, and the script compares with
# DuckDB's answers itself.
ss() { "$S" "$@" || [ $? -eq 5 ]; }
if [ -n "${PAIRS:-}" ]; then
  echo "CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1); duckdb $("$PY" -c 'import duckdb; print(duckdb.__version__)'); $PAIRS pairs per row, best of $repeat per process"
  sfs=${SFS:-$sf}
  for s in ${sfs//,/ }; do
    for t in ${THREADS:-1 2}; do
      for q in 1 6; do
        echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
        python3 - "$PY" "$S" "$s" "$t" "$q" "$repeat" "$PAIRS" <<'PY'
import json, os, sys
sys.path.insert(0, os.environ.get('PEERS_DIR', 'peers'))
import pairs as pr  # peers/pairs.py: interleaved pairs, peak RSS, summaries
py, S, sf, t, q, repeat, n = sys.argv[1:]


def peer():
    out, rss = pr.run([py, "peers/tpch_duckdb.py", sf, t, repeat, q])
    return json.loads(out.splitlines()[-1])["seconds"], rss


def ours():
    # Exit status 5: no reference answer at this scale factor (measured, unchecked).
    out, rss = pr.run([S, "tpch", f"q{q}", "--sf", sf, "--threads", t, "--repeat", repeat, "--json"],
                      ok=(0, 5))
    return json.loads(out)["seconds"], rss


s = pr.summary(pr.pairs(int(n), peer, ours))
print(pr.line(f"SF {sf}", t, f"Q{q}", "warm query after load, best of the repeats", s), flush=True)
PY
      done
    done
  done
  exit 0
fi
echo "TPC-H SF $sf, best of $repeat; duckdb $("$PY" -c 'import duckdb; print(duckdb.__version__)')"
printf "%-8s %-5s %14s %14s %8s  %s\n" threads query "duckdb ms" "scalescope ms" ratio "answers"
for t in 1 2; do
  duck=$("$PY" peers/tpch_duckdb.py "$sf" "$t" "$repeat")
  for q in q1 q6; do
    ours=$(ss tpch "$q" --sf "$sf" --threads "$t" --repeat "$repeat" --json)
    python3 - "$q" "$t" <<PY
import json, sys
from decimal import Decimal
q, t = sys.argv[1], sys.argv[2]
duck = [json.loads(l) for l in '''$duck'''.splitlines() if l.strip()]
d = next(x for x in duck if x["query"] == q)
o = json.loads('''$ours''')
cols = (["l_returnflag", "l_linestatus", "sum_qty", "sum_base_price", "sum_disc_price", "sum_charge",
         "avg_qty", "avg_price", "avg_disc", "count_order"] if q == "q1" else ["revenue"])
ours_rows = [[r[c] for c in cols] for r in o["rows"]]
# Flags, sums and counts must agree exactly (as decimals: DuckDB prints sum_qty as
# 37734107.00); averages are doubles printed with each side's own rounding.
keep = [0, 1, 2, 3, 4, 5, 9] if q == "q1" else [0]
def exact(v):
    try:
        return Decimal(v)
    except Exception:
        return v
same = len(ours_rows) == len(d["rows"]) and all(
    [exact(r[k]) for k in keep] == [exact(dr[k]) for k in keep] for r, dr in zip(ours_rows, d["rows"]))
print(f"{t:<8} {q:<5} {d['seconds']*1e3:14.2f} {o['seconds']*1e3:14.2f} {d['seconds']/o['seconds']:7.1f}x  {'equal' if same else 'DIFFERENT'}")
PY
  done
done
echo
printf "%-8s %18s %16s %8s %14s %8s\n" threads "Q6 scanned GB/s" "read GB/s" "Q6/read" "triad GB/s" "Q6/triad"
for t in 1 2; do
  q6=$(ss tpch q6 --sf "$sf" --threads "$t" --repeat "$repeat" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['scanned_bytes_per_s']/1e9)")
  read -r rd triad < <($S mem stream --threads "$t" --json | python3 -c "import json,sys; k=json.load(sys.stdin)['kernels']; print(k['read']['gb_per_s'], k['triad']['gb_per_s'])")
  printf "%-8s %18.2f %16.2f %7.2fx %14.2f %7.2fx\n" "$t" "$q6" "$rd" "$(echo "$q6/$rd" | bc -l)" "$triad" "$(echo "$q6/$triad" | bc -l)"
done
