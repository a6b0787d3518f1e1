//! The results directory: `results.jsonl` (a header record, then one record per run,
//! each appended, flushed and synced as the run ends) and the logs. Results survive a
//! crash of the program under test, of scalescope, or of the machine: at most the
//! line being written is lost, and a torn last line is dropped on resume.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use scalescope_topo::CpuSet;

use crate::check::PlacementCheck;
use crate::plan::{Plan, Point};
use crate::ResultsError;

/// Version of the results format (docs/json.md). Bump on incompatible changes.
/// 4: launched sweeps' node axis (`nodes` in a point), per-node evidence
/// (`node_evidence`) and the launcher's start-up (`ranks.launch_secs`).
pub const RESULTS_SCHEMA_VERSION: u32 = 4;
pub const RESULTS_FILE: &str = "results.jsonl";

/// What is being swept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandSpec {
    /// `external` or `workload`.
    pub kind: String,
    /// Program and arguments as given (before `{threads}`/`{cpus}`/`{places}` substitution).
    pub argv: Vec<String>,
    pub shell: bool,
    pub workload: Option<String>,
    pub params: BTreeMap<String, String>,
    pub env: Vec<(String, String)>,
    pub metrics: Vec<MetricSpec>,
}

/// A figure of merit: `NAME=REGEX[:higher|lower]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetricSpec {
    pub name: String,
    /// `None` for metrics a built-in workload reports itself.
    pub regex: Option<String>,
    pub higher_is_better: bool,
}

/// The first record: everything needed to analyse the runs on another machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub schema: String,
    pub schema_version: u32,
    pub scalescope_version: String,
    pub started_unix_secs: f64,
    pub command: CommandSpec,
    pub plan: Plan,
    pub timeout_secs: Option<f64>,
    /// Seconds between SIGTERM and SIGKILL when a run is stopped (absent in files
    /// written before it was recorded: those used the 2 s default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kill_grace_secs: Option<f64>,
    pub machine: crate::fingerprint::Fingerprint,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Exit status 0; for a workload, verification passed, or was unavailable (the
    /// reason is in `error`, exit status 5).
    Ok,
    /// Non-zero exit status, or a workload whose verification failed (exit status 4).
    Failed,
    /// Killed by a signal it did not get from scalescope.
    Signaled,
    /// Killed by scalescope after `--timeout`.
    Timeout,
    /// Could not be started.
    Error,
}

impl RunStatus {
    /// The status as people read it (the JSON keeps the lowercase names).
    pub fn label(self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Failed => "failed",
            RunStatus::Signaled => "killed by a signal",
            RunStatus::Timeout => "timeout",
            RunStatus::Error => "could not start",
        }
    }
}

/// One run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    #[serde(flatten)]
    pub point: Point,
    pub rep: usize,
    pub warmup: bool,
    /// CPU set of each planned thread.
    pub thread_cpus: Vec<CpuSet>,
    pub started_unix_secs: f64,
    pub wall_secs: f64,
    pub user_secs: Option<f64>,
    pub sys_secs: Option<f64>,
    pub max_rss_bytes: Option<u64>,
    pub status: RunStatus,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub error: Option<String>,
    pub metrics: BTreeMap<String, f64>,
    pub placement_check: Option<PlacementCheck>,
    /// What the sampler saw (absent in older files and when sampling was off).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::evidence::deserialize_evidence"
    )]
    pub evidence: Option<Box<crate::evidence::RunEvidence>>,
    /// A built-in workload's set-up and verification seconds, from its report
    /// (absent for external programs and in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<crate::workload::SetupCosts>,
    /// A launched run's launcher, nodes, ranks and where each rank was (absent for
    /// runs started directly and in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<crate::launch::RunRanks>,
    /// A launched run's evidence from every node it ran on, host by host (absent
    /// for runs started directly, with sampling off, and in older files).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "crate::evidence::deserialize_node_evidence"
    )]
    pub node_evidence: Vec<crate::evidence::NodeEvidence>,
    pub stdout_log: Option<String>,
    pub stderr_log: Option<String>,
}

impl RunRecord {
    /// The run's time as its figure: the wall time, less the launcher's own
    /// start-up and shut-down for a launched run (measured by the point's probe
    /// launches), so a short kernel is not judged by `mpirun`'s start. It may be
    /// zero or less when the launcher took as long as the whole run: such a run
    /// has no figure (the analysis drops non-positive performance).
    pub fn figure_secs(&self) -> f64 {
        match self.ranks.as_ref().and_then(|r| r.launch_secs) {
            Some(launch) => self.wall_secs - launch,
            None => self.wall_secs,
        }
    }
}

