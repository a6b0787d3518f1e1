//! The content of the files `analyze`, `report`, `compare` and `predict` read back:
//! numbers a sweep could not have measured, and values a program printed that are
//! no number. (The attack harness covers each file argument's type and size; these
//! cases are about what a results file says.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::path::Path;

use assert_cmd::Command;

fn scalescope() -> Command {
    Command::cargo_bin("scalescope").unwrap()
}

/// A sweep of `sh -c SCRIPT` at 1 and 2 threads, one repetition each, with the
/// metric `rate` read from `rate: VALUE`.
fn sweep_printing(out: &Path, script: &str) {
    scalescope()
        .args(["sweep", "--quiet", "--threads", "1,2", "--reps", "1"])
        .args(["--warmup", "0", "--metric", r"rate=rate: (\S+)", "--out"])
        .arg(out)
        .args(["--", "sh", "-c", script])
        .assert()
        .success();
}

/// A program that prints `nan` for its metric reported no value: the run is kept
/// with its wall time (before, the metric was written as `null` and every reader
/// set the whole run aside as unreadable).
#[test]
fn a_metric_printed_as_nan_leaves_the_run_readable() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    sweep_printing(&out, "echo rate: nan; echo rate: inf >&2");
    let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    assert!(!text.contains("null}"), "{text}");
    let a = scalescope()
        .args(["analyze", "--quiet", "--basis", "time"])
        .arg(&out)
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(!stderr.contains("set aside"), "{stderr}");
}
