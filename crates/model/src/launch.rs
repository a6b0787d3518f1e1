//! Runs started through an MPI launcher, as data: the launch a sweep plans (its
//! hosts, its node and ranks-per-node axes), and where each rank ran: what each
//! rank's probe reported (one JSON line from `scalescope __probe`, started by the
//! same launcher as the program), compared with the plan, rank by rank, like the
//! placement check of a thread.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use scalescope_topo::CpuSet;

/// How a sweep launches its program through an MPI launcher (the results
/// header's `plan.launch`): each point's `threads` is its total ranks (nodes x
/// ranks per node), its `placement` how ranks are placed on each node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchPlan {
    /// `mpirun` (Open MPI), `mpiexec` (MPICH Hydra) or `srun` (Slurm).
    pub launcher: String,
    /// The launcher's executable as run (`mpirun.openmpi`, `srun`).
    pub program: String,
    /// Arguments given to the launcher before scalescope's.
    pub extra_args: Vec<String>,
    pub hosts: Vec<String>,
    /// The ranks-per-node values as given (`cores`, `2xcores`, `4`).
    pub ranks_per_node: Vec<String>,
    pub threads_per_rank: usize,
    /// The node axis (`--nodes 1,2,4`): each point runs on the first N hosts.
    /// Empty: every point on all the hosts (and files before schema 4).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_counts: Vec<usize>,
    /// The ranks-per-node values resolved on the machine that planned the sweep,
    /// in the order given (with `node_counts`, the points' second axis).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_node: Vec<usize>,
    /// Where the hosts came from; hosts of a Slurm allocation are read again
    /// when the sweep is resumed in another allocation.
    #[serde(default)]
    pub hosts_from: HostsFrom,
}

impl LaunchPlan {
    /// Every (nodes, ranks per node) pair of a plan with a node axis, nodes
    /// ascending, then ranks per node ascending; `None` without one.
    pub fn node_axis(&self) -> Option<Vec<(usize, usize)>> {
        if self.node_counts.is_empty() || self.per_node.is_empty() {
            return None;
        }
        let mut nodes = self.node_counts.clone();
        nodes.sort_unstable();
        nodes.dedup();
        let mut per = self.per_node.clone();
        per.sort_unstable();
        per.dedup();
        Some(
            nodes
                .iter()
                .flat_map(|&n| per.iter().map(move |&r| (n, r)))
                .collect(),
        )
    }
}

/// Where a launch's hosts came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HostsFrom {
    /// `--hosts` (or the older host-list form of `--nodes`).
    Flag,
    /// `--hostfile`.
    Hostfile,
    /// `SLURM_JOB_NODELIST`: the Slurm allocation the sweep runs in.
    Allocation,
    /// No hosts given outside an allocation: this machine.
    #[default]
    Local,
}

/// Where one launched run's ranks were (a run record's `ranks`): the launch, and
/// every rank's probe compared with the plan, launched exactly as the program was
/// before the point's runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRanks {
    pub launcher: String,
    /// The hosts the run's ranks were placed on (the first `nodes` of the
    /// launch's hosts): the node names of the allocation it ran in.
    pub hosts: Vec<String>,
    pub nodes: usize,
    pub ranks_per_node: usize,
    pub threads_per_rank: usize,
    /// The launcher's command line as run (the program's arguments at its end).
    pub command: String,
    /// `None` only in a dry run (nothing launched).
    pub check: Option<RanksCheck>,
    /// The launcher's own start-up and shut-down: the median wall seconds of
    /// `true` launched before the point's runs with the same launcher, hosts and
    /// placement (a program that does nothing). A run's time without it is
    /// [`crate::store::RunRecord::figure_secs`]. Absent in a dry run and in files
    /// before schema 4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_secs: Option<f64>,
}

/// The `kind` of a probe line.
pub const PROBE_KIND: &str = "scalescope.rank-probe";

/// Version of the probe line (docs/json.md).
pub const PROBE_SCHEMA_VERSION: u32 = 1;

/// What one rank saw of itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankProbe {
    pub kind: String,
    pub schema_version: u32,
    pub host: String,
    /// The rank in the job (`OMPI_COMM_WORLD_RANK`, `PMI_RANK` or `SLURM_PROCID`).
    pub rank: u32,
    /// Which variable gave the rank.
    pub rank_source: String,
    pub pid: u32,
    /// CPUs the rank may run on (`sched_getaffinity`).
    pub allowed: CpuSet,
    /// CPU it ran on when probed.
    pub cpu: Option<u32>,
    /// Memory policy mode (`default`, `bind`, `interleave`, `preferred`, `local`).
    pub mem_policy: String,
    /// Nodes of that policy, a list (empty for `default` and `local`).
    pub mem_nodes: String,
}

