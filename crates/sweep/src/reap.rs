//! Making sure no process of a run outlives it, nor scalescope.
//!
//! Three layers, because each alone leaves a gap:
//! - the run's direct child gets `PR_SET_PDEATHSIG(SIGKILL)` and its own process
//!   group, so it dies with scalescope and the group can be killed at once;
//! - every run carries `SCALESCOPE_RUN_ID=<token>` in its environment, which its
//!   descendants inherit even when they leave the group with `setsid`; at the end
//!   of each run every process still carrying the token is killed ([`kill_marked`]);
//! - a guard process (`scalescope __guard TOKEN`, started once per session, in its
//!   own process group and ignoring terminal signals) waits for its stdin pipe to
//!   close. That happens when scalescope exits, however it ends, SIGKILL included;
//!   the guard then kills every process carrying the token and exits. Scalescope
//!   watches the guard in turn (end-of-file on the guard's stdout): a guard killed
//!   first is replaced at once, so killing the guard and then scalescope still
//!   leaves nothing (if no new guard can start, the runs' processes are killed
//!   then). A process-group or subreaper scheme was not chosen: the runs' own
//!   `wait4` figures and thread counts must stay the program's, with no
//!   intermediate process between scalescope and the run.
//!
//! A descendant that drops the variable from its environment *and* leaves the
//! process group is not found; a cgroup would find it, but needs a delegated
//! cgroup tree that an unprivileged user rarely has.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The environment variable that marks a run's processes.
pub const RUN_ID_VAR: &str = "SCALESCOPE_RUN_ID";

/// This process's token: its PID and start time, unique on the machine.
pub fn token() -> &'static str {
    static TOKEN: OnceLock<String> = OnceLock::new();
    TOKEN.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("{}.{nanos}", std::process::id())
    })
}

static GUARD_PROGRAM: OnceLock<PathBuf> = OnceLock::new();
static GUARD: Mutex<Option<Child>> = Mutex::new(None);

/// Names the executable that answers `__guard TOKEN` (the scalescope binary). Until
/// it is set (library tests), runs have no guard: the other two layers still work.
pub fn set_guard_program(path: PathBuf) {
    let _ = GUARD_PROGRAM.set(path);
}

/// Starts the guard once; a guard that cannot start is reported, not fatal.
pub fn ensure_guard() -> Result<(), String> {
    let Some(program) = GUARD_PROGRAM.get() else {
        return Ok(());
    };
    let mut guard = GUARD
        .lock()
        .map_err(|_| "guard lock poisoned".to_string())?;
    if guard
        .as_mut()
        .is_some_and(|g| matches!(g.try_wait(), Ok(None)))
    {
        return Ok(());
    }
    *guard = Some(spawn_guard(program)?);
    Ok(())
}

/// Starts a guard and a thread that watches it: the guard holds its stdout pipe
/// open for life, so end-of-file there means it died (SIGKILL included). Then
/// the watcher starts another at once, so a run's descendants are never left
/// without the layer that kills them when scalescope dies; if none can start,
/// it kills them now (the run ends as killed by a signal) rather than leave
/// them unguarded.
fn spawn_guard(program: &Path) -> Result<Child, String> {
    let mut child = Command::new(program)
        .args([OsString::from("__guard"), OsString::from(token())])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .env_remove(RUN_ID_VAR)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start the guard {}: {e}", program.display()))?;
    if let Some(mut out) = child.stdout.take() {
        std::thread::spawn(move || {
            let mut sink = [0u8; 64];
            while matches!(out.read(&mut sink), Ok(n) if n > 0) {}
            guard_lost();
        });
    }
    Ok(child)
}

/// The guard died while scalescope lives: reap it and start another; if that
/// fails, kill the runs' processes now.
fn guard_lost() {
    let Some(program) = GUARD_PROGRAM.get() else {
        return;
    };
    let Ok(mut guard) = GUARD.lock() else {
        return;
    };
    if let Some(mut old) = guard.take() {
        let _ = old.wait();
    }
    match spawn_guard(program) {
        Ok(child) => *guard = Some(child),
        Err(_) => {
            kill_marked(Path::new("/proc"), token(), Duration::from_secs(5));
        }
    }
}

/// The guard's whole life: ignore terminal signals, wait for stdin to close, kill
/// every process marked with `token`, exit.
pub fn guard_main(token: &str) -> u8 {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
        // SAFETY: SIG_IGN is a valid disposition; no handler code runs.
        unsafe {
            libc::signal(sig, libc::SIG_IGN);
        }
    }
    let mut sink = [0u8; 64];
    let mut stdin = std::io::stdin();
    while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
    kill_marked(Path::new("/proc"), token, Duration::from_secs(5));
    0
}

/// Kills (SIGKILL) every process whose environment holds `RUN_ID_VAR=token`, again
/// until none is left or `patience` runs out (a process may fork while we look).
/// Returns how many were killed.
pub fn kill_marked(proc_root: &Path, token: &str, patience: Duration) -> usize {
    let entry = format!("{RUN_ID_VAR}={token}");
    let start = Instant::now();
    let mut killed = std::collections::BTreeSet::new();
    loop {
        let found = marked(proc_root, entry.as_bytes());
        if found.is_empty() || start.elapsed() > patience {
            return killed.len();
        }
        for pid in found {
            // SAFETY: kill has no memory-safety preconditions.
            if unsafe { libc::kill(pid, libc::SIGKILL) } == 0 {
                killed.insert(pid);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// PIDs (not this process) whose `/proc/PID/environ` holds `entry` as one entry.
fn marked(proc_root: &Path, entry: &[u8]) -> Vec<i32> {
    let me = std::process::id() as i32;
    let Ok(dir) = std::fs::read_dir(proc_root) else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            let path = proc_root.join(pid.to_string()).join("environ");
            // Zombies and other users' processes read as empty or fail: not ours.
            let mut env = Vec::new();
            std::fs::File::open(path)
                .and_then(|f| f.take(1 << 20).read_to_end(&mut env))
                .is_ok()
                && env.split(|&b| b == 0).any(|e| e == entry)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marked_process_is_found_and_killed_an_unmarked_one_is_not() {
        let token = format!("test.{}", std::process::id());
        let spawn = |marked: bool| {
            let mut c = Command::new("sleep");
            c.arg("30");
            if marked {
                c.env(RUN_ID_VAR, &token);
            }
            c.spawn().unwrap()
        };
        let (mut a, mut b) = (spawn(true), spawn(false));
        // Give exec time to happen: environ is the new program's.
        std::thread::sleep(Duration::from_millis(100));
        let n = kill_marked(Path::new("/proc"), &token, Duration::from_secs(2));
        let a_status = a.wait().unwrap();
        assert_eq!(n, 1);
        assert!(!a_status.success());
        assert!(
            matches!(b.try_wait(), Ok(None)),
            "the unmarked one must live"
        );
        b.kill().unwrap();
        b.wait().unwrap();
    }
}
