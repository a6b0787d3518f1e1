//! The graph kernels' settings, typed once: `graph count|bfs|pr` flags and `sweep
//! --workload graph --param` keys are both these structs', with one set of
//! defaults. A sweep picks the kernel with `kernel=count|bfs|pr` ([`GraphSettings`]);
//! every other key is a flag of that kernel's command.

use std::collections::BTreeMap;

use scalescope_model::value::Count;

use super::count::Pattern;
use super::pagerank::Sync;
use super::workload::DEFAULT_TOLERANCE;
use crate::WorkloadError;

/// The graph a kernel runs on when none is named.
pub const DEFAULT_GRAPH: &str = "kron:14";
/// Largest scale of a generated graph (2^30 vertices).
pub const MAX_SCALE: u32 = 30;

/// What a graph argument names: `kron:SCALE` or `uniform:SCALE` (scale 1-30,
/// checked when parsed), or a file (SNAP edge list, `.el`, `.mtx`, `.csr`), read
/// when the kernel prepares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphSource(String);

impl GraphSource {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for GraphSource {
    type Err = String;
    fn from_str(s: &str) -> Result<GraphSource, String> {
        let scale = s
            .strip_prefix("kron:")
            .or_else(|| s.strip_prefix("uniform:"));
        if let Some(scale) = scale {
            let ok = scale
                .parse::<u32>()
                .is_ok_and(|v| (1..=MAX_SCALE).contains(&v));
            if !ok {
                return Err(format!("`{s}`: the scale must be 1-{MAX_SCALE}"));
            }
        }
        if s.is_empty() {
            return Err("no graph: name a file or kron:SCALE / uniform:SCALE".into());
        }
        Ok(GraphSource(s.to_string()))
    }
}

impl std::fmt::Display for GraphSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The graph a kernel reads or generates.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct GraphInput {
    /// A file (SNAP edge list, .el, Matrix Market .mtx, or a .csr cache) or
    /// kron:SCALE / uniform:SCALE.
    #[arg(long, default_value = DEFAULT_GRAPH)]
    pub graph: GraphSource,
    /// Go ahead even when the memory estimate exceeds what is available.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
        default_value_t = false, action = clap::ArgAction::Set)]
    pub force: bool,
}

/// `graph count`: an exact subgraph count.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct CountSettings {
    /// triangle, c4, diamond or k4.
    #[arg(long, default_value_t = Pattern::Diamond)]
    pub pattern: Pattern,
    /// Vertex-induced instead of non-induced (c4 and diamond).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
        default_value_t = false, action = clap::ArgAction::Set)]
    pub induced: bool,
    #[command(flatten)]
    pub input: GraphInput,
}

/// `graph bfs`: direction-optimizing BFS.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct BfsSettings {
    /// The vertex to start from [default: the highest-degree vertex].
    #[arg(long)]
    pub source: Option<u32>,
    /// Search the graph renumbered by degree (hubs first), made once when the input
    /// is prepared: faster searches, but a second copy of the graph in memory.
    /// `--renumber=false` searches the graph as read (one copy, as GAP holds it).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
        default_value_t = true, action = clap::ArgAction::Set)]
    pub renumber: bool,
    #[command(flatten)]
    pub input: GraphInput,
}

/// Score updates per critical section or transaction: a threshold, not an
/// allocation, so any count up to 10^12 (every update of the run in one section).
pub type Batch = Count<1, 1_000_000_000_000>;

/// PageRank's stopping tolerance: positive and finite.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Tolerance(f64);

impl Tolerance {
    pub const DEFAULT: Tolerance = Tolerance(DEFAULT_TOLERANCE);

    pub fn get(self) -> f64 {
        self.0
    }
}

impl std::str::FromStr for Tolerance {
    type Err = String;
    fn from_str(s: &str) -> Result<Tolerance, String> {
        match s.trim().parse::<f64>() {
            Ok(t) if t.is_finite() && t > 0.0 && t < 1e300 => Ok(Tolerance(t)),
            _ => Err(format!(
                "`{s}` is not a tolerance (a positive finite number, e.g. 1e-4)"
            )),
        }
    }
}

impl std::fmt::Display for Tolerance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// `graph pr`: PageRank, pull or push with a synchronisation mechanism.
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct PrSettings {
    /// Synchronisation of the score updates: pull (none needed), coarse-lock,
    /// striped-locks:K, atomic, htm.
    #[arg(long, default_value_t = Sync::Pull)]
    pub sync: Sync,
    /// Score updates per critical section or transaction.
    #[arg(long, default_value_t = Batch::clamped(1))]
    pub batch: Batch,
    /// Stop when the sum of absolute changes is below this.
    #[arg(long, default_value_t = Tolerance::DEFAULT)]
    pub tolerance: Tolerance,
    #[command(flatten)]
    pub input: GraphInput,
}

/// A graph kernel's settings, as a sweep names them: `kernel` picks which.
#[derive(Debug, Clone, PartialEq)]
pub enum GraphSettings {
    Count(CountSettings),
    Bfs(BfsSettings),
    Pr(PrSettings),
}

impl GraphSettings {
    /// From sweep parameters: `kernel` (count, bfs or pr; count when not given),
    /// every other key a flag of that kernel's command.
    ///
    /// # Errors
    /// [`WorkloadError::BadParam`] naming the parameter.
    pub fn from_params(params: &BTreeMap<String, String>) -> Result<GraphSettings, WorkloadError> {
        let mut rest = params.clone();
        let kernel = rest.remove("kernel");
        Ok(match kernel.as_deref().unwrap_or("count") {
            "count" => GraphSettings::Count(crate::params::parse("graph count", &rest)?),
            "bfs" => GraphSettings::Bfs(crate::params::parse("graph bfs", &rest)?),
            "pr" => GraphSettings::Pr(crate::params::parse("graph pr", &rest)?),
            other => {
                return Err(WorkloadError::param(
                    "kernel",
                    format!("`{other}` is not count, bfs or pr"),
                ))
            }
        })
    }

    /// The graph the kernel runs on.
    pub fn input(&self) -> &GraphInput {
        match self {
            GraphSettings::Count(s) => &s.input,
            GraphSettings::Bfs(s) => &s.input,
            GraphSettings::Pr(s) => &s.input,
        }
    }
}
