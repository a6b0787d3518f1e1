//! Hop inference on any matrix file: a `mem matrix --json` document (with every
//! pass and chase when it has them, so the noise gate can check the levels), read
//! again without measuring.

use crate::hops::{infer, HopInference, MatrixInput};

/// Why a document cannot be analysed as a matrix.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MatrixDocError {
    #[error("not a `scalescope.mem-matrix` document (kind {0})")]
    Kind(String),
    #[error("`matrix.{0}` is missing or not a square matrix of numbers")]
    Field(&'static str),
}

fn square(v: &serde_json::Value, name: &'static str) -> Result<Vec<Vec<f64>>, MatrixDocError> {
    let rows: Option<Vec<Vec<f64>>> = v.as_array().map(|rows| {
        rows.iter()
            .filter_map(|r| {
                r.as_array()
                    .map(|c| c.iter().filter_map(|x| x.as_f64()).collect())
            })
            .collect()
    });
    match rows {
        Some(m) if !m.is_empty() && m.iter().all(|r| r.len() == m.len()) => Ok(m),
        _ => Err(MatrixDocError::Field(name)),
    }
}

fn samples(v: &serde_json::Value) -> Vec<Vec<Vec<f64>>> {
    v.as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    r.as_array()
                        .map(|cells| {
                            cells
                                .iter()
                                .map(|c| {
                                    c.as_array()
                                        .map(|s| s.iter().filter_map(|x| x.as_f64()).collect())
                                        .unwrap_or_default()
                                })
                                .collect()
                        })
                        .unwrap_or_default()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// (bandwidth, latency) hop inference of a `mem matrix --json` document.
///
/// # Errors
/// Another kind of document, or a matrix that is missing or not square.
pub fn infer_doc(doc: &serde_json::Value) -> Result<(HopInference, HopInference), MatrixDocError> {
    let kind = doc["kind"].as_str().unwrap_or("none");
    if kind != "scalescope.mem-matrix" {
        return Err(MatrixDocError::Kind(kind.into()));
    }
    let m = &doc["matrix"];
    let bw = square(&m["bandwidth_gb_per_s"], "bandwidth_gb_per_s")?;
    let lat = square(&m["latency_ns"], "latency_ns")?;
    let slit: Vec<Vec<u32>> = m["slit"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter_map(|r| {
                    r.as_array().map(|c| {
                        c.iter()
                            .filter_map(|x| x.as_u64().map(|v| v as u32))
                            .collect()
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let slit = (!slit.is_empty()).then_some(slit.as_slice());
    let (bs, ls) = (
        samples(&m["bandwidth_samples"]),
        samples(&m["latency_samples"]),
    );
    let caveat =
        scalescope_topo::virt::emulated_caveat(doc["virtualization"]["hypervisor"].as_str());
    let input = |values, samples, higher_is_closer| MatrixInput {
        values,
        samples,
        higher_is_closer,
        slit,
        rel_gap: 0.15,
        timing_caveat: caveat.as_deref(),
    };
    Ok((
        infer(&input(&bw, &bs, true)),
        infer(&input(&lat, &ls, false)),
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
