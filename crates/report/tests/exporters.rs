//! Every exporter on one fixed, analysed sweep (a small synthetic dual-socket SMT
//! machine, two placements, hand-set times), snapshot-tested byte for byte; and a
//! hostile string in the results comes out escaped.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::collections::BTreeMap;
use std::path::Path;

use scalescope_analysis::{analyze, Basis};
use scalescope_place::{MemPolicy, Strategy};
use scalescope_report::html::HtmlExporter;
use scalescope_report::{charts, CsvExporter, Exporter, JsonExporter, ResultSet, TextExporter};
use scalescope_results::fingerprint::Fingerprint;
use scalescope_results::plan::Plan;
use scalescope_results::store::{CommandSpec, Header, RunRecord, RunStatus};
use scalescope_topo::Source;

fn set(argv: Vec<String>, hostname: &str) -> ResultSet {
    let topo = Source::Synthetic("package:2 numa:1 core:2 pu:2 numbering=smt-last".into())
        .load()
        .unwrap();
    let mut machine = Fingerprint::read(Path::new("/nonexistent"), &topo);
    machine.hostname = hostname.to_string();
    let header = Header {
        schema: "scalescope.results".into(),
        schema_version: 1,
        scalescope_version: "test".into(),
        started_unix_secs: 0.0,
        command: CommandSpec {
            kind: "external".into(),
            argv,
            shell: false,
            workload: None,
            params: BTreeMap::new(),
            env: vec![],
            metrics: vec![],
        },
        plan: Plan {
            launch: None,
            threads: vec![1, 2, 4, 8],
            placements: vec![Strategy::CoresFirst, Strategy::Compact],
            mems: vec![MemPolicy::FirstTouch],
            reps: 3,
            warmup: 0,
            options: Default::default(),
            order: Default::default(),
        },
        timeout_secs: None,
        kill_grace_secs: None,
        machine,
    };
    let times = |pl: &Strategy, t: usize| -> f64 {
        match (pl, t) {
            (_, 1) => 8.0,
            (Strategy::CoresFirst, 2) => 4.0,
            (Strategy::CoresFirst, 4) => 2.4,
            (Strategy::Compact, 2) => 5.0,
            (Strategy::Compact, 4) => 3.0,
            (_, _) => 2.2,
        }
    };
    let mut records = Vec::new();
    for point in header.plan.points() {
        for rep in 0..3 {
            records.push(RunRecord {
                ranks: None,
                wall_secs: times(&point.placement, point.threads) * (1.0 + 0.01 * rep as f64),
                point: point.clone(),
                rep,
                warmup: false,
                thread_cpus: vec![],
                started_unix_secs: 0.0,
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
            });
        }
    }
    let analysis = analyze(&header, &records, &Basis::Time);
    ResultSet {
        series: Default::default(),
        label: "fixed-sweep".into(),
        header,
        records,
        analysis,
    }
}

fn fixed() -> ResultSet {
    set(vec!["./app".into(), "{threads}".into()], "testhost")
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap()
}

#[test]
fn text_export() {
    insta::assert_snapshot!(text(TextExporter.export(&[fixed()])));
}

#[test]
fn csv_export() {
    insta::assert_snapshot!(text(CsvExporter.export(&[fixed()])));
}

#[test]
fn json_export() {
    insta::assert_snapshot!(text(JsonExporter.export(&[fixed()])));
}

#[test]
fn speedup_chart_svg() {
    let c = charts(&fixed(), "");
    assert_eq!(
        c.iter().map(|c| c.file.as_str()).collect::<Vec<_>>(),
        ["speedup.svg", "efficiency.svg", "time.svg", "topology.svg"]
    );
    insta::assert_snapshot!(c[0].svg.clone());
}

#[test]
fn topology_picture_svg() {
    insta::assert_snapshot!(charts(&fixed(), "")[3].svg.clone());
}

#[test]
fn html_page() {
    insta::assert_snapshot!(text(HtmlExporter.export(&[fixed()])));
}

#[test]
fn hostile_strings_come_out_escaped() {
    let evil = set(
        vec![
            "./app".into(),
            "</script><script>alert(1)</script>".into(),
            "\"onload=\"x".into(),
        ],
        "<img src=x onerror=alert(2)>",
    );
    let html = text(HtmlExporter.export(&[evil]));
    assert!(!html.contains("<script"), "raw script tag in the page");
    assert!(!html.contains("<img"), "raw img tag in the page");
    assert!(html.contains("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("&lt;img src=x onerror=alert(2)&gt;"));
    assert!(html.contains("&quot;onload=&quot;x"));
}
