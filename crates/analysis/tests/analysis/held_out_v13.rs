//! Held-out set v13 (issue 32, eighth round): written before the round's work,
//! committed unrun, and run once with the detector as the seventh round left it
//! (the eighth changed nothing; docs/ANALYSIS.md, "The eighth round"): clean
//! evidence of where it stands. Shapes no other set holds: Amdahl with a cosh overhead, an
//! efficiency falling as 1 / sqrt(1 + p/6), a power law times a slowly rising
//! log, Amdahl with a p^1.5 overhead, a soft cap of order three, a generalised
//! harmonic sum, a Hill rise with a linear tail, and Amdahl whose serial part
//! decays exponentially; machines no other set uses (2 x 13 x 2, two packages
//! of two NUMA nodes of 7, one package of 36, 4 x 7). The knee families hold
//! "Amdahl's curve, then a straight line" on two new machines (the shape the
//! fifth to seventh rounds missed most). Seeds 23000 and up (24000 and up as
//! held out), used nowhere else.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use crate::scoring;

use scoring::{from_time, over_one, smooth, KneeFamily, Smooth};

/// The machines of the smooth families.
const MACHINES: [(&str, &str); 4] = [
    ("2x13x2", "package:2 numa:1 core:13 pu:2"),
    ("2x(2x7)", "package:2 numa:2 core:7 pu:1"),
    ("1x36", "package:1 numa:1 core:36 pu:1"),
    ("4x7", "package:4 numa:1 core:7 pu:1"),
];

fn smooth_families() -> Vec<Smooth> {
    vec![
        smooth(
            "amdahl with a cosh overhead",
            "t = 0.02 + 0.98/p + 0.01 (cosh(p/25) - 1), speedup t(1)/t(p)",
            true,
            from_time(|p| 0.02 + 0.98 / p + 0.01 * ((p / 25.0).cosh() - 1.0)),
        ),
        smooth(
            "efficiency falling as 1 / sqrt(1 + p/6)",
            "p / sqrt(1 + p/6), over its value at 1",
            true,
            over_one(|p| p / (1.0 + p / 6.0).sqrt()),
        ),
        smooth(
            "power law times a slowly rising log",
            "p^0.8 (1 + 0.1 ln p)",
            true,
            Box::new(|p: f64| p.powf(0.8) * (1.0 + 0.1 * p.ln())),
        ),
        smooth(
            "amdahl with a p^1.5 overhead",
            "t = 0.01 + 0.99/p + 0.0002 p^1.5, speedup t(1)/t(p)",
            true,
            from_time(|p| 0.01 + 0.99 / p + 0.0002 * p.powf(1.5)),
        ),
        smooth(
            "soft cap of order three",
            "p / (1 + (p/25)^3)^(1/3), over its value at 1",
            true,
            over_one(|p| p / (1.0 + (p / 25.0).powi(3)).cbrt()),
        ),
        smooth(
            "generalised harmonic sum",
            "the sum of k^-0.25 over k = 1..p, linear between integers",
            true,
            Box::new(|p: f64| {
                let n = p.floor().max(1.0);
                let whole: f64 = (1..=n as usize).map(|k| (k as f64).powf(-0.25)).sum();
                whole + (p - n) * (n + 1.0).powf(-0.25)
            }),
        ),
        smooth(
            "hill rise with a linear tail",
            "1 + 16 / (1 + (12/p)^2) + 0.15 p, over its value at 1",
            true,
            over_one(|p| 1.0 + 16.0 / (1.0 + (12.0 / p).powi(2)) + 0.15 * p),
        ),
        smooth(
            "amdahl whose serial part decays exponentially",
            "1 / (s + (1 - s)/p), s = 0.005 + 0.03 exp(-p/8), over its value at 1",
            true,
            over_one(|p| {
                let s = 0.005 + 0.03 * (-p / 8.0).exp();
                1.0 / (s + (1.0 - s) / p)
            }),
        ),
    ]
}

fn knee_families() -> Vec<KneeFamily> {
    let k = KneeFamily::held_out;
    let [m2x13x2, m2x2x7, m1x36, m4x7] = MACHINES;
    vec![
        k(
            "package knee 0.55 at 13 on Amdahl s=0.02",
            m2x13x2,
            vec![(13, 0.55)],
            0.02,
        ),
        k("SMT knee 0.45 at 26", m2x13x2, vec![(26, 0.45)], 0.0),
        k("NUMA knee 0.6 at 7", m2x2x7, vec![(7, 0.6)], 0.0),
        k(
            "package knee 0.6 at 14 on Amdahl s=0.005",
            m2x2x7,
            vec![(14, 0.6)],
            0.005,
        ),
        k(
            "bandwidth cap at 20 (no boundary)",
            m1x36,
            vec![(20, 0.1)],
            0.0,
        ),
        k("retrograde after 24 (-0.2)", m1x36, vec![(24, -0.2)], 0.0),
        k("package knee 0.5 at 7", m4x7, vec![(7, 0.5)], 0.0),
        k(
            "package knees 0.6 at 7 and 0.6 at 14",
            m4x7,
            vec![(7, 0.6), (14, 0.6)],
            0.0,
        ),
    ]
}

/// Prints the v13 smooth families' table (docs/ANALYSIS.md, "The eighth round")
/// and holds what every curve must satisfy.
#[test]
fn held_out_v13() {
    scoring::held_out_smooth("held out v13", &smooth_families(), &MACHINES, 23000);
}

/// The knee families of the set, beside the smooth ones.
#[test]
fn held_out_v13_knees() {
    scoring::held_out_knees("held out v13", &knee_families(), 23000);
}
