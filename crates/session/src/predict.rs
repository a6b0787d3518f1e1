//! What `scalescope predict` asks for, as one library call: the calibration sweep
//! read and fitted (with the `mem stream` ceilings beside it or named), the target
//! machine loaded (`--to` decides its kind), its bandwidth read from documents
//! measured there or stated, and the prediction.

use scalescope_model::setting::Setting;
use std::path::{Path, PathBuf};

use scalescope_analysis::predict::{self, CalibrateOptions, Prediction, TargetBandwidth};
use scalescope_analysis::{ceiling, Basis};
use scalescope_model::store::read_results;
use scalescope_topo::{Source, Topology};

use crate::SessionError;

/// A prediction request.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The calibration's results.jsonl.
    pub from: PathBuf,
    /// `--to MACHINE`, else the source named otherwise (None: none named).
    pub to: Option<String>,
    pub source: Option<Source>,
    /// Documents measured on the target (`mem stream` or `mem matrix`).
    pub ceilings: Vec<PathBuf>,
    /// The target's bandwidth per node, stated.
    pub node_gbps: Option<f64>,
    /// `mem stream` documents of the calibration machine (default: beside `from`).
    pub from_ceilings: Vec<PathBuf>,
    pub basis: Option<String>,
}

fn failed(s: impl std::fmt::Display) -> SessionError {
    SessionError::Predict(s.to_string())
}

/// `--to MACHINE`: a directory is a recorded sysfs tree, an existing file an hwloc
/// XML export, anything else a synthetic spec.
pub fn target_source(to: &str) -> Source {
    let p = Path::new(to);
    if p.is_dir() {
        Source::SysfsRoot(p.to_path_buf())
    } else if p.is_file() {
        Source::HwlocXml(p.to_path_buf())
    } else {
        Source::Synthetic(to.to_string())
    }
}

fn target(r: &Request) -> Result<Topology, SessionError> {
    let (source, named) = match (&r.to, &r.source) {
        (Some(to), _) => (target_source(to), format!("`{to}`")),
        (None, Some(s)) => (s.clone(), String::new()),
        (None, None) => {
            return Err(SessionError::Setting {
                setting: Setting::PredictTarget,
                detail: "name the target machine (a synthetic spec, a recorded sysfs tree or an hwloc XML file)".into(),
            })
        }
    };
    source.load().map_err(|e| SessionError::Setting {
        setting: Setting::PredictTarget,
        detail: format!("loading the target machine {named}: {e}"),
    })
}

fn read_doc(p: &Path) -> Result<(String, serde_json::Value), SessionError> {
    Ok((p.display().to_string(), scalescope_model::load::json(p)?))
}

fn bandwidth(r: &Request, topo: &Topology) -> Result<TargetBandwidth, SessionError> {
    if let Some(g) = r.node_gbps {
        if !(g.is_finite() && g > 0.0) {
            return Err(SessionError::Setting {
                setting: Setting::NodeGbps,
                detail: format!("{g}: expected a positive bandwidth in GB/s"),
            });
        }
        return Ok(TargetBandwidth {
            node_gbps: Some(g),
            source: Some("stated, not measured".into()),
        });
    }
    let docs = r
        .ceilings
        .iter()
        .map(|p| read_doc(p))
        .collect::<Result<Vec<_>, _>>()?;
    predict::target_bandwidth(topo, &docs).map_err(|e| SessionError::Setting {
        setting: Setting::Ceilings,
        detail: e.to_string(),
    })
}

/// The prediction `r` asks for.
///
/// # Errors
/// Unreadable results or documents, a sweep that cannot calibrate the model, a
/// target that cannot be loaded, a bandwidth that is not positive.
pub fn prediction(r: &Request) -> Result<Prediction, SessionError> {
    let (h, records, _) = read_results(&r.from)?;
    let basis = Basis::parse_known(r.basis.as_deref(), &h, &records).map_err(|e| {
        SessionError::Setting {
            setting: Setting::Basis,
            detail: e.strip_prefix("basis ").unwrap_or(&e).to_string(),
        }
    })?;
    let docs = scalescope_model::load::documents(&r.from, &r.from_ceilings)?;
    let ceilings = ceiling::from_documents(&docs, !r.from_ceilings.is_empty())?;
    let cal = predict::calibrate(
        &h,
        &records,
        &basis,
        &ceilings,
        &CalibrateOptions::default(),
    )
    .map_err(|e| {
        failed(format!(
            "calibrating the model on {}: {e}",
            r.from.display()
        ))
    })?;
    let topo = target(r)?;
    let bw = bandwidth(r, &topo)?;
    Ok(predict::predict(&cal, &topo, &bw))
}
