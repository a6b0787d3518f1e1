//! The diagnosis with the sampler's evidence, on the reference study's 2 x 24 x 2
//! machine: the knee at the second package is attributed to remote memory when the
//! cross-node traffic measured beside the runs jumps there (the study's 4.9 MB at 24
//! threads against 86 GB at 48), and says which measurement would decide it when no
//! source measured any.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use scalescope_analysis::finding::{EvidenceItem, FindingKind};
use scalescope_analysis::{analyze, Analysis, Basis};
use scalescope_model::evidence::{
    BandwidthEvidence, DomainTraffic, Measured, RunEvidence, SamplerCost,
};
use scalescope_place::Strategy;
use scalescope_topo::Source;

use crate::generator::{five_runs as runs, study_header as header};

fn study(p: f64) -> f64 {
    if p <= 24.0 {
        p
    } else {
        24.0 + 0.7 * (p - 24.0)
    }
}

const WHY: &str = "resctrl MBM: no resctrl filesystem is mounted";

fn evidence(cross_node: Option<u64>) -> RunEvidence {
    RunEvidence {
        interval_ms: 100.0,
        samples: 10,
        series_file: None,
        sampler: SamplerCost::default(),
        cpu: Measured::Unavailable(WHY.into()),
        threads: vec![],
        pages: Measured::Unavailable(WHY.into()),
        numastat: Measured::Unavailable(WHY.into()),
        bandwidth: match cross_node {
            Some(c) => Measured::Measured(BandwidthEvidence {
                source: "resctrl-mbm".into(),
                scope: "the run's tasks".into(),
                domains: vec![DomainTraffic {
                    domain: 0,
                    total_bytes: 2 * c + 1,
                    local_bytes: Some(c + 1),
                    remote_bytes: Some(c),
                    mean_bytes_per_sec: 1.0,
                    peak_bytes_per_sec: 1.0,
                }],
                cross_node_bytes: Some(c),
            }),
            None => Measured::Unavailable(WHY.into()),
        },
        pmu: vec![],
    }
}

fn study_analysis(measured: bool) -> Analysis {
    let topo = Source::Synthetic("package:2 numa:1 core:24 pu:2 numbering=smt-last".into())
        .load()
        .unwrap();
    let threads = vec![1, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48];
    let h = header(&topo, threads, vec![Strategy::CoresFirst]);
    let mut r = runs(&h, |_, p| study(p));
    for run in &mut r {
        let bytes = if run.point.threads <= 24 {
            4_900_000
        } else {
            86_000_000_000
        };
        run.evidence = Some(Box::new(evidence(measured.then_some(bytes))));
    }
    analyze(&h, &r, &Basis::Time)
}

#[test]
fn the_package_knee_is_remote_memory_with_the_traffic_quoted() {
    let a = study_analysis(true);
    let knee = a
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Knee && f.after_threads == Some(24))
        .expect("a knee after 24 threads");
    assert!(
        knee.title
            .contains("remote memory: cross-node traffic 4.9 MB at 24 threads, 86.0 GB at 28"),
        "{}",
        knee.title
    );
    assert!(knee.evidence.iter().any(|e| matches!(
        e.item,
        EvidenceItem::Traffic {
            before_threads: 24,
            after_threads: 28,
            ..
        }
    )));
    assert_eq!(a.evidence.len(), 13);
}

#[test]
fn without_a_source_the_knee_names_the_measurement_that_would_decide() {
    let a = study_analysis(false);
    let knee = a
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Knee && f.after_threads == Some(24))
        .expect("a knee after 24 threads");
    assert!(!knee.title.contains("remote memory:"), "{}", knee.title);
    let check = knee.check.as_deref().unwrap();
    assert!(
        check.contains("cross-node traffic at 24 and 28 threads would decide it")
            && check.contains("unavailable here: resctrl MBM: no resctrl filesystem is mounted"),
        "{check}"
    );
}
