//! Held-out set v7 (issue 32, fifth round): written before the fifth round's
//! changes and committed before its first run, so its "before" table is the
//! detector as the fourth round left it, and the table after the changes shows
//! what they did on curves they were not tuned on. Shapes no other set holds:
//! Amdahl with a logarithmic communication term, a hyperbolic-tangent
//! saturation, a power law that a quadratic overhead turns over, a
//! Michaelis-Menten rate with an offset, the square-root law, a USL dominated
//! by contention, Amdahl with an overhead linear in p, and a log-logistic
//! curve in log p; machines no other set uses (2 x 14, 2 x 8 x 2, four
//! packages of two NUMA nodes of 6, one package of 64 cores, 2 x 32). Knee
//! families lean on the fourth round's systematic miss (package knees on an
//! Amdahl base) beside the kinds every set holds. Seeds 11000 and up (12000
//! and up as held out), used nowhere else.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use crate::scoring;

use scoring::{smooth, KneeFamily, Smooth};

/// The machines of the smooth families.
const MACHINES: [(&str, &str); 4] = [
    ("2x14", "package:2 numa:1 core:14 pu:1"),
    ("2x8x2", "package:2 numa:1 core:8 pu:2"),
    ("4x(2x6)", "package:4 numa:2 core:6 pu:1"),
    ("1x64", "package:1 numa:1 core:64 pu:1"),
];
const M2X32: (&str, &str) = ("2x32", "package:2 numa:1 core:32 pu:1");

fn smooth_families() -> Vec<Smooth> {
    let loglogistic = |p: f64| {
        let z = (p.ln() - 20f64.ln()) / 0.7;
        1.0 / (1.0 + (-z).exp())
    };
    vec![
        smooth(
            "amdahl with a logarithmic communication term",
            "1 / (0.01 + 0.99/p + 0.003 log2 p)",
            true,
            Box::new(|p: f64| 1.0 / (0.01 + 0.99 / p + 0.003 * p.log2())),
        ),
        smooth(
            "hyperbolic-tangent saturation",
            "1 + 20 tanh((p - 1)/25)",
            true,
            Box::new(|p: f64| 1.0 + 20.0 * ((p - 1.0) / 25.0).tanh()),
        ),
        smooth(
            "power law turned over by a quadratic overhead",
            "p^0.85 - 0.002 (p^2 - 1)",
            true,
            Box::new(|p: f64| p.powf(0.85) - 0.002 * (p * p - 1.0)),
        ),
        smooth(
            "michaelis-menten with an offset",
            "1 + 40 (p - 1)/(p - 1 + 30)",
            true,
            Box::new(|p: f64| 1.0 + 40.0 * (p - 1.0) / (p - 1.0 + 30.0)),
        ),
        smooth(
            "square-root law",
            "3 sqrt(p) - 2",
            true,
            Box::new(|p: f64| 3.0 * p.sqrt() - 2.0),
        ),
        smooth(
            "USL dominated by contention",
            "p / (1 + 0.08 (p - 1) + 0.0002 p (p - 1))",
            true,
            Box::new(|p: f64| p / (1.0 + 0.08 * (p - 1.0) + 0.0002 * p * (p - 1.0))),
        ),
        smooth(
            "amdahl with an overhead linear in p",
            "1 / (0.005 + 0.995/p + 0.0006 p)",
            true,
            Box::new(|p: f64| 1.0 / (0.005 + 0.995 / p + 0.0006 * p)),
        ),
        smooth(
            "log-logistic in log p",
            "1 + 24 (L(p) - L(1)) / (1 - L(1)), L = 1/(1 + (20/p)^(1/0.7))",
            true,
            Box::new(move |p: f64| {
                1.0 + 24.0 * (loglogistic(p) - loglogistic(1.0)) / (1.0 - loglogistic(1.0))
            }),
        ),
    ]
}

fn knee_families() -> Vec<KneeFamily> {
    let k = KneeFamily::held_out;
    let [m2x14, m2x8x2, m4x2x6, _] = MACHINES;
    vec![
        k("package knee 0.5 at 14", m2x14, vec![(14, 0.5)], 0.0),
        k(
            "package knee 0.6 at 14 on Amdahl s=0.03",
            m2x14,
            vec![(14, 0.6)],
            0.03,
        ),
        k(
            "package knee 0.5 at 32 on Amdahl s=0.01",
            M2X32,
            vec![(32, 0.5)],
            0.01,
        ),
        k("SMT knee 0.3 at 16", m2x8x2, vec![(16, 0.3)], 0.0),
        k(
            "bandwidth cap at 20 (no boundary)",
            m2x14,
            vec![(20, 0.05)],
            0.0,
        ),
        k(
            "retrograde after the package (-0.3)",
            m2x14,
            vec![(14, -0.3)],
            0.0,
        ),
        k(
            "NUMA knee 0.8 at 6, package knee 0.5 at 12",
            m4x2x6,
            vec![(6, 0.8), (12, 0.5)],
            0.0,
        ),
    ]
}

/// Prints the v7 smooth families' table (docs/ANALYSIS.md, "The fifth round")
/// and holds what every curve must satisfy.
#[test]
fn held_out_v7() {
    scoring::held_out_smooth("held out v7", &smooth_families(), &MACHINES, 11000);
}

/// The knee families of the set, beside the smooth ones.
#[test]
fn held_out_v7_knees() {
    scoring::held_out_knees("held out v7", &knee_families(), 11000);
}
