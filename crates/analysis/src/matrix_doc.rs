//! Hop inference on any matrix file: a `mem matrix --json` document (with every
//! pass and chase when it has them, so the noise gate can check the levels), read
//! again without measuring.

use crate::hops::{infer, HopInference, MatrixInput};

use scalescope_model::mem::{self, MatrixDocument, MemDocError, MATRIX_KIND};

/// Why a document cannot be analysed as a matrix.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MatrixDocError {
    /// Another kind, or a field of the wrong shape.
    #[error(transparent)]
    Doc(#[from] MemDocError),
    #[error("`matrix.{0}` is missing or not a square matrix of numbers")]
    Field(&'static str),
}

fn square<'a>(m: &'a [Vec<f64>], name: &'static str) -> Result<&'a [Vec<f64>], MatrixDocError> {
    if !m.is_empty() && m.iter().all(|r| r.len() == m.len()) {
        Ok(m)
    } else {
        Err(MatrixDocError::Field(name))
    }
}

/// (bandwidth, latency) hop inference of a `mem matrix --json` document.
///
/// # Errors
/// Another kind of document, a field of the wrong shape, or a matrix that is missing
/// or not square.
pub fn infer_doc(doc: &serde_json::Value) -> Result<(HopInference, HopInference), MatrixDocError> {
    let doc: MatrixDocument<serde::de::IgnoredAny> = mem::read(doc, MATRIX_KIND)?;
    infer_matrix(&doc)
}

/// (bandwidth, latency) hop inference of a matrix document already read (or just
/// measured: `mem matrix` runs the same inference `analyze matrix.json` runs later).
///
/// # Errors
/// A bandwidth or latency matrix that is missing or not square.
pub fn infer_matrix<H>(
    doc: &MatrixDocument<H>,
) -> Result<(HopInference, HopInference), MatrixDocError> {
    let m = &doc.matrix;
    let bw = square(&m.bandwidth_gb_per_s, "bandwidth_gb_per_s")?;
    let lat = square(&m.latency_ns, "latency_ns")?;
    let slit = (!m.slit.is_empty()).then_some(m.slit.as_slice());
    let hypervisor = doc
        .virtualization
        .as_ref()
        .and_then(|v| v.hypervisor.as_deref());
    let caveat = scalescope_topo::virt::emulated_caveat(hypervisor);
    let input = |values, samples, higher_is_closer| MatrixInput {
        values,
        samples,
        higher_is_closer,
        slit,
        rel_gap: 0.15,
        timing_caveat: caveat.as_deref(),
    };
    Ok((
        infer(&input(bw, &m.bandwidth_samples, true)),
        infer(&input(lat, &m.latency_samples, false)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_without_repeats_claims_nothing_beyond_slit() {
        let doc = serde_json::json!({"kind": "scalescope.mem-matrix", "matrix": {
            "bandwidth_gb_per_s": [[20.0, 9.0], [8.0, 21.0]],
            "latency_ns": [[90.0, 150.0], [160.0, 91.0]],
            "slit": [[10, 21], [21, 10]]}});
        let (bw, lat) = infer_doc(&doc).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(bw.noise.levels_from, "slit");
        assert_eq!((bw.levels.len(), lat.levels.len()), (2, 2));
        let bad = serde_json::json!({"kind": "scalescope.mem-matrix", "matrix": {"bandwidth_gb_per_s": [[1.0, 2.0]]}});
        assert_eq!(
            infer_doc(&bad).err(),
            Some(MatrixDocError::Field("bandwidth_gb_per_s"))
        );
        assert!(infer_doc(&serde_json::json!({"kind": "x"})).is_err());
    }

    /// A document measured under emulation: even well-separated repeats give SLIT's
    /// levels, and the note says the timings were not used.
    #[test]
    fn an_emulated_document_claims_nothing_beyond_slit() {
        let doc = serde_json::json!({"kind": "scalescope.mem-matrix",
            "virtualization": {"virtual_machine": true, "hypervisor": "QEMU (TCG emulation)", "evidence": []},
            "matrix": {
            "bandwidth_gb_per_s": [[20.0, 9.0], [4.0, 21.0]],
            "bandwidth_samples": [[[20.0, 19.9], [9.0, 8.9]], [[4.0, 3.9], [21.0, 20.9]]],
            "latency_ns": [[90.0, 150.0], [300.0, 91.0]],
            "latency_samples": [[[90.0, 90.5], [150.0, 151.0]], [[300.0, 301.0], [91.0, 91.5]]],
            "slit": [[10, 21], [21, 10]]}});
        let (bw, lat) = infer_doc(&doc).unwrap_or_else(|e| panic!("{e}"));
        for h in [&bw, &lat] {
            assert_eq!((h.levels.len(), h.noise.levels_from.as_str()), (2, "slit"));
            assert!(h.disagreements.is_empty(), "{:?}", h.disagreements);
            let note = h.noise.note.as_deref().unwrap_or("");
            assert!(note.contains("under emulation"), "{note}");
        }
    }
}
