//! The analysis on synthetic speedup curves with known causes, on the reference
//! study's 2 x 24 x 2 machine and on a recorded single-package machine: each knee
//! must be found where it is and attributed to the right topology boundary.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::path::Path;

use scalescope_analysis::ceiling::Ceiling;
use scalescope_analysis::events::EventKind;
use scalescope_analysis::knee::Bend;
use scalescope_analysis::{analyze, analyze_with, Analysis, Basis, Finding, FindingKind};
use scalescope_model::store::{Header, RunRecord};
use scalescope_place::Strategy;
use scalescope_topo::Source;

use crate::generator::{five_runs as runs, study_header as header};

/// The reference study's shape: linear on one package, 0.7 per thread on the second
/// (remote memory), nearly flat once threads share cores (41x at 48 threads); forced
/// hyper-threading reaches 30x at 48 threads (24 cores of package 0) and, with every
/// PU busy at 96, the same 43.2x as cores-first.
fn study(strategy: &Strategy, p: f64) -> f64 {
    match strategy {
        Strategy::SmtPairs if p == 1.0 => 1.0,
        Strategy::SmtPairs if p <= 48.0 => 0.625 * p,
        Strategy::SmtPairs => 30.0 + (43.2 - 30.0) * (p - 48.0) / 48.0,
        _ if p <= 24.0 => p,
        _ if p <= 48.0 => 24.0 + 0.7 * (p - 24.0),
        _ => 40.8 + 0.05 * (p - 48.0),
    }
}

fn two_by_24_by_2() -> (Header, Analysis) {
    let topo = Source::Synthetic("package:2 numa:1 core:24 pu:2 numbering=smt-last".into())
        .load()
        .unwrap();
    let threads = vec![
        1, 2, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 56, 64, 72, 80, 88, 96,
    ];
    let h = header(
        &topo,
        threads,
        vec![Strategy::CoresFirst, Strategy::SmtPairs],
    );
    let r = runs(&h, study);
    let a = analyze(&h, &r, &Basis::Time);
    (h, a)
}

#[test]
fn knee_at_24_is_the_second_package_and_flat_after_48_is_smt() {
    let (_, a) = two_by_24_by_2();
    let c = &a.curves[0];
    assert_eq!(c.placement, Strategy::CoresFirst);
    let knees: Vec<(usize, Option<EventKind>)> = c
        .knees
        .iter()
        .map(|k| (k.knee.threads, k.cause.as_ref().map(|e| e.kind.clone())))
        .collect();
    assert_eq!(
        knees,
        vec![
            (24, Some(EventKind::NewPackage)),
            (48, Some(EventKind::SmtSharing))
        ]
    );
    assert!(c.knees.iter().all(|k| k.knee.confidence.label == "high"
        && k.knee.bend == scalescope_analysis::knee::Bend::Flattens));
    let at48 = c.points.iter().find(|p| p.threads == 48).unwrap();
    assert!((at48.speedup - 40.8).abs() < 0.1, "{}", at48.speedup);
    // The findings say it in words.
    let titles: Vec<&str> = a.findings.iter().map(|f| f.title.as_str()).collect();
    assert!(titles.iter().any(|t| t.contains("cores-first / first-touch: scaling slows after 24 threads: from 25 threads, package #2 is in use")), "{titles:#?}");
    assert!(
        titles.iter().any(|t| t.contains(
            "scaling slows after 48 threads: from 49 threads, two threads share a physical core"
        )),
        "{titles:#?}"
    );
}

