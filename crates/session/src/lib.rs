//! The sweep session, one library call from settings to a report: typed
//! [`settings`] with their defaults, a new sweep or a resumed one made ready to run
//! ([`prepare`]), then the engine, point summaries, the analysis and the report
//! directory ([`run`]). `scalescope sweep`, `sweep --resume` and the tour ([`tour`])
//! all go through it; the binary only parses flags and prints.

pub mod mpi;
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
    #[error("{path}: not JSON: {detail}")]
    NotJson { path: String, detail: String },
    #[error(transparent)]
    Ceiling(#[from] scalescope_analysis::ceiling::CeilingError),
    #[error("{0}")]
    Predict(String),
}

/// A JSON document a user names (`--ceilings`, `mem ... --json` output), read
/// through the bounded input layer: a regular file of at most
/// [`scalescope_files::Kind::JSON`].
///
/// # Errors
/// [`SessionError::File`] (missing, a FIFO, a device, too large) or
/// [`SessionError::NotJson`].
pub fn read_json(p: &std::path::Path) -> Result<serde_json::Value, SessionError> {
    let text = scalescope_files::read_text(p, scalescope_files::Kind::JSON)?;
    serde_json::from_str(&text).map_err(|e| SessionError::NotJson {
        path: p.display().to_string(),
        detail: e.to_string(),
    })
}

pub mod ceilings {
    //! Where a sweep's bandwidth ceilings come from: the `mem stream --json`
    //! documents a user names, else every such document beside the results.

    use std::path::{Path, PathBuf};

    use scalescope_analysis::ceiling::{self, Ceiling};

    use crate::SessionError;

    fn of_file(p: &Path) -> Result<Ceiling, SessionError> {
        Ok(ceiling::from_stream_doc(
            &p.display().to_string(),
            &crate::read_json(p)?,
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

pub mod names {
    //! Result directory names people can read and sort: `sweep-2026-11-22T10-31-05`
    //! (UTC), with `-2`, `-3`, ... when a directory of that name already exists, so two
    //! sweeps started in the same second never share one.

    use std::path::{Path, PathBuf};

    /// `YYYY-MM-DDTHH-MM-SS` (UTC) for seconds since the Unix epoch.
    pub fn utc_stamp(unix_secs: f64) -> String {
        let secs = unix_secs.max(0.0) as u64;
        let (days, rem) = (secs / 86_400, secs % 86_400);
        let (y, m, d) = civil_from_days(days);
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}-{:02}-{:02}",
            rem / 3600,
            rem % 3600 / 60,
            rem % 60
        )
    }

    /// Year, month, day of a day count since 1970-01-01 (Howard Hinnant's
    /// `civil_from_days`, proleptic Gregorian calendar).
    fn civil_from_days(days: u64) -> (u64, u64, u64) {
        let z = days + 719_468;
        let era = z / 146_097;
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = doy - (153 * mp + 2) / 5 + 1;
        let m = if mp < 10 { mp + 3 } else { mp - 9 };
        let y = yoe + era * 400 + u64::from(m <= 2);
        (y, m, d)
    }

    /// `parent/KIND-STAMP`, or the same with the first free `-N` suffix.
    pub fn fresh_dir(parent: &Path, kind: &str, unix_secs: f64) -> PathBuf {
        let base = format!("{kind}-{}", utc_stamp(unix_secs));
        let first = parent.join(&base);
        if !first.exists() {
            return first;
        }
        (2..)
            .map(|n| parent.join(format!("{base}-{n}")))
            .find(|p| !p.exists())
            .unwrap_or(first)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn stamps_are_utc_calendar_times() {
            assert_eq!(utc_stamp(0.0), "1970-01-01T00-00-00");
            // 2000-02-29 (a leap day of a century leap year) 12:34:56.
            assert_eq!(utc_stamp(951_827_696.0), "2000-02-29T12-34-56");
            assert_eq!(utc_stamp(1_795_392_952.9), "2026-11-23T00-15-52");
        }

        #[test]
        fn a_taken_name_gets_the_next_suffix() {
            let tmp = tempfile::tempdir().unwrap();
            let a = fresh_dir(tmp.path(), "sweep", 0.0);
            assert!(a.ends_with("sweep-1970-01-01T00-00-00"));
            std::fs::create_dir(&a).unwrap();
            let b = fresh_dir(tmp.path(), "sweep", 0.0);
            assert!(b.ends_with("sweep-1970-01-01T00-00-00-2"));
            std::fs::create_dir(&b).unwrap();
            assert!(fresh_dir(tmp.path(), "sweep", 0.0).ends_with("sweep-1970-01-01T00-00-00-3"));
        }
    }
}
