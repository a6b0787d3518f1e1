//! Held-out set v2 (issue 32, second round): smooth and knee families written
//! before the detector's second round was tuned, and never used to tune it. The
//! first held-out set (`null_corpus.rs`) was looked at while the first round was
//! fixed; a check passes easily on data made by the model it tests, so this set
//! holds shapes the null's families do not contain (Gompertz and logistic growth,
//! a Michaelis-Menten curve with an offset, a Hill curve through 1, Amdahl with
//! contention terms, a soft cap) and knee families on machines the first set does
//! not use (8 sockets, two NUMA nodes per package, several L3 domains per
//! package). Seeds 2000 and up, used nowhere else. Generated, analysed and
//! scored as `null_corpus.rs` does (`support/scoring.rs`); the numbers printed
//! are docs/ANALYSIS.md's ("Held-out set v2").

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use crate::scoring;

use scoring::{growth, smooth, KneeFamily, Smooth};

/// The machines: 2 x 16, 2 x 24 x 2, 4 x 18 and an 8-socket server (8 x 10).
const MACHINES: [(&str, &str); 4] = [
    ("2x16", "package:2 numa:1 core:16 pu:1"),
    ("2x24x2", "package:2 numa:1 core:24 pu:2"),
    ("4x18", "package:4 numa:1 core:18 pu:1"),
    ("8x10", "package:8 numa:1 core:10 pu:1"),
];
/// Two NUMA nodes per package; four L3 domains per package.
const NUMA2: (&str, &str) = ("2x(2x8)", "package:2 numa:2 core:8 pu:1");
const L3X4: (&str, &str) = ("2x(4 L3x4)x2", "package:2 numa:1 l3:4 core:4 pu:2");

fn smooth_families() -> Vec<Smooth> {
    let mut v = vec![
        smooth(
            "gompertz",
            "1 + 40 (G(p) - G(1)) / (1 - G(1)), G = exp(-2 exp(-0.06 p))",
            true,
            growth(40.0, |p| (-2.0 * (-0.06 * p).exp()).exp()),
        ),
        smooth(
            "logistic",
            "1 + 40 (L(p) - L(1)) / (1 - L(1)), L = 1 / (1 + exp(-0.08 (p - 16)))",
            true,
            growth(40.0, |p| 1.0 / (1.0 + (-0.08 * (p - 16.0)).exp())),
        ),
        smooth(
            "michaelis-menten with offset",
            "1 + 25 (p - 1) / (30 + p - 1)",
            true,
            Box::new(|p| 1.0 + 25.0 * (p - 1.0) / (30.0 + p - 1.0)),
        ),
    ];
    for (top, a) in [(40.0, 1.2), (25.0, 0.8)] {
        v.push(smooth(
            "hill through 1",
            &format!("{top} p^{a} / ({} + p^{a})", top - 1.0),
            true,
            Box::new(move |p: f64| top * p.powf(a) / (top - 1.0 + p.powf(a))),
        ));
    }
    for k in [16.0, 40.0] {
        v.push(smooth(
            "1 - exp(-p/k)",
            &format!("k={k}"),
            true,
            Box::new(move |p: f64| (1.0 - (-p / k).exp()) / (1.0 - (-1.0 / k).exp())),
        ));
    }
    for a in [0.5, 0.6, 0.85] {
        v.push(smooth(
            "power law",
            &format!("a={a}"),
            true,
            Box::new(move |p: f64| p.powf(a)),
        ));
    }
    v.push(smooth(
        "amdahl + quadratic contention",
        "1 / (0.01 + 0.99/p + 2e-6 p^2)",
        true,
        Box::new(|p: f64| 1.0 / (0.01 + 0.99 / p + 2e-6 * p * p)),
    ));
    v.push(smooth(
        "amdahl + p log2 p contention",
        "1 / (0.02 + 0.98/p + 0.0005 (p - 1) log2 p)",
        true,
        Box::new(|p: f64| 1.0 / (0.02 + 0.98 / p + 0.0005 * (p - 1.0) * p.log2())),
    ));
    v.push(smooth(
        "usl, peak beyond the range",
        "sigma=0.02, peak at 150",
        true,
        Box::new(|p: f64| p / (1.0 + 0.02 * (p - 1.0) + 0.98 / 22_500.0 * p * (p - 1.0))),
    ));
    v.push(smooth(
        "soft cap",
        "p / (1 + (p/28)^3)^(1/3)",
        true,
        Box::new(|p: f64| p / (1.0 + (p / 28.0).powi(3)).cbrt()),
    ));
    v
}

fn knee_families() -> Vec<KneeFamily> {
    let k = KneeFamily::held_out;
    let [m2x16, m2x24x2, m4x18, m8x10] = MACHINES;
    vec![
        k("package knee 0.75", m2x16, vec![(16, 0.75)], 0.0),
        k("package knee 0.85 (15%)", m2x16, vec![(16, 0.85)], 0.0),
        k(
            "package knee 0.65 on Amdahl s=0.02",
            m2x24x2,
            vec![(24, 0.65)],
            0.02,
        ),
        k("SMT knee 0.6", m2x24x2, vec![(48, 0.6)], 0.0),
        k(
            "package knees 0.8 at 18 and 36",
            m4x18,
            vec![(18, 0.8), (36, 0.8)],
            0.0,
        ),
        k("package knee 0.6 at 54", m4x18, vec![(54, 0.6)], 0.0),
        k("package knee 0.7 at 10", m8x10, vec![(10, 0.7)], 0.0),
        k(
            "package knee 0.75 at 40 on Amdahl s=0.005",
            m8x10,
            vec![(40, 0.75)],
            0.005,
        ),
        k("NUMA knee 0.7", NUMA2, vec![(8, 0.7)], 0.0),
        k("L3 knee 0.7", L3X4, vec![(4, 0.7)], 0.0),
        k(
            "bandwidth cap at 12 (no boundary)",
            m4x18,
            vec![(12, 0.1)],
            0.0,
        ),
        k(
            "bandwidth cap at 15 (no boundary)",
            m8x10,
            vec![(15, 0.2)],
            0.0,
        ),
        k(
            "bandwidth cap at 30 (no boundary)",
            m2x24x2,
            vec![(30, 0.3)],
            0.0,
        ),
    ]
}

/// Prints the v2 tables (docs/ANALYSIS.md, "Held-out set v2") and holds what
/// every curve must satisfy.
#[test]
fn held_out_v2() {
    scoring::held_out_smooth("held out v2", &smooth_families(), &MACHINES, 2000);
}

/// The knee families of the set, beside the smooth ones.
#[test]
fn held_out_v2_knees() {
    scoring::held_out_knees("held out v2", &knee_families(), 2000);
}