#[test]
fn forced_hyper_threading_and_the_smt_yield() {
    let (_, a) = two_by_24_by_2();
    // smt-pairs shares a core from 2 threads on: every one of its points uses SMT.
    let pairs = a
        .curves
        .iter()
        .find(|c| c.placement == Strategy::SmtPairs)
        .unwrap();
    assert!(pairs
        .points
        .iter()
        .filter(|p| p.threads >= 2)
        .all(|p| p.usage.unwrap().smt_shared));
    let at48 = pairs.points.iter().find(|p| p.threads == 48).unwrap();
    assert!((at48.speedup - 30.0).abs() < 0.1, "{}", at48.speedup);
    // Analysed in its own frame (from 2 threads, where every point shares cores):
    // one bend, where the siblings fill the second package's cores, and it flattens;
    // the step from one thread alone to two on a core is not a knee.
    let bends: Vec<(usize, Bend)> = pairs
        .knees
        .iter()
        .map(|k| (k.knee.threads, k.knee.bend))
        .collect();
    assert_eq!(bends, vec![(48, Bend::Flattens)], "{:?}", pairs.knees);
    // Best with SMT (cores-first at 96: 43.2x) over best without (cores-first at 48: 40.8x).
    let r = a.smt_yield.ratio.unwrap();
    assert!((r - 43.2 / 40.8).abs() < 0.01, "{r}");
    // Placement comparison at equal thread counts: cores-first beats smt-pairs at 48.
    let c48 = a
        .placement_comparisons
        .iter()
        .find(|c| c.threads == 48)
        .unwrap();
    assert_eq!(
        (c48.best.as_str(), c48.worst.as_str()),
        ("cores-first", "smt-pairs")
    );
    assert!(c48.significant);
}

#[test]
fn fits_describe_the_curve() {
    let (_, a) = two_by_24_by_2();
    let c = &a.curves[0];
    let usl = c.usl.as_ref().unwrap();
    let amdahl = c.amdahl.as_ref().unwrap();
    assert!(
        usl.sigma >= 0.0 && usl.kappa >= 0.0 && usl.r_squared > 0.9,
        "{usl:?}"
    );
    assert!(
        amdahl.serial_fraction > 0.0 && amdahl.serial_fraction < 0.02,
        "{amdahl:?}"
    );
    let kf = c
        .points
        .iter()
        .find(|p| p.threads == 96)
        .unwrap()
        .karp_flatt
        .unwrap();
    assert!(kf > 0.01, "{kf}");
}

#[test]
fn single_package_machine_has_no_numa_knee() {
    // A recorded one-package, one-NUMA-node machine (hwloc's nvidia-dgx-gb10: 20 cores).
    let xml = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/topology/nvidia-dgx-gb10/nvidia-dgx-gb10.hwloc.xml");
    let topo = Source::HwlocXml(xml).load().unwrap();
    let h = header(
        &topo,
        vec![1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 18, 20],
        vec![Strategy::CoresFirst],
    );
    // Bandwidth saturates after 6 threads.
    let r = runs(&h, |_, p| if p <= 6.0 { p } else { 6.0 + 0.1 * (p - 6.0) });
    let a = analyze(&h, &r, &Basis::Time);
    let k = &a.curves[0].knees;
    assert_eq!(k.len(), 1, "{k:?}");
    assert_eq!(k[0].knee.threads, 6);
    assert!(k[0].cause.is_none(), "{:?}", k[0].cause);
    assert!(a.curves[0]
        .events
        .iter()
        .all(|e| !matches!(e.kind, EventKind::NewPackage | EventKind::NewNumaNode)));
    assert!(a
        .findings
        .iter()
        .any(|f| f.title.contains("no topology boundary there")));
    assert!(a
        .findings
        .iter()
        .any(|f| f.title.starts_with("One package and one NUMA node")));
    assert_eq!(a.smt_yield.ratio, None);
}

#[test]
fn results_from_another_machine_are_analysed_with_its_topology() {
    let (h, a) = two_by_24_by_2();
    // Round-trip the header through JSON as it travels in results.jsonl.
    let back: Header = serde_json::from_str(&serde_json::to_string(&h).unwrap()).unwrap();
    assert_eq!(
        back.machine.topology.summary(),
        "2 packages x 24 cores x 2 threads = 96 PUs, 2 NUMA nodes"
    );
    let r = runs(&back, study);
    assert_eq!(analyze(&back, &r, &Basis::Time), a);
}

/// Runs of `h` whose triad GB/s grow by 10 a thread up to `cap` (time linear).
fn triad_runs(h: &Header, cap: f64) -> Vec<RunRecord> {
    let mut r = runs(h, |_, p| p);
    for rec in &mut r {
        let gbs = (10.0 * rec.point.threads as f64).min(cap);
        rec.metrics.insert("triad_gb_per_s".into(), gbs);
    }
    r
}

fn triad_basis() -> Basis {
    Basis::Metric {
        name: "triad_gb_per_s".into(),
        higher_is_better: true,
    }
}

