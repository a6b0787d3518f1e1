//! Held-out set v16 (issue 32, ninth round): written before the round's change
//! to the default thread design (more points on a long span without a boundary:
//! powers of two where the next point is more than twice as far, and no gap
//! wider than an eighth of the machine), committed unrun, and run once with it:
//! the clean evidence for it. Shapes no other set holds: a line with a gaussian
//! cut-off, an efficiency falling as a hyperbolic secant, Amdahl whose serial
//! part rises as tanh(p/20), Amdahl with a p^0.8 overhead, a logistic in
//! sqrt(p), a power law 0.9 under a hyperbolic cap, an efficiency falling as
//! 1 / (1 + 0.02 p^1.2), and Amdahl whose serial part shrinks as 1 / (1 + ln p);
//! machines no other set uses (one package of 60, one package of 30, 2 x 21,
//! one package of 12 cores with two threads each). Most of its knees lie inside
//! a long span with no boundary on a one-package machine, where the design
//! before gave a point every 10 to 25 threads: a bandwidth cap at 9 and at 40,
//! a flattening at 18, a steepening at 14. Seeds 29000 and up (30000 and up as
//! held out), used nowhere else.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use crate::scoring;

use scoring::{from_time, over_one, smooth, KneeFamily, Smooth};

/// The machines of the smooth families.
const MACHINES: [(&str, &str); 4] = [
    ("1x60", "package:1 numa:1 core:60 pu:1"),
    ("1x30", "package:1 numa:1 core:30 pu:1"),
    ("2x21", "package:2 numa:1 core:21 pu:1"),
    ("1x12x2", "package:1 numa:1 core:12 pu:2"),
];

fn smooth_families() -> Vec<Smooth> {
    vec![
        smooth(
            "a line with a gaussian cut-off",
            "p exp(-(p/90)^2), over its value at 1",
            true,
            over_one(|p| p * (-(p / 90.0).powi(2)).exp()),
        ),
        smooth(
            "efficiency falling as a hyperbolic secant",
            "p sech(p/50), over its value at 1",
            true,
            over_one(|p| p / (p / 50.0).cosh()),
        ),
        smooth(
            "amdahl whose serial part rises as tanh(p/20)",
            "s = 0.005 + 0.03 tanh(p/20), 1 / (s + (1 - s)/p), over its value at 1",
            true,
            over_one(|p| {
                let s = 0.005 + 0.03 * (p / 20.0).tanh();
                1.0 / (s + (1.0 - s) / p)
            }),
        ),
        smooth(
            "amdahl with a p^0.8 overhead",
            "t = 0.01 + 0.99/p + 0.003 p^0.8, speedup t(1)/t(p)",
            true,
            from_time(|p| 0.01 + 0.99 / p + 0.003 * p.powf(0.8)),
        ),
        smooth(
            "logistic in sqrt(p)",
            "40 / (1 + exp(-(sqrt(p) - 4)/1.5)), over its value at 1",
            true,
            over_one(|p| 40.0 / (1.0 + (-(p.sqrt() - 4.0) / 1.5).exp())),
        ),
        smooth(
            "power law 0.9 under a hyperbolic cap",
            "p^0.9 / (1 + p/80), over its value at 1",
            true,
            over_one(|p| p.powf(0.9) / (1.0 + p / 80.0)),
        ),
        smooth(
            "efficiency falling as 1 / (1 + 0.02 p^1.2)",
            "p / (1 + 0.02 p^1.2), over its value at 1",
            true,
            over_one(|p| p / (1.0 + 0.02 * p.powf(1.2))),
        ),
        smooth(
            "amdahl whose serial part shrinks as 1 / (1 + ln p)",
            "t = 0.005 + 0.02/(1 + ln p) + 0.975/p, speedup t(1)/t(p)",
            true,
            from_time(|p| 0.005 + 0.02 / (1.0 + p.ln()) + 0.975 / p),
        ),
    ]
}

fn knee_families() -> Vec<KneeFamily> {
    let k = KneeFamily::held_out;
    let [m1x60, m1x30, m2x21, m1x12x2] = MACHINES;
    vec![
        k(
            "bandwidth cap at 9 (no boundary)",
            m1x60,
            vec![(9, 0.1)],
            0.0,
        ),
        k(
            "bandwidth cap at 40 (no boundary)",
            m1x60,
            vec![(40, 0.1)],
            0.0,
        ),
        k(
            "flattening 0.5 at 18 (no boundary)",
            m1x30,
            vec![(18, 0.5)],
            0.0,
        ),
        k("steepening at 14 (1.5)", m1x30, vec![(14, 1.5)], 0.0),
        k("package knee 0.6 at 21", m2x21, vec![(21, 0.6)], 0.0),
        k(
            "package knee 0.5 at 21 on Amdahl s=0.01",
            m2x21,
            vec![(21, 0.5)],
            0.01,
        ),
        k("SMT knee 0.3 at 12", m1x12x2, vec![(12, 0.3)], 0.0),
        k(
            "bandwidth cap at 6 (no boundary)",
            m1x12x2,
            vec![(6, 0.2)],
            0.0,
        ),
    ]
}

/// Prints the v16 smooth families' table (docs/ANALYSIS.md, "The ninth round")
/// and holds what every curve must satisfy.
#[test]
fn held_out_v16() {
    scoring::held_out_smooth("held out v16", &smooth_families(), &MACHINES, 29000);
}

/// The knee families of the set, beside the smooth ones.
#[test]
fn held_out_v16_knees() {
    scoring::held_out_knees("held out v16", &knee_families(), 29000);
}
