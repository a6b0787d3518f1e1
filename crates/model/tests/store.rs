//! The results directory as a user meets it after accidents: a second writer, a
//! crash mid-line, a crash before the first record.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::collections::BTreeMap;
use std::io::Write;

use scalescope_model::fingerprint::Fingerprint;
use scalescope_model::plan::{Plan, Point};
use scalescope_model::store::{
    read_results, read_results_checked, CommandSpec, Header, ResultsStore, RunRecord, RunStatus,
    RESULTS_FILE,
};
use scalescope_model::ResultsError;
use scalescope_place::{MemPolicy, Strategy};
use scalescope_topo::Source;

fn header() -> Header {
    let topo = Source::Synthetic("core:2".into()).load().unwrap();
    Header {
        schema: "scalescope.results".into(),
        schema_version: 1,
        scalescope_version: "test".into(),
        started_unix_secs: 0.0,
        command: CommandSpec {
            trials: None,
            kind: "external".into(),
            argv: vec!["true".into()],
            shell: false,
            workload: None,
            params: BTreeMap::new(),
            env: vec![],
            metrics: vec![],
        },
        plan: Plan {
            launch: None,
            threads: vec![1],
            placements: vec![Strategy::Compact],
            mems: vec![MemPolicy::FirstTouch],
            reps: 2,
            warmup: 0,
            options: Default::default(),
            order: Default::default(),
        },
        timeout_secs: None,
        kill_grace_secs: None,
        machine: Fingerprint::read(std::path::Path::new("/nonexistent"), &topo),
    }
}

fn run(rep: usize) -> RunRecord {
    RunRecord {
        ranks: None,
        node_evidence: Vec::new(),
        point: Point {
            threads: 1,
            placement: Strategy::Compact,
            mem: MemPolicy::FirstTouch,
            nodes: None,
        },
        rep,
        warmup: false,
        thread_cpus: vec![],
        started_unix_secs: 0.0,
        wall_secs: 1.0,
        user_secs: None,
        sys_secs: None,
        max_rss_bytes: None,
        status: RunStatus::Ok,
        exit_code: Some(0),
        signal: None,
        error: None,
        metrics: BTreeMap::new(),
        placement_check: None,
        evidence: None,
        setup: None,
        stdout_log: None,
        stderr_log: None,
    }
}

#[test]
fn a_second_writer_is_refused_with_the_holders_pid() {
    let dir = tempfile::tempdir().unwrap();
    let _first = ResultsStore::create(dir.path(), &header()).unwrap();
    match ResultsStore::resume(dir.path()) {
        Err(ResultsError::InUse { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
        Err(e) => panic!("expected InUse, got {e}"),
        Ok(_) => panic!("a second writer got the directory"),
    }
    let e = ResultsStore::create(dir.path(), &header())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("in use by a running scalescope"), "{e}");
}

#[test]
fn the_lock_is_released_when_the_writer_closes() {
    let dir = tempfile::tempdir().unwrap();
    drop(ResultsStore::create(dir.path(), &header()).unwrap());
    assert!(ResultsStore::resume(dir.path()).is_ok());
}

#[test]
fn resume_ends_a_last_line_that_lost_its_newline() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = ResultsStore::create(dir.path(), &header()).unwrap();
    store.append(&run(0)).unwrap();
    drop(store);
    let path = dir.path().join(RESULTS_FILE);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.trim_end()).unwrap();
    let (mut store, _, runs) = ResultsStore::resume(dir.path()).unwrap();
    assert_eq!(runs.len(), 1);
    store.append(&run(1)).unwrap();
    drop(store);
    let (_, runs, _) = read_results(&path).unwrap();
    assert_eq!(runs.iter().map(|r| r.rep).collect::<Vec<_>>(), vec![0, 1]);
}

