//! The memory commands on this machine at 1-2 threads: STREAM validates, the
//! latency ladder rises from cache to memory, the matrix is 1x1 on a one-node
//! machine and says so, core-to-core latency pairs every CPU; bad sizes and node
//! numbers get clear errors.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

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

#[test]
fn stream_json_has_every_kernel_and_validates() {
    for threads in ["1", "2"] {
        let v = json(&[
            "mem",
            "stream",
            "--threads",
            threads,
            "--size",
            "16MiB",
            "--ntimes",
            "3",
            "--sustain",
            "0.05",
            "--json",
        ]);
        assert_eq!(v["verified"], true, "{}", v["verification"]);
        assert_eq!(v["schema_version"], 5);
        for k in ["copy", "scale", "add", "triad", "write", "write_nt", "read"] {
            assert!(v["kernels"][k]["gb_per_s"].as_f64().unwrap() > 0.1, "{k}");
            let sustained = &v["kernels"][k]["sustained"];
            if ["write", "write_nt", "read"].contains(&k) {
                // About 0.05 s of sweeps: at least one, and a rate from them.
                assert!(sustained["sweeps"].as_u64().unwrap() >= 1, "{k}");
                assert!(sustained["secs"].as_f64().unwrap() > 0.0, "{k}");
                assert!(sustained["gb_per_s"].as_f64().unwrap() > 0.1, "{k}");
            } else {
                assert!(sustained.is_null(), "{k}: {sustained}");
            }
        }
        // The sustained read's loop: one of the loops this CPU runs, and where
        // there are two, the one the trial measured faster.
        let l = &v["kernels"]["read"]["loop"];
        let trial = l["trial_gb_per_s"].as_object().unwrap();
        let chosen = l["chosen"].as_str().unwrap();
        if trial.is_empty() {
            assert_eq!(chosen, "wide", "{l}");
        } else {
            assert_eq!(trial.len(), 2, "{l}");
            let best = trial
                .values()
                .map(|g| g.as_f64().unwrap())
                .fold(0.0, f64::max);
            assert_eq!(trial[chosen].as_f64().unwrap(), best, "{l}");
            assert_eq!(l["trial_pairs"], 5, "{l}");
            assert!(l["trial_sweeps"].as_u64().unwrap() >= 1, "{l}");
        }
        assert!(v["kernels"]["triad"]["loop"].is_null());
        assert_eq!(v["array_bytes"], 16 << 20);
        // The sampler ran beside the kernels: its own thread is among the threads.
        assert!(v["evidence"].is_object(), "{}", v["evidence"]);
    }
    let v = json(&[
        "mem",
        "stream",
        "--threads",
        "1",
        "--size",
        "4MiB",
        "--ntimes",
        "2",
        "--nt",
        "--sustain",
        "0",
        "--sample-interval",
        "0",
        "--json",
    ]);
    assert_eq!(v["verified"], true);
    assert!(v["kernels"]["read"]["sustained"].is_null());
    // No sustained block, so no trial and no loop to report.
    assert!(v["kernels"]["read"]["loop"].is_null());
    // No sampler beside the kernels, so no evidence, and no invented one.
    assert!(v["evidence"].is_null(), "{}", v["evidence"]);
}

#[test]
fn latency_ladder_rises_from_cache_to_memory() {
    let v = json(&["mem", "latency", "--max-size", "256MiB", "--json"]);
    let rungs = v["rungs"].as_array().unwrap();
    assert_eq!(rungs[0]["bytes"], 4096);
    assert!(rungs.last().unwrap()["bytes"].as_u64().unwrap() >= 256 << 20);
    let ns = |i: usize| rungs[i]["ns"].as_f64().unwrap();
    let (small, large) = (ns(0), ns(rungs.len() - 1));
    assert!(small > 0.1 && small < 10.0, "L1 hit {small} ns");
    assert!(
        large > 4.0 * small,
        "memory {large} ns should be far slower than L1 {small} ns"
    );
}

