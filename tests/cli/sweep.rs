//! `scalescope sweep` with real programs on this machine: an OpenMP program built
//! here, `sleep`, a program that exits 3, one that ignores SIGTERM, one that re-pins
//! itself elsewhere; Ctrl-C then resume; bad option values.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn scalescope() -> Command {
    Command::cargo_bin("scalescope").unwrap()
}

/// The run records of a results directory.
fn runs(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let mut lines = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap());
    let header = lines.next().unwrap();
    assert_eq!(header["record"], "header");
    lines.collect()
}

const OMP_PROGRAM: &str = r#"
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
int main(void) {
    double x = 0;
    #pragma omp parallel reduction(+:x)
    {
        for (long i = 0; i < 60000000; i++) x += i * 1e-9;
        #pragma omp critical
        printf("thread %d on cpu %d\n", omp_get_thread_num(), sched_getcpu());
    }
    printf("threads=%d sum=%.3f\n", omp_get_max_threads(), x);
    return 0;
}
"#;

fn build_omp(dir: &Path) -> PathBuf {
    let src = dir.join("omp.c");
    std::fs::write(&src, OMP_PROGRAM).unwrap();
    let bin = dir.join("omp");
    let st = StdCommand::new("gcc")
        .args(["-O1", "-fopenmp", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .expect("gcc is needed");
    assert!(st.success());
    bin
}

#[test]
fn openmp_program_is_told_its_placement_and_stays_inside_it() {
    let dir = tempfile::tempdir().unwrap();
    let bin = build_omp(dir.path());
    let out = dir.path().join("res");
    scalescope()
        .args([
            "sweep",
            "--quiet",
            "--threads",
            "1,2",
            "--placement",
            "compact",
            "--reps",
            "2",
            "--warmup",
            "0",
        ])
        .args(["--metric", "omp_threads=threads=([0-9]+)", "--out"])
        .arg(&out)
        .arg("--")
        .arg(&bin)
        .assert()
        .success()
        .stdout(predicate::str::contains("compact"));
    let runs = runs(&out);
    assert_eq!(runs.len(), 4);
    for r in &runs {
        assert_eq!(r["status"], "ok");
        assert_eq!(
            r["metrics"]["omp_threads"].as_f64().unwrap() as u64,
            r["threads"].as_u64().unwrap()
        );
        let check = &r["placement_check"];
        assert_eq!(check["inside_plan"], true, "{r}");
        assert!(check["samples"].as_u64().unwrap() > 0);
        assert!(r["user_secs"].as_f64().unwrap() > 0.0 && r["max_rss_bytes"].as_u64().unwrap() > 0);
        // Each OpenMP thread reported a CPU inside its run's plan.
        let log = std::fs::read_to_string(out.join(r["stdout_log"].as_str().unwrap())).unwrap();
        let planned: Vec<u64> = r["thread_cpus"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| s.as_array().unwrap().iter().map(|c| c.as_u64().unwrap()))
            .collect();
        for line in log.lines().filter(|l| l.starts_with("thread ")) {
            let cpu: u64 = line.rsplit(' ').next().unwrap().parse().unwrap();
            assert!(planned.contains(&cpu), "{line} outside {planned:?}");
        }
    }
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3);
    assert!(csv.starts_with("threads,placement,mem,runs,failed,wall_median_secs"));
}

#[test]
fn failing_runs_are_recorded_and_the_sweep_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    scalescope()
        .args([
            "sweep",
            "--quiet",
            "--threads",
            "1,2",
            "--reps",
            "2",
            "--warmup",
            "0",
            "--out",
        ])
        .arg(&out)
        .args(["--", "sh", "-c", "exit 3"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("failed: exited with status 3"))
        .stderr(predicate::str::contains("4 runs did not succeed"));
    let runs = runs(&out);
    assert_eq!(runs.len(), 4);
    assert!(runs
        .iter()
        .all(|r| r["status"] == "failed" && r["exit_code"] == 3));
}

fn count_processes(marker: &str) -> usize {
    let out = StdCommand::new("pgrep")
        .args(["-f", marker])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).lines().count()
}

#[test]
fn a_program_ignoring_sigterm_is_killed_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    let marker = "31.4159";
    let t = Instant::now();
    scalescope()
        .args([
            "sweep",
            "--quiet",
            "--threads",
            "1",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--timeout",
            "0.5",
            "--kill-grace",
            "0.5",
            "--out",
        ])
        .arg(&out)
        .args([
            "--",
            "sh",
            "-c",
            &format!("trap '' TERM; sleep {marker}; true"),
        ])
        .assert()
        .code(3)
        .stderr(predicate::str::contains(
            "timeout: timed out; process group killed",
        ));
    assert!(t.elapsed() < Duration::from_secs(10));
    let runs = runs(&out);
    assert_eq!(runs[0]["status"], "timeout");
    assert!(runs[0]["wall_secs"].as_f64().unwrap() >= 0.9);
    assert_eq!(count_processes(marker), 0, "the sleep outlived its run");
}

