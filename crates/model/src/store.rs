//! The results directory: `results.jsonl` (a header record, then one record per run,
//! each appended, flushed and synced as the run ends) and the logs. Results survive a
//! crash of the program under test, of scalescope, or of the machine: at most the
//! line being written is lost, and lines a crash tore or filled with NUL bytes are
//! set aside on resume ([`crate::read`]). The directory is locked with an `flock`
//! on itself and written through `scalescope-files` (no link below it followed).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use scalescope_files::{DirLock, Kind, OutDir};

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
    /// A built-in workload's kernel runs this many times in each run's process
    /// (`sweep --trials N`, N >= 2) and the run's figures are those of its median
    /// warm trial (the first, cold, left out); absent: one trial a run, as in files
    /// written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials: Option<usize>,
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
    /// Finite values only: a program that prints `nan` or `inf` for a metric
    /// reported nothing for it (JSON has no such numbers: serde would write `null`,
    /// and the whole run would be unreadable).
    #[serde(
        serialize_with = "finite_metrics::serialize",
        deserialize_with = "finite_metrics::deserialize"
    )]
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
    out: OutDir,
    file: File,
    /// Held while the store is open, so a second writer is refused.
    _lock: DirLock,
    set_aside: Vec<SetAside>,
}

/// Name of the file that says which process holds a results directory. The lock
/// itself is on the directory: deleting this file lets no second writer in.
pub const LOCK_FILE: &str = ".scalescope.lock";
/// Where a resume moves the lines it could not read (appended, newest last).
pub const SET_ASIDE_FILE: &str = "results.jsonl.set-aside";

/// Takes the directory's `flock` (the kernel drops it when the process ends,
/// however it ends, so a crashed sweep never leaves a stale lock) and records
/// this process's PID beside it for the next one's message.
fn take_lock(out: &OutDir) -> Result<DirLock, ResultsError> {
    let Some(lock) = out.try_lock()? else {
        return Err(ResultsError::InUse {
            dir: out.path().to_path_buf(),
            pid: holder(out),
        });
    };
    out.write_file(LOCK_FILE, std::process::id().to_string().as_bytes())?;
    Ok(lock)
}

/// The lock holder's PID: the kernel's record of the lock, else the PID the
/// holder wrote if that process is alive (never a stale or empty one).
fn holder(out: &OutDir) -> Option<u32> {
    if let Some(pid) = out.lock_holder() {
        return Some(pid);
    }
    let input = out
        .open_input(LOCK_FILE, Kind::new("lock file", 64, 64))
        .ok()?;
    let bytes = input.read_all().ok()?;
    let pid: u32 = std::str::from_utf8(&bytes).ok()?.trim().parse().ok()?;
    Path::new("/proc")
        .join(pid.to_string())
        .exists()
        .then_some(pid)
}

impl ResultsStore {
    /// Starts a new results directory with `header`.
    ///
    /// # Errors
    /// [`ResultsError::ResultsExist`] if the directory already holds results (use
    /// resume), [`ResultsError::InUse`], or an I/O error naming the path.
    pub fn create(dir: &Path, header: &Header) -> Result<Self, ResultsError> {
        let out = OutDir::create(dir)?;
        let lock = take_lock(&out)?;
        refuse_existing(&out)?;
        out.subdir("logs")?;
        // A file without a complete header (a sweep killed while writing its first
        // line) holds no run: starting afresh loses nothing.
        let file = out.create_file(RESULTS_FILE)?;
        let mut store = ResultsStore {
            out,
            file,
            _lock: lock,
            set_aside: Vec::new(),
        };
        store.write(&Record::Header(Box::new(header.clone())))?;
        Ok(store)
    }