#[test]
fn matrix_on_one_node_is_1x1_and_says_so() {
    let topo = scalescope_topo::Source::Live.load().unwrap();
    let v = json(&[
        "mem",
        "matrix",
        "--size",
        "32MiB",
        "--latency-size",
        "32MiB",
        "--passes",
        "2",
        "--json",
    ]);
    let m = &v["matrix"];
    let nodes = topo.numa_nodes.iter().filter(|n| n.allowed).count();
    assert_eq!(
        m["bandwidth_gb_per_s"].as_array().unwrap().len(),
        topo.cpu_numa_nodes().min(nodes)
    );
    assert!(m["bandwidth_gb_per_s"][0][0].as_f64().unwrap() > 0.1);
    assert!(m["latency_ns"][0][0].as_f64().unwrap() > 1.0);
    // Every pass is kept, the reported cell is the best, and the hop inference
    // checked its levels against their spread.
    let passes = m["bandwidth_samples"][0][0].as_array().unwrap();
    assert_eq!(passes.len(), 2);
    let best = passes.iter().filter_map(Value::as_f64).fold(0.0, f64::max);
    assert_eq!(m["bandwidth_gb_per_s"][0][0].as_f64(), Some(best));
    assert_eq!(m["latency_samples"][0][0].as_array().unwrap().len(), 2);
    assert_eq!(v["bandwidth_hops"]["noise"]["repeats"], 2);
    // Issue 36: the cell read through the loop a trial picked, as `mem stream`'s
    // sustained read does (both loops timed where the CPU has both).
    let l = &m["read_loops"][0][0];
    let chosen = l["chosen"].as_str().unwrap();
    let timed = l["trial_gb_per_s"].as_object().unwrap();
    match l["trial_pairs"].as_u64().unwrap() {
        0 => assert!(timed.is_empty(), "{l}"),
        _ => {
            assert_eq!(timed.keys().collect::<Vec<_>>(), ["paced", "wide"], "{l}");
            let best = timed
                .iter()
                .max_by(|a, b| a.1.as_f64().unwrap().total_cmp(&b.1.as_f64().unwrap()));
            assert_eq!(best.map(|b| b.0.as_str()), Some(chosen), "{l}");
        }
    }
    // The pages of the cell really were on the node asked for.
    assert_eq!(m["placement_verified"][0][0].as_f64(), Some(1.0));
    if nodes == 1 {
        assert!(v["note"].as_str().unwrap().starts_with("1x1"));
        scalescope()
            .args([
                "mem",
                "matrix",
                "--size",
                "16MiB",
                "--latency-size",
                "16MiB",
                "--passes",
                "1",
            ])
            .assert()
            .success()
            .stdout(predicate::str::contains(
                "1x1 matrix: this machine has one NUMA node",
            ));
    }
}

#[test]
fn c2c_pairs_every_cpu() {
    let v = json(&[
        "mem",
        "c2c",
        "--round-trips",
        "300",
        "--samples",
        "5",
        "--node",
        "0",
        "--json",
    ]);
    let c = &v["c2c"];
    let n = c["cpus"].as_array().unwrap().len();
    assert_eq!(c["pairs"].as_array().unwrap().len(), n * (n - 1) / 2);
    assert!(c["pairs"][0]["mean_ns"].as_f64().unwrap() > 1.0);
    assert_eq!(c["line_node"], 0);
}

#[test]
fn bad_sizes_and_nodes_get_clear_errors() {
    // Sizes and counts are checked while parsing (exit 2), flag and range first.
    for (args, needle) in [
        (
            vec!["mem", "stream", "--size", "lots"],
            "`lots` is not a size",
        ),
        (vec!["mem", "stream", "--ntimes", "1"], "2 to 1000000"),
        (vec!["mem", "stream", "--sustain=-1"], "0 to 3600 seconds"),
        (vec!["mem", "matrix", "--size", "0"], "`0` is out of range"),
        (vec!["mem", "matrix", "--passes", "0"], "1 to 1000"),
        (vec!["mem", "latency", "--max-size", "12XB"], "unknown unit"),
        (vec!["mem", "c2c", "--samples", "1"], "2 to 1000000"),
    ] {
        let out = scalescope().args(&args).output().unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        let first = err.lines().next().unwrap_or("");
        assert!(
            first.contains(args[2].split('=').next().unwrap_or("")),
            "{args:?}: {err}"
        );
        assert!(first.contains(needle), "{args:?}: {err}");
    }
    // What only the machine can refuse: one line, exit 1.
    for (args, needle) in [
        (vec!["mem", "stream", "--mem", "bind:7"], "memory node `7`"),
        (
            vec!["mem", "latency", "--cpu", "999"],
            "`cpu`: 999 is not a usable CPU",
        ),
        (vec!["mem", "c2c", "--node", "9"], "memory node `9`"),
        (
            vec!["mem", "c2c", "--cpus", "0,999"],
            "`cpus`: CPU 999 is not usable",
        ),
        (vec!["mem", "c2c", "--cpus", "0"], "needs two CPUs"),
    ] {
        let out = scalescope().args(&args).output().unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn report_draws_memory_documents() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, args: &[&str]| {
        let out = scalescope().args(args).output().unwrap();
        assert!(out.status.success());
        let p = dir.path().join(name);
        std::fs::write(&p, out.stdout).unwrap();
        p
    };
    let c2c = write(
        "c2c.json",
        &[
            "mem",
            "c2c",
            "--round-trips",
            "200",
            "--samples",
            "4",
            "--json",
        ],
    );
    let lat = write(
        "lat.json",
        &["mem", "latency", "--max-size", "1MiB", "--json"],
    );
    let mx = write(
        "mx.json",
        &[
            "mem",
            "matrix",
            "--size",
            "8MiB",
            "--latency-size",
            "8MiB",
            "--passes",
            "1",
            "--json",
        ],
    );
    let out = dir.path().join("report");
    scalescope()
        .arg("report")
        .args([&c2c, &lat, &mx])
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    for f in [
        "m1-c2c.svg",
        "m2-latency-ladder.svg",
        "m3-matrix-bandwidth.svg",
        "m3-matrix-latency.svg",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains("Core-to-core latency")
            && html.contains("Latency ladder")
            && html.contains("NUMA matrices")
    );
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"kind\":\"nope\"}").unwrap();
    scalescope()
        .arg("report")
        .arg(&bad)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("unknown document kind `nope`"));
}
