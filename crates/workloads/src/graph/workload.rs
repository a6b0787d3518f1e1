//! Graph kernels as a workload: the graph is generated or loaded and built by the
//! pinned workers (so its pages sit where they are read), the kernel (a subgraph
//! count, BFS or PageRank) is timed, and an independent check verifies it: the
//! slower counter ([`super::count::reference_count`]) for counts, the parent tree
//! for BFS, a serial PageRank for PageRank. `scalescope graph` and a sweep both run
//! this, so they give the same verdict.

use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::json;

use super::count::{count, reference_count, Pattern};
use super::gen::{generate, Kind};
use super::pagerank::{Ranks, Sync};
use super::{load::load, Graph};
use crate::pool::Pool;
use crate::{Figure, Verification, Workload, WorkloadError};

/// The independent counter's work grows with the sum of squared degrees (it filters
/// whole neighbour lists); past this many steps (about 10 s on a 2020s core) a count
/// is reported unverified instead of waiting on its check. Kronecker scale 15 is
/// under it, scale 16 over it.
pub const REFERENCE_MAX_WORK: u64 = 500_000_000;

/// PageRank's default stopping tolerance (GAP's): sum of absolute score changes.
pub const DEFAULT_TOLERANCE: f64 = 1e-4;

/// Which graph kernel runs, with its settings.
#[derive(Debug, Clone, PartialEq)]
pub enum GraphKernel {
    /// Exact count of a pattern, non-induced or vertex-induced.
    Count { pattern: Pattern, induced: bool },
    /// Direction-optimizing BFS from `source` (default: the highest-degree vertex).
    Bfs { source: Option<u32> },
    /// PageRank with a synchronisation mechanism and `batch` updates per critical
    /// section, until the scores change by less than `tolerance`.
    PageRank {
        sync: Sync,
        batch: usize,
        tolerance: f64,
    },
}

/// One graph kernel on one graph.
pub struct GraphCount {
    source: String,
    kernel: GraphKernel,
    graph: Option<Graph>,
    build_seconds: f64,
    count: u64,
    seconds: f64,
    bfs: Option<(u32, Vec<u32>)>,
    ranks: Option<Ranks>,
}

fn bad(key: &str, detail: String) -> WorkloadError {
    WorkloadError::BadParam {
        key: key.into(),
        detail,
    }
}

impl GraphCount {
    /// The kernel on the graph `source` names: `kron:SCALE`, `uniform:SCALE`, an
    /// edge-list file (SNAP, `.el`, `.mtx`) or a `.csr` cache.
    ///
    /// # Errors
    /// [`WorkloadError::BadParam`] naming the setting: `induced` on a pattern it does
    /// not change, `batch` 0, `tolerance` not positive.
    pub fn new(source: &str, kernel: GraphKernel) -> Result<GraphCount, WorkloadError> {
        match &kernel {
            GraphKernel::Count {
                pattern: Pattern::Triangle | Pattern::K4,
                induced: true,
            } => {
                return Err(bad(
                    "induced",
                    "changes only c4 and diamond (triangles and 4-cliques are induced already)"
                        .into(),
                ))
            }
            GraphKernel::PageRank { batch: 0, .. } => {
                return Err(bad("batch", "must be at least 1".into()))
            }
            GraphKernel::PageRank { tolerance, .. }
                if !(tolerance.is_finite() && *tolerance > 0.0) =>
            {
                return Err(bad("tolerance", format!("{tolerance} is not positive")))
            }
            _ => {}
        }
        Ok(GraphCount {
            source: source.to_string(),
            kernel,
            graph: None,
            build_seconds: 0.0,
            count: 0,
            seconds: 0.0,
            bfs: None,
            ranks: None,
        })
    }

