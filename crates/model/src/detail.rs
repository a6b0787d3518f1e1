//! What each built-in workload reports beside its figures, typed: one struct per
//! workload ([`Detail`]), written by the workload, read by the report (the kernel
//! commands' documents and text) without looking anything up by key. In JSON a
//! detail is the struct's fields, as before; read back, it is typed by the report's
//! `workload` name ([`Detail::from_wire`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::mem::StreamKernel;

/// A float written as JSON null where it is not finite (as serde_json writes NaN
/// and infinities) and read back as NaN.
fn nan_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

fn nan() -> f64 {
    f64::NAN
}

/// NAS EP: the sums of the Gaussian pairs and the counts per square annulus.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpDetail {
    pub class: String,
    /// log2 of the pairs generated, less one (2^(M+1) deviates).
    pub m: u32,
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub sx: f64,
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub sy: f64,
    pub annulus_counts: Vec<u64>,
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub seconds: f64,
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub mops: f64,
}

/// NAS IS: the keys sorted and the iterations timed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IsDetail {
    pub class: String,
    pub total_keys: usize,
    pub max_key: usize,
    pub iterations: usize,
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub seconds: f64,
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub mops: f64,
}

/// NAS FT: the grid, the iterations and each iteration's checksum (re, im).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FtDetail {
    pub class: String,
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    pub niter: usize,
    pub checksums: Vec<(f64, f64)>,
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub seconds: f64,
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub mops: f64,
}

/// TPC-H Q1 or Q6: the query, the table and the result rows (the first the
/// header, `|`-separated).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TpchDetail {
    pub query: String,
    pub sf: f64,
    pub layout: String,
    pub lineitem_rows: usize,
    pub rows: Vec<String>,
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub seconds: f64,
    pub scanned_bytes_per_row: usize,
}

/// RTM aborts by cause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AbortCounts {
    /// Another thread touched the transaction's data.
    pub conflict: u64,
    /// The transaction's data did not fit the cache.
    pub capacity: u64,
    /// Explicit XABORT.
    pub explicit: u64,
    /// Interrupts, page faults, unsupported instructions.
    pub other: u64,
}

impl AbortCounts {
    pub fn total(&self) -> u64 {
        self.conflict + self.capacity + self.explicit + self.other
    }
}

/// One step of a BFS, as its workers ran it between two barriers: a level top-down
/// or bottom-up, or a conversion of the frontier between queue and bitmap (no
/// level of its own). `seconds` is the step from the barrier before it to the one
/// after, as worker 0 saw it; `wait_seconds` the mean time a worker spent in the
/// step's barriers (waiting for the slowest; with one worker, the barriers' own cost).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BfsStep {
    /// `top-down`, `bottom-up`, `queue-to-bitmap` or `bitmap-to-queue`.
    pub kind: String,
    /// Vertices in the frontier the step started from.
    pub frontier: u64,
    /// Vertices the step added (0 for a conversion).
    pub found: u64,
    pub seconds: f64,
    pub wait_seconds: f64,
}

/// What one graph kernel found, by kernel (`kernel` in JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kernel", rename_all = "lowercase")]
pub enum GraphKernelDetail {
    /// A subgraph count.
    Count {
        pattern: String,
        induced: bool,
        count: u64,
    },
    /// A BFS: where from, what it reached, and its steps (empty in older records).
    Bfs {
        source: Option<u32>,
        reached_vertices: usize,
        traversed_edges: u64,
        #[serde(default = "nan", deserialize_with = "nan_if_null")]
        teps: f64,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        steps: Vec<BfsStep>,
    },
    /// PageRank: the mechanism, the batch and what the run did (absent where the
    /// mechanism could not run here).
    Pr {
        sync: String,
        batch: usize,
        iterations: Option<usize>,
        transactions: Option<u64>,
        aborts: Option<u64>,
        aborts_by_cause: Option<AbortCounts>,
    },
}

