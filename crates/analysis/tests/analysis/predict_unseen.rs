//! Predictions from one socket, on curves the model was not built from and the
//! method was not tuned on. Each family is generated from its own law (not the
//! mechanism model's equation): Amdahl's law, the USL, memory bandwidth that
//! saturates smoothly per node (data partitioned over the nodes) or on the first
//! node alone (shared data), and a remote penalty. Each is swept on the first
//! socket of a 4 x 16-core machine (1..16 cores, 3 repetitions at 3% CV, or one)
//! and asked about 20..64 cores on four. What is checked: the measured (noise-free
//! truth) performance lies inside the 95% band, and the central prediction's
//! error. Printed by `cargo test -p scalescope-analysis --test analysis predict_unseen --
//! --nocapture`; docs/ANALYSIS.md records the table.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use scalescope_analysis::predict::calibrate::CalPoint;
use scalescope_analysis::predict::leave_top_out;
use scalescope_analysis::predict::model::{layout, Layout};
use scalescope_place::Strategy;
use scalescope_topo::{Source, Topology};

const MACHINE: &str = "package:4 numa:1 core:16";
const CALIBRATION: [usize; 7] = [1, 2, 4, 6, 8, 12, 16];
const TARGET: [usize; 5] = [20, 24, 32, 48, 64];

/// A law of scaling: the speedup of a cores-first layout.
#[derive(Debug, Clone, Copy)]
enum Law {
    Amdahl {
        serial: f64,
    },
    Usl {
        sigma: f64,
        kappa: f64,
    },
    /// Each node's memory serves its own threads, saturating as [`Saturation`].
    PartitionedBandwidth {
        b: f64,
        sat: Saturation,
        remote: f64,
    },
    /// Every thread's data on the first node, whose memory serves them all.
    SharedBandwidth {
        b: f64,
        sat: Saturation,
        remote: f64,
    },
    Remote {
        remote: f64,
    },
}

/// How a node's delivered rate approaches its bandwidth b: laws that are not the
/// model's (its caps are the generalised mean of compute and b, and a harmonic sum).
#[derive(Debug, Clone, Copy)]
enum Saturation {
    /// b (1 - exp(-c / b)).
    Exponential,
    /// b tanh(c / b).
    Tanh,
}

fn saturate(c: f64, b: f64, sat: Saturation) -> f64 {
    match sat {
        Saturation::Exponential => b * (1.0 - (-c / b).exp()),
        Saturation::Tanh => b * (c / b).tanh(),
    }
}

/// Per node: (threads, on the first thread's node).
fn nodes(l: &Layout) -> Vec<(f64, bool)> {
    l.nodes
        .iter()
        .map(|n| (n.threads() as f64, n.home))
        .collect()
}

fn rate(law: Law, l: &Layout) -> f64 {
    let p = l.threads as f64;
    let local = |remote: f64| -> Vec<f64> {
        nodes(l)
            .iter()
            .map(|(n, home)| if *home { *n } else { n * remote })
            .collect()
    };
    match law {
        Law::Amdahl { serial } => 1.0 / (serial + (1.0 - serial) / p),
        Law::Usl { sigma, kappa } => p / (1.0 + sigma * (p - 1.0) + kappa * p * (p - 1.0)),
        Law::PartitionedBandwidth { b, sat, remote } => {
            local(remote).iter().map(|c| saturate(*c, b, sat)).sum()
        }
        Law::SharedBandwidth { b, sat, remote } => saturate(local(remote).iter().sum(), b, sat),
        Law::Remote { remote } => local(remote).iter().sum(),
    }
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.next().max(1e-12), self.next());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// The calibration sweep (noisy) and the truth at the target counts.
fn curve(topo: &Topology, law: Law, reps: usize, seed: u64) -> Vec<CalPoint> {
    let mut rng = Rng(seed);
    let sigma = (1.0f64 + 0.03 * 0.03).ln().sqrt();
    let one = layout(topo, &Strategy::CoresFirst, 1).unwrap();
    let base = rate(law, &one);
    let mut out = Vec::new();
    for t in CALIBRATION.iter().chain(&TARGET) {
        let l = layout(topo, &Strategy::CoresFirst, *t).unwrap();
        let truth = rate(law, &l) / base;
        let perfs: Vec<f64> = if *t > 16 {
            vec![truth]
        } else {
            (0..reps)
                .map(|_| truth * (sigma * rng.normal() - sigma * sigma / 2.0).exp())
                .collect()
        };
        out.push(CalPoint {
            placement: Strategy::CoresFirst,
            layout: l,
            wall_secs: perfs.iter().map(|p| 1.0 / p).collect(),
            perfs,
        });
    }
    out
}

