//! The mechanism model's equation. Per node n, the threads placed there deliver
//!
//!   C_n = f_n * sum over threads of c_i,  c_i = 1 alone on its core,
//!                                          (1 + y) / k for k threads sharing a core,
//!   f_n = 1 on the home node, 1 / (1 + (1/r - 1) g_n) elsewhere,
//!   D_n = min(C_n, beta_n / m)            (m = 1/b: traffic per unit of work),
//!
//! and the time of a unit of work is
//!
//!   t(p) = s + (1 - s) / sum_n D_n + kappa (p - 1),
//!
//! so the speedup is t(1) / t(p). s is the serial part, kappa the synchronisation
//! cost per added thread, r the rate of a thread whose shared data is on another
//! node (at the calibration's remote distance), b the bandwidth one node delivers
//! in one-thread demands (m = 1/b, 0 for no cap), y the SMT yield per core; beta_n
//! is the node's bandwidth relative to the calibration's and g_n the remote
//! distance relative to the calibration's (1 when unknown).

use serde::{Deserialize, Serialize};

use super::layout::{Layout, NodeLoad};

/// The fitted parameters (dimensionless; the scale is fitted beside them).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub serial: f64,
    pub sync: f64,
    pub remote: f64,
    /// 1/b: the share of one node's bandwidth one thread's traffic takes (0: none).
    pub inv_bandwidth: f64,
    pub smt_yield: f64,
}

impl Params {
    /// No mechanism at all: linear scaling with the cores.
    pub const NEUTRAL: Params = Params {
        serial: 0.0,
        sync: 0.0,
        remote: 1.0,
        inv_bandwidth: 0.0,
        smt_yield: 1.0,
    };
}

/// What the target changes against the calibration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Scales {
    /// A node's bandwidth on the target over a node's on the calibration machine.
    pub bandwidth: f64,
    /// The calibration's remote SLIT distance (None when unknown or not measured).
    pub cal_distance: Option<u32>,
    /// How the remote penalty grows with distance: ((d - 10)/(d_cal - 10))^a.
    pub distance_power: f64,
}

impl Default for Scales {
    fn default() -> Scales {
        Scales {
            bandwidth: 1.0,
            cal_distance: None,
            distance_power: 0.5,
        }
    }
}

impl Scales {
    /// g_n: the remote penalty's scale at `distance` against the calibration's.
    pub fn remote_scale(&self, distance: Option<u32>) -> f64 {
        match (distance, self.cal_distance) {
            (Some(d), Some(c)) if c > 10 && d > 10 => {
                ((d - 10) as f64 / (c - 10) as f64).powf(self.distance_power)
            }
            _ => 1.0,
        }
    }
}

fn node_rate(p: &Params, s: &Scales, n: &NodeLoad) -> f64 {
    let locality = if n.home {
        1.0
    } else {
        1.0 / (1.0 + (1.0 / p.remote - 1.0) * s.remote_scale(n.distance))
    };
    let compute: f64 = n
        .sharing
        .iter()
        .map(|&(k, t)| {
            let per = if k > 1 {
                (1.0 + p.smt_yield) / k as f64
            } else {
                1.0
            };
            per * t as f64
        })
        .sum();
    let demand = compute * locality;
    if p.inv_bandwidth > 0.0 {
        demand.min(s.bandwidth / p.inv_bandwidth)
    } else {
        demand
    }
}

/// t(p): the time of a unit of work, in one-thread compute times.
pub fn time(p: &Params, s: &Scales, l: &Layout) -> f64 {
    let rate: f64 = l.nodes.iter().map(|n| node_rate(p, s, n)).sum();
    p.serial + (1.0 - p.serial) / rate.max(1e-12) + p.sync * l.threads.saturating_sub(1) as f64
}

/// The speedup of `l` over `one` (the one-thread layout).
pub fn speedup(p: &Params, s: &Scales, one: &Layout, l: &Layout) -> f64 {
    time(p, s, one) / time(p, s, l)
}

/// A mechanism that limits the speedup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mechanism {
    Serial,
    Sync,
    Bandwidth,
    Remote,
    Smt,
    /// None costs more than 2%: the speedup follows the cores.
    Compute,
}

impl Mechanism {
    pub fn describe(&self) -> &'static str {
        match self {
            Mechanism::Serial => "the serial part",
            Mechanism::Sync => "synchronisation cost growing with the threads",
            Mechanism::Bandwidth => "memory bandwidth per node",
            Mechanism::Remote => "remote memory access",
            Mechanism::Smt => "SMT siblings sharing a core",
            Mechanism::Compute => "nothing but the cores (compute-bound)",
        }
    }
}

/// Which mechanism, removed, would raise the speedup at `l` the most (each one
/// set to its neutral value in turn), and by what factor.
pub fn limit(p: &Params, s: &Scales, one: &Layout, l: &Layout) -> (Mechanism, f64) {
    let base = speedup(p, s, one, l);
    let n = Params::NEUTRAL;
    let variants = [
        (Mechanism::Serial, Params { serial: 0.0, ..*p }),
        (Mechanism::Sync, Params { sync: 0.0, ..*p }),
        (
            Mechanism::Bandwidth,
            Params {
                inv_bandwidth: n.inv_bandwidth,
                ..*p
            },
        ),
        (Mechanism::Remote, Params { remote: 1.0, ..*p }),
        (
            Mechanism::Smt,
            Params {
                smt_yield: n.smt_yield,
                ..*p
            },
        ),
    ];
    let best = variants
        .iter()
        .map(|(m, q)| (*m, speedup(q, s, one, l) / base))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    match best {
        Some((m, gain)) if gain > 1.02 => (m, gain),
        _ => (Mechanism::Compute, 1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::layout::layout;
    use scalescope_place::Strategy;
    use scalescope_topo::Source;

    #[test]
    fn the_equation_matches_hand_computed_values() {
        let t = Source::Synthetic("package:2 numa:1 core:4 pu:2".into())
            .load()
            .unwrap_or_else(|e| panic!("{e}"));
        let l = |n| layout(&t, &Strategy::CoresFirst, n).unwrap_or_else(|| panic!("layout"));
        let p = Params {
            serial: 0.1,
            sync: 0.0,
            remote: 0.5,
            inv_bandwidth: 1.0 / 3.0,
            smt_yield: 0.2,
        };
        let s = Scales::default();
        // 6 threads: 4 on node 0 capped at 3, 2 remote at 0.5 each = 1.
        let expect = (0.1 + 0.9) / (0.1 + 0.9 / 4.0);
        assert!((speedup(&p, &s, &l(1), &l(6)) - expect).abs() < 1e-12);
        // 16 threads: each node 8 x 0.6 = 4.8, node 0 capped at 3, node 1 2.4 -> 5.4.
        let expect = 1.0 / (0.1 + 0.9 / 5.4);
        assert!((speedup(&p, &s, &l(1), &l(16)) - expect).abs() < 1e-12);
        assert_eq!(limit(&p, &s, &l(1), &l(16)).0, Mechanism::Serial);
        let q = Params { serial: 0.0, ..p };
        assert_eq!(limit(&q, &s, &l(1), &l(4)).0, Mechanism::Bandwidth);
        assert_eq!(
            limit(&Params::NEUTRAL, &s, &l(1), &l(8)).0,
            Mechanism::Compute
        );
    }
}