/// A graph kernel on one graph: the graph (its size once built) and the kernel's
/// own detail, flattened beside it in JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphDetail {
    /// The graph as named (`kron:16`, a file).
    pub graph: String,
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub seconds: f64,
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub build_seconds: f64,
    pub vertices: Option<usize>,
    pub edges: Option<usize>,
    pub bytes_per_edge: Option<f64>,
    /// Seconds renumbering the graph by degree took (BFS and pull PageRank; once
    /// per prepared input, outside the timed kernel).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relabel_seconds: Option<f64>,
    #[serde(flatten)]
    pub kernel: GraphKernelDetail,
}

/// STREAM: the arrays, the iterations and every kernel's rates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamDetail {
    pub array_elements: usize,
    pub array_bytes: u64,
    pub total_bytes: u64,
    pub ntimes: usize,
    pub non_temporal_stores: bool,
    #[serde(default)]
    pub sustain_secs: f64,
    pub kernels: BTreeMap<String, StreamKernel>,
}

/// What one update of the synchronisation study does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    /// Set a visited flag if it is not set (BFS).
    MarkVisited,
    /// Add 1.0 to a score (PageRank).
    Increment,
}

impl Op {
    /// The name the JSON and the text use.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::MarkVisited => "mark-visited",
            Op::Increment => "increment",
        }
    }
}

/// One (mechanism, batch) measurement: the median of its repetitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub batch: usize,
    /// Mean time of one critical section, per worker, in nanoseconds (median over
    /// the repetitions).
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub ns_per_section: f64,
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub ns_per_update: f64,
    /// Each repetition's time of one critical section.
    pub ns_per_section_reps: Vec<f64>,
    pub aborts: u64,
}

/// T(N) = A N + B with its intervals, or why it was rejected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinearFit {
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub a_ns: f64,
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub b_ns: f64,
    /// 95% intervals (None with fewer than three observations).
    pub a_ci95: Option<(f64, f64)>,
    pub b_ci95: Option<(f64, f64)>,
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub r_squared: f64,
    /// Observations fitted (batch sizes x repetitions).
    pub observations: usize,
    pub rejected: Option<String>,
}

/// A mechanism's curve and its fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    pub sync: String,
    pub op: Op,
    pub points: Vec<Point>,
    /// Nanoseconds per update (A) and per critical section (B), and R^2 (as in
    /// `fit`, kept for readers of the earlier fields).
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub a_ns: f64,
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub b_ns: f64,
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub r_squared: f64,
    /// The batch with the lowest median time per update.
    pub best_batch: usize,
    /// T(N) = A N + B over every repetition, with intervals, or why it is rejected.
    pub fit: LinearFit,
}

impl LinearFit {
    /// The fit in words: A and B with their intervals and R^2, or why it is rejected.
    pub fn describe(&self) -> String {
        let line = format!(
            "{}  {}  R² = {:.3}",
            show_ns("A", self.a_ns, self.a_ci95),
            show_ns("B", self.b_ns, self.b_ci95),
            self.r_squared
        );
        match &self.rejected {
            Some(why) => format!("{line}  fit rejected: {why}"),
            None => line,
        }
    }
}

/// A cost in nanoseconds with its interval: `A = 5.00 ns [4.80, 5.20]`.
pub fn show_ns(name: &str, v: f64, ci: Option<(f64, f64)>) -> String {
    match ci {
        Some((lo, hi)) => format!("{name} = {v:.2} ns [{lo:.2}, {hi:.2}]"),
        None => format!("{name} = {v:.2} ns (no interval)"),
    }
}

/// One of the synchronisation study's predicted inequalities, tested.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    pub claim: String,
    pub op: Op,
    /// `holds`, `contradicted`, `undecided` or `unavailable here: <why>`.
    pub verdict: String,
    pub detail: String,
}

impl Claim {
    /// The claim in words, with the kind of update as the JSON names it.
    pub fn line(&self) -> String {
        format!(
            "claim {} ({}): {} {}",
            self.claim,
            self.op.as_str(),
            self.verdict,
            self.detail
        )
    }
}

