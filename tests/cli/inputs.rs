//! Inputs prepared once and answers checked once: the command line and a sweep give
//! one verdict, a corrupt cache is rebuilt (never used), and `--verify` decides
//! which runs are checked. Small inputs only (kron:10, SF 0.01).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

fn scalescope() -> Command {
    Command::cargo_bin("scalescope").unwrap()
}

/// `graph count` as JSON and its exit status.
fn count(args: &[&str]) -> (Value, i32) {
    let out = scalescope()
        .args(["graph", "count", "--pattern", "triangle", "--json"])
        .args(args)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap();
    (v, out.status.code().unwrap())
}

/// The run records of a finished sweep.
fn runs(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["record"] == "run")
        .collect()
}

fn sweep(out: &Path, extra: &[&str]) {
    scalescope()
        .args([
            "sweep",
            "--workload",
            "graph",
            "--param",
            "graph=kron:10",
            "--param",
            "pattern=triangle",
            "--threads",
            "1",
            "--reps",
            "3",
            "--warmup",
            "0",
            "--sample-interval",
            "0",
            "--out",
        ])
        .arg(out)
        .args(extra)
        .assert()
        .success();
}

#[test]
fn graph_count_and_the_same_sweep_point_give_one_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let (cli, code) = count(&["--graph", "kron:10", "--threads", "1"]);
    assert_eq!(cli["verdict"], "passed", "{cli}");
    assert_eq!(cli["setup"]["input"], "built in memory");
    let out = dir.path().join("sweep");
    sweep(&out, &[]);
    let records = runs(&out);
    assert_eq!(records.len(), 3);
    for r in &records {
        assert_eq!(r["exit_code"], code, "{r}");
        assert_eq!(r["status"], "ok");
        let input = r["setup"]["input"].as_str().unwrap();
        assert!(input.starts_with("cache "), "{input}");
        assert!(r["setup"]["load_secs"].as_f64().is_some());
        // The sweep checked the file in full once; each run, finding it unchanged,
        // checks its header and offsets only.
        let check = r["setup"]["input_check"].as_str().unwrap();
        assert!(check.contains("checked by the sweep"), "{check}");
    }
    // The answer was computed once, beside the cached graph.
    let cache = out.join("inputs");
    let answers: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".answers.json"))
        .collect();
    assert_eq!(answers.len(), 1);
    let book: Value = serde_json::from_slice(&std::fs::read(answers[0].path()).unwrap()).unwrap();
    assert_eq!(
        book["answers"]["count Triangle induced=false"]["value"],
        cli["count"]
    );
    // The command reading the sweep's cache gives the same verdict again.
    let (cached, code2) = count(&[
        "--graph",
        "kron:10",
        "--input-cache",
        cache.to_str().unwrap(),
    ]);
    assert_eq!(
        (cached["verdict"].clone(), code2),
        (cli["verdict"].clone(), code)
    );
    assert!(cached["setup"]["input"]
        .as_str()
        .unwrap()
        .starts_with("cache "));
    // A command outside a sweep checks the whole file.
    let check = cached["setup"]["input_check"].as_str().unwrap();
    assert!(check.starts_with("full"), "{check}");
}

fn corrupt_the(dir: &Path, ext: &str) -> std::path::PathBuf {
    let file = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == ext))
        .unwrap();
    let mut bytes = std::fs::read(&file).unwrap();
    let at = bytes.len() - 64;
    bytes[at] ^= 0x40;
    std::fs::write(&file, &bytes).unwrap();
    file
}

