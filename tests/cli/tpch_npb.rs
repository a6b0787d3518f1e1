//! TPC-H and NPB as a user runs them: exact answers at SF 0.01 and 0.1, a .tbl round
//! trip, NPB classes S and W verified, bad input refused; and both as sweep workloads.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::io::Write;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn scalescope() -> Command {
    Command::cargo_bin("scalescope").unwrap()
}

fn json(args: &[&str]) -> Value {
    let out = scalescope().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn fixture_rows(query: &str, sf: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/tpch.json"
        ))
        .unwrap(),
    )
    .unwrap();
    serde_json::from_value(v[query][sf].clone()).unwrap()
}

#[test]
fn q1_and_q6_equal_the_reference_at_sf_0_01_and_0_1() {
    // Every layout and thread count at SF 0.01; at SF 0.1 (600k rows) two of them.
    let cases = [
        ("0.01", "1", "numa"),
        ("0.01", "2", "numa"),
        ("0.01", "2", "naive"),
        ("0.1", "2", "numa"),
        ("0.1", "1", "naive"),
    ];
    for (sf, threads, layout) in cases {
        {
            {
                let v = json(&[
                    "tpch",
                    "q1",
                    "--sf",
                    sf,
                    "--threads",
                    threads,
                    "--layout",
                    layout,
                    "--repeat",
                    "1",
                    "--json",
                ]);
                assert_eq!(v["verified"], true, "{}", v["verification"]);
                let expected = fixture_rows("q1", sf);
                let rows = v["rows"].as_array().unwrap();
                assert_eq!(rows.len(), expected.len() - 1);
                for (r, e) in rows.iter().zip(&expected[1..]) {
                    let e: Vec<&str> = e.split('|').collect();
                    // Sums and counts exactly as the reference prints them.
                    for (k, col) in [
                        (2, "sum_qty"),
                        (3, "sum_base_price"),
                        (4, "sum_disc_price"),
                        (5, "sum_charge"),
                        (9, "count_order"),
                    ] {
                        assert_eq!(r[col], e[k], "SF {sf} {col}");
                    }
                }
                let v = json(&[
                    "tpch",
                    "q6",
                    "--sf",
                    sf,
                    "--threads",
                    threads,
                    "--layout",
                    layout,
                    "--repeat",
                    "1",
                    "--json",
                ]);
                assert_eq!(v["rows"][0]["revenue"], fixture_rows("q6", sf)[1]);
                assert!(
                    v["rows_per_s"].as_f64().unwrap() > 0.0
                        && v["scanned_bytes_per_s"].as_f64().unwrap() > 0.0
                );
            }
        }
    }
}

#[test]
fn tbl_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lineitem.tbl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for li in tpchgen::generators::LineItemGenerator::new(0.01, 1, 1).iter() {
        writeln!(f, "{li}").unwrap();
    }
    drop(f);
    for q in ["q1", "q6"] {
        let v = json(&[
            "tpch",
            q,
            "--sf",
            "0.01",
            "--tbl",
            path.to_str().unwrap(),
            "--threads",
            "2",
            "--repeat",
            "1",
            "--json",
        ]);
        assert_eq!(v["verified"], true, "{q}: {}", v["verification"]);
        assert_eq!(v["lineitem_rows"], 60_175);
    }
    let bad = dir.path().join("bad.tbl");
    std::fs::write(&bad, "1|155190|7706|1|17|21168.23|0.04|0.02|N|O|1996-03-13|1996-02-12|1996-03-22|DELIVER|TRUCK|x|\n1|1|1|1|99|1.00|0.04|0.02|N|O|1996-03-13|a|b|c|d|e|\n").unwrap();
    scalescope()
        .args(["tpch", "q1", "--tbl", bad.to_str().unwrap()])
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("bad.tbl:2").and(predicate::str::contains(
                "field 5 `99` is not a quantity 1-50",
            )),
        );
}

