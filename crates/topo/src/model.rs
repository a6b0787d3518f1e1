//! The topology model every other part of scalescope reads, and the one builder
//! that turns a backend's raw findings (sets of CPUs per hardware object) into it.
//!
//! Every backend (sysfs, hwloc XML, synthetic) reports the same thing: for each
//! level (package, die, group, core, L3, L2, NUMA node) the CPU sets that share one
//! object, plus which CPUs exist, are online and are allowed. `Topology::build`
//! checks that each level partitions the CPUs, orders objects by hardware position
//! (package id, core id, lowest CPU) rather than by OS numbering, and fills in the
//! per-PU view. Identifiers in the model are dense logical indexes into the level's
//! vector; `os_id` keeps what the firmware or kernel called the object.

use serde::{Deserialize, Serialize};

use crate::cpuset::CpuSet;
use crate::TopoError;

pub(crate) use crate::raw::{Distances, RawCache, RawDomain, RawNode, RawTopology};

/// Version of the topology JSON (`scalescope topo --json`, and the `topology`
/// object inside results headers). Bump on any incompatible change; see docs/json.md.
pub const TOPOLOGY_SCHEMA_VERSION: u32 = 1;

/// One processing unit (hardware thread), by OS index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pu {
    /// OS index (what `taskset` and `sched_setaffinity` use).
    pub cpu: u32,
    /// Logical package index (into [`Topology::packages`]); `None` when offline.
    pub package: Option<usize>,
    pub die: Option<usize>,
    /// Machine-wide physical core index (into [`Topology::cores`]).
    pub core: Option<usize>,
    /// Position of this PU among its core's PUs (0 = first hardware thread).
    pub smt_rank: Option<u32>,
    /// OS index of the NUMA node whose CPUs include this PU.
    pub numa_node: Option<u32>,
    pub l3: Option<usize>,
    pub l2: Option<usize>,
    /// Hybrid core kind (into [`Topology::kinds`]), where the kernel tells it.
    pub kind: Option<usize>,
    pub online: bool,
    /// Online and inside both the process affinity and the cgroup cpuset.
    pub allowed: bool,
}

/// A package, die or group: an object identified only by the CPUs it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Domain {
    pub id: usize,
    /// Identifier the kernel or firmware gave (`physical_package_id`, `die_id`).
    pub os_id: Option<u32>,
    pub cpus: CpuSet,
}

/// A physical core.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Core {
    pub id: usize,
    pub package: Option<usize>,
    /// `core_id` from sysfs: unique only inside its package.
    pub os_id: Option<u32>,
    pub cpus: CpuSet,
}

/// A data or unified cache shared by `cpus`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cache {
    pub id: usize,
    pub level: u8,
    pub size_bytes: Option<u64>,
    pub line_bytes: Option<u32>,
    pub cpus: CpuSet,
}

/// A NUMA node. Memory-only nodes (CXL, HBM, NVDIMM) have no CPUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NumaNode {
    /// OS index (`nodeN`).
    pub id: u32,
    pub cpus: CpuSet,
    /// CPUs for which this node is local memory: `cpus` for ordinary nodes; for
    /// memory-only nodes the CPUs of their initiators (HMAT) or, failing that, of
    /// the nearest nodes with CPUs by SLIT distance.
    pub locality: CpuSet,
    pub memory_bytes: Option<u64>,
    /// Firmware (SLIT) distances to every node, ordered like [`Topology::numa_nodes`];
    /// empty when the machine reports none.
    pub distances: Vec<u32>,
    /// Inside the cgroup's allowed memory nodes.
    pub allowed: bool,
}

/// A kind of core on hybrid machines, ordered from least to most performant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuKind {
    pub id: usize,
    pub name: String,
    pub cpus: CpuSet,
}

/// The machine as it really is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    pub schema_version: u32,
    /// Where this came from: `sysfs:/`, `sysfs:DIR`, `hwloc-xml:FILE`, `synthetic:SPEC`.
    pub source: String,
    pub cpu_model: Option<String>,
    /// Every known PU, offline ones included, sorted by OS index.
    pub pus: Vec<Pu>,
    pub packages: Vec<Domain>,
    pub dies: Vec<Domain>,
    pub groups: Vec<Domain>,
    pub cores: Vec<Core>,
    pub l3: Vec<Cache>,
    pub l2: Vec<Cache>,
    pub numa_nodes: Vec<NumaNode>,
    pub kinds: Vec<CpuKind>,
    /// Repairs made to contradictory input, in words (empty for a sane machine).
    pub notes: Vec<String>,
}