#[test]
fn a_torn_header_can_be_started_afresh_and_resume_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(RESULTS_FILE);
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(br#"{"record":"header","schema":"scal"#)
        .unwrap();
    drop(f);
    let e = ResultsStore::resume(dir.path()).err().unwrap();
    assert!(matches!(e, ResultsError::NoHeader { .. }), "{e}");
    assert!(e.to_string().contains("start the sweep again"), "{e}");
    let store = ResultsStore::create(dir.path(), &header()).unwrap();
    drop(store);
    assert!(read_results(&path).is_ok());
    // An empty file likewise.
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join(RESULTS_FILE), "").unwrap();
    assert!(ResultsStore::create(other.path(), &header()).is_ok());
}

#[test]
fn a_complete_sweep_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    drop(ResultsStore::create(dir.path(), &header()).unwrap());
    let e = ResultsStore::create(dir.path(), &header()).err().unwrap();
    assert!(matches!(e, ResultsError::ResultsExist { .. }), "{e}");
}

#[test]
fn a_non_utf8_line_is_set_aside_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = ResultsStore::create(dir.path(), &header()).unwrap();
    store.append(&run(0)).unwrap();
    drop(store);
    let path = dir.path().join(RESULTS_FILE);
    append_bytes(&path, b"\xff\xfe\x1b[2J\n");
    let read = read_results_checked(&path).unwrap();
    assert_eq!(read.runs.len(), 1);
    let warning = read.set_aside[0].to_string();
    assert_eq!(
        warning,
        "line 3 set aside: not UTF-8 text (`\\xff\\xfe\\u{1b}[2J`)"
    );
}

fn append_bytes(path: &std::path::Path, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(bytes).unwrap();
}

fn line_of(r: &RunRecord) -> String {
    let v = serde_json::json!({"record": "run"});
    let mut line = serde_json::to_value(r).unwrap();
    line.as_object_mut()
        .unwrap()
        .extend(v.as_object().unwrap().clone());
    line.to_string()
}

/// A file whose middle holds a NUL hole (4 KiB of zeros then a record on the same
/// line), a torn record, then two whole records.
fn damaged(dir: &std::path::Path) -> std::path::PathBuf {
    let mut store = ResultsStore::create(dir, &header()).unwrap();
    store.append(&run(0)).unwrap();
    drop(store);
    let path = dir.join(RESULTS_FILE);
    append_bytes(&path, &[0u8; 4096]);
    append_bytes(&path, format!("{}\n", line_of(&run(1))).as_bytes());
    append_bytes(&path, b"{\"record\":\"run\",\"thre\n");
    append_bytes(&path, &[0u8; 100]);
    append_bytes(&path, b"\n");
    append_bytes(
        &path,
        format!("{}\n{}\n", line_of(&run(2)), line_of(&run(3))).as_bytes(),
    );
    path
}

#[test]
fn nul_holes_and_torn_lines_mid_file_are_set_aside_and_the_rest_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = damaged(dir.path());
    let read = read_results_checked(&path).unwrap();
    let reps: Vec<usize> = read.runs.iter().map(|r| r.rep).collect();
    assert_eq!(reps, vec![0, 1, 2, 3]);
    let why: Vec<String> = read.set_aside.iter().map(|s| s.to_string()).collect();
    assert_eq!(why.len(), 2, "{why:?}");
    assert!(
        why[0].starts_with("line 4 set aside: not a run record"),
        "{why:?}"
    );
    assert!(
        why[1].starts_with("line 5 set aside: 100 NUL bytes (what a crash can leave)"),
        "{why:?}"
    );
    assert!(read.needs_rewrite());
}

#[test]
fn resume_moves_damage_aside_and_appends_after_the_kept_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = damaged(dir.path());
    let (mut store, _, runs) = ResultsStore::resume(dir.path()).unwrap();
    assert_eq!(runs.len(), 4);
    assert_eq!(store.set_aside().len(), 2);
    store.append(&run(4)).unwrap();
    drop(store);
    let read = read_results_checked(&path).unwrap();
    assert!(read.set_aside.is_empty(), "{:?}", read.set_aside);
    assert_eq!(
        read.runs.iter().map(|r| r.rep).collect::<Vec<_>>(),
        vec![0, 1, 2, 3, 4]
    );
    let aside = std::fs::read(dir.path().join("results.jsonl.set-aside")).unwrap();
    let mut expected = b"{\"record\":\"run\",\"thre\n".to_vec();
    expected.extend([0u8; 100]);
    expected.push(b'\n');
    assert_eq!(aside, expected);
}

