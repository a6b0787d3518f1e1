//! The memory measurements' documents (`mem stream|matrix|latency|c2c --json`) as
//! types: what the commands write and what `analyze`, `predict` and `report` read
//! back (schema in docs/json.md, "Memory documents"). The node matrix is the type the
//! workloads measure into; the latency rungs and core-to-core pairs mirror theirs
//! in serde form (theirs use machine types: `usize`, a relation enum), so this
//! crate depends on no workload; the
//! matrix document's hop inferences are a type parameter, filled in by the analysis
//! that owns them. Reading checks the `kind` first and names it; a value of the
//! wrong shape is named by its path in the document.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::evidence::RunEvidence;
use crate::workload::WorkloadReport;

/// Version of the `mem matrix|latency|c2c --json` documents (docs/json.md).
pub const SCHEMA_VERSION: u32 = 1;
/// Version of the `mem stream --json` document: 2 replaced schema 1's `sum` kernel
/// with the `read` ceiling and added the `write` one; 3 made `write` ordinary
/// stores and added `write_nt` with the non-temporal ones; 4 added the sustained
/// blocks of `write`, `write_nt` and `read`; 5 the read's `loop` (docs/json.md).
pub const STREAM_SCHEMA_VERSION: u32 = 5;

/// The documents' `kind` values.
pub const STREAM_KIND: &str = "scalescope.mem-stream";
pub const MATRIX_KIND: &str = "scalescope.mem-matrix";
pub const LATENCY_KIND: &str = "scalescope.mem-latency";
pub const C2C_KIND: &str = "scalescope.mem-c2c";

/// Said of a matrix measured on a machine with one NUMA node.
pub const ONE_NODE_NOTE: &str =
    "1x1: this machine has one NUMA node, so there is no remote memory to compare";

/// Why a JSON value is not the memory document asked for.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MemDocError {
    #[error("no `kind` field: not a scalescope document")]
    NoKind,
    #[error("not a `{expected}` document (kind {found})")]
    Kind {
        expected: &'static str,
        found: String,
    },
    /// `field` is the path to the value (`matrix.slit[0][1]`), `.` for the top.
    #[error("`{kind}` document{}: {detail}", at(.field))]
    Shape {
        kind: &'static str,
        field: String,
        detail: String,
    },
}

/// Where in a document a value is, in an error message (nothing for the top level).
fn at(field: &str) -> String {
    if field == "." {
        String::new()
    } else {
        format!(", at `{field}`")
    }
}

#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    kind: Option<serde_json::Value>,
}

/// The `kind` of a document, if it has a textual one.
pub fn kind_of(doc: &serde_json::Value) -> Option<String> {
    let head = Head::deserialize(doc).ok()?;
    head.kind?.as_str().map(String::from)
}

/// `doc` read as the document of kind `expected`.
///
/// # Errors
/// No `kind`, another kind, or a field of the wrong shape (serde names it).
pub fn read<T: DeserializeOwned>(
    doc: &serde_json::Value,
    expected: &'static str,
) -> Result<T, MemDocError> {
    match kind_of(doc) {
        None => Err(MemDocError::NoKind),
        Some(k) if k != expected => Err(MemDocError::Kind { expected, found: k }),
        Some(_) => serde_path_to_error::deserialize(doc).map_err(|e| MemDocError::Shape {
            kind: expected,
            field: e.path().to_string(),
            detail: e.inner().to_string(),
        }),
    }
}

/// A document as its command prints it: pretty JSON with the keys of every object
/// sorted, as these documents have always been written.
///
/// # Errors
/// A value serde cannot represent (a non-string map key).
pub fn to_json<T: Serialize>(doc: &T) -> serde_json::Result<String> {
    serde_json::to_string_pretty(&serde_json::to_value(doc)?)
}

/// A measurement of another crate's type (a workload's) read as the document part
/// with the same fields, through its serde form: the workloads keep their types and
/// this crate depends on none of them.
///
/// # Errors
/// A measurement whose fields do not fit the part (serde names the field).
pub fn part<T: DeserializeOwned>(measured: &impl Serialize) -> serde_json::Result<T> {
    serde_json::from_value(serde_json::to_value(measured)?)
}

/// One STREAM kernel: GB/s of its best iteration, its best, average and worst
/// seconds, and the bytes it moves per iteration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamKernel {
    pub gb_per_s: f64,
    #[serde(default)]
    pub best_secs: f64,
    #[serde(default)]
    pub avg_secs: f64,
    #[serde(default)]
    pub max_secs: f64,
    #[serde(default)]
    pub bytes: u64,
    /// The kernel's sustained block (schema 4, `write`, `write_nt` and `read` when
    /// `--sustain` is above 0); null or absent otherwise.
    #[serde(default)]
    pub sustained: Option<SustainedBlock>,
    /// The loop the sustained read block ran through (schema 5, `read` with a
    /// sustained block only; null or absent otherwise).
    #[serde(default, rename = "loop")]
    pub read_loop: Option<ReadLoopChoice>,
}

