//! The command line: every flag, its help and its examples. Parsing does no I/O; the
//! commands turn these values into library requests.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use scalescope_session::settings::key_value;

pub mod flags;
pub mod inventory;
mod kernels;
mod mpi;
mod placement;
mod study;
mod sweep;

pub use kernels::*;
pub use mpi::MpiCheckArgs;
pub use placement::{PlacementArgs, SweepPlaceArgs, ThreadCount};
pub use study::StudyArgs;
pub use sweep::*;

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
    /// No progress display (it appears only on a terminal, for work over 2 s).
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
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
    /// Turn a curve measured elsewhere (CSV: threads, then seconds or a named metric;
    /// optional placement, mem, rep) into a results directory that analyze, report
    /// and compare read like any sweep, marked as imported.
    #[command(after_help = "\
Examples:
  scalescope import q6.csv --synthetic 'package:4 numa:1 core:18' --placement cores-first --out runs/q6
  scalescope analyze runs/q6/results.jsonl")]
    Import(ImportArgs),
    /// Predict another machine: a mechanism model (serial part, synchronisation,
    /// remote memory, bandwidth per node, SMT yield) fitted to a sweep measured here,
    /// evaluated on a target topology; the speedup per placement with intervals, the
    /// recommended threads and placement, and what limits it there.
    #[command(after_help = "\
Examples:
  scalescope predict --from runs/ep/results.jsonl --to 'package:4 numa:1 core:16 pu:2'
  scalescope predict --from runs/stream/results.jsonl --to lstopo-big.xml --ceilings big-stream.json
  scalescope predict --from runs/q6/results.jsonl --to ./recorded-sysfs --node-gbps 40 --json
  scalescope predict --from runs/ep/results.jsonl --synthetic 'package:2 core:32 pu:2' --out pred")]
    Predict(PredictArgs),
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
  scalescope sync --table 64 --batches 1,2,4,8,16,32 --json     (high contention)
  scalescope sweep --workload sync --param table=64 --param batches=1,8,64 --threads 1,2")]
    Sync(SyncArgs),
    /// Checks where an MPI launcher puts ranks: plans each ranks-per-node value,
    /// renders it for the launcher, launches a probe as the program would be, and
    /// compares every rank's host, CPUs and CPU with the plan.
    #[command(after_help = "\
Examples:
  scalescope mpi-check --launcher mpirun --launcher-path mpirun.openmpi --ranks-per-node 1,cores,2xcores
  scalescope mpi-check --launcher mpiexec --launcher-path mpiexec.hydra --hosts node[01-04]
  salloc -N2 --exclusive scalescope mpi-check --launcher srun --ranks-per-node cores --json")]
    MpiCheck(MpiCheckArgs),
    /// The five published studies, one command each: a plan from this machine's
    /// topology and a time budget, resumable runs, and one report that opens with
    /// the published figures beside the ones measured here (docs/STUDIES.md).
    #[command(after_help = "\
