//! The `topo` and `place` commands as a user meets them: output, JSON, and clear
//! one-line errors (never a panic) for bad input.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

#[path = "../../crates/topo/tests/common/mod.rs"]
mod common;

use std::process::Command as StdCommand;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn scalescope() -> Command {
    Command::cargo_bin("scalescope").unwrap()
}

fn xml(name: &str) -> String {
    common::hwloc_xml(name).display().to_string()
}

#[test]
fn topo_summarises_a_recorded_machine() {
    let root = common::root_of("16em64t-4s2c2t-offlines");
    scalescope()
        .args(["topo", "--sysfs-root"])
        .arg(&root)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "4 packages x 7 cores in all x 1-2 threads = 12 PUs, 1 NUMA node, 4 offline",
        ))
        .stdout(predicate::str::contains("SMT siblings are 8 apart"))
        .stdout(predicate::str::contains("Offline CPUs: 2,5,13-14"));
}

#[test]
fn topo_json_has_the_documented_fields() {
    let out = scalescope()
        .args(["topo", "--json", "--hwloc-xml", &xml("64fake-4n2s2ca2c2t")])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema_version"], 1);
    let pu = &v["pus"][0];
    for key in [
        "cpu",
        "package",
        "core",
        "smt_rank",
        "numa_node",
        "l3",
        "l2",
        "kind",
        "online",
        "allowed",
    ] {
        assert!(pu.get(key).is_some(), "pus[0] lacks {key}: {pu}");
    }
    let nodes = v["numa_nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 4);
    for n in nodes {
        for key in ["id", "cpus", "memory_bytes", "distances"] {
            assert!(n.get(key).is_some(), "numa node lacks {key}: {n}");
        }
    }
    assert!(v["summary"]
        .as_str()
        .unwrap()
        .starts_with("8 packages x 4 cores x 2 threads = 64 PUs, 4 NUMA nodes"));
}

#[test]
fn topo_prints_the_distance_matrix() {
    scalescope()
        .args(["topo", "--hwloc-xml", &xml("16amd64-8n2c")])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "NUMA distances (firmware SLIT, 10 = local):",
        ))
        .stdout(predicate::str::contains(
            "     0   10   20   20   20   20   20   20   20",
        ));
}

#[test]
fn synthetic_numbering_traps_are_reported() {
    scalescope()
        .args([
            "topo",
            "--synthetic",
            "package:2 numa:1 core:24 pu:2 numbering=interleaved",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "2 packages x 24 cores x 2 threads = 96 PUs, 2 NUMA nodes",
        ))
        .stdout(predicate::str::contains(
            "consecutive CPU numbers alternate between packages",
        ))
        .stdout(predicate::str::contains("SMT siblings are 48 apart"))
        .stdout(predicate::str::contains(
            "warning: a naive range is misleading here",
        ));
}

