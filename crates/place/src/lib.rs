//! Where each thread runs: placement strategies that choose CPUs by hardware position
//! (package, core, hardware thread), never by OS number; likwid-pin expressions;
//! renderings of a placement for the tools people already use (OpenMP, Intel,
//! likwid, taskset, numactl, Open MPI, Slurm); and the pinning syscalls.
//!
//! A placement is computed from a [`Topology`] alone, so a 96-PU machine's placement
//! can be planned and tested on a laptop.

pub mod launch;
pub mod likwid;
pub mod mempolicy;
pub mod pin;
pub mod render;
pub mod runtime;
mod strategy;

use std::fmt;
use std::str::FromStr;

use scalescope_topo::{CpuSet, Topology};
use serde::{Deserialize, Serialize};

pub use mempolicy::MemPolicy;
pub use runtime::RuntimeBind;
pub use strategy::place;

/// How threads are assigned to hardware.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Strategy {
    /// Intel KMP_AFFINITY `compact`: fill a core's hardware threads, then the next
    /// core, then the next package.
    Compact,
    /// Intel KMP_AFFINITY `scatter`: round-robin over packages, then cores, then
    /// hardware threads.
    Scatter,
    /// One thread per physical core, a package at a time; SMT siblings only once
    /// every core has a thread.
    CoresFirst,
    /// Threads 2k and 2k+1 share core k (forced hyper-threading).
    SmtPairs,
    /// OpenMP `spread` over the places `cores`.
    Spread,
    /// A likwid-pin expression or a plain CPU list.
    Cpus(String),
    /// The program's OpenMP runtime places its own threads (`runtime:NAME`); the
    /// placement is the plan of the same name the runtime is checked against.
    Runtime(RuntimeBind),
}

/// The named strategies, for help texts and error messages.
pub const STRATEGY_NAMES: [&str; 5] = ["compact", "scatter", "cores-first", "smt-pairs", "spread"];

impl FromStr for Strategy {
    type Err = PlaceError;
    fn from_str(s: &str) -> Result<Self, PlaceError> {
        Ok(match s {
            "compact" => Strategy::Compact,
            "scatter" => Strategy::Scatter,
            "cores-first" => Strategy::CoresFirst,
            "smt-pairs" => Strategy::SmtPairs,
            "spread" => Strategy::Spread,
            other => match other.strip_prefix("cpus=") {
                Some(expr) => Strategy::Cpus(expr.to_string()),
                None if other.starts_with("runtime:") => {
                    Strategy::Runtime(other.trim_start_matches("runtime:").parse()?)
                }
                None => {
                    return Err(PlaceError::UnknownStrategy {
                        name: other.to_string(),
                    })
                }
            },
        })
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Strategy::Compact => f.write_str("compact"),
            Strategy::Scatter => f.write_str("scatter"),
            Strategy::CoresFirst => f.write_str("cores-first"),
            Strategy::SmtPairs => f.write_str("smt-pairs"),
            Strategy::Spread => f.write_str("spread"),
            Strategy::Cpus(e) => write!(f, "cpus={e}"),
            Strategy::Runtime(b) => write!(f, "runtime:{b}"),
        }
    }
}

impl From<Strategy> for String {
    fn from(s: Strategy) -> String {
        s.to_string()
    }
}

impl TryFrom<String> for Strategy {
    type Error = PlaceError;
    fn try_from(s: String) -> Result<Self, PlaceError> {
        s.parse()
    }
}

/// What one thread is bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Granularity {
    /// A single hardware thread.
    #[default]
    Thread,
    /// Every hardware thread of the chosen core.
    Core,
}

impl FromStr for Granularity {
    type Err = PlaceError;
    fn from_str(s: &str) -> Result<Self, PlaceError> {
        match s {
            "thread" | "fine" => Ok(Granularity::Thread),
            "core" => Ok(Granularity::Core),
            other => Err(PlaceError::BadValue {
                what: "granularity",
                value: other.into(),
                expected: "core or thread",
            }),
        }
    }
}

impl fmt::Display for Granularity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Granularity::Thread => "thread",
            Granularity::Core => "core",
        })
    }
}

