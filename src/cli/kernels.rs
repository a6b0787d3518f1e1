//! The flags of the commands that run one built-in kernel in this process: `mem`,
//! `sync`, `graph`, `npb` and `tpch`.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use scalescope_place::MemPolicy;
use scalescope_workloads::graph::count::Pattern;
use scalescope_workloads::sync::Sync;
use scalescope_workloads::tpch::Layout;

/// The sampler's default interval in milliseconds, as a sweep's.
const DEFAULT_SAMPLE_MS: u64 = scalescope_sampler::DEFAULT_INTERVAL.as_millis() as u64;

/// What every kernel command takes: how many threads, where they go, and JSON out.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Threads [default: every usable PU].
    #[arg(long, short = 't')]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub place: super::PlacementArgs,
    /// Print JSON (versioned; schema in docs/json.md) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The graph a `graph` command reads or generates.
#[derive(Debug, Args)]
pub struct GraphInput {
    /// A file (SNAP edge list, .el, Matrix Market .mtx, or a .csr cache) or
    /// kron:SCALE / uniform:SCALE.
    #[arg(long)]
    pub graph: String,
    /// Go ahead even when the memory estimate exceeds what is available.
    #[arg(long)]
    pub force: bool,
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
    pub size: Option<String>,
    /// Bytes chased per latency cell [default: 4 x the total last-level cache].
    #[arg(long)]
    pub latency_size: Option<String>,
    /// Passes per bandwidth cell and chases per latency cell; the best counts, the
    /// spread of all of them decides which distance levels are real.
    #[arg(long, default_value_t = 3)]
    pub passes: usize,
    /// Threads per CPU node for bandwidth [default: every usable PU of the node].
    #[arg(long)]
    pub threads_per_node: Option<usize>,
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
    pub max_size: Option<String>,
    /// Print JSON (versioned; schema in docs/json.md) instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct C2cArgs {
    /// CPUs to pair up (cpulist) [default: every usable CPU].
    #[arg(long)]
    pub cpus: Option<String>,
    /// NUMA node holding the shared cache line [default: where first touched].
    #[arg(long)]
    pub node: Option<u32>,
    /// Round trips per sample.
    #[arg(long, default_value_t = 1000)]
    pub round_trips: usize,
    /// Samples per pair (the first is a discarded warm-up).
    #[arg(long, default_value_t = 100)]
    pub samples: usize,
    /// Print JSON (versioned; schema in docs/json.md) instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SyncArgs {
    /// Slots in the shared table (fewer = more contention).
    #[arg(long, default_value_t = 4096)]
    pub table: usize,
    /// Batch sizes (updates per critical section).
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16,32,64")]
    pub batches: Vec<usize>,
    /// Updates per thread per measurement.
    #[arg(long, default_value_t = 200_000)]
    pub updates: usize,
    /// Stripes for striped locks.
    #[arg(long, default_value_t = 256)]
    pub stripes: usize,
    /// Repetitions of every (mechanism, batch) point, run in rounds; the fits use
    /// every repetition and give A and B 95% intervals.
    #[arg(long, default_value_t = 3)]
    pub reps: usize,
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
    pub input: GraphInput,
    /// The vertex to start from [default: the highest-degree vertex].
    #[arg(long)]
    pub source: Option<u32>,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub inputs: super::InputArgs,
}

#[derive(Debug, Args)]
pub struct GraphPrArgs {
    #[command(flatten)]
    pub input: GraphInput,
    /// Synchronisation of the score updates: pull (none needed), coarse-lock,
    /// striped-locks:K, atomic, htm.
    #[arg(long, default_value = "pull")]
    pub sync: Sync,
    /// Score updates per critical section or transaction.
    #[arg(long, default_value_t = 1)]
    pub batch: usize,
    /// Stop when the sum of absolute changes is below this.
    #[arg(long, default_value_t = 1e-4)]
    pub tolerance: f64,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub inputs: super::InputArgs,
}

#[derive(Debug, Args)]
pub struct GraphCountArgs {
    /// triangle, c4, diamond or k4.
    #[arg(long)]
    pub pattern: Pattern,
    /// Vertex-induced instead of non-induced (c4 and diamond).
    #[arg(long)]
    pub induced: bool,
    #[command(flatten)]
    pub input: GraphInput,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub inputs: super::InputArgs,
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
    /// Problem class: S, W, A or B (official verification values for each).
    #[arg(long, default_value = "S")]
    pub class: String,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Args)]
pub struct TpchArgs {
    /// q1 or q6.
    #[arg(value_parser = ["q1", "q6"])]
    pub query: String,
    /// Scale factor (reference answers exist for 0.01, 0.1 and 1).
    #[arg(long, default_value_t = 0.1)]
    pub sf: f64,
    /// numa: each thread builds (first-touches) the partition it scans; naive: one
    /// thread builds everything.
    #[arg(long, default_value = "numa")]
    pub layout: Layout,
    /// Read lineitem from a dbgen .tbl file instead of generating it.
    #[arg(long, value_name = "FILE")]
    pub tbl: Option<PathBuf>,
    /// Query runs; the fastest counts.
    #[arg(long, default_value_t = 5)]
    pub repeat: usize,
    /// Go ahead even when the memory estimate exceeds what is available.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub inputs: super::InputArgs,
}

#[derive(Debug, Args)]
pub struct StreamArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Memory policy: first-touch, interleave, bind:N, preferred:N or local.
    #[arg(long, default_value = "first-touch")]
    pub mem: MemPolicy,
    /// Bytes per array (`200MB`, `1GiB`) [default: 4 x the total last-level cache].
    #[arg(long)]
    pub size: Option<String>,
    /// Non-temporal (streaming) stores.
    #[arg(long)]
    pub nt: bool,
    /// Iterations; the best after the first counts.
    #[arg(long, default_value_t = 10)]
    pub ntimes: usize,
    /// Seconds of back-to-back sweeps the write, write_nt and read kernels each
    /// also run alone after the iterations, averaged over the block as likwid-bench
    /// measures (0: none); a trial of half as long again picks the read's loop.
    #[arg(long, default_value_t = 1.0)]
    pub sustain: f64,
    /// Milliseconds between evidence samples beside the kernels (CPU, pages per
    /// node, NUMA counters, bandwidth); 0 turns sampling off, so nothing but the
    /// workers runs while the ceilings are measured.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_SAMPLE_MS)]
    pub sample_interval: u64,
}
