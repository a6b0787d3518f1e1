//! Starting ranks through an MPI launcher: a planned rank placement rendered for
//! the launcher (`place::launch`), the launcher started with a program, bounded in
//! time, its output kept; and the placement check of every rank, by launching the
//! probe (`scalescope __probe`) exactly as the program will be launched. A launched
//! sweep's points are prepared and probed in [`points`]; the evidence sampler
//! started on every node of a run, through the same launcher, is [`nodes`].
//!
//! Open MPI is told it may run as root when scalescope runs as root (it refuses
//! otherwise); srun inside a Slurm job is checked against the CPUs the job holds
//! on each node before it is started, so a plan the allocation cannot host is
//! refused with what to allocate instead of Slurm's binding error.

pub mod nodes;
pub mod points;

pub use points::{prepare_launch_points, probe_points, PreparedLaunch, PROBE_LAUNCHES};

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use scalescope_model::launch::{
    check_ranks, probes_in, LaunchCheck, MpiCheck, ProgramRun, RankProbe, RanksCheck,
    MPI_CHECK_KIND, PROBE_KIND, PROBE_SCHEMA_VERSION,
};
use scalescope_model::workload::WorkloadReport;
use scalescope_place::launch::{
    as_root, hosts, plan_ranks, render, Launcher, RankPlan, RanksPerNode, Rendered,
};
use scalescope_place::Strategy;
use scalescope_topo::{CpuSet, Topology};

use crate::SweepError;

/// Whether this process runs as root (effective user 0).
pub fn running_as_root() -> bool {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The environment `launcher` needs as this user: Open MPI's as-root switch when
/// running as root, nothing otherwise.
pub fn root_env(launcher: Launcher) -> Vec<(String, String)> {
    as_root(launcher, running_as_root())
        .map(|(env, _)| env)
        .unwrap_or_default()
}

/// The note to print when [`root_env`] gives anything.
pub fn root_note(launcher: Launcher) -> Option<&'static str> {
    as_root(launcher, running_as_root()).map(|(_, note)| note)
}

/// Inside a Slurm job (`SLURM_JOB_CPUS_PER_NODE` and `SLURM_JOB_NODELIST` set),
/// whether the job holds, on each of `hosts`, at least the CPUs the plan binds
/// ranks to: srun can bind a task only to CPUs its job holds.
///
/// # Errors
/// [`SweepError::BadSetting`] naming the node, what the plan needs and how to
/// allocate it.
pub fn check_allocation(plan: &RankPlan, hosts_used: &[String]) -> Result<(), SweepError> {
    let (Ok(cpus), Ok(list)) = (
        std::env::var("SLURM_JOB_CPUS_PER_NODE"),
        std::env::var("SLURM_JOB_NODELIST"),
    ) else {
        return Ok(());
    };
    let (Ok(counts), Ok(nodes)) = (hosts::cpus_per_node(&cpus), hosts::expand(&list)) else {
        return Ok(());
    };
    let needed = plan
        .ranks
        .iter()
        .fold(CpuSet::new(), |acc, s| acc.union(s))
        .len();
    for (node, held) in nodes.iter().zip(counts) {
        if hosts_used.contains(node) && held < needed {
            return Err(SweepError::BadSetting {
                field: "allocation",
                value: format!("SLURM_JOB_CPUS_PER_NODE={cpus}"),
                detail: format!(
                    "the ranks are bound to {needed} CPUs of each node, but this Slurm job holds {held} on {node}; \
                     allocate whole nodes (salloc/sbatch --exclusive, or --ntasks-per-node={needed})"
                ),
            });
        }
    }
    Ok(())
}

/// One launch: which launcher (and its executable), where, and how placed.
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    pub launcher: Launcher,
    /// The launcher's executable (`mpirun.openmpi`, `mpiexec.hydra`, `srun`).
    pub program: String,
    /// Arguments the site needs before ours (`--allow-run-as-root`, `--mpi=pmix`).
    pub extra_args: Vec<String>,
    pub hosts: Vec<String>,
    pub plan: RankPlan,
    pub timeout: Duration,
    /// Where the rankfile and the output files go.
    pub work_dir: PathBuf,
}

/// How a launch ended.
#[derive(Debug, Clone)]
pub struct LaunchOutcome {
    pub rendered: Rendered,
    /// The command as run, one line.
    pub command: String,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub wall_secs: f64,
    pub stdout: String,
    pub stderr: String,
}

impl LaunchOutcome {
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }
}