/// Which read loop a `mem stream` run kept for its sustained read: `chosen`
/// (`wide` or `paced`), the faster by median GB/s over `trial_pairs` interleaved
/// blocks of `trial_sweeps` back-to-back sweeps of each (`trial_gb_per_s` by loop
/// name; empty, and both counts 0, where this CPU runs only one loop).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadLoopChoice {
    pub chosen: String,
    pub trial_gb_per_s: BTreeMap<String, f64>,
    pub trial_pairs: usize,
    pub trial_sweeps: usize,
}

/// Back-to-back sweeps of one kernel between two barriers, as likwid-bench times
/// its kernels: `sweeps` in `secs`, `gb_per_s` their average rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SustainedBlock {
    pub sweeps: usize,
    pub secs: f64,
    pub gb_per_s: f64,
}

/// `mem stream --json`. Reading needs only `kind`, `threads`, `placement` and the
/// kernels; the rest are empty where a hand-written document lacks them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamDocument {
    pub kind: String,
    #[serde(default)]
    pub schema_version: u32,
    pub threads: usize,
    /// The placement strategy, as text.
    pub placement: String,
    /// The memory policy, as text.
    #[serde(default)]
    pub mem: String,
    #[serde(default)]
    pub verified: bool,
    #[serde(default)]
    pub verdict: String,
    #[serde(default)]
    pub verification: String,
    #[serde(default)]
    pub array_bytes: u64,
    /// By kernel name (`copy`, `scale`, `add`, `triad`, `write`, `write_nt`,
    /// `read`; schema 1 had `sum` where schema 2 has `read`, schema 2 no `write_nt`).
    #[serde(default)]
    pub kernels: BTreeMap<String, StreamKernel>,
    /// The full workload report (always written).
    #[serde(default)]
    pub report: Option<WorkloadReport>,
    /// What the sampler saw; null when its thread failed.
    #[serde(default)]
    pub evidence: Option<RunEvidence>,
}

/// The measured node matrices: rows are CPU nodes, columns memory nodes. Every
/// field is empty where a document lacks it (readers check what they need).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NodeMatrix {
    pub cpu_nodes: Vec<u32>,
    pub memory_nodes: Vec<u32>,
    /// The best pass per cell, GB/s.
    pub bandwidth_gb_per_s: Vec<Vec<f64>>,
    /// The best chase per cell, ns.
    pub latency_ns: Vec<Vec<f64>>,
    /// Every pass of every bandwidth cell, GB/s.
    pub bandwidth_samples: Vec<Vec<Vec<f64>>>,
    /// Every chase of every latency cell, ns.
    pub latency_samples: Vec<Vec<Vec<f64>>>,
    /// Fraction of each cell's pages found on its memory node (None: unverified).
    pub placement_verified: Vec<Vec<Option<f64>>>,
    /// The firmware's SLIT distances between the same nodes (empty if none).
    pub slit: Vec<Vec<u32>>,
    pub threads_per_node: Vec<usize>,
    /// The read loop each bandwidth cell's passes went through and the trial that
    /// picked it (as `mem stream`'s `kernels.read.loop`; empty in older documents).
    pub read_loops: Vec<Vec<ReadLoopChoice>>,
}

/// `mem matrix --json`; `H` is the hop inference the analysis draws from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixDocument<H> {
    pub kind: String,
    #[serde(default)]
    pub schema_version: u32,
    #[serde(default)]
    pub machine: String,
    /// As in the machine record; null where unknown, absent in older documents.
    #[serde(default)]
    pub virtualization: Option<scalescope_topo::virt::Virtualization>,
    pub matrix: NodeMatrix,
    /// Always written by `mem matrix --json`; absent in hand-made documents (a
    /// missing `Option` field reads as None).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bandwidth_hops: Option<H>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_hops: Option<H>,
    /// [`ONE_NODE_NOTE`] on one-node machines, else null.
    #[serde(default)]
    pub note: Option<String>,
}

impl<H> MatrixDocument<H> {
    /// A measured matrix, its hop inferences still to be drawn.
    pub fn new(
        machine: &str,
        virtualization: Option<scalescope_topo::virt::Virtualization>,
        matrix: NodeMatrix,
    ) -> Self {
        let one_node = matrix.cpu_nodes.len() == 1 && matrix.memory_nodes.len() == 1;
        MatrixDocument {
            kind: MATRIX_KIND.into(),
            schema_version: SCHEMA_VERSION,
            machine: machine.into(),
            virtualization,
            matrix,
            bandwidth_hops: None,
            latency_hops: None,
            note: one_node.then(|| ONE_NODE_NOTE.into()),
        }
    }
}

