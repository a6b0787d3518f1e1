//! Executing one run: the [`Executor`] seam, the real process executor and a fake
//! one for deterministic tests.
//!
//! The real executor starts the program directly (no shell unless asked), in a new
//! process group, with its CPU affinity and memory policy set in the child before
//! `exec`; stdout and stderr go to log files. A thread blocked in `wait4` notes the
//! exit time and the child's resource usage (its own and its waited-for children's),
//! so the wall time does not depend on a polling interval; meanwhile the calling
//! thread samples placement and watches the timeout and the interrupt flag. Any
//! ending kills the whole process group and every process still marked with the
//! run's token, and the child dies with scalescope ([`crate::reap`]), so no orphan
//! survives a run.

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use scalescope_place::mempolicy::PreparedPolicy;
use scalescope_place::pin::to_cpu_set;
use scalescope_topo::CpuSet;

use crate::monitor::Monitor;
use scalescope_model::check::PlacementCheck;
use scalescope_model::evidence::RunEvidence;
use scalescope_model::store::RunStatus;
use scalescope_sampler::{Sampler, SamplerConfig};

/// Everything needed to start one run.
#[derive(Debug, Clone)]
pub struct ExecSpec {
    /// Program and arguments, already substituted (or `/bin/sh -c CMD` with `--shell`).
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    /// The process's CPU affinity: the union of the threads' sets.
    pub cpus: CpuSet,
    pub mem: PreparedPolicy,
    pub timeout: Option<Duration>,
    /// How long a process group gets between SIGTERM and SIGKILL.
    pub grace: Duration,
    pub stdout_path: PathBuf,
    pub stderr_path: PathBuf,
    /// Threads the plan expects alive at once (for the placement check).
    pub planned_threads: usize,
    /// Figures of merit to scan stdout for as it streams.
    pub metrics: Vec<scalescope_model::store::MetricSpec>,
    /// Evidence sampling beside the run; `None` turns it off.
    pub sample: Option<SampleSpec>,
    /// A runtime-placed run: the plan its threads' binding is compared with.
    pub runtime_plan: Option<crate::monitor::RuntimePlan>,
}

/// How a run is sampled and where its series goes.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleSpec {
    pub interval: Duration,
    /// The results directory, and the series file's name inside it (as recorded).
    pub results_dir: PathBuf,
    pub series_name: String,
}

/// How a run ended and what it used.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub wall_secs: f64,
    pub user_secs: Option<f64>,
    pub sys_secs: Option<f64>,
    pub max_rss_bytes: Option<u64>,
    pub status: RunStatus,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub error: Option<String>,
    pub check: Option<PlacementCheck>,
    /// The run was stopped because the user interrupted the sweep; it is not a result.
    pub interrupted: bool,
    /// What stdout held, scanned as it streamed; `None` where the executor did not
    /// stream it (fakes write the log file, which is then scanned).
    pub stdout_scan: Option<crate::output::Scan>,
    /// What the sampler saw, when sampling was on.
    pub evidence: Option<Box<RunEvidence>>,
}

impl Outcome {
    fn error(message: String) -> Outcome {
        Outcome {
            wall_secs: 0.0,
            user_secs: None,
            sys_secs: None,
            max_rss_bytes: None,
            status: RunStatus::Error,
            exit_code: None,
            signal: None,
            error: Some(message),
            check: None,
            interrupted: false,
            stdout_scan: None,
            evidence: None,
        }
    }
}

/// Runs one job. The real one starts processes; tests use [`FakeExecutor`].
pub trait Executor {
    fn execute(&mut self, spec: &ExecSpec, interrupt: &AtomicBool) -> Outcome;
}

/// Starts real processes.
#[derive(Debug, Default)]
pub struct ProcessExecutor;

struct Reaped {
    at: Instant,
    status: i32,
    usage: libc::rusage,
}

fn tv_secs(tv: libc::timeval) -> f64 {
    tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6
}

/// Sends `signal` to the process group led by `pgid`; a group already gone is fine.
fn kill_group(pgid: i32, signal: i32) {
    // SAFETY: kill has no memory-safety preconditions; a negative pid names a group.
    unsafe {
        libc::kill(-pgid, signal);
    }
}

/// A thread that waits for the child `pid` (with its rusage) and reports when it
/// is reaped.
fn spawn_reaper(pid: i32) -> mpsc::Receiver<Reaped> {
    let (tx, rx) = mpsc::channel::<Reaped>();
    std::thread::spawn(move || {
        let mut status = 0;
        // SAFETY: rusage is plain data; zeroed is a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        loop {
            // SAFETY: pid is our child; status and usage are valid for writes.
            let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
            if r == pid || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                break;
            }
        }
        let _ = tx.send(Reaped {
            at: Instant::now(),
            status,
            usage,
        });
    });
    rx
}