#[test]
fn deleting_the_lock_file_lets_no_second_writer_in() {
    let dir = tempfile::tempdir().unwrap();
    let _first = ResultsStore::create(dir.path(), &header()).unwrap();
    std::fs::remove_file(dir.path().join(".scalescope.lock")).unwrap();
    match ResultsStore::resume(dir.path()) {
        // The kernel's record of the lock still names the holder (where it lists
        // it); a deleted file never makes the message show an empty PID.
        Err(e @ ResultsError::InUse { pid, .. }) => {
            assert!(pid.is_none_or(|p| p == std::process::id()), "{e}");
            assert!(
                e.to_string().contains("in use by a running scalescope"),
                "{e}"
            );
            assert!(!e.to_string().contains("(PID )"), "{e}");
        }
        Err(e) => panic!("expected InUse, got {e}"),
        Ok(_) => panic!("a second writer got the directory"),
    }
}

#[test]
fn resuming_where_nothing_was_written_says_so() {
    let dir = tempfile::tempdir().unwrap();
    for d in [dir.path().to_path_buf(), dir.path().join("missing")] {
        let e = ResultsStore::resume(&d).err().unwrap().to_string();
        assert!(
            e.contains("no results.jsonl here, so there is nothing to resume"),
            "{e}"
        );
    }
}

#[test]
fn a_complete_write_is_all_or_nothing_and_cleans_up_after_a_killed_one() {
    let dir = tempfile::tempdir().unwrap();
    // What a writer killed before its rename leaves.
    std::fs::write(
        dir.path().join(".results.jsonl.999-0.partial"),
        "{\"record\":\"header\"",
    )
    .unwrap();
    assert!(ResultsStore::resume(dir.path()).is_err());
    let path = ResultsStore::create_complete(dir.path(), &header(), &[run(0), run(1)]).unwrap();
    assert_eq!(read_results(&path).unwrap().1.len(), 2);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        !names
            .iter()
            .any(|n| n.to_string_lossy().ends_with(".partial")),
        "{names:?}"
    );
    let e = ResultsStore::create_complete(dir.path(), &header(), &[run(0)])
        .err()
        .unwrap();
    assert!(matches!(e, ResultsError::ResultsExist { .. }), "{e}");
}

