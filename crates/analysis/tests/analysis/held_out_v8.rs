//! Held-out set v8 (issue 32, fifth round): written while the fifth round's
//! changes were being made, committed unrun, and run once only after they were
//! final, so it is the round's clean evidence (v7 was run before the changes
//! and then read while they were made). Shapes no other set holds: Amdahl with
//! a contention term that saturates, a Weibull saturation that starts convex,
//! a rational curve that turns over, the power law p^0.6, a blend of Amdahl's
//! and a power law, p exp(-p/60), Amdahl with a quadratic overhead, and a
//! saturation in sqrt(p); machines no other set uses (2 x 6, 8 x 8, two
//! packages of two NUMA nodes of 10 cores with two hardware threads, one
//! package of 40 cores, 2 x 26). Seeds 13000 and up (14000 and up as held
//! out), used nowhere else.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use crate::scoring;

use scoring::{smooth, KneeFamily, Smooth};

/// The machines of the smooth families.
const MACHINES: [(&str, &str); 4] = [
    ("2x6", "package:2 numa:1 core:6 pu:1"),
    ("8x8", "package:8 numa:1 core:8 pu:1"),
    ("2x(2x10)x2", "package:2 numa:2 core:10 pu:2"),
    ("1x40", "package:1 numa:1 core:40 pu:1"),
];
const M2X26: (&str, &str) = ("2x26", "package:2 numa:1 core:26 pu:1");

fn smooth_families() -> Vec<Smooth> {
    let weibull = |p: f64| 1.0 - (-((p - 1.0).max(0.0) / 20.0).powf(1.5)).exp();
    vec![
        smooth(
            "amdahl with a contention term that saturates",
            "1 / (0.01 + 0.99/p + 0.05 (1 - exp(-p/20)))",
            true,
            Box::new(|p: f64| 1.0 / (0.01 + 0.99 / p + 0.05 * (1.0 - (-p / 20.0).exp()))),
        ),
        smooth(
            "weibull saturation starting convex",
            "1 + 25 (1 - exp(-((p - 1)/20)^1.5))",
            true,
            Box::new(move |p: f64| 1.0 + 25.0 * weibull(p)),
        ),
        smooth(
            "rational curve that turns over",
            "p (1 + 0.1 p) / (1 + 0.01 p^2) / (1.1 / 1.01)",
            true,
            Box::new(|p: f64| p * (1.0 + 0.1 * p) / (1.0 + 0.01 * p * p) * 1.01 / 1.1),
        ),
        smooth(
            "power law 0.6",
            "p^0.6",
            true,
            Box::new(|p: f64| p.powf(0.6)),
        ),
        smooth(
            "blend of amdahl and a power law",
            "0.5 / (0.05 + 0.95/p) + 0.5 p^0.9",
            true,
            Box::new(|p: f64| 0.5 / (0.05 + 0.95 / p) + 0.5 * p.powf(0.9)),
        ),
        smooth(
            "p exp(-(p - 1)/60)",
            "p exp(-(p - 1)/60)",
            true,
            Box::new(|p: f64| p * (-(p - 1.0) / 60.0).exp()),
        ),
        smooth(
            "amdahl with a quadratic overhead",
            "1 / (0.01 + 0.99/p + 0.00002 p^2)",
            true,
            Box::new(|p: f64| 1.0 / (0.01 + 0.99 / p + 0.00002 * p * p)),
        ),
        smooth(
            "saturation in sqrt p",
            "1 + 30 (1 - exp(-(sqrt p - 1)/3))",
            true,
            Box::new(|p: f64| 1.0 + 30.0 * (1.0 - (-(p.sqrt() - 1.0) / 3.0).exp())),
        ),
    ]
}

fn knee_families() -> Vec<KneeFamily> {
    let k = KneeFamily::held_out;
    let [m2x6, m8x8, m2x2x10x2, m1x40] = MACHINES;
    vec![
        k("package knee 0.55 at 26", M2X26, vec![(26, 0.55)], 0.0),
        k("NUMA knee 0.75 at 10", m2x2x10x2, vec![(10, 0.75)], 0.0),
        k(
            "package knee 0.6 at 6 on Amdahl s=0.02",
            m2x6,
            vec![(6, 0.6)],
            0.02,
        ),
        k(
            "bandwidth cap at 18 (no boundary)",
            m1x40,
            vec![(18, 0.05)],
            0.0,
        ),
        k(
            "package knees 0.6 at 8 and 0.7 at 16",
            m8x8,
            vec![(8, 0.6), (16, 0.7)],
            0.0,
        ),
        k(
            "retrograde after the package (-0.2)",
            m2x2x10x2,
            vec![(20, -0.2)],
            0.0,
        ),
        k("steepening at 26 (1.5)", M2X26, vec![(26, 1.5)], 0.0),
    ]
}

/// Prints the v8 smooth families' table (docs/ANALYSIS.md, "The fifth round")
/// and holds what every curve must satisfy.
#[test]
fn held_out_v8() {
    scoring::held_out_smooth("held out v8", &smooth_families(), &MACHINES, 13000);
}

/// The knee families of the set, beside the smooth ones.
#[test]
fn held_out_v8_knees() {
    scoring::held_out_knees("held out v8", &knee_families(), 13000);
}
