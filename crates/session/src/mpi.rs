//! `mpi-check` as one library call: typed settings (launcher, ranks per node,
//! hosts, program) -> hosts resolved (flag, hostfile, `SLURM_JOB_NODELIST`,
//! localhost) -> every launch checked and its runs made (`sweep::launch`) -> the
//! hyper-threading-doubling findings (`analysis::ht_doubling`); and the launch of
//! a sweep whose runs go through a launcher (`sweep --launcher`): its plan and its
//! points, each rank's placement probed before the runs.

use std::path::PathBuf;
use std::time::Duration;

use scalescope_place::launch::{hosts, LaunchError, Launcher, RanksPerNode};
use scalescope_place::Strategy;
use scalescope_results::plan::Plan;
use scalescope_results::ranks::{LaunchCheck, LaunchPlan, MpiCheck};
use scalescope_sweep::engine::PreparedPoint;
use scalescope_sweep::launch::{check_all, prepare_launch_points, probe_points, CheckRequest};
use scalescope_topo::Topology;

use crate::SessionError;

/// What `mpi-check` was asked, as given on the command line: a launch like a
/// sweep's, and what to run and check.
#[derive(Debug, Clone)]
pub struct MpiSettings {
    pub launch: LaunchSettings,
    pub strategy: String,
    pub timeout: Duration,
    pub reps: usize,
    pub program: Vec<String>,
}

fn setting(field: &'static str) -> impl Fn(LaunchError) -> SessionError {
    move |e| SessionError::Setting {
        field,
        detail: e.to_string(),
    }
}

/// Checks every launch on `topo` (this machine), running the program through each;
/// `each` sees every launch as it ends.
///
/// # Errors
/// [`SessionError::Setting`] naming a bad value, [`SessionError::Read`] for an
/// unreadable hostfile, [`SessionError::CurrentExe`], or the sweep's error.
pub fn check(
    topo: &Topology,
    s: &MpiSettings,
    each: impl FnMut(&LaunchCheck),
) -> Result<MpiCheck, SessionError> {
    let l = Launch::of(&s.launch)?;
    let strategy: Strategy = s
        .strategy
        .parse()
        .map_err(|e: scalescope_place::PlaceError| SessionError::Setting {
            field: "--strategy",
            detail: e.to_string(),
        })?;
    // A fresh directory of its own (mkdtemp: an unpredictable name, mode 0700,
    // never one that already existed), where the rankfiles and outputs go.
    let scratch = tempfile::Builder::new()
        .prefix("scalescope-mpi-")
        .tempdir()
        .map_err(|source| SessionError::Scratch {
            dir: std::env::temp_dir().display().to_string(),
            source,
        })?;
    let req = CheckRequest {
        launcher: l.launcher,
        program: l.program,
        extra_args: s.launch.launcher_args.clone(),
        hosts: l.hosts,
        values: l.values,
        threads_per_rank: s.launch.threads_per_rank,
        strategy,
        timeout: s.timeout,
        probe: probe_argv()?,
        run: s.program.clone(),
        reps: s.reps,
        work_dir: scratch.path().to_path_buf(),
    };
    // `scratch` is removed when it drops: on success, on an error, on a panic.
    let mut doc = check_all(topo, &req, each)?;
    let doublings = scalescope_analysis::ht_doubling::doublings(&doc.launches);
    doc.findings = doublings.iter().map(|d| d.sentence()).collect();
    Ok(doc)
}

/// A launch's settings read: the launcher, the program that starts it (its path
/// if given), the hosts and the ranks-per-node values.
struct Launch {
    launcher: Launcher,
    program: String,
    hosts: Vec<String>,
    values: Vec<RanksPerNode>,
}

impl Launch {
    fn of(s: &LaunchSettings) -> Result<Launch, SessionError> {
        let launcher: Launcher = s.launcher.parse().map_err(setting("--launcher"))?;
        Ok(Launch {
            launcher,
            program: s
                .launcher_path
                .clone()
                .unwrap_or_else(|| launcher.to_string()),
            hosts: hosts_of(s.nodes.as_deref(), s.hostfile.as_ref())?,
            values: values_of(&s.ranks_per_node)?,
        })
    }
}

