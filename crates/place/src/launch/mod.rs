//! MPI launchers: a rank placement (each local rank's CPU set, the same on every
//! node) written in the syntax and the CPU numbering each launcher documents, and
//! the node lists those launchers are given.
//!
//! - Open MPI (`mpirun`, 4.x): a rankfile whose `slot=` lists are *logical*
//!   indexes, hwloc's (see [`hwloc_order`]): PU indexes with
//!   `--use-hwthread-cpus`, core indexes without it. Where the plan is whole cores
//!   handed out package by package, the equivalent
//!   `--map-by ppr:N:package:PE=T --bind-to core` is offered too.
//! - MPICH's Hydra (`mpiexec`): `-bind-to user:a+b,c+d`, OS CPU numbers, one entry
//!   per local rank.
//! - Slurm (`srun`): `--cpu-bind=map_cpu:` (one OS CPU per local task) or
//!   `mask_cpu:` (hex OS masks), with `--distribution=block:block` so ranks fill a
//!   node before the next, as the plan numbers them; `--cpus-per-task` for hybrid
//!   ranks and `--overcommit` where ranks share CPUs.
//!
//! Also what each launcher needs to start one process per node beside a run (the
//! evidence sampler, [`one_per_node`]), to pass a variable to every rank
//! ([`forward_env`]), and Open MPI's switch for running as root ([`as_root`]).
//!
//! Rendering is pure: it returns arguments, environment and the rankfile's text;
//! the caller decides where files go and starts the process.

pub mod hosts;
pub mod hwloc_order;

use std::fmt;
use std::str::FromStr;

use scalescope_topo::{CpuSet, Topology};
use serde::{Deserialize, Serialize};

use crate::{Granularity, Placement};

/// An MPI launcher family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Launcher {
    /// Open MPI's `mpirun` (ORTE, 4.x).
    Mpirun,
    /// MPICH's Hydra `mpiexec`.
    Mpiexec,
    /// Slurm's `srun`.
    Srun,
}

/// The launcher names, for help texts and errors.
pub const LAUNCHER_NAMES: [&str; 3] = ["mpirun", "mpiexec", "srun"];

impl FromStr for Launcher {
    type Err = LaunchError;
    fn from_str(s: &str) -> Result<Self, LaunchError> {
        match s {
            "mpirun" | "openmpi" => Ok(Launcher::Mpirun),
            "mpiexec" | "hydra" | "mpich" => Ok(Launcher::Mpiexec),
            "srun" | "slurm" => Ok(Launcher::Srun),
            other => Err(LaunchError::UnknownLauncher(other.to_string())),
        }
    }
}

impl fmt::Display for Launcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Launcher::Mpirun => "mpirun",
            Launcher::Mpiexec => "mpiexec",
            Launcher::Srun => "srun",
        })
    }
}

/// Where each local rank of a node runs: `ranks[i]` is local rank i's CPU set
/// (OS numbers), the union of its threads' sets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankPlan {
    pub ranks: Vec<CpuSet>,
    pub threads_per_rank: usize,
    pub granularity: Granularity,
}

impl RankPlan {
    /// Groups a thread placement into ranks: threads `i*T .. (i+1)*T` form rank i,
    /// so the strategy's order (compact, scatter, ...) decides where ranks go.
    ///
    /// # Errors
    /// [`LaunchError::ThreadsPerRank`] when `threads_per_rank` is 0 or does not
    /// divide the placement's thread count.
    pub fn from_placement(p: &Placement, threads_per_rank: usize) -> Result<Self, LaunchError> {
        let n = p.threads.len();
        if threads_per_rank == 0 || !n.is_multiple_of(threads_per_rank) {
            return Err(LaunchError::ThreadsPerRank {
                threads: n,
                per_rank: threads_per_rank,
            });
        }
        let ranks = p
            .threads
            .chunks(threads_per_rank)
            .map(|c| c.iter().fold(CpuSet::new(), |acc, s| acc.union(s)))
            .collect();
        Ok(RankPlan {
            ranks,
            threads_per_rank,
            granularity: p.granularity,
        })
    }

    /// Whether two ranks share a CPU (oversubscription: the launcher must be told).
    pub fn shares_cpus(&self) -> bool {
        let mut seen = CpuSet::new();
        for r in &self.ranks {
            if seen.intersects(r) {
                return true;
            }
            seen = seen.union(r);
        }
        false
    }
}

