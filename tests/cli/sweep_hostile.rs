//! Issue 14's sweep acceptance, with real processes: scalescope killed with SIGKILL
//! or SIGHUP mid-run leaves no process of the run (a grandchild that called `setsid`
//! included); two writers on one `--out` never double-count; a resume with other run
//! settings is refused; `--shell` placeholders are quoted; output is streamed into
//! capped logs, non-UTF-8 bytes do not hide metrics, and a missing metric fails the
//! run.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn scalescope() -> Command {
    Command::cargo_bin("scalescope").unwrap()
}

fn runs(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    text.lines()
        .skip(1)
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect()
}

/// PIDs of live (not zombie) processes whose command line contains `marker`.
fn alive(marker: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if name.parse::<u32>().is_err() {
            continue;
        }
        let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|s| s.trim_start().starts_with('Z'));
        if !zombie && String::from_utf8_lossy(&cmdline).contains(marker) {
            out.push(format!(
                "{name}: {}",
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            ));
        }
    }
    out
}

/// Starts a sweep whose run is a 20 s shell that leaves a plain child and a `setsid`
/// grandchild, waits until all three are alive, sends `signal` to scalescope, and
/// checks that 1 s later none is.
fn killed_mid_run_leaves_nothing(signal: i32, marker: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    let script = format!("setsid sleep {marker} & sleep {marker} & sleep {marker}; wait");
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("scalescope"))
        .args([
            "sweep",
            "--quiet",
            "--threads",
            "1",
            "--reps",
            "1",
            "--warmup",
            "0",
        ])
        .arg("--out")
        .arg(&out)
        .args(["--", "sh", "-c", &script])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while alive(marker).len() < 3 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the run did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(child.id() as i32, signal) };
    let _ = child.wait();
    std::thread::sleep(Duration::from_secs(1));
    let left = alive(marker);
    assert!(
        left.is_empty(),
        "1 s after the signal, still alive: {left:?}"
    );
}

#[test]
fn sigkill_of_scalescope_leaves_no_process_of_the_run() {
    killed_mid_run_leaves_nothing(libc::SIGKILL, "20.0141");
}

#[test]
fn sighup_of_scalescope_leaves_no_process_of_the_run() {
    killed_mid_run_leaves_nothing(libc::SIGHUP, "20.0142");
}

#[test]
fn two_writers_on_one_out_never_double_count() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    let sweep = |resume: bool| {
        let mut c = StdCommand::new(assert_cmd::cargo::cargo_bin("scalescope"));
        c.args(["sweep", "--quiet"]);
        if resume {
            c.arg("--resume");
        } else {
            c.args(["--threads", "1,2", "--reps", "4", "--warmup", "0"]);
        }
        c.arg("--out").arg(&out);
        if !resume {
            c.args(["--", "sleep", "0.05"]);
        }
        c.stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let first = sweep(false);
    std::thread::sleep(Duration::from_millis(150));
    let seconds: Vec<_> = (0..2).map(|_| sweep(true)).collect();
    let mut refused = 0;
    for c in seconds {
        let o = c.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        if !o.status.success() {
            assert!(err.contains("PID"), "refusal names the holder: {err}");
            refused += 1;
        }
    }
    assert!(first.wait_with_output().unwrap().status.success());
    assert!(refused >= 1, "a concurrent writer must be refused");
    // Whatever the interleaving, finish, then count.
    scalescope()
        .args(["sweep", "--quiet", "--resume", "--out"])
        .arg(&out)
        .assert()
        .success();
    let mut per_point: BTreeMap<u64, usize> = BTreeMap::new();
    for r in runs(&out) {
        *per_point.entry(r["threads"].as_u64().unwrap()).or_default() += 1;
    }
    assert_eq!(per_point, BTreeMap::from([(1, 4), (2, 4)]));
    let analysis = scalescope()
        .args(["analyze", "--json"])
        .arg(out.join("results.jsonl"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&analysis.stdout);
    let v: Value = serde_json::from_str(&text).unwrap();
    let points = v["results"][0]["analysis"]["curves"][0]["points"]
        .as_array()
        .unwrap();
    assert_eq!(points.len(), 2);
    for p in points {
        assert_eq!(p["runs"], 4, "{p}");
    }
}

#[test]
fn a_resume_with_other_run_settings_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    scalescope()
        .args([
            "sweep",
            "--quiet",
            "--threads",
            "1",
            "--reps",
            "1",
            "--warmup",
            "0",
        ])
        .args(["--timeout", "5", "--env", "A=1", "--out"])
        .arg(&out)
        .args(["--", "true"])
        .assert()
        .success();
    for (flag, value, says) in [
        ("--env", "A=2", "--env: given [A=2], recorded [A=1]"),
        ("--timeout", "6", "--timeout: given 6 s, recorded 5 s"),
        ("--kill-grace", "9", "--kill-grace: given 9 s, recorded 2 s"),
    ] {
        scalescope()
            .args(["sweep", "--quiet", "--resume", flag, value, "--out"])
            .arg(&out)
            .assert()
            .failure()
            .stderr(predicate::str::contains(says));
    }
    // The recorded values themselves are no conflict.
    scalescope()
        .args(["sweep", "--quiet", "--resume", "--timeout", "5", "--out"])
        .arg(&out)
        .assert()
        .success();
}