Examples:
  scalescope study list
  scalescope study graph-mining --dry-run
  scalescope study numa-structure --budget 5m --out runs/numa
  scalescope study graph-mining --dry-run --synthetic 'package:2 core:24 pu:2'
  scalescope study tpch-numa --out runs/tpch        (again after Ctrl-C: finishes it)")]
    Study(StudyArgs),
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
    /// Prints this rank's host, rank, CPUs, CPU and memory policy as one JSON line
    /// (what mpi-check launches through the launcher).
    #[command(name = "__probe", hide = true)]
    Probe,
    /// Samples this node for the run whose processes carry SCALESCOPE_RUN=MARK
    /// until SIGUSR1 or SIGTERM, then prints its evidence as one JSON line (what a
    /// launched sweep starts on every node of a run, through the launcher).
    #[command(name = "__node-sampler", hide = true)]
    NodeSampler {
        #[arg(long, default_value_t = 100)]
        interval_ms: u64,
        #[arg(long)]
        mark: String,
    },
    /// Waits for its stdin to close (scalescope ended, however), then kills every
    /// process marked with TOKEN (what a sweep starts once).
    #[command(name = "__guard", hide = true)]
    Guard { token: String },
    /// Prints every command's arguments as JSON lines, from clap's own model of
    /// this command line (what the attack harness, tests/cli/attack, enumerates).
    #[command(name = "__inventory", hide = true)]
    Inventory,
}

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// A sweep's results.jsonl (or the directory that holds it), or a `mem matrix
    /// --json` document (hop inference).
    #[arg(value_parser = results_file)]
    pub results: PathBuf,
    /// `time`, or `metric:NAME` [default: the sweep's figure of merit, else time].
    #[arg(long)]
    pub basis: Option<String>,
    /// `mem stream --json` documents with measured bandwidth ceilings [default:
    /// every such document in the results' directory].
    #[arg(long, value_name = "FILE")]
    pub ceilings: Vec<PathBuf>,
    /// Print JSON (versioned; schema in docs/json.md) instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The CSV file.
    pub csv: PathBuf,
    /// The machine the curve was measured on (required: one of the three).
    #[command(flatten)]
    pub source: SourceArgs,
    /// The placement when the CSV has no `placement` column.
    #[arg(long)]
    pub placement: Option<scalescope_place::Strategy>,
    /// The metric columns are times or costs (lower is better), not rates.
    #[arg(long)]
    pub lower_is_better: bool,
    /// The result set to import from a file holding several (the `results` column of
    /// a report's curves.csv).
    #[arg(long, value_name = "LABEL")]
    pub results: Option<String>,
    /// The curve goes past one thread per PU (users on a server, ranks past the
    /// cores): accept thread counts above the machine's PUs.
    #[arg(long)]
    pub oversubscribe: bool,
    /// The results directory to write.
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub struct PredictArgs {
    /// The calibration: a sweep's results.jsonl (or its directory) measured on this
    /// (or any) machine.
    #[arg(long, value_name = "RESULTS", value_parser = results_file)]
    pub from: PathBuf,
    /// The target machine: a synthetic spec, a recorded sysfs tree (a directory) or
    /// an hwloc XML file (or name it with --synthetic, --sysfs-root, --hwloc-xml).
    #[arg(long, value_name = "MACHINE", conflicts_with_all = ["sysfs_root", "hwloc_xml", "synthetic"])]
    pub to: Option<String>,
    #[command(flatten)]
    pub source: SourceArgs,
    /// The target's bandwidth: `mem stream --json` or `mem matrix --json`
    /// documents measured there.
    #[arg(long, value_name = "FILE")]
    pub ceilings: Vec<PathBuf>,
    /// The target's bandwidth per NUMA node in GB/s, stated (instead of --ceilings).
    #[arg(long, value_name = "GBPS", conflicts_with = "ceilings", value_parser = gbps)]
    pub node_gbps: Option<f64>,
    /// `mem stream --json` documents measured on the calibration machine [default:
    /// every such document beside the results].
    #[arg(long, value_name = "FILE")]
    pub from_ceilings: Vec<PathBuf>,
    /// `time`, or `metric:NAME` [default: the sweep's figure of merit, else time].
    #[arg(long)]
    pub basis: Option<String>,
    /// Print JSON (versioned; schema in docs/json.md) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also write a report directory with the prediction's chart.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Sweeps' results.jsonl files (or their directories) and `mem
    /// matrix|latency|c2c --json` documents.
    #[arg(required = true, value_parser = results_file)]
    pub results: Vec<PathBuf>,
    /// Directory for index.html, the charts and curves.csv.
    #[arg(long)]
    pub out: PathBuf,
    /// `time`, or `metric:NAME` [default: the sweep's figure of merit, else time].
    #[arg(long)]
    pub basis: Option<String>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The reference results (a results.jsonl or its directory).
    #[arg(value_parser = results_file)]
    pub a: PathBuf,
    /// The results compared against it.
    #[arg(value_parser = results_file)]
    pub b: PathBuf,
    /// `time`, or `metric:NAME` [default: the sweep's figure of merit, else time].
    #[arg(long)]
    pub basis: Option<String>,
    /// Print JSON (versioned; schema in docs/json.md) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// A results argument: a directory stands for the results.jsonl a sweep, a
/// study or an import wrote in it; any other path is taken as given (its
/// reader says what is wrong with it).
fn results_file(s: &str) -> Result<PathBuf, String> {
    let given = PathBuf::from(s);
    if !given.is_dir() {
        return Ok(given);
    }
    let file = given.join(scalescope_model::store::RESULTS_FILE);
    if file.symlink_metadata().is_ok() {
        Ok(file)
    } else {
        Err(format!(
            "{s} is a directory with no {} in it: give a sweep's results file or the directory a sweep wrote",
            scalescope_model::store::RESULTS_FILE
        ))
    }
}

/// A bandwidth in GB/s: positive and finite (at most 10^6 GB/s).
fn gbps(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 1e6 => Ok(v),
        _ => Err(format!(
            "`{s}` is not a bandwidth in GB/s (above 0, at most 1000000)"
        )),
    }
}

