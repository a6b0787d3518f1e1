//! One summary per point: statistics of the wall time and of every figure of merit,
//! speedup and parallel efficiency against a baseline point, and what the
//! placement check saw. Rendered as a table for people and as tidy CSV.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use scalescope_place::{MemPolicy, Strategy};

use crate::stats::{summarize, Summary};
use scalescope_model::plan::{Plan, Point};
use scalescope_model::store::{MetricSpec, RunRecord, RunStatus};
use scalescope_model::tidy;

/// Which point speedups are measured against. Unset fields mean "the same as the
/// point's own"; unset `threads` means 1, or the smallest count swept if 1 was not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Baseline {
    pub threads: Option<usize>,
    pub placement: Option<Strategy>,
    pub mem: Option<MemPolicy>,
}

impl std::str::FromStr for Baseline {
    type Err = String;
    /// `threads=1,placement=compact,mem=first-touch` (any subset).
    fn from_str(s: &str) -> Result<Self, String> {
        let mut b = Baseline::default();
        for item in s.split(',').filter(|i| !i.is_empty()) {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| format!("`{item}` is not KEY=VALUE"))?;
            match k {
                "threads" => {
                    b.threads = Some(
                        v.parse()
                            .map_err(|_| format!("`{v}` is not a thread count"))?,
                    )
                }
                "placement" => {
                    b.placement = Some(
                        v.parse()
                            .map_err(|e: scalescope_place::PlaceError| e.to_string())?,
                    )
                }
                "mem" => {
                    b.mem = Some(
                        v.parse()
                            .map_err(|e: scalescope_place::PlaceError| e.to_string())?,
                    )
                }
                other => {
                    return Err(format!(
                        "unknown baseline key `{other}` (threads, placement, mem)"
                    ))
                }
            }
        }
        Ok(b)
    }
}

/// Everything known about one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointSummary {
    #[serde(flatten)]
    pub point: Point,
    /// Measured runs that ended `ok`.
    pub runs: usize,
    pub failed: usize,
    pub wall_secs: Option<Summary>,
    /// A launched point's time as the analysis judges it: wall time less the
    /// launcher's start-up (absent for points started directly); speedups use it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figure_secs: Option<Summary>,
    pub metrics: BTreeMap<String, Summary>,
    /// The point speedups compare against.
    pub baseline: Option<Point>,
    /// Baseline median time over this point's median time.
    pub speedup: Option<f64>,
    /// Speedup per thread, relative to the baseline's thread count.
    pub efficiency: Option<f64>,
    /// Each metric's improvement over the baseline (its direction respected).
    pub metric_speedups: BTreeMap<String, f64>,
    /// All sampled runs stayed inside the plan (`None`: never sampled).
    pub placement_ok: Option<bool>,
    pub more_threads_than_planned: bool,
}

fn baseline_for(point: &Point, plan: &Plan, b: &Baseline) -> Point {
    // A point of a node axis: the same ranks per node on the fewest nodes swept.
    if let (Some(n), None) = (point.nodes, b.threads) {
        let fewest = plan
            .points()
            .iter()
            .filter_map(|p| p.nodes)
            .min()
            .unwrap_or(n);
        return Point {
            threads: point.threads / n.max(1) * fewest,
            nodes: Some(fewest),
            placement: b
                .placement
                .clone()
                .unwrap_or_else(|| point.placement.clone()),
            mem: b.mem.clone().unwrap_or_else(|| point.mem.clone()),
        };
    }
    let threads = b.threads.unwrap_or_else(|| {
        if plan.threads.contains(&1) {
            1
        } else {
            plan.threads[0]
        }
    });
    Point {
        threads,
        placement: b
            .placement
            .clone()
            .unwrap_or_else(|| point.placement.clone()),
        mem: b.mem.clone().unwrap_or_else(|| point.mem.clone()),
        nodes: None,
    }
}

