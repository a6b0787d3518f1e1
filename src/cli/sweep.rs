//! The flags of `scalescope sweep`, turned into the session's typed settings.

use super::SweepPlaceArgs;
use std::path::PathBuf;

use clap::Args;
use scalescope_analysis::summary::Baseline;
use scalescope_place::{MemPolicy, Strategy};

use super::SourceArgs;
use scalescope_model::plan::{List, ThreadList};
use scalescope_model::store::MetricSpec;
use scalescope_model::value::Count;
use scalescope_session::settings::{
    key_value, KillGrace, Reps, SampleMs, SweepSettings, Target, Timeout, Trials, Warmup,
};

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Thread counts: `1,2,4`, `1..16` or `1-16`, `1..16:2`, `pow2`, `all`, `boundaries` (a
    /// point on each side of every boundary of the placements: L3, node, package, all
    /// cores, all PUs; plus midpoints, doublings where a point is under half the next,
    /// and no gap over an eighth of the machine) [default: boundaries].
    #[arg(long, short = 't', value_name = "LIST")]
    pub threads: Option<ThreadList>,
    /// Placement strategies, comma-separated (see `scalescope place`) [default: cores-first].
    #[arg(long, visible_alias = "strategy", short = 'p', value_name = "LIST")]
    pub placement: Option<List<Strategy>>,
    /// Memory policies: first-touch, interleave, bind:N, preferred:N, local [default: first-touch].
    #[arg(long, value_name = "LIST")]
    pub mem: Option<List<MemPolicy>>,
    /// Measured repetitions per point [default: 5].
    #[arg(long)]
    pub reps: Option<Reps>,
    /// Unmeasured warm-up runs before each point [default: 1].
    #[arg(long)]
    pub warmup: Option<Warmup>,
    /// Run a built-in workload's kernel this many times in each run's process, each
    /// trial timed; the run's figures are its median warm trial's (the first, cold:
    /// page faults, the workers' first wake-up, is left out, and every trial's
    /// seconds stay in the run's log) [default: 1].
    #[arg(long, value_name = "N")]
    pub trials: Option<Trials>,
    /// Seed of the run order: repetition r of every point runs in round r, the
    /// points of a round in an order drawn from the seed (recorded in the results
    /// header; give it again to reproduce the order) [default: a new seed].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Kill a run (its whole process group) after this many seconds (0.001 to a
    /// year) and record `timeout`.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<Timeout>,
    /// Seconds between SIGTERM and SIGKILL when a run is stopped (0 to 3600) [default: 2].
    #[arg(long, value_name = "SECS")]
    pub kill_grace: Option<KillGrace>,
    /// Milliseconds between evidence samples beside each run (CPU, pages per node,
    /// NUMA counters, bandwidth); 0 turns sampling off [default: 100].
    #[arg(long, value_name = "MS")]
    pub sample_interval: Option<SampleMs>,
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
    /// Print the per-point summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Sweep a built-in workload instead of a program.
    #[arg(long, conflicts_with = "shell", help = format!(
        "Sweep a built-in workload instead of a program: {}",
        scalescope_workloads::AVAILABLE
    ))]
    pub workload: Option<String>,
    /// A workload parameter (repeatable), e.g. `size=256MiB`.
    #[arg(long = "param", value_name = "K=V", requires = "workload", value_parser = key_value)]
    pub params: Vec<(String, String)>,
    #[command(flatten)]
    pub place: SweepPlaceArgs,
    #[command(flatten)]
    pub launch: SweepLaunchArgs,
    #[command(flatten)]
    pub inputs: super::InputArgs,
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
            placements: self
                .place
                .placements(self.placement.as_ref().map(|l| l.0.as_slice())),
            mems: self.mem.clone().map(|l| l.0),
            reps: self.reps,
            warmup: self.warmup,
            timeout: self.timeout,
            kill_grace: self.kill_grace,
            sample_interval_ms: self.sample_interval,
            target: Target {
                program: self.command.clone(),
                shell: self.shell,
                workload: self.workload.clone(),
                params: self.params.iter().cloned().collect(),
                env: self.env.clone(),
                metrics: self.metrics.clone(),
                trials: self.trials,
            },
            out: self.out.clone(),
            place_options: self.place.options.given(),
            input_cache: self.inputs.input_cache.clone(),
            verify: self.inputs.verify,
            seed: self.seed,
            launch: self.launch.settings(),
        }
    }
}

