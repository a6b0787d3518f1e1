//! Subgraph counting as a workload: the graph is generated or loaded and built by the
//! pinned workers (so its pages sit where they count), the count is timed, and an
//! independent slower counter ([`super::count::reference_count`]) verifies it.

use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::json;

use super::count::{count, reference_count, Pattern};
use super::gen::{generate, Kind};
use super::{load::load, Graph};
use crate::pool::Pool;
use crate::{Figure, Verification, Workload, WorkloadError};

/// Counting one pattern in one graph.
pub struct GraphCount {
    source: String,
    pattern: Pattern,
    induced: bool,
    graph: Option<Graph>,
    count: u64,
    seconds: f64,
}

fn bad(key: &str, detail: String) -> WorkloadError {
    WorkloadError::BadParam {
        key: key.into(),
        detail,
    }
}

impl GraphCount {
    /// From sweep parameters: `graph` (kron:14), `pattern` (diamond), `induced` (false).
    ///
    /// # Errors
    /// [`WorkloadError::BadParam`] naming the parameter.
    pub fn from_params(params: &BTreeMap<String, String>) -> Result<GraphCount, WorkloadError> {
        if let Some(k) = params
            .keys()
            .find(|k| !["graph", "pattern", "induced"].contains(&k.as_str()))
        {
            return Err(bad(
                k,
                "unknown (graph takes graph, pattern, induced)".into(),
            ));
        }
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
        Ok(GraphCount {
            source: params
                .get("graph")
                .cloned()
                .unwrap_or_else(|| "kron:14".into()),
            pattern,
            induced,
            graph: None,
            count: 0,
            seconds: 0.0,
        })
    }

    fn edges(&self, pool: &Pool) -> Result<(usize, Vec<(u32, u32)>), WorkloadError> {
        let scale = |s: &str| {
            s.parse::<u32>()
                .ok()
                .filter(|s| (1..=30).contains(s))
                .ok_or_else(|| {
                    bad(
                        "graph",
                        format!("`{}`: the scale must be 1-30", self.source),
                    )
                })
        };
        if let Some(s) = self.source.strip_prefix("kron:") {
            Ok(generate(Kind::Kronecker, scale(s)?, pool))
        } else if let Some(s) = self.source.strip_prefix("uniform:") {
            Ok(generate(Kind::Uniform, scale(s)?, pool))
        } else {
            Ok(load(std::path::Path::new(&self.source))?)
        }
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
        let (n, e) = self.edges(pool)?;
        self.graph = Some(Graph::from_edges(n, &e, pool));
        Ok(())
    }

    fn run(&mut self, pool: &Pool) -> (f64, Vec<Figure>) {
        let g = self.graph.as_ref().expect("prepare runs before run");
        let t = Instant::now();
        self.count = count(g, self.pattern, self.induced, pool);
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
        let r = reference_count(g, self.pattern, self.induced);
        Verification {
            passed: r == self.count,
            detail: format!("count {} against the independent counter's {r}", self.count),
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
