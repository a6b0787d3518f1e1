//! Held-out set v11 (issue 32, seventh round): written before the round's change
//! (a machine boundary kept among a knee's plausible places unless the points
//! reject it at 99%, not 95%), committed unrun, and run once with the round's
//! final code: the clean evidence for it. Shapes no other set holds: a
//! hyperbolic saturation with a linear tail, Amdahl with an exponential
//! overhead, a log-normal rise in p, a rational saturation, a power law whose
//! exponent drifts down, Gustafson's line less a log p overhead, Amdahl with an
//! overhead in (ln p)^2, and an efficiency falling as a Hill curve; machines no
//! other set uses (5 x 6, 2 x 9 x 2, four packages of two NUMA nodes of 5, one
//! package of 20 x 2). Seeds 19000 and up (20000 and up as held out), used
//! nowhere else.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use crate::power::normal_cdf;
use crate::scoring;

use scoring::{smooth, KneeFamily, Smooth};

/// The machines of the smooth families.
const MACHINES: [(&str, &str); 4] = [
    ("5x6", "package:5 numa:1 core:6 pu:1"),
    ("2x9x2", "package:2 numa:1 core:9 pu:2"),
    ("4x(2x5)", "package:4 numa:2 core:5 pu:1"),
    ("1x20x2", "package:1 numa:1 core:20 pu:2"),
];

fn smooth_families() -> Vec<Smooth> {
    let hyper = |p: f64| 25.0 * p / (p + 10.0) + 0.1 * p;
    vec![
        smooth(
            "hyperbolic saturation with a linear tail",
            "(25 p / (p + 10) + 0.1 p), over its value at 1",
            true,
            Box::new(move |p: f64| hyper(p) / hyper(1.0)),
        ),
        smooth(
            "amdahl with an exponential overhead",
            "1 / (0.015 + 0.985/p + 0.002 (exp(p/25) - 1))",
            true,
            Box::new(|p: f64| 1.0 / (0.015 + 0.985 / p + 0.002 * ((p / 25.0).exp() - 1.0))),
        ),
        smooth(
            "log-normal rise",
            "1 + 26 Phi(ln(p/14) / 0.8), less its value at 1",
            true,
            Box::new(|p: f64| {
                let g = |p: f64| normal_cdf((p / 14.0).ln() / 0.8);
                1.0 + 26.0 * (g(p) - g(1.0))
            }),
        ),
        smooth(
            "rational saturation",
            "(p + 0.05 p^2) / (1 + 0.004 p^2), over its value at 1",
            true,
            Box::new(|p: f64| {
                let g = |p: f64| (p + 0.05 * p * p) / (1.0 + 0.004 * p * p);
                g(p) / g(1.0)
            }),
        ),
        smooth(
            "power law with a drifting exponent",
            "p^(0.95 - 0.1 ln p / ln 40)",
            true,
            Box::new(|p: f64| p.powf(0.95 - 0.1 * p.ln() / 40f64.ln())),
        ),
        smooth(
            "gustafson less a log overhead",
            "p - 0.9 ln p",
            true,
            Box::new(|p: f64| p - 0.9 * p.ln()),
        ),
        smooth(
            "amdahl with a (ln p)^2 overhead",
            "1 / (0.005 + 0.995/p + 0.0015 (ln p)^2)",
            true,
            Box::new(|p: f64| 1.0 / (0.005 + 0.995 / p + 0.0015 * p.ln().powi(2))),
        ),
        smooth(
            "efficiency falling as a hill curve",
            "p (0.55 + 0.45 / (1 + (p/16)^2)), over its value at 1",
            true,
            Box::new(|p: f64| {
                let g = |p: f64| p * (0.55 + 0.45 / (1.0 + (p / 16.0).powi(2)));
                g(p) / g(1.0)
            }),
        ),
    ]
}

fn knee_families() -> Vec<KneeFamily> {
    let k = KneeFamily::held_out;
    let [m5x6, m2x9x2, m4x2x5, m1x20x2] = MACHINES;
    vec![
        k("package knee 0.5 at 6", m5x6, vec![(6, 0.5)], 0.0),
        k("SMT knee 0.35 at 18", m2x9x2, vec![(18, 0.35)], 0.0),
        k("NUMA knee 0.6 at 5", m4x2x5, vec![(5, 0.6)], 0.0),
        k("package knee 0.7 at 10", m4x2x5, vec![(10, 0.7)], 0.0),
        k(
            "bandwidth cap at 13 (no boundary)",
            m1x20x2,
            vec![(13, 0.08)],
            0.0,
        ),
        k("steepening at 12 (1.5)", m5x6, vec![(12, 1.5)], 0.0),
        k(
            "package knee 0.55 at 9 on Amdahl s=0.015",
            m2x9x2,
            vec![(9, 0.55)],
            0.015,
        ),
        k("retrograde after 24 (-0.3)", m5x6, vec![(24, -0.3)], 0.0),
    ]
}

/// Prints the v11 smooth families' table (docs/ANALYSIS.md, "The seventh round")
/// and holds what every curve must satisfy.
#[test]
fn held_out_v11() {
    scoring::held_out_smooth("held out v11", &smooth_families(), &MACHINES, 19000);
}

/// The knee families of the set, beside the smooth ones.
#[test]
fn held_out_v11_knees() {
    scoring::held_out_knees("held out v11", &knee_families(), 19000);
}
