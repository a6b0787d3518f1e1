//! Where a placement's threads land, reduced to what the mechanism model needs: per
//! NUMA node, how many threads run there and how many share a physical core with
//! how many others, whether the node is the first thread's (where first-touched
//! shared data lives) and how far it is from it (SLIT distance).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use scalescope_place::{place, PlaceRequest, Strategy};
use scalescope_topo::Topology;

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
    let mut req = PlaceRequest::new(strategy.clone(), threads);
    req.oversubscribe = true;
    let p = place(topo, &req).ok()?;
    let pus: Vec<_> = p
        .first_cpus()
        .into_iter()
        .filter_map(|c| topo.pu(c))
        .collect();
    let home = pus.first()?.numa_node;
    let mut per_core: BTreeMap<(Option<usize>, u32), usize> = BTreeMap::new();
    for pu in &pus {
        // A PU without a core is its own core.
        *per_core.entry(core_key(pu)).or_default() += 1;
    }
    let mut per_node: BTreeMap<Option<u32>, BTreeMap<usize, usize>> = BTreeMap::new();
    for pu in &pus {
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
