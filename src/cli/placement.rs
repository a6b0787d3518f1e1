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

/// Indexes as a list (`0,2`, `0-1`): NUMA nodes or packages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexList(pub Vec<u32>);

impl std::str::FromStr for IndexList {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        CpuSet::parse_list(s)
            .map(|set| IndexList(set.iter().collect()))
            .map_err(|e| e.to_string())
    }
}

/// The placement options of `place` for a sweep: `--cpus` is one more placement,
/// the others apply to every placement (and are kept in the results header).
#[derive(Debug, Args, Clone, Default)]
pub struct SweepPlaceArgs {
    /// One more placement by CPUs, as in `place --cpus`: a likwid-pin expression
    /// (`S0:0-3@S1:0-3`, `N:0-7`) or a CPU list; the same as `--placement cpus=EXPR`.
    #[arg(long, value_name = "EXPR")]
    pub cpus: Option<String>,
    /// Restrict every placement to these NUMA nodes (OS indexes, e.g. `0,2` or `0-1`).
    #[arg(long, value_name = "LIST", conflicts_with = "packages")]
    pub numa_nodes: Option<IndexList>,
    /// Restrict every placement to these packages (logical indexes, e.g. `1`).
    #[arg(long, value_name = "LIST")]
    pub packages: Option<IndexList>,
    /// Bind each thread to one hardware thread (`thread`), or to all of its core's
    /// (`core`) [default: thread].
    #[arg(long, value_parser = ["thread", "core"])]
    pub granularity: Option<String>,
    /// Allow more threads than usable PUs (threads then share PUs).
    #[arg(long)]
    pub oversubscribe: bool,
}

impl SweepPlaceArgs {
    /// The options for every placement, `None` when no flag was given (so a resume
    /// can tell that none was).
    pub fn options(&self) -> Option<scalescope_results::plan::PlaceOptions> {
        let given = self.numa_nodes.is_some()
            || self.packages.is_some()
            || self.granularity.is_some()
            || self.oversubscribe;
        given.then(|| scalescope_results::plan::PlaceOptions {
            restriction: Restriction {
                numa_nodes: self.numa_nodes.clone().map(|l| l.0),
                packages: self
                    .packages
                    .clone()
                    .map(|l| l.0.into_iter().map(|p| p as usize).collect()),
            },
            granularity: self
                .granularity
                .as_deref()
                .and_then(|g| g.parse().ok())
                .unwrap_or_default(),
            oversubscribe: self.oversubscribe,
        })
    }

    /// The sweep's placements: the `--placement` list, then `--cpus` if given.
    pub fn placements(&self, list: Option<&[Strategy]>) -> Option<Vec<Strategy>> {
        let mut v: Option<Vec<Strategy>> = list.map(<[Strategy]>::to_vec);
        if let Some(expr) = &self.cpus {
            v.get_or_insert_with(Vec::new)
                .push(Strategy::Cpus(expr.clone()));
        }
        v
    }
}

impl super::PlaceArgs {
    /// Turns the flags into a checked request (no I/O).
    pub fn request(&self) -> anyhow::Result<PlaceRequest> {
        let strategy = match &self.cpus {
            Some(expr) => Strategy::Cpus(expr.clone()),
            None => self.strategy.parse()?,
        };
        let list = |flag: &str, v: &Option<String>| -> anyhow::Result<Option<Vec<u32>>> {
            v.as_ref()
                .map(|t| {
                    CpuSet::parse_list(t)
                        .map(|s| s.iter().collect())
                        .with_context(|| format!("--{flag} `{t}`"))
                })
                .transpose()
        };
        if self.threads.is_none() && self.cpus.is_none() {
            anyhow::bail!("--threads N is required (or name CPUs with --cpus EXPR)");
        }
        Ok(PlaceRequest {
            strategy,
            threads: self.threads,
            granularity: self.granularity.parse()?,
            restriction: Restriction {
                numa_nodes: list("numa-nodes", &self.numa_nodes)?,
                packages: list("packages", &self.packages)?
                    .map(|v| v.into_iter().map(|p| p as usize).collect()),
            },
            oversubscribe: self.oversubscribe,
        })
    }
}
