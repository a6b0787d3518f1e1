//! Running one attack case: the binary started in its own process group with its
//! output in files, watched with `wait4` (so its peak RSS is the kernel's
//! figure), killed with its group past the time limit; and the verdict on what
//! it did.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The most memory a refused or finished case may have used.
pub const RSS_LIMIT_KIB: i64 = 200 * 1024;

/// What one process did.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub args: Vec<String>,
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub secs: f64,
    pub max_rss_kib: i64,
    pub stderr: Vec<u8>,
}

/// Runs `scalescope ARGS` in `dir` for at most `limit`.
pub fn run(args: &[String], dir: &Path, limit: Duration) -> Outcome {
    run_with(args, dir, limit, &[])
}

/// As [`run`], with extra environment.
pub fn run_with(args: &[String], dir: &Path, limit: Duration, env: &[(&str, &Path)]) -> Outcome {
    let err_path = dir.join(format!("stderr-{}", std::process::id()));
    let err = std::fs::File::create(&err_path).expect("stderr file");
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("scalescope"));
    cmd.args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err)
        .process_group(0);
    for (k, v) in env {
        cmd.env(k, v);
    }
    // A child's wait4 figure starts from this process's high-water mark (exec
    // carries the parent's peak over), so reset ours to what is resident now:
    // the figure is then an upper bound on the case's own peak.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let start = Instant::now();
    let child = cmd.spawn().expect("scalescope starts");
    let pid = child.id() as i32;
    // Reaped here with wait4 (for its rusage), not through `Child::wait`.
    std::mem::forget(child);
    let (status, rusage, timed_out) = wait(pid, limit);
    let mut stderr = Vec::new();
    if let Ok(f) = std::fs::File::open(&err_path) {
        use std::io::Read;
        let _ = f.take(1 << 16).read_to_end(&mut stderr);
    }
    let _ = std::fs::remove_file(&err_path);
    Outcome {
        args: args.to_vec(),
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        signal: libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status)),
        timed_out,
        secs: start.elapsed().as_secs_f64(),
        max_rss_kib: rusage.ru_maxrss,
        stderr,
    }
}

/// Polls `wait4` until `pid` ends or `limit` passes (then kills its group).
fn wait(pid: i32, limit: Duration) -> (i32, libc::rusage, bool) {
    let deadline = Instant::now() + limit;
    let mut status = 0;
    // SAFETY: rusage is plain old data; all zeros is a valid value.
    let mut rusage: libc::rusage = unsafe { std::mem::zeroed() };
    let mut timed_out = false;
    loop {
        // SAFETY: wait4 writes only into the two locals it is given.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut rusage) };
        if r == pid {
            return (status, rusage, timed_out);
        }
        if Instant::now() >= deadline && !timed_out {
            timed_out = true;
            // SAFETY: kill has no memory-safety preconditions; the group is the
            // child's own (process_group(0)).
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// How a case ended, judged.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Exit status 0.
    Ran,
    /// Exit status 3, 4 or 5: runs failed or could not be verified, said so.
    RanWithFailures,
    /// A one-line error naming the problem.
    Refused,
    /// A panic, an abort, a hang, too much memory, an unreadable error.
    Bad(String),
}

impl Outcome {
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    pub fn verdict(&self) -> Verdict {
        let text = self.stderr_text();
        if self.timed_out {
            return Verdict::Bad(format!("still running after {:.1} s", self.secs));
        }
        if let Some(sig) = self.signal {
            return Verdict::Bad(format!("killed by signal {sig}"));
        }
        if text.contains("panicked at") || self.code == Some(101) {
            return Verdict::Bad("panicked".into());
        }
        if self.max_rss_kib > RSS_LIMIT_KIB {
            return Verdict::Bad(format!("peak RSS {} MiB", self.max_rss_kib / 1024));
        }
        if self
            .stderr
            .iter()
            .any(|&b| b == 0x1b || (b < 0x20 && b != b'\n' && b != b'\t' && b != b'\r'))
        {
            return Verdict::Bad("raw control bytes in the error output".into());
        }
        if text.lines().any(|l| l.len() > 4096) {
            return Verdict::Bad("an error line longer than 4 KiB".into());
        }
        match self.code {
            Some(0) => Verdict::Ran,
            Some(3..=5) => Verdict::RanWithFailures,
            Some(1) if text.contains("scalescope: error: ") => Verdict::Refused,
            Some(2) if text.contains("error:") => Verdict::Refused,
            // mpi-check's documented status when a launch was not as planned
            // (its report is on stdout).
            Some(1) if self.args.first().is_some_and(|a| a == "mpi-check") => {
                Verdict::RanWithFailures
            }
            other => Verdict::Bad(format!(
                "exit status {other:?} without a clear error: {}",
                tail(&text)
            )),
        }
    }

    /// One line for a failure report.
    pub fn describe(&self) -> String {
        format!(
            "`scalescope {}`: {:?} ({:.1} s, {} MiB): {}",
            self.args.join(" "),
            self.verdict(),
            self.secs,
            self.max_rss_kib / 1024,
            tail(&self.stderr_text())
        )
    }
}

fn tail(text: &str) -> String {
    let last: String = text.lines().rev().take(2).collect::<Vec<_>>().join(" | ");
    last.chars().take(300).collect()
}