const FAMILIES: [(&str, Law); 10] = [
    ("amdahl 2%", Law::Amdahl { serial: 0.02 }),
    ("amdahl 6%", Law::Amdahl { serial: 0.06 }),
    (
        "usl 2%, 0.0005",
        Law::Usl {
            sigma: 0.02,
            kappa: 0.0005,
        },
    ),
    (
        "usl 5%, 0.0002",
        Law::Usl {
            sigma: 0.05,
            kappa: 0.0002,
        },
    ),
    (
        "partitioned bw 8, exp",
        Law::PartitionedBandwidth {
            b: 8.0,
            sat: Saturation::Exponential,
            remote: 0.9,
        },
    ),
    (
        "partitioned bw 12, tanh",
        Law::PartitionedBandwidth {
            b: 12.0,
            sat: Saturation::Tanh,
            remote: 1.0,
        },
    ),
    (
        "partitioned bw 20, exp",
        Law::PartitionedBandwidth {
            b: 20.0,
            sat: Saturation::Exponential,
            remote: 0.8,
        },
    ),
    (
        "shared bw 10, tanh",
        Law::SharedBandwidth {
            b: 10.0,
            sat: Saturation::Tanh,
            remote: 0.8,
        },
    ),
    (
        "shared bw 14, exp",
        Law::SharedBandwidth {
            b: 14.0,
            sat: Saturation::Exponential,
            remote: 0.9,
        },
    ),
    ("remote 0.7", Law::Remote { remote: 0.7 }),
];

#[test]
fn one_socket_predicts_four_inside_the_band_on_unseen_laws() {
    let topo = Source::Synthetic(MACHINE.into()).load().unwrap();
    let (mut inside, mut total, mut errors) = (0usize, 0usize, Vec::new());
    let (mut inside_reps, mut total_reps) = (0usize, 0usize);
    eprintln!("| law | reps | held-out points | inside the 95% band | median error | worst error | explanations |");
    eprintln!("|---|---|---|---|---|---|---|");
    for (name, law) in FAMILIES {
        for reps in [3usize, 1] {
            let (mut ins, mut n, mut errs, mut expl) = (0, 0, Vec::new(), String::new());
            for seed in [11u64, 12] {
                let points = curve(&topo, law, reps, seed);
                let (cal, held) = leave_top_out(&topo, &points, 16, 60).unwrap();
                expl = format!("{}", cal.rivals.len());
                for h in &held {
                    n += 1;
                    ins += usize::from(h.inside_band());
                    errs.push(h.time_error(h.ours));
                    if std::env::var("UNSEEN_VERBOSE").is_ok() {
                        eprintln!(
                            "  {name} {reps} {seed} {}: truth {:.2} ours {:.2} band {:?} each {:?}",
                            h.threads, h.measured, h.ours, h.ours_ci95, h.explanations
                        );
                    }
                }
            }
            errs.sort_by(f64::total_cmp);
            let median = (errs[errs.len() / 2] + errs[(errs.len() - 1) / 2]) / 2.0;
            eprintln!(
                "| {name} | {reps} | {n} | {ins} | {:.1}% | {:.1}% | {expl} |",
                median * 100.0,
                errs.last().unwrap() * 100.0
            );
            inside += ins;
            total += n;
            if reps > 1 {
                inside_reps += ins;
                total_reps += n;
            }
            errors.extend(errs);
        }
    }
    errors.sort_by(f64::total_cmp);
    let median = errors[errors.len() / 2];
    let coverage = inside as f64 / total as f64;
    eprintln!(
        "| all | | {total} | {inside} ({:.0}%) | {:.1}% | | |",
        coverage * 100.0,
        median * 100.0
    );
    // With repetitions, every explanation the noise cannot reject is in the band;
    // with one, only those within 2 AICc of the best, and the band is narrower.
    let with_reps = inside_reps as f64 / total_reps as f64;
    assert!(
        with_reps >= 0.95,
        "3 repetitions: {inside_reps} of {total_reps} inside"
    );
    assert!(coverage >= 0.85, "{inside} of {total} inside the band");
    assert!(median < 0.25, "median error {median:.3}");
}