#[test]
fn a_corrupt_cache_is_rebuilt_never_used() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().to_str().unwrap();
    let (first, _) = count(&["--graph", "kron:10", "--input-cache", cache]);
    assert!(first["setup"]["input"]
        .as_str()
        .unwrap()
        .starts_with("built and cached"));
    corrupt_the(dir.path(), "csr");
    let (again, code) = count(&["--graph", "kron:10", "--input-cache", cache]);
    let input = again["setup"]["input"].as_str().unwrap();
    assert!(
        input.starts_with("rebuilt and cached") && input.contains("checksum mismatch"),
        "{input}"
    );
    assert_eq!((again["count"].clone(), code), (first["count"].clone(), 0));
    let (third, _) = count(&["--graph", "kron:10", "--input-cache", cache]);
    assert!(third["setup"]["input"]
        .as_str()
        .unwrap()
        .starts_with("cache "));

    let q6 = || -> Value {
        let out = scalescope()
            .args([
                "tpch",
                "q6",
                "--sf",
                "0.01",
                "--threads",
                "2",
                "--repeat",
                "1",
                "--json",
                "--input-cache",
                cache,
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let first = q6();
    assert!(first["setup"]["input"]
        .as_str()
        .unwrap()
        .starts_with("built and cached"));
    assert_eq!(first["verdict"], "passed");
    corrupt_the(dir.path(), "cols");
    let again = q6();
    let input = again["setup"]["input"].as_str().unwrap();
    assert!(
        input.starts_with("rebuilt and cached") && input.contains("checksum mismatch"),
        "{input}"
    );
    assert_eq!(
        (again["rows"].clone(), again["verdict"].clone()),
        (first["rows"].clone(), "passed".into())
    );
    let third = q6();
    assert!(third["setup"]["input"]
        .as_str()
        .unwrap()
        .starts_with("cache "));
    assert!(third["setup"]["first_touch_secs"].as_f64().is_some());
}

#[test]
fn verify_first_checks_one_run_and_none_checks_none() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("first");
    sweep(&out, &["--verify", "first"]);
    let codes: Vec<Value> = runs(&out).iter().map(|r| r["exit_code"].clone()).collect();
    assert_eq!(codes, [0, 5, 5]);
    let note = runs(&out)[1]["error"].as_str().unwrap().to_string();
    assert!(note.contains("verify policy: first"), "{note}");
    let out = dir.path().join("none");
    sweep(&out, &["--verify", "none"]);
    assert!(runs(&out)
        .iter()
        .all(|r| r["exit_code"] == 5 && r["status"] == "ok"));
}

#[test]
fn a_csr_the_user_names_is_checked_once_and_mapped_by_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let csr = dir.path().join("k10.csr");
    scalescope()
        .args(["graph", "export", "--graph", "kron:10", "--out"])
        .arg(&csr)
        .assert()
        .success();
    let out = dir.path().join("sweep");
    let graph = format!("graph={}", csr.display());
    scalescope()
        .args(["sweep", "--workload", "graph", "--param", &graph])
        .args([
            "--param",
            "pattern=triangle",
            "--threads",
            "1",
            "--reps",
            "2",
        ])
        .args(["--warmup", "0", "--sample-interval", "0", "--out"])
        .arg(&out)
        .assert()
        .success();
    let records = runs(&out);
    assert_eq!(records.len(), 2);
    for r in &records {
        assert_eq!(r["status"], "ok", "{r}");
        let input = r["setup"]["input"].as_str().unwrap();
        assert!(input.starts_with("cache "), "{input}");
        let check = r["setup"]["input_check"].as_str().unwrap();
        assert!(check.contains("checked by the sweep"), "{check}");
    }
}

#[test]
fn a_sweep_generates_the_is_keys_once_and_its_runs_map_them() {
    // Issue 36: NAS IS generated its keys in every run. The sweep now generates and
    // caches them once before its runs; every run maps them and spends no time
    // generating (no `build_secs` in its set-up), checking only the header.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("is");
    scalescope()
        .args(["sweep", "--workload", "is", "--param", "class=S"])
        .args(["--threads", "1,2", "--reps", "2", "--warmup", "0"])
        .args(["--sample-interval", "0", "--out"])
        .arg(&out)
        .assert()
        .success();
    let records = runs(&out);
    assert_eq!(records.len(), 4);
    for r in &records {
        assert_eq!(
            (r["status"].clone(), r["exit_code"].clone()),
            ("ok".into(), 0.into()),
            "{r}"
        );
        let setup = &r["setup"];
        assert!(
            setup.get("build_secs").is_none_or(Value::is_null),
            "{setup}"
        );
        let input = setup["input"].as_str().unwrap();
        assert!(input.starts_with("cache "), "{input}");
        let check = setup["input_check"].as_str().unwrap();
        assert!(check.contains("checked by the sweep"), "{check}");
        assert!(setup["load_secs"].as_f64().unwrap() < 1.0, "{setup}");
    }
    let keys: Vec<_> = std::fs::read_dir(out.join("inputs"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".keys"))
        .collect();
    assert_eq!(keys.len(), 1, "one keys file for the sweep");
}
