//! The flags of the commands that run one built-in kernel in this process: `mem`,
//! `sync`, `graph`, `npb` and `tpch`.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use scalescope_model::value::{Bytes, Count};
use scalescope_place::MemPolicy;
use scalescope_topo::CpuSet;
use scalescope_workloads::graph::settings::{BfsSettings, CountSettings, GraphInput, PrSettings};
use scalescope_workloads::mem::settings::StreamSettings;
use scalescope_workloads::npb::NpbSettings;
use scalescope_workloads::sync::workload::SyncSettings;
use scalescope_workloads::tpch::TpchSettings;

use super::placement::ThreadCount;

/// Milliseconds between evidence samples: 0 (none) to an hour.
pub type SampleMs = Count<0, 3_600_000>;

/// The sampler's default interval in milliseconds, as a sweep's.
pub const DEFAULT_SAMPLE_MS: SampleMs =
    SampleMs::clamped(scalescope_sampler::DEFAULT_INTERVAL.as_millis() as u64);

/// What every kernel command takes: how many threads, where they go, and JSON out.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Threads [default: every usable PU the placement options leave].
    #[arg(long, short = 't')]
    pub threads: Option<ThreadCount>,
    #[command(flatten)]
    pub place: super::PlacementArgs,
    /// Print JSON (versioned; schema in docs/json.md) instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum MemCommand {
    /// STREAM copy, scale, add and triad, and the write and read ceilings; validated; best-of-N GB/s.
    #[command(after_help = "\
Examples:
  scalescope mem stream
  scalescope mem stream --threads 2 --placement scatter --size 1GiB --json
  scalescope mem stream --threads 1 --mem bind:0 --nt")]
    Stream(StreamArgs),
    /// Bandwidth and latency from every CPU node to every memory node, clustered into
    /// distance levels and compared with the firmware's SLIT table.
    #[command(after_help = "\
Examples:
  scalescope mem matrix
  scalescope mem matrix --size 512MiB --json > matrix.json
  scalescope report matrix.json --out report")]
    Matrix(MatrixArgs),
    /// Load latency against working-set size, from 4 KiB to past 4x the last-level cache.
    #[command(after_help = "\
Examples:
  scalescope mem latency
  scalescope mem latency --cpu 3 --max-size 1GiB --json")]
    Latency(LatencyArgs),
    /// Core-to-core latency: CAS ping-pong on one cache line between every pair of CPUs.
    #[command(after_help = "\
Examples:
  scalescope mem c2c
  scalescope mem c2c --cpus 0,1,24,48 --node 1 --json")]
    C2c(C2cArgs),
}

#[derive(Debug, Args)]
pub struct MatrixArgs {
    /// Bytes read per bandwidth cell [default: 4 x the total last-level cache].
    #[arg(long)]
    pub size: Option<Bytes>,
    /// Bytes chased per latency cell [default: 4 x the total last-level cache].
    #[arg(long)]
    pub latency_size: Option<Bytes>,
    /// Passes per bandwidth cell and chases per latency cell; the best counts, the
    /// spread of all of them decides which distance levels are real.
    #[arg(long, default_value_t = Count::clamped(3))]
    pub passes: Count<1, 1000>,
    /// Threads per CPU node for bandwidth [default: every usable PU of the node].
    #[arg(long)]
    pub threads_per_node: Option<ThreadCount>,
    /// Go ahead even when the memory estimate exceeds what is available.
    #[arg(long)]
    pub force: bool,
    /// Print JSON (versioned; schema in docs/json.md) instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct LatencyArgs {
    /// CPU to measure from [default: the first usable].
    #[arg(long)]
    pub cpu: Option<u32>,
    /// Largest working set [default: 8 x the total last-level cache].
    #[arg(long)]
    pub max_size: Option<Bytes>,
    /// Go ahead even when the memory estimate exceeds what is available.
    #[arg(long)]
    pub force: bool,
    /// Print JSON (versioned; schema in docs/json.md) instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct C2cArgs {
    /// CPUs to pair up (cpulist) [default: every usable CPU].
    #[arg(long, value_parser = cpu_set)]
    pub cpus: Option<CpuSet>,
    /// NUMA node holding the shared cache line [default: where first touched].
    #[arg(long)]
    pub node: Option<u32>,
    /// Round trips per sample.
    #[arg(long, default_value_t = Count::clamped(1000))]
    pub round_trips: Count<1, 1_000_000_000>,
    /// Samples per pair (the first is a discarded warm-up).
    #[arg(long, default_value_t = Count::clamped(100))]
    pub samples: Count<2, 1_000_000>,
    /// Print JSON (versioned; schema in docs/json.md) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// A CPU list (`0,1,24,48`, `0-3`).
fn cpu_set(s: &str) -> Result<CpuSet, String> {
    CpuSet::parse_list(s).map_err(|e| e.to_string())
}

#[derive(Debug, Args)]
pub struct SyncArgs {
    #[command(flatten)]
    pub settings: SyncSettings,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Subcommand)]
