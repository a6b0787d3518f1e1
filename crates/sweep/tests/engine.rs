//! The sweep's bookkeeping with a fake executor and a fixed clock: order, results
//! on disk, failures, resume, statistics. No process is started.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use scalescope_analysis::summary::{summarize_points, to_csv, Baseline};
use scalescope_model::fingerprint::Fingerprint;
use scalescope_model::plan::Plan;
use scalescope_model::store::{read_results, CommandSpec, Header, ResultsStore, RunStatus};
use scalescope_place::{MemPolicy, Strategy};
use scalescope_sweep::engine::{self, Clock, JobTemplate, Silent, SweepSetup};
use scalescope_sweep::exec::{ok_outcome, ExecSpec, FakeExecutor, Outcome};
use scalescope_topo::{Source, Topology};

struct FixedClock;
impl Clock for FixedClock {
    fn unix_secs(&self) -> f64 {
        1_700_000_000.0
    }
}

fn topo() -> Topology {
    Source::Synthetic("package:2 core:4 pu:2 numbering=smt-last".into())
        .load()
        .unwrap()
}

fn header(plan: Plan) -> Header {
    let t = topo();
    Header {
        schema: "scalescope.results".into(),
        schema_version: 1,
        scalescope_version: "test".into(),
        started_unix_secs: 0.0,
        command: CommandSpec {
            trials: None,
            kind: "external".into(),
            argv: vec![
                "./app".into(),
                "--threads={threads}".into(),
                "{cpus}".into(),
            ],
            shell: false,
            workload: None,
            params: BTreeMap::new(),
            env: vec![("EXTRA".into(), "1".into())],
            metrics: vec![scalescope_sweep::metric::parse_spec("rate=rate ([0-9.]+)").unwrap()],
        },
        plan,
        timeout_secs: None,
        kill_grace_secs: None,
        machine: Fingerprint::read(std::path::Path::new("/nonexistent"), &t),
    }
}

fn template() -> JobTemplate {
    JobTemplate {
        node_sampler: None,
        argv: vec![
            "./app".into(),
            "--threads={threads}".into(),
            "{cpus}".into(),
        ],
        shell: false,
        env: vec![("EXTRA".into(), "1".into())],
        timeout: None,
        grace: Duration::from_secs(1),
        extra_threads: 0,
        workload: false,
        sample_interval: None,
    }
}

fn plan() -> Plan {
    Plan {
        launch: None,
        threads: vec![1, 2, 4],
        placements: vec![Strategy::Compact, Strategy::Scatter],
        mems: vec![MemPolicy::FirstTouch],
        reps: 3,
        warmup: 1,
        options: Default::default(),
        order: Default::default(),
    }
}

/// Perfect scaling: 8 s of work over `threads`, plus the rep number in ms; writes
/// a rate to the log so metrics are parsed from real files.
fn perfect(spec: &ExecSpec) -> Outcome {
    let threads: f64 = spec.argv[1]
        .trim_start_matches("--threads=")
        .parse()
        .unwrap();
    std::fs::write(&spec.stdout_path, format!("rate {}\n", 100.0 * threads)).unwrap();
    ok_outcome(8.0 / threads)
}

#[test]
fn every_job_runs_in_order_with_substitutions_and_environment() {
    let dir = tempfile::tempdir().unwrap();
    let h = header(plan());
    let t = topo();
    let points = engine::prepare_points(&t, &h.plan.points()).unwrap();
    let mut store = ResultsStore::create(dir.path(), &h).unwrap();
    let mut exec = FakeExecutor::new(perfect);
    let setup = SweepSetup {
        header: &h,
        template: &template(),
        points: &points,
    };
    let out = engine::run(
        &setup,
        &mut store,
        vec![],
        &mut exec,
        &mut Silent,
        &AtomicBool::new(false),
        &FixedClock,
    )
    .unwrap();
    assert_eq!(exec.calls.len(), 6 * 4);
    assert_eq!(out.failed_runs, 0);
    // compact at 2 threads on this machine: CPUs 0 and 8 (SMT siblings).
    let two = &exec.calls[4];
    assert_eq!(two.argv, vec!["./app", "--threads=2", "0,8"]);
    let env: BTreeMap<_, _> = two.env.iter().cloned().collect();
    assert_eq!(env["OMP_NUM_THREADS"], "2");
    assert_eq!(env["OMP_PLACES"], "{0},{8}");
    assert_eq!(env["OMP_PROC_BIND"], "true");
    assert_eq!(env["GOMP_CPU_AFFINITY"], "0 8");
    assert_eq!(
        env["KMP_AFFINITY"],
        "granularity=fine,explicit,proclist=[0,8]"
    );
    assert_eq!(env["EXTRA"], "1");
    // Every run is on disk with its metric.
    let (_, runs, _) = read_results(&dir.path().join("results.jsonl")).unwrap();
    assert_eq!(runs.len(), 24);
    assert_eq!(runs.iter().filter(|r| r.warmup).count(), 6);
    assert!(runs
        .iter()
        .all(|r| r.metrics.contains_key("rate") && r.started_unix_secs == 1_700_000_000.0));
}