    /// Writes a whole results file at once (an import): aside, synced, then
    /// renamed into place, so a writer killed midway leaves no `results.jsonl`
    /// that reads as complete, and the next try starts clean.
    ///
    /// # Errors
    /// As [`ResultsStore::create`].
    pub fn create_complete(
        dir: &Path,
        header: &Header,
        runs: &[RunRecord],
    ) -> Result<PathBuf, ResultsError> {
        let out = OutDir::create(dir)?;
        let _lock = take_lock(&out)?;
        refuse_existing(&out)?;
        for name in out.names()? {
            if scalescope_files::output::is_aside_of(&name, RESULTS_FILE) {
                out.remove_file(&name)?;
            }
        }
        out.write_with(RESULTS_FILE, |f| {
            let mut w = std::io::BufWriter::new(f);
            writeln!(
                w,
                "{}",
                json_line(&Record::Header(Box::new(header.clone())))?
            )?;
            for r in runs {
                writeln!(w, "{}", json_line(&Record::Run(Box::new(r.clone())))?)?;
            }
            w.flush()
        })?;
        Ok(out.join(RESULTS_FILE))
    }

    /// Reopens a results directory to finish it: returns the store, the header and
    /// the runs already recorded. Lines that are not run records (torn by a crash,
    /// NUL bytes) are moved to [`SET_ASIDE_FILE`] and the file is repaired
    /// without them ([`ResultsStore::set_aside`] says which).
    ///
    /// # Errors
    /// [`ResultsError::NothingToResume`], [`ResultsError::NoHeader`],
    /// [`ResultsError::Malformed`] naming the line that cannot be read, or I/O
    /// errors.
    pub fn resume(dir: &Path) -> Result<(Self, Header, Vec<RunRecord>), ResultsError> {
        let out = OutDir::open(dir).map_err(|e| match e {
            scalescope_files::FileError::Io { ref cause, .. }
                if cause.kind() == std::io::ErrorKind::NotFound =>
            {
                ResultsError::NothingToResume {
                    dir: dir.to_path_buf(),
                }
            }
            e => e.into(),
        })?;
        if !out.exists(RESULTS_FILE) {
            return Err(ResultsError::NothingToResume {
                dir: dir.to_path_buf(),
            });
        }
        let lock = take_lock(&out)?;
        let read =
            crate::read::read_input(out.open_input(RESULTS_FILE, Kind::RESULTS)?).map_err(|e| {
                match e {
                    ResultsError::Malformed {
                        line: 1,
                        ref detail,
                        ref path,
                    } if detail.starts_with("no header record") => {
                        ResultsError::NoHeader { path: path.clone() }
                    }
                    e => e,
                }
            })?;
        let file = repair(&out, &read)?;
        out.subdir("logs")?;
        let store = ResultsStore {
            out,
            file,
            _lock: lock,
            set_aside: read.set_aside,
        };
        Ok((store, read.header, read.runs))
    }

    pub fn dir(&self) -> &Path {
        self.out.path()
    }

    /// The directory, held open: files below it are written without following links.
    pub fn out(&self) -> &OutDir {
        &self.out
    }

    /// The lines a resume set aside (empty for a new store).
    pub fn set_aside(&self) -> &[SetAside] {
        &self.set_aside
    }

    /// Appends one run and makes it durable before returning.
    ///
    /// # Errors
    /// I/O errors naming the results file.
    pub fn append(&mut self, run: &RunRecord) -> Result<(), ResultsError> {
        self.write(&Record::Run(Box::new(run.clone())))
    }

    fn write(&mut self, record: &Record) -> Result<(), ResultsError> {
        let path = self.out.join(RESULTS_FILE);
        let mut line = json_line(record).map_err(|e| io_err(&path, e))?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .map_err(|e| io_err(&path, e))?;
        self.file.flush().map_err(|e| io_err(&path, e))?;
        self.file.sync_data().map_err(|e| io_err(&path, e))
    }
}

fn io_err(path: &Path, e: std::io::Error) -> ResultsError {
    ResultsError::Io {
        path: path.to_path_buf(),
        source: e,
    }
}

fn json_line(record: &Record) -> std::io::Result<String> {
    serde_json::to_string(record).map_err(std::io::Error::other)
}

