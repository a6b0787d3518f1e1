//! What a backend (sysfs, hwloc XML, synthetic) reports before normalisation: raw
//! domains, caches and nodes, as each CPU described them. `model::Topology::build`
//! turns them into the model.

use crate::cpuset::{CpuSet, NodeSet};

/// What a backend found, before normalisation. Domain lists may repeat a set (one
/// entry per CPU that reported it); the builder deduplicates.
#[derive(Debug, Clone, Default)]
pub(crate) struct RawTopology {
    pub source: String,
    pub cpu_model: Option<String>,
    pub known: CpuSet,
    pub online: CpuSet,
    /// CPUs the process may use (before intersecting with `online`).
    pub allowed: CpuSet,
    pub allowed_nodes: Option<NodeSet>,
    pub packages: Vec<RawDomain>,
    pub dies: Vec<RawDomain>,
    pub groups: Vec<RawDomain>,
    pub cores: Vec<RawDomain>,
    pub l3: Vec<RawCache>,
    pub l2: Vec<RawCache>,
    pub numa: Vec<RawNode>,
    pub distances: Option<Distances>,
    /// Kinds from least to most performant.
    pub kinds: Vec<(String, CpuSet)>,
}

/// Node OS ids and the SLIT matrix in that order.
pub(crate) type Distances = (Vec<u32>, Vec<Vec<u32>>);

/// One object as one CPU (the `reporter`, where known) described it.
#[derive(Debug, Clone, Default)]
pub(crate) struct RawDomain {
    pub os_id: Option<u32>,
    pub cpus: CpuSet,
    pub reporter: Option<u32>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct RawCache {
    pub size_bytes: Option<u64>,
    pub line_bytes: Option<u32>,
    pub cpus: CpuSet,
    pub reporter: Option<u32>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct RawNode {
    pub id: u32,
    pub cpus: CpuSet,
    pub memory_bytes: Option<u64>,
    /// CPUs closest to a memory-only node, where the backend knows them.
    pub locality: Option<CpuSet>,
}