#[test]
fn unreferenced_scale_factors_say_so_and_bad_ones_are_refused() {
    let out = scalescope()
        .args([
            "tpch",
            "q1",
            "--sf",
            "0.002",
            "--threads",
            "1",
            "--repeat",
            "1",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(5),
        "the unavailable verdict's status"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verified"], false);
    assert_eq!(v["verdict"], "unavailable");
    assert!(v["verification"]
        .as_str()
        .unwrap()
        .starts_with("no reference answer"));
    // Q6 off the reference sizes is checked row by row as lineitem is generated.
    let v = json(&[
        "tpch",
        "q6",
        "--sf",
        "0.002",
        "--threads",
        "1",
        "--repeat",
        "1",
        "--json",
    ]);
    assert_eq!(v["verdict"], "passed", "{v}");
    assert!(v["verification"].as_str().unwrap().contains("row by row"));
    scalescope()
        .args(["tpch", "q1", "--sf", "0"])
        .assert()
        .code(2) // checked while parsing, like every value a flag takes
        .stderr(predicate::str::contains("scale factor 0"));
    scalescope().args(["tpch", "q9"]).assert().code(2);
}

#[test]
fn npb_classes_s_and_w_verify() {
    for kernel in ["ep", "is", "ft"] {
        for class in ["S", "W"] {
            let v = json(&["npb", kernel, "--class", class, "--threads", "2", "--json"]);
            assert_eq!(v["verified"], true, "{kernel} {class}");
            assert!(v["mops"].as_f64().unwrap() > 0.0);
        }
    }
    scalescope()
        .args(["npb", "ep", "--class", "Z"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("`Z` is not one of"));
}

#[test]
fn tpch_and_is_run_as_sweep_workloads() {
    let dir = tempfile::tempdir().unwrap();
    for (name, params) in [
        ("tpch", vec!["query=q6", "sf=0.01", "repeat=2"]),
        ("is", vec!["class=S"]),
    ] {
        let out = dir.path().join(name);
        let mut cmd = scalescope();
        cmd.args([
            "sweep",
            "--quiet",
            "--workload",
            name,
            "--threads",
            "1,2",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--out",
        ])
        .arg(&out);
        for p in &params {
            cmd.args(["--param", p]);
        }
        let done = cmd.output().unwrap();
        assert!(done.status.success(), "{name}: {done:?}");
        if name == "tpch" {
            // The query is a sliver of each run (input, workers, check around it):
            // the run table and the analysis both use the figure of merit, and the
            // reason is said once.
            let stdout = String::from_utf8_lossy(&done.stdout);
            assert!(
                stdout.starts_with("speedup and eff: figure of merit `"),
                "{stdout}"
            );
            assert_eq!(stdout.matches("the timed part is").count(), 1, "{stdout}");
            assert!(
                stdout.contains("performance: figure of merit `"),
                "{stdout}"
            );
        }
        let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
        for line in text.lines().skip(1) {
            let r: Value = serde_json::from_str(line).unwrap();
            assert_eq!(r["status"], "ok", "{name}: {r}");
            // The sweep samples its workload child by PID: every run has evidence (pages
            // only once a sample fell inside the run; numastat around every run).
            assert_eq!(
                r["evidence"]["numastat"]["state"], "measured",
                "{name}: {r}"
            );
        }
    }
}

/// The same run gives the same verdict and exit status from its command and from a
/// sweep: passed (0) at a referenced scale factor, unavailable (5) at another.
#[test]
fn the_command_and_the_sweep_agree_on_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    // Q6 off the reference sizes is checked row by row as lineitem is generated;
    // Q1 there has no independent answer.
    for (query, sf, code, verdict) in [
        ("q6", "0.01", 0, "passed"),
        ("q6", "0.001", 0, "passed"),
        ("q1", "0.001", 5, "unavailable"),
    ] {
        let out = scalescope()
            .args([
                "tpch",
                query,
                "--sf",
                sf,
                "--threads",
                "1",
                "--repeat",
                "1",
                "--json",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "tpch {query} --sf {sf}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["verdict"], verdict);
        let results = dir.path().join(format!("{query}-{sf}"));
        scalescope()
            .args(["sweep", "--quiet", "--workload", "tpch"])
            .args(["--param", &format!("query={query}")])
            .args(["--param", &format!("sf={sf}"), "--param", "repeat=1"])
            .args(["--threads", "1", "--reps", "1", "--warmup", "0", "--out"])
            .arg(&results)
            .assert()
            .success();
        let text = std::fs::read_to_string(results.join("results.jsonl")).unwrap();
        let run: Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
        assert_eq!(run["exit_code"], code, "sweep --param sf={sf}: {run}");
        assert_eq!(run["status"], "ok", "{run}");
        let note = run["error"].as_str().unwrap_or("");
        assert_eq!(
            note.starts_with("verification unavailable"),
            code == 5,
            "{run}"
        );
    }
}
