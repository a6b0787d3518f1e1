//! `analyze`, `compare` and `report` on results written by real sweeps.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn scalescope() -> Command {
    Command::cargo_bin("scalescope").unwrap()
}

fn sweep_sleep(out: &Path, secs: &str) {
    scalescope()
        .args([
            "sweep",
            "--quiet",
            "--threads",
            "1,2",
            "--reps",
            "4",
            "--warmup",
            "0",
            "--out",
        ])
        .arg(out)
        .args(["--", "sleep", secs])
        .assert()
        .success();
}

#[test]
fn compare_finds_the_significant_difference() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    sweep_sleep(&a, "0.15");
    sweep_sleep(&b, "0.3");
    let out = scalescope()
        .arg("compare")
        .arg(a.join("results.jsonl"))
        .arg(b.join("results.jsonl"))
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        let ratio = r["ratio"].as_f64().unwrap();
        assert!(
            (0.35..0.7).contains(&ratio),
            "B takes twice as long: {ratio}"
        );
        assert_eq!(r["significant"], true);
    }
    // The sampler's evidence of each point, side by side (every run was sampled).
    let ev = v["evidence"].as_array().unwrap();
    assert_eq!(ev.len(), 2, "{ev:?}");
    for e in ev {
        assert_eq!(e["a"]["threads"], e["b"]["threads"]);
        assert_eq!(
            (e["a"]["runs"].as_u64(), e["b"]["runs"].as_u64()),
            (Some(4), Some(4))
        );
    }
    scalescope()
        .arg("compare")
        .arg(a.join("results.jsonl"))
        .arg(a.join("results.jsonl"))
        .assert()
        .success()
        .stdout(predicate::str::contains("B/A"))
        .stdout(predicate::str::is_match(r"(?m)  no$").unwrap().count(2));
}

#[test]
fn analyze_prints_and_exports_json() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    sweep_sleep(&a, "0.1");
    assert!(
        a.join("report/index.html").is_file(),
        "every sweep writes its report"
    );
    let out = scalescope()
        .arg("analyze")
        .arg(a.join("results.jsonl"))
        .arg("--json")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema_version"], 3);
    let curve = &v["results"][0]["analysis"]["curves"][0];
    assert_eq!(curve["placement"], "cores-first");
    assert_eq!(curve["points"].as_array().unwrap().len(), 2);
    // sleep does not get faster with threads: efficiency about 50% at 2.
    let eff = curve["points"][1]["efficiency"].as_f64().unwrap();
    assert!((0.35..0.7).contains(&eff), "{eff}");
    scalescope()
        .arg("analyze")
        .arg(a.join("results.jsonl"))
        .assert()
        .success()
        .stdout(predicate::str::contains("Findings:"));
    // The directory a sweep wrote stands for its results.jsonl: the same JSON.
    let by_dir = scalescope()
        .arg("analyze")
        .arg(&a)
        .arg("--json")
        .output()
        .unwrap();
    assert!(by_dir.status.success());
    let w: Value = serde_json::from_slice(&by_dir.stdout).unwrap();
    assert_eq!(
        w["results"][0]["analysis"], v["results"][0]["analysis"],
        "a directory reads the same results"
    );
    // A directory with no results in it is refused with what to give instead.
    scalescope()
        .arg("analyze")
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "a directory with no results.jsonl",
        ));
}

#[test]
fn bad_results_files_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.jsonl");
    std::fs::write(&f, "{\"record\":\"header\"}\n").unwrap();
    scalescope()
        .arg("analyze")
        .arg(&f)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("bad.jsonl:1:"));
    scalescope()
        .args(["analyze", "/no/such/results.jsonl"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("/no/such/results.jsonl"));
    scalescope()
        .args(["report", "--out"])
        .arg(dir.path())
        .assert()
        .code(2);
}

/// Every subcommand and flag a finding may suggest (the consistency checker's
/// table) is one the command line accepts: the suggestion would parse.
#[test]
fn every_flag_a_finding_may_suggest_parses() {
    for (sub, flags) in scalescope_analysis::consistency::SUGGESTED_FLAGS {
        let words: Vec<&str> = sub.split(' ').collect();
        let help = scalescope().args(&words).arg("--help").output().unwrap();
        assert!(help.status.success(), "`scalescope {sub} --help` fails");
        let text = String::from_utf8_lossy(&help.stdout);
        for flag in *flags {
            assert!(
                text.contains(&format!("{flag} "))
                    || text.contains(&format!("{flag}\n"))
                    || text.contains(&format!("{flag}="))
                    || text.contains(&format!("{flag} <")),
                "`scalescope {sub}` has no {flag}:\n{text}"
            );
        }
    }
    // The issue's advice that did not parse: `analyze --baseline threads=2`.
    let help = scalescope().args(["analyze", "--help"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&help.stdout).contains("--baseline"));
}