impl Executor for ProcessExecutor {
    fn execute(&mut self, spec: &ExecSpec, interrupt: &AtomicBool) -> Outcome {
        // Without a guard, kill -9 of scalescope could leave `setsid` descendants;
        // the run goes on with the other two layers.
        let _ = crate::reap::ensure_guard();
        let (mut child, start, streams) = match spawn(spec) {
            Ok(c) => c,
            Err(e) => return Outcome::error(e),
        };
        let pid = child.id() as i32;
        let rx = spawn_reaper(pid);
        let mut monitor = Monitor::new(spec.cpus.clone(), spec.planned_threads)
            .with_runtime(spec.runtime_plan.clone());
        let mut sampler = spec.sample.as_ref().map(|s| {
            Sampler::start(
                SamplerConfig::live(s.interval, spec.cpus.clone()),
                pid as u32,
            )
        });
        let mut interval = Duration::from_millis(2);
        let mut killed_for: Option<RunStatus> = None;
        let mut interrupted = false;
        let mut term_sent_at: Option<Instant> = None;
        let reaped = loop {
            let wait = sampler
                .as_ref()
                .map_or(interval, |s| s.until_due().min(interval));
            match rx.recv_timeout(wait) {
                Ok(r) => break r,
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Outcome::error("lost track of the child process".into());
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if term_sent_at.is_none() {
                match sampler.as_mut().filter(|s| s.due()) {
                    Some(s) => monitor.observe(&crate::monitor::states(&s.sample())),
                    None => monitor.sample(std::path::Path::new("/"), pid as u32),
                }
            }
            // Sample often at first (short runs), then every 50 ms.
            interval = (interval * 2).min(Duration::from_millis(50));
            let timed_out = spec.timeout.is_some_and(|t| start.elapsed() >= t);
            if term_sent_at.is_none() && (timed_out || interrupt.load(Ordering::SeqCst)) {
                interrupted = !timed_out;
                if timed_out {
                    killed_for = Some(RunStatus::Timeout);
                }
                kill_group(pid, libc::SIGTERM);
                term_sent_at = Some(Instant::now());
            }
            if term_sent_at.is_some_and(|t| t.elapsed() >= spec.grace) {
                kill_group(pid, libc::SIGKILL);
            }
        };
        // Whatever the program left behind goes with it: its group, and anything
        // that left the group but still carries the run's mark.
        kill_group(pid, libc::SIGKILL);
        crate::reap::kill_marked(
            std::path::Path::new("/proc"),
            crate::reap::token(),
            Duration::from_secs(2),
        );
        let _ = child.try_wait();
        let mut outcome = outcome_of(&reaped, start, killed_for, interrupted, monitor.finish());
        outcome.stdout_scan = streams.finish(spec.grace + Duration::from_secs(1));
        if let (Some(s), Some(sample)) = (sampler, &spec.sample) {
            let cpu = outcome.user_secs.zip(outcome.sys_secs).map(|(u, s)| u + s);
            let series = Some((sample.results_dir.as_path(), sample.series_name.clone()));
            outcome.evidence = Some(Box::new(s.finish(outcome.wall_secs, cpu, series)));
        }
        outcome
    }
}

/// The threads copying a run's stdout and stderr into their logs.
struct Streams {
    stdout: mpsc::Receiver<crate::output::Scan>,
    stderr: mpsc::Receiver<crate::output::Scan>,
}

impl Streams {
    /// The stdout scan once both pipes have ended. A pipe still held open by a
    /// process outside the run after `patience` is left to its thread.
    fn finish(self, patience: Duration) -> Option<crate::output::Scan> {
        let deadline = Instant::now() + patience;
        let left = || deadline.saturating_duration_since(Instant::now());
        let mut out = self.stdout.recv_timeout(left()).ok();
        let err = self.stderr.recv_timeout(left()).ok();
        if let (Some(out), Some(err)) = (&mut out, err) {
            let stderr = err.log_errors.into_iter().map(|e| format!("stderr {e}"));
            out.log_errors = out
                .log_errors
                .drain(..)
                .map(|e| format!("stdout {e}"))
                .chain(stderr)
                .collect();
        }
        out
    }
}

/// Starts a thread copying `pipe` into `log`, scanning it with `scanner`.
fn stream(
    pipe: impl std::io::Read + Send + 'static,
    log: File,
    scanner: Option<crate::output::Scanner>,
) -> mpsc::Receiver<crate::output::Scan> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let scan = crate::output::copy_capped(pipe, log, crate::output::LOG_CAP_BYTES, scanner);
        let _ = tx.send(scan);
    });
    rx
}