/// Refuses a directory whose `results.jsonl` is a regular file starting with a
/// whole header (anything else there, a link included, holds no results of ours
/// and is replaced).
fn refuse_existing(out: &OutDir) -> Result<(), ResultsError> {
    let Ok(input) = out.open_input(RESULTS_FILE, Kind::RESULTS) else {
        return Ok(());
    };
    let mut lines = input.lines();
    let mut first = Vec::new();
    let whole = lines.next_raw(&mut first).unwrap_or(false) && first.ends_with(b"\n");
    if whole && matches!(serde_json::from_slice(&first), Ok(Record::Header(_))) {
        return Err(ResultsError::ResultsExist {
            path: out.join(RESULTS_FILE),
        });
    }
    Ok(())
}

/// Moves what `read` set aside to [`SET_ASIDE_FILE`], repairs the results file
/// (cut after its clean prefix, or rewritten from the kept records) and opens it
/// to append, its last line ended.
fn repair(out: &OutDir, read: &ResultsRead) -> Result<File, ResultsError> {
    if !read.set_aside.is_empty() {
        let mut aside = match out.open_append(SET_ASIDE_FILE) {
            Ok(f) => f,
            Err(_) => out.create_file(SET_ASIDE_FILE)?,
        };
        let path = out.join(SET_ASIDE_FILE);
        for s in &read.set_aside {
            aside.write_all(&s.bytes).map_err(|e| io_err(&path, e))?;
            if !s.bytes.ends_with(b"\n") {
                aside.write_all(b"\n").map_err(|e| io_err(&path, e))?;
            }
        }
        aside.sync_data().map_err(|e| io_err(&path, e))?;
    }
    if read.needs_rewrite() {
        rewrite(out, read)?;
    }
    let path = out.join(RESULTS_FILE);
    let mut file = out.open_append(RESULTS_FILE)?;
    if !read.needs_rewrite() {
        file.set_len(read.clean_prefix)
            .map_err(|e| io_err(&path, e))?;
    }
    // A last record written whole but without its newline: end the line, so the
    // next record starts on its own.
    if !ends_with_newline(&mut file).map_err(|e| io_err(&path, e))? {
        file.write_all(b"\n").map_err(|e| io_err(&path, e))?;
    }
    Ok(file)
}

/// The results file again from its kept records, written aside and renamed.
fn rewrite(out: &OutDir, read: &ResultsRead) -> Result<(), ResultsError> {
    use std::io::{Read, Seek, SeekFrom};
    let mut old = out.open_append(RESULTS_FILE)?;
    let path = out.join(RESULTS_FILE);
    let mut buf = Vec::new();
    out.write_with(RESULTS_FILE, |f| {
        let mut w = std::io::BufWriter::new(f);
        for &(at, len) in &read.kept {
            old.seek(SeekFrom::Start(at))?;
            buf.clear();
            (&mut old).take(len).read_to_end(&mut buf)?;
            w.write_all(&buf)?;
            w.write_all(b"\n")?;
        }
        w.flush()
    })
    .map_err(|e| match e {
        scalescope_files::FileError::Io { cause, .. } => io_err(&path, cause),
        e => e.into(),
    })
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
pub const MAX_LINE_BYTES: u64 = Kind::RESULTS.max_line_bytes as u64;

pub use crate::read::{read_results, read_results_checked, ResultsRead, SetAside};

/// A run's metrics as written and read: a value that is not a finite number is
/// left out when writing, and a `null` (written before this rule) is left out
/// when reading, so the run itself stays readable.
mod finite_metrics {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(m: &BTreeMap<String, f64>, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(m.iter().filter(|(_, v)| v.is_finite()))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, f64>, D::Error> {
        let m = BTreeMap::<String, Option<f64>>::deserialize(d)?;
        Ok(m.into_iter().filter_map(|(k, v)| Some((k, v?))).collect())
    }
}
