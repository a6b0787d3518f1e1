//! `scalescope import`: a CSV curve becomes a results directory that analyze,
//! report and compare read like any sweep; the analysis of a one-repetition curve
//! is never confident and no finding contradicts the curve's own data.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn scalescope() -> Command {
    Command::cargo_bin("scalescope").unwrap()
}

const FIXTURE: &str = "tests/fixtures/import/q6-shape.csv";
const MACHINE: &str = "package:4 numa:1 core:18";

fn import(out: &std::path::Path) {
    scalescope()
        .args([
            "import",
            FIXTURE,
            "--synthetic",
            MACHINE,
            "--placement",
            "cores-first",
            "--out",
        ])
        .arg(out)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "7 runs at 7 thread counts imported",
        ));
}

#[test]
fn imported_curve_is_analysed_like_a_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("q6");
    import(&out);
    let results = out.join("results.jsonl");
    let text = scalescope()
        .arg("analyze")
        .arg(&results)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        text.status.success(),
        "{}",
        String::from_utf8_lossy(&text.stderr)
    );
    let v: Value = serde_json::from_slice(&text.stdout).unwrap();
    let a = &v["results"][0]["analysis"];
    assert_eq!(a["schema_version"], 3);
    let findings = a["findings"].as_array().unwrap();
    assert!(findings
        .iter()
        .any(|f| f["title"].as_str().unwrap().starts_with("imported from")));
    for f in findings {
        for key in ["kind", "boundary", "confidence", "evidence"] {
            assert!(!f[key].is_null(), "{key} missing in {f}");
        }
        // One repetition: never high.
        assert_ne!(f["confidence"]["label"], "high", "{f}");
    }
    // No finding contradicts the data: the curve reaches 19x at 64 and 64 is the
    // fastest point, so no accepted Amdahl limit below 19x and no accepted
    // retrograde USL.
    let c = &a["curves"][0];
    if c["amdahl"]["rejected"].is_null() {
        assert!(
            c["amdahl"]["max_speedup"]
                .as_f64()
                .is_none_or(|m| m >= 19.0),
            "{}",
            c["amdahl"]
        );
    }
    if c["usl"]["rejected"].is_null() {
        assert!(
            c["usl"]["peak_threads"].as_f64().is_none_or(|p| p >= 64.0),
            "{}",
            c["usl"]
        );
    }
    assert!(!findings
        .iter()
        .any(|f| f["title"].as_str().unwrap().contains("make it slower")
            || f["advice"]
                .as_str()
                .unwrap_or("")
                .contains("make it slower")));
    // report and compare read it too.
    scalescope()
        .arg("report")
        .arg(&results)
        .arg("--out")
        .arg(dir.path().join("r"))
        .assert()
        .success();
    // Nothing of the machine that measured it was checked: its virtualization is
    // unknown, never "bare metal" or "no sign of a hypervisor".
    let html = std::fs::read_to_string(dir.path().join("r/index.html")).unwrap();
    assert!(
        html.contains("virtualization: unknown (imported)"),
        "machine line"
    );
    assert!(html.contains("unknown (imported: nothing of that machine was checked)"));
    assert!(!html.contains("bare metal") && !html.contains("no sign of a hypervisor"));
    scalescope()
        .arg("compare")
        .arg(&results)
        .arg(&results)
        .assert()
        .success();
}

/// The report's tidy CSV goes back through `import`: the curve analysed again has the
/// same speedups (one run per point, carrying the point's median). The report holds two
/// result sets, one under a label with a comma (quoted in the file), so import asks
/// which one and takes the one named.
#[test]
fn the_reports_curves_csv_imports_back() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("q6,a"), dir.path().join("q6b"));
    import(&first);
    import(&second);
    let results = first.join("results.jsonl");
    let report = dir.path().join("r");
    scalescope()
        .arg("report")
        .arg(&results)
        .arg(second.join("results.jsonl"))
        .arg("--out")
        .arg(&report)
        .assert()
        .success();
    let again = dir.path().join("again");
    let import_back = || {
        let mut c = scalescope();
        c.arg("import")
            .arg(report.join("curves.csv"))
            .args(["--synthetic", MACHINE, "--out"])
            .arg(&again);
        c
    };
    import_back()
        .assert()
        .failure()
        .stderr(predicate::str::contains("rows of 2 result sets"));
    import_back()
        .arg("--results")
        .arg(&results)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "7 runs at 7 thread counts imported",
        ));
    let speedups = |results: &std::path::Path| -> Vec<f64> {
        let out = scalescope()
            .arg("analyze")
            .arg(results)
            .arg("--json")
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["results"][0]["analysis"]["curves"][0]["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["speedup"].as_f64().unwrap())
            .collect()
    };
    let before = speedups(&results);
    assert_eq!(before.len(), 7);
    assert_eq!(speedups(&again.join("results.jsonl")), before);
}

