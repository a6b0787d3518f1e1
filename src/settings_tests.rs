//! One parser per workload setting: for every workload a sweep names, its command's
//! flags and `sweep --workload NAME --param KEY=VALUE` build equal typed settings
//! (the same clap definitions, the same defaults), and a bad value is refused by
//! both with the same reason.

use std::collections::BTreeMap;

use clap::Parser;
use scalescope_workloads::graph::settings::GraphSettings;
use scalescope_workloads::Settings;

use crate::cli::{Cli, Command, GraphCommand, MemCommand, NpbCommand};

/// The settings a kernel command's flags build.
fn from_command(argv: &[&str]) -> Settings {
    let cli = Cli::try_parse_from(std::iter::once("scalescope").chain(argv.iter().copied()))
        .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    match cli.command {
        Some(Command::Npb(NpbCommand::Ep(a))) => Settings::Ep(a.settings),
        Some(Command::Npb(NpbCommand::Is(a))) => Settings::Is(a.settings),
        Some(Command::Npb(NpbCommand::Ft(a))) => Settings::Ft(a.settings),
        Some(Command::Tpch(a)) => Settings::Tpch(a.settings),
        Some(Command::Graph(GraphCommand::Count(a))) => {
            Settings::Graph(GraphSettings::Count(a.settings))
        }
        Some(Command::Graph(GraphCommand::Bfs(a))) => {
            Settings::Graph(GraphSettings::Bfs(a.settings))
        }
        Some(Command::Graph(GraphCommand::Pr(a))) => Settings::Graph(GraphSettings::Pr(a.settings)),
        Some(Command::Mem(MemCommand::Stream(a))) => Settings::Stream(a.settings),
        Some(Command::Sync(a)) => Settings::Sync(a.settings),
        other => panic!("not a kernel command: {other:?}"),
    }
}