/// A launched run on two nodes: its point names the nodes, each node's evidence
/// (one measured, one that could not start) and the launcher's start-up survive the
/// file, and the run's figure leaves the start-up out.
#[test]
fn a_launched_run_keeps_its_nodes_node_evidence_and_launcher_start_up() {
    use scalescope_model::evidence::{Measured, NodeEvidence, RunEvidence};
    use scalescope_model::launch::RunRanks;
    let dir = tempfile::tempdir().unwrap();
    let mut store = ResultsStore::create(dir.path(), &header()).unwrap();
    let mut r = run(0);
    r.point.threads = 4;
    r.point.nodes = Some(2);
    r.wall_secs = 1.5;
    r.ranks = Some(RunRanks {
        launcher: "srun".into(),
        hosts: vec!["node1".into(), "node2".into()],
        nodes: 2,
        ranks_per_node: 2,
        threads_per_rank: 1,
        command: "srun ...".into(),
        check: None,
        launch_secs: Some(0.5),
    });
    let evidence: RunEvidence = serde_json::from_value(serde_json::json!({
        "interval_ms": 100.0, "samples": 3, "series_file": "series/x-node1.json",
        "sampler": {"cpu_secs": 0.001, "fraction_of_wall": 0.001},
        "cpu": {"state": "measured", "value": {"cpus": [0, 1], "busy_mean": 0.9,
            "busy_per_cpu": {"0": 0.8, "1": 1.0}, "run_share_mean": 0.85}},
        "threads": [],
        "pages": {"state": "unavailable", "value": "none"},
        "numastat": {"state": "measured", "value": {"0": {"numa_hit": 5, "numa_miss": 0,
            "numa_foreign": 0, "interleave_hit": 0, "local_node": 5, "other_node": 0}}},
        "bandwidth": {"state": "unavailable", "value": "no counters"},
        "pmu": []
    }))
    .unwrap();
    r.node_evidence = vec![
        NodeEvidence {
            host: "node1".into(),
            evidence: Measured::Measured(evidence),
        },
        NodeEvidence {
            host: "node2".into(),
            evidence: Measured::Unavailable("the node sampler did not start".into()),
        },
    ];
    store.append(&r).unwrap();
    drop(store);
    let (_, runs, _) = read_results(&dir.path().join(RESULTS_FILE)).unwrap();
    assert_eq!(runs, [r.clone()]);
    assert_eq!(
        runs[0].point.to_string(),
        "4 ranks on 2 nodes, compact, first-touch"
    );
    assert!((runs[0].figure_secs() - 1.0).abs() < 1e-12);
    // A run started directly is judged by its wall time.
    assert_eq!(run(0).figure_secs(), 1.0);
}

/// A program that printed `nan` or `inf` for a metric: before, serde wrote `null`
/// and every reader then set the whole run aside (a resume would run it again).
#[test]
fn a_metric_that_is_not_a_finite_number_is_left_out_and_the_run_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = ResultsStore::create(dir.path(), &header()).unwrap();
    let mut r = run(0);
    r.metrics.insert("rate".into(), f64::NAN);
    r.metrics.insert("peak".into(), f64::INFINITY);
    r.metrics.insert("ops".into(), 2.5);
    store.append(&r).unwrap();
    drop(store);
    let path = dir.path().join(RESULTS_FILE);
    // A file written before the rule, with the `null` serde wrote for NaN.
    let old = line_of(&run(1)).replace("\"metrics\":{}", "\"metrics\":{\"rate\":null}");
    append_bytes(&path, format!("{old}\n").as_bytes());
    let read = read_results_checked(&path).unwrap();
    assert!(read.set_aside.is_empty(), "{:?}", read.set_aside);
    assert_eq!(read.runs.len(), 2);
    assert_eq!(
        read.runs[0].metrics,
        BTreeMap::from([("ops".to_string(), 2.5)])
    );
    assert!(read.runs[1].metrics.is_empty());
}

/// A results file with a run's line written twice (a file concatenated, a line
/// copied): the copy is set aside, naming the line it copies, so the run is not
/// counted as a second repetition (which would shrink its point's spread).
/// Two runs at the same point and repetition with different times are both
/// kept: only a byte-for-byte copy is the same run.
#[test]
fn a_run_written_twice_is_counted_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = ResultsStore::create(dir.path(), &header()).unwrap();
    store.append(&run(0)).unwrap();
    store.append(&run(1)).unwrap();
    drop(store);
    let path = dir.path().join(RESULTS_FILE);
    let text = std::fs::read_to_string(&path).unwrap();
    let copy = format!("{}\n", text.lines().nth(1).unwrap());
    append_bytes(&path, copy.as_bytes());
    let mut other = run(0);
    other.wall_secs += 0.5;
    append_bytes(&path, format!("{}\n", line_of(&other)).as_bytes());
    let read = read_results_checked(&path).unwrap();
    assert_eq!(read.runs.len(), 3, "{:?}", read.set_aside);
    assert_eq!(read.set_aside.len(), 1);
    assert_eq!(read.set_aside[0].line, 4);
    assert!(
        read.set_aside[0].why.contains("a copy of line 2"),
        "{}",
        read.set_aside[0]
    );
}
