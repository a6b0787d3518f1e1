//! Issue 14's crashing inputs for the workloads, through the binary: each ends in one
//! clear line naming the input and the estimate, quickly, instead of a panic, an
//! abort or the OOM killer. (The refusals assume a machine with less than 134 GiB
//! available, as every CI runner has.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::time::{Duration, Instant};

use assert_cmd::Command;
use predicates::prelude::*;

fn scalescope() -> Command {
    Command::cargo_bin("scalescope").unwrap()
}

fn refused(args: &[&str], says: &[&str]) {
    let t = Instant::now();
    let mut pred = predicate::str::contains("scalescope: error:").boxed();
    for s in says {
        pred = pred.and(predicate::str::contains(*s)).boxed();
    }
    scalescope().args(args).assert().code(1).stderr(pred);
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "{args:?} took {:?}",
        t.elapsed()
    );
}

#[test]
fn graphs_too_large_for_memory_are_refused_from_their_size() {
    let dir = tempfile::tempdir().unwrap();
    // 13 bytes naming vertex 4294967294: 17 GB of CSR once.
    let el = dir.path().join("e.el");
    std::fs::write(&el, "0 4294967294\n").unwrap();
    let el = el.to_str().unwrap();
    refused(
        &["graph", "pr", "--graph", el, "--threads", "1"],
        &["4294967295 vertices", "GiB", "MemAvailable", "--force"],
    );
    // A header of 2^64 - 1 rows: a panic (capacity overflow) once.
    let mtx = dir.path().join("big.mtx");
    std::fs::write(
        &mtx,
        "%%MatrixMarket matrix coordinate pattern general\n\
         18446744073709551615 18446744073709551615 1\n1 1\n",
    )
    .unwrap();
    refused(
        &[
            "graph",
            "count",
            "--pattern",
            "triangle",
            "--graph",
            mtx.to_str().unwrap(),
        ],
        &["big.mtx:2:", "32-bit ids"],
    );
    refused(
        &["graph", "bfs", "--graph", "kron:30", "--threads", "1"],
        &["kron:30", "424.0 GiB", "--force"],
    );
}

#[test]
fn tpch_at_a_scale_factor_past_memory_is_refused() {
    refused(
        &["tpch", "q1", "--sf", "1000", "--threads", "1"],
        &["scale factor 1000", "GiB", "MemAvailable"],
    );
}

#[test]
fn a_huge_pagerank_batch_is_a_threshold_not_a_reservation() {
    // `--batch 100000000000` reserved 1.6 TB per worker and aborted.
    scalescope()
        .args(["graph", "pr", "--graph", "kron:8", "--sync", "atomic"])
        .args(["--batch", "100000000000", "--threads", "1"])
        .assert()
        .success()
        .stdout(predicate::str::contains("verification: passed"));
}

/// Issue 33: numbers that aborted or panicked (`sync --table 1e12` aborted with
/// SIGABRT, `mem latency --max-size` had no estimate) are refused while parsing
/// with their range, or by a memory estimate before anything is allocated.
#[test]
fn huge_counts_and_sizes_are_refused_before_anything_is_allocated() {
    for (args, needle) in [
        (vec!["sync", "--table", "1e12"], "not a whole number"),
        (vec!["sync", "--updates", "1e12"], "not a whole number"),
        (
            vec!["sync", "--stripes", "18446744073709551615"],
            "out of range",
        ),
        (vec!["sync", "--reps", "0"], "out of range"),
        (
            vec!["mem", "latency", "--max-size", "1e300"],
            "unknown unit `e300`",
        ),
        (
            vec!["mem", "stream", "--sustain", "nan"],
            "not a number of seconds",
        ),
        (
            vec!["mem", "stream", "--sample-interval=-1"],
            "not a whole number",
        ),
    ] {
        let out = scalescope().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.lines().next().unwrap_or("").contains(needle),
            "{args:?}: {err}"
        );
    }
    refused(
        &[
            "sync",
            "--table",
            "4294967296",
            "--updates",
            "1000000000000",
            "--threads",
            "1",
        ],
        &["the sync study", "GiB", "MemAvailable", "--force"],
    );
    refused(
        &["mem", "latency", "--max-size", "1000TB"],
        &["latency ladder", "GiB", "MemAvailable", "--force"],
    );
}

/// A results header naming a timeout no flag could give (an edited file, or one
/// from elsewhere) is refused on `--resume`, never a panic: 1e19 s once panicked
/// in every later resume of its directory.
#[test]
fn a_resume_refuses_a_header_with_a_timeout_out_of_range() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
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
        .args(["--timeout", "60", "--out"])
        .arg(&out)
        .args(["--", "true"])
        .assert()
        .success();
    let file = out.join("results.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let header: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    for (field, value) in [("timeout_secs", 1e19), ("kill_grace_secs", 1e300)] {
        let mut h = header.clone();
        h[field] = serde_json::json!(value);
        lines[0] = h.to_string();
        lines.truncate(1);
        std::fs::write(&file, lines.join("\n") + "\n").unwrap();
        let o = scalescope()
            .args(["sweep", "--quiet", "--resume", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(o.status.code(), Some(1), "{field}: {err}");
        assert!(
            err.contains("out of range") && err.contains("cannot be resumed"),
            "{field}: {err}"
        );
    }
}
