//! The mechanism model's equation. Per node n, the threads placed there deliver
//!
//!   C_n = f_n * sum over threads of c_i,  c_i = 1 alone on its core,
//!                                          (1 + y) / k for k threads sharing a core,
//!   f_n = 1 on the home node, 1 / (1 + (1/r - 1) g_n) elsewhere,
//!   G_n = 1 / (1 / C_n + mu / beta_n)     (mu: memory time per unit of work),
//!   D_n = (G_n^-q + (beta_n / m)^-q)^(-1/q)   (m = 1/b: traffic per unit of
//!                                          work; q = 1/h, h = 0: min(G_n, beta_n/m)),
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
//! With the data on the home node (`home_memory`) the limits apply to the sum of
//! every node's demand instead (its memory serves them all).
//!
//! Shapes of a per-node bandwidth limit: b is a cap reached abruptly (h = 0: memory
//! traffic overlapped with compute until the node saturates, the roofline) or
//! smoothly (h up to 1: queueing at the memory controllers); mu is one approached
//! gradually (each node's memory time adds to its threads' compute
//! time, so a node never delivers more than 1/mu one-thread rates). On one node the
//! second is Amdahl's law exactly (t = mu + 1/p up to the scale): a sweep that never
//! left its first node cannot tell a serial part from it, and the two part ways as
//! soon as threads run on more nodes (docs/ANALYSIS.md, "Rival explanations").
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
    /// mu: memory time per unit of work on each node, in one-thread compute times,
    /// shared by the node's threads (0: none).
    #[serde(default)]
    pub mem_time: f64,
    /// h: how the cap 1/m is approached, 0 abruptly (min) to 1 gradually (the
    /// harmonic sum): the rate is (C^-q + (b/m)^-q)^(-1/q) with q = 1/h.
    #[serde(default)]
    pub cap_shape: f64,
    /// The data lives on the home node (first-touched by one thread): its memory
    /// serves every node's threads, so its cap and memory time apply to their sum
    /// (false: each node's memory serves its own threads, data partitioned).
    #[serde(default)]
    pub home_memory: bool,
}

