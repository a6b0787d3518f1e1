//! Held-out set v17 (issue 32, after the ninth round): written after the
//! round's last change (the thread design's final form) and run once with it,
//! unchanged: clean evidence of where the detector and the design stand, as v13
//! and v14 were for the seventh round. Shapes no other set holds: an efficiency
//! falling after a softplus onset, Amdahl with a (ln p)^1.5 overhead, a sum of
//! two power laws, a soft cap of order 1.5 at 30, Amdahl whose serial part rises
//! smoothly around 20 threads, a line tapered by a cosine, a power law 0.85
//! under a linear falloff, and an efficiency falling as a logistic in p;
//! machines no other set uses (2 x 19, one package of 56, three packages of two
//! NUMA nodes of 6, 2 x 14 x 2). Seeds 31000 and up (32000 and up as held out),
//! used nowhere else.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use crate::scoring;

use scoring::{from_time, over_one, smooth, KneeFamily, Smooth};

/// The machines of the smooth families.
const MACHINES: [(&str, &str); 4] = [
    ("2x19", "package:2 numa:1 core:19 pu:1"),
    ("1x56", "package:1 numa:1 core:56 pu:1"),
    ("3x(2x6)", "package:3 numa:2 core:6 pu:1"),
    ("2x14x2", "package:2 numa:1 core:14 pu:2"),
];

fn smooth_families() -> Vec<Smooth> {
    vec![
        smooth(
            "efficiency falling after a softplus onset",
            "p / (1 + 0.3 ln(1 + exp((p - 20)/8))), over its value at 1",
            true,
            over_one(|p| p / (1.0 + 0.3 * (1.0 + ((p - 20.0) / 8.0).exp()).ln())),
        ),
        smooth(
            "amdahl with a (ln p)^1.5 overhead",
            "t = 0.01 + 0.99/p + 0.004 (ln p)^1.5, speedup t(1)/t(p)",
            true,
            from_time(|p| 0.01 + 0.99 / p + 0.004 * p.ln().powf(1.5)),
        ),
        smooth(
            "sum of two power laws",
            "0.5 p^0.95 + 0.5 p^0.6",
            true,
            Box::new(|p: f64| 0.5 * p.powf(0.95) + 0.5 * p.powf(0.6)),
        ),
        smooth(
            "soft cap of order 1.5 at 30",
            "p / (1 + (p/30)^1.5)^(1/1.5), over its value at 1",
            true,
            over_one(|p| p / (1.0 + (p / 30.0).powf(1.5)).powf(1.0 / 1.5)),
        ),
        smooth(
            "amdahl whose serial part rises smoothly around 20",
            "s = 0.005 + 0.0075 (1 + tanh((p - 20)/10)), 1 / (s + (1 - s)/p), over its value at 1",
            true,
            over_one(|p| {
                let s = 0.005 + 0.0075 * (1.0 + ((p - 20.0) / 10.0).tanh());
                1.0 / (s + (1.0 - s) / p)
            }),
        ),
        smooth(
            "a line tapered by a cosine",
            "p cos(p/100), over its value at 1",
            true,
            over_one(|p| p * (p / 100.0).cos()),
        ),
        smooth(
            "power law 0.85 under a linear falloff",
            "p^0.85 (1 - p/300), over its value at 1",
            true,
            over_one(|p| p.powf(0.85) * (1.0 - p / 300.0)),
        ),
        smooth(
            "efficiency falling as a logistic in p",
            "p (1 - 0.4 / (1 + exp(-(p - 24)/10))), over its value at 1",
            true,
            over_one(|p| p * (1.0 - 0.4 / (1.0 + (-(p - 24.0) / 10.0).exp()))),
        ),
    ]
}

fn knee_families() -> Vec<KneeFamily> {
    let k = KneeFamily::held_out;
    let [m2x19, m1x56, m3x2x6, m2x14x2] = MACHINES;
    vec![
        k("package knee 0.6 at 19", m2x19, vec![(19, 0.6)], 0.0),
        k(
            "package knee 0.55 at 19 on Amdahl s=0.01",
            m2x19,
            vec![(19, 0.55)],
            0.01,
        ),
        k(
            "bandwidth cap at 14 (no boundary)",
            m1x56,
            vec![(14, 0.1)],
            0.0,
        ),
        k("steepening at 28 (1.5)", m1x56, vec![(28, 1.5)], 0.0),
        k("NUMA knee 0.6 at 6", m3x2x6, vec![(6, 0.6)], 0.0),
        k("package knee 0.5 at 12", m3x2x6, vec![(12, 0.5)], 0.0),
        k("SMT knee 0.4 at 28", m2x14x2, vec![(28, 0.4)], 0.0),
        k(
            "package knee 0.6 at 14, then SMT 0.5 at 28",
            m2x14x2,
            vec![(14, 0.6), (28, 0.5)],
            0.0,
        ),
    ]
}

/// Prints the v17 smooth families' table (docs/ANALYSIS.md, "After the ninth
/// round") and holds what every curve must satisfy.
#[test]
fn held_out_v17() {
    scoring::held_out_smooth("held out v17", &smooth_families(), &MACHINES, 31000);
}

/// The knee families of the set, beside the smooth ones.
#[test]
fn held_out_v17_knees() {
    scoring::held_out_knees("held out v17", &knee_families(), 31000);
}
