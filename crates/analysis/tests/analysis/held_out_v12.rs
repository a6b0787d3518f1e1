//! Held-out set v12 (issue 32, seventh round, second change): written before
//! that change (a knee's stated change of slope held to the slopes its
//! neighbouring points show), committed unrun, and run once with it: the clean
//! evidence for it. Shapes no other set holds: a saturation of the form
//! 1 - (1 + p/8) exp(-p/8), a square-root law with an offset, Amdahl with a
//! cube-root overhead, an efficiency decaying as 1 / (1 + (p/30)^1.5), a
//! logarithm of 1 + p/4, an efficiency decaying as a Weibull curve, Amdahl whose
//! serial part grows with ln p, and a power law under a gentle cap; machines no
//! other set uses (2 x 11 x 2, three packages of two NUMA nodes of 4, one
//! package of 28, 6 x 5). Seeds 21000 and up (22000 and up as held out), used
//! nowhere else.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use crate::scoring;

use scoring::{over_one, smooth, KneeFamily, Smooth};

/// The machines of the smooth families.
const MACHINES: [(&str, &str); 4] = [
    ("2x11x2", "package:2 numa:1 core:11 pu:2"),
    ("3x(2x4)", "package:3 numa:2 core:4 pu:1"),
    ("1x28", "package:1 numa:1 core:28 pu:1"),
    ("6x5", "package:6 numa:1 core:5 pu:1"),
];

fn smooth_families() -> Vec<Smooth> {
    vec![
        smooth(
            "saturation 1 - (1 + p/8) exp(-p/8)",
            "1 + 22 (1 - (1 + p/8) exp(-p/8)), over its value at 1",
            true,
            over_one(|p| 1.0 + 22.0 * (1.0 - (1.0 + p / 8.0) * (-p / 8.0).exp())),
        ),
        smooth(
            "square-root law with an offset",
            "(5 sqrt(p) - 1) / 4",
            true,
            Box::new(|p: f64| (5.0 * p.sqrt() - 1.0) / 4.0),
        ),
        smooth(
            "amdahl with a cube-root overhead",
            "1 / (0.01 + 0.99/p + 0.01 p^(1/3)), over its value at 1",
            true,
            over_one(|p| 1.0 / (0.01 + 0.99 / p + 0.01 * p.cbrt())),
        ),
        smooth(
            "efficiency decaying as 1 / (1 + (p/30)^1.5)",
            "p / (1 + (p/30)^1.5), over its value at 1",
            true,
            over_one(|p| p / (1.0 + (p / 30.0).powf(1.5))),
        ),
        smooth(
            "logarithm of 1 + p/4",
            "ln(1 + p/4) / ln(1.25)",
            true,
            over_one(|p| (1.0 + p / 4.0).ln()),
        ),
        smooth(
            "efficiency decaying as a weibull curve",
            "p exp(-(p/50)^1.5), over its value at 1",
            true,
            over_one(|p| p * (-(p / 50.0).powf(1.5)).exp()),
        ),
        smooth(
            "amdahl with a serial part growing with ln p",
            "1 / (s + (1 - s)/p), s = 0.01 (1 + ln p), over its value at 1",
            true,
            over_one(|p| {
                let s = 0.01 * (1.0 + p.ln());
                1.0 / (s + (1.0 - s) / p)
            }),
        ),
        smooth(
            "power law under a gentle cap",
            "p^0.9 / (1 + p/200), over its value at 1",
            true,
            over_one(|p| p.powf(0.9) / (1.0 + p / 200.0)),
        ),
    ]
}

fn knee_families() -> Vec<KneeFamily> {
    let k = KneeFamily::held_out;
    let [m2x11x2, m3x2x4, m1x28, m6x5] = MACHINES;
    vec![
        k("package knee 0.6 at 11", m2x11x2, vec![(11, 0.6)], 0.0),
        k("SMT knee 0.5 at 22", m2x11x2, vec![(22, 0.5)], 0.0),
        k("NUMA knee 0.55 at 4", m3x2x4, vec![(4, 0.55)], 0.0),
        k("package knee 0.65 at 8", m3x2x4, vec![(8, 0.65)], 0.0),
        k(
            "bandwidth cap at 17 (no boundary)",
            m1x28,
            vec![(17, 0.08)],
            0.0,
        ),
        k("package knee 0.5 at 5", m6x5, vec![(5, 0.5)], 0.0),
        k("retrograde after 15 (-0.25)", m6x5, vec![(15, -0.25)], 0.0),
        k("steepening at 10 (1.5)", m6x5, vec![(10, 1.5)], 0.0),
        k(
            "package knee 0.6 at 11 on Amdahl s=0.01",
            m2x11x2,
            vec![(11, 0.6)],
            0.01,
        ),
    ]
}

/// Prints the v12 smooth families' table (docs/ANALYSIS.md, "The seventh round")
/// and holds what every curve must satisfy.
#[test]
fn held_out_v12() {
    scoring::held_out_smooth("held out v12", &smooth_families(), &MACHINES, 21000);
}

/// The knee families of the set, beside the smooth ones.
#[test]
fn held_out_v12_knees() {
    scoring::held_out_knees("held out v12", &knee_families(), 21000);
}