/// The `--param` pairs of `sweep --workload NAME`, as the sweep parses them.
fn sweep_params(workload: &str, params: &[&str]) -> BTreeMap<String, String> {
    let mut argv = vec!["scalescope", "sweep", "--workload", workload];
    for p in params {
        argv.extend(["--param", p]);
    }
    let cli = Cli::try_parse_from(&argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    let Some(Command::Sweep(s)) = cli.command else {
        panic!("{argv:?}")
    };
    s.params.into_iter().collect()
}

/// The settings `sweep --workload NAME --param ...` builds.
fn from_sweep(workload: &str, params: &[&str]) -> Settings {
    Settings::from_params(workload, &sweep_params(workload, params))
        .unwrap_or_else(|e| panic!("{workload} {params:?}: {e}"))
}

/// A command's argv, and the sweep's workload and params that must agree with it.
type Pair = (Vec<&'static str>, &'static str, Vec<&'static str>);

fn pairs() -> Vec<Pair> {
    [
        npb_and_tpch(),
        graph_count(),
        graph_traversals(),
        stream_and_sync(),
    ]
    .concat()
}

fn npb_and_tpch() -> Vec<Pair> {
    vec![
        (vec!["npb", "ep"], "ep", vec![]),
        (vec!["npb", "ep", "--class", "A"], "ep", vec!["class=A"]),
        (vec!["npb", "is"], "is", vec![]),
        (vec!["npb", "is", "--class", "B"], "is", vec!["class=B"]),
        (vec!["npb", "ft"], "ft", vec![]),
        (vec!["npb", "ft", "--class", "W"], "ft", vec!["class=W"]),
        (vec!["tpch"], "tpch", vec![]),
        (
            vec![
                "tpch", "q6", "--sf", "0.01", "--layout", "naive", "--repeat", "2", "--force",
            ],
            "tpch",
            vec![
                "query=q6",
                "sf=0.01",
                "layout=naive",
                "repeat=2",
                "force=true",
            ],
        ),
        (vec!["tpch", "--tbl", "li.tbl"], "tpch", vec!["tbl=li.tbl"]),
    ]
}

fn graph_count() -> Vec<Pair> {
    vec![
        (vec!["graph", "count"], "graph", vec![]),
        (vec!["graph", "count"], "graph", vec!["kernel=count"]),
        (
            vec![
                "graph",
                "count",
                "--pattern",
                "triangle",
                "--induced",
                "--graph",
                "kron:10",
                "--force",
            ],
            "graph",
            vec![
                "pattern=triangle",
                "induced=true",
                "graph=kron:10",
                "force=true",
            ],
        ),
    ]
}

fn graph_traversals() -> Vec<Pair> {
    vec![
        (vec!["graph", "bfs"], "graph", vec!["kernel=bfs"]),
        (
            vec!["graph", "bfs", "--graph", "uniform:8", "--source", "3"],
            "graph",
            vec!["kernel=bfs", "graph=uniform:8", "source=3"],
        ),
        (vec!["graph", "pr"], "graph", vec!["kernel=pr"]),
        (
            vec![
                "graph",
                "pr",
                "--sync",
                "striped-locks:64",
                "--batch",
                "8",
                "--tolerance",
                "1e-6",
            ],
            "graph",
            vec![
                "kernel=pr",
                "sync=striped-locks:64",
                "batch=8",
                "tolerance=1e-6",
            ],
        ),
    ]
}

fn stream_and_sync() -> Vec<Pair> {
    vec![
        (vec!["mem", "stream"], "stream", vec![]),
        (
            vec![
                "mem",
                "stream",
                "--size",
                "16MiB",
                "--ntimes",
                "4",
                "--nt",
                "--sustain",
                "0.5",
            ],
            "stream",
            vec!["size=16MiB", "ntimes=4", "nt=true", "sustain=0.5"],
        ),
        (vec!["sync"], "sync", vec![]),
        (
            vec![
                "sync",
                "--table",
                "64",
                "--batches",
                "1,8,64",
                "--updates",
                "1000",
                "--stripes",
                "16",
                "--reps",
                "2",
                "--force",
            ],
            "sync",
            vec![
                "table=64",
                "batches=1,8,64",
                "updates=1000",
                "stripes=16",
                "reps=2",
                "force=true",
            ],
        ),
    ]
}

#[test]
fn every_workloads_command_and_sweep_build_equal_settings() {
    let mut covered = std::collections::BTreeSet::new();
    for (argv, workload, params) in pairs() {
        let (a, b) = (from_command(&argv), from_sweep(workload, &params));
        assert_eq!(
            a, b,
            "{argv:?} against sweep --workload {workload} {params:?}"
        );
        covered.insert(workload);
    }
    for w in scalescope_workloads::AVAILABLE.split(", ") {
        assert!(covered.contains(w), "no pair for {w}");
    }
}

#[test]
fn a_value_given_to_the_command_is_what_the_sweep_gets() {
    // The values, not only equality: no pair agrees on a default both got wrong.
    let Settings::Is(s) = from_sweep("is", &["class=B"]) else {
        panic!()
    };
    assert_eq!(s.class.as_str(), "B");
    let Settings::Sync(s) = from_command(&["sync", "--batches", "1,8"]) else {
        panic!()
    };
    let batches: Vec<u64> = s.batches.iter().map(|b| b.get()).collect();
    assert_eq!(
        (batches, s.table.get(), s.reps.get()),
        (vec![1, 8], 4096, 3)
    );
}

#[test]
fn a_bad_value_is_refused_both_ways_for_the_same_reason() {
    for (argv, workload, param, reason) in [
        (
            vec!["npb", "is", "--class", "Z"],
            "is",
            "class=Z",
            "`Z` is not one of S, W, A, B, C",
        ),
        (
            vec!["tpch", "--sf", "0"],
            "tpch",
            "sf=0",
            "scale factor 0 is not in (0, 1000]",
        ),
        (
            vec!["sync", "--table", "1e12"],
            "sync",
            "table=1e12",
            "`1e12` is not a whole number",
        ),
        (
            vec!["graph", "count", "--graph", "kron:99"],
            "graph",
            "graph=kron:99",
            "the scale must be 1-30",
        ),
        (
            vec!["mem", "stream", "--ntimes", "1"],
            "stream",
            "ntimes=1",
            "`1` is out of range",
        ),
    ] {
        let flag = Cli::try_parse_from(std::iter::once("scalescope").chain(argv.iter().copied()))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(flag.contains(reason), "{argv:?}: {flag}");
        let param = Settings::from_params(workload, &sweep_params(workload, &[param]))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        let key = param_key(param.as_str());
        assert!(
            param.contains(reason) && !param.contains("--"),
            "{workload} {param}"
        );
        assert!(!key.is_empty(), "{param}");
    }
}

/// The parameter an error names (`workload parameter `class`: ...`).
fn param_key(e: &str) -> &str {
    e.strip_prefix("workload parameter `")
        .and_then(|r| r.split('`').next())
        .unwrap_or("")
}
