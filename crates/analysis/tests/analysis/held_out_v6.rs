//! Held-out set v6 (issue 32, fourth round): written after the fourth round's
//! changes and run once, unread before then, so it is the round's clean
//! evidence (v5 was read while the round was planned). Shapes no other set
//! holds: a Frechet-type saturation (Gompertz in log p), a power law with a
//! Gaussian cut-off, Amdahl with a square-root memory penalty, logarithmic
//! speedup, Gustafson's line with a serial part that grows, saturation on two
//! time scales, arctan of the square root of p, and a soft cap of order two;
//! machines no other set uses (2 x 10, 3 x 12, two packages of three NUMA
//! nodes of 8, one package of 24 cores with four hardware threads each, 4 x
//! 12). Seeds 9000 and up (10000 and up as held out), used nowhere else.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use crate::scoring;

use scoring::{smooth, KneeFamily, Smooth};

/// The machines of the smooth families.
const MACHINES: [(&str, &str); 4] = [
    ("2x10", "package:2 numa:1 core:10 pu:1"),
    ("3x12", "package:3 numa:1 core:12 pu:1"),
    ("2x(3x8)", "package:2 numa:3 core:8 pu:1"),
    ("1x24x4", "package:1 numa:1 core:24 pu:4"),
];
const M4X12: (&str, &str) = ("4x12", "package:4 numa:1 core:12 pu:1");

fn smooth_families() -> Vec<Smooth> {
    let frechet = |p: f64| (-3.0 * p.powf(-0.9)).exp();
    vec![
        smooth(
            "frechet saturation (gompertz in log p)",
            "1 + 30 (F(p) - F(1)) / (1 - F(1)), F = exp(-3 p^-0.9)",
            true,
            Box::new(move |p: f64| 1.0 + 30.0 * (frechet(p) - frechet(1.0)) / (1.0 - frechet(1.0))),
        ),
        smooth(
            "power law with a gaussian cut-off",
            "p^0.95 exp(-((p - 1)/90)^2)",
            true,
            Box::new(|p: f64| p.powf(0.95) * (-((p - 1.0) / 90.0).powi(2)).exp()),
        ),
        smooth(
            "amdahl with a square-root memory penalty",
            "1 / (0.015 + 0.985/p) / (1 + 0.02 (sqrt(p) - 1))",
            true,
            Box::new(|p: f64| 1.0 / (0.015 + 0.985 / p) / (1.0 + 0.02 * (p.sqrt() - 1.0))),
        ),
        smooth(
            "logarithmic speedup",
            "1 + 6 ln p",
            true,
            Box::new(|p: f64| 1.0 + 6.0 * p.ln()),
        ),
        smooth(
            "gustafson with a growing serial part",
            "p - (p - 1) (0.05 + 0.004 p)",
            true,
            Box::new(|p: f64| p - (p - 1.0) * (0.05 + 0.004 * p)),
        ),
        smooth(
            "saturation on two time scales",
            "1 + 14 (1 - exp(-(p - 1)/6)) + 14 (1 - exp(-(p - 1)/50))",
            true,
            Box::new(|p: f64| {
                1.0 + 14.0 * (1.0 - (-(p - 1.0) / 6.0).exp())
                    + 14.0 * (1.0 - (-(p - 1.0) / 50.0).exp())
            }),
        ),
        smooth(
            "arctan of sqrt p",
            "1 + 20 atan(sqrt(p - 1) / 4)",
            true,
            Box::new(|p: f64| 1.0 + 20.0 * ((p - 1.0).max(0.0).sqrt() / 4.0).atan()),
        ),
        smooth(
            "soft cap of order two",
            "p / sqrt(1 + (p/30)^2)",
            true,
            Box::new(|p: f64| p / (1.0 + (p / 30.0).powi(2)).sqrt()),
        ),
    ]
}

fn knee_families() -> Vec<KneeFamily> {
    let k = KneeFamily::held_out;
    let [m2x10, m3x12, m2x3x8, m1x24x4] = MACHINES;
    vec![
        k("package knee 0.55 at 10", m2x10, vec![(10, 0.55)], 0.0),
        k("SMT knee 0.4 at 24", m1x24x4, vec![(24, 0.4)], 0.0),
        k("NUMA knee 0.65 at 8", m2x3x8, vec![(8, 0.65)], 0.0),
        k(
            "bandwidth cap at 15 (no boundary)",
            m3x12,
            vec![(15, 0.05)],
            0.0,
        ),
        k(
            "retrograde after the package (-0.4)",
            m3x12,
            vec![(24, -0.4)],
            0.0,
        ),
        k(
            "package knee 0.6 on Amdahl s=0.02",
            M4X12,
            vec![(12, 0.6)],
            0.02,
        ),
        k("steepening at 24 (1.4)", m3x12, vec![(24, 1.4)], 0.0),
    ]
}

/// Prints the v6 smooth families' table (docs/ANALYSIS.md, "The fourth round")
/// and holds what every curve must satisfy.
#[test]
fn held_out_v6() {
    scoring::held_out_smooth("held out v6", &smooth_families(), &MACHINES, 9000);
}

/// The knee families of the set, beside the smooth ones.
#[test]
fn held_out_v6_knees() {
    scoring::held_out_knees("held out v6", &knee_families(), 9000);
}
