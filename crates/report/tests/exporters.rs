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
                node_evidence: Vec::new(),
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
    insta::assert_snapshot!(text(TextExporter.export(&[fixed()])), @r##"
fixed-sweep
machine: 2 packages x 2 cores x 2 threads = 8 PUs, 2 NUMA nodes
performance: wall time

placement      mem          threads   speedup     ± sd    eff      K-F  uses
cores-first    first-touch        1     1.000    0.000   100%        -  1 pkg, 1 node, 1 core
cores-first    first-touch        2     2.000    0.016   100%   0.0000  1 pkg, 1 node, 2 core
cores-first    first-touch        4     3.333    0.027    83%   0.0667  2 pkg, 2 node, 4 core
cores-first    first-touch        8     3.636    0.029    45%   0.1714  2 pkg, 2 node, 4 core, SMT
compact        first-touch        1     1.000    0.000   100%        -  1 pkg, 1 node, 1 core
compact        first-touch        2     1.600    0.013    80%   0.2500  1 pkg, 1 node, 1 core, SMT
compact        first-touch        4     2.667    0.022    67%   0.1667  1 pkg, 1 node, 2 core, SMT
compact        first-touch        8     3.636    0.029    45%   0.1714  2 pkg, 2 node, 4 core, SMT

Findings:
  [warning] cores-first / first-touch: 3.64x at 8 threads against 1 (45% parallel efficiency)
      confidence: measured
      1 threads: speedup 1.00 ± 0.00, efficiency 100%
      2 threads: speedup 2.00 ± 0.02 [95% interval 1.89..2.11], efficiency 100%
      4 threads: speedup 3.33 ± 0.03 [95% interval 3.16..3.51], efficiency 83%
      8 threads: speedup 3.64 ± 0.03 [95% interval 3.44..3.83], efficiency 45%
  [warning] cores-first / first-touch: scaling slows after 2 threads: from 3 threads, package #2 is in use
      confidence: high (1.00)
      marginal speedup per added thread 1.00 [95% interval 0.97..1.03] up to 2 threads, 0.67 [95% interval 0.64..0.70] after (between 2 and 4 threads)
      slope change -33% [95% interval -37%..-29%]; confidence high (bootstrap probability 1.00)
      from 3 threads, package #2 is in use
      try: threads on the new node may reach memory on the first one, or the first node's bandwidth may be exhausted: compare memory policies (--mem interleave, first-touch) and placements across this boundary
      check: sweep this boundary with --mem interleave and with scatter: a curve that no longer bends points at remote memory or one node's bandwidth; `mem matrix` measures both
  [warning] cores-first / first-touch: scaling slows after 4 threads: from 5 threads, two threads share a physical core (SMT siblings)
      confidence: high (1.00)
      marginal speedup per added thread 0.67 [95% interval 0.64..0.70] up to 4 threads, 0.08 [95% interval 0.06..0.09] after (between 4 and 8 threads)
      slope change -89% [95% interval -92%..-86%]; confidence high (bootstrap probability 1.00)
      from 5 threads, two threads share a physical core (SMT siblings)
      try: SMT siblings share one core's execution units and caches: for compute- or cache-bound code, run one thread per physical core
      check: the like-with-like yield: cores-first at N against smt-pairs at 2N on the same cores
  [info] cores-first / first-touch: not enough points: measure at 3, 5
      confidence: measured
      from 3 threads, package #2 is in use (needs a point on each side)
      from 3 threads, NUMA node #2 is in use (remote memory) (needs a point on each side)
      at 4 threads every physical core (4) is busy (needs a point on each side)
      from 5 threads, two threads share a physical core (SMT siblings) (needs a point on each side)
      try: sweep with --threads boundaries, or add 3,5
  [info] cores-first / first-touch: scaling model (wall time): amdahl
      confidence: measured
      amdahl: s 0.1494 (R² 0.895, AICc -4.6) [chosen]
      usl: sigma 0.0000, kappa 0.0209 (R² 0.994, AICc -4.0) [rejected: it predicts a slowdown after 7 threads, but 8 threads (the last point) is the fastest measured]
      piecewise: slope 1.3377, slope change after 2 -1.0931 (R² 0.911, AICc 6.8)
  [info] cores-first / first-touch: the usl fit is rejected: it predicts a slowdown after 7 threads, but 8 threads (the last point) is the fastest measured
      confidence: measured
  [warning] compact / first-touch: 3.64x at 8 threads against 1 (45% parallel efficiency)
      confidence: measured
      1 threads: speedup 1.00 ± 0.00, efficiency 100%
      2 threads: speedup 1.60 ± 0.01 [95% interval 1.52..1.69], efficiency 80%
      4 threads: speedup 2.67 ± 0.02 [95% interval 2.53..2.81], efficiency 67%
      8 threads: speedup 3.64 ± 0.03 [95% interval 3.44..3.83], efficiency 45%
  [warning] compact / first-touch: scaling slows after 4 threads: from 5 threads, package #2 is in use
      confidence: high (1.00)
      marginal speedup per added thread 0.56 [95% interval 0.55..0.57] up to 4 threads, 0.24 [95% interval 0.23..0.26] after (between 4 and 8 threads)
      slope change -57% [95% interval -60%..-54%]; confidence high (bootstrap probability 1.00)
      from 5 threads, package #2 is in use
      try: threads on the new node may reach memory on the first one, or the first node's bandwidth may be exhausted: compare memory policies (--mem interleave, first-touch) and placements across this boundary
      check: sweep this boundary with --mem interleave and with scatter: a curve that no longer bends points at remote memory or one node's bandwidth; `mem matrix` measures both
  [info] compact / first-touch: not enough points: measure at 5, 6, 7
      confidence: measured
      from 5 threads, package #2 is in use (needs a point on each side)
      from 5 threads, NUMA node #2 is in use (remote memory) (needs a point on each side)
      at 7 threads every physical core (4) is busy (needs a point on each side)
      try: sweep with --threads boundaries, or add 5,6,7
  [info] compact / first-touch: scaling model (wall time): amdahl
      confidence: measured
      amdahl: s 0.1716 (R² 0.997, AICc -19.2) [chosen]
      usl: sigma 0.1716, kappa 0.0000 (R² 0.997, AICc -7.2)
      piecewise: slope 0.4077 (R² 0.931, AICc -6.6)
  [info] Hyper-threading yield not measured
      confidence: measured
      the yield compares the same cores with one and two threads each: sweep both cores-first (at N) and smt-pairs (at 2N)
  [notice] cores-first is 1.25x faster than compact at 2 threads
      confidence: high (1.00)
      2 threads, first-touch: cores-first 0.2475 vs compact 0.1980 (p < 0.001) [95% interval 1.18..1.32]
      try: the slower placement puts threads on SMT siblings of one core: give each thread its own physical core
  [notice] cores-first is 1.25x faster than compact at 4 threads
      confidence: high (1.00)
      4 threads, first-touch: cores-first 0.4125 vs compact 0.3300 (p < 0.001) [95% interval 1.18..1.32]
      try: the slower placement puts threads on SMT siblings of one core: give each thread its own physical core
"##);
}