    /// From sweep parameters: `kernel` (count, bfs or pr), `graph` (kron:14);
    /// for count `pattern` (diamond) and `induced` (false); for pr `sync` (pull) and
    /// `batch` (1).
    ///
    /// # Errors
    /// [`WorkloadError::BadParam`] naming the parameter.
    pub fn from_params(params: &BTreeMap<String, String>) -> Result<GraphCount, WorkloadError> {
        const KEYS: [&str; 6] = ["kernel", "graph", "pattern", "induced", "sync", "batch"];
        if let Some(k) = params.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(bad(
                k,
                "unknown (graph takes kernel, graph, pattern, induced, sync, batch)".into(),
            ));
        }
        let get = |k: &str, default: &'static str| params.get(k).map_or(default, String::as_str);
        let kernel = match get("kernel", "count") {
            "count" => GraphKernel::Count {
                pattern: get("pattern", "diamond")
                    .parse()
                    .map_err(|e| bad("pattern", e))?,
                induced: match get("induced", "false") {
                    "false" => false,
                    "true" => true,
                    v => return Err(bad("induced", format!("`{v}` is not true or false"))),
                },
            },
            "bfs" => GraphKernel::Bfs { source: None },
            "pr" => GraphKernel::PageRank {
                sync: get("sync", "pull").parse().map_err(|e| bad("sync", e))?,
                batch: get("batch", "1").parse::<usize>().map_err(|_| {
                    bad(
                        "batch",
                        format!("`{}` is not a positive integer", get("batch", "1")),
                    )
                })?,
                tolerance: DEFAULT_TOLERANCE,
            },
            other => return Err(bad("kernel", format!("`{other}` is not count, bfs or pr"))),
        };
        GraphCount::new(get("graph", "kron:14"), kernel)
    }

    /// The graph, once prepared.
    pub fn graph(&self) -> Option<&Graph> {
        self.graph.as_ref()
    }

    /// Checks the BFS source against the graph: the highest-degree vertex when none
    /// was given.
    fn bfs_source(&self, g: &Graph) -> Result<Option<u32>, WorkloadError> {
        let GraphKernel::Bfs { source } = self.kernel else {
            return Ok(None);
        };
        if g.vertices() == 0 {
            return Err(bad(
                "graph",
                format!("`{}`: the graph has no vertices", self.source),
            ));
        }
        match source {
            Some(s) if (s as usize) < g.vertices() => Ok(Some(s)),
            Some(s) => Err(bad(
                "source",
                format!("{s}: the graph has vertices 0-{}", g.vertices() - 1),
            )),
            None => Ok((0..g.vertices() as u32).max_by_key(|&v| g.degree(v))),
        }
    }

    fn verify_count(&self, g: &Graph, pattern: Pattern, induced: bool) -> Verification {
        let work: u64 = (0..g.vertices() as u32)
            .map(|v| (g.degree(v) as u64).pow(2))
            .sum();
        if work > REFERENCE_MAX_WORK {
            return Verification::Unavailable(format!(
                "the independent counter would take {work:.1e} steps on this graph (limit {REFERENCE_MAX_WORK:.0e})"
            ));
        }
        let r = reference_count(g, pattern, induced);
        Verification::check(
            r == self.count,
            format!("count {} against the independent counter's {r}", self.count),
        )
    }
}

/// The graph `source` names, built by the pool's workers: `kron:SCALE` or
/// `uniform:SCALE` generated, a `.csr` cache loaded as it is, any other file read as
/// an edge list (SNAP, `.el`, `.mtx`).
///
/// # Errors
/// [`WorkloadError::BadParam`] for a scale outside 1-30; the loader's error for a file.
pub fn build_graph(source: &str, pool: &Pool) -> Result<Graph, WorkloadError> {
    let scale = |s: &str| {
        s.parse::<u32>()
            .ok()
            .filter(|s| (1..=30).contains(s))
            .ok_or_else(|| bad("graph", format!("`{source}`: the scale must be 1-30")))
    };
    let (n, edges) = if let Some(s) = source.strip_prefix("kron:") {
        generate(Kind::Kronecker, scale(s)?, pool)
    } else if let Some(s) = source.strip_prefix("uniform:") {
        generate(Kind::Uniform, scale(s)?, pool)
    } else if source.ends_with(".csr") {
        return Ok(super::cache::load(std::path::Path::new(source))?);
    } else {
        load(std::path::Path::new(source))?
    };
    Ok(Graph::from_edges(n, &edges, pool))
}

/// Vertices a BFS reached and the edges among them (each counted once), the edges
/// its TEPS rate counts.
fn traversed(g: &Graph, parent: &[u32]) -> (usize, u64) {
    let reached = (0..g.vertices() as u32).filter(|&v| parent[v as usize] != super::bfs::NONE);
    let (n, degrees) = reached.fold((0, 0u64), |(n, d), v| (n + 1, d + g.degree(v) as u64));
    (n, degrees / 2)
}

