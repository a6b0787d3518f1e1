//! The calibrated model asked about another machine: each placement's layouts on
//! the target, the speedup under the best fit and under every bootstrap draw (with
//! the undetermined parameters drawn from their stated ranges), the points that
//! extrapolate marked with the reason, the recommendation and its limit.

use serde::{Deserialize, Serialize};

use scalescope_place::Strategy;
use scalescope_topo::Topology;

use super::calibrate::{Coverage, Fitted};
use super::model::Layout;
use super::model::{self, Mechanism, Params, Scales};
use super::{Calibration, MeasuredCurve, PREDICTION_SCHEMA_VERSION};
use crate::boot::{percentile_ci, Rng};
use crate::events::{events, TopologyEvent};

/// The target's per-node bandwidth, measured there or stated.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetBandwidth {
    pub node_gbps: Option<f64>,
    /// Where it came from (a file, or `stated`).
    pub source: Option<String>,
}

/// One parameter of the model, with its interval and where it comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    pub value: f64,
    pub ci95: Option<(f64, f64)>,
    pub unit: String,
    /// `fitted`, `assumed` (not determined by the calibration) or `measured`.
    pub source: String,
}

/// One predicted point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PredictedPoint {
    pub threads: usize,
    pub speedup: f64,
    pub ci95: Option<(f64, f64)>,
    /// The calibration's one-thread time times t(p)/t(1) (time basis only).
    pub time_secs: Option<f64>,
    pub nodes: usize,
    pub packages: usize,
    pub smt: bool,
    /// Share of threads off the first thread's node.
    pub remote_share: f64,
    pub limit: Mechanism,
    /// What removing the limit would multiply the speedup by.
    pub limit_gain: f64,
    /// Why this point is beyond what the calibration measured (empty: inside).
    pub extrapolated: Vec<String>,
}

/// One placement's predicted curve and its topology events on the target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PredictedCurve {
    pub placement: Strategy,
    pub points: Vec<PredictedPoint>,
    pub events: Vec<TopologyEvent>,
}

/// The thread count and placement predicted fastest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recommendation {
    pub placement: Strategy,
    pub threads: usize,
    pub speedup: f64,
    pub ci95: Option<(f64, f64)>,
    pub limit: Mechanism,
    pub limit_gain: f64,
    /// The fewest threads (same placement) within 5% of the best.
    pub within_5_percent: usize,
    pub extrapolated: bool,
    pub sentence: String,
}

/// What `scalescope predict` reports (`kind` `scalescope.prediction`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    pub kind: String,
    pub schema_version: u32,
    /// Always true: nothing here was measured on the target.
    pub is_prediction: bool,
    pub calibration_machine: String,
    pub target_machine: String,
    pub basis: String,
    pub coverage: Coverage,
    pub params: Vec<Param>,
    pub measured: Vec<MeasuredCurve>,
    pub curves: Vec<PredictedCurve>,
    pub recommendation: Option<Recommendation>,
    /// One sentence per assumption a prediction rests on.
    pub assumptions: Vec<String>,
    pub draws: usize,
}

/// The central values of what the calibration could not determine, and the ranges
/// drawn for the intervals.
const REMOTE_PRIOR: (f64, f64) = (0.6, 1.0);
const SMT_PRIOR: (f64, f64) = (0.0, 0.3);

fn uniform(rng: &mut Rng, (lo, hi): (f64, f64)) -> f64 {
    lo + (hi - lo) * ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
}

/// What the target changes: the node bandwidth ratio, the override of the
/// per-thread traffic from evidence, the calibration's remote distance.
struct Context {
    scales: Scales,
    /// inv_bandwidth on the target from the measured demand (GB/s per thread over
    /// the target node's GB/s), when both are known and the calibration's node
    /// bandwidth is not.
    inv_override: Option<f64>,
    /// The target has more threads per node than measured.
    beyond_per_node: bool,
}

