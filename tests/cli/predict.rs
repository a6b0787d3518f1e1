//! `scalescope predict`: a curve measured on one node without SMT, asked about two
//! packages with SMT: the JSON is versioned and marked as a prediction, the points
//! beyond the calibration say why, the assumptions are sentences, the report's
//! chart is titled as a prediction; bad input is named.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn scalescope() -> Command {
    Command::cargo_bin("scalescope").unwrap()
}

const TARGET: &str = "package:2 numa:1 core:8 pu:2";

/// A curve on 1 x 8 cores, two repetitions per point, imported.
fn calibration(dir: &Path) -> PathBuf {
    let csv = dir.join("c.csv");
    std::fs::write(
        &csv,
        "threads,seconds\n1,100\n1,101\n2,51\n2,50.5\n3,34.5\n3,34.8\n4,26.5\n4,26.9\n6,18.9\n6,19.2\n8,15.5\n8,15.2\n",
    )
    .unwrap();
    let out = dir.join("runs");
    scalescope()
        .args(["import"])
        .arg(&csv)
        .args([
            "--synthetic",
            "package:1 numa:1 core:8",
            "--placement",
            "cores-first",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    out.join("results.jsonl")
}

#[test]
fn a_bigger_machine_is_predicted_with_its_extrapolations_marked() {
    let dir = tempfile::tempdir().unwrap();
    let from = calibration(dir.path());
    let out = scalescope()
        .args(["predict", "--json", "--to", TARGET, "--from"])
        .arg(&from)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["kind"], "scalescope.prediction");
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["is_prediction"], true);
    let cf = v["curves"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["placement"] == "cores-first")
        .unwrap();
    let at = |t: u64| {
        cf["points"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["threads"] == t)
            .unwrap()
            .clone()
    };
    assert_eq!(at(8)["extrapolated"].as_array().unwrap().len(), 0);
    let far = at(32)["extrapolated"].to_string();
    assert!(far.contains("smt") && far.contains("remote"), "{far}");
    let (lo, hi) = (
        at(32)["ci95"][0].as_f64().unwrap(),
        at(32)["ci95"][1].as_f64().unwrap(),
    );
    assert!(lo < hi, "{lo} {hi}");
    assert!(v["assumptions"].to_string().contains("no SMT siblings"));
    // Every explanation the calibration cannot rule out, weighted, best first.
    let ex = v["explanations"].as_array().unwrap();
    assert!(!ex.is_empty(), "{v}");
    let total: f64 = ex.iter().map(|e| e["weight"].as_f64().unwrap()).sum();
    assert!((total - 1.0).abs() < 1e-9, "{ex:?}");
    assert_eq!(
        at(32)["explanations"].as_array().unwrap().len(),
        ex.len(),
        "{ex:?}"
    );
    assert!(v["recommendation"]["sentence"]
        .as_str()
        .unwrap()
        .contains("predicted best"));
}

#[test]
fn text_and_report_say_it_is_a_prediction() {
    let dir = tempfile::tempdir().unwrap();
    let from = calibration(dir.path());
    let report = dir.path().join("pred");
    scalescope()
        .args([
            "predict",
            "--synthetic",
            TARGET,
            "--node-gbps",
            "40",
            "--from",
        ])
        .arg(&from)
        .arg("--out")
        .arg(&report)
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "PREDICTION (not a measurement)",
        ))
        .stdout(predicate::str::contains("Recommendation: predicted best"))
        .stdout(predicate::str::contains("40.0 GB/s"));
    let svg = std::fs::read_to_string(report.join("prediction.svg")).unwrap();
    assert!(svg.contains("PREDICTION (not measured)") && svg.contains("band95"));
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(html.contains("Prediction (not measured)"));
}

#[test]
fn bad_input_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let from = calibration(dir.path());
    scalescope()
        .args(["predict", "--from"])
        .arg(&from)
        .assert()
        .failure()
        .stderr(predicate::str::contains("name the target machine"));
    let bogus = dir.path().join("bogus.json");
    std::fs::write(&bogus, r#"{"kind": "scalescope.mem-latency"}"#).unwrap();
    scalescope()
        .args(["predict", "--to", TARGET, "--from"])
        .arg(&from)
        .arg("--ceilings")
        .arg(&bogus)
        .assert()
        .failure()
        .stderr(
            predicate::str::contains("bogus.json").and(predicate::str::contains("mem-latency")),
        );
    scalescope()
        .args(["predict", "--to", TARGET, "--node-gbps", "0", "--from"])
        .arg(&from)
        .assert()
        .failure()
        .stderr(predicate::str::contains("--node-gbps"));
    scalescope()
        .args(["predict", "--to", "package:0 core:x", "--from"])
        .arg(&from)
        .assert()
        .failure()
        .stderr(
            predicate::str::contains("loading the target machine `package:0 core:x`")
                .and(predicate::str::contains("(set by --to)")),
        );
}
