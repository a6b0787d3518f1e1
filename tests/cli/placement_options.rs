#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

//! The placement options of `place` on `sweep` and on the workload commands, the
//! habits of likwid and taskset (`1-16`, `cpus=0,1`), and versioned JSON.

use assert_cmd::Command;
use predicates::prelude::*;

fn scalescope() -> Command {
    Command::cargo_bin("scalescope").unwrap()
}

const MACHINE: &str = "package:2 numa:1 core:4 pu:2";

fn dry_run(extra: &[&str]) -> String {
    let out = scalescope()
        .args(["sweep", "--dry-run", "--synthetic", MACHINE])
        .args(extra)
        .args(["--", "./app"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn sweep_takes_every_placement_option_of_place() {
    // Node 1 is package 1: CPUs 8-15; --granularity core binds both PUs of a core.
    let text = dry_run(&[
        "--threads",
        "1-2",
        "--numa-nodes",
        "1",
        "--granularity",
        "core",
    ]);
    assert!(text.contains("cpus per thread: 8-9\n"), "{text}");
    assert!(text.contains("cpus per thread: 8-9 | 10-11"), "{text}");
    let text = dry_run(&["--threads", "2", "--packages", "0"]);
    assert!(text.contains("cpus per thread: 0 | 2"), "{text}");
    let text = dry_run(&["--threads", "24", "--oversubscribe"]);
    assert!(text.contains("24 threads, cores-first"), "{text}");
    // --cpus is one more placement; cpus=LIST keeps its commas.
    let text = dry_run(&[
        "--threads",
        "2",
        "--placement",
        "compact,cpus=8,10",
        "--cpus",
        "S1:0-1",
    ]);
    assert!(text.contains("2 threads, cpus=8,10, first-touch"), "{text}");
    assert!(
        text.contains("2 threads, cpus=S1:0-1, first-touch"),
        "{text}"
    );
    scalescope()
        .args([
            "sweep",
            "--dry-run",
            "--synthetic",
            MACHINE,
            "--threads",
            "24",
            "--",
            "./app",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("oversubscription is off"));
}

#[test]
fn workload_commands_take_the_placement_options_and_say_their_version() {
    let out = scalescope()
        .args(["npb", "ep", "--class", "S", "--cpus", "0", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["kind"], "scalescope.npb-ep");
    assert_eq!(v["schema_version"], 1);
    let out = scalescope()
        .args(["place", "--threads", "2", "--oversubscribe", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema_version"], 1);
    let mpirun = v["renderings"]["openmpi"].as_str().unwrap();
    assert!(
        !mpirun.contains('('),
        "prose in the Open MPI command: {mpirun}"
    );
}

#[test]
fn a_missing_file_is_named_once() {
    let out = scalescope()
        .args(["graph", "bfs", "--graph", "/nonexistent/g.el"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(err.matches("os error 2").count(), 1, "{err}");
}
