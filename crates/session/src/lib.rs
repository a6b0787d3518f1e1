//! The sweep session, one library call from settings to a report: typed
//! [`settings`] with their defaults, a new sweep or a resumed one made ready to run
//! ([`prepare`]), then the engine, point summaries, the analysis and the report
//! directory ([`run`]). `scalescope sweep`, `sweep --resume` and the tour ([`tour`])
//! all go through it; the binary only parses flags and prints.

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

pub mod ceilings {
    //! Where a sweep's bandwidth ceilings come from: the `mem stream --json`
    //! documents a user names, else every such document beside the results.

    use std::path::{Path, PathBuf};

    use scalescope_analysis::ceiling::{self, Ceiling};

    use crate::SessionError;

    fn read(p: &Path) -> Result<serde_json::Value, SessionError> {
        let path = p.display().to_string();
        let text = std::fs::read_to_string(p).map_err(|source| SessionError::Read {
            path: path.clone(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|e| SessionError::NotJson {
            path,
            detail: e.to_string(),
        })
    }

    fn of_file(p: &Path) -> Result<Ceiling, SessionError> {
        Ok(ceiling::from_stream_doc(
            &p.display().to_string(),
            &read(p)?,
        )?)
    }

    /// The ceilings in `given` (each must be a `mem stream --json` document, else an
    /// error naming it); with none given, every such document in the directory of
    /// `results` (other JSON files there are passed over).
    ///
    /// # Errors
    /// A given file that cannot be read or is not a `mem stream` document.
    pub fn discover(results: &Path, given: &[PathBuf]) -> Result<Vec<Ceiling>, SessionError> {
        if !given.is_empty() {
            return given.iter().map(|p| of_file(p)).collect();
        }
        let dir = results.parent().unwrap_or(Path::new("."));
        let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
        Ok(entries
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .filter_map(|p| of_file(&p).ok())
            .collect())
    }
}
