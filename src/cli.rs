//! The command line: every flag, its help and its examples. Parsing does no I/O; the
//! commands turn these values into library requests.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use scalescope_analysis::summary::Baseline;
use scalescope_place::{MemPolicy, Strategy};
use scalescope_results::plan::{List, ThreadList};
use scalescope_results::store::MetricSpec;
use scalescope_session::settings::{key_value, SweepSettings, Target};

const ABOUT: &str =
    "Why does my parallel program stop scaling? Finds the machine's true topology, \
places threads portably, and explains the speedup curve.";

const EXAMPLES: &str = "\
Examples:
  scalescope                               run the tour on this machine
  scalescope topo                          this machine's topology and numbering traps
  scalescope topo --synthetic 'package:2 core:24 pu:2 numbering=interleaved'
  scalescope place --strategy cores-first --threads 8
  scalescope place --cpus 'S0:0-3@S1:0-3' --json";

#[derive(Debug, Parser)]
#[command(name = "scalescope", version, about = ABOUT, after_help = EXAMPLES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show the machine as it really is: packages, NUMA nodes, caches, cores, SMT
    /// siblings, offline and forbidden CPUs, distances, and where the numbering misleads.
    #[command(after_help = "\
Examples:
  scalescope topo
  scalescope topo --json > machine.json
  scalescope topo --sysfs-root ./recorded-tree
  scalescope topo --hwloc-xml lstopo-output.xml
  scalescope topo --synthetic 'package:2 numa:1 core:24 pu:2 numbering=smt-last'")]
    Topo(TopoArgs),
    /// Compute where each thread goes under a strategy, and print it in the syntax of
    /// OpenMP, Intel OpenMP, likwid-pin, taskset, numactl, Open MPI and Slurm.
    #[command(after_help = "\
Examples:
  scalescope place --strategy compact --threads 4
  scalescope place --strategy scatter --threads 16 --granularity core
  scalescope place --strategy smt-pairs --threads 16 --synthetic 'package:2 core:24 pu:2'
  scalescope place --cpus 'E:S0:4:1:2' --json
  scalescope place --strategy cores-first --threads 8 --numa-nodes 1")]
    Place(PlaceArgs),
    /// Run a program or a built-in workload across thread counts x placements x memory
    /// policies, with repetitions, verified pinning and results that survive.
    #[command(after_help = "\
Examples:
  scalescope sweep --threads 1,2 --reps 5 -- ./my_omp_program --size 1000
  scalescope sweep --threads pow2 --placement compact,scatter -- ./bench {threads}
  scalescope sweep --workload stream --param size=256MiB --threads 1..2
  scalescope sweep --metric 'mops=Mop/s\\s*=\\s*([0-9.]+)' --out runs/ep -- ./ep.A.x
  scalescope sweep --resume --out runs/ep
  scalescope sweep --dry-run --synthetic 'package:2 core:24 pu:2' --threads 24,48 -- ./app

In arguments, {threads}, {cpus}, {places} and {thread_cpus} are replaced per run.
Exit status: 0 all runs ok, 3 some runs failed, 130 interrupted (results kept).")]
    Sweep(Box<SweepArgs>),
    /// Explain a sweep: speedup, efficiency, serial fraction, Amdahl and USL fits,
    /// knees attributed to the topology, hyper-threading yield, findings.
    #[command(after_help = "\
Examples:
  scalescope analyze runs/ep/results.jsonl
  scalescope analyze runs/ep/results.jsonl --json
  scalescope analyze results.jsonl --basis time")]
    Analyze(AnalyzeArgs),
    /// Write a self-contained HTML report (and each chart as SVG, and the tidy CSV).
    #[command(after_help = "\
Examples:
  scalescope report runs/ep/results.jsonl --out report
  scalescope report laptop.jsonl server.jsonl --out both")]
    Report(ReportArgs),
    /// The same sweep on two machines or two versions, point by point, with ratios
    /// and whether each difference is significant (Welch's t-test, p < 0.05).
    #[command(after_help = "\
Examples:
  scalescope compare before/results.jsonl after/results.jsonl
  scalescope compare a.jsonl b.jsonl --json")]
    Compare(CompareArgs),
    /// Memory-subsystem workloads.
    #[command(subcommand)]
    Mem(MemCommand),
    /// NAS Parallel Benchmarks kernels, verified against the official values.
    #[command(subcommand)]
    Npb(NpbCommand),
    /// TPC-H Q1 or Q6 on an in-memory columnar lineitem, partitioned per thread.
    #[command(after_help = "\