#[test]
fn statistics_speedup_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let h = header(plan());
    let points = engine::prepare_points(&topo(), &h.plan.points()).unwrap();
    let mut store = ResultsStore::create(dir.path(), &h).unwrap();
    let mut rep = 0.0;
    let mut exec = FakeExecutor::new(|spec: &ExecSpec| {
        rep += 1.0;
        let mut o = perfect(spec);
        o.wall_secs += (rep % 3.0) * 0.001;
        o
    });
    let setup = SweepSetup {
        header: &h,
        template: &template(),
        points: &points,
    };
    let out = engine::run(
        &setup,
        &mut store,
        vec![],
        &mut exec,
        &mut Silent,
        &AtomicBool::new(false),
        &FixedClock,
    )
    .unwrap();
    let s = summarize_points(
        &h.plan,
        &out.records,
        &h.command.metrics,
        &Baseline::default(),
    );
    let four = s
        .iter()
        .find(|p| p.point.threads == 4 && p.point.placement == Strategy::Compact)
        .unwrap();
    assert_eq!(four.runs, 3);
    let w = four.wall_secs.as_ref().unwrap();
    assert!((w.median - 2.001).abs() < 1e-9, "{w:?}");
    assert!((four.speedup.unwrap() - 8.001 / 2.001).abs() < 1e-9);
    assert!((four.efficiency.unwrap() - 8.001 / 2.001 / 4.0).abs() < 1e-9);
    assert!((four.metric_speedups["rate"] - 4.0).abs() < 1e-9);
    let csv = to_csv(&s);
    assert_eq!(csv.lines().count(), 7);
    // No field of this row needs quoting; the median is written exactly.
    let row: Vec<&str> = csv.lines().nth(3).unwrap().split(',').collect();
    assert_eq!(row[..5], ["4", "compact", "first-touch", "3", "0"]);
    assert_eq!(row[5].parse::<f64>().unwrap(), w.median);
    // Against another baseline: compact 1 thread for every curve.
    let b: Baseline = "placement=compact".parse().unwrap();
    let s = summarize_points(&h.plan, &out.records, &h.command.metrics, &b);
    assert!(s
        .iter()
        .all(|p| p.baseline.as_ref().unwrap().placement == Strategy::Compact));
}

#[test]
fn failures_are_recorded_and_the_sweep_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let h = header(plan());
    let points = engine::prepare_points(&topo(), &h.plan.points()).unwrap();
    let mut store = ResultsStore::create(dir.path(), &h).unwrap();
    let mut exec = FakeExecutor::new(|spec: &ExecSpec| {
        if spec.argv[1] == "--threads=2" {
            Outcome {
                status: RunStatus::Failed,
                exit_code: Some(3),
                error: Some("exited with status 3".into()),
                ..ok_outcome(0.1)
            }
        } else {
            perfect(spec)
        }
    });
    let setup = SweepSetup {
        header: &h,
        template: &template(),
        points: &points,
    };
    let out = engine::run(
        &setup,
        &mut store,
        vec![],
        &mut exec,
        &mut Silent,
        &AtomicBool::new(false),
        &FixedClock,
    )
    .unwrap();
    assert_eq!(exec.calls.len(), 24);
    assert_eq!(out.failed_runs, 6);
    let s = summarize_points(
        &h.plan,
        &out.records,
        &h.command.metrics,
        &Baseline::default(),
    );
    let two = s.iter().find(|p| p.point.threads == 2).unwrap();
    assert_eq!((two.runs, two.failed, two.speedup), (0, 3, None));
}