/// Summarises every point of the plan from the measured, successful runs.
pub fn summarize_points(
    plan: &Plan,
    records: &[RunRecord],
    metrics: &[MetricSpec],
    baseline: &Baseline,
) -> Vec<PointSummary> {
    let raw: Vec<PointSummary> = plan
        .points()
        .into_iter()
        .map(|point| point_summary(point, records))
        .collect();
    raw.iter()
        .map(|s| with_speedups(s, &raw, plan, baseline, metrics))
        .collect()
}

/// One point's runs summarised, speedups not yet known.
fn point_summary(point: Point, records: &[RunRecord]) -> PointSummary {
    let mine: Vec<&RunRecord> = records
        .iter()
        .filter(|r| !r.warmup && r.point == point)
        .collect();
    let ok: Vec<&&RunRecord> = mine.iter().filter(|r| r.status == RunStatus::Ok).collect();
    let wall: Vec<f64> = ok.iter().map(|r| r.wall_secs).collect();
    let launched = ok.iter().any(|r| r.ranks.is_some());
    let figure: Vec<f64> = ok.iter().map(|r| r.figure_secs()).collect();
    let mut by_metric: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for r in &ok {
        for (k, v) in &r.metrics {
            by_metric.entry(k.clone()).or_default().push(*v);
        }
    }
    let checks: Vec<_> = mine
        .iter()
        .filter_map(|r| r.placement_check.as_ref())
        .collect();
    PointSummary {
        runs: ok.len(),
        failed: mine.len() - ok.len(),
        wall_secs: summarize(&wall),
        figure_secs: launched.then(|| summarize(&figure)).flatten(),
        metrics: by_metric
            .into_iter()
            .filter_map(|(k, v)| summarize(&v).map(|s| (k, s)))
            .collect(),
        baseline: None,
        speedup: None,
        efficiency: None,
        metric_speedups: BTreeMap::new(),
        placement_ok: (!checks.is_empty()).then(|| checks.iter().all(|c| c.inside_plan)),
        more_threads_than_planned: checks.iter().any(|c| c.more_threads_than_planned),
        point,
    }
}

/// `s` with its speedup, efficiency and figure-of-merit ratios against its baseline.
fn with_speedups(
    s: &PointSummary,
    all: &[PointSummary],
    plan: &Plan,
    baseline: &Baseline,
    metrics: &[MetricSpec],
) -> PointSummary {
    let higher = |name: &str| {
        metrics
            .iter()
            .find(|m| m.name == name)
            .is_none_or(|m| m.higher_is_better)
    };
    let base_point = baseline_for(&s.point, plan, baseline);
    let base = all.iter().find(|b| b.point == base_point);
    let mut out = s.clone();
    out.baseline = Some(base_point.clone());
    let time = |p: &PointSummary| p.figure_secs.clone().or_else(|| p.wall_secs.clone());
    if let (Some(b), Some(w)) = (base.and_then(time), time(s)) {
        if w.median > 0.0 {
            let speedup = b.median / w.median;
            out.speedup = Some(speedup);
            out.efficiency = Some(speedup * base_point.threads as f64 / s.point.threads as f64);
        }
    }
    let Some(b) = base else {
        return out;
    };
    for (name, m) in &s.metrics {
        if let Some(bm) = b.metrics.get(name) {
            let ratio = if higher(name) {
                m.median / bm.median
            } else {
                bm.median / m.median
            };
            if ratio.is_finite() {
                out.metric_speedups.insert(name.clone(), ratio);
            }
        }
    }
    out
}

