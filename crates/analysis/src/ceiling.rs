//! Measured memory-bandwidth ceilings (`mem stream --json` documents) and the
//! diagnosis they allow: a curve whose figure of merit is a bandwidth (GB/s) and
//! that reaches the ceiling measured on the same number of NUMA nodes is bound by
//! memory bandwidth there, per node (or per socket); adding a node raises the
//! ceiling. A read-only figure is judged against the read ceiling, every other
//! one against triad. Without a measured ceiling nothing is said about bandwidth.

use serde::{Deserialize, Serialize};

use scalescope_model::mem::{self, MemDocError, StreamDocument, STREAM_KIND};
use scalescope_place::Strategy;
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
    /// The read ceiling (`mem stream`'s read-only kernel): the higher of its best
    /// iteration and its sustained block; None where the document has no `read`
    /// (mem-stream schema 1).
    #[serde(default)]
    pub read_gb_per_s: Option<f64>,
}

impl Ceiling {
    /// The ceiling a figure named `metric` is judged against, and that kernel's
    /// name: the read ceiling for a read-only figure ([`is_read_only`]) where one
    /// was measured, else triad.
    pub fn for_metric(&self, metric: &str) -> (f64, &'static str) {
        match self.read_gb_per_s {
            Some(read) if is_read_only(metric) => (read, "read"),
            _ => (self.gb_per_s, "triad"),
        }
    }
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

/// The ceilings in loaded documents: when the user named them (`named`), each
/// must be a `mem stream --json` document (else the error names it); documents
/// found beside the results that are of another kind are passed over.
///
/// # Errors
/// A named document that is not a `mem stream` document.
pub fn from_documents(
    docs: &[scalescope_model::load::Document],
    named: bool,
) -> Result<Vec<Ceiling>, CeilingError> {
    let each = docs
        .iter()
        .map(|d| from_stream_doc(&d.path.display().to_string(), &d.value));
    if named {
        each.collect()
    } else {
        Ok(each.filter_map(Result::ok).collect())
    }
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
        read_gb_per_s: doc.kernels.get("read").and_then(|k| {
            let sustained = k.sustained.map_or(0.0, |s| s.gb_per_s);
            Some(k.gb_per_s.max(sustained)).filter(|v| *v > 0.0)
        }),
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

/// Whether a bandwidth figure counts bytes read only, by its name: one with the
/// word `read` or `scanned` in it (`read_gb_per_s`, TPC-H's `scanned_gb_per_s`;
/// words split at anything but letters and digits, so `thread_gb_per_s` is not)
/// and none of `write`, `copy` or `triad` (`read_write_gb_per_s` moves both).
/// Such a figure is judged against the read ceiling, every other one against triad.
pub fn is_read_only(metric: &str) -> bool {
    let words: Vec<String> = metric
        .split(|c: char| !c.is_ascii_alphanumeric())
        .map(str::to_ascii_lowercase)
        .collect();
    let has = |w: &str| words.iter().any(|x| x == w);
    is_bandwidth(metric)
        && (has("read") || has("scanned"))
        && !(has("write") || has("copy") || has("triad"))
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
        // Schema 1 had no read kernel: no read ceiling, and every figure is judged
        // against triad.
        assert_eq!(c.read_gb_per_s, None);
        assert_eq!(c.for_metric("scanned_gb_per_s"), (41.5, "triad"));
    }

    #[test]
    fn the_read_ceiling_is_the_faster_of_the_reads_two_measures() {
        let doc = |sustained: f64| {
            serde_json::json!({"kind": "scalescope.mem-stream", "threads": 1,
                "placement": "compact", "kernels": {"triad": {"gb_per_s": 30.0},
                "read": {"gb_per_s": 33.0, "sustained": {"sweeps": 9, "secs": 1.0, "gb_per_s": sustained}}}})
        };
        let c = from_stream_doc("s.json", &doc(36.5)).unwrap();
        assert_eq!(c.read_gb_per_s, Some(36.5));
        assert_eq!(
            from_stream_doc("s.json", &doc(31.0)).unwrap().read_gb_per_s,
            Some(33.0)
        );
        // Read-only figures by name take the read ceiling; the rest take triad.
        assert_eq!(c.for_metric("scanned_gb_per_s"), (36.5, "read"));
        assert_eq!(c.for_metric("read_sustained_gb_per_s"), (36.5, "read"));
        assert_eq!(c.for_metric("triad_gb_per_s"), (30.0, "triad"));
        assert_eq!(c.for_metric("copy_gb_per_s"), (30.0, "triad"));
        assert!(!is_read_only("reads_per_s"));
        // Words, not substrings: a per-thread figure is not a read-only one.
        assert!(!is_read_only("per_thread_gb_per_s") && !is_read_only("spread_gb_per_s"));
        assert!(is_read_only("q6.read.gbps"));
        assert!(!is_read_only("read_write_gb_per_s") && !is_read_only("q.read.copy.gbps"));
    }
}
