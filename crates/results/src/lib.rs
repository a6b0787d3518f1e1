//! Results as data: what a sweep planned ([`plan`]), the header that records the
//! machine and the command ([`store::Header`], [`fingerprint`]), one record per run
//! ([`store::RunRecord`], [`check`], [`evidence`] with its series files), the
//! append-only `results.jsonl` that holds them ([`store::ResultsStore`],
//! [`store::read_results`]), the report and verification verdict of a built-in
//! workload ([`workload`]), and the memory measurements' documents ([`mem`]).
//!
//! Everything downstream of a sweep (analysis, reports, comparisons) reads these
//! types; nothing here starts a process, so those crates never depend on the one that
//! does.

pub mod evidence;
pub mod fingerprint;
pub mod import;
pub mod mem;
pub mod plan;
pub mod ranks;
pub mod read;
pub mod store;
pub mod workload;

use std::path::PathBuf;

/// Why results could not be planned, written or read.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("{field} `{value}`: {detail}")]
    BadList {
        field: &'static str,
        value: String,
        detail: String,
    },
    #[error("{}: already holds results; resume that sweep, or choose another output directory", path.display())]
    ResultsExist { path: PathBuf },
    #[error("{}: in use by a running scalescope{}; wait for it to finish, or choose another output directory", dir.display(), pid.map(|p| format!(" (PID {p})")).unwrap_or_default())]
    InUse { dir: PathBuf, pid: Option<u32> },
    #[error("{}: no results.jsonl here, so there is nothing to resume; start the sweep without --resume", dir.display())]
    NothingToResume { dir: PathBuf },
    #[error("{}: no complete header record (the sweep ended while writing its first line), so there is nothing to resume; start the sweep again with the same output directory", path.display())]
    NoHeader { path: PathBuf },
    #[error("{}:{line}: {detail}", path.display())]
    Malformed {
        path: PathBuf,
        line: usize,
        detail: String,
    },
    #[error(transparent)]
    File(#[from] scalescope_files::FileError),
    #[error("{}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

pub mod check {
    //! What the placement monitor saw over one run's life, as recorded in each run record.

    use serde::{Deserialize, Serialize};

    use scalescope_topo::CpuSet;

    /// One thread seen outside the plan.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Violation {
        pub pid: u32,
        pub tid: u32,
        /// CPU it was last seen running on.
        pub cpu: Option<u32>,
        /// CPUs it was allowed to run on.
        pub allowed: CpuSet,
    }

    /// What sampling saw over a run's life.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    pub struct PlacementCheck {
        pub samples: usize,
        /// Most threads alive at once (all processes of the run).
        pub max_threads: usize,
        /// Threads the plan expects (workers, plus the main thread for built-ins).
        pub planned_threads: usize,
        /// Every sampled thread ran, and was only allowed to run, inside the plan.
        pub inside_plan: bool,
        pub more_threads_than_planned: bool,
        /// Distinct offending threads (at most 16 kept).
        pub violations: Vec<Violation>,
    }
}