#[test]
fn malformed_inputs_give_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    // Missing tree.
    scalescope()
        .args(["topo", "--sysfs-root"])
        .arg(dir.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "sys/devices/system/cpu: not found",
        ));
    // Garbage cpulist.
    let topo = dir.path().join("sys/devices/system/cpu/cpu0/topology");
    std::fs::create_dir_all(&topo).unwrap();
    std::fs::write(topo.join("thread_siblings_list"), "0-zz\n").unwrap();
    scalescope()
        .args(["topo", "--sysfs-root"])
        .arg(dir.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "cpu0/topology/thread_siblings_list: `0-zz` is not a number",
        ))
        .stderr(predicate::str::contains("panicked").not());
    // Truncated XML.
    let text = std::fs::read_to_string(xml("8em64t-2s2ca2c")).unwrap();
    let truncated = dir.path().join("truncated.xml");
    std::fs::write(&truncated, &text[..text.len() / 2]).unwrap();
    scalescope()
        .args(["topo", "--hwloc-xml"])
        .arg(&truncated)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "truncated.xml: not well-formed XML",
        ));
    scalescope()
        .args(["topo", "--hwloc-xml", "/nonexistent.xml"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("/nonexistent.xml"));
    scalescope()
        .args(["topo", "--synthetic", "package:2 bogus:3"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("unknown level `bogus`"));
}

#[test]
fn place_prints_cpus_and_renderings() {
    scalescope()
        .args([
            "place",
            "--strategy",
            "scatter",
            "--threads",
            "4",
            "--hwloc-xml",
            &xml("8em64t-2s2ca2c"),
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "OMP_PLACES         {0},{1},{4},{5}",
        ))
        .stdout(predicate::str::contains(
            "taskset            taskset -c 0-1,4-5",
        ))
        .stdout(predicate::str::contains(
            "slurm              srun --cpu-bind=map_cpu:0,1,4,5",
        ))
        .stdout(predicate::str::contains(
            "KMP_AFFINITY       granularity=fine,explicit,proclist=[0,1,4,5]",
        ));
}

#[test]
fn place_json_and_core_granularity() {
    let out = scalescope()
        .args([
            "place",
            "--json",
            "--strategy",
            "cores-first",
            "--threads",
            "2",
            "--granularity",
            "core",
        ])
        .args(["--synthetic", "package:1 core:4 pu:2 numbering=smt-last"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["threads"][0]["cpus"], serde_json::json!([0, 4]));
    assert_eq!(v["threads"][1]["thread"], 1);
    assert_eq!(
        v["renderings"]["slurm"],
        "srun --cpu-bind=mask_cpu:0x11,0x22"
    );
    assert_eq!(v["renderings"]["OMP_PLACES"], "{0,4},{1,5}");
}

#[test]
fn place_errors_are_one_clear_line() {
    // Values a flag cannot take are refused while parsing (exit 2), the flag and
    // the reason on the first line.
    for (args, needle) in [
        (
            vec!["place", "--strategy", "closest", "--threads", "2"],
            "unknown strategy `closest`",
        ),
        (
            vec!["place", "--threads", "2", "--numa-nodes", "x"],
            "--numa-nodes",
        ),
        (vec!["place", "--threads", "1e19"], "not a whole number"),
        (vec!["place", "--threads", "100001"], "1 to 100000"),
        (
            vec!["place", "--threads", "100000000000", "--oversubscribe"],
            "a whole number from 1 to 100000",
        ),
    ] {
        let out = scalescope().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        let first = err.lines().next().unwrap_or("");
        assert!(first.contains(needle), "{args:?}: {err}");
    }
    for (args, needle) in [
        (
            vec!["place", "--threads", "9", "--synthetic", "package:1 core:8"],
            "9 threads requested but only 8 usable PUs",
        ),
        (
            vec!["place", "--threads", "9", "--synthetic", "package:1 core:8"],
            "pass --oversubscribe to let threads share PUs",
        ),
        (
            vec![
                "place",
                "--cpus",
                "S0:0-99",
                "--synthetic",
                "package:1 core:8",
            ],
            "index 99 is out of range (the domain has 8 CPUs, 0-7)",
        ),
        (
            vec!["place", "--strategy", "compact"],
            "--threads N is required",
        ),
    ] {
        let out = scalescope().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    scalescope()
        .args([
            "place",
            "--threads",
            "3",
            "--oversubscribe",
            "--synthetic",
            "core:2",
        ])
        .assert()
        .success();
    scalescope()
        .args(["place", "--threads", "-1"])
        .assert()
        .code(2);
}

/// Inputs that once ended in a panic (exit 101) or an abort (exit 134).
#[test]
fn place_once_crashing_inputs_are_one_clear_line() {
    for (args, needle) in [
        (vec!["place", "--cpus", "é:0"], "unknown domain `é`"),
        (
            vec!["place", "--cpus", "E:N:18446744073709551615"],
            "count 18446744073709551615 is more than the 8 CPUs of domain N",
        ),
        (
            vec!["place", "--cpus", "E:N:1000000000000"],
            "count 1000000000000 is more than the 8 CPUs of domain N",
        ),
    ] {
        let out = scalescope()
            .args(&args)
            .args(["--synthetic", "package:1 core:4 pu:2"])
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn help_has_examples() {
    for cmd in [
        vec!["--help"],
        vec!["topo", "--help"],
        vec!["place", "--help"],
    ] {
        scalescope()
            .args(&cmd)
            .assert()
            .success()
            .stdout(predicate::str::contains("Examples:"));
    }
}

/// On this machine, the live model induces the same partitions as Debian's lstopo.
#[test]
fn live_topology_agrees_with_lstopo() {
    let out = StdCommand::new("lstopo-no-graphics")
        .args(["--of", "xml", "-"])
        .output()
        .expect(
            "lstopo-no-graphics missing: run scripts/install-test-deps.sh (Debian package hwloc)",
        );
    assert!(out.status.success());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("live.xml");
    std::fs::write(&file, &out.stdout).unwrap();
    let from_lstopo = scalescope_topo::Source::HwlocXml(file).load().unwrap();
    let live = scalescope_topo::Source::Live.load().unwrap();
    let part = |t: &scalescope_topo::Topology,
                f: &dyn Fn(&scalescope_topo::Pu) -> Option<usize>| {
        let mut groups = std::collections::BTreeMap::<Option<usize>, Vec<u32>>::new();
        for p in t.usable_pus() {
            groups.entry(f(p)).or_default().push(p.cpu);
        }
        groups
            .into_values()
            .collect::<std::collections::BTreeSet<_>>()
    };
    assert_eq!(live.usable_cpus(), from_lstopo.usable_cpus());
    assert_eq!(part(&live, &|p| p.core), part(&from_lstopo, &|p| p.core));
    assert_eq!(
        part(&live, &|p| p.package),
        part(&from_lstopo, &|p| p.package)
    );
    assert_eq!(part(&live, &|p| p.l3), part(&from_lstopo, &|p| p.l3));
    assert_eq!(
        part(&live, &|p| p.numa_node.map(|n| n as usize)),
        part(&from_lstopo, &|p| p.numa_node.map(|n| n as usize))
    );
    let mem = |t: &scalescope_topo::Topology| {
        t.numa_nodes
            .iter()
            .map(|n| (n.id, n.memory_bytes))
            .collect::<Vec<_>>()
    };
    assert_eq!(mem(&live), mem(&from_lstopo));
}

/// The tour sweeps the built-in workloads, writes a report and says where it is.
#[test]
fn the_tour_runs_with_no_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let out = scalescope().current_dir(dir.path()).assert().success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        stdout.contains("Machine: ") && stdout.contains("over the placements that differ here"),
        "{stdout}"
    );
    assert!(
        stdout.contains("[ep] ") && stdout.contains("[stream] "),
        "{stdout}"
    );
    let report = stdout
        .lines()
        .find_map(|l| l.strip_prefix("Report: "))
        .expect("the tour names its report");
    let html = std::fs::read_to_string(dir.path().join(report)).unwrap();
    assert!(
        html.contains("built-in workload ep")
            && html.contains("built-in workload stream")
            && html.contains("built-in workload graph")
    );
    // The prediction for a larger machine, titled as one (a one-CPU machine
    // measures a single thread count and says why there is none).
    if stdout.contains("PREDICTION (not a measurement): ep on a larger machine") {
        assert!(
            html.contains("Prediction (not measured)"),
            "no prediction section"
        );
        assert!(html.contains("PREDICTION (not measured): speedup on the target"));
        // This machine is a VM (or a host under load): its doubts stand beside
        // the prediction, not only under the findings.
        let said: Vec<&str> = stdout
            .lines()
            .skip_while(|l| !l.starts_with("PREDICTION"))
            .take_while(|l| !l.is_empty())
            .collect();
        for doubt in ["the machine runs under", "the load average was"] {
            if stdout.contains(&format!("  [ep] {doubt}")) {
                let beside = format!("calibrated on a sweep in doubt: {doubt}");
                assert!(said.iter().any(|l| l.contains(&beside)), "{said:?}");
            }
        }
    } else {
        assert!(
            stdout.contains("Prediction for a larger machine: unavailable here: "),
            "{stdout}"
        );
    }
}