/// The CPU kinds (hybrid parts) with at least one online CPU, numbered in order.
fn cpu_kinds(raw: &RawTopology, online: &CpuSet) -> Vec<CpuKind> {
    raw.kinds
        .iter()
        .filter(|(_, cpus)| cpus.intersects(online))
        .enumerate()
        .map(|(id, (name, cpus))| CpuKind {
            id,
            name: name.clone(),
            cpus: cpus.intersection(online),
        })
        .collect()
}

/// The cores, numbered in their sorted order, each with its package.
fn numbered_cores(cores: Vec<(Option<usize>, RawDomain)>) -> Vec<Core> {
    cores
        .into_iter()
        .enumerate()
        .map(|(id, (package, d))| Core {
            id,
            package,
            os_id: d.os_id,
            cpus: d.cpus,
        })
        .collect()
}

impl Topology {
    /// Normalises a backend's findings.
    ///
    /// Contradictions are repaired the way hwloc repairs them, and each repair is
    /// written to [`Topology::notes`]: a CPU whose package, core or cache set
    /// conflicts with one already seen gets an object of its own; a NUMA node whose
    /// CPUs overlap an earlier node's is dropped.
    ///
    /// # Errors
    /// [`TopoError::Inconsistent`] when nothing is online, or when sets from a source
    /// that cannot say which CPU reported them (hwloc XML) overlap.
    pub(crate) fn build(raw: RawTopology) -> Result<Topology, TopoError> {
        let online = raw.online.intersection(&raw.known);
        if online.is_empty() {
            return Err(inconsistent(&raw.source, "no online CPU was found"));
        }
        let mut notes = Vec::new();
        let mut level = |name: &str, sets: &[RawDomain]| {
            partition(&raw.source, name, sets, &online, &mut notes)
        };
        let mut packages = level("package", &raw.packages)?;
        let cores = level("core", &raw.cores)?;
        let mut dies = level("die", &raw.dies)?;
        let l3 = cache_level(3, &raw.l3, level("L3 cache", &as_domains(&raw.l3))?);
        let l2 = cache_level(2, &raw.l2, level("L2 cache", &as_domains(&raw.l2))?);
        packages.sort_by_key(|d| (d.os_id, d.cpus.first()));
        let packages = fill_uncovered(packages, &online, raw.packages.is_empty());
        let package_of = |cpu: u32| packages.iter().position(|d| d.cpus.contains(cpu));
        let mut cores: Vec<(Option<usize>, RawDomain)> = fill_uncovered(cores, &online, false)
            .into_iter()
            .map(|d| (d.cpus.first().and_then(package_of), d))
            .collect();
        cores.sort_by_key(|(pkg, d)| (*pkg, d.os_id, d.cpus.first()));
        dies.sort_by_key(|d| d.cpus.first());
        let groups = dedup_nested(&raw.groups, &online);
        let numa_nodes = numa_nodes(&raw, &online, &mut notes);
        let kinds = cpu_kinds(&raw, &online);
        let core_sets: Vec<CpuSet> = cores.iter().map(|c| c.1.cpus.clone()).collect();
        let sets = |v: &[RawDomain]| v.iter().map(|d| d.cpus.clone()).collect::<Vec<CpuSet>>();
        let levels = [
            core_sets,
            sets(&dies),
            l3.iter().map(|c| c.cpus.clone()).collect(),
            l2.iter().map(|c| c.cpus.clone()).collect(),
            kinds.iter().map(|k| k.cpus.clone()).collect(),
        ];
        let pus = pus_of(&raw, &online, &packages, &levels, &numa_nodes);
        Ok(Topology {
            schema_version: TOPOLOGY_SCHEMA_VERSION,
            source: raw.source,
            cpu_model: raw.cpu_model,
            pus,
            packages: to_domains(packages),
            dies: to_domains(dies),
            groups: to_domains(groups),
            cores: numbered_cores(cores),
            l3,
            l2,
            numa_nodes,
            kinds,
            notes,
        })
    }

    /// The PU with OS index `cpu`.
    pub fn pu(&self, cpu: u32) -> Option<&Pu> {
        self.pus
            .binary_search_by_key(&cpu, |p| p.cpu)
            .ok()
            .map(|i| &self.pus[i])
    }

