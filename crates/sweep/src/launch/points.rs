//! A launched sweep's points: each point's ranks planned on a node with its
//! strategy, on the hosts it spans (all of them, or the first N of a node axis),
//! rendered for the launcher; then, before the runs, its probe launched to check
//! every rank, and a program that does nothing launched the same way to measure
//! the launcher's own start-up.

use std::path::Path;
use std::time::Duration;

use scalescope_model::launch::{LaunchPlan, RunRanks};
use scalescope_model::plan::{Plan, Point};
use scalescope_place::launch::{forward_env, plan_ranks, render, Launcher, Rendered};
use scalescope_place::mempolicy::PreparedPolicy;
use scalescope_place::{MemPolicy, Placement};
use scalescope_sampler::procfs::RUN_MARK_VARIABLE;
use scalescope_topo::Topology;

use super::{check_placement, LaunchSpec};
use crate::engine::PreparedPoint;
use crate::SweepError;

/// Launches before a point's runs: the probe, which checks every rank, then
/// `true` (a program that does nothing) the rest of the times, whose median wall
/// time is the launcher's start-up and shut-down.
pub const PROBE_LAUNCHES: usize = 3;

/// The program whose launches time the launcher alone (found on each node's PATH).
pub const NOTHING: &str = "true";

/// A launched sweep point: the launch, its rendering for the point's rank plan,
/// and what each of its records keeps of it.
#[derive(Debug, Clone)]
pub struct PreparedLaunch {
    pub spec: LaunchSpec,
    pub rendered: Rendered,
    pub ranks: RunRanks,
}

impl PreparedLaunch {
    /// The launcher's command line for `program` (already substituted); the run's
    /// mark ([`RUN_MARK_VARIABLE`]) is handed to every rank.
    pub fn argv(&self, program: Vec<String>) -> Vec<String> {
        let mut v = vec![self.spec.program.clone()];
        v.extend(self.spec.extra_args.iter().cloned());
        v.extend(forward_env(self.spec.launcher, RUN_MARK_VARIABLE));
        v.extend(self.rendered.args.iter().cloned());
        v.extend(program);
        v
    }

    /// The launcher's environment: its rendering's, each rank's thread count for
    /// OpenMP, and what Open MPI needs to start as root.
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env = self.rendered.env.clone();
        let threads = self.spec.plan.threads_per_rank.to_string();
        env.push(("OMP_NUM_THREADS".into(), threads));
        env.extend(super::root_env(self.spec.launcher));
        env
    }
}

/// Every point of a sweep whose runs go through `launch`: a point's `threads` is
/// its total ranks, spread evenly over its hosts (the first `nodes` of the
/// launch's hosts with a node axis, all of them without); on each node its ranks
/// are planned with the point's strategy and rendered for the launcher (the
/// rankfile path under `work_dir`, written when the probe is launched). Nothing is
/// launched.
///
/// # Errors
/// [`SweepError::BadSetting`] for an unknown launcher, a point that needs more
/// hosts than the launch has, a total the hosts do not divide or a memory policy
/// other than first-touch; [`SweepError::Placement`] for a point the node cannot
/// host.
pub fn prepare_launch_points(
    topo: &Topology,
    plan: &Plan,
    launch: &LaunchPlan,
    timeout: Duration,
    work_dir: &Path,
) -> Result<Vec<PreparedPoint>, SweepError> {
    let launcher: Launcher =
        launch
            .launcher
            .parse()
            .map_err(|e: scalescope_place::launch::LaunchError| {
                bad("launcher", launch.launcher.clone(), &e.to_string())
            })?;
    let on = Target {
        launch,
        launcher,
        timeout,
        work_dir,
    };
    plan.points()
        .into_iter()
        .map(|point| launch_point(topo, point, &on))
        .collect()
}

fn bad(field: &'static str, value: String, detail: &str) -> SweepError {
    SweepError::BadSetting {
        field,
        value,
        detail: detail.into(),
    }
}

/// Where a launched sweep's points go.
struct Target<'a> {
    launch: &'a LaunchPlan,
    launcher: Launcher,
    timeout: Duration,
    work_dir: &'a Path,
}

