//! The MPI launch as one library call, for `mpi-check` and `sweep --launcher`:
//! typed settings (launcher, ranks per node, node counts, hosts, program) -> hosts
//! resolved (`--hosts`, hostfile, `SLURM_JOB_NODELIST`, localhost) -> every
//! launch checked and its runs made (`sweep::launch`) -> the
//! hyper-threading-doubling findings (`analysis::ht_doubling`); and the launch of
//! a sweep whose runs go through a launcher: its plan (the node axis and the
//! ranks-per-node values), its points, each rank's placement and the launcher's
//! start-up probed before the runs.

use std::path::PathBuf;
use std::time::Duration;

use scalescope_model::launch::{HostsFrom, LaunchCheck, LaunchPlan, MpiCheck};
use scalescope_model::plan::Plan;
use scalescope_place::launch::{hosts, LaunchError, Launcher, RanksPerNode};
use scalescope_place::Strategy;
use scalescope_sweep::engine::PreparedPoint;
use scalescope_sweep::launch::{check_all, prepare_launch_points, probe_points, CheckRequest};
use scalescope_topo::Topology;

use crate::SessionError;
use scalescope_model::setting::Setting;

/// What `mpi-check` was asked, as given on the command line: a launch like a
/// sweep's, and what to run and check.
#[derive(Debug, Clone)]
pub struct MpiSettings {
    pub launch: LaunchSettings,
    /// How each rank's threads are placed on its node.
    pub strategy: Strategy,
    pub timeout: Duration,
    pub reps: usize,
    pub program: Vec<String>,
}