    /// PUs a thread may be placed on: online and allowed, in OS order.
    pub fn usable_pus(&self) -> impl Iterator<Item = &Pu> {
        self.pus.iter().filter(|p| p.online && p.allowed)
    }

    /// The usable CPUs as a set.
    pub fn usable_cpus(&self) -> CpuSet {
        self.usable_pus().map(|p| p.cpu).collect()
    }

    pub fn online_cpus(&self) -> CpuSet {
        self.pus
            .iter()
            .filter(|p| p.online)
            .map(|p| p.cpu)
            .collect()
    }

    /// Largest number of PUs in one core (1 = no SMT).
    pub fn max_threads_per_core(&self) -> usize {
        self.cores.iter().map(|c| c.cpus.len()).max().unwrap_or(1)
    }

    /// Number of NUMA nodes that hold CPUs.
    pub fn cpu_numa_nodes(&self) -> usize {
        self.numa_nodes
            .iter()
            .filter(|n| !n.cpus.is_empty())
            .count()
    }

    /// "2 packages x 24 cores x 2 threads = 96 PUs, 2 NUMA nodes", with the
    /// irregular cases (offline, disallowed, hybrid) spelled out.
    pub fn summary(&self) -> String {
        let online = self.pus.iter().filter(|p| p.online).count();
        let npk = self.packages.len();
        let cores_per_pkg: Vec<usize> = (0..npk)
            .map(|p| self.cores.iter().filter(|c| c.package == Some(p)).count())
            .collect();
        let tpc: Vec<usize> = self.cores.iter().map(|c| c.cpus.len()).collect();
        let uniform = |v: &[usize]| v.windows(2).all(|w| w[0] == w[1]);
        let cores_txt = if uniform(&cores_per_pkg) {
            format!("{} cores", cores_per_pkg.first().copied().unwrap_or(0))
        } else {
            format!("{} cores in all", self.cores.len())
        };
        let threads_txt = if uniform(&tpc) {
            let t = tpc.first().copied().unwrap_or(1);
            format!("{t} thread{}", plural(t))
        } else {
            format!("1-{} threads", self.max_threads_per_core())
        };
        let mut s = format!(
            "{npk} package{} x {cores_txt} x {threads_txt} = {online} PU{}, {} NUMA node{}",
            plural(npk),
            plural(online),
            self.numa_nodes.len(),
            plural(self.numa_nodes.len())
        );
        let memory_only = self.numa_nodes.len() - self.cpu_numa_nodes();
        if memory_only > 0 {
            s += &format!(" ({memory_only} memory-only)");
        }
        let offline = self.pus.len() - online;
        if offline > 0 {
            s += &format!(", {offline} offline");
        }
        let usable = self.usable_pus().count();
        if usable < online {
            s += &format!(", {usable} allowed");
        }
        if self.kinds.len() > 1 {
            let kinds: Vec<String> = self
                .kinds
                .iter()
                .map(|k| format!("{} {}", k.cpus.len(), k.name))
                .collect();
            s += &format!(", hybrid: {}", kinds.join(" + "));
        }
        s
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn inconsistent(source: &str, detail: impl Into<String>) -> TopoError {
    TopoError::Inconsistent {
        origin: source.to_string(),
        detail: detail.into(),
    }
}

/// Deduplicates one level's sets (restricted to online CPUs) so that no CPU belongs
/// to two. A set that conflicts with one already kept is replaced by a set holding
/// only the CPU that reported it, as hwloc does; without a reporter it is an error.
fn partition(
    source: &str,
    level: &str,
    sets: &[RawDomain],
    online: &CpuSet,
    notes: &mut Vec<String>,
) -> Result<Vec<RawDomain>, TopoError> {
    // Indexed, not searched: a linear search per set was quadratic in cores (a
    // synthetic 65,536-PU machine took minutes). The kept sets are disjoint, so each
    // CPU has one owner.
    let mut out: Vec<RawDomain> = Vec::new();
    let mut seen: std::collections::BTreeSet<CpuSet> = std::collections::BTreeSet::new();
    let mut owner: std::collections::BTreeMap<u32, usize> = std::collections::BTreeMap::new();
    for d in sets {
        let cpus = d.cpus.intersection(online);
        if cpus.is_empty() || seen.contains(&cpus) {
            continue;
        }
        let Some(other) = cpus.iter().find_map(|c| owner.get(&c)).map(|&i| &out[i]) else {
            for c in cpus.iter() {
                owner.insert(c, out.len());
            }
            seen.insert(cpus.clone());
            out.push(RawDomain {
                os_id: d.os_id,
                cpus,
                reporter: d.reporter,
            });
            continue;
        };
        let Some(cpu) = d.reporter else {
            return Err(inconsistent(
                source,
                format!("{level} sets {} and {cpus} overlap", other.cpus),
            ));
        };
        notes.push(format!(
            "CPU {cpu} reports {level} CPUs {cpus}, which conflicts with {}; CPU {cpu} gets a {level} of its own",
            other.cpus
        ));
        if !owner.contains_key(&cpu) && online.contains(cpu) {
            let own: CpuSet = [cpu].into_iter().collect();
            owner.insert(cpu, out.len());
            seen.insert(own.clone());
            out.push(RawDomain {
                os_id: d.os_id,
                cpus: own,
                reporter: Some(cpu),
            });
        }
    }
    Ok(out)
}

/// Online CPUs no set covers get a set each (or, with `together`, one set for all of
/// them), so every online PU has a core and a package even when the kernel did not say.
fn fill_uncovered(mut sets: Vec<RawDomain>, online: &CpuSet, together: bool) -> Vec<RawDomain> {
    let mut covered = CpuSet::new();
    for d in &sets {
        covered.extend(d.cpus.iter());
    }
    let missing = online.difference(&covered);
    if together && !missing.is_empty() {
        sets.push(RawDomain {
            os_id: None,
            cpus: missing,
            reporter: None,
        });
    } else {
        for cpu in missing.iter() {
            sets.push(RawDomain {
                os_id: None,
                cpus: [cpu].into_iter().collect(),
                reporter: None,
            });
        }
    }
    sets
}

/// Groups nest (s390 books inside drawers), so they are not a partition: keep each
/// distinct set, largest first.
fn dedup_nested(sets: &[RawDomain], online: &CpuSet) -> Vec<RawDomain> {
    let mut out: Vec<RawDomain> = Vec::new();
    for d in sets {
        let cpus = d.cpus.intersection(online);
        if !cpus.is_empty() && !out.iter().any(|o| o.cpus == cpus) {
            out.push(RawDomain {
                os_id: d.os_id,
                cpus,
                reporter: None,
            });
        }
    }
    out.sort_by_key(|d| (std::cmp::Reverse(d.cpus.len()), d.cpus.first()));
    out
}

fn to_domains(sets: Vec<RawDomain>) -> Vec<Domain> {
    sets.into_iter()
        .enumerate()
        .map(|(id, d)| Domain {
            id,
            os_id: d.os_id,
            cpus: d.cpus,
        })
        .collect()
}

fn as_domains(caches: &[RawCache]) -> Vec<RawDomain> {
    caches
        .iter()
        .map(|c| RawDomain {
            os_id: None,
            cpus: c.cpus.clone(),
            reporter: c.reporter,
        })
        .collect()
}

/// Attaches sizes to a cache level's partition, ordered by lowest CPU.
fn cache_level(level: u8, raw: &[RawCache], mut sets: Vec<RawDomain>) -> Vec<Cache> {
    sets.sort_by_key(|d| d.cpus.first());
    sets.into_iter()
        .enumerate()
        .map(|(id, d)| {
            let info = raw
                .iter()
                .find(|c| c.cpus.is_superset_of(&d.cpus))
                .or_else(|| {
                    raw.iter()
                        .find(|c| c.reporter.is_some_and(|r| d.cpus.contains(r)))
                });
            Cache {
                id,
                level,
                size_bytes: info.and_then(|c| c.size_bytes),
                line_bytes: info.and_then(|c| c.line_bytes),
                cpus: d.cpus,
            }
        })
        .collect()
}

/// Nodes in OS order; a node claiming CPUs an earlier node already holds is dropped
/// (firmware that gives every node every CPU), and memory-only nodes get a locality.
fn numa_nodes(raw: &RawTopology, online: &CpuSet, notes: &mut Vec<String>) -> Vec<NumaNode> {
    let mut nodes = raw.numa.clone();
    nodes.sort_by_key(|n| n.id);
    nodes.dedup_by_key(|n| n.id);
    let mut claimed = CpuSet::new();
    nodes.retain(|n| {
        let cpus = n.cpus.intersection(online);
        if cpus.intersects(&claimed) {
            notes.push(format!(
                "NUMA node {} claims CPUs {cpus} that an earlier node holds; node {} is ignored",
                n.id, n.id
            ));
            return false;
        }
        claimed = claimed.union(&cpus);
        true
    });
    if nodes.is_empty() {
        nodes.push(RawNode {
            id: 0,
            cpus: online.clone(),
            memory_bytes: None,
            locality: None,
        });
    }
    let ids: Vec<u32> = nodes.iter().map(|n| n.id).collect();
    let matrix = raw.distances.as_ref().and_then(|(order, m)| {
        let pos: Vec<usize> = ids
            .iter()
            .map(|id| order.iter().position(|o| o == id))
            .collect::<Option<_>>()?;
        pos.iter()
            .map(|&i| {
                pos.iter()
                    .map(|&j| m.get(i)?.get(j).copied())
                    .collect::<Option<Vec<u32>>>()
            })
            .collect::<Option<Vec<Vec<u32>>>>()
    });
    let cpus: Vec<CpuSet> = nodes.iter().map(|n| n.cpus.intersection(online)).collect();
    (0..nodes.len())
        .map(|i| {
            let n = &nodes[i];
            let locality = if !cpus[i].is_empty() {
                cpus[i].clone()
            } else {
                n.locality
                    .as_ref()
                    .map(|l| l.intersection(online))
                    .filter(|l| !l.is_empty())
                    .or_else(|| nearest_cpus(i, &cpus, matrix.as_deref()))
                    .unwrap_or_default()
            };
            NumaNode {
                id: n.id,
                cpus: cpus[i].clone(),
                locality,
                memory_bytes: n.memory_bytes,
                distances: matrix.as_ref().map(|m| m[i].clone()).unwrap_or_default(),
                allowed: raw.allowed_nodes.as_ref().is_none_or(|a| a.contains(n.id)),
            }
        })
        .collect()
}

/// CPUs of the nodes with CPUs at the smallest SLIT distance from node `i`.
fn nearest_cpus(i: usize, cpus: &[CpuSet], matrix: Option<&[Vec<u32>]>) -> Option<CpuSet> {
    let row = matrix?.get(i)?;
    let best = (0..cpus.len())
        .filter(|&j| !cpus[j].is_empty())
        .map(|j| row[j])
        .min()?;
    Some(
        (0..cpus.len())
            .filter(|&j| !cpus[j].is_empty() && row[j] == best)
            .fold(CpuSet::new(), |acc, j| acc.union(&cpus[j])),
    )
}

/// Each known PU with the index of its package, die, core, L3, L2 and kind (`levels`
/// holds the core, die, L3, L2 and kind sets in that order), its node and flags.
fn pus_of(
    raw: &RawTopology,
    online: &CpuSet,
    packages: &[RawDomain],
    levels: &[Vec<CpuSet>; 5],
    numa_nodes: &[NumaNode],
) -> Vec<Pu> {
    // CPU -> index of the first set holding it, built once per level: a search
    // per PU over every set was quadratic.
    let index = |sets: &[CpuSet]| {
        let mut map = std::collections::BTreeMap::new();
        for (i, s) in sets.iter().enumerate() {
            for cpu in s.iter() {
                map.entry(cpu).or_insert(i);
            }
        }
        map
    };
    let ix: Vec<_> = levels.iter().map(|l| index(l)).collect();
    let find = |level: usize, cpu: u32| ix[level].get(&cpu).copied();
    let package_of = |cpu: u32| packages.iter().position(|d| d.cpus.contains(cpu));
    // Each PU's position in its core (a core may hold thousands in a synthetic
    // spec such as `pu:65536`).
    let smt_rank: std::collections::BTreeMap<u32, u32> = levels[0]
        .iter()
        .flat_map(|s| s.iter().zip(0u32..))
        .collect();
    raw.known
        .union(online)
        .iter()
        .map(|cpu| {
            let core = find(0, cpu);
            Pu {
                cpu,
                package: package_of(cpu),
                die: find(1, cpu),
                core,
                smt_rank: core.and(smt_rank.get(&cpu).copied()),
                numa_node: numa_nodes
                    .iter()
                    .find(|n| n.cpus.contains(cpu))
                    .map(|n| n.id),
                l3: find(2, cpu),
                l2: find(3, cpu),
                kind: find(4, cpu),
                online: online.contains(cpu),
                allowed: online.contains(cpu) && raw.allowed.contains(cpu),
            }
        })
        .collect()
}
