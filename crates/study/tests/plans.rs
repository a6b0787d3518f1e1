//! Study plans on recorded shapes, with fixed probe times: the placements, thread
//! counts and sizes each study chooses, and what it says cannot occur.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use scalescope_study::plan::{plan, Ctx};
use scalescope_study::probe::{FixedProbe, Timing};
use scalescope_study::{Facts, StudyName};
use scalescope_topo::Source;

fn facts(spec: &str) -> (scalescope_topo::Topology, Facts) {
    let topo = Source::Synthetic(spec.into()).load().unwrap();
    let mut f = Facts::of(&topo, std::path::Path::new("/nonexistent/scalescope"), None);
    f.rtm = false;
    (topo, f)
}

fn planned(study: StudyName, spec: &str, budget: f64, kernel: f64) -> scalescope_study::StudyPlan {
    let (topo, facts) = facts(spec);
    let mut probe = FixedProbe {
        answers: vec![Timing {
            kernel_secs: kernel,
            wall_secs: kernel * 10.0,
        }],
        asked: Vec::new(),
    };
    let mut ctx = Ctx {
        topo: &topo,
        facts,
        budget_secs: budget,
        probe: &mut probe,
    };
    plan(study, &mut ctx).unwrap()
}

fn arg_after<'a>(args: &'a [String], flag: &str) -> &'a str {
    let i = args.iter().position(|a| a == flag).unwrap();
    &args[i + 1]
}

#[test]
fn graph_mining_on_two_smt_packages_plans_the_socket_and_smt_boundaries() {
    let p = planned(StudyName::GraphMining, "package:2 core:4 pu:2", 120.0, 0.04);
    let sweep = &p.steps[0];
    assert_eq!(
        arg_after(&sweep.args, "--placement"),
        "cores-first,smt-pairs"
    );
    let threads: Vec<usize> = arg_after(&sweep.args, "--threads")
        .split(',')
        .map(|t| t.parse().unwrap())
        .collect();
    // One package's cores (4), then the second package (5); all cores (8), then SMT (9); all PUs (16).
    for t in [4, 5, 8, 9, 16] {
        assert!(threads.contains(&t), "{threads:?} lacks {t}");
    }
    assert!(
        p.notes
            .iter()
            .all(|n| !n.contains("no SMT") && !n.contains("one package")),
        "{:?}",
        p.notes
    );
    assert!(
        p.estimate_secs() <= 0.6 * 120.0 + 1e-9,
        "{}",
        p.estimate_secs()
    );
}

#[test]
fn graph_mining_grows_the_graph_with_the_budget() {
    let scale = |budget: f64| {
        let p = planned(
            StudyName::GraphMining,
            "package:1 core:2 pu:1",
            budget,
            0.04,
        );
        arg_after(&p.steps[0].args, "--param").to_string()
    };
    // 18 s for the runs: kron:15 costs about 6.3 s of input and 8.7 s of runs,
    // kron:16 about 16.4 s of input alone.
    assert_eq!(scale(30.0), "graph=kron:15");
    assert_ne!(scale(600.0), scale(30.0));
}

#[test]
fn on_one_node_without_smt_the_study_says_what_cannot_occur() {
    let p = planned(StudyName::GraphMining, "package:1 core:2 pu:1", 600.0, 0.04);
    let notes = p.notes.join("\n");
    assert!(notes.contains("no SMT"), "{notes}");
    assert!(notes.contains("one package"), "{notes}");
    assert!(notes.contains("one NUMA node"), "{notes}");
    let sync = planned(StudyName::Sync, "package:1 core:2 pu:1", 60.0, 0.1);
    assert!(sync.notes.join(" ").contains("no TSX"), "{:?}", sync.notes);
}

#[test]
fn tpch_runs_both_queries_in_both_layouts_on_one_shared_input() {
    let p = planned(
        StudyName::TpchNuma,
        "package:2 numa:2 core:4 pu:1",
        600.0,
        0.05,
    );
    let names: Vec<&str> = p.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["q1-numa", "q1-naive", "q6-numa", "q6-naive"]);
    for s in &p.steps {
        assert_eq!(arg_after(&s.args, "--input-cache"), "inputs");
    }
}

#[test]
fn a_plan_survives_its_file() {
    let p = planned(StudyName::SmtMpi, "package:1 core:2 pu:2", 60.0, 0.05);
    let dir = tempfile::tempdir().unwrap();
    p.save(dir.path()).unwrap();
    let back = scalescope_study::StudyPlan::load(dir.path())
        .unwrap()
        .unwrap();
    assert_eq!(back, p);
    assert!(
        p.text().contains("scalescope sweep --workload ep"),
        "{}",
        p.text()
    );
}

#[test]
fn a_budget_under_ten_seconds_is_refused() {
    let (topo, facts) = facts("package:1 core:2 pu:1");
    let mut probe = FixedProbe {
        answers: Vec::new(),
        asked: Vec::new(),
    };
    let mut ctx = Ctx {
        topo: &topo,
        facts,
        budget_secs: 5.0,
        probe: &mut probe,
    };
    assert!(plan(StudyName::Sync, &mut ctx).is_err());
}
