//! How the OS numbering maps onto the hardware, and where it would mislead.
//!
//! "Pin to CPUs 0-7" means eight cores on one package on one vendor's machine and
//! four hyper-threaded cores spread over two packages on another. This module states
//! the mapping in words and warns when a naive range `0..k-1` would not mean `k`
//! distinct cores on one package.

use serde::{Deserialize, Serialize};

use crate::cpuset::CpuSet;
use crate::model::Topology;

/// What a naive range of the first `k` usable CPU numbers really covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NaiveRange {
    pub threads: usize,
    pub cpus: CpuSet,
    pub cores: usize,
    pub packages: usize,
}

/// Plain-language facts and warnings about the numbering.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NumberingReport {
    pub facts: Vec<String>,
    pub warnings: Vec<String>,
    /// The first misleading range, if any (smallest `k`).
    pub first_misleading: Option<NaiveRange>,
}

impl NumberingReport {
    /// Examines the usable (online, allowed) PUs of `topo`.
    pub fn of(topo: &Topology) -> NumberingReport {
        let mut facts = Vec::new();
        let mut warnings = Vec::new();
        let usable: Vec<_> = topo.usable_pus().collect();
        facts.extend(package_pattern(topo, &usable));
        facts.push(smt_pattern(topo));
        if let Some(f) = numa_pattern(topo) {
            facts.push(f);
        }
        let cores_per_package = topo
            .cores
            .iter()
            .filter(|c| c.package == usable.first().and_then(|p| p.package))
            .filter(|c| {
                c.cpus
                    .iter()
                    .any(|cpu| topo.pu(cpu).is_some_and(|p| p.allowed))
            })
            .count();
        let naive = |k: usize| naive_range(topo, &usable, k);
        let first_misleading = (2..=cores_per_package.min(usable.len()))
            .map(naive)
            .find(|r| r.cores < r.threads || r.packages > 1);
        if let Some(r) = &first_misleading {
            warnings.push(format!(
                "a naive range is misleading here: CPUs {} (the first {} numbers) are {} core{} on {} package{}, not {} cores on one package; place by hardware position (--strategy compact or cores-first) instead",
                r.cpus, r.threads, r.cores, if r.cores == 1 { "" } else { "s" }, r.packages,
                if r.packages == 1 { "" } else { "s" }, r.threads
            ));
        }
        if usable.len() < topo.pus.iter().filter(|p| p.online).count() {
            let allowed: CpuSet = usable.iter().map(|p| p.cpu).collect();
            warnings.push(format!(
                "this process may use only CPUs {allowed} (cgroup cpuset or affinity); placements stay inside them"
            ));
        }
        NumberingReport {
            facts,
            warnings,
            first_misleading,
        }
    }
}

fn naive_range(topo: &Topology, usable: &[&crate::model::Pu], k: usize) -> NaiveRange {
    let chosen = &usable[..k];
    let count = |f: &dyn Fn(&crate::model::Pu) -> Option<usize>| {
        let mut v: Vec<usize> = chosen.iter().filter_map(|p| f(p)).collect();
        v.sort_unstable();
        v.dedup();
        v.len()
    };
    let _ = topo;
    NaiveRange {
        threads: k,
        cpus: chosen.iter().map(|p| p.cpu).collect(),
        cores: count(&|p| p.core),
        packages: count(&|p| p.package),
    }
}

fn package_pattern(topo: &Topology, usable: &[&crate::model::Pu]) -> Option<String> {
    if topo.packages.len() < 2 || usable.len() < 2 {
        return None;
    }
    let changes = usable
        .windows(2)
        .filter(|w| w[0].package != w[1].package)
        .count();
    let pairs = usable.len() - 1;
    Some(if changes * 2 > pairs {
        let first: Vec<String> = usable
            .iter()
            .take(4)
            .map(|p| format!("{} on package {}", p.cpu, p.package.unwrap_or(0)))
            .collect();
        format!(
            "consecutive CPU numbers alternate between packages ({}, ...)",
            first.join(", ")
        )
    } else {
        format!(
            "CPU numbers fill one package before the next ({} changes of package along {} CPUs)",
            changes,
            usable.len()
        )
    })
}

fn smt_pattern(topo: &Topology) -> String {
    let gaps: Vec<u32> = topo
        .cores
        .iter()
        .filter(|c| c.cpus.len() > 1)
        .map(|c| {
            let v: Vec<u32> = c.cpus.iter().take(2).collect();
            v[1] - v[0]
        })
        .collect();
    match gaps.first() {
        None => "no SMT: one PU per core".into(),
        Some(&g) if gaps.iter().all(|x| *x == g) && g == 1 => {
            "SMT siblings are adjacent (CPU n and n+1 share a core)".into()
        }
        Some(&g) if gaps.iter().all(|x| *x == g) => {
            format!("SMT siblings are {g} apart (CPU n and n+{g} share a core)")
        }
        Some(_) => {
            "SMT sibling numbering is irregular: the distance between siblings varies".into()
        }
    }
}

fn numa_pattern(topo: &Topology) -> Option<String> {
    let cpu_nodes = topo.cpu_numa_nodes();
    let packages = topo.packages.len();
    if cpu_nodes > packages && packages > 0 && cpu_nodes.is_multiple_of(packages) {
        Some(format!(
            "{} NUMA nodes per package (sub-NUMA clustering or similar)",
            cpu_nodes / packages
        ))
    } else if cpu_nodes > 1 && cpu_nodes < packages {
        Some(format!("{packages} packages share {cpu_nodes} NUMA nodes"))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::build;

    #[test]
    fn interleaved_dual_socket_warns() {
        let t = build("package:2 numa:1 core:24 pu:2 numbering=interleaved").unwrap();
        let r = NumberingReport::of(&t);
        assert!(
            r.facts[0].starts_with("consecutive CPU numbers alternate"),
            "{:?}",
            r.facts
        );
        assert_eq!(
            r.facts[1],
            "SMT siblings are 48 apart (CPU n and n+48 share a core)"
        );
        let m = r.first_misleading.unwrap();
        assert_eq!((m.threads, m.cores, m.packages), (2, 2, 2));
    }

    #[test]
    fn adjacent_siblings_warn_at_two() {
        let t = build("package:1 core:8 pu:2").unwrap();
        let r = NumberingReport::of(&t);
        assert_eq!(
            r.facts[0],
            "SMT siblings are adjacent (CPU n and n+1 share a core)"
        );
        let m = r.first_misleading.unwrap();
        assert_eq!((m.threads, m.cores), (2, 1));
    }

    #[test]
    fn smt_last_single_package_is_fine() {
        let t = build("package:2 core:8 pu:2 numbering=smt-last").unwrap();
        let r = NumberingReport::of(&t);
        assert!(r.first_misleading.is_none(), "{r:?}");
        assert!(r.warnings.is_empty());
    }
}
