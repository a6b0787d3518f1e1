//! The hyper-threading-doubling finding: the same program at N ranks per node and
//! then 2N on the same nodes (one rank per core, then two: on SMT machines the
//! second rank of a core runs on its sibling hardware thread; beyond the PUs, or
//! beyond the cores without SMT, the ranks are oversubscribed and said so), like
//! with like:
//! same launcher, nodes, kernel and class, only the ranks per node doubled. The gain
//! is the ratio of the medians of the runs' performance, with its bootstrap 95%
//! interval: in a sweep, on the basis its speedups use (the figure of merit, or
//! 1 / time with the launcher's start-up left out); in `mpi-check`, the figure the
//! verified runs report (Mop/s for NAS kernels).

use std::collections::BTreeMap;

use scalescope_model::launch::LaunchCheck;
use scalescope_model::store::{Header, RunRecord, RunStatus};
use scalescope_topo::Topology;

use crate::finding::Boundary;
use crate::Basis;

/// The median of finite values; `None` when there is none.
fn median(values: &[f64]) -> Option<f64> {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    crate::stats::median_of(&v)
}

/// Where the doubled ranks of a node ran, judged on the machine record (the one
/// the sweep started on): the label a sentence may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DoubledOn {
    /// Still at most one rank's thread per core.
    OnePerCore,
    /// Beyond the cores, within the PUs: SMT siblings (`cores`).
    SmtSiblings { cores: usize },
    /// Beyond the PUs (or the cores where there is no SMT): oversubscribed.
    Oversubscribed { pus: usize },
    /// No machine to judge by (a launch check's doublings).
    Unknown,
}

impl DoubledOn {
    /// Where `threads` threads of one node land on `topo`.
    pub fn on(topo: &Topology, threads: usize) -> DoubledOn {
        let usable = topo.usable_cpus();
        let pus = usable.len();
        let cores = topo
            .cores
            .iter()
            .filter(|c| c.cpus.intersects(&usable))
            .count();
        if threads <= cores {
            DoubledOn::OnePerCore
        } else if threads <= pus {
            DoubledOn::SmtSiblings { cores }
        } else {
            DoubledOn::Oversubscribed { pus }
        }
    }

    fn words(&self) -> String {
        match self {
            DoubledOn::OnePerCore => "still at most one per core".into(),
            DoubledOn::SmtSiblings { cores } => {
                format!("beyond the {cores} cores: on SMT siblings")
            }
            DoubledOn::Oversubscribed { pus } => {
                format!("beyond the machine's {pus} PUs: oversubscribed")
            }
            DoubledOn::Unknown => "on the same nodes".into(),
        }
    }

    /// The machine boundary the finding is attributed to.
    pub fn boundary(&self) -> Boundary {
        match self {
            DoubledOn::SmtSiblings { .. } => Boundary::Smt,
            DoubledOn::Oversubscribed { .. } => Boundary::Oversubscribed,
            DoubledOn::OnePerCore | DoubledOn::Unknown => Boundary::None,
        }
    }
}

/// One doubling: the base and doubled ranks per node and the gain.
#[derive(Debug, Clone, PartialEq)]
pub struct Doubling {
    pub workload: String,
    pub figure: String,
    pub base_ranks: usize,
    pub base_median: f64,
    pub doubled_median: f64,
    /// doubled / base: above 1, the extra ranks per node paid off.
    pub gain: f64,
    /// Bootstrap 95% interval of the gain (None with one run at either count).
    pub ci95: Option<(f64, f64)>,
    pub runs_each: (usize, usize),
    /// Where the doubled ranks ran.
    pub on: DoubledOn,
}

impl Doubling {
    fn new(
        workload: String,
        figure: String,
        base_ranks: usize,
        (base, doubled): (&[f64], &[f64]),
        on: DoubledOn,
    ) -> Option<Doubling> {
        let (b, d) = (median(base)?, median(doubled)?);
        (b > 0.0).then(|| Doubling {
            workload,
            figure,
            base_ranks,
            base_median: b,
            doubled_median: d,
            gain: d / b,
            ci95: crate::boot::interval(
                &[base.to_vec(), doubled.to_vec()],
                base_ranks as u64,
                |m| m[1] / m[0],
            )
            .1,
            runs_each: (base.len(), doubled.len()),
            on,
        })
    }