/// Every metric any point has, sorted.
fn metric_names(points: &[PointSummary]) -> Vec<String> {
    let mut v: Vec<String> = points
        .iter()
        .flat_map(|p| p.metrics.keys().cloned())
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Tidy CSV (`summary.csv`, [`scalescope_model::tidy::SUMMARY_COLUMNS`]): one row per
/// point, one column per quantity, through the `csv` crate's quoting; numbers in their
/// shortest exact form, so `import` reads the values back as written.
pub fn to_csv(points: &[PointSummary]) -> String {
    let names = metric_names(points);
    let mut head: Vec<String> = tidy::SUMMARY_COLUMNS.map(String::from).to_vec();
    head.extend(names.iter().flat_map(|n| tidy::summary_metric_columns(n)));
    let mut w = csv::Writer::from_writer(Vec::new());
    // Writing into a Vec cannot fail.
    let _ = w.write_record(&head);
    for p in points {
        let _ = w.write_record(summary_row(p, &names));
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

fn summary_row(p: &PointSummary, names: &[String]) -> Vec<String> {
    let w = p.wall_secs.as_ref();
    let mut row = vec![
        p.point.threads.to_string(),
        p.point.placement.to_string(),
        p.point.mem.to_string(),
        p.runs.to_string(),
        p.failed.to_string(),
        tidy::opt_number(w.map(|s| s.median)),
        tidy::opt_number(w.map(|s| s.mean)),
        tidy::opt_number(w.map(|s| s.min)),
        tidy::opt_number(w.map(|s| s.max)),
        tidy::opt_number(w.map(|s| s.stddev)),
        tidy::opt_number(w.map(|s| s.ci95.0)),
        tidy::opt_number(w.map(|s| s.ci95.1)),
        tidy::opt_text(w.map(|s| s.outliers)),
        tidy::opt_number(p.speedup),
        tidy::opt_number(p.efficiency),
        tidy::opt_text(p.placement_ok),
        p.more_threads_than_planned.to_string(),
    ];
    for n in names {
        row.push(tidy::opt_number(p.metrics.get(n).map(|s| s.median)));
        row.push(tidy::opt_number(p.metric_speedups.get(n).copied()));
    }
    row
}

/// A metric's median in its column: four decimals where that reads, else
/// scientific (a rate of 1e308 is not 309 digits wide).
fn figure(v: f64) -> String {
    if v == 0.0 || (1e-3..1e11).contains(&v.abs()) {
        format!("{v:.4}")
    } else {
        format!("{v:.4e}")
    }
}

/// The table printed at the end of a sweep.
pub fn table(points: &[PointSummary]) -> String {
    let names = metric_names(points);
    let mut out = format!(
        "{:<14} {:<12} {:>7} {:>5} {:>11} {:>9} {:>8} {:>6} {:>9}",
        "placement", "mem", "threads", "runs", "median s", "±95% s", "speedup", "eff", "placement"
    );
    for n in &names {
        let _ = write!(out, " {n:>16}");
    }
    out.push('\n');
    for p in points {
        let w = p.wall_secs.as_ref();
        let check = match (p.placement_ok, p.more_threads_than_planned) {
            (Some(false), _) => "OUTSIDE",
            (_, true) => "extra-thr",
            (Some(true), false) => "ok",
            (None, false) => "-",
        };
        let failed = if p.failed > 0 {
            format!("+{}F", p.failed)
        } else {
            String::new()
        };
        let _ = write!(
            out,
            "{:<14} {:<12} {:>7} {:>5} {:>11} {:>9} {:>8} {:>6} {:>9}",
            p.point.placement.to_string(),
            p.point.mem.to_string(),
            // A point of a node axis: its total ranks at its nodes (`4@2n`).
            match p.point.nodes {
                Some(n) => format!("{}@{n}n", p.point.threads),
                None => p.point.threads.to_string(),
            },
            format!("{}{failed}", p.runs),
            w.map(|s| format!("{:.4}", s.median))
                .unwrap_or_else(|| "-".into()),
            w.map(|s| format!("{:.4}", (s.ci95.1 - s.ci95.0) / 2.0))
                .unwrap_or_else(|| "-".into()),
            p.speedup
                .map(|s| format!("{s:.2}x"))
                .unwrap_or_else(|| "-".into()),
            p.efficiency
                .map(|s| format!("{:.0}%", s * 100.0))
                .unwrap_or_else(|| "-".into()),
            check,
        );
        for n in &names {
            let _ = write!(
                out,
                " {:>16}",
                p.metrics
                    .get(n)
                    .map(|s| figure(s.median))
                    .unwrap_or_else(|| "-".into())
            );
        }
        out.push('\n');
    }
    out
}