impl Workload for GraphCount {
    fn name(&self) -> &'static str {
        "graph"
    }

    fn primary_figure(&self) -> &'static str {
        "edges_per_s"
    }

    fn prepare(&mut self, pool: &Pool) -> Result<(), WorkloadError> {
        let t = Instant::now();
        let g = build_graph(&self.source, pool)?;
        if let Some(s) = self.bfs_source(&g)? {
            self.kernel = GraphKernel::Bfs { source: Some(s) };
        }
        self.graph = Some(g);
        self.build_seconds = t.elapsed().as_secs_f64();
        Ok(())
    }

    fn run(&mut self, pool: &Pool) -> (f64, Vec<Figure>) {
        let Some(g) = self.graph.as_ref() else {
            return (0.0, Vec::new());
        };
        let t = Instant::now();
        match &self.kernel {
            GraphKernel::Count { pattern, induced } => {
                self.count = count(g, *pattern, *induced, pool)
            }
            GraphKernel::Bfs { source } => {
                let s = source.unwrap_or(0);
                self.bfs = Some((s, super::bfs::bfs(g, s, pool)));
            }
            // An unavailable mechanism (htm without RTM) leaves no ranks; verify says why.
            GraphKernel::PageRank {
                sync,
                batch,
                tolerance,
            } => self.ranks = super::pagerank::pagerank(g, sync, *batch, *tolerance, pool).ok(),
        }
        self.seconds = t.elapsed().as_secs_f64();
        (
            self.seconds,
            vec![Figure {
                name: "edges_per_s".into(),
                value: g.edges() as f64 / self.seconds,
                unit: "edges/s",
            }],
        )
    }

    fn verify(&self, _pool: &Pool) -> Verification {
        let Some(g) = &self.graph else {
            return Verification::Failed("nothing ran".into());
        };
        match &self.kernel {
            GraphKernel::Count { pattern, induced } => self.verify_count(g, *pattern, *induced),
            GraphKernel::Bfs { .. } => match &self.bfs {
                Some((s, parent)) => match super::bfs::verify(g, *s, parent) {
                    Ok(edges) => Verification::Passed(format!(
                        "parent tree from {s} verified ({edges} edges reached)"
                    )),
                    Err(e) => Verification::Failed(e),
                },
                None => Verification::Failed("nothing ran".into()),
            },
            GraphKernel::PageRank { sync, .. } => match &self.ranks {
                Some(r) => match super::pagerank::verify(g, r) {
                    Ok(()) => Verification::Passed(format!(
                        "{} iterations; scores equal a serial pull PageRank to 1e-9",
                        r.iterations
                    )),
                    Err(e) => Verification::Failed(e),
                },
                None => Verification::Unavailable(format!(
                    "{sync:?}: this CPU does not offer Intel RTM (TSX absent or disabled), so no htm run was made"
                )),
            },
        }
    }

    fn detail(&self) -> serde_json::Value {
        let g = self.graph.as_ref();
        let mut d = json!({
            "graph": self.source, "seconds": self.seconds, "build_seconds": self.build_seconds,
            "vertices": g.map(Graph::vertices), "edges": g.map(Graph::edges), "bytes_per_edge": g.map(Graph::bytes_per_edge),
        });
        let extra = match &self.kernel {
            GraphKernel::Count { pattern, induced } => {
                json!({"kernel": "count", "pattern": pattern, "induced": induced, "count": self.count})
            }
            GraphKernel::Bfs { .. } => {
                let (source, reached, edges) = match (&self.bfs, g) {
                    (Some((s, parent)), Some(g)) => {
                        let (reached, edges) = traversed(g, parent);
                        (Some(*s), reached, edges)
                    }
                    _ => (None, 0, 0),
                };
                json!({"kernel": "bfs", "source": source, "reached_vertices": reached,
                    "traversed_edges": edges, "teps": edges as f64 / self.seconds})
            }
            GraphKernel::PageRank { sync, batch, .. } => {
                let r = self.ranks.as_ref();
                json!({"kernel": "pr", "sync": sync.to_string(), "batch": batch,
                    "iterations": r.map(|r| r.iterations), "transactions": r.map(|r| r.transactions),
                    "aborts": r.map(|r| r.aborts.total()), "aborts_by_cause": r.map(|r| r.aborts)})
            }
        };
        if let (Some(d), Some(extra)) = (d.as_object_mut(), extra.as_object()) {
            d.extend(extra.clone());
        }
        d
    }
}
