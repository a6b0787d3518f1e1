//! `import` reads back every `curves.csv` that `report` writes (and every `summary.csv`
//! a sweep writes): result sets under any
//! label (commas, quotes, line breaks, a leading `#`, any Unicode), every placement
//! (likwid and CPU-list expressions with commas included) and memory policy, any thread
//! counts, times and figures of merit of any magnitude, the time basis or a named figure
//! (names with commas, quotes, colons), and the empty fields of points without usage,
//! Karp-Flatt or figure. Each point comes back as one run carrying its medians, exactly.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;
use scalescope_analysis::summary::{summarize_points, to_csv, Baseline};
use scalescope_analysis::Basis;
use scalescope_model::fingerprint::Fingerprint;
use scalescope_model::import::{parse_csv, parse_csv_for, ImportOptions};
use scalescope_model::plan::Plan;
use scalescope_model::store::{CommandSpec, Header, MetricSpec, RunRecord, RunStatus};
use scalescope_place::{MemPolicy, Strategy as Placement};
use scalescope_report::{CsvExporter, Exporter, ResultSet};
use scalescope_topo::{Source, Topology};

fn machine() -> Topology {
    Source::Synthetic("package:2 numa:1 core:4 pu:2".into())
        .load()
        .unwrap()
}

/// Every placement form the writer can meet: the named strategies and CPU expressions
/// (some with commas, some that do not fit every thread count: no usage then).
const PLACEMENTS: [&str; 9] = [
    "compact",
    "scatter",
    "cores-first",
    "smt-pairs",
    "spread",
    "cpus=0-3,8",
    "cpus=S0:0-1@S1:0-1",
    "cpus=N:0-7",
    "cpus=E:S0:2:1:2",
];
const MEMS: [&str; 5] = [
    "first-touch",
    "interleave",
    "bind:0+1",
    "preferred:1",
    "local",
];

/// What one generated result set is made of.
#[derive(Debug, Clone)]
struct Spec {
    label: String,
    placements: Vec<Placement>,
    mems: Vec<MemPolicy>,
    threads: Vec<usize>,
    reps: usize,
    /// The figure of merit and whether higher is better; `None`: the time basis.
    metric: Option<(String, bool)>,
    /// One value per run (seconds, and the figure when there is one), any magnitude.
    values: Vec<(f64, f64)>,
}

fn magnitude() -> impl Strategy<Value = f64> {
    prop_oneof![
        (-12.0f64..12.0).prop_map(|e| 10f64.powf(e)),
        Just(8.080000000000002),
        Just(1.0 / 3.0),
        Just(f64::MIN_POSITIVE),
    ]
}

fn spec() -> impl Strategy<Value = Spec> {
    let label = prop_oneof![any::<String>(), "[#a-z ,\"\n\r:/é]{0,10}"];
    let metric = proptest::option::of(("[a-zA-Z0-9 ,\"/:#_-]{1,10}", any::<bool>()));
    (
        label,
        proptest::sample::subsequence(PLACEMENTS.to_vec(), 1..3),
        proptest::sample::subsequence(MEMS.to_vec(), 1..3),
        proptest::collection::btree_set(1usize..=16, 1..5),
        1usize..=2,
        metric,
        proptest::collection::vec((magnitude(), magnitude()), 64),
    )
        .prop_map(|(label, pl, mems, threads, reps, metric, values)| Spec {
            label,
            placements: pl.iter().map(|p| p.parse().unwrap()).collect(),
            mems: mems.iter().map(|m| m.parse().unwrap()).collect(),
            threads: threads.into_iter().collect(),
            reps,
            metric,
            values,
        })
}

fn result_set(spec: &Spec, topo: &Topology) -> ResultSet {
    let metrics: Vec<MetricSpec> = spec
        .metric
        .iter()
        .map(|(name, higher)| MetricSpec {
            name: name.clone(),
            regex: None,
            higher_is_better: *higher,
        })
        .collect();
    let plan = Plan {
        launch: None,
        threads: spec.threads.clone(),
        placements: spec.placements.clone(),
        mems: spec.mems.clone(),
        reps: spec.reps,
        warmup: 0,
        options: Default::default(),
        order: Default::default(),
    };
    let header = Header {
        schema: "scalescope.results".into(),
        schema_version: 1,
        scalescope_version: "test".into(),
        started_unix_secs: 0.0,
        command: CommandSpec {
            trials: None,
            kind: "external".into(),
            argv: vec!["./app".into()],
            shell: false,
            workload: None,
            params: BTreeMap::new(),
            env: vec![],
            metrics: metrics.clone(),
        },
        plan,
        timeout_secs: None,
        kill_grace_secs: None,
        machine: Fingerprint::read(Path::new("/nonexistent"), topo),
    };
    let mut records = Vec::new();
    for (i, point) in header.plan.points().into_iter().enumerate() {
        for rep in 0..spec.reps {
            let (secs, figure) = spec.values[(i * spec.reps + rep) % spec.values.len()];
            let mut run = run(point.clone(), rep, secs);
            if let Some((name, _)) = &spec.metric {
                run.metrics.insert(name.clone(), figure);
            }
            records.push(run);
        }
    }
    let basis = Basis::default_for(&header);
    let analysis = scalescope_analysis::analyze(&header, &records, &basis);
    ResultSet::new(spec.label.clone(), header, records, analysis)
}

