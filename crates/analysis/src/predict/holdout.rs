//! Leave-the-top-out validation: fit on the points with at most half the machine's
//! threads, predict the rest, and compare the predicted time with the measured one;
//! the same held-out points predicted by the USL fitted per placement on the same
//! lower points (the extrapolation the R `usl` package would make) for comparison.

use serde::{Deserialize, Serialize};

use scalescope_place::Strategy;

use super::calibrate::{self, CalPoint};
use super::model::{self, Scales};
use crate::fit;

/// One held-out point: measured and predicted times relative to one thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeldOut {
    pub placement: Strategy,
    pub threads: usize,
    /// Median performance measured.
    pub measured: f64,
    /// The mechanism model's prediction.
    pub ours: f64,
    /// The USL's (None when the placement's lower points cannot fit one).
    pub usl: Option<f64>,
}

impl HeldOut {
    /// |predicted time / measured time - 1| for a predicted performance.
    pub fn time_error(&self, predicted_perf: f64) -> f64 {
        (self.measured / predicted_perf - 1.0).abs()
    }
}

/// The lower points (threads <= `half`) and the predictions for the rest; None when
/// the lower points cannot calibrate the model.
pub fn leave_top_out(points: &[CalPoint], half: usize) -> Option<Vec<HeldOut>> {
    let train: Vec<CalPoint> = points
        .iter()
        .filter(|p| p.layout.threads <= half)
        .cloned()
        .collect();
    let cal = super::calibrate_points(
        String::new(),
        crate::Basis::Time,
        train.clone(),
        &super::CalibrateOptions { draws: 0, seed: 0 },
    )
    .ok()?;
    let scales = Scales {
        cal_distance: cal.coverage.remote_distance,
        ..Scales::default()
    };
    let p = cal.best.params;
    Some(
        points
            .iter()
            .filter(|q| q.layout.threads > half)
            .map(|q| HeldOut {
                placement: q.placement.clone(),
                threads: q.layout.threads,
                measured: q.median(),
                ours: cal.best.scale / model::time(&p, &scales, &q.layout),
                usl: usl_prediction(&train, &q.placement, q.layout.threads),
            })
            .collect(),
    )
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
