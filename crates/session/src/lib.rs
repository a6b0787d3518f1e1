//! The sweep session, one library call from settings to a report: typed
//! [`settings`] with their defaults, a new sweep or a resumed one made ready to run
//! ([`prepare`]), then the engine, point summaries, the analysis and the report
//! directory ([`run`]). `scalescope sweep`, `sweep --resume` and the tour ([`tour`])
//! all go through it; the binary only parses flags and prints.

use std::path::PathBuf;

use scalescope_model::setting::{AboutSetting, Setting};

pub mod launch;
pub mod names;
pub mod prepare;
pub mod run;
pub mod runtime;
pub mod settings;
pub mod submit;
pub mod tour;

/// Why a session could not be prepared or finished.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// A setting the session cannot use, typed; the command line names its flag.
    #[error("{setting}: {detail}")]
    Setting { setting: Setting, detail: String },
    /// A resume given settings its header fixes.
    #[error("{}: holds the plan and command of the sweep being finished; drop {}", dir.display(), list(given))]
    ResumeFixed { dir: PathBuf, given: Vec<Setting> },
    /// A resume given run settings other than those its first runs had.
    #[error("{}: was started with other run settings ({}); a resume runs the rest as the first runs ran, so drop them (or start a new results directory)", dir.display(), differing.iter().map(|(s, d)| format!("{s}: {d}")).collect::<Vec<_>>().join("; "))]
    ResumeDiffers {
        dir: PathBuf,
        differing: Vec<(Setting, String)>,
    },
    #[error("program `{0}` not found (not a file, and not on PATH)")]
    ProgramNotFound(String),
    #[error("resume: {0}")]
    Resume(String),
    #[error("locating the scalescope executable")]
    CurrentExe(#[source] std::io::Error),
    #[error(transparent)]
    Sweep(#[from] scalescope_sweep::SweepError),
    #[error(transparent)]
    Results(#[from] scalescope_model::ResultsError),
    #[error(transparent)]
    Workload(#[from] scalescope_workloads::WorkloadError),
    #[error(transparent)]
    Report(#[from] scalescope_report::html::WriteError),
    #[error("creating a scratch directory in {dir}")]
    Scratch {
        dir: String,
        #[source]
        source: std::io::Error,
    },
    #[error("reading {path}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    File(#[from] scalescope_files::FileError),
}

fn list(settings: &[Setting]) -> String {
    let words: Vec<String> = settings.iter().map(Setting::to_string).collect();
    words.join(", ")
}

impl AboutSetting for SessionError {
    fn setting(&self) -> Option<Setting> {
        match self {
            SessionError::Setting { setting, .. } => Some(setting.clone()),
            SessionError::ResumeFixed { given, .. } => given.first().cloned(),
            SessionError::ResumeDiffers { differing, .. } => {
                differing.first().map(|(s, _)| s.clone())
            }
            SessionError::Workload(e) => e.setting(),
            SessionError::Results(e) => e.setting(),
            _ => None,
        }
    }
}
