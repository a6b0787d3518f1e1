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

/// The machine a spec describes: its levels and counts, and how PUs are numbered.
struct Shape {
    levels: Vec<(Level, usize)>,
    numbering: Numbering,
    total: usize,
    threads_per_core: usize,
    n_cores: usize,
    n_packages: usize,
}

impl Shape {
    fn new(levels: Vec<(Level, usize)>, numbering: Numbering) -> Shape {
        let total: usize = levels.iter().map(|(_, c)| c).product();
        let threads_per_core = levels.last().map(|l| l.1).unwrap_or(1);
        let mut shape = Shape {
            levels,
            numbering,
            total,
            threads_per_core,
            n_cores: total / threads_per_core,
            n_packages: 1,
        };
        if shape.has(Level::Package) {
            shape.n_packages = shape.position(total - 1, Level::Package) + 1;
        }
        shape
    }

    fn has(&self, level: Level) -> bool {
        self.levels.iter().any(|(l, _)| *l == level)
    }

    /// Hardware position of PU h: the index of its ancestor at `level`.
    fn position(&self, h: usize, level: Level) -> usize {
        let mut below = 1usize;
        for (l, c) in self.levels.iter().rev() {
            if *l == level {
                return h / below;
            }
            below *= c;
        }
        0
    }

    /// The OS number of PU h under the spec's numbering.
    fn os_index(&self, h: usize) -> u32 {
        let core = h / self.threads_per_core;
        let smt = h % self.threads_per_core;
        let v = match self.numbering {
            Numbering::Linear => h,
            Numbering::SmtLast => smt * self.n_cores + core,
            Numbering::Interleaved => {
                let per_pkg = self.n_cores / self.n_packages;
                let (pkg, local) = (core / per_pkg, core % per_pkg);
                smt * self.n_cores + local * self.n_packages + pkg
            }
        };
        v as u32
    }

    /// One domain per object at `level` (none if the spec has no such level).
    fn sets_at(&self, level: Level) -> Vec<RawDomain> {
        if !self.has(level) {
            return Vec::new();
        }
        let mut sets: Vec<RawDomain> = Vec::new();
        for h in 0..self.total {
            let p = self.position(h, level);
            if sets.len() <= p {
                sets.resize(p + 1, RawDomain::default());
            }
            sets[p].os_id = Some(p as u32);
            sets[p].cpus.insert(self.os_index(h));
        }
        sets
    }

    fn all(&self) -> CpuSet {
        (0..self.total).map(|h| self.os_index(h)).collect()
    }

    fn caches(&self, level: Level) -> Vec<RawCache> {
        self.sets_at(level)
            .into_iter()
            .map(|d| RawCache {
                size_bytes: None,
                line_bytes: None,
                cpus: d.cpus,
                reporter: None,
            })
            .collect()
    }

    /// The NUMA nodes: one per `numa` object, or one holding every PU.
    fn numa(&self) -> Vec<RawNode> {
        let node = |i: usize, cpus: CpuSet| RawNode {
            id: i as u32,
            cpus,
            memory_bytes: None,
            locality: None,
        };
        if !self.has(Level::Numa) {
            return vec![node(0, self.all())];
        }
        self.sets_at(Level::Numa)
            .into_iter()
            .enumerate()
            .map(|(i, d)| node(i, d.cpus))
            .collect()
    }

    /// The cores; core_id restarts in each package, as in sysfs.
    fn cores(&self) -> Vec<RawDomain> {
        let per_pkg = self.n_cores / self.n_packages;
        let mut v = vec![RawDomain::default(); self.n_cores];
        for h in 0..self.total {
            let core = h / self.threads_per_core;
            v[core].os_id = Some((core % per_pkg) as u32);
            v[core].cpus.insert(self.os_index(h));
        }
        v
    }
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
    let shape = Shape::new(levels, numbering);
    let all = shape.all();
    let raw = RawTopology {
        source: format!("synthetic:{spec}"),
        cpu_model: None,
        known: all.clone(),
        online: all.clone(),
        allowed: all,
        allowed_nodes: None,
        packages: shape.sets_at(Level::Package),
        dies: shape.sets_at(Level::Die),
        groups: shape.sets_at(Level::Group),
        cores: shape.cores(),
        l3: shape.caches(Level::L3),
        l2: shape.caches(Level::L2),
        numa: shape.numa(),
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
