//! Held-out set v9 (issue 32, fifth round): written after v8's clean first run
//! showed two smooth shapes the checks missed (Amdahl with a quadratic overhead
//! and the fifth round's changes that followed it), committed unrun, and run
//! once only after those changes were final: the clean evidence for them.
//! Shapes no other set holds: Amdahl with a cubic overhead, a superlinear start
//! under a soft ceiling, Richards growth, a harmonic saturation, a USL whose
//! peak lies beyond the range, Amdahl with a serial part growing with log p, a
//! blend of two Amdahl curves, and a Gompertz curve in sqrt p; machines no
//! other set uses (2 x 4, 4 x 10, two packages of two NUMA nodes of 16, one
//! package of 16 cores with two hardware threads, 2 x 22). Seeds 15000 and up
//! (16000 and up as held out), used nowhere else.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use crate::scoring;

use scoring::{smooth, KneeFamily, Smooth};

/// The machines of the smooth families.
const MACHINES: [(&str, &str); 4] = [
    ("2x4", "package:2 numa:1 core:4 pu:1"),
    ("4x10", "package:4 numa:1 core:10 pu:1"),
    ("2x(2x16)", "package:2 numa:2 core:16 pu:1"),
    ("1x16x2", "package:1 numa:1 core:16 pu:2"),
];
const M2X22: (&str, &str) = ("2x22", "package:2 numa:1 core:22 pu:1");

fn smooth_families() -> Vec<Smooth> {
    let richards = |p: f64| (1.0 + (-(p - 14.0) / 6.0).exp()).powf(-2.0);
    let gompertz = |p: f64| (-4.0 * (-(p.sqrt() - 1.0) / 1.5).exp()).exp();
    let amdahl = |s: f64, p: f64| 1.0 / (s + (1.0 - s) / p);
    vec![
        smooth(
            "amdahl with a cubic overhead",
            "1 / (0.02 + 0.98/p + 2e-7 p^3)",
            true,
            Box::new(|p: f64| 1.0 / (0.02 + 0.98 / p + 2e-7 * p.powi(3))),
        ),
        smooth(
            "superlinear start under a soft ceiling",
            "p^1.15 / (1 + (p/40)^1.5)^(1/1.5) * (1 + (1/40)^1.5)^(1/1.5)",
            true,
            Box::new(|p: f64| {
                let c = |p: f64| p.powf(1.15) / (1.0 + (p / 40.0).powf(1.5)).powf(1.0 / 1.5);
                c(p) / c(1.0)
            }),
        ),
        smooth(
            "richards growth",
            "1 + 30 (R(p) - R(1)) / (1 - R(1)), R = (1 + exp(-(p - 14)/6))^-2",
            true,
            Box::new(move |p: f64| {
                1.0 + 30.0 * (richards(p) - richards(1.0)) / (1.0 - richards(1.0))
            }),
        ),
        smooth(
            "harmonic saturation",
            "1 + 25 (1 - 1/(1 + (p - 1)/10))",
            true,
            Box::new(|p: f64| 1.0 + 25.0 * (1.0 - 1.0 / (1.0 + (p - 1.0) / 10.0))),
        ),
        smooth(
            "usl with its peak beyond the range",
            "p / (1 + 0.03 (p - 1) + 0.00005 p (p - 1))",
            true,
            Box::new(|p: f64| p / (1.0 + 0.03 * (p - 1.0) + 0.00005 * p * (p - 1.0))),
        ),
        smooth(
            "amdahl with a serial part growing with ln p",
            "1 / (s + (1 - s)/p), s = 0.01 (1 + ln p)",
            true,
            Box::new(move |p: f64| amdahl(0.01 * (1.0 + p.ln()), p)),
        ),
        smooth(
            "blend of two amdahl curves",
            "0.7 A(0.01) + 0.3 A(0.1)",
            true,
            Box::new(move |p: f64| 0.7 * amdahl(0.01, p) + 0.3 * amdahl(0.1, p)),
        ),
        smooth(
            "gompertz in sqrt p",
            "1 + 20 (G(p) - G(1)) / (1 - G(1)), G = exp(-4 exp(-(sqrt p - 1)/1.5))",
            true,
            Box::new(move |p: f64| {
                1.0 + 20.0 * (gompertz(p) - gompertz(1.0)) / (1.0 - gompertz(1.0))
            }),
        ),
    ]
}

fn knee_families() -> Vec<KneeFamily> {
    let k = KneeFamily::held_out;
    let [_, m4x10, m2x2x16, m1x16x2] = MACHINES;
    vec![
        k("package knee 0.6 at 22", M2X22, vec![(22, 0.6)], 0.0),
        k("NUMA knee 0.7 at 16", m2x2x16, vec![(16, 0.7)], 0.0),
        k("SMT knee 0.3 at 16", m1x16x2, vec![(16, 0.3)], 0.0),
        k(
            "NUMA knee 0.8 at 16, package knee 0.6 at 32",
            m2x2x16,
            vec![(16, 0.8), (32, 0.6)],
            0.0,
        ),
        k(
            "bandwidth cap at 25 (no boundary)",
            m4x10,
            vec![(25, 0.05)],
            0.0,
        ),
        k(
            "retrograde after the package (-0.25)",
            m4x10,
            vec![(20, -0.25)],
            0.0,
        ),
        k(
            "package knee 0.5 at 10 on Amdahl s=0.01",
            m4x10,
            vec![(10, 0.5)],
            0.01,
        ),
    ]
}

/// Prints the v9 smooth families' table (docs/ANALYSIS.md, "The fifth round")
/// and holds what every curve must satisfy.
#[test]
fn held_out_v9() {
    scoring::held_out_smooth("held out v9", &smooth_families(), &MACHINES, 15000);
}

/// The knee families of the set, beside the smooth ones.
#[test]
fn held_out_v9_knees() {
    scoring::held_out_knees("held out v9", &knee_families(), 15000);
}