/// The synchronisation study: the table, the curves and fits, the claims.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyncDetail {
    pub table: u64,
    #[serde(default)]
    pub updates: u64,
    pub reps: u64,
    pub curves: Vec<Curve>,
    pub claims: Vec<Claim>,
    /// Why a mechanism was left out here (RTM on a CPU without it).
    pub note: Option<String>,
}

/// A workload run's detail, by workload.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Detail {
    /// None reported.
    #[default]
    None,
    Ep(EpDetail),
    Is(IsDetail),
    Ft(FtDetail),
    Tpch(TpchDetail),
    Graph(GraphDetail),
    Stream(StreamDetail),
    Sync(SyncDetail),
    /// A detail this version does not know (another workload's, an older
    /// report's), kept as written and never read by the report.
    Other(serde_json::Value),
}

impl Detail {
    /// The detail a report of `workload` carried, typed by that name; one that does
    /// not have its workload's shape is kept as [`Detail::Other`].
    pub fn from_wire(workload: &str, v: serde_json::Value) -> Detail {
        fn typed<T: serde::de::DeserializeOwned>(
            v: &serde_json::Value,
            make: fn(T) -> Detail,
        ) -> Option<Detail> {
            T::deserialize(v).ok().map(make)
        }
        if v.is_null() {
            return Detail::None;
        }
        let found = match workload {
            "ep" => typed(&v, Detail::Ep),
            "is" => typed(&v, Detail::Is),
            "ft" => typed(&v, Detail::Ft),
            "tpch" => typed(&v, Detail::Tpch),
            "graph" => typed(&v, Detail::Graph),
            "stream" => typed(&v, Detail::Stream),
            "sync" => typed(&v, Detail::Sync),
            _ => None,
        };
        found.unwrap_or(Detail::Other(v))
    }
}

impl Serialize for Detail {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Detail::None => s.serialize_unit(),
            Detail::Ep(d) => d.serialize(s),
            Detail::Is(d) => d.serialize(s),
            Detail::Ft(d) => d.serialize(s),
            Detail::Tpch(d) => d.serialize(s),
            Detail::Graph(d) => d.serialize(s),
            Detail::Stream(d) => d.serialize(s),
            Detail::Sync(d) => d.serialize(s),
            Detail::Other(v) => v.serialize(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_graph_detail_is_flat_in_json_and_typed_back_by_workload() {
        let d = Detail::Graph(GraphDetail {
            graph: "kron:4".into(),
            seconds: 0.5,
            build_seconds: 0.25,
            vertices: Some(16),
            edges: Some(40),
            bytes_per_edge: Some(4.0),
            relabel_seconds: None,
            kernel: GraphKernelDetail::Bfs {
                source: Some(3),
                reached_vertices: 16,
                traversed_edges: 40,
                teps: f64::INFINITY,
                steps: vec![BfsStep {
                    kind: "top-down".into(),
                    frontier: 1,
                    found: 15,
                    seconds: 1e-5,
                    wait_seconds: 2e-6,
                }],
            },
        });
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["kernel"], "bfs");
        assert_eq!(v["reached_vertices"], 16);
        assert!(v["teps"].is_null());
        let Detail::Graph(back) = Detail::from_wire("graph", v.clone()) else {
            panic!("{v}");
        };
        let GraphKernelDetail::Bfs {
            teps,
            source,
            steps,
            ..
        } = back.kernel
        else {
            panic!("{v}");
        };
        assert!(teps.is_nan() && source == Some(3));
        assert_eq!((steps.len(), steps[0].found), (1, 15));
        // Another workload's name, or a shape this version does not know: kept.
        assert!(matches!(Detail::from_wire("ep", v), Detail::Other(_)));
        assert_eq!(
            Detail::from_wire("graph", serde_json::Value::Null),
            Detail::None
        );
    }
}