fn run(point: scalescope_model::plan::Point, rep: usize, wall_secs: f64) -> RunRecord {
    RunRecord {
        ranks: None,
        point,
        rep,
        warmup: false,
        thread_cpus: vec![],
        started_unix_secs: 0.0,
        wall_secs,
        user_secs: None,
        sys_secs: None,
        max_rss_bytes: None,
        status: RunStatus::Ok,
        exit_code: Some(0),
        signal: None,
        error: None,
        metrics: BTreeMap::new(),
        placement_check: None,
        stdout_log: None,
        stderr_log: None,
        evidence: None,
        node_evidence: Vec::new(),
        setup: None,
    }
}

fn options(file: &str, spec: &Spec) -> ImportOptions {
    ImportOptions {
        file: file.into(),
        placement: None,
        lower_is_better: spec.metric.as_ref().is_some_and(|(_, higher)| !higher),
    }
}

/// Imports the set labelled `set.label` from `csv` and checks every point came back.
fn reads_back(csv: &str, set: &ResultSet, spec: &Spec) -> Result<(), TestCaseError> {
    let opts = options("curves.csv", spec);
    let imp = parse_csv_for(csv, &opts, Some(&set.label))
        .map_err(|e| TestCaseError::fail(format!("{e}\n{csv}")))?;
    let names: Vec<&str> = imp.metrics.iter().map(|m| m.name.as_str()).collect();
    let wanted: Vec<&str> = spec.metric.iter().map(|(n, _)| n.as_str()).collect();
    prop_assert_eq!(names, wanted);
    if let Some(m) = imp.metrics.first() {
        prop_assert_eq!(m.higher_is_better, spec.metric.as_ref().unwrap().1);
    }
    let points: usize = set.analysis.curves.iter().map(|c| c.points.len()).sum();
    prop_assert_eq!(imp.runs.len(), points);
    for c in &set.analysis.curves {
        for p in &c.points {
            let got: Vec<&RunRecord> = imp
                .runs
                .iter()
                .filter(|r| {
                    r.point.threads == p.threads
                        && r.point.placement == c.placement
                        && r.point.mem == c.mem
                })
                .collect();
            prop_assert_eq!(got.len(), 1, "{} {} {}", c.placement, c.mem, p.threads);
            let time = p.time_median_secs.filter(|t| *t > 0.0).unwrap_or(0.0);
            prop_assert_eq!(got[0].wall_secs, time);
            let figure = spec.metric.as_ref().map(|(n, _)| got[0].metrics[n]);
            prop_assert_eq!(figure, p.metric_median);
        }
    }
    Ok(())
}

/// The sweep's `summary.csv` of the same runs: each point back as one run carrying its
/// median time and figure.
fn summary_reads_back(set: &ResultSet, spec: &Spec) -> Result<(), TestCaseError> {
    let h = &set.header;
    let points = summarize_points(
        &h.plan,
        &set.records,
        &h.command.metrics,
        &Baseline::default(),
    );
    let csv = to_csv(&points);
    let imp = parse_csv(&csv, &options("summary.csv", spec))
        .map_err(|e| TestCaseError::fail(format!("{e}\n{csv}")))?;
    prop_assert_eq!(imp.runs.len(), points.len());
    for p in &points {
        let got: Vec<&RunRecord> = imp.runs.iter().filter(|r| r.point == p.point).collect();
        prop_assert_eq!(got.len(), 1);
        prop_assert_eq!(got[0].wall_secs, p.wall_secs.as_ref().unwrap().median);
        for (name, m) in &p.metrics {
            prop_assert_eq!(got[0].metrics[name], m.median);
        }
        prop_assert_eq!(got[0].metrics.len(), p.metrics.len());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn import_reads_back_every_curves_csv_the_report_writes(
        specs in proptest::collection::vec(spec(), 1..=3),
    ) {
        let topo = machine();
        // Distinct labels: a suffix keeps each generated label's start (a `#`, a quote).
        let specs: Vec<Spec> = specs
            .into_iter()
            .enumerate()
            .map(|(i, s)| Spec { label: format!("{}#{i}", s.label), ..s })
            .collect();
        let sets: Vec<ResultSet> = specs.iter().map(|s| result_set(s, &topo)).collect();
        let csv = String::from_utf8(CsvExporter.export(&sets)).unwrap();
        for (set, spec) in sets.iter().zip(&specs) {
            reads_back(&csv, set, spec)?;
            // With the byte-order mark a spreadsheet puts in front when it saves it.
            let resaved = format!("\u{feff}{csv}");
            reads_back(&resaved, set, spec)?;
            summary_reads_back(set, spec)?;
        }
    }
}

/// The case: a quoted `cpus=0-3,8` placement, which a comma split cut in two.
#[test]
fn a_quoted_cpu_list_placement_reads_back() {
    let spec = Spec {
        label: "runs/a,b".into(),
        placements: vec!["cpus=0-3,8".parse().unwrap()],
        mems: vec![MemPolicy::FirstTouch],
        threads: vec![1, 2, 4],
        reps: 1,
        metric: None,
        values: vec![(8.0, 0.0), (4.0, 0.0), (2.5, 0.0)],
    };
    let set = result_set(&spec, &machine());
    let csv = String::from_utf8(CsvExporter.export(std::slice::from_ref(&set))).unwrap();
    assert!(
        csv.contains("\"runs/a,b\",\"cpus=0-3,8\",first-touch,1,"),
        "{csv}"
    );
    reads_back(&csv, &set, &spec).unwrap();
}
