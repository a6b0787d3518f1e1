//! Published curves (tests/published/, each cited in its README) analysed as any
//! imported curve is: no finding may contradict the curve's own data. A model that
//! is kept (not rejected) must not put a limit below a measured speedup, nor a peak
//! before the last point when the last point is the fastest measured; no finding
//! may say that more threads make it slower when the last point is the fastest; and
//! with one repetition per point nothing is of high confidence.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::path::Path;

use scalescope_analysis::{analyze, Analysis, Basis};
use scalescope_model::import::{header, parse_csv, ImportOptions};
use scalescope_place::Strategy;
use scalescope_topo::Source;

/// Each published curve and the machine it was measured on.
const CURVES: [(&str, &str); 2] = [
    ("raytracer-origin2000.csv", "package:32 numa:1 core:2"),
    ("specsdm91-sparccenter2000.csv", "package:1 numa:1 core:16"),
];

fn analysed(file: &str, machine: &str) -> Analysis {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/published")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let imported = parse_csv(
        &text,
        &ImportOptions {
            file: file.into(),
            placement: Some(Strategy::CoresFirst),
            lower_is_better: false,
        },
    )
    .unwrap();
    let topo = Source::Synthetic(machine.into()).load().unwrap();
    let h = header(&imported, &topo, file, "published-test");
    analyze(&h, &imported.runs, &Basis::default_for(&h))
}

/// The contradictions a finding or a kept model can make, in words.
fn contradictions(a: &Analysis) -> Vec<String> {
    let mut out = Vec::new();
    let c = &a.curves[0];
    let best = c.points.iter().map(|p| p.speedup).fold(0.0, f64::max);
    let last = c.points.last().unwrap();
    let last_is_fastest = last.speedup >= best;
    if let Some(am) = c.amdahl.as_ref().filter(|m| m.rejected.is_none()) {
        if am.max_speedup.is_some_and(|m| m < best) {
            out.push(format!(
                "Amdahl limit {:?} below measured {best}",
                am.max_speedup
            ));
        }
    }
    if let Some(u) = c.usl.as_ref().filter(|m| m.rejected.is_none()) {
        if last_is_fastest && u.peak_threads.is_some_and(|p| p < last.threads as f64) {
            out.push(format!(
                "USL peak at {:?} threads before the fastest point {}",
                u.peak_threads, last.threads
            ));
        }
        if u.peak_speedup.is_some_and(|p| p < best * 0.95) {
            out.push(format!(
                "USL peak speedup {:?} below measured {best}",
                u.peak_speedup
            ));
        }
    }
    for f in &a.findings {
        let text = format!("{} {}", f.title, f.advice.as_deref().unwrap_or(""));
        if last_is_fastest && text.contains("slower") && text.contains("more threads") {
            out.push(format!("retrograde finding on a rising curve: {text}"));
        }
        if f.confidence.label == "high" {
            out.push(format!("high confidence from one repetition: {text}"));
        }
    }
    out
}

#[test]
fn no_finding_contradicts_a_published_curve() {
    for (file, machine) in CURVES {
        let a = analysed(file, machine);
        let bad = contradictions(&a);
        assert!(bad.is_empty(), "{file}: {bad:#?}");
        // The analysis says where the curve came from.
        assert!(
            a.findings
                .iter()
                .any(|f| f.title.starts_with("imported from")),
            "{file}"
        );
    }
}

/// The check above can fail: a curve whose last point is its fastest, given a
/// retrograde USL, is caught.
#[test]
fn the_contradiction_check_catches_a_retrograde_claim() {
    let (file, machine) = CURVES[0];
    let mut a = analysed(file, machine);
    let u = a.curves[0].usl.as_mut().unwrap();
    u.rejected = None;
    u.peak_threads = Some(40.0);
    assert!(!contradictions(&a).is_empty());
}

/// SPEC SDM91 falls after 72 users: a retrograde model is right there, and the
/// analysis keeps one whose peak lies inside the measured range.
#[test]
fn a_published_retrograde_curve_is_recognised() {
    let a = analysed(CURVES[1].0, CURVES[1].1);
    let c = &a.curves[0];
    let kept: Vec<_> = c
        .models
        .candidates
        .iter()
        .filter(|m| m.rejected.is_none())
        .map(|m| m.model.clone())
        .collect();
    assert!(kept.iter().any(|m| m == "usl"), "{:?}", c.models);
}
