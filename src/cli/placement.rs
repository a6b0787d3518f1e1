//! The placement options every in-process workload shares with `place`: a strategy
//! or a CPU expression, restricted to NUMA nodes or packages, at thread or core
//! granularity, oversubscribed if asked. Parsing only; `request` turns them into
//! the library's request for a machine.

use anyhow::Context;
use clap::Args;
use scalescope_place::{PlaceRequest, Restriction, Strategy};
use scalescope_topo::{CpuSet, Topology};

#[derive(Debug, Args, Clone)]
pub struct PlacementArgs {
    /// Placement strategy: compact, scatter, cores-first, smt-pairs or spread (see
    /// `scalescope place`).
    #[arg(
        long,
        short = 'p',
        default_value = "cores-first",
        conflicts_with = "cpus"
    )]
    pub placement: String,
    /// The CPUs to use instead of a strategy: a likwid-pin expression
    /// (`S0:0-3@S1:0-3`, `N:0-7`, `E:S0:4:1:2`) or a CPU list (`0-3,8`).
    #[arg(long, value_name = "EXPR")]
    pub cpus: Option<String>,
    /// Use only these NUMA nodes (OS indexes, e.g. `0,2` or `0-1`).
    #[arg(long, value_name = "LIST", conflicts_with = "packages")]
    pub numa_nodes: Option<String>,
    /// Use only these packages (logical indexes in hardware order, e.g. `1`).
    #[arg(long, value_name = "LIST")]
    pub packages: Option<String>,
    /// Bind each thread to one hardware thread (`thread`), or to all of its core's (`core`).
    #[arg(long, default_value = "thread", value_parser = ["thread", "core"])]
    pub granularity: String,
    /// Allow more threads than usable PUs (threads then share PUs).
    #[arg(long)]
    pub oversubscribe: bool,
}

impl PlacementArgs {
    /// The strategy the flags name (`--cpus` is a strategy of its own).
    pub fn strategy(&self) -> anyhow::Result<Strategy> {
        Ok(match &self.cpus {
            Some(expr) => Strategy::Cpus(expr.clone()),
            None => self
                .placement
                .parse()
                .with_context(|| format!("--placement `{}`", self.placement))?,
        })
    }

    /// The request for `threads` threads on `topo`; without a count, one thread per
    /// CPU that `--cpus` names, else per usable PU the restriction leaves.
    pub fn request(&self, topo: &Topology, threads: Option<usize>) -> anyhow::Result<PlaceRequest> {
        let list = |flag: &str, v: &Option<String>| -> anyhow::Result<Option<Vec<u32>>> {
            v.as_ref()
                .map(|t| {
                    CpuSet::parse_list(t)
                        .map(|s| s.iter().collect())
                        .with_context(|| format!("--{flag} `{t}`"))
                })
                .transpose()
        };
        let restriction = Restriction {
            numa_nodes: list("numa-nodes", &self.numa_nodes)?,
            packages: list("packages", &self.packages)?
                .map(|v| v.into_iter().map(|p| p as usize).collect()),
        };
        let threads = match (threads, &self.cpus) {
            (Some(t), _) => Some(t),
            (None, Some(_)) => None,
            (None, None) => Some(
                topo.usable_pus()
                    .filter(|p| {
                        restriction
                            .numa_nodes
                            .as_ref()
                            .is_none_or(|n| p.numa_node.is_some_and(|x| n.contains(&x)))
                            && restriction
                                .packages
                                .as_ref()
                                .is_none_or(|k| p.package.is_some_and(|x| k.contains(&x)))
                    })
                    .count()
                    .max(1),
            ),
        };
        Ok(PlaceRequest {
            strategy: self.strategy()?,
            threads,
            granularity: self.granularity.parse()?,
            restriction,
            oversubscribe: self.oversubscribe,
        })
    }
}

impl Default for PlacementArgs {
    /// What the flags say when none is given: cores-first on every usable PU.
    fn default() -> Self {
        PlacementArgs {
            placement: "cores-first".into(),
            cpus: None,
            numa_nodes: None,
            packages: None,
            granularity: "thread".into(),
            oversubscribe: false,
        }
    }
}
