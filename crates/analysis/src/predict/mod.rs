//! Predicting a machine we do not have: a mechanism model of a program's scaling
//! ([`model`]) fitted to a sweep measured here ([`mod@calibrate`]), every
//! explanation of the sweep it cannot rule out kept ([`rivals`]), and evaluated on
//! another topology ([`target`]): every placement's speedup curve with 95%
//! intervals that cover each explanation, the thread count and placement it
//! recommends, the mechanism that limits it there, and the measurement that would
//! tell the explanations apart ([`tell_apart`]). Extrapolations (more nodes or packages than measured, SMT when
//! the calibration had none, more threads per node than measured) are marked, their
//! intervals widened by drawing the undetermined parameter from a stated range, and
//! each is named in a sentence. Equations and limits: docs/ANALYSIS.md.
//!
//! Also leave-the-top-out validation ([`leave_top_out`]): fit on the points with at
//! most half the machine's threads, predict the rest, and compare the predicted time
//! with the measured one; the same held-out points predicted by the USL fitted per
//! placement on the same lower points (the extrapolation the R `usl` package would
//! make) for comparison.
//!
//! Also the knees the model implies when fitted to one whole curve ([`implied`]),
//! which `analyze` adds to the local test's.

mod band;
pub mod calibrate;
pub mod implied;
pub mod model;
pub mod request;
pub mod rivals;
pub mod target;
mod target_text;
pub mod tell_apart;

use serde::{Deserialize, Serialize};

use scalescope_model::mem;
use scalescope_model::store::{Header, RunRecord};
use scalescope_place::Strategy;
use scalescope_topo::Topology;

use crate::ceiling::Ceiling;
use crate::{fit, Basis};
use calibrate::{CalPoint, Coverage, Fitted, Free};
use model::Params;

pub use target::{predict, Prediction, TargetBandwidth};

/// Version of the prediction JSON (docs/json.md).
/// 2: the band covers every rival explanation, the central value is their
/// weighted average; `explanations` and `tell_apart` added.
pub const PREDICTION_SCHEMA_VERSION: u32 = 2;

/// Why a sweep cannot calibrate the model.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PredictError {
    #[error("the results have {0} measured point(s) with a performance value; the model needs at least 2 (e.g. 1 and 2 threads)")]
    TooFewPoints(usize),
    #[error("the results measure only {0} thread count(s); the model needs at least 2 different thread counts")]
    TooFewThreadCounts(usize),
}

/// A measured curve, for the chart beside the prediction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredCurve {
    pub placement: Strategy,
    /// (threads, speedup against the fitted one-thread performance).
    pub points: Vec<(usize, f64)>,
}

/// A sweep turned into a fitted model.
#[derive(Debug, Clone)]
pub struct Calibration {
    pub machine: String,
    /// The machine the calibration ran on (where a measurement that tells the
    /// rivals apart is sought).
    pub topo: Topology,
    pub basis: Basis,
    pub points: Vec<CalPoint>,
    pub coverage: Coverage,
    /// The best explanation (the first rival): its parameters, fit and draws.
    pub free: Free,
    pub best: Fitted,
    pub draws: Vec<Fitted>,
    /// Every explanation the calibration cannot rule out ([`rivals`]), best first,
    /// each with its own draws.
    pub rivals: Vec<rivals::Rival>,
    /// Median wall time of the one-thread runs, when measured.
    pub one_thread_secs: Option<f64>,
    /// Bandwidth one node delivers on the calibration machine (GB/s), from a
    /// `mem stream` ceiling beside the results.
    pub node_gbps: Option<f64>,
    /// What one thread alone moves (GB/s), from the sampler's bandwidth evidence.
    pub demand_gbps: Option<f64>,
}

/// Options of a calibration.
#[derive(Debug, Clone, Copy)]
pub struct CalibrateOptions {
    pub draws: usize,
    pub seed: u64,
}

impl Default for CalibrateOptions {
    fn default() -> Self {
        CalibrateOptions {
            draws: 200,
            seed: 21,
        }
    }
}

/// The starting point of every fit: no mechanism, with the priors' central values
/// for what the calibration cannot determine.
pub const START: Params = Params {
    serial: 0.0,
    sync: 0.0,
    remote: 0.8,
    inv_bandwidth: 0.0,
    smt_yield: 0.15,
    mem_time: 0.0,
    cap_shape: 0.0,
    home_memory: false,
};

