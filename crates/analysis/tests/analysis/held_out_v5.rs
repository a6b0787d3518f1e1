//! Held-out set v5 (issue 32, fourth round): written and committed before the
//! fourth round changed anything, and never used to tune it. Shapes no other
//! set holds: an algebraic sigmoid, arctan of log p, Amdahl with a cost that
//! grows as the square root of p, Michaelis-Menten with a linear decay, a
//! square-root law, a USL that peaks near 20 threads, a log-logistic with a
//! slow rise, and Amdahl with a serial part of 3% and a logarithmic overhead;
//! machines no other set uses (2 x 12, 4 x 8 x 2, one package of four NUMA
//! nodes of 16, 2 x 18 x 2, 6 x 8). Seeds 7000 and up (8000 and up as held
//! out), used nowhere else. Generated, analysed and scored as the other sets
//! are (`support/scoring.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use crate::scoring;

use scoring::{smooth, KneeFamily, Smooth};

/// The machines of the smooth families.
const MACHINES: [(&str, &str); 4] = [
    ("2x12", "package:2 numa:1 core:12 pu:1"),
    ("4x8x2", "package:4 numa:1 core:8 pu:2"),
    ("1x(4x16)", "package:1 numa:4 core:16 pu:1"),
    ("2x18x2", "package:2 numa:1 core:18 pu:2"),
];
const M6X8: (&str, &str) = ("6x8", "package:6 numa:1 core:8 pu:1");

fn smooth_families() -> Vec<Smooth> {
    vec![
        smooth(
            "algebraic sigmoid",
            "1 + 30 (p - 1) / sqrt(20^2 + (p - 1)^2)",
            true,
            Box::new(|p: f64| 1.0 + 30.0 * (p - 1.0) / (400.0 + (p - 1.0).powi(2)).sqrt()),
        ),
        smooth(
            "arctan of log p",
            "1 + 16 atan(ln p / 2)",
            true,
            Box::new(|p: f64| 1.0 + 16.0 * (p.ln() / 2.0).atan()),
        ),
        smooth(
            "amdahl with a square-root cost",
            "1 / (0.01 + 0.99/p + 0.002 sqrt(p))",
            true,
            Box::new(|p: f64| 1.0 / (0.01 + 0.99 / p + 0.002 * (p.sqrt() - 1.0))),
        ),
        smooth(
            "michaelis-menten with a linear decay",
            "(1 + 40) p / (40 + p) (1 - 0.004 (p - 1))",
            true,
            Box::new(|p: f64| 41.0 * p / (40.0 + p) * (1.0 - 0.004 * (p - 1.0))),
        ),
        smooth(
            "square-root law",
            "1 + 5 (sqrt(p) - 1)",
            true,
            Box::new(|p: f64| 1.0 + 5.0 * (p.sqrt() - 1.0)),
        ),
        smooth(
            "usl peaking near 20",
            "sigma=0.02, kappa=0.0025",
            true,
            Box::new(|p: f64| p / (1.0 + 0.02 * (p - 1.0) + 0.0025 * p * (p - 1.0))),
        ),
        smooth(
            "log-logistic, slow rise",
            "1 + 35 (p - 1)^1.2 / (30^1.2 + (p - 1)^1.2)",
            true,
            Box::new(|p: f64| {
                let u = (p - 1.0).max(0.0).powf(1.2);
                1.0 + 35.0 * u / (30f64.powf(1.2) + u)
            }),
        ),
        smooth(
            "amdahl 3% with a log overhead",
            "1 / (0.03 + 0.97/p + 0.01 ln p)",
            true,
            Box::new(|p: f64| 1.0 / (0.03 + 0.97 / p + 0.01 * p.ln())),
        ),
    ]
}

fn knee_families() -> Vec<KneeFamily> {
    let k = KneeFamily::held_out;
    let [m2x12, m4x8x2, m1x4x16, m2x18x2] = MACHINES;
    vec![
        k("package knee 0.5 at 12", m2x12, vec![(12, 0.5)], 0.0),
        k("SMT knee 0.3 at 32", m4x8x2, vec![(32, 0.3)], 0.0),
        k("NUMA knee 0.6 at 16", m1x4x16, vec![(16, 0.6)], 0.0),
        k(
            "bandwidth cap at 22 (no boundary)",
            m2x18x2,
            vec![(22, 0.05)],
            0.0,
        ),
        k(
            "package knee 0.5 on Amdahl s=0.01",
            M6X8,
            vec![(8, 0.5)],
            0.01,
        ),
        k(
            "package 0.7 then SMT 0.3",
            m2x18x2,
            vec![(18, 0.7), (36, 0.3)],
            0.0,
        ),
        k(
            "retrograde after the package (-0.3)",
            m2x12,
            vec![(12, -0.3)],
            0.0,
        ),
        k("steepening after 16 (1.5)", m4x8x2, vec![(16, 1.5)], 0.0),
    ]
}

/// Prints the v5 tables (docs/ANALYSIS.md, "Held-out set v5") and holds what
/// every curve must satisfy.
#[test]
fn held_out_v5() {
    scoring::held_out_smooth("held out v5", &smooth_families(), &MACHINES, 7000);
}

/// The knee families of the set, beside the smooth ones.
#[test]
fn held_out_v5_knees() {
    scoring::held_out_knees("held out v5", &knee_families(), 7000);
}
