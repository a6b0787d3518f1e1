//! Logical indexes as hwloc numbers them, which is what Open MPI's `--cpu-set`,
//! rankfile `slot=` lists and `--report-bindings` mean by a CPU or core number.
//!
//! hwloc keeps the siblings of every object ordered by the first CPU of their
//! cpusets and numbers objects of one type in depth-first order, so a PU's logical
//! index follows the first CPUs of its package, die, L3, L2 and core, then its own
//! OS index. Offline PUs are not in hwloc's tree, and Open MPI 4 loads the
//! topology without `HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED`, so PUs outside the
//! cgroup cpuset are not numbered either: only usable PUs get an index. On a
//! machine whose OS numbering alternates between packages (CPU 0 on package 0,
//! CPU 1 on package 1, ...) the logical and OS numbers differ, which is why
//! passing OS numbers to Open MPI lands ranks elsewhere.

use scalescope_topo::{CpuSet, Topology};

/// The usable PUs in hwloc's logical order: `order[i]` is the OS index of PU L#i.
pub fn pu_order(topo: &Topology) -> Vec<u32> {
    let sets = containers(topo);
    let mut pus: Vec<(Vec<u32>, u32)> = topo
        .usable_pus()
        .map(|p| (ancestor_firsts(&sets, p.cpu), p.cpu))
        .collect();
    pus.sort();
    pus.into_iter().map(|(_, cpu)| cpu).collect()
}

/// The cores holding usable PUs, in hwloc's logical order: `order[i]` is the set
/// of usable PUs of core L#i.
pub fn core_order(topo: &Topology) -> Vec<CpuSet> {
    let usable = topo.usable_cpus();
    let sets = containers(topo);
    let mut cores: Vec<(Vec<u32>, CpuSet)> = topo
        .cores
        .iter()
        .map(|c| c.cpus.intersection(&usable))
        .filter(|set| !set.is_empty())
        .filter_map(|set| Some((ancestor_firsts(&sets, set.first()?), set)))
        .collect();
    cores.sort();
    cores.into_iter().map(|(_, set)| set).collect()
}

/// The logical PU index of each OS CPU of `cpus`, or the first CPU that has none.
pub fn logical_pus(order: &[u32], cpus: &CpuSet) -> Result<Vec<usize>, u32> {
    cpus.iter()
        .map(|cpu| order.iter().position(|&c| c == cpu).ok_or(cpu))
        .collect()
}

/// The first usable CPU of every object above `cpu`, outermost first, each the key
/// hwloc sorts siblings by; `sets` from [`containers`].
fn ancestor_firsts(sets: &[CpuSet], cpu: u32) -> Vec<u32> {
    let mut key: Vec<u32> = sets
        .iter()
        .filter(|s| s.contains(cpu))
        .filter_map(CpuSet::first)
        .collect();
    key.push(cpu);
    key
}

/// Every CPU set an hwloc object above a PU could have (package, die, group, NUMA
/// node, L3, L2, core), largest (outermost) first: hwloc nests objects that way,
/// and a NUMA node that matches no other object becomes a Group of its own in
/// hwloc's tree. Equal sets are one object for ordering. The sets keep the CPUs
/// the cgroup forbids: hwloc sorts siblings by their complete cpusets, so a
/// package whose first CPU is forbidden still sorts by it.
fn containers(topo: &Topology) -> Vec<CpuSet> {
    let online = topo.online_cpus();
    let domains = topo.packages.iter().chain(&topo.dies).chain(&topo.groups);
    let mut sets: Vec<CpuSet> = domains
        .map(|d| &d.cpus)
        .chain(topo.numa_nodes.iter().map(|n| &n.cpus))
        .chain(topo.l3.iter().chain(&topo.l2).map(|c| &c.cpus))
        .chain(topo.cores.iter().map(|c| &c.cpus))
        .map(|s| s.intersection(&online))
        .filter(|s| !s.is_empty())
        .collect();
    sets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let mut unique: Vec<CpuSet> = Vec::with_capacity(sets.len());
    for s in sets {
        if !unique.contains(&s) {
            unique.push(s);
        }
    }
    unique
}
