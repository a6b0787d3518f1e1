//! The shared model every stage after topology and placement reads: results as
//! data, what a sweep planned ([`plan`]), the header that records the
//! machine and the command ([`store::Header`], [`fingerprint`]), one record per run
//! ([`store::RunRecord`], [`check`], [`evidence`] with its series files), the
//! append-only `results.jsonl` that holds them ([`store::ResultsStore`],
//! [`store::read_results`]), the thread-list grammar ([`threads`]), the settings
//! an error can be about ([`setting`]) and the numbers settings take ([`value`]),
//! the report and verification verdict of a built-in workload ([`workload`]) with
//! its typed detail ([`detail`]), a launched run's ranks and their probes
//! ([`launch`]), and the memory measurements' documents ([`mem`]).
//!
//! Everything downstream of a sweep (analysis, reports, comparisons) reads these
//! types; nothing here starts a process, so those crates never depend on the one that
//! does.

pub mod check;
mod csv_lines;
pub mod detail;
pub mod evidence;
pub mod fingerprint;
pub mod import;
pub mod launch;
pub mod load;
pub mod mem;
pub mod plan;
pub mod prediction_files;
pub mod read;
pub mod setting;
pub mod store;
pub mod threads;
pub mod tidy;
pub mod value;
pub mod workload;

use std::path::PathBuf;

/// Why results could not be planned, written or read.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("{setting} `{value}`: {detail}")]
    BadList {
        setting: setting::Setting,
        value: String,
        detail: String,
    },
    #[error("{}: already holds results; resume that sweep, or choose another output directory", path.display())]
    ResultsExist { path: PathBuf },
    #[error("{}: in use by a running scalescope{}; wait for it to finish, or choose another output directory", dir.display(), pid.map(|p| format!(" (PID {p})")).unwrap_or_default())]
    InUse { dir: PathBuf, pid: Option<u32> },
    #[error("{}: no results.jsonl here, so there is nothing to resume; start the sweep instead of resuming it", dir.display())]
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
