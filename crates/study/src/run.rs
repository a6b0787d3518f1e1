//! Running a study's steps in its directory, each as a child process started
//! without a shell: scalescope itself (`sweep`, `mem matrix`, `sync`, ...) or the
//! compiler of the OpenMP probe. A step that ends is recorded in `steps/NAME.json`
//! and never run again; an interrupted sweep is finished by `sweep --resume` (so no
//! run is lost or repeated); an interrupted document or build is run again whole.
//! Ctrl-C reaches the child from the terminal; SIGTERM to the study is passed on;
//! a child dies with the study (`PR_SET_PDEATHSIG`).

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::plan::{Step, StepKind, StudyPlan};
use crate::StudyError;

/// Where the steps' records go.
pub const STEPS_DIR: &str = "steps";
/// A sweep's results file (as `scalescope-results` names it).
const RESULTS_FILE: &str = "results.jsonl";
/// Exit status of an interrupted scalescope command.
const INTERRUPTED: i32 = 130;

/// How one step ended.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepRecord {
    pub name: String,
    pub exit_code: Option<i32>,
    /// Seconds of the session that finished it (not of earlier, interrupted ones).
    pub secs: f64,
    /// Finished by a resume of an interrupted sweep.
    pub resumed: bool,
}

/// The record of `step`, if it ended earlier.
pub fn record(dir: &Path, step: &str) -> Option<StepRecord> {
    let text = std::fs::read_to_string(dir.join(STEPS_DIR).join(format!("{step}.json"))).ok()?;
    serde_json::from_str(&text).ok()
}

fn write_record(dir: &Path, r: &StepRecord) -> Result<(), StudyError> {
    let steps = dir.join(STEPS_DIR);
    scalescope_files::OutDir::open(dir)
        .and_then(|d| d.subdir(STEPS_DIR))
        .map_err(|e| StudyError::io(&steps, std::io::Error::other(e.to_string())))?;
    let text = serde_json::to_string(r).unwrap_or_default();
    crate::write_in(
        &steps,
        &format!("{}.json", r.name),
        (text + "\n").as_bytes(),
    )
}

/// What a study session did.
#[derive(Debug, Default)]
pub struct Outcome {
    pub interrupted: bool,
    /// Steps run now (not those finished earlier).
    pub ran: Vec<StepRecord>,
    pub earlier: Vec<String>,
}

/// What the person running the study sees.
pub trait Say {
    fn step_start(&mut self, step: &Step, index: usize, of: usize, resuming: bool);
    fn step_end(&mut self, record: &StepRecord);
}

/// Runs every step not yet recorded, in order, with `exe` as scalescope.
///
/// # Errors
/// A step that cannot be started, I/O on the study directory.
pub fn run(
    plan: &StudyPlan,
    dir: &Path,
    exe: &Path,
    interrupt: &AtomicBool,
    say: &mut dyn Say,
) -> Result<Outcome, StudyError> {
    let mut out = Outcome::default();
    for (i, step) in plan.steps.iter().enumerate() {
        if record(dir, &step.name).is_some() {
            out.earlier.push(step.name.clone());
            continue;
        }
        if interrupt.load(Ordering::SeqCst) {
            out.interrupted = true;
            break;
        }
        let resuming =
            step.kind == StepKind::Sweep && dir.join(&step.name).join(RESULTS_FILE).is_file();
        say.step_start(step, i + 1, plan.steps.len(), resuming);
        let start = Instant::now();
        let code = run_step(step, dir, exe, resuming, interrupt)?;
        if code == Some(INTERRUPTED) || interrupt.load(Ordering::SeqCst) {
            out.interrupted = true;
            break;
        }
        let r = StepRecord {
            name: step.name.clone(),
            exit_code: code,
            secs: start.elapsed().as_secs_f64(),
            resumed: resuming,
        };
        write_record(dir, &r)?;
        say.step_end(&r);
        out.ran.push(r);
    }
    Ok(out)
}

/// The arguments a step runs with now: a sweep with results already is resumed.
pub fn args_now(step: &Step, resuming: bool) -> Vec<String> {
    if resuming {
        let mut a: Vec<String> = vec![
            "sweep".into(),
            "--resume".into(),
            "--quiet".into(),
            "--out".into(),
            step.name.clone(),
        ];
        // The input cache is not part of the sweep's header: give it again.
        if let Some(i) = step.args.iter().position(|a| a == "--input-cache") {
            a.extend(step.args.iter().skip(i).take(2).cloned());
        }
        a
    } else {
        step.args.clone()
    }
}

fn open(path: &Path, append: bool) -> Result<File, StudyError> {
    std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(path)
        .map_err(|e| StudyError::io(path, e))
}

/// Runs one step to its end; its exit code (`None`: killed by a signal).
fn run_step(
    step: &Step,
    dir: &Path,
    exe: &Path,
    resuming: bool,
    interrupt: &AtomicBool,
) -> Result<Option<i32>, StudyError> {
    if step.kind == StepKind::Build {
        let (name, text) = crate::studies_omp::SOURCE;
        crate::write_in(dir, name, text.as_bytes())?;
    }
    let program: PathBuf = step
        .program
        .as_ref()
        .map_or_else(|| exe.to_path_buf(), PathBuf::from);
    let log = open(&dir.join(format!("{}.log", step.name)), true)?;
    let partial = dir.join(format!("{}.json.partial", step.name));
    let stdout = match step.kind {
        StepKind::Document => Stdio::from(open(&partial, false)?),
        _ => Stdio::from(log.try_clone().map_err(|e| StudyError::io(dir, e))?),
    };
    let mut command = Command::new(&program);
    command
        .args(args_now(step, resuming))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::from(log));
    // SAFETY: between fork and exec the closure only calls prctl, which is
    // async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    let mut child = command.spawn().map_err(|e| StudyError::Step {
        step: step.name.clone(),
        detail: format!("cannot start {}: {e}", program.display()),
    })?;
    let status = wait(&mut child, interrupt).map_err(|e| StudyError::io(dir, e))?;
    if step.kind == StepKind::Document && status.success() {
        let done = dir.join(format!("{}.json", step.name));
        std::fs::rename(&partial, &done).map_err(|e| StudyError::io(&done, e))?;
    }
    Ok(status.code())
}

/// Waits for `child`, passing a SIGTERM on once when the study is interrupted.
fn wait(
    child: &mut std::process::Child,
    interrupt: &AtomicBool,
) -> std::io::Result<std::process::ExitStatus> {
    let mut told = false;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if interrupt.load(Ordering::SeqCst) && !told {
            told = true;
            if let Ok(pid) = i32::try_from(child.id()) {
                // SAFETY: kill with a PID of our own child, which we have not reaped yet.
                unsafe {
                    libc::kill(pid, libc::SIGTERM);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