/// Runs through an MPI launcher: each point a ranks-per-node value (placed with
/// --placement on every node), each rank's placement probed before its runs.
#[derive(Debug, Args)]
pub struct SweepLaunchArgs {
    /// Start every run through this launcher: mpirun (Open MPI), mpiexec (MPICH
    /// Hydra) or srun (Slurm); the program after `--` is the MPI program.
    #[arg(long, conflicts_with_all = ["threads", "workload", "shell"])]
    pub launcher: Option<String>,
    /// The launcher's executable [default: the family's name].
    #[arg(long, value_name = "PATH", requires = "launcher")]
    pub launcher_path: Option<String>,
    /// An argument the launcher needs before scalescope's (repeatable).
    #[arg(
        long,
        value_name = "ARG",
        allow_hyphen_values = true,
        requires = "launcher"
    )]
    pub launcher_arg: Vec<String>,
    /// Ranks per node, a list: counts, `cores`, `2xcores` (the sweep's points).
    #[arg(
        long,
        default_value = "1,cores",
        value_delimiter = ',',
        requires = "launcher"
    )]
    pub ranks_per_node: Vec<String>,
    /// Threads per rank (hybrid MPI+OpenMP; OMP_NUM_THREADS of each rank).
    #[arg(long, default_value_t = Count::clamped(1), requires = "launcher")]
    pub threads_per_rank: super::ThreadCount,
    /// Node counts, a sweep axis: `1,2,4` runs every ranks-per-node value on the
    /// first 1, 2 and 4 hosts [default: every point on all the hosts]. (A host
    /// list here, the older form, is read as --hosts.)
    #[arg(long, value_name = "LIST", requires = "launcher")]
    pub nodes: Option<String>,
    /// Hosts, comma-separated, Slurm ranges allowed (node[01-04]) [default:
    /// SLURM_JOB_NODELIST inside a Slurm job, else localhost].
    #[arg(
        long,
        value_name = "LIST",
        conflicts_with = "hostfile",
        requires = "launcher"
    )]
    pub hosts: Option<String>,
    /// An MPI hostfile naming the hosts.
    #[arg(long, value_name = "FILE", requires = "launcher")]
    pub hostfile: Option<PathBuf>,
    /// Submit the sweep as Slurm batch jobs, one per point (exclusive nodes), and
    /// gather their runs into --out's results.jsonl as they finish; with --resume,
    /// submit only what is missing; with --dry-run, print the job scripts.
    #[arg(long, conflicts_with_all = ["hosts", "hostfile"])]
    pub submit: bool,
    /// An sbatch option for every job (repeatable): --account, --partition, --qos.
    #[arg(
        long,
        value_name = "ARG",
        allow_hyphen_values = true,
        requires = "submit"
    )]
    pub submit_arg: Vec<String>,
}

impl SweepLaunchArgs {
    /// How `--submit` submits its jobs (or those missing, with --resume).
    pub fn submit_settings(&self, resume: bool) -> scalescope_session::submit::SubmitSettings {
        scalescope_session::submit::SubmitSettings {
            sbatch_args: self.submit_arg.clone(),
            poll: std::time::Duration::from_secs(2),
            resume,
        }
    }

    fn settings(&self) -> Option<scalescope_session::launch::LaunchSettings> {
        let launcher = self.launcher.clone()?;
        Some(scalescope_session::launch::LaunchSettings {
            launcher,
            launcher_path: self.launcher_path.clone(),
            launcher_args: self.launcher_arg.clone(),
            ranks_per_node: self.ranks_per_node.clone(),
            threads_per_rank: self.threads_per_rank.usize(),
            nodes: self.nodes.clone(),
            hosts: self.hosts.clone(),
            hostfile: self.hostfile.clone(),
            allocation_later: self.submit,
        })
    }
}

/// `NAME=REGEX[:higher|lower]` for clap.
fn metric_spec(text: &str) -> Result<MetricSpec, String> {
    scalescope_sweep::metric::parse_spec(text).map_err(|e| e.to_string())
}