/// One rung of the latency ladder: working-set bytes, ns per dependent load.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rung {
    pub bytes: u64,
    pub ns: f64,
}

/// A cache level the ladder passes and its size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CacheSize {
    pub level: u8,
    pub size_bytes: u64,
}

/// `mem latency --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyDocument {
    pub kind: String,
    #[serde(default)]
    pub schema_version: u32,
    #[serde(default)]
    pub machine: String,
    pub cpu: u32,
    pub rungs: Vec<Rung>,
    #[serde(default)]
    pub caches: Vec<CacheSize>,
}

impl LatencyDocument {
    /// The ladder measured from `cpu`, and the caches (level, bytes) it passes.
    pub fn new(machine: &str, cpu: u32, rungs: Vec<Rung>, caches: &[(u8, u64)]) -> Self {
        LatencyDocument {
            kind: LATENCY_KIND.into(),
            schema_version: SCHEMA_VERSION,
            machine: machine.into(),
            cpu,
            rungs,
            caches: caches
                .iter()
                .map(|&(level, size_bytes)| CacheSize { level, size_bytes })
                .collect(),
        }
    }
}

/// One pair's one-way latency samples, ns; `relation` as `same-core`, `same-l3`,
/// `same-package` or `other-package`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairLatency {
    pub a: u32,
    pub b: u32,
    pub relation: String,
    pub mean_ns: f64,
    pub median_ns: f64,
    pub stddev_ns: f64,
}

/// The core-to-core matrix and its summary by relation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct C2cMatrix {
    pub cpus: Vec<u32>,
    /// Mean one-way ns; `ns[i][j]` for `cpus[i]`, `cpus[j]`; None on the diagonal.
    pub ns: Vec<Vec<Option<f64>>>,
    #[serde(default)]
    pub pairs: Vec<PairLatency>,
    /// (relation, pairs, mean of pair means, min, max).
    #[serde(default)]
    pub summary: Vec<(String, usize, f64, f64, f64)>,
    #[serde(default)]
    pub line_node: Option<u32>,
    #[serde(default)]
    pub round_trips: usize,
    #[serde(default)]
    pub samples: usize,
}

/// `mem c2c --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct C2cDocument {
    pub kind: String,
    #[serde(default)]
    pub schema_version: u32,
    #[serde(default)]
    pub machine: String,
    pub c2c: C2cMatrix,
}

impl C2cDocument {
    pub fn new(machine: &str, c2c: C2cMatrix) -> Self {
        C2cDocument {
            kind: C2C_KIND.into(),
            schema_version: SCHEMA_VERSION,
            machine: machine.into(),
            c2c,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_names_the_kind_and_the_field() {
        let doc = serde_json::json!({"kind": C2C_KIND, "c2c": {"cpus": [0, 1]}});
        let e = read::<C2cDocument>(&doc, C2C_KIND).unwrap_err();
        assert!(
            e.to_string().contains("at `c2c`: missing field `ns`"),
            "{e}"
        );
        let bad = serde_json::json!({"kind": C2C_KIND, "c2c": {"cpus": [0], "ns": [["x"]]}});
        let e = read::<C2cDocument>(&bad, C2C_KIND).unwrap_err().to_string();
        assert!(e.contains("at `c2c.ns[0][0]`: invalid type: string"), "{e}");
        let e = read::<LatencyDocument>(&doc, LATENCY_KIND).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("not a `{LATENCY_KIND}` document (kind {C2C_KIND})")
        );
        let e = read::<C2cDocument>(&serde_json::json!({"kind": C2C_KIND}), C2C_KIND);
        let e = e.unwrap_err().to_string();
        assert_eq!(e, format!("`{C2C_KIND}` document: missing field `c2c`"));
        let none = read::<C2cDocument>(&serde_json::json!({"x": 1}), C2C_KIND);
        assert_eq!(none, Err(MemDocError::NoKind));
    }

    #[test]
    fn a_document_is_written_with_sorted_keys_and_read_back() {
        let doc = LatencyDocument::new(
            "m",
            3,
            vec![Rung {
                bytes: 4096,
                ns: 1.5,
            }],
            &[(1, 32768)],
        );
        let text = to_json(&doc).unwrap();
        assert!(text.find("\"caches\"") < text.find("\"cpu\""), "{text}");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(read::<LatencyDocument>(&v, LATENCY_KIND), Ok(doc));
        let m: MatrixDocument<()> = MatrixDocument::new(
            "m",
            None,
            NodeMatrix {
                cpu_nodes: vec![0],
                memory_nodes: vec![0],
                ..Default::default()
            },
        );
        assert_eq!(m.note.as_deref(), Some(ONE_NODE_NOTE));
    }
}