/// A launcher command, less the program it starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rendered {
    pub launcher: Launcher,
    /// Arguments between the launcher and the program.
    pub args: Vec<String>,
    /// Environment the ranks need (`OMP_NUM_THREADS` for hybrid ranks).
    pub env: Vec<(String, String)>,
    /// The rankfile's text, to be written at the path given to [`render`].
    pub rankfile: Option<String>,
    /// An equivalent shorter form, where the launcher's own mapping gives exactly
    /// the plan (Open MPI's `--map-by ppr:...`).
    pub alternative: Option<Vec<String>>,
}

impl Rendered {
    /// The command as one line, for people and job scripts.
    pub fn command_line(&self, program: &[String]) -> String {
        let env = self.env.iter().map(|(k, v)| format!("{k}={v} "));
        let words = std::iter::once(self.launcher.to_string())
            .chain(self.args.iter().cloned())
            .chain(program.iter().cloned());
        env.collect::<String>() + &words.collect::<Vec<_>>().join(" ")
    }
}

/// Why a launcher command could not be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaunchError {
    #[error("unknown launcher `{0}` (expected mpirun, mpiexec or srun)")]
    UnknownLauncher(String),
    #[error("{threads} threads cannot be split into ranks of {per_rank} threads each")]
    ThreadsPerRank { threads: usize, per_rank: usize },
    #[error("no hosts to launch on")]
    NoHosts,
    #[error("CPU {0} is not usable here, so Open MPI has no logical index for it")]
    NoLogicalIndex(u32),
    #[error(
        "ranks per node `{0}` is not valid (expected a count such as 2, `cores` or `2xcores`)"
    )]
    BadRanksPerNode(String),
    #[error("{0}")]
    Place(String),
    #[error("bad host list `{text}`: {detail}")]
    BadHosts { text: String, detail: String },
}

/// Renders `plan` on every host of `hosts` (ranks numbered node by node) for
/// `launcher`; `rankfile_path` is where the caller will write the rankfile.
///
/// # Errors
/// [`LaunchError::NoHosts`] for an empty host list; [`LaunchError::NoLogicalIndex`]
/// when a planned CPU is not usable (Open MPI could not name it).
pub fn render(
    topo: &Topology,
    launcher: Launcher,
    plan: &RankPlan,
    hosts: &[String],
    rankfile_path: &str,
) -> Result<Rendered, LaunchError> {
    if hosts.is_empty() {
        return Err(LaunchError::NoHosts);
    }
    let mut r = match launcher {
        Launcher::Mpirun => openmpi(topo, plan, hosts, rankfile_path)?,
        Launcher::Mpiexec => hydra(plan, hosts),
        Launcher::Srun => slurm(plan, hosts),
    };
    if plan.threads_per_rank > 1 {
        r.env
            .push(("OMP_NUM_THREADS".into(), plan.threads_per_rank.to_string()));
    }
    Ok(r)
}

fn join<T: ToString>(v: impl IntoIterator<Item = T>, sep: &str) -> String {
    v.into_iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(sep)
}

/// Open MPI: a rankfile in logical indexes, cores where every rank holds whole
/// cores, hardware threads otherwise.
fn openmpi(
    topo: &Topology,
    plan: &RankPlan,
    hosts: &[String],
    rankfile_path: &str,
) -> Result<Rendered, LaunchError> {
    let cores = hwloc_order::core_order(topo);
    let by_core = whole_cores(&cores, plan);
    let pus = hwloc_order::pu_order(topo);
    let mut slots = Vec::with_capacity(plan.ranks.len());
    for set in &plan.ranks {
        let indexes = match &by_core {
            Some(per_rank) => per_rank[slots.len()].clone(),
            None => hwloc_order::logical_pus(&pus, set).map_err(LaunchError::NoLogicalIndex)?,
        };
        slots.push(join(indexes, ","));
    }
    let per_node = plan.ranks.len();
    let rankfile = (0..hosts.len() * per_node)
        .map(|rank| {
            let host = &hosts[rank / per_node];
            format!("rank {rank}={host} slot={}\n", slots[rank % per_node])
        })
        .collect::<String>();
    let mut args = vec![
        "-np".to_string(),
        (hosts.len() * per_node).to_string(),
        "--rankfile".into(),
        rankfile_path.to_string(),
    ];
    if by_core.is_none() {
        args.push("--use-hwthread-cpus".into());
    }
    if plan.shares_cpus() {
        args.push("--oversubscribe".into());
    }
    Ok(Rendered {
        launcher: Launcher::Mpirun,
        args,
        env: Vec::new(),
        rankfile: Some(rankfile),
        alternative: ppr(topo, &cores, plan, hosts.len()),
    })
}