#[test]
fn resume_runs_only_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let h = header(plan());
    let points = engine::prepare_points(&topo(), &h.plan.points()).unwrap();
    let setup_template = template();
    let setup = SweepSetup {
        header: &h,
        template: &setup_template,
        points: &points,
    };
    {
        let mut store = ResultsStore::create(dir.path(), &h).unwrap();
        // Stop after 10 runs, as Ctrl-C would.
        let stop = AtomicBool::new(false);
        let mut n = 0;
        let mut exec = FakeExecutor::new(|spec: &ExecSpec| {
            n += 1;
            if n > 10 {
                return Outcome {
                    interrupted: true,
                    ..ok_outcome(0.0)
                };
            }
            perfect(spec)
        });
        let out = engine::run(
            &setup,
            &mut store,
            vec![],
            &mut exec,
            &mut Silent,
            &stop,
            &FixedClock,
        )
        .unwrap();
        assert!(out.interrupted);
        assert_eq!(out.records.len(), 10);
    }
    // A crash mid-write leaves a torn line; resume drops it.
    let path = dir.path().join("results.jsonl");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("{\"record\":\"run\",\"thre");
    std::fs::write(&path, text).unwrap();
    let (mut store, header, earlier) = ResultsStore::resume(dir.path()).unwrap();
    assert_eq!(header, h);
    assert_eq!(earlier.len(), 10);
    let mut exec = FakeExecutor::new(perfect);
    let out = engine::run(
        &setup,
        &mut store,
        earlier,
        &mut exec,
        &mut Silent,
        &AtomicBool::new(false),
        &FixedClock,
    )
    .unwrap();
    // Runs 1-10 were: compact t1 warm-up + 3 reps, t2 warm-up + 3, t4 warm-up + 1 rep.
    // Left: t4 warm-up again (its point is unfinished) + 2 reps, then 12 for scatter.
    assert_eq!(exec.calls.len(), 3 + 12);
    let (_, runs, _) = read_results(&path).unwrap();
    let measured = runs.iter().filter(|r| !r.warmup).count();
    assert_eq!(measured, 18);
    let mut keys: Vec<_> = runs
        .iter()
        .filter(|r| !r.warmup)
        .map(|r| (r.point.clone(), r.rep))
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 18, "no measured run repeated");
    assert_eq!(out.records.len(), runs.len());
}

#[test]
fn a_point_the_machine_cannot_host_fails_before_anything_runs() {
    let mut p = plan();
    p.threads = vec![1, 32];
    let e = engine::prepare_points(&topo(), &p.points())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("point 32 threads, compact, first-touch: 32 threads requested but only 16"),
        "{e}"
    );
    p.threads = vec![1];
    p.mems = vec![MemPolicy::Bind(vec![3])];
    let e = engine::prepare_points(&topo(), &p.points())
        .unwrap_err()
        .to_string();
    assert!(e.contains("memory node `3`"), "{e}");
}

#[test]
fn an_existing_results_directory_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let h = header(plan());
    ResultsStore::create(dir.path(), &h).unwrap();
    let e = ResultsStore::create(dir.path(), &h)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("already holds results; resume that sweep"),
        "{e}"
    );
    std::fs::write(dir.path().join("results.jsonl"), "{\"record\":\"run\"}\n").unwrap();
    let e = ResultsStore::resume(dir.path()).err().unwrap().to_string();
    assert!(e.contains("results.jsonl:1:"), "{e}");
}

#[test]
fn a_log_cut_short_keeps_the_result_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = plan();
    (p.threads, p.placements, p.reps, p.warmup) = (vec![1], vec![Strategy::Compact], 1, 0);
    let h = header(p);
    let points = engine::prepare_points(&topo(), &h.plan.points()).unwrap();
    let mut store = ResultsStore::create(dir.path(), &h).unwrap();
    let mut exec = FakeExecutor::new(|_: &ExecSpec| Outcome {
        stdout_scan: Some(scalescope_sweep::output::Scan {
            found: [("rate".to_string(), 100.0)].into_iter().collect(),
            log_errors: vec!["stdout log cut short after 10 bytes: No space left on device".into()],
            ..Default::default()
        }),
        ..ok_outcome(1.0)
    });
    let setup = SweepSetup {
        header: &h,
        template: &template(),
        points: &points,
    };
    let out = engine::run(
        &setup,
        &mut store,
        vec![],
        &mut exec,
        &mut Silent,
        &AtomicBool::new(false),
        &FixedClock,
    )
    .unwrap();
    let run = &out.records[0];
    assert_eq!(run.status, RunStatus::Ok);
    assert_eq!(
        run.error.as_deref(),
        Some("stdout log cut short after 10 bytes: No space left on device")
    );
}