    /// The finding in one sentence.
    pub fn sentence(&self) -> String {
        let interval = self
            .ci95
            .map(|(lo, hi)| format!(", 95% interval {lo:.2}-{hi:.2}x"))
            .unwrap_or_default();
        format!(
            "{}: {} ranks per node ({}) give {:.2}x the {} of {} ({:+.0}%{interval}; medians of {} and {} verified runs)",
            self.workload,
            2 * self.base_ranks,
            self.on.words(),
            self.gain,
            self.figure,
            self.base_ranks,
            (self.gain - 1.0) * 100.0,
            self.runs_each.1,
            self.runs_each.0
        )
    }
}

/// The verified figures of one launch: (workload, figure name, values, ranks per
/// node).
fn figures(l: &LaunchCheck) -> Option<(String, String, Vec<f64>, usize)> {
    let reports: Vec<_> = l
        .runs
        .iter()
        .filter(|r| r.ok())
        .filter_map(|r| r.report.as_ref())
        .collect();
    let first = reports.first()?;
    let name = first.figures.keys().next()?.clone();
    let values = reports
        .iter()
        .filter_map(|r| r.figures.get(&name).copied())
        .collect();
    let mut hosts: Vec<&str> = l
        .check
        .ranks
        .iter()
        .map(|r| r.planned_host.as_str())
        .collect();
    hosts.sort_unstable();
    hosts.dedup();
    let per_node = l.check.ranks.len() / hosts.len().max(1);
    Some((first.workload.clone(), name, values, per_node))
}

/// Every pair of launches whose ranks per node are N and 2N, with verified runs
/// of the same workload at both; `topo` is a node's.
pub fn doublings(launches: &[LaunchCheck], topo: &Topology) -> Vec<Doubling> {
    let all: Vec<_> = launches.iter().filter_map(figures).collect();
    let mut out = Vec::new();
    for (w, f, base, n) in &all {
        let Some((_, _, doubled, _)) = all
            .iter()
            .find(|(w2, f2, _, m)| w2 == w && f2 == f && *m == 2 * n)
        else {
            continue;
        };
        out.extend(Doubling::new(
            w.clone(),
            f.clone(),
            *n,
            (base, doubled),
            DoubledOn::on(topo, 2 * n),
        ));
    }
    out
}

/// What a sweep's performance is called in a finding.
fn figure_name(basis: &Basis) -> String {
    match basis {
        Basis::Time => "speed (1 / time, the launcher's start-up left out)".into(),
        Basis::Metric { name, .. } => name.clone(),
    }
}