Examples:
  scalescope tpch q1 --sf 0.1
  scalescope tpch q6 --sf 1 --threads 2 --layout naive --json
  scalescope tpch q1 --tbl lineitem.tbl --sf 0.01
  scalescope sweep --workload tpch --param query=q6 --param sf=0.1 --threads 1,2")]
    Tpch(TpchArgs),
    /// Graph workloads: subgraph counting on generated or loaded graphs.
    #[command(subcommand)]
    Graph(GraphCommand),
    /// Synchronisation study: batches of N updates per critical section (coarse lock,
    /// striped locks, atomics, RTM where available), BFS-style and PageRank-style;
    /// fits T(N) = A*N + B per mechanism and reports the best batch size.
    #[command(after_help = "\
Examples:
  scalescope sync
  scalescope sync --table 64 --batches 1,2,4,8,16,32 --json     (high contention)")]
    Sync(SyncArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_help = "\
Examples:
  scalescope completions bash > ~/.local/share/bash-completion/completions/scalescope
  scalescope completions zsh > ~/.zfunc/_scalescope")]
    Completions(CompletionsArgs),
    /// Print the man page (roff), generated from these definitions.
    #[command(after_help = "\
Examples:
  scalescope man > scalescope.1 && man ./scalescope.1")]
    Man,
    /// Runs one built-in workload pinned as given (what sweeps start for --workload).
    #[command(name = "__workload", hide = true)]
    WorkloadChild(WorkloadChildArgs),
    /// Waits for its stdin to close (scalescope ended, however), then kills every
    /// process marked with TOKEN (what a sweep starts once).
    #[command(name = "__guard", hide = true)]
    Guard { token: String },
}

