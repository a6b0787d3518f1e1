//! A launched sweep over nodes (`--nodes 1..8 --ranks-per-node 2,4`): one curve
//! per ranks-per-node value over the node counts, the node boundaries its events,
//! a knee where adding nodes stops paying attributed to a new node (as a knee at a
//! second socket is to the package), and the time basis without the launcher's
//! start-up.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::collections::BTreeMap;
use std::path::Path;

use scalescope_analysis::events::EventKind;
use scalescope_analysis::{analyze, Basis, Boundary};
use scalescope_model::fingerprint::Fingerprint;
use scalescope_model::launch::{HostsFrom, LaunchPlan, RunRanks};
use scalescope_model::plan::{Plan, Point};
use scalescope_model::store::{CommandSpec, Header, RunRecord, RunStatus};
use scalescope_place::{MemPolicy, Strategy};
use scalescope_topo::Source;

const NODES: [usize; 8] = [1, 2, 3, 4, 5, 6, 7, 8];

fn header() -> Header {
    let topo = Source::Synthetic("package:1 core:4 pu:1".into())
        .load()
        .unwrap();
    Header {
        schema: "scalescope.results".into(),
        schema_version: 4,
        scalescope_version: "test".into(),
        started_unix_secs: 0.0,
        command: CommandSpec {
            trials: None,
            kind: "external".into(),
            argv: vec!["scalescope-mpi-nas".into(), "is".into(), "B".into()],
            shell: false,
            workload: None,
            params: BTreeMap::new(),
            env: vec![],
            metrics: vec![],
        },
        plan: Plan {
            launch: Some(LaunchPlan {
                launcher: "srun".into(),
                program: "srun".into(),
                extra_args: vec![],
                hosts: (1..=8).map(|i| format!("n{i}")).collect(),
                ranks_per_node: vec!["2".into(), "4".into()],
                threads_per_rank: 1,
                node_counts: NODES.to_vec(),
                per_node: vec![2, 4],
                hosts_from: HostsFrom::Allocation,
            }),
            threads: vec![],
            placements: vec![Strategy::Compact],
            mems: vec![MemPolicy::FirstTouch],
            reps: 5,
            warmup: 0,
            options: Default::default(),
            order: Default::default(),
        },
        timeout_secs: None,
        kill_grace_secs: None,
        machine: Fingerprint::read(Path::new("/nonexistent"), &topo),
    }
}

/// Five runs of a point whose program takes `secs` (±0.5%), each wall time with
/// the launcher's 0.5 s start-up on top.
fn runs(point: &Point, per_node: usize, secs: f64) -> Vec<RunRecord> {
    (0..5)
        .map(|rep| {
            let jitter = 1.0 + 0.005 * (rep as f64 - 2.0) / 2.0;
            let mut r: RunRecord = serde_json::from_value(serde_json::json!({
                "threads": point.threads, "nodes": point.nodes, "placement": "compact",
                "mem": "first-touch", "rep": rep, "warmup": false, "thread_cpus": [],
                "started_unix_secs": 0.0, "wall_secs": secs * jitter + 0.5,
                "status": "ok", "metrics": {},
            }))
            .unwrap();
            let nodes = point.nodes.unwrap();
            r.ranks = Some(RunRanks {
                launcher: "srun".into(),
                hosts: (1..=nodes).map(|i| format!("n{i}")).collect(),
                nodes,
                ranks_per_node: per_node,
                threads_per_rank: 1,
                command: String::new(),
                check: None,
                launch_secs: Some(0.5),
            });
            assert_eq!(r.status, RunStatus::Ok);
            r
        })
        .collect()
}

#[test]
fn a_knee_over_nodes_is_attributed_to_the_new_node() {
    let h = header();
    // Linear up to 4 nodes, then each node adds a tenth of one (an interconnect
    // that saturates): the same at 2 and 4 ranks per node.
    let speedup = |n: f64| if n <= 4.0 { n } else { 4.0 + 0.1 * (n - 4.0) };
    let records: Vec<RunRecord> = h
        .plan
        .points()
        .iter()
        .flat_map(|p| {
            let n = p.nodes.unwrap();
            runs(p, p.threads / n, 100.0 / speedup(n as f64))
        })
        .collect();
    let a = analyze(&h, &records, &Basis::Time);
    let per_node: Vec<Option<usize>> = a.curves.iter().map(|c| c.ranks_per_node).collect();
    assert_eq!(per_node, [Some(2), Some(4)]);
    for c in &a.curves {
        // Every point is a node count, judged without the launcher's start-up: the
        // speedups are the program's own.
        let threads: Vec<usize> = c.points.iter().map(|p| p.threads).collect();
        let r = c.ranks_per_node.unwrap();
        assert_eq!(threads, NODES.iter().map(|n| n * r).collect::<Vec<_>>());
        let at4 = &c.points[3];
        assert!((at4.speedup - 4.0).abs() < 0.05, "{}", at4.speedup);
        assert!(c.points.iter().all(|p| p.usage.is_none()));
        assert!(c.events.iter().all(|e| e.kind == EventKind::NewNode));
        assert_eq!(c.events.len(), 7);
        // The knee: after 4 nodes, at the boundary to the fifth.
        let knee = c
            .knees
            .iter()
            .find(|k| k.knee.bend == scalescope_analysis::knee::Bend::Flattens)
            .unwrap_or_else(|| panic!("no knee: {:?}", c.knees));
        assert_eq!(knee.knee.threads, 4 * r, "{knee:?}");
        assert_eq!(knee.boundary, Boundary::Node, "{knee:?}");
        let cause = knee.cause.as_ref().unwrap();
        assert_eq!(cause.kind, EventKind::NewNode);
        assert!(
            cause.description.contains("node #5"),
            "{}",
            cause.description
        );
    }
    // The point summaries judge by the same time: 4 nodes are 4x 1 node (their
    // wall times, with the launcher's start-up, give 3.94x).
    let summaries =
        scalescope_analysis::summary::summarize_points(&h.plan, &records, &[], &Default::default());
    let four = summaries
        .iter()
        .find(|s| s.point.nodes == Some(4) && s.point.threads == 8)
        .unwrap();
    assert_eq!(four.baseline.as_ref().unwrap().nodes, Some(1));
    assert!(
        (four.speedup.unwrap() - 4.0).abs() < 0.01,
        "{:?}",
        four.speedup
    );
    // The findings name the curve by its ranks per node and speak of the
    // interconnect.
    let knee = a
        .findings
        .iter()
        .find(|f| f.boundary == Boundary::Node)
        .unwrap_or_else(|| panic!("{:#?}", a.findings));
    assert!(knee.title.contains("2 ranks per node") || knee.title.contains("4 ranks per node"));
    let advice = knee.advice.as_deref().unwrap_or("");
    assert!(advice.contains("interconnect"), "{advice}");
}