#[test]
fn a_program_that_repins_itself_is_caught() {
    let cpus = scalescope_topo::affinity::process_affinity().unwrap();
    let Some(other) = cpus.iter().nth(1) else {
        panic!("this test needs 2 usable CPUs; this machine offers {cpus}");
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    // cores-first puts 1 thread on the first usable CPU; taskset moves it elsewhere.
    scalescope()
        .args([
            "sweep",
            "--quiet",
            "--threads",
            "1",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--out",
        ])
        .arg(&out)
        .args(["--", "taskset", "-c", &other.to_string(), "sleep", "0.4"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "threads ran outside the planned CPUs",
        ))
        .stdout(predicate::str::contains("OUTSIDE"));
    let runs = runs(&out);
    let check = &runs[0]["placement_check"];
    assert_eq!(check["inside_plan"], false);
    assert_eq!(
        check["violations"][0]["allowed"],
        serde_json::json!([other])
    );
}

#[test]
fn interrupt_keeps_finished_runs_and_resume_finishes_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    let marker = "0.3141";
    let bin = assert_cmd::cargo::cargo_bin("scalescope");
    let mut child = StdCommand::new(&bin)
        .args([
            "sweep",
            "--quiet",
            "--threads",
            "1,2",
            "--reps",
            "3",
            "--warmup",
            "0",
            "--out",
        ])
        .arg(&out)
        .args(["--", "sleep", marker])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1100));
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(
        count_processes(marker),
        0,
        "an interrupted run left its process behind"
    );
    let first = runs(&out);
    assert!((1..6).contains(&first.len()), "{} runs kept", first.len());
    assert!(first.iter().all(|r| r["status"] == "ok"));
    scalescope()
        .args(["sweep", "--quiet", "--resume", "--out"])
        .arg(&out)
        .assert()
        .success();
    let all = runs(&out);
    assert_eq!(all.len(), 6);
    assert_eq!(
        all[..first.len()],
        first[..],
        "completed runs were kept as they were"
    );
    let mut keys: Vec<(u64, u64)> = all
        .iter()
        .map(|r| (r["threads"].as_u64().unwrap(), r["rep"].as_u64().unwrap()))
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 6, "no run repeated");
}

#[test]
fn workload_sweep_records_verified_figures() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    scalescope()
        .args([
            "sweep",
            "--quiet",
            "--workload",
            "stream",
            "--param",
            "size=8MiB",
            "--param",
            "ntimes=3",
        ])
        .args(["--threads", "1,2", "--reps", "1", "--warmup", "0", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("triad_gb_per_s"));
    for r in runs(&out) {
        assert_eq!(r["status"], "ok", "{r}");
        assert!(r["metrics"]["triad_gb_per_s"].as_f64().unwrap() > 0.0);
        assert_eq!(
            r["placement_check"]["planned_threads"].as_u64(),
            Some(r["threads"].as_u64().unwrap() + 1)
        );
    }
}

#[test]
fn shell_is_opt_in_and_dry_run_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    scalescope()
        .args([
            "sweep",
            "--quiet",
            "--shell",
            "--threads",
            "2",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--metric",
            "n=n=([0-9]+)",
            "--out",
        ])
        .arg(&out)
        .args(["--", "echo n={threads} | cat"])
        .assert()
        .success();
    assert_eq!(runs(&out)[0]["metrics"]["n"], 2.0);
    // Without --shell the pipe is an argument, not a pipe.
    let out2 = dir.path().join("res2");
    scalescope()
        .args([
            "sweep",
            "--quiet",
            "--threads",
            "1",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--out",
        ])
        .arg(&out2)
        .args(["--", "echo", "a|b", "{cpus}"])
        .assert()
        .success();
    let log =
        std::fs::read_to_string(out2.join(runs(&out2)[0]["stdout_log"].as_str().unwrap())).unwrap();
    assert!(log.starts_with("a|b "), "{log}");
    scalescope()
        .args([
            "sweep",
            "--dry-run",
            "--synthetic",
            "package:2 core:24 pu:2 numbering=smt-last",
            "--threads",
            "2,48",
        ])
        .args([
            "--placement",
            "smt-pairs",
            "--mem",
            "interleave",
            "--",
            "./app",
            "{threads}",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "2 points x 5 reps (+1 warm-up) = 12 runs",
        ))
        .stdout(predicate::str::contains("cpus per thread: 0 | 48"))
        .stdout(predicate::str::contains("env OMP_PLACES={0},{48}"))
        .stdout(predicate::str::contains("command: ./app 2"));
}