/// A cpulist (`0-3,8`).
fn cpu_set(s: &str) -> Result<scalescope_topo::CpuSet, String> {
    scalescope_topo::CpuSet::parse_list(s).map_err(|e| e.to_string())
}

#[derive(Debug, Args)]
pub struct WorkloadChildArgs {
    pub name: String,
    /// Each worker's CPUs, `;`-separated cpulists.
    #[arg(long, value_delimiter = ';', value_parser = cpu_set, required = true)]
    pub thread_cpus: Vec<scalescope_topo::CpuSet>,
    #[arg(long = "param", value_name = "K=V", value_parser = key_value)]
    pub params: Vec<(String, String)>,
    #[command(flatten)]
    pub inputs: InputArgs,
    /// The token of the cache file the sweep checked in full before its runs.
    #[arg(long, value_name = "TOKEN")]
    pub verified_input: Option<String>,
    /// Trials of the kernel in this process; the report carries the median warm
    /// trial's seconds and figures.
    #[arg(long, default_value_t = scalescope_model::value::Count::clamped(1))]
    pub trials: scalescope_model::value::Count<1, 100_000>,
}

impl WorkloadChildArgs {
    /// The inputs with the sweep's token of the file it checked.
    pub fn inputs(&self) -> scalescope_workloads::Inputs {
        scalescope_workloads::Inputs {
            verified: self.verified_input.clone(),
            ..self.inputs.inputs()
        }
    }
}

/// Where prepared inputs are cached and which runs are checked (the kernel
/// commands, the sweep and its workload child share them).
#[derive(Debug, Args, Clone, Default)]
pub struct InputArgs {
    /// Cache prepared inputs (graphs as `.csr`, TPC-H columns as `.cols`, with their
    /// answers) in DIR and reuse them [commands: none, built in memory; sweep:
    /// OUT/inputs].
    #[arg(long, value_name = "DIR")]
    pub input_cache: Option<PathBuf>,
    /// Which runs are compared with the independent answer (computed once per
    /// input): first, all or none.
    #[arg(long, value_name = "POLICY", default_value = "all")]
    pub verify: scalescope_workloads::VerifyPolicy,
}

impl InputArgs {
    /// The library's form.
    pub fn inputs(&self) -> scalescope_workloads::Inputs {
        scalescope_workloads::Inputs {
            cache: self.input_cache.clone(),
            verify: self.verify,
            verified: None,
        }
    }
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
    #[command(flatten)]
    pub place: PlacementArgs,
    /// Number of threads (with --cpus: defaults to the number of CPUs named).
    #[arg(long, short = 't')]
    pub threads: Option<ThreadCount>,
    /// Print JSON: {"threads":[{"thread":0,"cpus":[..]}..], "renderings":{..}}.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    pub shell: clap_complete::Shell,
}