/// One rank compared with its plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankCheck {
    pub rank: u32,
    pub planned_host: String,
    pub planned: CpuSet,
    /// `None` when the rank never reported.
    pub probe: Option<RankProbe>,
    /// Reported, on the planned host, allowed exactly the planned CPUs and running
    /// on one of them.
    pub inside_plan: bool,
}

/// Every rank of one launch compared with the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RanksCheck {
    pub ranks: Vec<RankCheck>,
    /// Every planned rank reported once and is inside its plan.
    pub all_inside_plan: bool,
    /// Probe lines for ranks outside the job, or a rank reported twice.
    pub unexpected: Vec<String>,
}

impl RanksCheck {
    /// The ranks not where planned (missing ones included).
    pub fn misplaced(&self) -> impl Iterator<Item = &RankCheck> {
        self.ranks.iter().filter(|r| !r.inside_plan)
    }

    /// The check as a run's placement check, each rank a thread: a misplaced rank
    /// is flagged in the run's record and report like an out-of-place thread.
    pub fn as_placement_check(&self) -> crate::check::PlacementCheck {
        let reported = self.ranks.iter().filter(|r| r.probe.is_some()).count();
        crate::check::PlacementCheck {
            samples: 1,
            max_threads: reported + self.unexpected.len(),
            planned_threads: self.ranks.len(),
            inside_plan: self.all_inside_plan,
            more_threads_than_planned: !self.unexpected.is_empty(),
            violations: self
                .misplaced()
                .filter_map(|r| r.probe.as_ref())
                .take(16)
                .map(|p| crate::check::Violation {
                    pid: p.pid,
                    tid: p.pid,
                    cpu: p.cpu,
                    allowed: p.allowed.clone(),
                })
                .collect(),
            runtime: None,
        }
    }
}

/// The `kind` of an `mpi-check` document.
pub const MPI_CHECK_KIND: &str = "scalescope.mpi-check";

/// One launch of the probe for one ranks-per-node value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchCheck {
    pub ranks_per_node: String,
    /// The command as run, one line.
    pub command: String,
    /// The Open MPI rankfile's text, where there is one.
    pub rankfile: Option<String>,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// The last lines of the launcher's stderr when it failed.
    pub stderr_tail: String,
    pub check: RanksCheck,
    /// The program's runs through the same launch (none when only placement was
    /// checked).
    #[serde(default)]
    pub runs: Vec<ProgramRun>,
}

/// One run of the program through the launcher.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgramRun {
    pub rep: usize,
    pub wall_secs: f64,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// The workload report rank 0 printed last (built-in MPI kernels), if any.
    pub report: Option<crate::workload::WorkloadReport>,
}

impl ProgramRun {
    /// Ended with status 0 and, where the program reports a verdict, passed it.
    pub fn ok(&self) -> bool {
        self.exit_code == Some(0)
            && !self.timed_out
            && self.report.as_ref().is_none_or(|r| r.verification.passed())
    }
}

/// Every launch of one `mpi-check` (docs/json.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MpiCheck {
    pub kind: String,
    pub schema_version: u32,
    pub launcher: String,
    pub hosts: Vec<String>,
    pub threads_per_rank: usize,
    pub strategy: String,
    pub launches: Vec<LaunchCheck>,
    /// The hyper-threading-doubling findings (docs/mpi.md), where the launches
    /// hold runs at N and 2N ranks per node.
    #[serde(default)]
    pub findings: Vec<String>,
    /// What scalescope did for the launcher on its own, such as telling Open MPI
    /// it may run as root.
    #[serde(default)]
    pub notes: Vec<String>,
}

impl MpiCheck {
    /// Every launch succeeded and put every rank where planned.
    pub fn all_ok(&self) -> bool {
        self.launches.iter().all(|l| {
            l.check.all_inside_plan
                && l.exit_code == Some(0)
                && !l.timed_out
                && l.runs.iter().all(ProgramRun::ok)
        })
    }
}

/// The probe lines in a launcher's output (other lines are ignored).
pub fn probes_in(output: &str) -> Vec<RankProbe> {
    output
        .lines()
        .filter(|l| l.contains(PROBE_KIND))
        .filter_map(|l| serde_json::from_str::<RankProbe>(l.trim()).ok())
        .filter(|p| p.kind == PROBE_KIND)
        .collect()
}