/// For each rank, the logical indexes of the cores it holds, when every rank's set
/// is a union of whole (usable) cores; `None` otherwise.
fn whole_cores(cores: &[CpuSet], plan: &RankPlan) -> Option<Vec<Vec<usize>>> {
    plan.ranks
        .iter()
        .map(|set| {
            let mine: Vec<usize> = (0..cores.len())
                .filter(|&i| cores[i].intersects(set))
                .collect();
            let union = mine
                .iter()
                .fold(CpuSet::new(), |acc, &i| acc.union(&cores[i]));
            (union == *set && !mine.is_empty()).then_some(mine)
        })
        .collect()
}

/// `--map-by ppr:N:package:PE=T --bind-to core` when it reproduces the plan: Open
/// MPI puts N ranks on each package in turn, each on the next T cores of that
/// package in logical order, bound to those cores.
fn ppr(topo: &Topology, cores: &[CpuSet], plan: &RankPlan, nodes: usize) -> Option<Vec<String>> {
    let packages = topo.packages.len().max(1);
    let per_package = plan.ranks.len() / packages;
    if per_package == 0 || !plan.ranks.len().is_multiple_of(packages) {
        return None;
    }
    let t = plan.threads_per_rank;
    let mut expected = Vec::with_capacity(plan.ranks.len());
    for pkg in &topo.packages {
        let mine: Vec<&CpuSet> = cores.iter().filter(|c| c.is_subset(&pkg.cpus)).collect();
        for k in 0..per_package {
            let chunk = mine.get(k * t..(k + 1) * t)?;
            expected.push(chunk.iter().fold(CpuSet::new(), |acc, c| acc.union(c)));
        }
    }
    (expected == plan.ranks).then(|| {
        vec![
            "-np".into(),
            (plan.ranks.len() * nodes).to_string(),
            "--map-by".into(),
            format!("ppr:{per_package}:package:PE={t}"),
            "--bind-to".into(),
            "core".into(),
        ]
    })
}

/// Hydra: one `user:` entry per local rank, the rank's OS CPUs joined by `+`.
fn hydra(plan: &RankPlan, hosts: &[String]) -> Rendered {
    let binding = join(plan.ranks.iter().map(|s| join(s.iter(), "+")), ",");
    Rendered {
        launcher: Launcher::Mpiexec,
        args: vec![
            "-np".into(),
            (hosts.len() * plan.ranks.len()).to_string(),
            "-ppn".into(),
            plan.ranks.len().to_string(),
            "-hosts".into(),
            hosts.join(","),
            "-bind-to".into(),
            format!("user:{binding}"),
        ],
        env: Vec::new(),
        rankfile: None,
        alternative: None,
    }
}

/// Slurm: one CPU per local task (`map_cpu`) where every rank has one CPU, hex
/// masks (`mask_cpu`) otherwise; ranks fill each node in turn (`block`).
fn slurm(plan: &RankPlan, hosts: &[String]) -> Rendered {
    let single = plan.ranks.iter().all(|s| s.len() == 1);
    let bind = if single {
        format!(
            "map_cpu:{}",
            join(plan.ranks.iter().filter_map(CpuSet::first), ",")
        )
    } else {
        format!(
            "mask_cpu:{}",
            join(plan.ranks.iter().map(CpuSet::to_hex_mask), ",")
        )
    };
    let mut args = vec![
        format!("--nodes={}", hosts.len()),
        format!("--ntasks={}", hosts.len() * plan.ranks.len()),
        format!("--ntasks-per-node={}", plan.ranks.len()),
        format!("--nodelist={}", hosts.join(",")),
        "--distribution=block:block".into(),
        format!("--cpu-bind={bind}"),
    ];
    // Slurm counts a task's CPUs from --cpus-per-task, not from its mask: a hybrid
    // rank's threads are CPUs the step must hold.
    if plan.threads_per_rank > 1 {
        args.push(format!("--cpus-per-task={}", plan.threads_per_rank));
    }
    let mut env = Vec::new();
    if plan.shares_cpus() {
        args.push("--overcommit".into());
        // Open MPI ranks busy-poll unless told they share CPUs; mpirun tells them
        // itself when it oversubscribes, srun does not.
        env.push(("OMPI_MCA_mpi_yield_when_idle".into(), "1".into()));
    }
    Rendered {
        launcher: Launcher::Srun,
        args,
        env,
        rankfile: None,
        alternative: None,
    }
}