/// A `mem stream` ceiling measured at 16 threads, cores-first.
fn ceiling_at_16(gb_per_s: f64) -> Ceiling {
    Ceiling {
        source: "ceilings16.json".into(),
        threads: 16,
        placement: Strategy::CoresFirst,
        gb_per_s,
        read_gb_per_s: None,
    }
}

/// The analysis's bandwidth-saturation finding (the test fails without one).
fn saturation_finding(a: &Analysis) -> &Finding {
    a.findings
        .iter()
        .find(|f| f.kind == FindingKind::BandwidthSaturation)
        .expect("a saturation finding")
}

/// The checks of the knee findings.
fn knee_checks(a: &Analysis) -> Vec<String> {
    a.findings
        .iter()
        .filter(|f| f.kind == FindingKind::Knee)
        .filter_map(|f| f.check.clone())
        .collect()
}

/// A cores-first sweep at 1-16 threads on a one-node 16-core machine (as the lent
/// Xeon).
fn one_node_16_core_sweep() -> Header {
    let topo = Source::Synthetic("package:1 numa:1 core:16 pu:1".into())
        .load()
        .unwrap();
    header(&topo, vec![1, 2, 4, 8, 12, 16], vec![Strategy::CoresFirst])
}

/// Triad GB/s that stop growing at 50 GB/s, against a 52 GB/s ceiling measured on the
/// machine's one node (as on the lent 16-core Xeon): the advice may not send the
/// user to other NUMA nodes, since there are none.
#[test]
fn saturation_on_a_one_node_machine_does_not_advise_more_nodes() {
    let h = one_node_16_core_sweep();
    let r = triad_runs(&h, 50.0);
    let basis = triad_basis();
    let ceiling = ceiling_at_16(52.0);
    let a = analyze_with(&h, &r, &basis, std::slice::from_ref(&ceiling));
    let f = saturation_finding(&a);
    assert_eq!(f.after_threads, Some(8), "{f:?}");
    let advice = f.advice.as_deref().unwrap();
    assert!(advice.contains("every NUMA node"), "{advice}");
    assert!(!advice.contains("spread"), "{advice}");
    // The knee where triad stops growing: its check points at the measured ceiling,
    // not at measuring one.
    let knee = knee_checks(&a);
    assert!(!knee.is_empty(), "{:?}", a.findings);
    assert!(
        knee.iter()
            .all(|c| c.contains("bandwidth finding") && c.contains("at 8 threads")),
        "{knee:?}"
    );
    // Under a ceiling four times higher, the same knee is not bandwidth, and says so.
    let under = knee_checks(&analyze_with(&h, &r, &basis, &[ceiling_at_16(200.0)]));
    assert!(!under.is_empty());
    assert!(
        under
            .iter()
            .all(|c| c.starts_with("at 1, 2, 4, 8") && c.contains("does not explain the bend")),
        "{under:?}"
    );
    // Analysed by time, the same ceiling cannot be compared: the check says how to.
    let t = runs(&h, |_, p| p.min(5.0));
    let by_time = knee_checks(&analyze_with(&h, &t, &Basis::Time, &[ceiling]));
    assert!(!by_time.is_empty());
    assert!(
        by_time.iter().all(|c| c.contains("--basis metric:")),
        "{by_time:?}"
    );
}

/// A ceiling measured on both nodes of a two-node machine says nothing about a bend
/// among points on one node: the check asks for the missing ceiling.
#[test]
fn a_bend_on_one_node_with_only_a_two_node_ceiling_asks_for_the_missing_one() {
    let topo = Source::Synthetic("package:2 numa:1 core:8 pu:1".into())
        .load()
        .unwrap();
    let h = header(&topo, vec![1, 2, 4, 6, 8], vec![Strategy::CoresFirst]);
    let both_nodes = ceiling_at_16(90.0);
    let a = analyze_with(&h, &triad_runs(&h, 40.0), &triad_basis(), &[both_nodes]);
    let checks = knee_checks(&a);
    assert!(!checks.is_empty(), "{:?}", a.findings);
    assert!(
        checks
            .iter()
            .all(|c| c.starts_with("no ceiling was measured on as many NUMA nodes")),
        "{checks:?}"
    );
}