/// A fresh log file `DIR/logs/NAME`: `logs` and the file are reached from the
/// results directory without following a link (one planted there is refused or
/// replaced, never written through).
fn create_log(path: &Path) -> Result<File, String> {
    let fail = |e: &dyn std::fmt::Display| format!("creating log {}: {e}", path.display());
    let (Some(logs), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(fail(&"not a file path"));
    };
    let (root, sub) = match (logs.parent(), logs.file_name()) {
        (Some(root), Some(sub)) => (root, Path::new(sub).join(name)),
        _ => (logs, PathBuf::from(name)),
    };
    let root = if root.as_os_str().is_empty() {
        Path::new(".")
    } else {
        root
    };
    scalescope_files::OutDir::open(root)
        .and_then(|dir| dir.create_file(&sub))
        .map_err(|e| fail(&e))
}

/// Starts the child: its own process group, the run's mark in its environment,
/// death with its parent, affinity and memory policy set between fork and exec,
/// stdout and stderr streamed to the log files.
fn spawn(spec: &ExecSpec) -> Result<(std::process::Child, Instant, Streams), String> {
    let program = spec.argv.first().ok_or("empty command line")?;
    let (out, err) = (
        create_log(&spec.stdout_path)?,
        create_log(&spec.stderr_path)?,
    );
    let mut cmd = Command::new(program);
    cmd.args(&spec.argv[1..])
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .env(crate::reap::RUN_ID_VAR, crate::reap::token())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let set = to_cpu_set(&spec.cpus).map_err(|e| e.to_string())?;
    let mem = spec.mem.clone();
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    // SAFETY: the closure runs in the forked child before exec and only makes
    // system calls on data prepared before the fork (no allocation, no locks).
    unsafe {
        cmd.pre_exec(move || {
            // Die with scalescope; if it already died, the check below sees it.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != me {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            mem.apply()
        });
    }
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start `{program}`: {e}"))?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err("the child's output pipes are missing".into());
    };
    let streams = Streams {
        stdout: stream(
            stdout,
            out,
            Some(crate::output::Scanner::new(&spec.metrics)),
        ),
        stderr: stream(stderr, err, None),
    };
    Ok((child, start, streams))
}

fn outcome_of(
    r: &Reaped,
    start: Instant,
    killed_for: Option<RunStatus>,
    interrupted: bool,
    check: Option<PlacementCheck>,
) -> Outcome {
    let (exited, signaled) = (libc::WIFEXITED(r.status), libc::WIFSIGNALED(r.status));
    let exit_code = exited.then(|| libc::WEXITSTATUS(r.status));
    let signal = signaled.then(|| libc::WTERMSIG(r.status));
    let status = match (killed_for, exit_code, signal) {
        (Some(s), _, _) => s,
        (None, Some(0), _) => RunStatus::Ok,
        (None, Some(_), _) => RunStatus::Failed,
        (None, None, _) => RunStatus::Signaled,
    };
    let error = match (status, exit_code, signal) {
        (RunStatus::Timeout, ..) => Some("timed out; process group killed".to_string()),
        (RunStatus::Failed, Some(c), _) => Some(format!("exited with status {c}")),
        (RunStatus::Signaled, _, Some(s)) => Some(format!("killed by signal {s}")),
        _ => None,
    };
    Outcome {
        wall_secs: r.at.duration_since(start).as_secs_f64(),
        user_secs: Some(tv_secs(r.usage.ru_utime)),
        sys_secs: Some(tv_secs(r.usage.ru_stime)),
        // Linux reports ru_maxrss in KiB.
        max_rss_bytes: u64::try_from(r.usage.ru_maxrss).ok().map(|k| k * 1024),
        status,
        exit_code,
        signal,
        error,
        check,
        interrupted,
        stdout_scan: None,
        evidence: None,
    }
}

/// Returns scripted outcomes: `wall(threads, rep)` gives each run's time, and the
/// stdout log gets `stdout(threads)`; for testing the engine without processes.
pub struct FakeExecutor<F: FnMut(&ExecSpec) -> Outcome> {
    pub script: F,
    pub calls: Vec<ExecSpec>,
}

impl<F: FnMut(&ExecSpec) -> Outcome> FakeExecutor<F> {
    pub fn new(script: F) -> Self {
        FakeExecutor {
            script,
            calls: Vec::new(),
        }
    }
}

impl<F: FnMut(&ExecSpec) -> Outcome> Executor for FakeExecutor<F> {
    fn execute(&mut self, spec: &ExecSpec, _interrupt: &AtomicBool) -> Outcome {
        self.calls.push(spec.clone());
        (self.script)(spec)
    }
}

/// A successful outcome taking `wall_secs`, for fakes.
pub fn ok_outcome(wall_secs: f64) -> Outcome {
    Outcome {
        wall_secs,
        user_secs: Some(wall_secs),
        sys_secs: Some(0.0),
        max_rss_bytes: Some(1 << 20),
        status: RunStatus::Ok,
        exit_code: Some(0),
        signal: None,
        error: None,
        check: None,
        interrupted: false,
        stdout_scan: None,
        evidence: None,
    }
}
