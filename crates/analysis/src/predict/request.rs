//! What `scalescope predict` asks for, decided on its loaded files
//! (`scalescope_model::prediction_files`): the basis chosen, the calibration
//! sweep fitted with its ceilings, the target's bandwidth from documents measured
//! there or stated, and the prediction.

use scalescope_model::prediction_files::PredictInputs;
use scalescope_model::setting::{AboutSetting, Setting};

use super::{calibrate, CalibrateOptions, Prediction, TargetBandwidth};
use crate::{ceiling, Basis};

/// Why a prediction could not be made from loaded files.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// A setting given (or missing) that cannot be used.
    #[error("{setting}: {detail}")]
    Setting { setting: Setting, detail: String },
    #[error(transparent)]
    Ceiling(#[from] ceiling::CeilingError),
    /// The calibration sweep cannot calibrate the model.
    #[error("calibrating the model on {from}: {detail}")]
    Calibrate { from: String, detail: String },
}

impl AboutSetting for RequestError {
    fn setting(&self) -> Option<Setting> {
        match self {
            RequestError::Setting { setting, .. } => Some(setting.clone()),
            _ => None,
        }
    }
}

fn bandwidth(
    inputs: &PredictInputs,
    node_gbps: Option<f64>,
) -> Result<TargetBandwidth, RequestError> {
    if let Some(g) = node_gbps {
        if !(g.is_finite() && g > 0.0) {
            return Err(RequestError::Setting {
                setting: Setting::NodeGbps,
                detail: format!("{g}: expected a positive bandwidth in GB/s"),
            });
        }
        return Ok(TargetBandwidth {
            node_gbps: Some(g),
            source: Some("stated, not measured".into()),
        });
    }
    super::target_bandwidth(&inputs.target, &inputs.target_documents).map_err(|e| {
        RequestError::Setting {
            setting: Setting::Ceilings,
            detail: e.to_string(),
        }
    })
}

/// The prediction for `inputs`, on `basis` (None: the rule's), with the target's
/// bandwidth per node stated (`node_gbps`) or read from its documents.
///
/// # Errors
/// A basis the sweep does not have, a sweep that cannot calibrate the model,
/// ceilings that contradict each other, a bandwidth that is not positive.
pub fn prediction(
    inputs: &PredictInputs,
    basis: Option<&str>,
    node_gbps: Option<f64>,
) -> Result<Prediction, RequestError> {
    let (h, records) = (&inputs.header, &inputs.records);
    let basis = Basis::parse_known(basis, h, records).map_err(|e| RequestError::Setting {
        setting: Setting::Basis,
        detail: e.strip_prefix("basis ").unwrap_or(&e).to_string(),
    })?;
    let ceilings = ceiling::from_documents(&inputs.documents, inputs.documents_named)?;
    let cal =
        calibrate(h, records, &basis, &ceilings, &CalibrateOptions::default()).map_err(|e| {
            RequestError::Calibrate {
                from: inputs.from.display().to_string(),
                detail: e.to_string(),
            }
        })?;
    let bw = bandwidth(inputs, node_gbps)?;
    Ok(super::predict(&cal, &inputs.target, &bw))
}