/// The launcher arguments that start one unbound process on each of `hosts` (the
/// evidence sampler beside a run): srun as a step that may `--overlap` the run's
/// (Slurm gives a step's CPUs to it alone otherwise), mpirun one per node
/// (`ppr:1:node`), Hydra one per host (`-ppn 1`), none of them bound.
pub fn one_per_node(launcher: Launcher, hosts: &[String]) -> Vec<String> {
    let n = hosts.len().to_string();
    let list = hosts.join(",");
    let words: Vec<String> = match launcher {
        Launcher::Srun => vec![
            "--overlap".into(),
            format!("--nodes={n}"),
            format!("--ntasks={n}"),
            "--ntasks-per-node=1".into(),
            format!("--nodelist={list}"),
            "--cpu-bind=none".into(),
        ],
        Launcher::Mpirun => ["-np", &n, "--map-by", "ppr:1:node", "--bind-to", "none"]
            .iter()
            .map(|s| s.to_string())
            .chain(["--host".to_string(), list])
            .collect(),
        Launcher::Mpiexec => ["-np", &n, "-ppn", "1", "-hosts", &list, "-bind-to", "none"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
    };
    words
}

/// The arguments that hand the variable `name` to every rank: Open MPI's mpirun
/// passes its own environment only to ranks it starts itself (`-x NAME` for the
/// others); srun (`--export=ALL`) and Hydra (`-genvall`) pass all of it by default.
pub fn forward_env(launcher: Launcher, name: &str) -> Vec<String> {
    match launcher {
        Launcher::Mpirun => vec!["-x".into(), name.to_string()],
        Launcher::Srun | Launcher::Mpiexec => Vec::new(),
    }
}

/// What Open MPI's `mpirun` needs to start as root, which it refuses otherwise:
/// the two variables its `--allow-run-as-root` sets, and the note that says so.
/// Nothing for other launchers, or when `root` is false.
pub fn as_root(launcher: Launcher, root: bool) -> Option<(Vec<(String, String)>, &'static str)> {
    (root && launcher == Launcher::Mpirun).then(|| {
        (
            vec![
                ("OMPI_ALLOW_RUN_AS_ROOT".to_string(), "1".to_string()),
                (
                    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM".to_string(),
                    "1".to_string(),
                ),
            ],
            AS_ROOT_NOTE,
        )
    })
}

/// The note printed when Open MPI is told it may run as root.
pub const AS_ROOT_NOTE: &str = "running as root: Open MPI's mpirun refuses root unless told, \
so it is given OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 (what \
--allow-run-as-root does)";

/// A ranks-per-node value: a count, or a multiple of the node's cores
/// (`cores`, `2xcores`), resolved against a topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RanksPerNode {
    Count(usize),
    CoresTimes(usize),
}

impl FromStr for RanksPerNode {
    type Err = LaunchError;
    fn from_str(s: &str) -> Result<Self, LaunchError> {
        let bad = || LaunchError::BadRanksPerNode(s.to_string());
        if s == "cores" {
            return Ok(RanksPerNode::CoresTimes(1));
        }
        if let Some(k) = s.strip_suffix("xcores") {
            return match k.parse::<usize>() {
                Ok(k) if k > 0 => Ok(RanksPerNode::CoresTimes(k)),
                _ => Err(bad()),
            };
        }
        match s.parse::<usize>() {
            Ok(n) if n > 0 => Ok(RanksPerNode::Count(n)),
            _ => Err(bad()),
        }
    }
}

impl fmt::Display for RanksPerNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RanksPerNode::Count(n) => write!(f, "{n}"),
            RanksPerNode::CoresTimes(1) => f.write_str("cores"),
            RanksPerNode::CoresTimes(k) => write!(f, "{k}xcores"),
        }
    }
}

impl RanksPerNode {
    /// The count on `topo`: cores are those with a usable PU.
    pub fn resolve(self, topo: &Topology) -> usize {
        match self {
            RanksPerNode::Count(n) => n,
            RanksPerNode::CoresTimes(k) => {
                let usable = topo.usable_cpus();
                let cores = topo
                    .cores
                    .iter()
                    .filter(|c| c.cpus.intersects(&usable))
                    .count();
                k * cores.max(1)
            }
        }
    }
}

/// Plans `ranks` ranks of `threads_per_rank` threads on one node with `strategy`,
/// oversubscribing (threads wrap round the same PUs) when they outnumber the
/// usable PUs: `2xcores` ranks on a machine without SMT put two on each core.
///
/// # Errors
/// [`LaunchError::Place`] when the strategy cannot place them.
pub fn plan_ranks(
    topo: &Topology,
    strategy: &crate::Strategy,
    ranks: usize,
    threads_per_rank: usize,
) -> Result<RankPlan, LaunchError> {
    let threads = ranks.saturating_mul(threads_per_rank.max(1));
    let mut req = crate::PlaceRequest::new(strategy.clone(), threads);
    req.oversubscribe = threads > topo.usable_pus().count();
    let p = crate::place(topo, &req).map_err(|e| LaunchError::Place(e.to_string()))?;
    RankPlan::from_placement(&p, threads_per_rank)
}