/// Fits the model to the points of a sweep measured on `topo`.
///
/// # Errors
/// Fewer than three points or thread counts.
pub fn calibrate_points(
    topo: &Topology,
    basis: Basis,
    points: Vec<CalPoint>,
    opts: &CalibrateOptions,
) -> Result<Calibration, PredictError> {
    if points.len() < 2 {
        return Err(PredictError::TooFewPoints(points.len()));
    }
    let mut counts: Vec<usize> = points.iter().map(|p| p.layout.threads).collect();
    counts.sort_unstable();
    counts.dedup();
    if counts.len() < 2 {
        return Err(PredictError::TooFewThreadCounts(counts.len()));
    }
    let coverage = calibrate::coverage(&points);
    let mut rivals = rivals::rivals(topo, &points, &coverage, START);
    for (i, r) in rivals.iter_mut().enumerate() {
        let seed = opts.seed.wrapping_add(i as u64);
        r.draws = calibrate::draws(&points, &r.free, &r.fit, opts.draws, seed);
    }
    let first = &rivals[0];
    let (free, best, draws) = (first.free, first.fit, first.draws.clone());
    let one_thread_secs = points
        .iter()
        .find(|p| p.layout.threads == 1)
        .map(|p| calibrate::median_of(&p.wall_secs));
    Ok(Calibration {
        machine: topo.summary(),
        topo: topo.clone(),
        basis,
        points,
        coverage,
        free,
        best,
        draws,
        rivals,
        one_thread_secs,
        node_gbps: None,
        demand_gbps: None,
    })
}

/// Fits the model to a sweep (and its bandwidth evidence and ceilings).
///
/// # Errors
/// Fewer than three points or thread counts.
pub fn calibrate(
    header: &Header,
    records: &[RunRecord],
    basis: &Basis,
    ceilings: &[Ceiling],
    opts: &CalibrateOptions,
) -> Result<Calibration, PredictError> {
    let topo = &header.machine.topology;
    let points = calibrate::cal_points(header, records, basis);
    let mut cal = calibrate_points(topo, basis.clone(), points, opts)?;
    cal.node_gbps = per_node_gbps(topo, ceilings);
    cal.demand_gbps = one_thread_demand(records, &cal);
    Ok(cal)
}

/// A node's bandwidth from `mem stream` ceilings: the best measured on one node,
/// else the best per node of those measured on more.
pub fn per_node_gbps(topo: &scalescope_topo::Topology, ceilings: &[Ceiling]) -> Option<f64> {
    if let Some(c) = crate::ceiling::for_nodes(topo, ceilings, 1) {
        return Some(c.gb_per_s);
    }
    ceilings
        .iter()
        .filter_map(|c| {
            let u = crate::events::usage(topo, &c.placement, c.threads)?;
            Some(c.gb_per_s / u.numa_nodes.max(1) as f64)
        })
        .max_by(f64::total_cmp)
}

/// GB/s one thread moves alone: the sampler's mean bandwidth (summed over
/// domains) at the one-thread point, where it was measured.
fn one_thread_demand(records: &[RunRecord], cal: &Calibration) -> Option<f64> {
    let ev = crate::evidence::summarize(records);
    let v: Vec<f64> = ev
        .iter()
        .filter(|e| e.point.threads == 1 && !e.bandwidth_mean.is_empty())
        .map(|e| e.bandwidth_mean.values().sum::<f64>() / 1e9)
        .filter(|g| *g > 0.0)
        .collect();
    (!v.is_empty() && cal.one_thread_secs.is_some()).then(|| calibrate::median_of(&v))
}

/// The target's bandwidth per node from documents measured there: a `mem stream
/// --json` document (its triad GB/s over the NUMA nodes its placement uses on the
/// target; the best such figure) or a `mem matrix --json` document (the mean of
/// its local cells).
///
/// # Errors
/// A document of another kind or without the fields, named by its label.
pub fn target_bandwidth(
    topo: &scalescope_topo::Topology,
    docs: &[(String, serde_json::Value)],
) -> Result<TargetBandwidth, String> {
    let mut best: Option<(f64, String)> = None;
    for (label, doc) in docs {
        let gbps = match mem::kind_of(doc).as_deref() {
            Some(mem::MATRIX_KIND) => {
                let m: mem::MatrixDocument<serde::de::IgnoredAny> =
                    mem::read(doc, mem::MATRIX_KIND).map_err(|e| format!("{label}: {e}"))?;
                matrix_local_mean(&m.matrix).ok_or_else(|| {
                    format!("{label}: `matrix.bandwidth_gb_per_s` is missing or not square")
                })?
            }
            _ => {
                let c = crate::ceiling::from_stream_doc(label, doc).map_err(|e| {
                    format!(
                        "{e} (expected a JSON document written by `mem stream` or `mem matrix`)"
                    )
                })?;
                per_node_gbps(topo, std::slice::from_ref(&c)).ok_or_else(|| {
                    format!("{label}: its placement does not fit the target machine")
                })?
            }
        };
        if best.as_ref().is_none_or(|b| gbps > b.0) {
            best = Some((gbps, label.clone()));
        }
    }
    Ok(TargetBandwidth {
        node_gbps: best.as_ref().map(|b| b.0),
        source: best.map(|b| b.1),
    })
}