#[derive(Debug, Subcommand)]
pub enum MemCommand {
    /// STREAM copy, scale, add, triad and a read-only sum; validated; best-of-N GB/s.
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
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// A sweep's results.jsonl.
    pub results: PathBuf,
    /// `time`, or `metric:NAME` [default: the sweep's figure of merit, else time].
    #[arg(long)]
    pub basis: Option<String>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Sweeps' results.jsonl files and `mem matrix|latency|c2c --json` documents.
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// Directory for index.html, the charts and curves.csv.
    #[arg(long)]
    pub out: PathBuf,
    #[arg(long)]
    pub basis: Option<String>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The reference results.
    pub a: PathBuf,
    /// The results compared against it.
    pub b: PathBuf,
    #[arg(long)]
    pub basis: Option<String>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SyncArgs {
    /// Slots in the shared table (fewer = more contention).
    #[arg(long, default_value_t = 4096)]
    pub table: usize,
    /// Batch sizes (updates per critical section).
    #[arg(long, default_value = "1,2,4,8,16,32,64")]
    pub batches: String,
    /// Updates per thread per measurement.
    #[arg(long, default_value_t = 200_000)]
    pub updates: usize,
    /// Stripes for striped locks.
    #[arg(long, default_value_t = 256)]
    pub stripes: usize,
    /// Threads [default: every usable PU].
    #[arg(long, short = 't')]
    pub threads: Option<usize>,
    #[arg(long)]
    pub json: bool,
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
    Bfs(GraphRunArgs),
    /// PageRank (GAP: damping 0.85, tolerance 1e-4): pull, or push with --sync
    /// coarse-lock|striped-locks:K|atomic|htm and --batch updates per critical section.
    #[command(after_help = "\
Examples:
  scalescope graph pr --graph kron:18
  scalescope graph pr --graph kron:16 --sync striped-locks:1024 --batch 8 --json
  scalescope graph pr --graph kron:16 --sync htm      (says so where RTM is absent)")]
    Pr(GraphRunArgs),
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
    #[arg(long)]
    pub graph: String,
    /// Go ahead even when the memory estimate exceeds what is available.
    #[arg(long)]
    pub force: bool,
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub struct GraphRunArgs {
    /// A file (SNAP edge list, .el, Matrix Market .mtx, or a .csr cache) or
    /// kron:SCALE / uniform:SCALE.
    #[arg(long)]
    pub graph: String,
    /// Go ahead even when the memory estimate exceeds what is available.
    #[arg(long)]
    pub force: bool,
    /// BFS source [default: the highest-degree vertex].
    #[arg(long)]
    pub source: Option<u32>,
    /// PageRank synchronisation: pull, coarse-lock, striped-locks:K, atomic, htm.
    #[arg(long, default_value = "pull")]
    pub sync: String,
    /// PageRank: score updates per critical section or transaction.
    #[arg(long, default_value_t = 1)]
    pub batch: usize,
    /// PageRank: stop when the sum of absolute changes is below this.
    #[arg(long, default_value_t = 1e-4)]
    pub tolerance: f64,
    /// Threads [default: every usable PU].
    #[arg(long, short = 't')]
    pub threads: Option<usize>,
    #[arg(long, short = 'p', default_value = "cores-first")]
    pub placement: String,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct GraphCountArgs {
    /// triangle, c4, diamond or k4.
    #[arg(long)]
    pub pattern: String,
    /// Vertex-induced instead of non-induced (c4 and diamond).
    #[arg(long)]
    pub induced: bool,
    /// A file (SNAP edge list, .el, or Matrix Market .mtx) or kron:SCALE / uniform:SCALE.
    #[arg(long)]
    pub graph: String,
    /// Go ahead even when the memory estimate exceeds what is available.
    #[arg(long)]
    pub force: bool,
    /// Threads [default: every usable PU].
    #[arg(long, short = 't')]
    pub threads: Option<usize>,
    #[arg(long, short = 'p', default_value = "cores-first")]
    pub placement: String,
    #[arg(long)]
    pub json: bool,
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
    /// Threads [default: every usable PU].
    #[arg(long, short = 't')]
    pub threads: Option<usize>,
    #[arg(long, short = 'p', default_value = "cores-first")]
    pub placement: String,
    #[arg(long)]
    pub json: bool,
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
    #[arg(long, default_value = "numa", value_parser = ["numa", "naive"])]
    pub layout: String,
    /// Read lineitem from a dbgen .tbl file instead of generating it.
    #[arg(long, value_name = "FILE")]
    pub tbl: Option<PathBuf>,
    /// Threads [default: every usable PU].
    #[arg(long, short = 't')]
    pub threads: Option<usize>,
    #[arg(long, short = 'p', default_value = "cores-first")]
    pub placement: String,
    /// Query runs; the fastest counts.
    #[arg(long, default_value_t = 5)]
    pub repeat: usize,
    /// Go ahead even when the memory estimate exceeds what is available.
    #[arg(long)]
    pub force: bool,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Thread counts: `1,2,4`, `1..16` or `1-16`, `1..16:2`, `pow2`, `all` [default: pow2].
    #[arg(long, short = 't', value_name = "LIST")]
    pub threads: Option<ThreadList>,
    /// Placement strategies, comma-separated (see `scalescope place`) [default: cores-first].
    #[arg(long, short = 'p', value_name = "LIST")]
    pub placement: Option<List<Strategy>>,
    /// Memory policies: first-touch, interleave, bind:N, preferred:N, local [default: first-touch].
    #[arg(long, value_name = "LIST")]
    pub mem: Option<List<MemPolicy>>,
    /// Measured repetitions per point [default: 5].
    #[arg(long)]
    pub reps: Option<usize>,
    /// Unmeasured warm-up runs before each point [default: 1].
    #[arg(long)]
    pub warmup: Option<usize>,
    /// Kill a run (its whole process group) after this many seconds and record `timeout`.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Seconds between SIGTERM and SIGKILL when a run is stopped [default: 2].
    #[arg(long, value_name = "SECS")]
    pub kill_grace: Option<f64>,
    /// Milliseconds between evidence samples beside each run (CPU, pages per node,
    /// NUMA counters, bandwidth); 0 turns sampling off [default: 100].
    #[arg(long, value_name = "MS")]
    pub sample_interval: Option<u64>,
    /// Extra environment for every run (repeatable).
    #[arg(long = "env", value_name = "K=V", value_parser = key_value)]
    pub env: Vec<(String, String)>,
    /// A figure of merit parsed from the program's output: NAME=REGEX[:higher|lower]
    /// (the first capture group, last match). Repeatable.
    #[arg(long = "metric", value_name = "NAME=REGEX", value_parser = metric_spec)]
    pub metrics: Vec<MetricSpec>,
    /// Results directory (default: `scalescope-results/sweep-<UTC date and time>`).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Finish the interrupted sweep in --out without repeating completed runs.
    #[arg(long, requires = "out")]
    pub resume: bool,
    /// Run the command through /bin/sh -c (off by default: no shell).
    #[arg(long)]
    pub shell: bool,
    /// Print every point's CPUs, memory policy, environment and command line; run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Speedup baseline: `threads=1`, `placement=compact`, `mem=first-touch` (any subset).
    #[arg(long, value_name = "SPEC")]
    pub baseline: Option<Baseline>,
    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Print the per-point summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Sweep a built-in workload instead of a program (stream, ep, is, ft, tpch, graph, ...).
    #[arg(long, conflicts_with = "shell")]
    pub workload: Option<String>,
    /// A workload parameter (repeatable), e.g. `size=256MiB`.
    #[arg(long = "param", value_name = "K=V", requires = "workload", value_parser = key_value)]
    pub params: Vec<(String, String)>,
    /// Topology source for --dry-run only (real runs use this machine).
    #[command(flatten)]
    pub source: SourceArgs,
    /// The program and its arguments, after `--`.
    #[arg(last = true, value_name = "PROGRAM")]
    pub command: Vec<String>,
}

impl SweepArgs {
    /// The typed settings the session library takes.
    pub fn settings(&self) -> SweepSettings {
        SweepSettings {
            threads: self.threads.clone(),
            placements: self.placement.clone().map(|l| l.0),
            mems: self.mem.clone().map(|l| l.0),
            reps: self.reps,
            warmup: self.warmup,
            timeout_secs: self.timeout,
            kill_grace_secs: self.kill_grace,
            sample_interval_ms: self.sample_interval,
            target: Target {
                program: self.command.clone(),
                shell: self.shell,
                workload: self.workload.clone(),
                params: self.params.iter().cloned().collect(),
                env: self.env.clone(),
                metrics: self.metrics.clone(),
            },
            out: self.out.clone(),
        }
    }
}

/// `NAME=REGEX[:higher|lower]` for clap.
fn metric_spec(text: &str) -> Result<MetricSpec, String> {
    scalescope_sweep::metric::parse_spec(text).map_err(|e| e.to_string())
}

#[derive(Debug, Args)]
pub struct StreamArgs {
    /// Threads [default: every usable PU].
    #[arg(long, short = 't')]
    pub threads: Option<usize>,
    #[arg(long, short = 'p', default_value = "cores-first")]
    pub placement: String,
    #[arg(long, default_value = "first-touch")]
    pub mem: String,
    /// Bytes per array (`200MB`, `1GiB`) [default: 4 x the total last-level cache].
    #[arg(long)]
    pub size: Option<String>,
    /// Non-temporal (streaming) stores.
    #[arg(long)]
    pub nt: bool,
    /// Iterations; the best after the first counts.
    #[arg(long, default_value_t = 10)]
    pub ntimes: usize,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct WorkloadChildArgs {
    pub name: String,
    /// Each worker's CPUs, `;`-separated cpulists.
    #[arg(long)]
    pub thread_cpus: String,
    #[arg(long = "param", value_name = "K=V", value_parser = key_value)]
    pub params: Vec<(String, String)>,
}

/// Where the topology comes from (default: this machine).
#[derive(Debug, Args, Clone, Default)]
#[group(multiple = false)]
pub struct SourceArgs {
    /// Read a recorded Linux tree as if DIR were `/`.
    #[arg(long, value_name = "DIR")]
    pub sysfs_root: Option<PathBuf>,
    /// Read an hwloc 2.x XML export (`lstopo --of xml`).
    #[arg(long, value_name = "FILE")]
    pub hwloc_xml: Option<PathBuf>,
    /// Build a machine from a description: `package:2 core:24 pu:2`, optionally with
    /// `numa:N`, `l3:N`, `die:N` and `numbering=linear|smt-last|interleaved`.
    #[arg(long, value_name = "SPEC")]
    pub synthetic: Option<String>,
}

#[derive(Debug, Args)]
pub struct TopoArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Print the versioned JSON model (schema in docs/json.md) instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PlaceArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// compact, scatter, cores-first, smt-pairs or spread.
    #[arg(
        long,
        short = 's',
        default_value = "cores-first",
        conflicts_with = "cpus"
    )]
    pub strategy: String,
    /// Number of threads (with --cpus: defaults to the number of CPUs named).
    #[arg(long, short = 't')]
    pub threads: Option<usize>,
    /// Bind each thread to one hardware thread, or to all of its core's.
    #[arg(long, default_value = "thread", value_parser = ["thread", "core"])]
    pub granularity: String,
    /// A likwid-pin expression (`S0:0-3@S1:0-3`, `N:0-7`, `M0:0-1`, `E:S0:4:1:2`,
    /// `S:scatter`) or a plain CPU list (`0-3,8`).
    #[arg(long, value_name = "EXPR")]
    pub cpus: Option<String>,
    /// Use only these NUMA nodes (OS indexes, e.g. `0,2` or `0-1`).
    #[arg(long, value_name = "LIST", conflicts_with = "packages")]
    pub numa_nodes: Option<String>,
    /// Use only these packages (logical indexes in hardware order, e.g. `1`).
    #[arg(long, value_name = "LIST")]
    pub packages: Option<String>,
    /// Allow more threads than usable PUs (threads then share PUs).
    #[arg(long)]
    pub oversubscribe: bool,
    /// Print JSON: {"threads":[{"thread":0,"cpus":[..]}..], "renderings":{..}}.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    pub shell: clap_complete::Shell,
}