/// The hosts: `--nodes`, a hostfile, `SLURM_JOB_NODELIST`, else this machine.
fn hosts_of(nodes: Option<&str>, hostfile: Option<&PathBuf>) -> Result<Vec<String>, SessionError> {
    let text = match hostfile {
        Some(p) => Some(scalescope_files::read_text(
            p,
            scalescope_files::Kind::HOSTFILE,
        )?),
        None => None,
    };
    let slurm = std::env::var("SLURM_JOB_NODELIST").ok();
    hosts::choose(nodes, text.as_deref(), slurm.as_deref()).map_err(setting("--nodes"))
}

fn values_of(given: &[String]) -> Result<Vec<RanksPerNode>, SessionError> {
    given
        .iter()
        .map(|v| v.parse::<RanksPerNode>())
        .collect::<Result<_, _>>()
        .map_err(setting("--ranks-per-node"))
}

/// This binary's probe: `scalescope __probe`.
fn probe_argv() -> Result<Vec<String>, SessionError> {
    let exe = std::env::current_exe().map_err(SessionError::CurrentExe)?;
    Ok(vec![exe.to_string_lossy().into_owned(), "__probe".into()])
}

/// A sweep's launcher settings, as given (`sweep --launcher ...`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LaunchSettings {
    pub launcher: String,
    pub launcher_path: Option<String>,
    pub launcher_args: Vec<String>,
    pub ranks_per_node: Vec<String>,
    pub threads_per_rank: usize,
    pub nodes: Option<String>,
    pub hostfile: Option<PathBuf>,
}

/// The launch of a sweep, and its points' total ranks (nodes x each ranks-per-node
/// value on this machine's cores).
///
/// # Errors
/// [`SessionError::Setting`] naming a bad launcher, host list or value.
pub fn launch_plan(
    s: &LaunchSettings,
    topo: &Topology,
) -> Result<(LaunchPlan, Vec<usize>), SessionError> {
    // A sweep's setting errors name the field; the command adds the dashes.
    launch_plan_flagged(s, topo).map_err(|e| match e {
        SessionError::Setting { field, detail } => SessionError::Setting {
            field: field.trim_start_matches("--"),
            detail,
        },
        e => e,
    })
}

fn launch_plan_flagged(
    s: &LaunchSettings,
    topo: &Topology,
) -> Result<(LaunchPlan, Vec<usize>), SessionError> {
    let l = Launch::of(s)?;
    let mut totals: Vec<usize> = l
        .values
        .iter()
        .map(|v| v.resolve(topo) * l.hosts.len())
        .collect();
    totals.dedup();
    let plan = LaunchPlan {
        launcher: l.launcher.to_string(),
        program: l.program,
        extra_args: s.launcher_args.clone(),
        hosts: l.hosts,
        ranks_per_node: s.ranks_per_node.clone(),
        threads_per_rank: s.threads_per_rank.max(1),
    };
    Ok((plan, totals))
}

/// A plan's points, launched through its launcher when it has one; with `probe`,
/// every launched point's ranks are probed now (before its runs).
///
/// # Errors
/// As [`prepare_launch_points`] and [`probe_points`].
pub fn points_of(
    topo: &Topology,
    plan: &Plan,
    timeout: Option<f64>,
    out: &std::path::Path,
    probe: bool,
) -> Result<Vec<PreparedPoint>, SessionError> {
    let Some(launch) = &plan.launch else {
        let prepared =
            scalescope_sweep::engine::prepare_points_with(topo, &plan.points(), &plan.options)?;
        return Ok(prepared);
    };
    let timeout = Duration::from_secs_f64(timeout.filter(|t| *t > 0.0).unwrap_or(120.0));
    let mut points = prepare_launch_points(topo, plan, launch, timeout, &out.join("logs"))?;
    if probe {
        probe_points(topo, &mut points, &probe_argv()?)?;
    }
    Ok(points)
}
