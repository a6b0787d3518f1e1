//! Evidence beside every run: a sweep of the memory-bound STREAM workload records,
//! for every run, CPU and page-placement totals and a series file; `analyze`,
//! `report` and `compare` show them; `--sample-interval 0` turns sampling off.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::path::Path;

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

fn stream_sweep(out: &Path, interval: &str) {
    scalescope()
        .args(["sweep", "--quiet", "--workload", "stream"])
        .args(["--param", "size=32MiB", "--param", "ntimes=6"])
        .args(["--threads", "1,2", "--reps", "1", "--warmup", "0"])
        .args(["--sample-interval", interval, "--out"])
        .arg(out)
        .assert()
        .success();
}

#[test]
fn every_run_of_a_stream_sweep_has_cpu_and_page_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    stream_sweep(&out, "20");
    let records = runs(&out);
    assert_eq!(records.len(), 2);
    for r in &records {
        let e = &r["evidence"];
        assert!(e["samples"].as_u64().unwrap() >= 1, "{e}");
        assert_eq!(e["interval_ms"], 20.0);
        assert_eq!(e["cpu"]["state"], "measured", "{e}");
        assert_eq!(e["pages"]["state"], "measured", "{e}");
        // Three 32 MiB arrays are resident at the peak, on this machine's nodes.
        let peak: u64 = e["pages"]["value"]["peak_bytes_per_node"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert!(peak >= 96 << 20, "peak resident {peak} bytes");
        assert_eq!(e["numastat"]["state"], "measured", "{e}");
        // A source or its reason, never a guess.
        let bw = &e["bandwidth"];
        assert!(bw["state"] == "measured" || bw["value"].as_str().unwrap().contains("resctrl MBM"));
        let threads = e["threads"].as_array().unwrap();
        assert!(
            threads.len() >= r["threads"].as_u64().unwrap() as usize,
            "{e}"
        );
        let series_file = out.join(e["series_file"].as_str().unwrap());
        let series: Value =
            serde_json::from_str(&std::fs::read_to_string(&series_file).unwrap()).unwrap();
        assert_eq!(series["schema"], "scalescope-series");
        assert_eq!(series["schema_version"], 1);
        assert_eq!(
            series["samples"].as_array().unwrap().len() as u64,
            e["samples"].as_u64().unwrap()
        );
    }
    assert!(out.join("report/over-time.svg").exists());
    assert!(out.join("report/cross-node.svg").exists());
    let results = out.join("results.jsonl");
    scalescope()
        .arg("analyze")
        .arg(&results)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "evidence (medians over each point's runs)",
        ))
        .stdout(predicate::str::contains("resident MiB per node"));
    scalescope()
        .arg("compare")
        .arg(&results)
        .arg(&results)
        .assert()
        .success()
        .stdout(predicate::str::contains("evidence, A vs B"));
}

#[test]
fn sampling_can_be_turned_off() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    stream_sweep(&out, "0");
    for r in runs(&out) {
        assert!(r.get("evidence").is_none(), "{r}");
    }
    assert!(!out.join("series").exists());
}