/// Starts `argv` under the launcher as `spec` says, and waits (at most
/// `spec.timeout`, then the whole process group is killed).
///
/// # Errors
/// [`SweepError::Placement`] when the plan cannot be rendered, [`SweepError::Io`]
/// when the rankfile, the output files or the launcher cannot be written or started.
pub fn launch(
    topo: &Topology,
    spec: &LaunchSpec,
    argv: &[String],
) -> Result<LaunchOutcome, SweepError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| SweepError::Io { path, source }
    };
    if spec.launcher == Launcher::Srun {
        check_allocation(&spec.plan, &spec.hosts)?;
    }
    let dir = work_dir(&spec.work_dir)?;
    let rankfile = spec.work_dir.join("rankfile");
    let rendered = render(
        topo,
        spec.launcher,
        &spec.plan,
        &spec.hosts,
        &rankfile.to_string_lossy(),
    )
    .map_err(|e| SweepError::Placement {
        point: format!("{} ranks per node", spec.plan.ranks.len()),
        detail: e.to_string(),
    })?;
    let file_err = |e: scalescope_files::FileError| SweepError::Io {
        path: spec.work_dir.clone(),
        source: std::io::Error::other(e.to_string()),
    };
    if let Some(text) = &rendered.rankfile {
        dir.write_file("rankfile", text.as_bytes())
            .map_err(file_err)?;
    }
    let out = dir.create_file("launch.out").map_err(file_err)?;
    let err = dir.create_file("launch.err").map_err(file_err)?;
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.extra_args)
        .args(&rendered.args)
        .args(argv)
        .envs(rendered.env.iter().cloned())
        .envs(root_env(spec.launcher))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let command = format!("{} {}", spec.program, {
        let mut words = spec.extra_args.clone();
        words.extend(rendered.args.iter().cloned());
        words.extend(argv.iter().cloned());
        words.join(" ")
    });
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(io(Path::new(&spec.program)))?;
    let (status, timed_out) = wait_bounded(&mut child, spec.timeout);
    // What the launcher printed, bounded (a chatty program is cut, not held whole).
    let read = |name: &str| {
        let kind = scalescope_files::Kind::new("launcher output", 64 << 20, 64 << 20);
        let bytes = dir.open_input(name, kind).and_then(|i| i.read_all());
        String::from_utf8_lossy(&bytes.unwrap_or_default()).into_owned()
    };
    Ok(LaunchOutcome {
        rendered,
        command,
        exit_code: status.and_then(|s| s.code()),
        timed_out,
        wall_secs: started.elapsed().as_secs_f64(),
        stdout: read("launch.out"),
        stderr: read("launch.err"),
    })
}

/// A launch's directory, made below its parent without following a link there
/// (the parent, a fresh `mkdtemp` directory or a results directory's `logs`, is
/// the program's own).
fn work_dir(path: &Path) -> Result<scalescope_files::OutDir, SweepError> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return scalescope_files::OutDir::create(path).map_err(|e| SweepError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other(e.to_string()),
        });
    };
    scalescope_files::OutDir::create(parent)
        .and_then(|d| d.subdir(name))
        .map_err(|e| SweepError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other(e.to_string()),
        })
}

/// Waits for `child` at most `timeout`; past it, kills its process group.
fn wait_bounded(
    child: &mut std::process::Child,
    timeout: Duration,
) -> (Option<std::process::ExitStatus>, bool) {
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return (Some(status), false),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => break,
        }
    }
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the process group the child
        // leads (it was started with process_group(0)); no memory is involved.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
    (child.wait().ok(), true)
}

/// Launches `probe` (the scalescope binary's `__probe`) as `spec` says and checks
/// every rank against the plan.
///
/// # Errors
/// As [`launch`].
pub fn check_placement(
    topo: &Topology,
    spec: &LaunchSpec,
    probe: &[String],
) -> Result<(LaunchOutcome, RanksCheck), SweepError> {
    let outcome = launch(topo, spec, probe)?;
    let local = local_host_name();
    let check = check_ranks(
        &spec.plan.ranks,
        &spec.hosts,
        &local,
        &probes_in(&outcome.stdout),
    );
    Ok((outcome, check))
}

/// This machine's host name (`gethostname(2)`), empty when it cannot be read.
pub fn local_host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// What `mpi-check` asks: one launcher, one host list, several ranks-per-node values.
#[derive(Debug, Clone)]
pub struct CheckRequest {
    pub launcher: Launcher,
    pub program: String,
    pub extra_args: Vec<String>,
    pub hosts: Vec<String>,
    pub values: Vec<RanksPerNode>,
    pub threads_per_rank: usize,
    pub strategy: Strategy,
    pub timeout: Duration,
    /// The probe's command (`scalescope __probe`).
    pub probe: Vec<String>,
    /// The program to run through each launch after its placement check (empty:
    /// placement only), and how many times.
    pub run: Vec<String>,
    pub reps: usize,
    pub work_dir: PathBuf,
}

