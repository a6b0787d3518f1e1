//! Flags of `mpi-check`: which launcher, how many ranks per node, on which nodes.

use std::path::PathBuf;

use clap::Args;
use scalescope_model::value::Count;

#[derive(Debug, Args)]
pub struct MpiCheckArgs {
    /// The launcher family: mpirun (Open MPI), mpiexec (MPICH Hydra) or srun (Slurm).
    #[arg(long)]
    pub launcher: String,
    /// The launcher's executable [default: the family's name]; where Open MPI and
    /// MPICH are both installed, name one (mpirun.openmpi, mpiexec.hydra).
    #[arg(long, value_name = "PATH")]
    pub launcher_path: Option<String>,
    /// An argument the launcher needs before scalescope's (repeatable), such as
    /// --allow-run-as-root or --mpi=pmix.
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    pub launcher_arg: Vec<String>,
    /// Ranks per node, a list: counts, `cores`, `2xcores`.
    #[arg(long, default_value = "1,cores", value_delimiter = ',')]
    pub ranks_per_node: Vec<String>,
    /// Threads per rank (hybrid MPI+OpenMP).
    #[arg(long, default_value_t = Count::clamped(1))]
    pub threads_per_rank: crate::cli::ThreadCount,
    /// How ranks' threads are placed on each node (compact, scatter, cores-first, ...).
    #[arg(long = "placement", visible_alias = "strategy", value_name = "STRATEGY",
        default_value_t = scalescope_place::Strategy::Compact)]
    pub strategy: scalescope_place::Strategy,
    /// How many of the hosts to use [default: all]. (A host list here, the older
    /// form, is read as --hosts.)
    #[arg(long, value_name = "N")]
    pub nodes: Option<String>,
    /// Hosts, comma-separated, Slurm ranges allowed (node[01-04]) [default:
    /// SLURM_JOB_NODELIST inside a Slurm job, else localhost].
    #[arg(long, value_name = "LIST", conflicts_with = "hostfile")]
    pub hosts: Option<String>,
    /// An MPI hostfile naming the hosts.
    #[arg(long, value_name = "FILE")]
    pub hostfile: Option<PathBuf>,
    /// Seconds one launch may take before it is killed (0.001 to a year).
    #[arg(long, value_name = "SECS", default_value = "120")]
    pub timeout: scalescope_session::settings::Timeout,
    /// Times to run the program through each launch, after its placement check.
    #[arg(long, default_value_t = Count::clamped(3))]
    pub reps: Count<0, 1_000_000>,
    /// The program to run through each launch (after `--`), such as
    /// `scalescope-mpi-nas ep S`; without one, only placement is checked. With
    /// ranks per node N and 2N (cores,2xcores) the hyper-threading-doubling
    /// finding is reported.
    #[arg(last = true, value_name = "PROGRAM")]
    pub program: Vec<String>,
    /// Print JSON (versioned; schema in docs/json.md) instead of text.
    #[arg(long)]
    pub json: bool,
}

impl MpiCheckArgs {
    /// The session's settings, as given.
    pub fn settings(&self) -> scalescope_session::launch::MpiSettings {
        scalescope_session::launch::MpiSettings {
            launch: scalescope_session::launch::LaunchSettings {
                launcher: self.launcher.clone(),
                launcher_path: self.launcher_path.clone(),
                launcher_args: self.launcher_arg.clone(),
                ranks_per_node: self.ranks_per_node.clone(),
                threads_per_rank: self.threads_per_rank.usize(),
                nodes: self.nodes.clone(),
                hosts: self.hosts.clone(),
                hostfile: self.hostfile.clone(),
                allocation_later: false,
            },
            strategy: self.strategy.clone(),
            timeout: self.timeout.duration(),
            reps: self.reps.usize(),
            program: self.program.clone(),
        }
    }
}
