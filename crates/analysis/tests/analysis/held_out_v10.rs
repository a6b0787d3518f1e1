//! Held-out set v10 (issue 32, sixth round): written after the sixth round's
//! two changes (implied knees held to the points; a bend not localised claimed
//! at its boundary, low), committed unrun, and run once: the clean evidence for
//! them, which were measured only on sets already read. Shapes no other set
//! holds: Amdahl with a log2 p synchronisation term, a log-logistic rise, the
//! sum of a fast and a slow saturation, Amdahl's curve under a linear falloff,
//! an offset power law, an arctangent in ln p, an efficiency that decays as a
//! stretched exponential, and a USL with a large kappa and small sigma;
//! machines no other set uses (3 x 8, 2 x 12 x 2, two packages of three NUMA
//! nodes of 6, one package of 24). Seeds 17000 and up (18000 and up as held
//! out), used nowhere else.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use crate::scoring;

use scoring::{smooth, KneeFamily, Smooth};

/// The machines of the smooth families.
const MACHINES: [(&str, &str); 4] = [
    ("3x8", "package:3 numa:1 core:8 pu:1"),
    ("2x12x2", "package:2 numa:1 core:12 pu:2"),
    ("2x(3x6)", "package:2 numa:3 core:6 pu:1"),
    ("1x24", "package:1 numa:1 core:24 pu:1"),
];

fn smooth_families() -> Vec<Smooth> {
    let amdahl = |s: f64, p: f64| 1.0 / (s + (1.0 - s) / p);
    let loglogistic = |p: f64| {
        let q = (p - 1.0).max(0.0).powf(1.3);
        q / (q + 15f64.powf(1.3))
    };
    let two = |p: f64| 10.0 * (1.0 - (-p / 5.0).exp()) + 15.0 * (1.0 - (-p / 30.0).exp());
    vec![
        smooth(
            "amdahl with a log2 p synchronisation",
            "1 / (0.01 + 0.99/p + 0.004 log2 p)",
            true,
            Box::new(|p: f64| 1.0 / (0.01 + 0.99 / p + 0.004 * p.log2())),
        ),
        smooth(
            "log-logistic rise",
            "1 + 30 (p - 1)^1.3 / ((p - 1)^1.3 + 15^1.3)",
            true,
            Box::new(move |p: f64| 1.0 + 30.0 * loglogistic(p)),
        ),
        smooth(
            "a fast and a slow saturation",
            "10 (1 - exp(-p/5)) + 15 (1 - exp(-p/30)), over its value at 1",
            true,
            Box::new(move |p: f64| two(p) / two(1.0)),
        ),
        smooth(
            "amdahl under a linear falloff",
            "A(0.01) (1 - 0.006 (p - 1))",
            true,
            Box::new(move |p: f64| amdahl(0.01, p) * (1.0 - 0.006 * (p - 1.0))),
        ),
        smooth(
            "offset power law",
            "(p^0.8 + 2) / 3",
            true,
            Box::new(|p: f64| (p.powf(0.8) + 2.0) / 3.0),
        ),
        smooth(
            "arctangent in ln p",
            "1 + 18 atan(ln p / 1.2) / (pi / 2)",
            true,
            Box::new(|p: f64| 1.0 + 18.0 * (p.ln() / 1.2).atan() / std::f64::consts::FRAC_PI_2),
        ),
        smooth(
            "efficiency decaying as a stretched exponential",
            "p exp(-((p - 1)/60)^0.7)",
            true,
            Box::new(|p: f64| p * (-((p - 1.0) / 60.0).powf(0.7)).exp()),
        ),
        smooth(
            "usl, large kappa and small sigma",
            "p / (1 + 0.002 (p - 1) + 0.0012 p (p - 1))",
            true,
            Box::new(|p: f64| p / (1.0 + 0.002 * (p - 1.0) + 0.0012 * p * (p - 1.0))),
        ),
    ]
}

fn knee_families() -> Vec<KneeFamily> {
    let k = KneeFamily::held_out;
    let [m3x8, m2x12x2, m2x3x6, m1x24] = MACHINES;
    vec![
        k("package knee 0.55 at 8", m3x8, vec![(8, 0.55)], 0.0),
        k(
            "package knees 0.7 at 8 and 0.7 at 16",
            m3x8,
            vec![(8, 0.7), (16, 0.7)],
            0.0,
        ),
        k("SMT knee 0.45 at 24", m2x12x2, vec![(24, 0.45)], 0.0),
        k("NUMA knee 0.65 at 6", m2x3x6, vec![(6, 0.65)], 0.0),
        k(
            "bandwidth cap at 9 (no boundary)",
            m1x24,
            vec![(9, 0.1)],
            0.0,
        ),
        k("steepening at 12 (1.6)", m2x12x2, vec![(12, 1.6)], 0.0),
        k(
            "package knee 0.6 at 12 on Amdahl s=0.01",
            m2x12x2,
            vec![(12, 0.6)],
            0.01,
        ),
    ]
}

/// Prints the v10 smooth families' table (docs/ANALYSIS.md, "The sixth round")
/// and holds what every curve must satisfy.
#[test]
fn held_out_v10() {
    scoring::held_out_smooth("held out v10", &smooth_families(), &MACHINES, 17000);
}

/// The knee families of the set, beside the smooth ones.
#[test]
fn held_out_v10_knees() {
    scoring::held_out_knees("held out v10", &knee_families(), 17000);
}
