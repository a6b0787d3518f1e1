//! Measured memory-bandwidth ceilings (`mem stream --json` documents) and the
//! diagnosis they allow: a curve whose figure of merit is a bandwidth (GB/s) and
//! that reaches the ceiling measured on the same number of NUMA nodes is bound by
//! memory bandwidth there, per node (or per socket); adding a node raises the
//! ceiling. Without a measured ceiling nothing is said about bandwidth.

use serde::{Deserialize, Serialize};

use scalescope_place::Strategy;
use scalescope_results::mem::{self, MemDocError, StreamDocument, STREAM_KIND};
use scalescope_topo::Topology;

use crate::events::usage;

/// One measured ceiling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ceiling {
    /// The file it came from.
    pub source: String,
    pub threads: usize,
    pub placement: Strategy,
    /// STREAM triad GB/s (the best of the iterations).
    pub gb_per_s: f64,
}

/// Why a document is not a ceiling.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CeilingError {
    /// Another kind, or a field of the wrong shape.
    #[error("{0}: {1}")]
    Doc(String, MemDocError),
    #[error("{0}: missing or invalid `{1}`")]
    Field(String, &'static str),
}

/// Reads a `mem stream --json` document.
///
/// # Errors
/// A document of another kind, or one without threads, placement or triad GB/s.
pub fn from_stream_doc(source: &str, doc: &serde_json::Value) -> Result<Ceiling, CeilingError> {
    let doc: StreamDocument =
        mem::read(doc, STREAM_KIND).map_err(|e| CeilingError::Doc(source.into(), e))?;
    from_stream(source, &doc)
}

/// The ceiling a `mem stream` document read from `source` measured.
///
/// # Errors
/// A placement that is not a strategy, or no positive triad GB/s.
pub fn from_stream(source: &str, doc: &StreamDocument) -> Result<Ceiling, CeilingError> {
    let field = |f: &'static str| CeilingError::Field(source.into(), f);
    Ok(Ceiling {
        source: source.into(),
        threads: doc.threads,
        placement: doc.placement.parse().map_err(|_| field("placement"))?,
        gb_per_s: doc
            .kernels
            .get("triad")
            .map(|k| k.gb_per_s)
            .filter(|v| *v > 0.0)
            .ok_or_else(|| field("kernels.triad.gb_per_s"))?,
    })
}

/// The best ceiling measured on exactly `nodes` NUMA nodes.
pub fn for_nodes<'a>(
    topo: &Topology,
    ceilings: &'a [Ceiling],
    nodes: usize,
) -> Option<&'a Ceiling> {
    ceilings
        .iter()
        .filter(|c| usage(topo, &c.placement, c.threads).is_some_and(|u| u.numa_nodes == nodes))
        .max_by(|a, b| a.gb_per_s.total_cmp(&b.gb_per_s))
}

/// Whether a figure of merit is a bandwidth in GB/s.
pub fn is_bandwidth(metric: &str) -> bool {
    metric.ends_with("gb_per_s") || metric.ends_with("gbps")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_stream_document_and_names_what_is_missing() {
        let doc = serde_json::json!({"kind": "scalescope.mem-stream", "threads": 4,
            "placement": "compact", "kernels": {"triad": {"gb_per_s": 41.5}}});
        let c = from_stream_doc("s.json", &doc).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((c.threads, c.gb_per_s), (4, 41.5));
        let bad = serde_json::json!({"kind": "scalescope.mem-stream", "threads": 4, "placement": "compact"});
        assert_eq!(
            from_stream_doc("s.json", &bad),
            Err(CeilingError::Field(
                "s.json".into(),
                "kernels.triad.gb_per_s"
            ))
        );
        assert!(is_bandwidth("triad_gb_per_s") && !is_bandwidth("mops"));
    }
}
