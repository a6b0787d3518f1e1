//! `scalescope graph count` as a user meets it.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn scalescope() -> Command {
    Command::cargo_bin("scalescope").unwrap()
}

#[test]
fn counts_are_exact_and_verified_on_small_graphs() {
    let out = scalescope()
        .args([
            "graph",
            "count",
            "--pattern",
            "c4",
            "--induced",
            "--graph",
            "tests/fixtures/graphs/lesmis.el",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["count"], 45);
    assert_eq!(
        v["verified"],
        Value::Null,
        "lesmis has 77 vertices, past brute force"
    );
    let out = scalescope()
        .args([
            "graph",
            "count",
            "--pattern",
            "diamond",
            "--graph",
            "kron:5",
            "--threads",
            "2",
            "--json",
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verified"], true);
    assert!(
        v["graph"]["bytes_per_edge"].as_f64().unwrap() > 0.0 && v["seconds"].as_f64().is_some()
    );
}

#[test]
fn malformed_files_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.el");
    std::fs::write(&f, "# comment\n0 1\n1 two\n").unwrap();
    scalescope()
        .args(["graph", "count", "--pattern", "triangle", "--graph"])
        .arg(&f)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "bad.el:3: target `two` is not a non-negative integer",
        ));
    scalescope()
        .args([
            "graph",
            "count",
            "--pattern",
            "pentagon",
            "--graph",
            "kron:4",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("unknown pattern `pentagon`"));
    scalescope()
        .args([
            "graph",
            "count",
            "--pattern",
            "k4",
            "--induced",
            "--graph",
            "kron:4",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("--induced changes only"));
    scalescope()
        .args(["graph", "count", "--pattern", "k4", "--graph", "kron:99"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("scale must be 1-30"));
}
