//! Subgraph counting as a workload: the graph is generated or loaded and built by the
//! pinned workers (so its pages sit where they count), the count is timed, and an
//! independent slower counter ([`super::count::reference_count`]) verifies it.

use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::json;

use super::count::{count, reference_count, Pattern};
use super::Graph;
use crate::pool::Pool;
use crate::{Figure, Verification, Workload, WorkloadError};

/// Which graph kernel a sweep runs.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kernel {
    Count(Pattern),
    Bfs,
    PageRank(super::pagerank::Sync, usize),
}

/// One graph kernel on one graph: `count` (a pattern), `bfs` or `pr`.
pub struct GraphCount {
    source: String,
    kernel: Kernel,
    pattern: Pattern,
    induced: bool,
    /// Skip the memory estimate's refusal (`force=true`).
    force: bool,
    graph: Option<Graph>,
    count: u64,
    seconds: f64,
    bfs: Option<(u32, Vec<u32>)>,
    ranks: Option<super::pagerank::Ranks>,
}

fn bad(key: &str, detail: String) -> WorkloadError {
    WorkloadError::BadParam {
        key: key.into(),
        detail,
    }
}

impl GraphCount {
    /// From sweep parameters: `kernel` (count, bfs or pr), `graph` (kron:14);
    /// for count `pattern` (diamond) and `induced` (false); for pr `sync` (pull) and
    /// `batch` (1).
    ///
    /// # Errors
    /// [`WorkloadError::BadParam`] naming the parameter.
    pub fn from_params(params: &BTreeMap<String, String>) -> Result<GraphCount, WorkloadError> {
        const KEYS: [&str; 7] = [
            "kernel", "graph", "pattern", "induced", "sync", "batch", "force",
        ];
        if let Some(k) = params.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(bad(
                k,
                "unknown (graph takes kernel, graph, pattern, induced, sync, batch, force)".into(),
            ));
        }
        let force = match params.get("force").map(String::as_str) {
            None | Some("false") => false,
            Some("true") => true,
            Some(v) => return Err(bad("force", format!("`{v}` is not true or false"))),
        };
        let pattern: Pattern = params
            .get("pattern")
            .map(String::as_str)
            .unwrap_or("diamond")
            .parse()
            .map_err(|e| bad("pattern", e))?;
        let induced = match params.get("induced").map(String::as_str) {
            None | Some("false") => false,
            Some("true") => true,
            Some(v) => return Err(bad("induced", format!("`{v}` is not true or false"))),
        };
        let kernel = match params.get("kernel").map(String::as_str).unwrap_or("count") {
            "count" => Kernel::Count(pattern),
            "bfs" => Kernel::Bfs,
            "pr" => {
                let sync = params
                    .get("sync")
                    .map(String::as_str)
                    .unwrap_or("pull")
                    .parse()
                    .map_err(|e| bad("sync", e))?;
                let batch =
                    match params.get("batch") {
                        None => 1,
                        Some(b) => b.parse::<usize>().ok().filter(|b| *b > 0).ok_or_else(|| {
                            bad("batch", format!("`{b}` is not a positive integer"))
                        })?,
                    };
                Kernel::PageRank(sync, batch)
            }
            other => return Err(bad("kernel", format!("`{other}` is not count, bfs or pr"))),
        };
        Ok(GraphCount {
            source: params
                .get("graph")
                .cloned()
                .unwrap_or_else(|| "kron:14".into()),
            kernel,
            pattern,
            induced,
            force,
            graph: None,
            count: 0,
            seconds: 0.0,
            bfs: None,
            ranks: None,
        })
    }

    fn edges(&self, pool: &Pool) -> Result<(usize, Vec<(u32, u32)>), WorkloadError> {
        crate::graph::source::edges(&self.source, self.force, pool)
    }
}

impl Workload for GraphCount {
    fn name(&self) -> &'static str {
        "graph"
    }

    fn primary_figure(&self) -> &'static str {
        "edges_per_s"
    }

    fn prepare(&mut self, pool: &Pool) -> Result<(), WorkloadError> {
        self.graph = Some(if self.source.ends_with(".csr") {
            super::cache::load(std::path::Path::new(&self.source))?
        } else {
            let (n, e) = self.edges(pool)?;
            Graph::from_edges(n, &e, pool)
        });
        Ok(())
    }

    fn run(&mut self, pool: &Pool) -> (f64, Vec<Figure>) {
        let g = self.graph.as_ref().expect("prepare runs before run");
        let t = Instant::now();
        match &self.kernel {
            Kernel::Count(_) => self.count = count(g, self.pattern, self.induced, pool),
            Kernel::Bfs => {
                let source = (0..g.vertices() as u32)
                    .max_by_key(|&v| g.degree(v))
                    .unwrap_or(0);
                self.bfs = Some((source, super::bfs::bfs(g, source, pool)));
            }
            // An unavailable mechanism (htm without RTM) leaves no ranks; verify says why.
            Kernel::PageRank(sync, batch) => {
                self.ranks = super::pagerank::pagerank(g, sync, *batch, 1e-4, pool).ok()
            }
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
            return Verification {
                passed: false,
                detail: "nothing ran".into(),
            };
        };
        let fail = |detail: String| Verification {
            passed: false,
            detail,
        };
        match &self.kernel {
            Kernel::Count(_) => {
                let r = reference_count(g, self.pattern, self.induced);
                Verification {
                    passed: r == self.count,
                    detail: format!("count {} against the independent counter's {r}", self.count),
                }
            }
            Kernel::Bfs => match &self.bfs {
                Some((s, parent)) => match super::bfs::verify(g, *s, parent) {
                    Ok(edges) => Verification {
                        passed: true,
                        detail: format!("parent tree from {s} verified ({edges} edges reached)"),
                    },
                    Err(e) => fail(e),
                },
                None => fail("nothing ran".into()),
            },
            Kernel::PageRank(sync, _) => match &self.ranks {
                Some(r) => match super::pagerank::verify(g, r) {
                    Ok(()) => Verification {
                        passed: true,
                        detail: format!(
                            "{} iterations; scores equal a serial pull PageRank to 1e-9",
                            r.iterations
                        ),
                    },
                    Err(e) => fail(e),
                },
                None => fail(format!(
                    "{sync:?}: unavailable here (RTM cannot commit on this CPU)"
                )),
            },
        }
    }

    fn detail(&self) -> serde_json::Value {
        let g = self.graph.as_ref();
        json!({
            "graph": self.source, "pattern": self.pattern, "induced": self.induced, "count": self.count, "seconds": self.seconds,
            "vertices": g.map(Graph::vertices), "edges": g.map(Graph::edges), "bytes_per_edge": g.map(Graph::bytes_per_edge),
        })
    }
}