#[test]
fn import_needs_a_machine_and_names_bad_values() {
    let dir = tempfile::tempdir().unwrap();
    scalescope()
        .args(["import", FIXTURE, "--placement", "cores-first", "--out"])
        .arg(dir.path().join("a"))
        .assert()
        .failure()
        .stderr(predicate::str::contains("--synthetic SPEC"));
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "threads,seconds\n1,10\n2,-3\n").unwrap();
    scalescope()
        .arg("import")
        .arg(&bad)
        .args([
            "--synthetic",
            MACHINE,
            "--placement",
            "cores-first",
            "--out",
        ])
        .arg(dir.path().join("b"))
        .assert()
        .failure()
        .stderr(predicate::str::contains("bad.csv:3: seconds `-3`"));
    let big = dir.path().join("big.csv");
    std::fs::write(&big, "threads,seconds\n1,10\n500,1\n").unwrap();
    scalescope()
        .arg("import")
        .arg(&big)
        .args([
            "--synthetic",
            MACHINE,
            "--placement",
            "cores-first",
            "--out",
        ])
        .arg(dir.path().join("c"))
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "500 threads under cores-first do not fit",
        ))
        .stderr(predicate::str::contains("--oversubscribe"));
    // A curve past one thread per PU (users on a server) needs --oversubscribe.
    scalescope()
        .arg("import")
        .arg(&big)
        .args([
            "--synthetic",
            MACHINE,
            "--placement",
            "cores-first",
            "--oversubscribe",
            "--out",
        ])
        .arg(dir.path().join("d"))
        .assert()
        .success();
}

#[test]
fn analyze_runs_hop_inference_on_a_matrix_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("matrix.json");
    let doc = serde_json::json!({"kind": "scalescope.mem-matrix", "matrix": {
        "bandwidth_gb_per_s": [[20.0, 9.0], [8.0, 21.0]],
        "bandwidth_samples": [[[20.0, 19.5], [9.0, 8.8]], [[8.0, 7.9], [21.0, 20.6]]],
        "latency_ns": [[90.0, 150.0], [160.0, 91.0]],
        "slit": [[10, 21], [21, 10]]}});
    std::fs::write(&f, doc.to_string()).unwrap();
    let out = scalescope()
        .arg("analyze")
        .arg(&f)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["kind"], "scalescope.hop-inference");
    assert_eq!(v["bandwidth_hops"]["noise"]["repeats"], 2);
    assert_eq!(v["bandwidth_hops"]["max_hops"], 1);
    assert_eq!(v["latency_hops"]["noise"]["levels_from"], "slit");
    std::fs::write(&f, "{\"kind\": \"scalescope.mem-stream\"}").unwrap();
    scalescope()
        .arg("analyze")
        .arg(&f)
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "not a `scalescope.mem-matrix` document",
        ));
}

/// `import -q CSV` onto a four-core machine, compact, into `out`.
fn import_to(csv: &std::path::Path, out: &std::path::Path) -> Command {
    let mut c = scalescope();
    c.args(["import", "-q"]).arg(csv);
    c.args([
        "--synthetic",
        "package:1 core:4",
        "--placement",
        "compact",
        "--out",
    ]);
    c.arg(out);
    c
}

/// A CSV of short rows within the byte limit is millions of rows, each a run
/// record of about a kilobyte: it is refused at the first row past the limit,
/// quickly and in little memory, not imported into gigabytes. A quote left open
/// makes the rest of the file one cell: the message says so and does not quote
/// the file back.
#[test]
fn too_many_rows_and_an_open_quote_are_refused_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.csv");
    let mut text = String::from("threads,seconds\n");
    for i in 0..100_001 {
        text.push_str(if i % 2 == 0 { "1,1.0\n" } else { "2,0.6\n" });
    }
    std::fs::write(&big, &text).unwrap();
    let out = dir.path().join("o");
    let start = std::time::Instant::now();
    import_to(&big, &out)
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "big.csv:100002: more than the 100000 data rows an import takes",
        ));
    assert!(start.elapsed().as_secs() < 30, "{:?}", start.elapsed());
    assert!(!out.join("results.jsonl").exists());

    let open = dir.path().join("open.csv");
    let mut text = String::from("threads,seconds\n1,\"2.0\n");
    for _ in 0..1000 {
        text.push_str("2,1.0\n");
    }
    std::fs::write(&open, &text).unwrap();
    let o = import_to(&open, &dir.path().join("o2")).output().unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("open.csv:2: seconds `2.0...`") && err.contains("is a closing quote missing?"),
        "{err}"
    );
    assert!(err.len() < 400, "{} bytes: {err}", err.len());
}