#[test]
fn csv_export() {
    insta::assert_snapshot!(text(CsvExporter.export(&[fixed()])), @r##"
results,placement,mem,threads,runs,perf,speedup,speedup_sd,efficiency,karp_flatt,time_median_secs,time_ci95_lo_secs,time_ci95_hi_secs,metric_median,packages,numa_nodes,cores,smt_shared
fixed-sweep,cores-first,first-touch,1,3,0.123762,1.000000,0.000000,1.000000,,8.080000,7.881253,8.278747,,1,1,1,false
fixed-sweep,cores-first,first-touch,2,3,0.247525,2.000000,0.016170,1.000000,0.000000,4.040000,3.940626,4.139374,,1,1,2,false
fixed-sweep,cores-first,first-touch,4,3,0.412541,3.333333,0.026950,0.833333,0.066667,2.424000,2.364376,2.483624,,2,2,4,false
fixed-sweep,cores-first,first-touch,8,3,0.450045,3.636364,0.029400,0.454545,0.171429,2.222000,2.167345,2.276655,,2,2,4,true
fixed-sweep,compact,first-touch,1,3,0.123762,1.000000,0.000000,1.000000,,8.080000,7.881253,8.278747,,1,1,1,false
fixed-sweep,compact,first-touch,2,3,0.198020,1.600000,0.012936,0.800000,0.250000,5.050000,4.925783,5.174217,,1,1,1,true
fixed-sweep,compact,first-touch,4,3,0.330033,2.666667,0.021560,0.666667,0.166667,3.030000,2.955470,3.104530,,1,1,2,true
fixed-sweep,compact,first-touch,8,3,0.450045,3.636364,0.029400,0.454545,0.171429,2.222000,2.167345,2.276655,,2,2,4,true
"##);
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
    insta::assert_snapshot!(charts(&fixed(), "")[3].svg.clone(), @r##"
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 852 304" width="852" height="304" font-family="sans-serif" font-size="12" role="img"><title>topology</title><rect width="100%" height="100%" fill="#fff"/><text x="10" y="24" font-size="15" font-weight="bold">2 packages x 2 cores x 2 threads = 8 PUs, 2 NUMA nodes</text><text x="10" y="44.0">CPUs used at 4 threads:</text><g class="s0"><rect x="190.0" y="35.0" width="14" height="10" fill="#0072B2"/><text x="208.0" y="44.0">cores-first (4 CPUs)</text></g><g class="s1"><rect x="382.0" y="35.0" width="14" height="10" fill="#D55E00"/><text x="400.0" y="44.0">compact (4 CPUs)</text></g><rect x="10" y="62.0" width="828.0" height="104.0" fill="#fafafa" stroke="#333" rx="6"/><text x="18" y="80.0" font-weight="bold">Package 0 — CPUs 0-1,4-5</text><rect x="20" y="88.0" width="808.0" height="70.0" fill="#eef3f8" stroke="#7a8fa6" rx="4"/><text x="28" y="104.0">NUMA node 0 · memory unknown · L3 unknown</text><rect x="28.0" y="110.0" width="60" height="40" fill="#ffffff" stroke="#667"><title>core 0: PUs 0,4</title></rect><text x="58.0" y="125.0" text-anchor="middle">0+4</text><rect class="used s0" x="31.0" y="130.0" width="27.0" height="6.0" fill="#0072B2"><title>cores-first: 1 of this core's PUs</title></rect><rect class="used s1" x="31.0" y="137.0" width="54.0" height="6.0" fill="#D55E00"><title>compact: 2 of this core's PUs</title></rect><rect x="94.0" y="110.0" width="60" height="40" fill="#ffffff" stroke="#667"><title>core 1: PUs 1,5</title></rect><text x="124.0" y="125.0" text-anchor="middle">1+5</text><rect class="used s0" x="97.0" y="130.0" width="27.0" height="6.0" fill="#0072B2"><title>cores-first: 1 of this core's PUs</title></rect><rect class="used s1" x="97.0" y="137.0" width="54.0" height="6.0" fill="#D55E00"><title>compact: 2 of this core's PUs</title></rect><rect x="10" y="178.0" width="828.0" height="104.0" fill="#fafafa" stroke="#333" rx="6"/><text x="18" y="196.0" font-weight="bold">Package 1 — CPUs 2-3,6-7</text><rect x="20" y="204.0" width="808.0" height="70.0" fill="#eef3f8" stroke="#7a8fa6" rx="4"/><text x="28" y="220.0">NUMA node 1 · memory unknown · L3 unknown</text><rect x="28.0" y="226.0" width="60" height="40" fill="#ffffff" stroke="#667"><title>core 2: PUs 2,6</title></rect><text x="58.0" y="241.0" text-anchor="middle">2+6</text><rect class="used s0" x="31.0" y="246.0" width="27.0" height="6.0" fill="#0072B2"><title>cores-first: 1 of this core's PUs</title></rect><rect x="94.0" y="226.0" width="60" height="40" fill="#ffffff" stroke="#667"><title>core 3: PUs 3,7</title></rect><text x="124.0" y="241.0" text-anchor="middle">3+7</text><rect class="used s0" x="97.0" y="246.0" width="27.0" height="6.0" fill="#0072B2"><title>cores-first: 1 of this core's PUs</title></rect></svg>
"##);
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
