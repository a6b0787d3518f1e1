//! Where threads go, as flags: one strategy (`--placement`, also spelled
//! `--strategy`) or CPUs (`--cpus`), and the options every placement takes (NUMA
//! nodes, packages, granularity, oversubscription), all typed when parsed.
//! `place` and the in-process workload commands flatten [`PlacementArgs`]; `sweep`
//! takes a list of strategies under the same flag and flattens
//! [`PlaceOptionsArgs`]; `mpi-check` takes the strategy under the same flag.
//! Parsing only; `request` turns them into the library's request for a machine.

use clap::Args;
use scalescope_model::value::Count;
use scalescope_place::{Granularity, PlaceRequest, Restriction, Strategy};
use scalescope_topo::{CpuSet, NodeSet, Topology};

/// A thread count a flag takes: 1 to 100,000.
pub type ThreadCount = Count<1, 100_000>;

/// The options of every placement: the NUMA nodes or packages it may use, what a
/// thread is bound to, and whether threads may share PUs.
#[derive(Debug, Args, Clone, Default, PartialEq)]
pub struct PlaceOptionsArgs {
    /// Use only these NUMA nodes (OS indexes, e.g. `0,2` or `0-1`).
    #[arg(long, value_name = "LIST", conflicts_with = "packages", value_parser = node_set)]
    pub numa_nodes: Option<NodeSet>,
    /// Use only these packages (logical indexes in hardware order, e.g. `1`).
    #[arg(long, value_name = "LIST")]
    pub packages: Option<IndexList>,
    /// Bind each thread to one hardware thread (`thread`), or to all of its
    /// core's (`core`) [default: thread].
    #[arg(long, value_name = "thread|core")]
    pub granularity: Option<Granularity>,
    /// Allow more threads than usable PUs (threads then share PUs).
    #[arg(long)]
    pub oversubscribe: bool,
}

impl PlaceOptionsArgs {
    /// The NUMA nodes or packages the flags allow.
    pub fn restriction(&self) -> Restriction {
        Restriction {
            numa_nodes: self.numa_nodes.as_ref().map(|n| n.iter().collect()),
            packages: self
                .packages
                .as_ref()
                .map(|l| l.0.iter().map(|&p| p as usize).collect()),
        }
    }

    /// The options, `None` when no flag was given (so a resume can tell that none
    /// was).
    pub fn given(&self) -> Option<scalescope_model::plan::PlaceOptions> {
        let given = self.numa_nodes.is_some()
            || self.packages.is_some()
            || self.granularity.is_some()
            || self.oversubscribe;
        given.then(|| scalescope_model::plan::PlaceOptions {
            restriction: self.restriction(),
            granularity: self.granularity.unwrap_or_default(),
            oversubscribe: self.oversubscribe,
        })
    }
}

/// One placement: a strategy, or the CPUs `--cpus` names, with its options.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct PlacementArgs {
    /// Placement strategy: compact, scatter, cores-first, smt-pairs or spread (see
    /// `scalescope place`).
    #[arg(
        long = "placement",
        visible_alias = "strategy",
        short = 'p',
        short_alias = 's',
        value_name = "STRATEGY",
        default_value_t = Strategy::CoresFirst,
        conflicts_with = "cpus"
    )]
    pub strategy: Strategy,
    /// The CPUs to use instead of a strategy: a likwid-pin expression
    /// (`S0:0-3@S1:0-3`, `N:0-7`, `M0:0-1`, `E:S0:4:1:2`, `S:scatter`) or a CPU
    /// list (`0-3,8`).
    #[arg(long, value_name = "EXPR")]
    pub cpus: Option<String>,
    #[command(flatten)]
    pub options: PlaceOptionsArgs,
}

impl Default for PlacementArgs {
    /// What the flags say when none is given: cores-first on every usable PU.
    fn default() -> Self {
        PlacementArgs {
            strategy: Strategy::CoresFirst,
            cpus: None,
            options: PlaceOptionsArgs::default(),
        }
    }
}

impl PlacementArgs {
    /// The strategy the flags name (`--cpus` is a strategy of its own).
    pub fn strategy(&self) -> Strategy {
        match &self.cpus {
            Some(expr) => Strategy::Cpus(expr.clone()),
            None => self.strategy.clone(),
        }
    }

    /// The request for `threads` threads on `topo`; without a count, one thread per
    /// CPU that `--cpus` names, else per usable PU the restriction leaves.
    pub fn request(&self, topo: &Topology, threads: Option<ThreadCount>) -> PlaceRequest {
        let restriction = self.options.restriction();
        let threads = match (threads, &self.cpus) {
            (Some(t), _) => Some(t.usize()),
            (None, Some(_)) => None,
            (None, None) => Some(usable_within(topo, &restriction)),
        };
        PlaceRequest {
            strategy: self.strategy(),
            threads,
            granularity: self.options.granularity.unwrap_or_default(),
            restriction,
            oversubscribe: self.options.oversubscribe,
        }
    }
}

/// Usable PUs the restriction leaves (at least one, so the library can say why
/// none fits).
fn usable_within(topo: &Topology, r: &Restriction) -> usize {
    topo.usable_pus()
        .filter(|p| {
            r.numa_nodes
                .as_ref()
                .is_none_or(|n| p.numa_node.is_some_and(|x| n.contains(&x)))
                && r.packages
                    .as_ref()
                    .is_none_or(|k| p.package.is_some_and(|x| k.contains(&x)))
        })
        .count()
        .max(1)
}

/// Indexes as a list (`0,2`, `0-1`): packages.
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

/// A NUMA node list (`0,2`, `0-1`).
fn node_set(s: &str) -> Result<NodeSet, String> {
    NodeSet::parse_list(s).map_err(|e| e.to_string())
}

/// The placement options of a sweep: `--cpus` is one more placement, the others
/// apply to every placement (and are kept in the results header).
#[derive(Debug, Args, Clone, Default)]
pub struct SweepPlaceArgs {
    /// One more placement by CPUs, as in `place --cpus`: a likwid-pin expression
    /// (`S0:0-3@S1:0-3`, `N:0-7`) or a CPU list; the same as `--placement cpus=EXPR`.
    #[arg(long, value_name = "EXPR")]
    pub cpus: Option<String>,
    #[command(flatten)]
    pub options: PlaceOptionsArgs,
}

impl SweepPlaceArgs {
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
    pub fn request(&self, topo: &Topology) -> anyhow::Result<PlaceRequest> {
        if self.threads.is_none() && self.place.cpus.is_none() {
            anyhow::bail!("--threads N is required (or name CPUs with --cpus EXPR)");
        }
        Ok(self.place.request(topo, self.threads))
    }
}
