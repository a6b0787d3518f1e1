"""DuckDB side of peers/bench-tpch.sh: generate lineitem with the tpch extension
(dbgen) at a scale factor, then time Q1 and Q6 (data already in memory), best of N.
Prints one JSON line per query with the result rows, so the answers are compared too.
Usage: tpch_duckdb.py SF THREADS REPEAT [QUERIES]   (QUERIES: comma-separated, default 1,6)"""
import json
import sys
import time

import os

import duckdb
import duckdb_ext  # noqa: F401  (namespace package: the duckdb-ext-tpch wheel's extensions)

sf, threads, repeat = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
queries = [int(q) for q in (sys.argv[4] if len(sys.argv) > 4 else "1,6").split(",")]
con = duckdb.connect()
# Offline: load the extension the wheel installed, never download one.
con.execute(f"SET extension_directory='{os.path.join(list(duckdb_ext.__path__)[0], 'extensions')}'")
con.execute("SET autoinstall_known_extensions=false")
con.execute("LOAD tpch")
con.execute(f"CALL dbgen(sf={sf})")
con.execute(f"SET threads={threads}")
for q in queries:
    sql = con.execute(f"SELECT query FROM tpch_queries() WHERE query_nr={q}").fetchone()[0]
    con.execute(sql).fetchall()  # warm-up
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        rows = con.execute(sql).fetchall()
        best = min(best, time.perf_counter() - t)
    print(json.dumps({"query": f"q{q}", "seconds": best, "rows": [[str(c) for c in r] for r in rows]}))