/// Compares `probes` with the plan: rank `r` belongs on `hosts[r / per_node]` with
/// the CPUs `plan[r % per_node]`. A host named `localhost` (or `127.0.0.1`) matches
/// `local_host`, the name the machine gives itself.
pub fn check_ranks(
    plan: &[CpuSet],
    hosts: &[String],
    local_host: &str,
    probes: &[RankProbe],
) -> RanksCheck {
    let mut by_rank: BTreeMap<u32, &RankProbe> = BTreeMap::new();
    let mut unexpected = Vec::new();
    let total = plan.len() * hosts.len();
    for p in probes {
        if p.rank as usize >= total || by_rank.insert(p.rank, p).is_some() {
            unexpected.push(format!("rank {} on {} (pid {})", p.rank, p.host, p.pid));
        }
    }
    let ranks: Vec<RankCheck> = (0..total)
        .map(|r| {
            let planned_host = hosts[r / plan.len()].clone();
            let planned = plan[r % plan.len()].clone();
            let probe = by_rank.get(&(r as u32)).map(|p| (*p).clone());
            let inside_plan = probe.as_ref().is_some_and(|p| {
                same_host(&planned_host, &p.host, local_host)
                    && p.allowed == planned
                    && p.cpu.is_some_and(|c| planned.contains(c))
            });
            RankCheck {
                rank: r as u32,
                planned_host,
                planned,
                probe,
                inside_plan,
            }
        })
        .collect();
    RanksCheck {
        all_inside_plan: unexpected.is_empty() && ranks.iter().all(|r| r.inside_plan),
        ranks,
        unexpected,
    }
}

/// Host names match by their first label (`node1` and `node1.cluster` agree).
fn same_host(planned: &str, seen: &str, local_host: &str) -> bool {
    let short = |h: &str| h.split('.').next().unwrap_or(h).to_string();
    let planned = match planned {
        "localhost" | "127.0.0.1" => local_host,
        other => other,
    };
    short(planned) == short(seen)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn probe(rank: u32, host: &str, allowed: &str, cpu: u32) -> RankProbe {
        RankProbe {
            kind: PROBE_KIND.into(),
            schema_version: PROBE_SCHEMA_VERSION,
            host: host.into(),
            rank,
            rank_source: "PMI_RANK".into(),
            pid: 100 + rank,
            allowed: CpuSet::parse_list(allowed).unwrap(),
            cpu: Some(cpu),
            mem_policy: "default".into(),
            mem_nodes: String::new(),
        }
    }

    fn plan() -> Vec<CpuSet> {
        vec![
            CpuSet::parse_list("0").unwrap(),
            CpuSet::parse_list("1").unwrap(),
        ]
    }

    #[test]
    fn ranks_where_planned_pass() {
        let probes = [probe(1, "vm", "1", 1), probe(0, "vm", "0", 0)];
        let c = check_ranks(&plan(), &["localhost".into()], "vm", &probes);
        assert!(c.all_inside_plan, "{c:?}");
    }

    #[test]
    fn a_rank_on_other_cpus_is_flagged() {
        let probes = [probe(0, "vm", "0", 0), probe(1, "vm", "0-1", 0)];
        let c = check_ranks(&plan(), &["localhost".into()], "vm", &probes);
        assert!(!c.all_inside_plan);
        assert_eq!(c.misplaced().map(|r| r.rank).collect::<Vec<_>>(), [1]);
    }

    #[test]
    fn missing_duplicate_and_foreign_ranks_are_flagged() {
        let probes = [
            probe(0, "vm", "0", 0),
            probe(0, "vm", "0", 0),
            probe(7, "vm", "0", 0),
        ];
        let c = check_ranks(&plan(), &["localhost".into()], "vm", &probes);
        assert!(!c.all_inside_plan);
        assert_eq!(c.unexpected.len(), 2);
        assert!(c.ranks[1].probe.is_none());
    }

    #[test]
    fn a_rank_on_the_wrong_node_is_flagged() {
        let probes = [
            probe(0, "a", "0", 0),
            probe(1, "a", "1", 1),
            probe(2, "a.cluster", "0", 0),
            probe(3, "b", "1", 1),
        ];
        let c = check_ranks(&plan(), &["a".into(), "b".into()], "x", &probes);
        assert_eq!(c.misplaced().map(|r| r.rank).collect::<Vec<_>>(), [2]);
    }

    #[test]
    fn probe_lines_are_found_among_other_output() {
        let line = serde_json::to_string(&probe(3, "vm", "1", 1)).unwrap();
        let out = format!("starting\n{line}\nnoise {{\"kind\": 1}}\n");
        assert_eq!(probes_in(&out), [probe(3, "vm", "1", 1)]);
    }
}