#[test]
fn bad_option_values_get_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res").display().to_string();
    // Values that cannot be parsed are usage errors (exit 2), named on the first line.
    for (args, needle) in [
        (vec!["--threads", "0", "--", "true"], "threads `0`"),
        (vec!["--threads", "4..1", "--", "true"], "runs backwards"),
        (
            vec!["--placement", "closest", "--", "true"],
            "unknown strategy `closest`",
        ),
        (vec!["--mem", "somewhere", "--", "true"], "somewhere"),
        (vec!["--metric", "noequals", "--", "true"], "NAME=REGEX"),
        (vec!["--metric", "x=(", "--", "true"], "bad regex"),
        (vec!["--env", "=1", "--", "true"], "KEY=VALUE"),
        (vec!["--reps", "x", "--", "true"], "not a whole number"),
        // Counts and durations are checked with their range when parsed (issue 33).
        (vec!["--reps", "0", "--", "true"], "out of range"),
        (
            vec!["--timeout", "0", "--", "true"],
            "0.001 to 31536000 seconds",
        ),
        (vec!["--timeout", "1e300", "--", "true"], "out of range"),
        (
            vec!["--timeout", "nan", "--", "true"],
            "not a number of seconds",
        ),
        (
            vec!["--kill-grace", "3601", "--", "true"],
            "0 to 3600 seconds",
        ),
        (vec!["--kill-grace", "inf", "--", "true"], "out of range"),
    ] {
        let o = scalescope().arg("sweep").args(&args).output().unwrap();
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        let first = err.lines().next().unwrap_or("");
        assert!(first.contains(args[0]), "{args:?}: {err}");
        assert!(first.contains(needle), "{args:?}: {err}");
    }
    // Values that parse but do not fit the machine or the files: one line, exit 1.
    for (args, needle) in [
        (vec!["--mem", "bind:9", "--", "true"], "memory node `9`"),
        (
            vec!["--threads", "64", "--", "true"],
            "64 threads requested",
        ),
        (
            vec!["--", "/no/such/program"],
            "program `/no/such/program` not found",
        ),
        (vec![], "nothing to sweep"),
        (vec!["--resume", "--out", &out], "results.jsonl"),
        (vec!["--workload", "nosuch"], "unknown workload `nosuch`"),
        (
            vec!["--workload", "stream", "--param", "size=huge"],
            "workload parameter `size`",
        ),
        (
            vec!["--synthetic", "core:4", "--", "true"],
            "only plan a sweep (--dry-run)",
        ),
    ] {
        let o = scalescope().arg("sweep").args(&args).output().unwrap();
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// The run order: rounds of every point, shuffled by a seed the header records;
/// the same seed gives the same order.
#[test]
fn runs_interleave_points_and_placements_in_a_seeded_order() {
    let dir = tempfile::tempdir().unwrap();
    let order = |name: &str, seed: &str| -> (Value, Vec<(u64, String, u64)>) {
        let out = dir.path().join(name);
        scalescope()
            .args([
                "sweep",
                "--quiet",
                "--threads",
                "1,2",
                "--placement",
                "compact,scatter",
                "--reps",
                "3",
                "--warmup",
                "0",
                "--sample-interval",
                "0",
                "--seed",
                seed,
                "--out",
            ])
            .arg(&out)
            .args(["--", "true"])
            .assert()
            .success();
        let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
        let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        let runs = runs(&out)
            .iter()
            .map(|r| {
                (
                    r["threads"].as_u64().unwrap(),
                    r["placement"].as_str().unwrap().to_string(),
                    r["rep"].as_u64().unwrap(),
                )
            })
            .collect();
        (header, runs)
    };
    let (h, a) = order("a", "11");
    assert_eq!(h["schema_version"], 4);
    assert_eq!(
        h["plan"]["order"],
        serde_json::json!({"kind": "shuffled", "seed": 11})
    );
    // Round r holds repetition r of all four points.
    for (i, run) in a.iter().enumerate() {
        assert_eq!(run.2 as usize, i / 4, "{a:?}");
    }
    let (_, again) = order("b", "11");
    assert_eq!(a, again);
    let others: Vec<_> = (12..20)
        .map(|s| order(&format!("c{s}"), &s.to_string()).1)
        .collect();
    assert!(
        others.iter().any(|o| *o != a),
        "eight other seeds all gave {a:?}"
    );
}
