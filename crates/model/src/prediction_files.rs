//! The files `scalescope predict` reads, loaded: the calibration sweep's results,
//! the JSON documents beside it or named (its `mem stream` ceilings), the target
//! machine's record (`--to` decides its kind) and documents measured on the
//! target. What they mean and the prediction itself are decided downstream
//! (`analysis::predict::request`).

use std::path::{Path, PathBuf};

use scalescope_topo::{Source, Topology};
use serde_json::Value;

use crate::load::{self, Document, LoadError};
use crate::setting::{AboutSetting, Setting};
use crate::store::{read_results_checked, Header, RunRecord, SetAside};
use crate::ResultsError;

/// The files a prediction is asked to read.
#[derive(Debug, Clone, Default)]
pub struct PredictFiles {
    /// The calibration's results.jsonl.
    pub from: PathBuf,
    /// `--to MACHINE`, else the source named otherwise (None: none named).
    pub to: Option<String>,
    pub source: Option<Source>,
    /// Documents measured on the target (`mem stream` or `mem matrix`).
    pub ceilings: Vec<PathBuf>,
    /// `mem stream` documents of the calibration machine (default: beside `from`).
    pub from_ceilings: Vec<PathBuf>,
}

/// Those files, loaded.
#[derive(Debug, Clone)]
pub struct PredictInputs {
    pub from: PathBuf,
    pub header: Header,
    pub records: Vec<RunRecord>,
    /// The results file's lines set aside (a crash's torn line, a run that
    /// cannot be read), for the caller to warn of as `analyze` does.
    pub set_aside: Vec<SetAside>,
    /// The calibration machine's documents, and whether they were named (else
    /// found beside the results).
    pub documents: Vec<Document>,
    pub documents_named: bool,
    pub target: Topology,
    /// Documents measured on the target: (path, document).
    pub target_documents: Vec<(String, Value)>,
}

/// Why the files could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum PredictFilesError {
    #[error("{setting}: {detail}")]
    Setting { setting: Setting, detail: String },
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error(transparent)]
    Load(#[from] LoadError),
}

impl AboutSetting for PredictFilesError {
    fn setting(&self) -> Option<Setting> {
        match self {
            PredictFilesError::Setting { setting, .. } => Some(setting.clone()),
            PredictFilesError::Results(e) => e.setting(),
            PredictFilesError::Load(_) => None,
        }
    }
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

fn target(f: &PredictFiles) -> Result<Topology, PredictFilesError> {
    let (source, named) = match (&f.to, &f.source) {
        (Some(to), _) => (target_source(to), format!("`{to}`")),
        (None, Some(s)) => (s.clone(), String::new()),
        (None, None) => {
            return Err(PredictFilesError::Setting {
                setting: Setting::PredictTarget,
                detail: "name the target machine (a synthetic spec, a recorded sysfs tree or an hwloc XML file)".into(),
            })
        }
    };
    source.load().map_err(|e| PredictFilesError::Setting {
        setting: Setting::PredictTarget,
        detail: format!("loading the target machine {named}: {e}"),
    })
}

/// Loads every file `f` names.
///
/// # Errors
/// Unreadable results or documents, a target that cannot be loaded.
pub fn load(f: &PredictFiles) -> Result<PredictInputs, PredictFilesError> {
    let read = read_results_checked(&f.from)?;
    let (header, records, set_aside) = (read.header, read.runs, read.set_aside);
    let documents = load::documents(&f.from, &f.from_ceilings)?;
    let target = target(f)?;
    let target_documents = f
        .ceilings
        .iter()
        .map(|p| Ok((p.display().to_string(), load::json(p)?)))
        .collect::<Result<Vec<_>, LoadError>>()?;
    Ok(PredictInputs {
        from: f.from.clone(),
        header,
        records,
        set_aside,
        documents,
        documents_named: !f.from_ceilings.is_empty(),
        target,
        target_documents,
    })
}
