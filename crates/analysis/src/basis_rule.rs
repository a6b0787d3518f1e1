//! One basis per sweep, said once: the figure the run table, the analysis, the
//! report and the findings all measure speedups by, chosen by one rule, and the
//! sentence that says which and why.
//!
//! The rule ([`Basis::default_for`]): the program's figure of merit when it
//! reports one (its own measure of its work, which leaves out process start-up,
//! input preparation and the answer's check), else wall time. Where the runs say
//! how long their timed part took (`setup.kernel_secs`), its median share of each
//! run's wall time is measured; under [`SMALL_SHARE`] it is said, since wall time
//! would then mostly time the rest (a TPC-H sweep's query is 10% of its run: the
//! wall-time speedup 0.71x, the figure of merit's 1.70x).

use serde::{Deserialize, Serialize};

use scalescope_model::store::{Header, RunRecord, RunStatus};

use crate::summary::PointSummary;
use crate::Basis;

/// The timed part's share of a run's wall time under which wall time is said to
/// measure mostly something else.
pub const SMALL_SHARE: f64 = 0.5;

/// The median share of the timed part in the wall time of the measured runs that
/// ended ok and report it (None when none does).
pub fn timed_share(records: &[RunRecord]) -> Option<f64> {
    let mut shares: Vec<f64> = records
        .iter()
        .filter(|r| !r.warmup && r.status == RunStatus::Ok && r.wall_secs > 0.0)
        .filter_map(|r| Some(r.setup.as_ref()?.kernel_secs? / r.wall_secs))
        .filter(|s| s.is_finite())
        .collect();
    if shares.is_empty() {
        return None;
    }
    shares.sort_by(f64::total_cmp);
    Some(crate::stats::median(&shares))
}

/// The basis the rule picks for a sweep.
pub fn rule(header: &Header) -> Basis {
    Basis::default_for(header)
}

/// Which figure the speedups measure and why, in one sentence, with how each run
/// made its figure where it ran the kernel more than once.
pub fn statement(basis: &Basis, header: &Header, records: &[RunRecord]) -> String {
    let said = basis_sentence(basis, header, records);
    match (header.command.trials, basis) {
        (Some(n), Basis::Metric { .. }) => format!(
            "{said}; each run's figure is the median of its {} warm trials of the kernel in one process (the first of {n}, cold, left out)",
            n - 1
        ),
        (Some(n), Basis::Time) => {
            format!("{said}; each run's wall time covers all {n} trials of its kernel")
        }
        (None, _) => said,
    }
}

/// [`statement`] without the trials.
fn basis_sentence(basis: &Basis, header: &Header, records: &[RunRecord]) -> String {
    let share = timed_share(records).filter(|s| *s < SMALL_SHARE);
    let metric = header.command.metrics.first().map(|m| m.name.as_str());
    let pct = |s: f64| format!("{:.0}%", s * 100.0);
    match (basis, share, metric) {
        (Basis::Metric { name, .. }, Some(s), _) => format!(
            "figure of merit `{name}`: the timed part is {} of each run's wall time (median), so wall time would mostly measure the set-up around it; every speedup here is of `{name}`",
            pct(s)
        ),
        (Basis::Metric { name, .. }, None, _) => {
            format!("figure of merit `{name}`, the program's own measure of its work")
        }
        (Basis::Time, Some(s), Some(m)) => format!(
            "wall time, as asked: the timed part is only {} of each run (median), so these speedups mostly measure the set-up; `--basis metric:{m}` measures the work",
            pct(s)
        ),
        (Basis::Time, Some(s), None) => format!(
            "wall time (the program reports no figure of merit); the timed part is only {} of each run (median), so these speedups include the set-up",
            pct(s)
        ),
        (Basis::Time, None, _) => "wall time".into(),
    }
}

/// The basis and its sentence, as `sweep --json` carries them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Said {
    pub label: String,
    pub statement: String,
}

impl Said {
    pub fn of(basis: &Basis, header: &Header, records: &[RunRecord]) -> Said {
        Said {
            label: basis.label(),
            statement: statement(basis, header, records),
        }
    }
}

/// The points with their speedup and efficiency measured by `basis` (for the
/// figure of merit, its ratio to the baseline's; wall time as summarised).
pub fn on_basis(points: &[PointSummary], basis: &Basis) -> Vec<PointSummary> {
    let Basis::Metric { name, .. } = basis else {
        return points.to_vec();
    };
    points
        .iter()
        .map(|p| {
            let mut q = p.clone();
            q.speedup = p.metric_speedups.get(name).copied();
            q.efficiency = match (&p.baseline, q.speedup) {
                (Some(b), Some(s)) if p.point.threads > 0 => {
                    Some(s * b.threads as f64 / p.point.threads as f64)
                }
                _ => None,
            };
            q
        })
        .collect()
}

/// The run table on `basis`, with a line naming the figure its speedup and
/// efficiency columns measure.
pub fn table(points: &[PointSummary], basis: &Basis) -> String {
    format!(
        "speedup and eff: {}\n{}",
        basis.label(),
        crate::summary::table(&on_basis(points, basis))
    )
}
