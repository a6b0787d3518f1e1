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
//!
//! The [`Layout`] it is evaluated on: where a placement's threads land, reduced to
//! what the model needs: per NUMA node, how many threads run there and how many
//! share a physical core with how many others, whether the node is the first
//! thread's (where first-touched shared data lives) and how far it is from it (SLIT
//! distance).

use std::collections::BTreeMap;

use scalescope_place::{place, PlaceRequest, Strategy};
use scalescope_topo::Topology;
use serde::{Deserialize, Serialize};

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

/// The threads of one NUMA node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeLoad {
    /// OS index of the node (None on machines that report no nodes).
    pub node: Option<u32>,
    /// (k, threads): `threads` threads each on a core shared by k of them.
    pub sharing: Vec<(usize, usize)>,
    /// The first thread's node.
    pub home: bool,
    /// SLIT distance from the home node (None when the machine reports none).
    pub distance: Option<u32>,
}

impl NodeLoad {
    pub fn threads(&self) -> usize {
        self.sharing.iter().map(|s| s.1).sum()
    }
}

/// Where `threads` threads of a placement run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Layout {
    pub threads: usize,
    pub nodes: Vec<NodeLoad>,
    pub packages: usize,
}

impl Layout {
    /// Some core runs two or more of the threads.
    pub fn smt(&self) -> bool {
        self.nodes
            .iter()
            .any(|n| n.sharing.iter().any(|(k, t)| *k > 1 && *t > 0))
    }
    /// Threads off the home node.
    pub fn remote_threads(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| !n.home)
            .map(NodeLoad::threads)
            .sum()
    }
    /// The most threads on one node.
    pub fn max_per_node(&self) -> usize {
        self.nodes.iter().map(NodeLoad::threads).max().unwrap_or(0)
    }
    /// The share of the threads that run off the home node: the share of the
    /// first-touched shared data's traffic that goes remote.
    pub fn remote_share(&self) -> f64 {
        self.remote_threads() as f64 / self.threads.max(1) as f64
    }
}

fn distance(topo: &Topology, from: Option<u32>, to: Option<u32>) -> Option<u32> {
    let idx = |id: Option<u32>| topo.numa_nodes.iter().position(|n| Some(n.id) == id);
    let (f, t) = (idx(from)?, idx(to)?);
    topo.numa_nodes.get(f)?.distances.get(t).copied()
}

/// The layout of `threads` threads under `strategy` (None when the machine cannot
/// place them; more threads than PUs wrap around and share).
pub fn layout(topo: &Topology, strategy: &Strategy, threads: usize) -> Option<Layout> {
    layout_of(topo, &placed_pus(topo, strategy, threads)?)
}

/// The PUs `threads` threads of `strategy` get (their first CPU each).
fn placed_pus<'a>(
    topo: &'a Topology,
    strategy: &Strategy,
    threads: usize,
) -> Option<Vec<&'a scalescope_topo::Pu>> {
    let mut req = PlaceRequest::new(strategy.clone(), threads);
    req.oversubscribe = true;
    let p = place(topo, &req).ok()?;
    Some(
        p.first_cpus()
            .into_iter()
            .filter_map(|c| topo.pu(c))
            .collect(),
    )
}

/// The layouts at each of `counts` (None when any cannot be placed). Every
/// strategy but `spread` hands threads out in one order, so one placement of the
/// largest count serves every count as a prefix: one placement per strategy
/// instead of one per count.
pub fn layouts(topo: &Topology, strategy: &Strategy, counts: &[usize]) -> Option<Vec<Layout>> {
    if matches!(strategy, Strategy::Spread) {
        return counts.iter().map(|&t| layout(topo, strategy, t)).collect();
    }
    let max = counts.iter().copied().max()?;
    let pus = placed_pus(topo, strategy, max)?;
    counts
        .iter()
        .map(|&t| layout_of(topo, pus.get(..t).filter(|p| !p.is_empty())?))
        .collect()
}

/// Where threads on `pus` (one each, in order) run.
fn layout_of(topo: &Topology, pus: &[&scalescope_topo::Pu]) -> Option<Layout> {
    let home = pus.first()?.numa_node;
    let mut per_core: BTreeMap<(Option<usize>, u32), usize> = BTreeMap::new();
    for pu in pus {
        // A PU without a core is its own core.
        *per_core.entry(core_key(pu)).or_default() += 1;
    }
    let mut per_node: BTreeMap<Option<u32>, BTreeMap<usize, usize>> = BTreeMap::new();
    for pu in pus {
        let k = per_core[&core_key(pu)];
        *per_node
            .entry(pu.numa_node)
            .or_default()
            .entry(k)
            .or_default() += 1;
    }
    let mut packages: Vec<Option<usize>> = pus.iter().map(|p| p.package).collect();
    packages.sort_unstable();
    packages.dedup();
    Some(Layout {
        threads: pus.len(),
        nodes: per_node
            .into_iter()
            .map(|(node, sharing)| NodeLoad {
                node,
                sharing: sharing.into_iter().collect(),
                home: node == home,
                distance: distance(topo, home, node),
            })
            .collect(),
        packages: packages.len(),
    })
}

fn core_key(pu: &scalescope_topo::Pu) -> (Option<usize>, u32) {
    match pu.core {
        Some(c) => (Some(c), 0),
        None => (None, pu.cpu),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

#[cfg(test)]
mod layout_tests {
    use super::*;
    use scalescope_topo::Source;

    #[test]
    fn cores_first_fills_a_node_then_the_next_then_siblings() {
        let t = Source::Synthetic("package:2 numa:1 core:4 pu:2".into())
            .load()
            .unwrap_or_else(|e| panic!("{e}"));
        let l = layout(&t, &Strategy::CoresFirst, 6).unwrap_or_else(|| panic!("no layout"));
        assert_eq!((l.threads, l.packages, l.remote_threads()), (6, 2, 2));
        assert!(!l.smt());
        let l = layout(&t, &Strategy::CoresFirst, 16).unwrap_or_else(|| panic!("no layout"));
        assert!(l.smt() && l.max_per_node() == 8);
        assert_eq!(l.nodes[0].sharing, vec![(2, 8)]);
        let l = layout(&t, &Strategy::SmtPairs, 2).unwrap_or_else(|| panic!("no layout"));
        assert_eq!(l.nodes[0].sharing, vec![(2, 2)]);
    }
}
