//! The calibrated model asked about another machine: each placement's layouts on
//! the target, the speedup under the best fit and under every bootstrap draw (with
//! the undetermined parameters drawn from their stated ranges), the points that
//! extrapolate marked with the reason, the recommendation and its limit.

use serde::{Deserialize, Serialize};

use scalescope_place::Strategy;
use scalescope_topo::Topology;

use super::band::{context, Rivals};
use super::calibrate::Coverage;
use super::model::Layout;
use super::model::{self, Mechanism, Scales};
use super::tell_apart::{self, Explanation, TellApart};
use super::{Calibration, MeasuredCurve, PREDICTION_SCHEMA_VERSION};
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
    /// The rival explanations' speedups averaged (their Akaike-weighted mean in
    /// logarithms).
    pub speedup: f64,
    /// The hull of every rival explanation's 95% band.
    pub ci95: Option<(f64, f64)>,
    /// Each rival explanation's own speedup (`Prediction::explanations` order).
    pub explanations: Vec<f64>,
    /// The calibration's one-thread time times t(p)/t(1) (time basis only).
    pub time_secs: Option<f64>,
    pub nodes: usize,
    pub packages: usize,
    /// Some core runs threads on two of its PUs (SMT siblings).
    pub smt: bool,
    /// More threads than the PUs they run on (never called SMT).
    #[serde(default)]
    pub oversubscribed: bool,
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
    /// Every explanation the calibration cannot rule out, best first
    /// (docs/ANALYSIS.md, "Rival explanations"); each point's `explanations`
    /// follow this order.
    pub explanations: Vec<Explanation>,
    /// The measurement on the calibration machine that would tell the leading
    /// explanation from a rival (None with one explanation).
    pub tell_apart: Option<TellApart>,
}

/// The named strategies whose layouts differ on the target (in a fixed order).
pub(crate) fn placements(topo: &Topology, counts: &[usize]) -> Vec<(Strategy, Vec<Layout>)> {
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
pub(crate) fn counts(topo: &Topology) -> Vec<usize> {
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
    why(l.siblings && !c.smt, "smt");
    why(l.oversubscribed() && !c.smt, "oversubscribed");
    why(l.remote_threads() > 0 && !c.remote, "remote");
    v
}

fn point(cal: &Calibration, rivals: &Rivals, one: &Layout, l: &Layout) -> PredictedPoint {
    let est = rivals.estimate(|p, s, _| model::speedup(p, s, one, l));
    let (limit, limit_gain) = match rivals.best() {
        Some((p, s)) => model::limit(p, s, one, l),
        None => (Mechanism::Compute, 1.0),
    };
    let time_secs = match cal.basis {
        crate::Basis::Time => cal.one_thread_secs.map(|t1| t1 / est.central),
        _ => None,
    };
    PredictedPoint {
        threads: l.threads,
        speedup: est.central,
        ci95: est.ci95,
        explanations: est.each.iter().map(|e| e.0).collect(),
        time_secs,
        nodes: l.nodes.len(),
        packages: l.packages,
        smt: l.siblings,
        oversubscribed: l.oversubscribed(),
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
    let rivals = Rivals::new(cal, &ctx, super::CalibrateOptions::default().draws);
    let curves: Vec<PredictedCurve> = pls
        .iter()
        .filter_map(|(s, ls)| {
            let one = ls.first()?;
            Some(PredictedCurve {
                placement: s.clone(),
                points: ls.iter().map(|l| point(cal, &rivals, one, l)).collect(),
                events: events(target, s, counts.last().copied().unwrap_or(1)),
            })
        })
        .collect();
    let recommendation = super::target_text::recommend(&curves);
    let tell = tell_apart::tell_apart(cal);
    let mut assumptions =
        super::target_text::assumptions(cal, &curves, bw, ctx.inv_override.is_some());
    assumptions.extend(tell_apart::sentences(cal, tell.as_ref()));
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
        assumptions,
        curves,
        recommendation,
        draws: rivals.draws(),
        explanations: tell_apart::explanations(&cal.rivals),
        tell_apart: tell,
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
        pus: 1,
        siblings: false,
    }
}