impl Params {
    /// No mechanism at all: linear scaling with the cores.
    pub const NEUTRAL: Params = Params {
        serial: 0.0,
        sync: 0.0,
        remote: 1.0,
        inv_bandwidth: 0.0,
        smt_yield: 1.0,
        mem_time: 0.0,
        cap_shape: 0.0,
        home_memory: false,
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

/// What one node's threads deliver before any memory limit: their cores' compute
/// times the remote penalty off the home node.
fn node_demand(p: &Params, s: &Scales, n: &NodeLoad) -> f64 {
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
    compute * locality
}

/// `demand` served by one node's memory: its memory time added, its cap applied.
fn served(p: &Params, s: &Scales, demand: f64) -> f64 {
    let mut d = demand;
    if p.mem_time > 0.0 && d > 0.0 {
        d = 1.0 / (1.0 / d + p.mem_time / s.bandwidth);
    }
    if p.inv_bandwidth > 0.0 {
        smooth_min(d, s.bandwidth / p.inv_bandwidth, p.cap_shape)
    } else {
        d
    }
}

/// The layout's rate: each node's memory serving its own threads, or (shared data
/// on the home node) the home node's memory serving them all.
fn rate(p: &Params, s: &Scales, l: &Layout) -> f64 {
    let demands = l.nodes.iter().map(|n| node_demand(p, s, n));
    if p.home_memory {
        served(p, s, demands.sum())
    } else {
        demands.map(|d| served(p, s, d)).sum()
    }
}

/// The cap `cap` on a rate `x`, reached abruptly (`h` = 0: min(x, cap)) or
/// smoothly: (x^-q + cap^-q)^(-1/q) with q = 1/h (the generalised mean; h = 1 is
/// the harmonic sum, each node's memory time added to its compute time).
pub fn smooth_min(x: f64, cap: f64, h: f64) -> f64 {
    let (lo, hi) = (x.min(cap), x.max(cap));
    if h <= 1e-9 || lo.is_nan() || lo <= 0.0 {
        return lo;
    }
    lo * (1.0 + (lo / hi).powf(1.0 / h)).powf(-h)
}

/// t(p): the time of a unit of work, in one-thread compute times.
pub fn time(p: &Params, s: &Scales, l: &Layout) -> f64 {
    p.serial
        + (1.0 - p.serial) / rate(p, s, l).max(1e-12)
        + p.sync * l.threads.saturating_sub(1) as f64
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
                mem_time: n.mem_time,
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
    /// Distinct PUs the threads run on (fewer than the threads: oversubscribed).
    #[serde(default)]
    pub pus: usize,
    /// Some core runs threads on two or more of its PUs (SMT siblings).
    #[serde(default)]
    pub siblings: bool,
}

impl Layout {
    /// Some core runs two or more of the threads (SMT siblings or threads beyond
    /// the PUs: the model gives both k threads on a core 1 + y).
    pub fn smt(&self) -> bool {
        self.nodes
            .iter()
            .any(|n| n.sharing.iter().any(|(k, t)| *k > 1 && *t > 0))
    }
    /// More threads than the PUs they run on.
    pub fn oversubscribed(&self) -> bool {
        self.pus > 0 && self.threads > self.pus
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
    let mut distinct: Vec<(Option<usize>, u32)> = pus.iter().map(|p| (p.core, p.cpu)).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let siblings = distinct
        .windows(2)
        .any(|w| w[0].0.is_some() && w[0].0 == w[1].0);
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
        pus: distinct.len(),
        siblings,
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
            mem_time: 0.0,
            cap_shape: 0.0,
            home_memory: false,
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
mod memory_tests {
    use super::*;
    use scalescope_topo::Source;

    fn at(spec: &str, threads: usize) -> (Layout, Layout) {
        let t = Source::Synthetic(spec.into())
            .load()
            .unwrap_or_else(|e| panic!("{e}"));
        let l = |n| layout(&t, &Strategy::CoresFirst, n).unwrap_or_else(|| panic!("layout"));
        (l(1), l(threads))
    }

    /// On one node the memory time is Amdahl's law with s = mu / (1 + mu); on
    /// four nodes with the data partitioned it recovers, with the data on the
    /// home node it does not.
    #[test]
    fn memory_time_is_amdahl_on_one_node_and_parts_ways_on_more() {
        let mu = 0.1;
        let p = Params {
            mem_time: mu,
            ..Params::NEUTRAL
        };
        let s = Scales::default();
        let serial = mu / (1.0 + mu);
        for t in [2, 5, 8] {
            let (one, l) = at("package:4 numa:1 core:8", t);
            let amdahl = 1.0 / (serial + (1.0 - serial) / t as f64);
            assert!((speedup(&p, &s, &one, &l) - amdahl).abs() < 1e-12, "{t}");
        }
        let (one, l) = at("package:4 numa:1 core:8", 32);
        let per_node = 4.0 * (1.0 + mu) / (1.0 / 8.0 + mu);
        assert!((speedup(&p, &s, &one, &l) - per_node).abs() < 1e-9);
        let home = Params {
            home_memory: true,
            ..p
        };
        let all = (1.0 + mu) / (1.0 / 32.0 + mu);
        assert!((speedup(&home, &s, &one, &l) - all).abs() < 1e-9);
    }

    #[test]
    fn the_cap_shape_runs_from_the_minimum_to_the_harmonic_sum() {
        assert_eq!(smooth_min(3.0, 5.0, 0.0), 3.0);
        assert!((smooth_min(3.0, 5.0, 1.0) - 1.0 / (1.0 / 3.0 + 1.0 / 5.0)).abs() < 1e-12);
        let q2 = (3.0f64.powi(-2) + 5.0f64.powi(-2)).powf(-0.5);
        assert!((smooth_min(3.0, 5.0, 0.5) - q2).abs() < 1e-12);
        assert!(smooth_min(1e6, 5.0, 0.3) <= 5.0);
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
        assert!(l.smt() && l.siblings && l.max_per_node() == 8);
        assert_eq!(l.nodes[0].sharing, vec![(2, 8)]);
        assert!(!l.oversubscribed());
        let l = layout(&t, &Strategy::SmtPairs, 2).unwrap_or_else(|| panic!("no layout"));
        assert_eq!(l.nodes[0].sharing, vec![(2, 2)]);
        // Without SMT, threads beyond the cores share a PU: oversubscribed.
        let t = Source::Synthetic("package:1 numa:1 core:4".into())
            .load()
            .unwrap_or_else(|e| panic!("{e}"));
        let l = layout(&t, &Strategy::CoresFirst, 6).unwrap_or_else(|| panic!("no layout"));
        assert!(l.oversubscribed() && !l.siblings && l.pus == 4);
    }
}
