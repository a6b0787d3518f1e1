//! Synthetic topologies from an hwloc-style description, for tests and for asking
//! "what would this placement do on a machine I do not have".
//!
//! Grammar: whitespace-separated `level:count` tokens from the outside in, with
//! levels `group`, `package` (`socket`), `die`, `numa` (`node`), `l3`, `l2`, `core`,
//! `pu` (`thread`), each count per parent; an optional `numbering=MODE` token picks
//! how OS indexes are assigned, reproducing what BIOSes really do:
//! - `linear` (default): in hardware order, SMT siblings adjacent (0 and 1 share a core);
//! - `smt-last`: first threads of every core first, SMT siblings `cores` apart
//!   (most Intel servers under Linux);
//! - `interleaved`: like `smt-last`, but consecutive numbers alternate between
//!   packages (many dual-socket BIOSes).
//!
//! Synthetic machines have no memory sizes, cache sizes or SLIT distances: those
//! would be invented numbers, so they are left unknown.

use crate::cpuset::CpuSet;
use crate::model::{RawCache, RawDomain, RawNode, RawTopology, Topology};
use crate::TopoError;

/// How OS indexes are assigned to hardware positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numbering {
    Linear,
    SmtLast,
    Interleaved,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Group,
    Package,
    Die,
    Numa,
    L3,
    L2,
    Core,
    Pu,
}

const MAX_PUS: usize = 1 << 16;

fn level_of(name: &str) -> Option<Level> {
    Some(match name.to_ascii_lowercase().as_str() {
        "group" => Level::Group,
        "package" | "socket" => Level::Package,
        "die" => Level::Die,
        "numa" | "node" | "numanode" => Level::Numa,
        "l3" | "l3cache" => Level::L3,
        "l2" | "l2cache" => Level::L2,
        "core" => Level::Core,
        "pu" | "thread" => Level::Pu,
        _ => return None,
    })
}

/// Parses a spec into (level, count) pairs and the numbering mode.
fn parse(spec: &str) -> Result<(Vec<(Level, usize)>, Numbering), String> {
    let mut levels: Vec<(Level, usize)> = Vec::new();
    let mut numbering = Numbering::Linear;
    for token in spec.split_whitespace() {
        if let Some(mode) = token.strip_prefix("numbering=") {
            numbering = match mode {
                "linear" => Numbering::Linear,
                "smt-last" => Numbering::SmtLast,
                "interleaved" => Numbering::Interleaved,
                other => {
                    return Err(format!(
                        "unknown numbering `{other}` (linear, smt-last, interleaved)"
                    ))
                }
            };
            continue;
        }
        let (name, count) = token
            .split_once(':')
            .ok_or_else(|| format!("`{token}` is not `level:count`"))?;
        let level = level_of(name).ok_or_else(|| {
            format!("unknown level `{name}` (group, package, die, numa, l3, l2, core, pu)")
        })?;
        let count: usize = count
            .parse()
            .ok()
            .filter(|c| *c >= 1)
            .ok_or_else(|| format!("`{token}`: the count must be a positive integer"))?;
        if let Some(&(prev, _)) = levels.last() {
            // NUMA nodes may sit above or below packages; everything else nests in order.
            let ordered =
                prev < level || prev == Level::Numa || (level == Level::Numa && prev < Level::Core);
            if !ordered || levels.iter().any(|(l, _)| *l == level) {
                return Err(format!(
                    "level `{name}` is out of order or repeated (outermost first)"
                ));
            }
        }
        levels.push((level, count));
    }
    if levels.is_empty() {
        return Err("empty description (try `package:2 core:4 pu:2`)".into());
    }
    if !levels.iter().any(|(l, _)| *l == Level::Pu) {
        levels.push((Level::Pu, 1));
    }
    if levels.last().map(|l| l.0) != Some(Level::Pu) {
        return Err("`pu` must be the innermost level".into());
    }
    let total = levels
        .iter()
        .try_fold(1usize, |acc, (_, c)| acc.checked_mul(*c))
        .filter(|t| *t <= MAX_PUS)
        .ok_or_else(|| format!("more than {MAX_PUS} PUs"))?;
    debug_assert!(total >= 1);
    Ok((levels, numbering))
}

