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