#[test]
fn shell_placeholders_are_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    scalescope()
        .args([
            "sweep",
            "--quiet",
            "--shell",
            "--threads",
            "2",
            "--reps",
            "1",
        ])
        .args(["--warmup", "0", "--metric", "n=n=([0-9]+)", "--out"])
        .arg(&out)
        .args(["--", "printf '%s\\n' {thread_cpus}; echo n={threads}"])
        .assert()
        .success();
    let r = &runs(&out)[0];
    assert_eq!(r["status"], "ok", "{r}");
    let log = std::fs::read_to_string(out.join(r["stdout_log"].as_str().unwrap())).unwrap();
    assert_eq!(
        log.lines().count(),
        2,
        "one line for `0;1`, not a split command: {log}"
    );
    assert!(log.starts_with("0;1\n") || log.contains(';'), "{log}");
}

#[test]
fn output_is_streamed_capped_and_read_past_bad_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    // 80 MB of output (past the 64 MiB log cap), one non-UTF-8 byte, the metric last.
    let script = "head -c 80000000 /dev/zero; printf '\\n\\377 rate 42.5\\n'";
    scalescope()
        .args([
            "sweep",
            "--quiet",
            "--shell",
            "--threads",
            "1",
            "--reps",
            "1",
        ])
        .args(["--warmup", "0", "--metric", "rate=rate ([0-9.]+)", "--out"])
        .arg(&out)
        .args(["--", script])
        .assert()
        .success();
    let r = &runs(&out)[0];
    assert_eq!(r["status"], "ok", "{r}");
    assert_eq!(r["metrics"]["rate"], 42.5);
    let log = out.join(r["stdout_log"].as_str().unwrap());
    let len = std::fs::metadata(&log).unwrap().len();
    assert!(len < (64 << 20) + 200, "log of {len} bytes is not capped");
}

#[test]
fn a_missing_metric_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    scalescope()
        .args([
            "sweep",
            "--quiet",
            "--threads",
            "1",
            "--reps",
            "1",
            "--warmup",
            "0",
        ])
        .args(["--metric", "rate=rate ([0-9.]+)", "--out"])
        .arg(&out)
        .args(["--", "echo", "no figure here"])
        .assert()
        .code(3);
    let r = &runs(&out)[0];
    assert_eq!(r["status"], "failed");
    assert!(
        r["error"].as_str().unwrap().contains("metric not found"),
        "{r}"
    );
}
