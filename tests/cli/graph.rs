//! `scalescope graph count` as a user meets it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

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
    // Checked by the independent counter, as the sweep checks it (not only up to
    // the 64 vertices brute force reaches).
    assert_eq!(v["verified"], true, "{}", v["verification"]);
    assert_eq!(v["verdict"], "passed");
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
        .code(2) // a bad value is a usage error, refused while parsing the command line
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
        .stderr(predicate::str::contains("`induced`: changes only"));
    scalescope()
        .args(["graph", "count", "--pattern", "k4", "--graph", "kron:99"])
        .assert()
        .code(2) // checked while parsing, like every value a flag takes
        .stderr(predicate::str::contains("scale must be 1-30"));
}

#[test]
fn bfs_and_pagerank_verify_and_sync_fits_every_mechanism() {
    let out = scalescope()
        .args([
            "graph",
            "bfs",
            "--graph",
            "kron:12",
            "--threads",
            "2",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verified"], true);
    assert!(v["teps"].as_f64().unwrap() > 0.0);
    for sync in ["pull", "coarse-lock", "striped-locks:16", "atomic"] {
        let out = scalescope()
            .args([
                "graph", "pr", "--graph", "kron:11", "--sync", sync, "--batch", "4", "--json",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{sync}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["verified"], true, "{sync}");
    }
    // htm either runs verified (RTM present, as on this VM) or says why it cannot.
    let out = scalescope()
        .args([
            "graph", "pr", "--graph", "kron:10", "--sync", "htm", "--json",
        ])
        .output()
        .unwrap();
    if !out.status.success() {
        assert_eq!(
            out.status.code(),
            Some(5),
            "the unavailable verdict's status"
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains("verification unavailable"));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["verdict"], "unavailable");
        // Nothing ran: no figure, and the reason in words (no `Htm` debug text).
        for figure in ["seconds", "seconds_per_iteration", "edges_per_s"] {
            assert!(v.get(figure).is_none(), "{figure} in {v}");
        }
        let why = v["verification"].as_str().unwrap();
        assert!(
            why.starts_with("htm: this CPU does not offer Intel RTM"),
            "{why}"
        );
    }
    let out = scalescope()
        .args(["sync", "--updates", "5000", "--batches", "1,4,16", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let curves = v["curves"].as_array().unwrap();
    assert!(
        curves.len() >= 6,
        "three mechanisms x two update kinds at least"
    );
    assert!(curves
        .iter()
        .all(|c| c["a_ns"].is_number() && c["b_ns"].is_number() && c["r_squared"].is_number()));
    // Repetitions, intervals, and the study's claims (RTM or why not).
    assert_eq!(v["reps"], 3);
    for c in curves {
        let f = &c["fit"];
        assert_eq!(f["observations"], 9, "{f}");
        assert!(f["a_ci95"].is_array() && f["b_ci95"].is_array(), "{f}");
        let rejected = f["rejected"].as_str();
        if f["r_squared"].as_f64().unwrap() < 0.9 {
            assert!(rejected.is_some(), "{f}");
        }
    }
    let claims = v["claims"].as_array().unwrap();
    assert_eq!(claims.len(), 4);
    let htm = curves.iter().any(|c| c["sync"] == "htm");
    for c in claims {
        let verdict = c["verdict"].as_str().unwrap();
        if htm {
            assert!(
                ["holds", "contradicted", "undecided"].contains(&verdict),
                "{c}"
            );
        } else {
            assert!(verdict.starts_with("unavailable here: "), "{c}");
        }
    }
    // BFS has no selectable synchronisation: the flags are refused, not ignored.
    scalescope()
        .args([
            "graph", "bfs", "--graph", "kron:8", "--sync", "htm", "--batch", "8",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unexpected argument '--sync'"));
    scalescope()
        .args(["graph", "pr", "--graph", "kron:8", "--sync", "mutex"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown sync `mutex`"));
    scalescope()
        .args(["graph", "bfs", "--graph", "kron:8", "--source", "999"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "`source`: 999: the graph has vertices 0-",
        ));
}

#[test]
fn the_binary_cache_round_trips_and_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let csr = dir.path().join("k10.csr");
    scalescope()
        .args(["graph", "export", "--graph", "kron:10", "--out"])
        .arg(&csr)
        .assert()
        .success();
    let count = |src: &str| -> Value {
        let out = scalescope()
            .args([
                "graph",
                "count",
                "--pattern",
                "diamond",
                "--graph",
                src,
                "--json",
            ])
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    assert_eq!(
        count(csr.to_str().unwrap())["count"],
        count("kron:10")["count"]
    );
    let mut bytes = std::fs::read(&csr).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    std::fs::write(&csr, &bytes).unwrap();
    scalescope()
        .args(["graph", "bfs", "--graph"])
        .arg(&csr)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("checksum mismatch"));
}

#[test]
fn trials_run_in_one_process_and_report_the_first_apart_from_the_warm_ones() {
    // Issue 36: GAP's `-n N` times N trials in one process; `--trials N` does the
    // same on the input prepared once, every trial checked under `--verify all`.
    let json = |args: &[&str]| -> Value {
        let out = scalescope().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    for kernel in ["bfs", "pr", "count"] {
        let v = json(&[
            "graph", kernel, "--graph", "kron:10", "-t", "2", "--trials", "5", "--json",
        ]);
        assert_eq!(v["verdict"], "passed", "{kernel}: {v}");
        let why = v["verification"].as_str().unwrap();
        assert!(why.contains("every one of 5 trials checked"), "{why}");
        let t = &v["trials"];
        let secs: Vec<f64> = t["seconds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_f64().unwrap())
            .collect();
        assert_eq!((t["count"].as_u64(), secs.len()), (Some(5), 5), "{t}");
        assert!(secs.iter().all(|&s| s > 0.0));
        assert_eq!(t["first_seconds"].as_f64(), Some(secs[0]));
        assert_eq!(v["seconds"].as_f64(), Some(secs[4]), "the last trial's");
        let mut warm = secs[1..].to_vec();
        warm.sort_by(f64::total_cmp);
        assert_eq!(t["warm"]["count"], 4);
        assert_eq!(t["warm"]["min_seconds"].as_f64(), Some(warm[0]));
        let mean = secs.iter().sum::<f64>() / 5.0;
        assert!((t["mean_seconds"].as_f64().unwrap() - mean).abs() < 1e-12);
    }
    // `--verify first` checks the last trial only (after the kernel's copies are
    // released) and says so; one trial is as before.
    let v = json(&[
        "graph", "bfs", "--graph", "kron:10", "--trials", "3", "--verify", "first", "--json",
    ]);
    let why = v["verification"].as_str().unwrap();
    assert!(why.contains("the last of 3 trials checked"), "{why}");
    // `--verify none` says no trial was checked, never that one was.
    let out = scalescope()
        .args(["graph", "bfs", "--graph", "kron:10", "--trials", "3"])
        .args(["--verify", "none", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "unavailable", "{v}");
    let why = v["verification"].as_str().unwrap();
    assert!(why.contains("verify policy: none"), "{why}");
    assert!(!why.contains("trials checked"), "{why}");
    let v = json(&["graph", "bfs", "--graph", "kron:10", "--json"]);
    assert!(v.get("trials").is_none(), "{v}");
    // The text shows the first trial apart.
    scalescope()
        .args(["graph", "bfs", "--graph", "kron:10", "--trials", "3"])
        .assert()
        .success()
        .stdout(predicate::str::contains("3 trials in this process: first"))
        .stdout(predicate::str::contains("warm (2): mean"));
    scalescope()
        .args(["graph", "bfs", "--graph", "kron:10", "--trials", "0"])
        .assert()
        .failure();
}

/// `sweep --trials N`: each run's process makes N trials of the kernel, the header
/// records N, the run's figure of merit is its median warm trial's (from the
/// report its log keeps, every trial's seconds there), and the analysis says so
/// once; a program after `--` cannot be asked for trials, and a resume cannot
/// change them.
#[test]
fn a_sweep_with_trials_takes_each_runs_median_warm_trial() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s");
    scalescope()
        .args(["sweep", "--workload", "graph", "--param", "kernel=bfs"])
        .args(["--param", "graph=kron:10", "--trials", "5", "-t", "1,2"])
        .args(["--reps", "2", "--warmup", "0", "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "each run's figure is the median of its 4 warm trials",
        ));
    let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["command"]["trials"], 5, "{}", lines[0]);
    let runs: Vec<&Value> = lines.iter().filter(|l| l["record"] == "run").collect();
    assert_eq!(runs.len(), 4);
    for run in runs {
        assert_eq!(run["status"], "ok", "{run}");
        let log = std::fs::read_to_string(out.join(run["stdout_log"].as_str().unwrap())).unwrap();
        let report: Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
        let secs: Vec<f64> = report["trials"]["seconds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_f64().unwrap())
            .collect();
        assert_eq!(secs.len(), 5, "{report}");
        let picked = report["trials"]["picked"].as_u64().unwrap() as usize;
        let mut warm = secs[1..].to_vec();
        warm.sort_by(f64::total_cmp);
        assert!(
            picked >= 1,
            "the cold first trial is never the run's figure"
        );
        assert_eq!(
            secs[picked], warm[1],
            "the lower middle of four warm trials"
        );
        assert_eq!(report["seconds"].as_f64(), Some(secs[picked]));
        let figure = &run["metrics"]["edges_per_s"];
        assert_eq!(figure, &report["figures"]["edges_per_s"], "{run}");
    }
    scalescope()
        .args(["sweep", "--resume", "--trials", "3", "--out"])
        .arg(&out)
        .assert()
        .failure()
        .stderr(predicate::str::contains("--trials"));
    scalescope()
        .args(["sweep", "--trials", "3", "-t", "1", "--out"])
        .arg(dir.path().join("p"))
        .args(["--", "true"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("a program times itself"))
        .stderr(predicate::str::contains("(set by --trials)"));
    assert!(
        !dir.path().join("p").exists(),
        "nothing written for a refused sweep"
    );
}

#[test]
fn bfs_without_renumbering_holds_one_copy_of_the_graph_and_gives_the_same_tree_size() {
    // Issue 36: the renumbered copy is what puts BFS's memory above GAP's; it can be
    // left out, and the search still verifies and reaches the same component.
    let run = |extra: &[&str]| -> Value {
        let out = scalescope()
            .args(["graph", "bfs", "--graph", "kron:11", "-t", "2", "--json"])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let (on, off) = (run(&[]), run(&["--renumber=false"]));
    for v in [&on, &off] {
        assert_eq!(v["verdict"], "passed", "{v}");
    }
    assert_eq!(on["source"], off["source"]);
    assert_eq!(on["reached_vertices"], off["reached_vertices"]);
    assert!(on["relabel_seconds"].as_f64().is_some(), "{on}");
    assert!(off["relabel_seconds"].is_null(), "{off}");
}