/// Plans, renders and launches the probe for every ranks-per-node value; `each`
/// sees every launch as it ends.
///
/// # Errors
/// [`SweepError::Placement`] when a value cannot be planned or rendered; as [`launch`].
pub fn check_all(
    topo: &Topology,
    req: &CheckRequest,
    mut each: impl FnMut(&LaunchCheck),
) -> Result<MpiCheck, SweepError> {
    let mut launches = Vec::new();
    for value in &req.values {
        let plan = plan_ranks(
            topo,
            &req.strategy,
            value.resolve(topo),
            req.threads_per_rank,
        )
        .map_err(|e| SweepError::Placement {
            point: format!("{value} ranks per node"),
            detail: e.to_string(),
        })?;
        let spec = LaunchSpec {
            launcher: req.launcher,
            program: req.program.clone(),
            extra_args: req.extra_args.clone(),
            hosts: req.hosts.clone(),
            plan,
            timeout: req.timeout,
            work_dir: req.work_dir.join(value.to_string()),
        };
        let (outcome, check) = check_placement(topo, &spec, &req.probe)?;
        let runs = if req.run.is_empty() {
            Vec::new()
        } else {
            run_program(topo, &spec, &req.run, req.reps)?
        };
        let failed = !outcome.succeeded();
        // The last lines, in order: enough to hold a launcher's own explanation.
        let lines: Vec<&str> = outcome.stderr.lines().collect();
        let tail = &lines[lines.len().saturating_sub(8)..];
        let launch = LaunchCheck {
            ranks_per_node: value.to_string(),
            command: outcome.command,
            rankfile: outcome.rendered.rankfile,
            exit_code: outcome.exit_code,
            timed_out: outcome.timed_out,
            stderr_tail: if failed {
                tail.join(" | ")
            } else {
                String::new()
            },
            check,
            runs,
        };
        each(&launch);
        launches.push(launch);
    }
    let _ = std::fs::remove_dir_all(&req.work_dir);
    Ok(MpiCheck {
        kind: MPI_CHECK_KIND.into(),
        schema_version: 1,
        launcher: req.launcher.to_string(),
        hosts: req.hosts.clone(),
        threads_per_rank: req.threads_per_rank,
        strategy: req.strategy.to_string(),
        launches,
        findings: Vec::new(),
        notes: Vec::new(),
    })
}

/// Runs `program` `reps` times through the launch `spec` describes, reading the
/// workload report a built-in MPI kernel prints last.
fn run_program(
    topo: &Topology,
    spec: &LaunchSpec,
    program: &[String],
    reps: usize,
) -> Result<Vec<ProgramRun>, SweepError> {
    (0..reps)
        .map(|rep| {
            let o = launch(topo, spec, program)?;
            Ok(ProgramRun {
                rep,
                wall_secs: o.wall_secs,
                exit_code: o.exit_code,
                timed_out: o.timed_out,
                report: WorkloadReport::from_output(&o.stdout),
            })
        })
        .collect()
}

/// The variables launchers set for a rank's number, in the order they are read.
pub const RANK_VARIABLES: [&str; 4] = [
    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",
    "PMIX_RANK",
    "SLURM_PROCID",
];

/// What this process, one rank, sees of itself (`scalescope __probe`).
///
/// # Errors
/// A message when no rank variable is set or the affinity cannot be read.
pub fn probe_here() -> Result<RankProbe, String> {
    let (rank_source, rank) = RANK_VARIABLES
        .iter()
        .find_map(|v| Some((v.to_string(), std::env::var(v).ok()?.parse::<u32>().ok()?)))
        .ok_or_else(|| {
            format!(
                "no rank in the environment (none of {})",
                RANK_VARIABLES.join(", ")
            )
        })?;
    let allowed = scalescope_place::pin::current_affinity()
        .ok_or("could not read this process's CPU affinity")?;
    let (mem_policy, mem_nodes) = match scalescope_place::mempolicy::current_policy() {
        Ok((mode, nodes)) => (mode, nodes.to_string()),
        Err(e) => (format!("unavailable here: {e}"), String::new()),
    };
    Ok(RankProbe {
        kind: PROBE_KIND.into(),
        schema_version: PROBE_SCHEMA_VERSION,
        host: local_host_name(),
        rank,
        rank_source,
        pid: std::process::id(),
        allowed,
        cpu: scalescope_place::pin::current_cpu(),
        mem_policy,
        mem_nodes,
    })
}