/// Builds the topology a spec describes.
///
/// # Errors
/// [`TopoError::Synthetic`] naming what is wrong with the spec.
pub fn build(spec: &str) -> Result<Topology, TopoError> {
    let err = |detail: String| TopoError::Synthetic {
        spec: spec.to_string(),
        detail,
    };
    let (levels, numbering) = parse(spec).map_err(err)?;
    let total: usize = levels.iter().map(|(_, c)| c).product();
    // Hardware position of PU h: the index of its ancestor at each level.
    let position = |h: usize, level: Level| -> usize {
        let mut below = 1usize;
        let mut found = false;
        for (l, c) in levels.iter().rev() {
            if *l == level {
                found = true;
                break;
            }
            below *= c;
        }
        if found {
            h / below
        } else {
            0
        }
    };
    let threads_per_core = levels.last().map(|l| l.1).unwrap_or(1);
    let n_cores = total / threads_per_core;
    let n_packages = if levels.iter().any(|(l, _)| *l == Level::Package) {
        position(total - 1, Level::Package) + 1
    } else {
        1
    };
    let os_index = |h: usize| -> u32 {
        let core = h / threads_per_core;
        let smt = h % threads_per_core;
        let v = match numbering {
            Numbering::Linear => h,
            Numbering::SmtLast => smt * n_cores + core,
            Numbering::Interleaved => {
                let per_pkg = n_cores / n_packages;
                let (pkg, local) = (core / per_pkg, core % per_pkg);
                smt * n_cores + local * n_packages + pkg
            }
        };
        v as u32
    };
    let sets_at = |level: Level| -> Vec<RawDomain> {
        let mut sets: Vec<RawDomain> = Vec::new();
        for h in 0..total {
            let p = position(h, level);
            if sets.len() <= p {
                sets.resize(p + 1, RawDomain::default());
            }
            sets[p].os_id = Some(p as u32);
            sets[p].cpus.insert(os_index(h));
        }
        sets
    };
    let has = |level: Level| levels.iter().any(|(l, _)| *l == level);
    let all: CpuSet = (0..total).map(os_index).collect();
    let caches = |level: Level| -> Vec<RawCache> {
        if !has(level) {
            return Vec::new();
        }
        sets_at(level)
            .into_iter()
            .map(|d| RawCache {
                size_bytes: None,
                line_bytes: None,
                cpus: d.cpus,
                reporter: None,
            })
            .collect()
    };
    let numa: Vec<RawNode> = if has(Level::Numa) {
        sets_at(Level::Numa)
            .into_iter()
            .enumerate()
            .map(|(i, d)| RawNode {
                id: i as u32,
                cpus: d.cpus,
                memory_bytes: None,
                locality: None,
            })
            .collect()
    } else {
        vec![RawNode {
            id: 0,
            cpus: all.clone(),
            memory_bytes: None,
            locality: None,
        }]
    };
    let core_sets: Vec<RawDomain> = {
        // core_id restarts in each package, as in sysfs.
        let per_pkg = n_cores / n_packages;
        let mut v = vec![RawDomain::default(); n_cores];
        for h in 0..total {
            let core = h / threads_per_core;
            v[core].os_id = Some((core % per_pkg) as u32);
            v[core].cpus.insert(os_index(h));
        }
        v
    };
    let raw = RawTopology {
        source: format!("synthetic:{spec}"),
        cpu_model: None,
        known: all.clone(),
        online: all.clone(),
        allowed: all,
        allowed_nodes: None,
        packages: if has(Level::Package) {
            sets_at(Level::Package)
        } else {
            Vec::new()
        },
        dies: if has(Level::Die) {
            sets_at(Level::Die)
        } else {
            Vec::new()
        },
        groups: if has(Level::Group) {
            sets_at(Level::Group)
        } else {
            Vec::new()
        },
        cores: core_sets,
        l3: caches(Level::L3),
        l2: caches(Level::L2),
        numa,
        distances: None,
        kinds: Vec::new(),
    };
    Topology::build(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn core_of(t: &Topology, cpu: u32) -> usize {
        t.pu(cpu).unwrap().core.unwrap()
    }

    #[test]
    fn two_by_24_by_2_linear() {
        let t = build("package:2 core:24 pu:2").unwrap();
        assert_eq!(
            t.summary(),
            "2 packages x 24 cores x 2 threads = 96 PUs, 1 NUMA node"
        );
        assert_eq!(core_of(&t, 0), core_of(&t, 1));
        assert_eq!(t.pu(48).unwrap().package, Some(1));
    }

    #[test]
    fn smt_last_puts_siblings_cores_apart() {
        let t = build("package:2 core:24 pu:2 numbering=smt-last").unwrap();
        assert_eq!(core_of(&t, 0), core_of(&t, 48));
        assert_eq!(t.pu(24).unwrap().package, Some(1));
    }

    #[test]
    fn interleaved_alternates_packages() {
        let t = build("package:2 numa:1 core:4 pu:2 numbering=interleaved").unwrap();
        assert_eq!(t.pu(0).unwrap().package, Some(0));
        assert_eq!(t.pu(1).unwrap().package, Some(1));
        assert_eq!(core_of(&t, 0), core_of(&t, 8));
        assert_eq!(t.numa_nodes.len(), 2);
    }

    #[test]
    fn bad_specs_say_why() {
        for (spec, needle) in [
            ("", "empty"),
            ("package:0 core:2", "positive"),
            ("package:2 frob:3", "unknown level"),
            ("core:2 package:2", "out of order"),
            ("package:2 core", "level:count"),
            ("package:2 core:2 numbering=weird", "unknown numbering"),
            ("package:1000 core:1000 pu:1000", "more than"),
        ] {
            let e = build(spec).unwrap_err().to_string();
            assert!(e.contains(needle), "{spec}: {e}");
        }
    }
}