fn context(cal: &Calibration, target_max_per_node: usize, bw: &TargetBandwidth) -> Context {
    let mut scales = Scales {
        cal_distance: cal.coverage.remote_distance,
        ..Scales::default()
    };
    let mut inv_override = None;
    match (bw.node_gbps, cal.node_gbps, cal.demand_gbps) {
        (Some(t), Some(c), _) => scales.bandwidth = t / c,
        (Some(t), None, Some(d)) => inv_override = Some(d / t),
        _ => {}
    }
    Context {
        scales,
        inv_override,
        beyond_per_node: target_max_per_node > cal.coverage.max_per_node,
    }
}

/// The parameters the target is evaluated with for one draw: the fitted ones, and
/// for each the calibration could not determine, a value from its range.
fn target_params(
    cal: &Calibration,
    ctx: &Context,
    d: &Params,
    rng: Option<&mut Rng>,
) -> (Params, Scales) {
    let (mut p, mut s) = (*d, ctx.scales);
    let free = &cal.free;
    let m = cal.coverage.max_per_node.max(1) as f64;
    match rng {
        None => {
            if let Some(i) = ctx.inv_override {
                p.inv_bandwidth = i;
            }
        }
        Some(rng) => {
            if !free.remote {
                p.remote = uniform(rng, REMOTE_PRIOR);
            }
            if !free.smt {
                p.smt_yield = uniform(rng, SMT_PRIOR);
            }
            s.distance_power = uniform(rng, (0.0, 1.0));
            if let Some(i) = ctx.inv_override {
                p.inv_bandwidth = i;
            } else if ctx.beyond_per_node && p.inv_bandwidth < 1.0 / m {
                // No cap seen up to m threads per node: one may sit just beyond.
                p.inv_bandwidth = uniform(rng, (0.0, 1.0 / m));
            }
        }
    }
    (p, s)
}

/// The named strategies whose layouts differ on the target (in a fixed order).
fn placements(topo: &Topology, counts: &[usize]) -> Vec<(Strategy, Vec<Layout>)> {
    let order = [
        Strategy::CoresFirst,
        Strategy::Compact,
        Strategy::Scatter,
        Strategy::Spread,
        Strategy::SmtPairs,
    ];
    let mut out: Vec<(Strategy, Vec<Layout>)> = Vec::new();
    for s in order {
        let ls = super::model::layouts(topo, &s, counts);
        if let Some(ls) = ls {
            if !out.iter().any(|(_, o)| *o == ls) {
                out.push((s, ls));
            }
        }
    }
    out
}

/// Thread counts on the target: all of them up to 128, else the boundary design.
fn counts(topo: &Topology) -> Vec<usize> {
    let n = scalescope_place::every_usable_cpu(topo).max(1);
    if n <= 128 {
        return (1..=n).collect();
    }
    let all = [Strategy::CoresFirst, Strategy::Compact, Strategy::Scatter];
    let mut t = crate::events::boundary_threads(topo, &all, n);
    t.extend(std::iter::successors(Some(1usize), |x| Some(x * 2)).take_while(|x| *x < n));
    t.sort_unstable();
    t.dedup();
    t
}

fn extrapolation(c: &Coverage, l: &Layout) -> Vec<String> {
    let mut v = Vec::new();
    let mut why = |cond: bool, s: &str| {
        if cond {
            v.push(s.to_string());
        }
    };
    why(l.threads > c.max_threads, "threads");
    why(l.nodes.len() > c.nodes, "numa-nodes");
    why(l.packages > c.packages, "packages");
    why(l.max_per_node() > c.max_per_node, "threads-per-node");
    why(l.smt() && !c.smt, "smt");
    why(l.remote_threads() > 0 && !c.remote, "remote");
    v
}

/// The draws' parameters on the target (bootstrap fits, or the best fit alone when
/// there are none, each with the undetermined parameters drawn).
fn draw_params(cal: &Calibration, ctx: &Context, n: usize) -> Vec<(Params, Scales)> {
    let mut rng = Rng::new(0x5eed_0021);
    let fits: Vec<Fitted> = if cal.draws.is_empty() {
        vec![cal.best; n]
    } else {
        cal.draws.clone()
    };
    fits.iter()
        .map(|f| target_params(cal, ctx, &f.params, Some(&mut rng)))
        .collect()
}

