//! The hyper-threading-doubling finding: the same program at N ranks per node and
//! then 2N on the same cores (one rank per core, then two: on SMT machines the
//! second rank of a core runs on its sibling hardware thread), like with like:
//! same launcher, nodes, kernel and class, only the ranks per node doubled. The gain
//! is the ratio of the medians of the program's figure of merit (higher is better,
//! Mop/s for NAS kernels) over the verified runs at each count.

use std::collections::BTreeMap;

use scalescope_results::ranks::LaunchCheck;
use scalescope_results::store::{Header, RunRecord, RunStatus};

/// The median of finite values; `None` when there is none.
fn median(values: &[f64]) -> Option<f64> {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    crate::stats::median_of(&v)
}

/// One doubling: the base and doubled ranks per node and the gain.
#[derive(Debug, Clone, PartialEq)]
pub struct Doubling {
    pub workload: String,
    pub figure: String,
    pub base_ranks: usize,
    pub base_median: f64,
    pub doubled_median: f64,
    /// doubled / base: above 1, the extra ranks per core paid off.
    pub gain: f64,
    pub runs_each: (usize, usize),
}

impl Doubling {
    /// The finding in one sentence.
    pub fn sentence(&self) -> String {
        format!(
            "{}: {} ranks per node (two per core) give {:.2}x the {} of {} ({:+.0}%; medians of {} and {} verified runs)",
            self.workload,
            2 * self.base_ranks,
            self.gain,
            self.figure,
            self.base_ranks,
            (self.gain - 1.0) * 100.0,
            self.runs_each.1,
            self.runs_each.0
        )
    }
}

/// The verified figures of one launch: (workload, figure name, values, ranks).
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
    Some((first.workload.clone(), name, values, l.check.ranks.len()))
}

/// Every pair of launches whose rank counts are N and 2N, with verified runs of
/// the same workload at both.
pub fn doublings(launches: &[LaunchCheck]) -> Vec<Doubling> {
    let all: Vec<_> = launches.iter().filter_map(figures).collect();
    let mut out = Vec::new();
    for (w, f, base, n) in &all {
        let Some((_, _, doubled, _)) = all
            .iter()
            .find(|(w2, f2, _, m)| w2 == w && f2 == f && *m == 2 * n)
        else {
            continue;
        };
        let (Some(b), Some(d)) = (median(base), median(doubled)) else {
            continue;
        };
        if b > 0.0 {
            out.push(Doubling {
                workload: w.clone(),
                figure: f.clone(),
                base_ranks: *n,
                base_median: b,
                doubled_median: d,
                gain: d / b,
                runs_each: (base.len(), doubled.len()),
            });
        }
    }
    out
}

/// The doublings of a sweep through a launcher (`sweep --launcher`): for each
/// placement and node count, the points at N and 2N ranks per node, over the
/// measured runs that ended ok (verified, for a program that reports a verdict),
/// with the first figure the runs report (Mop/s for NAS kernels).
pub fn doublings_in_sweep(header: &Header, records: &[RunRecord]) -> Vec<Doubling> {
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
    // (placement, nodes, ranks per node) -> (figure, values)
    let mut groups: BTreeMap<(String, usize, usize), (String, Vec<f64>)> = BTreeMap::new();
    for r in records
        .iter()
        .filter(|r| !r.warmup && r.status == RunStatus::Ok)
    {
        let (Some(ranks), Some((name, value))) = (&r.ranks, r.metrics.iter().next()) else {
            continue;
        };
        let key = (
            r.point.placement.to_string(),
            ranks.nodes,
            ranks.ranks_per_node,
        );
        let entry = groups
            .entry(key)
            .or_insert_with(|| (name.clone(), Vec::new()));
        if &entry.0 == name {
            entry.1.push(*value);
        }
    }
    let mut out = Vec::new();
    for ((placement, nodes, n), (figure, base)) in &groups {
        let Some((f2, doubled)) = groups.get(&(placement.clone(), *nodes, 2 * n)) else {
            continue;
        };
        let (Some(b), Some(d)) = (median(base), median(doubled)) else {
            continue;
        };
        if f2 == figure && b > 0.0 {
            out.push(Doubling {
                workload: format!("{program} ({placement}, {nodes} nodes)"),
                figure: figure.clone(),
                base_ranks: *n,
                base_median: b,
                doubled_median: d,
                gain: d / b,
                runs_each: (base.len(), doubled.len()),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use scalescope_results::ranks::{ProgramRun, RankCheck, RanksCheck};
    use scalescope_results::workload::{Verification, WorkloadReport};

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
        let d = doublings(&[
            launch(1, &[9.0], true),
            launch(16, &[100.0, 90.0, 110.0], true),
            launch(32, &[140.0, 135.0, 150.0], true),
        ]);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].base_ranks, 16);
        assert!((d[0].gain - 1.4).abs() < 1e-12);
        assert!(d[0].sentence().contains("+40%"), "{}", d[0].sentence());
    }

    /// A launched sweep: N ranks per node at `rpn`, each run's mops, ok or not.
    fn sweep(points: &[(usize, &[f64], bool)]) -> (Header, Vec<RunRecord>) {
        use scalescope_place::{MemPolicy, Strategy};
        use scalescope_results::plan::Plan;
        use scalescope_results::ranks::{LaunchPlan, RunRanks};
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
            command: scalescope_results::store::CommandSpec {
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
                }),
            },
            timeout_secs: None,
            kill_grace_secs: None,
            machine: scalescope_results::fingerprint::Fingerprint::read(
                std::path::Path::new("/nonexistent"),
                &topo,
            ),
        };
        (header, records)
    }

    #[test]
    fn a_launched_sweep_gives_the_doubling_over_its_ok_runs() {
        let (h, r) = sweep(&[
            (16, &[100.0, 90.0, 110.0], true),
            (32, &[140.0, 135.0, 150.0], true),
            (32, &[1.0], false),
        ]);
        let d = doublings_in_sweep(&h, &r);
        assert_eq!(d.len(), 1);
        assert!((d[0].gain - 1.4).abs() < 1e-12, "{:?}", d[0]);
        assert_eq!(d[0].runs_each, (3, 3));
        let s = d[0].sentence();
        assert!(
            s.starts_with("scalescope-mpi-nas ep B (compact, 1 nodes): 32 ranks"),
            "{s}"
        );
        // Without a launch, or without the doubled point, no finding.
        let mut direct = h.clone();
        direct.plan.launch = None;
        assert!(doublings_in_sweep(&direct, &r).is_empty());
        let (h, r) = sweep(&[(16, &[100.0], true), (24, &[140.0], true)]);
        assert!(doublings_in_sweep(&h, &r).is_empty());
    }

    #[test]
    fn unverified_runs_give_no_finding() {
        assert!(doublings(&[launch(16, &[100.0], true), launch(32, &[140.0], false)]).is_empty());
    }
}