pub enum GraphCommand {
    /// Count triangles, 4-cycles, diamonds (chordal 4-cycles) or 4-cliques, exactly.
    #[command(after_help = "\
Examples:
  scalescope graph count --pattern triangle --graph kron:16
  scalescope graph count --pattern diamond --graph friendster.txt --threads 2 --json
  scalescope graph count --pattern c4 --induced --graph web.mtx")]
    Count(GraphCountArgs),
    /// Direction-optimizing BFS from a source; parent tree verified; TEPS.
    #[command(after_help = "\
Examples:
  scalescope graph bfs --graph kron:18 --threads 2
  scalescope graph bfs --graph web.mtx --source 0 --json")]
    Bfs(GraphBfsArgs),
    /// PageRank (GAP: damping 0.85, tolerance 1e-4): pull, or push with --sync
    /// coarse-lock|striped-locks:K|atomic|htm and --batch updates per critical section.
    #[command(after_help = "\
Examples:
  scalescope graph pr --graph kron:18
  scalescope graph pr --graph kron:16 --sync striped-locks:1024 --batch 8 --json
  scalescope graph pr --graph kron:16 --sync htm      (says so where RTM is absent)")]
    Pr(GraphPrArgs),
    /// Write a graph (e.g. a generated Kronecker graph) as an edge list, `u v` with
    /// u < v, one undirected edge a line, so other tools can read the same graph; or,
    /// with an `.csr` output, as a checked binary cache that reloads without parsing.
    #[command(after_help = "\
Examples:
  scalescope graph export --graph kron:16 --out kron16.el
  scalescope graph export --graph big.txt --out big.csr && scalescope graph bfs --graph big.csr")]
    Export(GraphExportArgs),
}

/// Trials of a graph kernel in one process, as GAP's `-n`.
#[derive(Debug, Args)]
pub struct TrialArgs {
    /// Run the kernel this many times on the input prepared once, in this process,
    /// each trial timed: the first (cold: page faults, the workers' first wake-up)
    /// is shown apart from the warm ones' mean and median (GAP's `-n`).
    #[arg(long, default_value_t = Count::clamped(1))]
    pub trials: Count<1, 100_000>,
}

#[derive(Debug, Args)]
pub struct GraphExportArgs {
    #[command(flatten)]
    pub input: GraphInput,
    /// Where to write: an edge list, or a binary cache when it ends in `.csr`.
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub struct GraphBfsArgs {
    #[command(flatten)]
    pub settings: BfsSettings,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub inputs: super::InputArgs,
    #[command(flatten)]
    pub trials: TrialArgs,
}

#[derive(Debug, Args)]
pub struct GraphPrArgs {
    #[command(flatten)]
    pub settings: PrSettings,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub inputs: super::InputArgs,
    #[command(flatten)]
    pub trials: TrialArgs,
}

#[derive(Debug, Args)]
pub struct GraphCountArgs {
    #[command(flatten)]
    pub settings: CountSettings,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub inputs: super::InputArgs,
    #[command(flatten)]
    pub trials: TrialArgs,
}

#[derive(Debug, Subcommand)]
pub enum NpbCommand {
    /// EP: Gaussian pairs from NPB's generator; Mop/s by the official formula.
    #[command(after_help = "\
Examples:
  scalescope npb ep --class S
  scalescope npb ep --class A --threads 2 --placement scatter --json
  scalescope sweep --workload ep --param class=W --threads 1,2")]
    Ep(NpbArgs),
    /// IS: integer sort by ranking; partial and full verification; Mop/s.
    #[command(after_help = "\
Examples:
  scalescope npb is --class S
  scalescope npb is --class A --threads 2 --json
  scalescope sweep --workload is --param class=W --threads 1,2")]
    Is(NpbArgs),
    /// FT: 3-D FFT solution of the heat equation; checksums per iteration verified.
    #[command(after_help = "\
Examples:
  scalescope npb ft --class S
  scalescope npb ft --class A --threads 2 --json")]
    Ft(NpbArgs),
}

#[derive(Debug, Args)]
pub struct NpbArgs {
    #[command(flatten)]
    pub settings: NpbSettings,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Args)]
pub struct TpchArgs {
    #[command(flatten)]
    pub settings: TpchSettings,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub inputs: super::InputArgs,
}

#[derive(Debug, Args)]
pub struct StreamArgs {
    #[command(flatten)]
    pub settings: StreamSettings,
    #[command(flatten)]
    pub run: RunArgs,
    /// Memory policy: first-touch, interleave, bind:N, preferred:N or local.
    #[arg(long, default_value = "first-touch")]
    pub mem: MemPolicy,
    /// Milliseconds between evidence samples beside the kernels (CPU, pages per
    /// node, NUMA counters, bandwidth); 0 turns sampling off, so nothing but the
    /// workers runs while the ceilings are measured.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_SAMPLE_MS)]
    pub sample_interval: SampleMs,
}
