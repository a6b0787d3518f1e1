//! One quantity predicted under every rival explanation at once: each rival's
//! central value (its fit, with the undetermined parameters at their central
//! values) and 95% band (its bootstrap draws, each with the undetermined parameters
//! drawn from their stated ranges); the prediction's central value is the rivals'
//! Akaike-weighted mean in logarithms (model averaging) and its band the hull of
//! their bands (so it covers every explanation the calibration cannot rule out).

use super::calibrate::{Fitted, Free};
use super::model::{Params, Scales};
use super::target::TargetBandwidth;
use super::Calibration;
use crate::boot::{percentile_ci, Rng};

/// The central values of what the calibration could not determine, and the ranges
/// drawn for the intervals.
pub(crate) const REMOTE_PRIOR: (f64, f64) = (0.6, 1.0);
pub(crate) const SMT_PRIOR: (f64, f64) = (0.0, 0.3);

fn uniform(rng: &mut Rng, (lo, hi): (f64, f64)) -> f64 {
    lo + (hi - lo) * ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
}

/// What the target changes: the node bandwidth ratio, the override of the
/// per-thread traffic from evidence, the calibration's remote distance.
pub(crate) struct Context {
    pub scales: Scales,
    /// inv_bandwidth on the target from the measured demand (GB/s per thread over
    /// the target node's GB/s), when both are known and the calibration's node
    /// bandwidth is not.
    pub inv_override: Option<f64>,
    /// The target has more threads per node than measured.
    pub beyond_per_node: bool,
}

pub(crate) fn context(
    cal: &Calibration,
    target_max_per_node: usize,
    bw: &TargetBandwidth,
) -> Context {
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

/// The parameters the target is evaluated with for one draw of an explanation
/// that frees `free`: the fitted ones, and for each the calibration could not
/// determine, a value from its range.
pub(crate) fn target_params(
    cal: &Calibration,
    free: &Free,
    ctx: &Context,
    d: &Params,
    rng: Option<&mut Rng>,
) -> (Params, Scales) {
    let (mut p, mut s) = (*d, ctx.scales);
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

/// One explanation ready to evaluate: its weight, its central parameters and its
/// draws, each with the scale of performance.
struct Evaluated {
    weight: f64,
    best: (Params, Scales, f64),
    draws: Vec<(Params, Scales, f64)>,
}

/// Every rival explanation of a calibration, evaluated on one target.
pub(crate) struct Rivals {
    each: Vec<Evaluated>,
}

/// A predicted quantity: the model-averaged central value, the hull of the rivals'
/// bands, and each rival's central value and band (in the calibration's order).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Estimate {
    pub central: f64,
    pub ci95: Option<(f64, f64)>,
    pub each: Vec<(f64, Option<(f64, f64)>)>,
}

impl Rivals {
    /// The rivals of `cal` on the target `ctx` describes, `n` draws each where the
    /// calibration made none (the undetermined parameters still drawn).
    pub(crate) fn new(cal: &Calibration, ctx: &Context, n: usize) -> Rivals {
        let mut rng = Rng::new(0x5eed_0021);
        let each = cal
            .rivals
            .iter()
            .map(|r| {
                let (p, s) = target_params(cal, &r.free, ctx, &r.fit.params, None);
                let fits: Vec<Fitted> = if r.draws.is_empty() {
                    vec![r.fit; n]
                } else {
                    r.draws.clone()
                };
                let draws = fits
                    .iter()
                    .map(|f| {
                        let (q, t) = target_params(cal, &r.free, ctx, &f.params, Some(&mut rng));
                        (q, t, f.scale)
                    })
                    .collect();
                Evaluated {
                    weight: r.weight,
                    best: (p, s, r.fit.scale),
                    draws,
                }
            })
            .collect();
        Rivals { each }
    }

    /// Draws per rival (the most of any).
    pub(crate) fn draws(&self) -> usize {
        self.each.iter().map(|e| e.draws.len()).max().unwrap_or(0)
    }

    /// The central parameters of the best explanation (the first).
    pub(crate) fn best(&self) -> Option<(&Params, &Scales)> {
        self.each.first().map(|e| (&e.best.0, &e.best.1))
    }

    /// `f` (a positive quantity of the parameters, the scales and the scale of
    /// performance) under every rival.
    pub(crate) fn estimate(&self, f: impl Fn(&Params, &Scales, f64) -> f64) -> Estimate {
        let each: Vec<(f64, Option<(f64, f64)>)> = self
            .each
            .iter()
            .map(|e| {
                let c = f(&e.best.0, &e.best.1, e.best.2);
                let ds: Vec<f64> = e.draws.iter().map(|(p, s, k)| f(p, s, *k)).collect();
                (c, percentile_ci(&ds).map(|(a, b)| (a.min(c), b.max(c))))
            })
            .collect();
        let log_mean: f64 = self
            .each
            .iter()
            .zip(&each)
            .map(|(e, (c, _))| e.weight * c.ln())
            .sum();
        let central = log_mean.exp();
        let ci95 = each
            .iter()
            .map(|(c, ci)| ci.unwrap_or((*c, *c)))
            .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
            .filter(|_| each.iter().any(|(_, ci)| ci.is_some()))
            .map(|(a, b)| (a.min(central), b.max(central)));
        Estimate {
            central,
            ci95,
            each,
        }
    }
}