/// One line of `results.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "lowercase")]
pub enum Record {
    Header(Box<Header>),
    Run(Box<RunRecord>),
}

/// An open results directory, ready to append.
pub struct ResultsStore {
    dir: PathBuf,
    file: File,
    /// Held (locked) while the store is open, so a second writer is refused.
    _lock: DirLock,
}

/// Name of the lock file in a results directory.
pub const LOCK_FILE: &str = ".scalescope.lock";

/// An exclusive `flock` on `DIR/.scalescope.lock`, holding the writer's PID. The
/// kernel drops it when the process ends, however it ends, so a crashed sweep never
/// leaves a stale lock behind.
struct DirLock {
    _file: File,
}

impl DirLock {
    fn take(dir: &Path) -> Result<DirLock, ResultsError> {
        use std::os::fd::AsRawFd;
        let path = dir.join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| io_err(&path, e))?;
        // SAFETY: flock takes a file descriptor we own (it lives as long as `file`)
        // and a flag constant; it touches no memory of ours.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let holder = std::fs::read_to_string(&path).unwrap_or_default();
            return Err(ResultsError::InUse {
                dir: dir.to_path_buf(),
                pid: holder.trim().to_string(),
            });
        }
        file.set_len(0).map_err(|e| io_err(&path, e))?;
        write!(file, "{}", std::process::id()).map_err(|e| io_err(&path, e))?;
        Ok(DirLock { _file: file })
    }
}

fn io_err(path: &Path, e: std::io::Error) -> ResultsError {
    ResultsError::Io {
        path: path.to_path_buf(),
        source: e,
    }
}

impl ResultsStore {
    /// Starts a new results directory with `header`.
    ///
    /// # Errors
    /// [`ResultsError::ResultsExist`] if the directory already holds results (use
    /// resume), or an I/O error naming the path.
    pub fn create(dir: &Path, header: &Header) -> Result<Self, ResultsError> {
        std::fs::create_dir_all(dir.join("logs")).map_err(|e| io_err(dir, e))?;
        let lock = DirLock::take(dir)?;
        let path = dir.join(RESULTS_FILE);
        if path.exists() && holds_header(&path) {
            return Err(ResultsError::ResultsExist { path });
        }
        // A file without a complete header (a sweep killed while writing its first
        // line) holds no run: starting afresh loses nothing.
        let file = OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .open(&path)
            .map_err(|e| io_err(&path, e))?;
        let mut store = ResultsStore {
            dir: dir.to_path_buf(),
            file,
            _lock: lock,
        };
        store.write(&Record::Header(Box::new(header.clone())))?;
        Ok(store)
    }