fn point(
    cal: &Calibration,
    best: &(Params, Scales),
    draws: &[(Params, Scales)],
    one: &Layout,
    l: &Layout,
) -> PredictedPoint {
    let (p, s) = best;
    let speedup = model::speedup(p, s, one, l);
    let ds: Vec<f64> = draws
        .iter()
        .map(|(q, t)| model::speedup(q, t, one, l))
        .collect();
    let (limit, limit_gain) = model::limit(p, s, one, l);
    let time_secs = match cal.basis {
        crate::Basis::Time => cal.one_thread_secs.map(|t1| t1 / speedup),
        _ => None,
    };
    PredictedPoint {
        threads: l.threads,
        speedup,
        ci95: percentile_ci(&ds).map(|(a, b)| (a.min(speedup), b.max(speedup))),
        time_secs,
        nodes: l.nodes.len(),
        packages: l.packages,
        smt: l.smt(),
        remote_share: l.remote_share(),
        limit,
        limit_gain,
        extrapolated: extrapolation(&cal.coverage, l),
    }
}

/// Predicts every distinct placement's curve on `target`.
pub fn predict(cal: &Calibration, target: &Topology, bw: &TargetBandwidth) -> Prediction {
    let counts = counts(target);
    let pls = placements(target, &counts);
    let max_per_node = pls
        .iter()
        .flat_map(|(_, ls)| ls.iter().map(Layout::max_per_node))
        .max()
        .unwrap_or(0);
    let ctx = context(cal, max_per_node, bw);
    let best = target_params(cal, &ctx, &cal.best.params, None);
    let draws = draw_params(cal, &ctx, super::CalibrateOptions::default().draws);
    let curves: Vec<PredictedCurve> = pls
        .iter()
        .filter_map(|(s, ls)| {
            let one = ls.first()?;
            Some(PredictedCurve {
                placement: s.clone(),
                points: ls
                    .iter()
                    .map(|l| point(cal, &best, &draws, one, l))
                    .collect(),
                events: events(target, s, counts.last().copied().unwrap_or(1)),
            })
        })
        .collect();
    let recommendation = super::target_text::recommend(&curves);
    Prediction {
        kind: "scalescope.prediction".into(),
        schema_version: PREDICTION_SCHEMA_VERSION,
        is_prediction: true,
        calibration_machine: cal.machine.clone(),
        target_machine: target.summary(),
        basis: cal.basis.label(),
        coverage: cal.coverage.clone(),
        params: super::target_text::params(cal, bw),
        measured: measured(cal),
        assumptions: super::target_text::assumptions(cal, &curves, bw, ctx.inv_override.is_some()),
        curves,
        recommendation,
        draws: draws.len(),
    }
}

/// The calibration's points as speedups against the fitted one-thread performance.
fn measured(cal: &Calibration) -> Vec<MeasuredCurve> {
    let one = cal
        .points
        .iter()
        .find(|p| p.layout.threads == 1)
        .map(|p| p.median())
        .unwrap_or_else(|| {
            cal.best.scale / model::time(&cal.best.params, &Scales::default(), &one_thread())
        });
    let mut out: Vec<MeasuredCurve> = Vec::new();
    for p in &cal.points {
        let pt = (p.layout.threads, p.median() / one);
        match out.iter_mut().find(|c| c.placement == p.placement) {
            Some(c) => c.points.push(pt),
            None => out.push(MeasuredCurve {
                placement: p.placement.clone(),
                points: vec![pt],
            }),
        }
    }
    out
}

/// One thread alone on the home node.
pub fn one_thread() -> Layout {
    Layout {
        threads: 1,
        nodes: vec![super::model::NodeLoad {
            node: None,
            sharing: vec![(1, 1)],
            home: true,
            distance: None,
        }],
        packages: 1,
    }
}
