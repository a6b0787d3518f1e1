//! `scalescope study`: the list, plans printed without running, a study run to its
//! report on this machine (every published figure a row), a study killed halfway
//! and finished by the same command (no run lost or repeated), and an OpenMP
//! program's runtime placing its own threads under the sweep's check.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::time::{Duration, Instant};

use assert_cmd::Command;

fn scalescope() -> Command {
    Command::cargo_bin("scalescope").unwrap()
}

fn stdout(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_list_names_the_five_studies() {
    let text = stdout(scalescope().args(["study", "list"]));
    for name in [
        "graph-mining",
        "numa-structure",
        "tpch-numa",
        "sync",
        "smt-mpi",
    ] {
        assert!(text.contains(name), "{text}");
    }
    // No NAME is the list too; a flag only a study uses, without one, says which
    // names there are.
    assert_eq!(stdout(scalescope().arg("study")), text);
    let out = scalescope().args(["study", "--dry-run"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("which study?") && err.contains("tpch-numa"),
        "{err}"
    );
}

#[test]
fn a_dry_run_prints_the_plan_for_a_two_package_smt_machine_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s");
    let text = stdout(
        scalescope()
            .args([
                "study",
                "graph-mining",
                "--dry-run",
                "--budget",
                "2m",
                "--synthetic",
                "package:2 core:4 pu:2",
                "--out",
            ])
            .arg(&out),
    );
    assert!(text.contains("--placement cores-first,smt-pairs"), "{text}");
    assert!(text.contains("--threads 1,2,4,5,"), "{text}");
    assert!(text.contains("budget: 120 s"), "{text}");
    assert!(text.contains("sizing:"), "{text}");
    assert!(!out.exists());
}

#[test]
fn unknown_studies_and_bad_budgets_are_refused_clearly() {
    let out = scalescope().args(["study", "graph"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no study named `graph`"));
    let out = scalescope()
        .args(["study", "sync", "--budget", "soon"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("--budget `soon`: not a duration"));
    let out = scalescope()
        .args(["study", "sync", "--synthetic", "package:2 core:2"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("with --dry-run"));
}

fn figures(study: &str) -> usize {
    let text = std::fs::read_to_string(format!(
        "{}/crates/study/studies/{study}.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["figures"].as_array().unwrap().len()
}

#[test]
fn the_sync_study_reports_every_published_figure_first() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sync");
    scalescope()
        .args(["study", "sync", "--budget", "15s", "--out"])
        .arg(&out)
        .assert()
        .success();
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), figures("sync"));
    for r in rows {
        let verdict = r["here"]["verdict"].as_str().unwrap();
        assert!(
            ["measured", "cannot-occur", "unavailable"].contains(&verdict),
            "{r}"
        );
        if verdict != "measured" {
            assert!(!r["here"]["why"].as_str().unwrap().is_empty(), "{r}");
        }
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let first_table = md.find("## Published vs here").unwrap();
    assert!(first_table < md.find("## Verification").unwrap());
    assert!(md.contains("sync: verification passed"), "{md}");
}

/// Runs of a sweep's results file, as (point, rep, warm-up) keys.
fn runs(results: &Path) -> Vec<String> {
    std::fs::read_to_string(results)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["record"] == "run")
        .map(|v| {
            format!(
                "{} {} {} {}",
                v["threads"], v["placement"], v["rep"], v["warmup"]
            )
        })
        .collect()
}

fn study_command(out: &Path) -> StdCommand {
    let mut c = StdCommand::new(assert_cmd::cargo::cargo_bin("scalescope"));
    c.args(["study", "graph-mining", "--budget", "25s", "--out"])
        .arg(out);
    c
}

#[test]
fn a_study_interrupted_halfway_is_finished_by_the_same_command_without_losing_or_repeating_a_run() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("g");
    let results = out.join("graph/results.jsonl");
    let mut child = study_command(&out)
        .process_group(0)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while runs(&results).len() < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no runs after 120 s"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the study ended before it was interrupted"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Ctrl-C: SIGINT to the whole process group, as a terminal sends it.
    // SAFETY: kill with the negated id of the group this test just created.
    unsafe {
        libc::kill(-(child.id() as i32), libc::SIGINT);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status}");
    let before = runs(&results);
    assert!(!out.join("report.md").exists());
    let again = study_command(&out).output().unwrap();
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert!(String::from_utf8_lossy(&again.stdout).contains("resuming graph"));
    let after = runs(&results);
    assert!(before.iter().all(|r| after.contains(r)), "a run was lost");
    // Measured runs: each once. (A resumed sweep warms up again each point that
    // still has measured runs: the warm-up is unmeasured, and the cache is cold.)
    let after: Vec<&String> = after.iter().filter(|r| r.ends_with("false")).collect();
    let distinct: BTreeSet<&&String> = after.iter().collect();
    assert_eq!(distinct.len(), after.len(), "a run was repeated: {after:?}");
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("study.json")).unwrap()).unwrap();
    let args: Vec<&str> = plan["steps"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let threads = args[args.iter().position(|a| *a == "--threads").unwrap() + 1]
        .split(',')
        .count();
    assert_eq!(after.len(), threads * 3, "{after:?}");
    assert!(out.join("report.md").exists());
}

fn build_probe(dir: &Path) -> PathBuf {
    let src = dir.join("omp-probe.c");
    std::fs::write(&src, include_str!("../../crates/study/studies/omp-probe.c")).unwrap();
    let bin = dir.join("omp-probe");
    let st = StdCommand::new("gcc")
        .args(["-O1", "-fopenmp", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .expect("gcc is needed");
    assert!(st.success());
    bin
}

fn runtime_checks(results: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(results)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["record"] == "run")
        .map(|v| v["placement_check"]["runtime"].clone())
        .collect()
}

#[test]
fn libgomp_places_its_own_threads_where_the_plan_says_and_an_unbound_runtime_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let bin = build_probe(dir.path());
    let good = dir.path().join("good");
    let out = scalescope()
        .args([
            "sweep",
            "--placement",
            "runtime:compact,runtime:spread",
            "--threads",
            "1,2",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--quiet",
            "--out",
        ])
        .arg(&good)
        .arg("--")
        .arg(&bin)
        .arg("300")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let checks = runtime_checks(&good.join("results.jsonl"));
    assert_eq!(checks.len(), 4);
    assert!(checks.iter().all(|c| c["as_planned"] == true), "{checks:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("as the plan says in 2 of 2 runs"));
    // The same program told not to bind: the check must fail and say so.
    let unbound = dir.path().join("unbound");
    let out = scalescope()
        .args([
            "sweep",
            "--placement",
            "runtime:compact",
            "--threads",
            "2",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--quiet",
            "--env",
            "OMP_PROC_BIND=false",
            "--out",
        ])
        .arg(&unbound)
        .arg("--")
        .arg(&bin)
        .arg("300")
        .output()
        .unwrap();
    let checks = runtime_checks(&unbound.join("results.jsonl"));
    assert_eq!(checks[0]["as_planned"], false, "{checks:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("left unbound"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn built_in_workloads_refuse_a_runtime_placement() {
    let out = scalescope()
        .args([
            "sweep",
            "--workload",
            "ep",
            "--placement",
            "runtime:spread",
            "--dry-run",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("built-in workloads pin their own threads"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
