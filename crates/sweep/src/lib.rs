//! Sweeps: a program or built-in workload run across thread counts x placements x
//! memory policies with repetitions; each run started pinned, watched for where its
//! threads really run, and appended to a results file the moment it ends; then
//! statistics per point.
//!
//! The engine is independent of how a run is executed ([`exec::Executor`]) and of
//! the clock, so its bookkeeping (order, resume, failures, statistics) is tested
//! with a fake executor; the process executor is tested with real programs.

pub mod engine;
pub mod exec;
pub mod launch;
pub mod metric;
pub mod monitor;
pub mod output;
pub mod reap;
pub mod submit;

use scalescope_model::ResultsError;

use std::path::PathBuf;

/// Why a sweep could not be set up or continued.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error("{field} `{value}`: {detail}")]
    BadSetting {
        field: &'static str,
        value: String,
        detail: String,
    },
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error("{}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("point {point}: {detail}")]
    Placement { point: String, detail: String },
    #[error("{command}: {detail}")]
    Scheduler { command: String, detail: String },
}