/// The doublings of a sweep through a launcher (`sweep --launcher`): for each
/// placement and node count, the points at N and 2N ranks per node, over the
/// measured runs that ended ok (verified, for a program that reports a verdict),
/// on `basis`, the basis of the sweep's speedups.
pub fn doublings_in_sweep(header: &Header, records: &[RunRecord], basis: &Basis) -> Vec<Doubling> {
    if header.plan.launch.is_none() {
        return Vec::new();
    }
    let program = header
        .command
        .argv
        .iter()
        .map(|a| a.rsplit('/').next().unwrap_or(a))
        .collect::<Vec<_>>()
        .join(" ");
    // (placement, nodes, ranks per node) -> performance of each ok run
    let mut groups: BTreeMap<(String, usize, usize), Vec<f64>> = BTreeMap::new();
    let mut threads_per_rank = 1;
    for r in records
        .iter()
        .filter(|r| !r.warmup && r.status == RunStatus::Ok)
    {
        let (Some(ranks), Some(perf)) = (&r.ranks, basis.perf(r)) else {
            continue;
        };
        threads_per_rank = ranks.threads_per_rank.max(1);
        let key = (
            r.point.placement.to_string(),
            ranks.nodes,
            ranks.ranks_per_node,
        );
        groups.entry(key).or_default().push(perf);
    }
    let mut out = Vec::new();
    for ((placement, nodes, n), base) in &groups {
        let Some(doubled) = groups.get(&(placement.clone(), *nodes, 2 * n)) else {
            continue;
        };
        let s = if *nodes == 1 { "" } else { "s" };
        let workload = format!("{program} ({placement}, {nodes} node{s})");
        out.extend(Doubling::new(
            workload,
            figure_name(basis),
            *n,
            (base, doubled),
            DoubledOn::on(&header.machine.topology, 2 * n * threads_per_rank),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use scalescope_model::launch::{ProgramRun, RankCheck, RanksCheck};
    use scalescope_model::workload::{Verification, WorkloadReport};

    fn launch(ranks: usize, mops: &[f64], verified: bool) -> LaunchCheck {
        let rank = |r: usize| RankCheck {
            rank: r as u32,
            planned_host: "n".into(),
            planned: Default::default(),
            probe: None,
            inside_plan: true,
        };
        let run = |(i, &m): (usize, &f64)| ProgramRun {
            rep: i,
            wall_secs: 1.0,
            exit_code: Some(if verified { 0 } else { 4 }),
            timed_out: false,
            report: Some(WorkloadReport {
                workload: "ep".into(),
                threads: ranks,
                verification: if verified {
                    Verification::Passed("ok".into())
                } else {
                    Verification::Failed("no".into())
                },
                seconds: 1.0,
                figures: [("mops".to_string(), m)].into(),
                units: Default::default(),
                detail: Default::default(),
                setup: None,
                trials: None,
            }),
        };
        LaunchCheck {
            ranks_per_node: ranks.to_string(),
            command: String::new(),
            rankfile: None,
            exit_code: Some(0),
            timed_out: false,
            stderr_tail: String::new(),
            check: RanksCheck {
                ranks: (0..ranks).map(rank).collect(),
                all_inside_plan: true,
                unexpected: Vec::new(),
            },
            runs: mops.iter().enumerate().map(run).collect(),
        }
    }

    #[test]
    fn doubling_gain_is_the_ratio_of_medians() {
        let d = doublings(
            &[
                launch(1, &[9.0], true),
                launch(16, &[100.0, 90.0, 110.0], true),
                launch(32, &[140.0, 135.0, 150.0], true),
            ],
            &topo("package:1 core:16 pu:2"),
        );
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].base_ranks, 16);
        assert!((d[0].gain - 1.4).abs() < 1e-12);
        let (lo, hi) = d[0].ci95.unwrap();
        assert!(lo <= 1.4 && 1.4 <= hi, "{lo} {hi}");
        let s = d[0].sentence();
        assert!(s.contains("+40%") && s.contains("on SMT siblings"), "{s}");
        assert!(s.contains("95% interval"), "{s}");
    }

    fn topo(spec: &str) -> scalescope_topo::Topology {
        scalescope_topo::Source::Synthetic(spec.into())
            .load()
            .unwrap()
    }

    #[test]
    fn ranks_per_node_are_counted_per_node_and_named_as_they_are() {
        // Two nodes: 4 ranks (2 per node) then 8 (4 per node) on 4-core nodes.
        let mut two = launch(4, &[10.0], true);
        let mut four = launch(8, &[12.0], true);
        for (i, r) in two.check.ranks.iter_mut().enumerate() {
            r.planned_host = format!("n{}", i / 2);
        }
        for (i, r) in four.check.ranks.iter_mut().enumerate() {
            r.planned_host = format!("n{}", i / 4);
        }
        let d = doublings(&[two, four], &topo("package:1 core:4 pu:1"));
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].base_ranks, 2);
        let s = d[0].sentence();
        assert!(
            s.contains("4 ranks per node (still at most one per core)"),
            "{s}"
        );
        assert!(d[0].ci95.is_none(), "one run each has no interval");
    }

    /// A launched sweep: N ranks per node at `rpn`, each run's mops, ok or not.
    fn sweep(points: &[(usize, &[f64], bool)]) -> (Header, Vec<RunRecord>) {
        use scalescope_model::launch::{LaunchPlan, RunRanks};
        use scalescope_model::plan::Plan;
        use scalescope_place::{MemPolicy, Strategy};
        let topo = scalescope_topo::Source::Synthetic("package:1 core:2 pu:1".into())
            .load()
            .unwrap();
        let record = |rpn: usize, m: f64, ok: bool| -> RunRecord {
            let v = serde_json::json!({
                "threads": rpn, "placement": "compact", "mem": "first-touch",
                "rep": 0, "warmup": false, "thread_cpus": [], "started_unix_secs": 0.0,
                "wall_secs": 1.0, "user_secs": null, "sys_secs": null, "max_rss_bytes": null,
                "status": if ok { "ok" } else { "failed" }, "exit_code": 0, "signal": null,
                "error": null, "metrics": {"mops": m}, "placement_check": null,
                "stdout_log": null, "stderr_log": null,
            });
            let mut r: RunRecord = serde_json::from_value(v).unwrap();
            r.ranks = Some(RunRanks {
                launcher: "srun".into(),
                hosts: vec!["n1".into()],
                nodes: 1,
                ranks_per_node: rpn,
                threads_per_rank: 1,
                command: String::new(),
                check: None,
                launch_secs: None,
            });
            r
        };
        let records = points
            .iter()
            .flat_map(|(rpn, ms, ok)| ms.iter().map(move |m| record(*rpn, *m, *ok)))
            .collect();
        let header = Header {
            schema: "scalescope.results".into(),
            schema_version: 3,
            scalescope_version: "test".into(),
            started_unix_secs: 0.0,
            command: scalescope_model::store::CommandSpec {
                trials: None,
                kind: "external".into(),
                argv: vec!["/opt/scalescope-mpi-nas".into(), "ep".into(), "B".into()],
                shell: false,
                workload: None,
                params: Default::default(),
                env: vec![],
                metrics: vec![],
            },
            plan: Plan {
                threads: points.iter().map(|p| p.0).collect(),
                placements: vec![Strategy::Compact],
                mems: vec![MemPolicy::FirstTouch],
                reps: 3,
                warmup: 0,
                options: Default::default(),
                order: Default::default(),
                launch: Some(LaunchPlan {
                    launcher: "srun".into(),
                    program: "srun".into(),
                    extra_args: vec![],
                    hosts: vec!["n1".into()],
                    ranks_per_node: vec!["16".into(), "32".into()],
                    threads_per_rank: 1,
                    node_counts: vec![],
                    per_node: vec![],
                    hosts_from: Default::default(),
                }),
            },
            timeout_secs: None,
            kill_grace_secs: None,
            machine: scalescope_model::fingerprint::Fingerprint::read(
                std::path::Path::new("/nonexistent"),
                &topo,
            ),
        };
        (header, records)
    }

    #[test]
    fn doubled_ranks_are_labelled_by_the_machine() {
        let smt = scalescope_topo::Source::Synthetic("package:1 core:8 pu:2".into())
            .load()
            .unwrap();
        assert_eq!(DoubledOn::on(&smt, 8), DoubledOn::OnePerCore);
        assert_eq!(DoubledOn::on(&smt, 16), DoubledOn::SmtSiblings { cores: 8 });
        assert_eq!(
            DoubledOn::on(&smt, 32),
            DoubledOn::Oversubscribed { pus: 16 }
        );
        let plain = scalescope_topo::Source::Synthetic("package:1 core:8 pu:1".into())
            .load()
            .unwrap();
        assert_eq!(
            DoubledOn::on(&plain, 16),
            DoubledOn::Oversubscribed { pus: 8 }
        );
    }

    #[test]
    fn a_launched_sweep_gives_the_doubling_over_its_ok_runs() {
        let (h, r) = sweep(&[
            (16, &[100.0, 90.0, 110.0], true),
            (32, &[140.0, 135.0, 150.0], true),
            (32, &[1.0], false),
        ]);
        let mops = Basis::Metric {
            name: "mops".into(),
            higher_is_better: true,
        };
        let d = doublings_in_sweep(&h, &r, &mops);
        assert_eq!(d.len(), 1);
        assert!((d[0].gain - 1.4).abs() < 1e-12, "{:?}", d[0]);
        assert_eq!(d[0].runs_each, (3, 3));
        let s = d[0].sentence();
        assert!(
            s.starts_with("scalescope-mpi-nas ep B (compact, 1 node): 32 ranks"),
            "{s}"
        );
        // 32 ranks on a machine of 2 PUs without SMT: oversubscribed, never "SMT"
        // or "two per core".
        assert_eq!(d[0].on, DoubledOn::Oversubscribed { pus: 2 });
        assert!(
            s.contains("oversubscribed") && !s.contains("per core"),
            "{s}"
        );
        assert_eq!(d[0].on.boundary(), Boundary::Oversubscribed);
        // Without a launch, or without the doubled point, no finding.
        let mut direct = h.clone();
        direct.plan.launch = None;
        assert!(doublings_in_sweep(&direct, &r, &mops).is_empty());
        let (h, r) = sweep(&[(16, &[100.0], true), (24, &[140.0], true)]);
        assert!(doublings_in_sweep(&h, &r, &mops).is_empty());
        // On the time basis, the launcher's start-up is left out of every run.
        let (h, mut r) = sweep(&[(16, &[1.0, 1.0], true), (32, &[1.0, 1.0], true)]);
        for (i, run) in r.iter_mut().enumerate() {
            run.wall_secs = if i < 2 { 2.5 } else { 1.5 };
            run.ranks.as_mut().unwrap().launch_secs = Some(0.5);
        }
        let d = doublings_in_sweep(&h, &r, &Basis::Time);
        assert!((d[0].gain - 2.0).abs() < 1e-12, "{:?}", d[0]);
    }

    #[test]
    fn unverified_runs_give_no_finding() {
        let two = [launch(16, &[100.0], true), launch(32, &[140.0], false)];
        assert!(doublings(&two, &topo("package:1 core:16 pu:2")).is_empty());
    }
}
