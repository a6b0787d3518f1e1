//! The sweep session, one library call from settings to a report: typed
//! [`settings`] with their defaults, a new sweep or a resumed one made ready to run
//! ([`prepare`]), then the engine, point summaries, the analysis and the report
//! directory ([`run`]). `scalescope sweep`, `sweep --resume` and the tour ([`tour`])
//! all go through it; the binary only parses flags and prints.

pub mod ceilings;
pub mod mpi;
pub mod names;
pub mod predict;
pub mod prepare;
pub mod run;
pub mod settings;
pub mod tour;

/// Why a session could not be prepared or finished.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("{field}: {detail}")]
    Setting { field: &'static str, detail: String },
    #[error("program `{0}` not found (not a file, and not on PATH)")]
    ProgramNotFound(String),
    #[error("resume: {0}")]
    Resume(String),
    #[error("locating the scalescope executable")]
    CurrentExe(#[source] std::io::Error),
    #[error(transparent)]
    Sweep(#[from] scalescope_sweep::SweepError),
    #[error(transparent)]
    Results(#[from] scalescope_results::ResultsError),
    #[error(transparent)]
    Workload(#[from] scalescope_workloads::WorkloadError),
    #[error(transparent)]
    Report(#[from] scalescope_report::html::WriteError),
    #[error("reading {path}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not JSON: {detail}")]
    NotJson { path: String, detail: String },
    #[error(transparent)]
    Ceiling(#[from] scalescope_analysis::ceiling::CeilingError),
    #[error("{0}")]
    Predict(String),
}
