"""Peer side of peers/bench-graph.sh: the same edge list (u < v per line) timed in
networkit (triangles via TriangleEdgeScore, BFS, PageRank per iteration), in
python-graphblas (triangles by masked L*L, SuiteSparse:GraphBLAS) and in igraph
(4-vertex motif census, motifs_randesu). Graph loading is not timed.
Usage: graph_peers.py EDGELIST THREADS SOURCE [--motifs]   (igraph's census is slow:
only with --motifs)"""
import json
import sys
import time

path, threads, source = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
edges = [tuple(map(int, l.split())) for l in open(path) if l.strip()]
n = 1 + max(max(e) for e in edges)
out = {}


def note(what):
    print(what, json.dumps(out.get(what, {}))[:200], file=sys.stderr, flush=True)


def best(f, reps=3):
    t = float("inf")
    r = None
    for _ in range(reps):
        s = time.perf_counter()
        r = f()
        t = min(t, time.perf_counter() - s)
    return t, r


import networkit as nk  # noqa: E402

nk.setNumberOfThreads(threads)
G = nk.Graph(n)
for u, v in edges:
    G.addEdge(u, v)
G.indexEdges()
secs, tri = best(lambda: int(round(sum(nk.sparsification.TriangleEdgeScore(G).run().scores()) / 3)))
out["networkit_triangles"] = {"seconds": secs, "count": tri}
note("networkit_triangles")
secs, _ = best(lambda: nk.distance.BFS(G, source).run())
out["networkit_bfs"] = {"seconds": secs}
note("networkit_bfs")


def pr():
    p = nk.centrality.PageRank(G, damp=0.85, tol=1e-4)
    p.run()
    return p.numberOfIterations()


secs, iters = best(pr)
out["networkit_pagerank"] = {"seconds": secs, "iterations": iters, "seconds_per_iteration": secs / max(iters, 1)}
note("networkit_pagerank")

import graphblas as gb  # noqa: E402
import numpy as np  # noqa: E402

gb.ss.config["nthreads"] = threads
rows = np.array([max(u, v) for u, v in edges], dtype=np.uint64)
cols = np.array([min(u, v) for u, v in edges], dtype=np.uint64)
L = gb.Matrix.from_coo(rows, cols, np.ones(len(edges), dtype=np.int64), nrows=n, ncols=n)


def gb_triangles():
    C = gb.Matrix(gb.dtypes.INT64, n, n)
    C(L.S) << L.mxm(L, gb.semiring.plus_pair)
    return int(C.reduce_scalar().value)


secs, tri2 = best(gb_triangles)
out["graphblas_triangles"] = {"seconds": secs, "count": tri2}
note("graphblas_triangles")

if "--motifs" in sys.argv:
    import igraph as ig  # noqa: E402

    g = ig.Graph(n=n, edges=edges)
    secs, motifs = best(lambda: g.motifs_randesu(size=4), reps=1)
    # Undirected size-4 isoclasses 8, 9, 10 are the induced 4-cycle, diamond and 4-clique.
    out["igraph_motifs4"] = {"seconds": secs, "ind_c4": motifs[8], "ind_diamond": motifs[9], "k4": motifs[10]}
    note("igraph_motifs4")
print(json.dumps(out))
