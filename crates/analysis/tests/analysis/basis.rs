//! One basis per sweep, said once (issue 32.4): a TPC-H-like sweep whose timed
//! part is a tenth of each run gets the figure-of-merit basis, and the run table
//! and the analysis give the same speedup on it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use crate::generator;

use scalescope_analysis::basis_rule::{rule, statement, table, timed_share, SMALL_SHARE};
use scalescope_analysis::summary::summarize_points;
use scalescope_analysis::{analyze, Basis};
use scalescope_model::plan::Point;
use scalescope_model::store::{Header, MetricSpec, RunRecord};
use scalescope_model::workload::SetupCosts;
use scalescope_place::{MemPolicy, Strategy};
use scalescope_topo::Source;

/// The cores-first, first-touch point at `t` threads.
fn cores_first(t: usize) -> Point {
    Point {
        threads: t,
        placement: Strategy::CoresFirst,
        mem: MemPolicy::FirstTouch,
        nodes: None,
    }
}

/// A TPC-H-like sweep: each run's wall time is set-up (loading, starting and
/// pinning workers, checking) plus a query of a small part of it; the query's
/// rows/s is the figure of merit.
fn tpch_like() -> (Header, Vec<RunRecord>) {
    let topo = Source::Synthetic("package:1 core:4".into()).load().unwrap();
    let mut header = generator::header(&topo, vec![1, 2, 4], 3);
    header.command.metrics = vec![MetricSpec {
        name: "rows_per_s".into(),
        regex: None,
        higher_is_better: true,
    }];
    let mut records = Vec::new();
    for (t, query) in [(1usize, 1.0), (2, 0.55), (4, 0.3)] {
        for rep in 0..3 {
            let point = cores_first(t);
            // The set-up grows with the threads: wall time gets slower while the
            // query gets faster.
            let wall = 9.0 + 2.0 * t as f64 + query;
            let mut r = generator::run(point, rep, wall);
            r.metrics.insert("rows_per_s".into(), 6e6 / query);
            r.setup = Some(SetupCosts {
                kernel_secs: Some(query),
                ..SetupCosts::default()
            });
            records.push(r);
        }
    }
    (header, records)
}

#[test]
fn a_small_timed_share_gets_the_figure_of_merit_said_once_in_the_table_and_the_analysis() {
    let (h, r) = tpch_like();
    let basis = rule(&h);
    assert_eq!(basis.label(), "figure of merit `rows_per_s`");
    let share = timed_share(&r).unwrap();
    assert!(share < SMALL_SHARE, "{share}");
    let said = statement(&basis, &h, &r);
    assert!(
        said.contains("the timed part is 4% of each run's wall time"),
        "{said}"
    );
    // Wall time says 4 threads are slower; the run table on the basis and the
    // analysis both say 3.33x.
    let points = summarize_points(&h.plan, &r, &h.command.metrics, &Default::default());
    let wall = points
        .iter()
        .find(|p| p.point.threads == 4)
        .and_then(|p| p.speedup)
        .unwrap();
    assert!(wall < 1.0, "wall time says slower: {wall}");
    let t = table(&points, &basis);
    assert!(
        t.starts_with("speedup and eff: figure of merit `rows_per_s`\n"),
        "{t}"
    );
    assert!(
        t.contains("3.33x") && !t.contains(&format!("{wall:.2}x")),
        "{t}"
    );
    let a = analyze(&h, &r, &basis);
    let at4 = a.curves[0]
        .points
        .iter()
        .find(|p| p.threads == 4)
        .map(|p| p.speedup)
        .unwrap();
    assert!((at4 - 1.0 / 0.3).abs() < 1e-9, "{at4}");
    // With wall time asked for, the sentence says what it measures instead.
    let time = statement(&Basis::Time, &h, &r);
    assert!(time.contains("--basis metric:rows_per_s"), "{time}");
}

#[test]
fn without_a_timed_part_the_sentence_is_plain() {
    let (h, mut r) = tpch_like();
    for run in &mut r {
        run.setup = None;
    }
    assert_eq!(timed_share(&r), None);
    assert_eq!(
        statement(&rule(&h), &h, &r),
        "figure of merit `rows_per_s`, the program's own measure of its work"
    );
}

/// A sweep run with `--trials N` says once how each run made its figure.
#[test]
fn trials_are_said_with_the_basis() {
    let (mut h, mut r) = tpch_like();
    for run in &mut r {
        run.setup = None;
    }
    h.command.trials = Some(5);
    assert_eq!(
        statement(&rule(&h), &h, &r),
        "figure of merit `rows_per_s`, the program's own measure of its work; each run's figure is the median of its 4 warm trials of the kernel in one process (the first of 5, cold, left out)"
    );
    let time = statement(&Basis::Time, &h, &r);
    assert!(
        time.ends_with("; each run's wall time covers all 5 trials of its kernel"),
        "{time}"
    );
}

/// Two points weigh no model against another: the model finding says so, never
/// that every model contradicts the data (the tour's two-thread sweeps).
#[test]
fn two_points_are_too_few_to_choose_a_model_and_it_says_so() {
    let topo = Source::Synthetic("package:1 core:2".into()).load().unwrap();
    let header = generator::header(&topo, vec![1, 2], 3);
    let mut records = Vec::new();
    for (t, secs) in [(1usize, 10.0), (2, 6.0)] {
        for rep in 0..3 {
            let point = cores_first(t);
            records.push(generator::run(point, rep, secs * (1.0 + 0.01 * rep as f64)));
        }
    }
    let a = analyze(&header, &records, &Basis::Time);
    let titles: Vec<&str> = a
        .findings
        .iter()
        .filter(|f| f.title.contains("scaling model"))
        .map(|f| f.title.as_str())
        .collect();
    assert_eq!(titles.len(), 1, "{titles:?}");
    assert!(titles[0].contains("2 points are too few"), "{titles:?}");
    assert!(!titles[0].contains("contradicting"), "{titles:?}");
}