/// A read-only figure (TPC-H Q6's `scanned_gb_per_s`) is judged against the read
/// ceiling measured beside it, not triad; a figure above the ceiling is shown as
/// measured and said to be above it.
#[test]
fn a_read_only_figure_is_judged_against_the_read_ceiling() {
    let h = one_node_16_core_sweep();
    let mut r = triad_runs(&h, 102.0);
    for rec in &mut r {
        let gbs = rec.metrics.remove("triad_gb_per_s").unwrap();
        rec.metrics.insert("scanned_gb_per_s".into(), gbs);
    }
    let basis = Basis::Metric {
        name: "scanned_gb_per_s".into(),
        higher_is_better: true,
    };
    let ceiling = Ceiling {
        read_gb_per_s: Some(101.0),
        ..ceiling_at_16(95.0)
    };
    let a = analyze_with(&h, &r, &basis, &[ceiling]);
    let f = saturation_finding(&a);
    // 85% of 101 is 85.85: the first point past it is 12 threads (102 GB/s).
    assert_eq!(f.after_threads, Some(12), "{f:?}");
    assert!(
        f.title.contains("101% of the read ceiling, 101.0 GB/s") && f.title.contains("(above it:"),
        "{}",
        f.title
    );
    assert!(
        f.evidence[0].text.contains("read ceiling 101.0 GB/s"),
        "{:?}",
        f.evidence
    );
    // Without a read ceiling in the document, triad it is, and the finding says so.
    let a = analyze_with(&h, &r, &basis, &[ceiling_at_16(95.0)]);
    let f = saturation_finding(&a);
    assert!(
        f.title.contains("of the triad ceiling, 95.0 GB/s"),
        "{}",
        f.title
    );
}

/// The study's shape: 96 threads (two per core) is the fastest point measured, so
/// no finding may advise one thread per physical core; and the checker drops a
/// finding whose premise the data refutes, saying why.
#[test]
fn every_printed_claim_holds_on_the_data() {
    use scalescope_analysis::consistency::{check, Premise};
    use scalescope_analysis::Severity;
    let (_, a) = two_by_24_by_2();
    assert!(a.consistency.dropped.is_empty(), "{:?}", a.consistency);
    for f in &a.findings {
        let advice = f.advice.as_deref().unwrap_or("");
        assert!(!advice.contains("one thread per physical core"), "{f:?}");
    }
    let curve = "cores-first / first-touch".to_string();
    let refuted = [
        Premise::NoFasterWithSmt,
        Premise::FastestAt {
            curve: curve.clone(),
            threads: 48,
            within_sd: false,
        },
        Premise::LimitAtLeast {
            curve: curve.clone(),
            model: "amdahl".into(),
            limit: 30.0,
        },
        Premise::FixedFactor {
            curve: curve.clone(),
        },
        Premise::Command {
            argv: vec!["analyze".into(), "--baseline".into(), "threads=2".into()],
        },
    ];
    let findings: Vec<Finding> = refuted
        .iter()
        .map(|p| {
            let mut f = Finding::new(FindingKind::Model, Severity::Info, format!("{p:?}"));
            f.premises = vec![p.clone()];
            f
        })
        .collect();
    let (kept, report) = check(findings, &a.curves);
    assert!(kept.is_empty(), "{kept:?}");
    assert_eq!(report.dropped.len(), refuted.len());
    assert!(
        report.dropped[0].reason.contains("96 threads"),
        "{:?}",
        report.dropped[0]
    );
    assert!(
        report.dropped[1].reason.contains("96 threads was faster"),
        "{:?}",
        report.dropped[1]
    );
    // And premises that hold pass.
    let mut ok = Finding::new(FindingKind::Model, Severity::Info, "holds");
    ok.premises = vec![
        Premise::FastestAt {
            curve: curve.clone(),
            threads: 96,
            within_sd: false,
        },
        Premise::LimitAtLeast {
            curve,
            model: "usl".into(),
            limit: 50.0,
        },
        Premise::Command {
            argv: vec!["sweep".into(), "--baseline".into(), "threads=2".into()],
        },
    ];
    let (kept, report) = check(vec![ok], &a.curves);
    assert_eq!((kept.len(), report.dropped.len()), (1, 0), "{report:?}");
}
