//! The hyper-threading-doubling finding: the same program at N ranks per node and
//! then 2N on the same cores (one rank per core, then two: on SMT machines the
//! second rank of a core runs on its sibling hardware thread), like with like:
//! same launcher, nodes, kernel and class, only the ranks per node doubled. The gain
//! is the ratio of the medians of the program's figure of merit (higher is better,
//! Mop/s for NAS kernels) over the verified runs at each count.

use scalescope_results::ranks::LaunchCheck;

/// The median of finite values; `None` when there is none.
fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(crate::stats::median(&v))
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
                detail: serde_json::Value::Null,
                setup: None,
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

    #[test]
    fn unverified_runs_give_no_finding() {
        assert!(doublings(&[launch(16, &[100.0], true), launch(32, &[140.0], false)]).is_empty());
    }
}