fn setting(setting: Setting) -> impl Fn(LaunchError) -> SessionError {
    move |e| SessionError::Setting {
        setting: setting.clone(),
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
    let strategy = s.strategy.clone();
    check_node_counts(&l, false)?;
    let hosts = match l.node_counts.as_slice() {
        [] => l.hosts.clone(),
        [n] => l.hosts[..*n].to_vec(),
        _ => {
            return Err(SessionError::Setting {
                setting: Setting::Nodes,
                detail: "mpi-check takes one node count (a sweep takes a list)".into(),
            })
        }
    };
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
        hosts,
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
    let doublings = scalescope_analysis::ht_doubling::doublings(&doc.launches, topo);
    doc.findings = doublings.iter().map(|d| d.sentence()).collect();
    doc.notes = notes(l.launcher);
    Ok(doc)
}

/// What scalescope did for the launcher on its own (Open MPI told it may run as
/// root), to be printed.
pub fn notes(launcher: Launcher) -> Vec<String> {
    scalescope_sweep::launch::root_note(launcher)
        .map(|n| vec![n.to_string()])
        .unwrap_or_default()
}

/// [`notes`] for a sweep's launcher (none without one, or for one not known).
pub fn sweep_notes(s: &crate::settings::SweepSettings) -> Vec<String> {
    let launcher = s.launch.as_ref().map(|l| l.launcher.parse::<Launcher>());
    launcher.and_then(Result::ok).map(notes).unwrap_or_default()
}

/// A launch's settings read: the launcher, the program that starts it (its path
/// if given), the hosts and where they came from, the node counts and the
/// ranks-per-node values.
struct Launch {
    launcher: Launcher,
    program: String,
    hosts: Vec<String>,
    hosts_from: HostsFrom,
    node_counts: Vec<usize>,
    values: Vec<RanksPerNode>,
}

impl Launch {
    fn of(s: &LaunchSettings) -> Result<Launch, SessionError> {
        let launcher: Launcher = s.launcher.parse().map_err(setting(Setting::Launcher))?;
        let (node_counts, host_list) = nodes_of(s)?;
        let (hosts, hosts_from) = hosts_of(host_list.as_deref(), s.hostfile.as_ref())?;
        Ok(Launch {
            launcher,
            program: s
                .launcher_path
                .clone()
                .unwrap_or_else(|| launcher.to_string()),
            hosts,
            hosts_from,
            node_counts,
            values: values_of(&s.ranks_per_node)?,
        })
    }
}

/// `--nodes` read: node counts (every item a number: the node axis), or, in its
/// older form, a host list; and the host list to use (`--hosts`, or that form).
fn nodes_of(s: &LaunchSettings) -> Result<(Vec<usize>, Option<String>), SessionError> {
    let Some(text) = s.nodes.as_deref() else {
        return Ok((Vec::new(), s.hosts.clone()));
    };
    let counts: Option<Vec<usize>> = text.split(',').map(|v| v.trim().parse().ok()).collect();
    match counts {
        Some(c) if c.iter().all(|&n| n > 0) => Ok((c, s.hosts.clone())),
        Some(_) => Err(SessionError::Setting {
            setting: Setting::Nodes,
            detail: format!("`{text}`: node counts start at 1"),
        }),
        None if s.hosts.is_some() => Err(SessionError::Setting {
            setting: Setting::Nodes,
            detail: format!("`{text}` is not a list of node counts (the hosts are given apart)"),
        }),
        None => Ok((Vec::new(), Some(text.to_string()))),
    }
}

/// The hosts and where they came from: a host list, a hostfile,
/// `SLURM_JOB_NODELIST`, else this machine.
fn hosts_of(
    list: Option<&str>,
    hostfile: Option<&PathBuf>,
) -> Result<(Vec<String>, HostsFrom), SessionError> {
    let text = match hostfile {
        Some(p) => Some(scalescope_files::read_text(
            p,
            scalescope_files::Kind::HOSTFILE,
        )?),
        None => None,
    };
    let slurm = std::env::var("SLURM_JOB_NODELIST")
        .ok()
        .filter(|l| !l.is_empty());
    let from = match (list, &text, &slurm) {
        (Some(_), _, _) => HostsFrom::Flag,
        (None, Some(_), _) => HostsFrom::Hostfile,
        (None, None, Some(_)) => HostsFrom::Allocation,
        _ => HostsFrom::Local,
    };
    let hosts =
        hosts::choose(list, text.as_deref(), slurm.as_deref()).map_err(setting(Setting::Hosts))?;
    Ok((hosts, from))
}

/// A plan whose hosts came from a Slurm allocation, resumed inside another one:
/// its points run on this allocation's nodes.
pub fn rebind_hosts(plan: &mut Plan) {
    let Some(l) = plan.launch.as_mut() else {
        return;
    };
    let now = std::env::var("SLURM_JOB_NODELIST").ok();
    if let (HostsFrom::Allocation, Some(Ok(hosts))) =
        (l.hosts_from, now.as_deref().map(hosts::expand))
    {
        l.hosts = hosts;
    }
}

fn values_of(given: &[String]) -> Result<Vec<RanksPerNode>, SessionError> {
    given
        .iter()
        .map(|v| v.parse::<RanksPerNode>())
        .collect::<Result<_, _>>()
        .map_err(setting(Setting::RanksPerNode))
}

/// This binary's probe: `scalescope __probe`.
fn probe_argv() -> Result<Vec<String>, SessionError> {
    let exe = std::env::current_exe().map_err(SessionError::CurrentExe)?;
    Ok(vec![exe.to_string_lossy().into_owned(), "__probe".into()])
}

/// This binary's node sampler: `scalescope __node-sampler`.
///
/// # Errors
/// [`SessionError::CurrentExe`].
pub fn node_sampler_argv() -> Result<Vec<String>, SessionError> {
    let exe = std::env::current_exe().map_err(SessionError::CurrentExe)?;
    Ok(vec![
        exe.to_string_lossy().into_owned(),
        "__node-sampler".into(),
    ])
}

/// A sweep's launcher settings, as given (`sweep --launcher ...`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LaunchSettings {
    pub launcher: String,
    pub launcher_path: Option<String>,
    pub launcher_args: Vec<String>,
    pub ranks_per_node: Vec<String>,
    pub threads_per_rank: usize,
    /// `--nodes`: node counts, the sweep's node axis (`1,2,4`: each point on the
    /// first N hosts); a host list in its older form.
    pub nodes: Option<String>,
    /// `--hosts`: a host list with Slurm ranges.
    pub hosts: Option<String>,
    pub hostfile: Option<PathBuf>,
    /// The hosts are those of an allocation not made yet (`sweep --submit`): node
    /// counts are not checked against the hosts known now.
    pub allocation_later: bool,
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
    let l = Launch::of(s)?;
    let mut per_node: Vec<usize> = l.values.iter().map(|v| v.resolve(topo)).collect();
    per_node.dedup();
    check_node_counts(&l, s.allocation_later)?;
    let nodes = if l.node_counts.is_empty() {
        vec![l.hosts.len()]
    } else {
        l.node_counts.clone()
    };
    let mut totals: Vec<usize> = nodes
        .iter()
        .flat_map(|n| per_node.iter().map(move |r| n * r))
        .collect();
    totals.sort_unstable();
    totals.dedup();
    let axis = !l.node_counts.is_empty();
    let plan = LaunchPlan {
        launcher: l.launcher.to_string(),
        program: l.program,
        extra_args: s.launcher_args.clone(),
        hosts: l.hosts,
        ranks_per_node: s.ranks_per_node.clone(),
        threads_per_rank: s.threads_per_rank.max(1),
        node_counts: l.node_counts,
        per_node: if axis { per_node } else { Vec::new() },
        hosts_from: l.hosts_from,
    };
    Ok((plan, totals))
}

/// Every node count must fit the hosts known now, unless the hosts are those of
/// an allocation made later.
fn check_node_counts(l: &Launch, later: bool) -> Result<(), SessionError> {
    let Some(n) = l.node_counts.iter().find(|&&n| n > l.hosts.len()) else {
        return Ok(());
    };
    if later {
        return Ok(());
    }
    Err(SessionError::Setting {
        setting: Setting::Nodes,
        detail: format!(
            "{n} nodes asked, but the launch has {} host{} ({}): name more hosts, or run inside an allocation of {n} nodes",
            l.hosts.len(),
            if l.hosts.len() == 1 { "" } else { "s" },
            l.hosts.join(",")
        ),
    })
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
    let timeout = timeout
        .filter(|t| *t > 0.0)
        .and_then(|t| Duration::try_from_secs_f64(t).ok())
        .unwrap_or(Duration::from_secs(120));
    let mut points = prepare_launch_points(topo, plan, launch, timeout, &out.join("logs"))?;
    if probe {
        probe_points(topo, &mut points, &probe_argv()?)?;
    }
    Ok(points)
}