/// The mean of a square bandwidth matrix's local (diagonal) cells.
fn matrix_local_mean(m: &mem::NodeMatrix) -> Option<f64> {
    let rows = &m.bandwidth_gb_per_s;
    (!rows.is_empty() && rows.iter().all(|r| r.len() == rows.len()))
        .then(|| (0..rows.len()).map(|i| rows[i][i]).sum::<f64>() / rows.len() as f64)
}

/// One held-out point: measured and predicted performance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeldOut {
    pub placement: Strategy,
    pub threads: usize,
    /// Median performance measured.
    pub measured: f64,
    /// The mechanism model's prediction (the rival explanations averaged).
    pub ours: f64,
    /// Its 95% band (the hull of the rivals' bands; None without draws).
    pub ours_ci95: Option<(f64, f64)>,
    /// Each rival explanation's prediction ([`Calibration::rivals`] order).
    pub explanations: Vec<f64>,
    /// The USL's (None when the placement's lower points cannot fit one).
    pub usl: Option<f64>,
}

impl HeldOut {
    /// |predicted time / measured time - 1| for a predicted performance.
    pub fn time_error(&self, predicted_perf: f64) -> f64 {
        (self.measured / predicted_perf - 1.0).abs()
    }

    /// The measured performance lies inside the predicted band.
    pub fn inside_band(&self) -> bool {
        self.ours_ci95
            .is_some_and(|(lo, hi)| lo <= self.measured && self.measured <= hi)
    }
}

/// Leave-the-top-out: the model calibrated on the points of `topo` with at most
/// `half` threads (and `draws` bootstrap draws per rival explanation; with none,
/// the band comes from the undetermined parameters' ranges alone), and its
/// predictions for the rest. The calibration, or None when the lower points cannot
/// calibrate the model.
pub fn leave_top_out(
    topo: &Topology,
    points: &[CalPoint],
    half: usize,
    draws: usize,
) -> Option<(Calibration, Vec<HeldOut>)> {
    let train: Vec<CalPoint> = points
        .iter()
        .filter(|p| p.layout.threads <= half)
        .cloned()
        .collect();
    let opts = CalibrateOptions { draws, seed: 0 };
    let cal = calibrate_points(topo, crate::Basis::Time, train.clone(), &opts).ok()?;
    let test: Vec<&CalPoint> = points.iter().filter(|q| q.layout.threads > half).collect();
    let most = test
        .iter()
        .map(|q| q.layout.max_per_node())
        .max()
        .unwrap_or(0);
    let ctx = band::context(&cal, most, &TargetBandwidth::default());
    let rivals = band::Rivals::new(&cal, &ctx, CalibrateOptions::default().draws);
    let held = test
        .iter()
        .map(|q| {
            let est = rivals.estimate(|p, s, scale| scale / model::time(p, s, &q.layout));
            HeldOut {
                placement: q.placement.clone(),
                threads: q.layout.threads,
                measured: q.median(),
                ours: est.central,
                ours_ci95: est.ci95,
                explanations: est.each.iter().map(|e| e.0).collect(),
                usl: usl_prediction(&train, &q.placement, q.layout.threads),
            }
        })
        .collect();
    Some((cal, held))
}

/// The USL fitted on a placement's lower points (speedup against its one-thread
/// point, weighted by the points' spread as `analyze` does), at `threads`.
fn usl_prediction(train: &[CalPoint], placement: &Strategy, threads: usize) -> Option<f64> {
    let mine: Vec<&CalPoint> = train.iter().filter(|p| &p.placement == placement).collect();
    let base = mine.iter().find(|p| p.layout.threads == 1)?.median();
    let pts: Vec<fit::FitPoint> = mine
        .iter()
        .map(|p| {
            let s = p.median() / base;
            let sd = crate::stats::summarize(&p.perfs)
                .map(|x| x.stddev / (x.n as f64).sqrt() / p.median() * s)
                .unwrap_or(0.0);
            (p.layout.threads as f64, s, sd)
        })
        .collect();
    let u = fit::fit_usl(&pts)?;
    Some(base * fit::usl(u.sigma, u.kappa, threads as f64))
}

/// The median of the absolute time errors of `f`'s predictions (None for none).
pub fn median_error(held: &[HeldOut], f: impl Fn(&HeldOut) -> Option<f64>) -> Option<f64> {
    let e: Vec<f64> = held
        .iter()
        .filter_map(|h| f(h).map(|p| h.time_error(p)))
        .collect();
    (!e.is_empty()).then(|| calibrate::median_of(&e))
}