/// The hosts a point spans: the first `nodes` of the launch's, or all of them.
fn hosts_of(point: &Point, launch: &LaunchPlan) -> Result<Vec<String>, SweepError> {
    let all = &launch.hosts;
    let nodes = point.nodes.unwrap_or(all.len()).max(1);
    if nodes > all.len() {
        let why = format!(
            "it needs {nodes} nodes; the launch has {} ({})",
            all.len(),
            all.join(",")
        );
        return Err(bad("point", point.to_string(), &why));
    }
    if point.mem != MemPolicy::FirstTouch || !point.threads.is_multiple_of(nodes) {
        let why = "launched runs take first-touch memory and as many ranks on every host";
        return Err(bad("point", point.to_string(), why));
    }
    Ok(all[..nodes].to_vec())
}

/// One launched point: its ranks planned on a node and rendered for the launcher.
fn launch_point(topo: &Topology, point: Point, on: &Target) -> Result<PreparedPoint, SweepError> {
    let (launch, launcher) = (on.launch, on.launcher);
    let placement_error = |e: &dyn std::fmt::Display| SweepError::Placement {
        point: point.to_string(),
        detail: e.to_string(),
    };
    let hosts = hosts_of(&point, launch)?;
    let per_node = point.threads / hosts.len();
    let ranks = plan_ranks(topo, &point.placement, per_node, launch.threads_per_rank)
        .map_err(|e| placement_error(&e))?;
    let nodes = point.nodes.map(|n| format!("-n{n}")).unwrap_or_default();
    let name = format!("ranks-{}{nodes}-{}", point.threads, point.placement)
        .replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_");
    let spec = LaunchSpec {
        launcher,
        program: launch.program.clone(),
        extra_args: launch.extra_args.clone(),
        hosts: hosts.clone(),
        plan: ranks.clone(),
        timeout: on.timeout,
        work_dir: on.work_dir.join(name),
    };
    let rankfile = spec.work_dir.join("rankfile");
    let rendered = render(topo, launcher, &ranks, &hosts, &rankfile.to_string_lossy())
        .map_err(|e| placement_error(&e))?;
    let mem = PreparedPolicy::new(&point.mem.resolve(topo).map_err(|e| placement_error(&e))?);
    let run_ranks = RunRanks {
        launcher: launch.launcher.clone(),
        nodes: hosts.len(),
        hosts,
        ranks_per_node: per_node,
        threads_per_rank: launch.threads_per_rank,
        command: String::new(),
        check: None,
        launch_secs: None,
    };
    let mut prepared = PreparedLaunch {
        spec,
        rendered,
        ranks: run_ranks,
    };
    prepared.ranks.command = prepared.argv(Vec::new()).join(" ");
    Ok(PreparedPoint {
        placement: Placement {
            strategy: point.placement.clone(),
            granularity: ranks.granularity,
            threads: ranks.ranks,
        },
        point,
        mem,
        launch: Some(prepared),
        runtime: None,
    })
}

/// Launches `probe` (`scalescope __probe`) as each launched point's runs will be
/// launched, and keeps its check of every rank in the point (and so in its
/// records); then launches [`NOTHING`] the same way, [`PROBE_LAUNCHES`] - 1 times:
/// the median wall time of those that succeeded is the launcher's start-up
/// (`launch_secs`), which the runs' figure leaves out.
///
/// # Errors
/// As [`super::launch`].
pub fn probe_points(
    topo: &Topology,
    points: &mut [PreparedPoint],
    probe: &[String],
) -> Result<(), SweepError> {
    for p in points.iter_mut() {
        let Some(l) = &mut p.launch else {
            continue;
        };
        let (_, check) = check_placement(topo, &l.spec, probe)?;
        let mut walls = Vec::new();
        for _ in 1..PROBE_LAUNCHES {
            let o = super::launch(topo, &l.spec, &[NOTHING.to_string()])?;
            if o.succeeded() {
                walls.push(o.wall_secs);
            }
        }
        l.ranks.check = Some(check);
        l.ranks.launch_secs = median(walls);
    }
    Ok(())
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}
