//! Slurm's batch commands for a sweep submitted as jobs: `sbatch --parsable`
//! (a job id back) and `squeue` (which of the sweep's jobs are still queued or
//! running), each started without a shell and bounded in time.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::SweepError;

/// How long one Slurm command may take (a busy controller answers in seconds).
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// What a command printed, and whether it ended with status 0.
struct Output {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Runs `program args` with its output captured, killed past [`COMMAND_TIMEOUT`].
fn run(program: &str, args: &[String]) -> Result<Output, SweepError> {
    let failed = |detail: String| SweepError::Scheduler {
        command: format!("{program} {}", args.join(" ")),
        detail,
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failed(format!("cannot start it: {e}")))?;
    let deadline = Instant::now() + COMMAND_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(failed(format!(
                    "no answer within {} s",
                    COMMAND_TIMEOUT.as_secs()
                )));
            }
        }
    };
    let read = |r: Option<&mut dyn Read>| {
        let mut s = String::new();
        if let Some(r) = r {
            let _ = r.read_to_string(&mut s);
        }
        s
    };
    Ok(Output {
        ok: status.success(),
        stdout: read(child.stdout.as_mut().map(|s| s as &mut dyn Read)),
        stderr: read(child.stderr.as_mut().map(|s| s as &mut dyn Read)),
    })
}

/// Submits `script` with `sbatch --parsable` and the site's `extra` options;
/// returns the job id.
///
/// # Errors
/// [`SweepError::Scheduler`] with sbatch's own message when it refuses the job.
pub fn sbatch(script: &Path, extra: &[String]) -> Result<String, SweepError> {
    let mut args = vec!["--parsable".to_string()];
    args.extend(extra.iter().cloned());
    args.push(script.display().to_string());
    let o = run("sbatch", &args)?;
    // `--parsable` prints `id` or `id;cluster`.
    let id = o.stdout.trim().split(';').next().unwrap_or("").to_string();
    if !o.ok || id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit() || b == b'_') {
        return Err(SweepError::Scheduler {
            command: format!("sbatch {}", args.join(" ")),
            detail: last_words(&o),
        });
    }
    Ok(id)
}

/// Which of `ids` Slurm still holds (pending, running, completing...). A job
/// Slurm no longer knows has ended.
///
/// # Errors
/// [`SweepError::Scheduler`] when squeue fails for another reason (the
/// controller is unreachable).
pub fn queued(ids: &[String]) -> Result<BTreeSet<String>, SweepError> {
    if ids.is_empty() {
        return Ok(BTreeSet::new());
    }
    let args = vec![
        "--noheader".to_string(),
        "--format=%i".to_string(),
        format!("--jobs={}", ids.join(",")),
    ];
    let o = run("squeue", &args)?;
    if !o.ok {
        // squeue refuses the whole list once every job in it has left.
        if o.stderr.contains("Invalid job id") {
            return Ok(BTreeSet::new());
        }
        return Err(SweepError::Scheduler {
            command: format!("squeue {}", args.join(" ")),
            detail: last_words(&o),
        });
    }
    Ok(o.stdout
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| ids.contains(l))
        .collect())
}

fn last_words(o: &Output) -> String {
    let text = if o.stderr.trim().is_empty() {
        &o.stdout
    } else {
        &o.stderr
    };
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(3)..].join(" | ")
}