/// Which part of the machine a strategy may use.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Restriction {
    /// NUMA node OS indexes.
    pub numa_nodes: Option<Vec<u32>>,
    /// Package logical indexes (hardware order, like likwid's `S0`, `S1`).
    pub packages: Option<Vec<usize>>,
}

/// Everything a placement needs besides the topology.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlaceRequest {
    pub strategy: Strategy,
    /// `None` with a CPU expression: one thread per CPU the expression names.
    pub threads: Option<usize>,
    pub granularity: Granularity,
    pub restriction: Restriction,
    /// Allow more threads than usable PUs (they wrap around).
    pub oversubscribe: bool,
}

/// The thread count every command and sweep defaults to: one thread per usable CPU
/// (online and allowed to this process). The one place that default is worked out.
pub fn every_usable_cpu(topo: &scalescope_topo::Topology) -> usize {
    topo.usable_cpus().len()
}

impl PlaceRequest {
    pub fn new(strategy: Strategy, threads: usize) -> Self {
        PlaceRequest {
            strategy,
            threads: Some(threads),
            granularity: Granularity::Thread,
            restriction: Restriction::default(),
            oversubscribe: false,
        }
    }
}

/// The CPUs each thread gets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    pub strategy: Strategy,
    pub granularity: Granularity,
    /// `threads[i]` is the CPU set of thread `i`.
    pub threads: Vec<CpuSet>,
}

impl Placement {
    /// Every CPU any thread may use.
    pub fn all_cpus(&self) -> CpuSet {
        self.threads
            .iter()
            .fold(CpuSet::new(), |acc, s| acc.union(s))
    }

    /// The first CPU of each thread's set (for tools that take one CPU per thread).
    pub fn first_cpus(&self) -> Vec<u32> {
        self.threads.iter().filter_map(|s| s.first()).collect()
    }

    /// NUMA nodes the placement's CPUs belong to.
    pub fn numa_nodes(&self, topo: &Topology) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .all_cpus()
            .iter()
            .filter_map(|c| topo.pu(c).and_then(|p| p.numa_node))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// The most threads one usable PU may carry when oversubscribing.
pub const MAX_THREADS_PER_PU: usize = 64;

/// The most threads any placement may have, however large the machine.
pub const MAX_THREADS: usize = 1 << 20;

/// The most threads a placement over `usable_pus` PUs may have (with
/// oversubscription; without it the limit is `usable_pus` itself).
pub fn max_threads(usable_pus: usize) -> usize {
    usable_pus
        .saturating_mul(MAX_THREADS_PER_PU)
        .clamp(1, MAX_THREADS)
}

/// Why a placement could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlaceError {
    #[error("unknown strategy `{name}` (expected compact, scatter, cores-first, smt-pairs, spread, or cpus=LIST such as cpus=0-3)")]
    UnknownStrategy { name: String },
    #[error("{what} `{value}` is not valid (expected {expected})")]
    BadValue {
        what: &'static str,
        value: String,
        expected: &'static str,
    },
    #[error("0 threads requested: ask for at least 1")]
    ZeroThreads,
    #[error("{requested} threads requested but only {available} usable PUs{where_} (oversubscription is off)")]
    TooManyThreads {
        requested: usize,
        available: usize,
        where_: String,
    },
    /// Even with oversubscription, a placement is one CPU set per thread: past
    /// [`max_threads`] it would be absurdly large (and no run could use it).
    #[error("{requested} threads requested, more than the limit of {limit} ({MAX_THREADS_PER_PU} per usable PU, at most {MAX_THREADS}) for {available} usable PUs")]
    ThreadsOverLimit {
        requested: usize,
        limit: usize,
        available: usize,
    },
    #[error("no usable PU in {what}")]
    EmptyRestriction { what: String },
    #[error(
        "smt-pairs needs cores with 2 hardware threads, but every usable core here has 1 (no SMT)"
    )]
    NoSmt,
    #[error("bad CPU expression `{expr}`: {detail}")]
    BadExpression { expr: String, detail: String },
}