    /// Reopens a results directory to finish it: returns the store, the header and
    /// the runs already recorded. A torn last line (no newline) is cut off.
    ///
    /// # Errors
    /// [`ResultsError::Malformed`] naming the line that cannot be read, or I/O errors.
    pub fn resume(dir: &Path) -> Result<(Self, Header, Vec<RunRecord>), ResultsError> {
        let path = dir.join(RESULTS_FILE);
        if !path.exists() {
            return Err(io_err(
                &path,
                std::io::Error::from(std::io::ErrorKind::NotFound),
            ));
        }
        let lock = DirLock::take(dir)?;
        let (header, runs, good_len) = read_results(&path).map_err(|e| match e {
            ResultsError::Malformed { line: 1, .. } if !first_line_complete(&path) => {
                ResultsError::NoHeader { path: path.clone() }
            }
            e => e,
        })?;
        let mut file = OpenOptions::new()
            .append(true)
            .read(true)
            .open(&path)
            .map_err(|e| io_err(&path, e))?;
        file.set_len(good_len).map_err(|e| io_err(&path, e))?;
        // A last record written whole but without its newline: end the line, so the
        // next record starts on its own.
        if !ends_with_newline(&mut file).map_err(|e| io_err(&path, e))? {
            file.write_all(b"\n").map_err(|e| io_err(&path, e))?;
        }
        std::fs::create_dir_all(dir.join("logs")).map_err(|e| io_err(dir, e))?;
        Ok((
            ResultsStore {
                dir: dir.to_path_buf(),
                file,
                _lock: lock,
            },
            header,
            runs,
        ))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Appends one run and makes it durable before returning.
    ///
    /// # Errors
    /// I/O errors naming the results file.
    pub fn append(&mut self, run: &RunRecord) -> Result<(), ResultsError> {
        self.write(&Record::Run(Box::new(run.clone())))
    }

    fn write(&mut self, record: &Record) -> Result<(), ResultsError> {
        let path = self.dir.join(RESULTS_FILE);
        let mut line = serde_json::to_string(record).map_err(|e| ResultsError::Malformed {
            path: path.clone(),
            line: 0,
            detail: e.to_string(),
        })?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .map_err(|e| io_err(&path, e))?;
        self.file.flush().map_err(|e| io_err(&path, e))?;
        self.file.sync_data().map_err(|e| io_err(&path, e))
    }
}

/// Whether the file's first line is a complete header record.
fn holds_header(path: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    let mut first = String::new();
    let mut limited = BufReader::new(file.take(MAX_LINE_BYTES));
    if limited.read_line(&mut first).is_err() || !first.ends_with('\n') {
        return false;
    }
    matches!(
        serde_json::from_str(first.trim_end()),
        Ok(Record::Header(_))
    )
}

/// Whether the file's first line is whole (ends with a newline): a first line that
/// is not is a header torn by a crash, not some other file.
fn first_line_complete(path: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    let mut first = Vec::new();
    let mut limited = BufReader::new(file.take(MAX_LINE_BYTES));
    limited.read_until(b'\n', &mut first).is_ok() && first.ends_with(b"\n")
}

/// Whether a non-empty file's last byte is a newline (an empty file counts as ended).
fn ends_with_newline(file: &mut File) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    if file.seek(SeekFrom::End(0))? == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

/// The longest line a results file may hold (a run record with long logs paths
/// and many metrics is a few KiB; a header with a 1,000-PU topology ~1 MiB).
pub const MAX_LINE_BYTES: u64 = 64 << 20;

/// Reads a results file: header, runs, and the byte length of the well-formed part.
///
/// # Errors
/// [`ResultsError::Malformed`] with the line number, or I/O errors.
pub fn read_results(path: &Path) -> Result<(Header, Vec<RunRecord>, u64), ResultsError> {
    let file = File::open(path).map_err(|e| io_err(path, e))?;
    let mut reader = BufReader::new(file);
    let mut header = None;
    let mut runs = Vec::new();
    let mut good_len = 0u64;
    let mut line = String::new();
    let mut number = 0;
    loop {
        line.clear();
        let n = (&mut reader)
            .take(MAX_LINE_BYTES)
            .read_line(&mut line)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::InvalidData => ResultsError::Malformed {
                    path: path.into(),
                    line: number + 1,
                    detail: "not UTF-8 text".into(),
                },
                _ => io_err(path, e),
            })?;
        if n as u64 == MAX_LINE_BYTES && !line.ends_with('\n') {
            return Err(ResultsError::Malformed {
                path: path.into(),
                line: number + 1,
                detail: format!("a line longer than {} MiB", MAX_LINE_BYTES >> 20),
            });
        }
        if n == 0 {
            break;
        }
        number += 1;
        let complete = line.ends_with('\n');
        let parsed: Result<Record, _> = serde_json::from_str(line.trim_end());
        match parsed {
            Ok(Record::Header(h)) if number == 1 => header = Some(*h),
            Ok(Record::Header(_)) => {
                return Err(ResultsError::Malformed {
                    path: path.into(),
                    line: number,
                    detail: "a second header record".into(),
                })
            }
            Ok(Record::Run(r)) if header.is_some() => runs.push(*r),
            Ok(Record::Run(_)) => {
                return Err(ResultsError::Malformed {
                    path: path.into(),
                    line: number,
                    detail: "a run record before the header".into(),
                })
            }
            // A line cut short by a crash: everything before it is good.
            Err(_) if !complete => break,
            Err(e) => {
                return Err(ResultsError::Malformed {
                    path: path.into(),
                    line: number,
                    detail: e.to_string(),
                })
            }
        }
        good_len += n as u64;
    }
    let header = header.ok_or_else(|| ResultsError::Malformed {
        path: path.into(),
        line: 1,
        detail: "no header record".into(),
    })?;
    if header.schema_version > RESULTS_SCHEMA_VERSION {
        return Err(ResultsError::Malformed {
            path: path.into(),
            line: 1,
            detail: format!("results schema version {} is newer than this scalescope understands ({RESULTS_SCHEMA_VERSION})", header.schema_version),
        });
    }
    Ok((header, runs, good_len))
}
