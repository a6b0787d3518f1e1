//! Knees implied by the mechanism model fitted to a whole curve, for bends too
//! small for a local two-segment test. The model of [`super::model`] is fitted to
//! every point of one curve at once (each point's mean performance, least squares
//! on its logarithm, the parameters chosen by AICc as for a prediction, a dropped
//! one back at "no such mechanism"), so the SMT yield measured where siblings fill
//! the first node and the remote penalty measured where threads fill the second
//! are pooled: where the siblings move to a remote node the model implies a change
//! of slope that no test of the few points around it can show.
//!
//! It is used only when every point has repetitions and
//! - lack of fit does not reject it: the residuals of the points' means against
//!   the replicate variance, F = (sum n_i r_i^2 / (m - k)) / s^2 with (m - k, df)
//!   degrees of freedom (m points, k fitted values including the scale, s the
//!   pooled run-to-run CV), has an upper-tail probability of at least
//!   [`LACK_OF_FIT_P`];
//! - it beats every model `analyze` fits (Amdahl, USL, piecewise lines at the
//!   boundaries) by AICc, all fitted to the same points: the means' speedups, each
//!   weighted by its noise (pooled CV times the speedup over the root of its runs).
//!
//! Then at each thread count k inside the measured range where the layout changes
//! what the next thread gets (a new node, SMT sharing, siblings on another node:
//! the counts where the model with every mechanism switched on changes its
//! marginal rate), the implied change of slope, (S(k+1) - S(k)) against
//! (S(k) - S(k-1)), is a knee when it is at least 15% (relative as in
//! [`crate::knee`]), its 95% interval excludes no change, the slope difference
//! exceeds its standard error times the normal quantile of [`ALPHA`] divided among
//! the candidate counts, and 80% of the draws give the stated sign and size. The
//! draws come from the parameters' normal approximation: the inverse Fisher
//! information of the log means (numerical Jacobian), widened by Student's t for
//! the replicate degrees of freedom. Bends a local test already found are left to
//! it; a bandwidth cap reached inside a node (a fitted position, not a layout
//! change) is not implied.

use serde::{Deserialize, Serialize};

use scalescope_place::Strategy;
use scalescope_topo::Topology;

use super::calibrate::{self, CalPoint, Fitted, Free};
use super::model::{layout, time, Layout, Params, Scales};
use crate::boot::{self, Rng};
use crate::finding::Confidence;
use crate::fit::{self, FitPoint};
use crate::knee::{pooled_cv, Knee, ALPHA, MIN_CHANGE};

/// The smallest lack-of-fit probability at which the model is used.
pub const LACK_OF_FIT_P: f64 = 0.05;

/// A fitted parameter with its 95% interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParamInterval {
    pub name: String,
    pub value: f64,
    pub ci95: (f64, f64),
}

/// The whole-curve fit a knee is implied by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MechanismFit {
    /// The fitted parameters; the others are held at "no such mechanism".
    pub params: Vec<ParamInterval>,
    /// Lack of fit: F, its degrees of freedom and its upper-tail probability.
    pub lack_of_fit_f: f64,
    pub lack_of_fit_df: (usize, usize),
    pub lack_of_fit_p: f64,
    pub aicc: f64,
    /// R^2 of the model on the curve's speedups.
    pub r_squared: f64,
    /// The best of the other models and its AICc.
    pub beaten: String,
    pub beaten_aicc: f64,
}

/// One curve, as `analyze` holds it.
pub struct Curve<'a> {
    pub topo: &'a Topology,
    pub placement: &'a Strategy,
    pub threads: &'a [usize],
    pub perf: &'a [Vec<f64>],
    /// Where the piecewise lines break: the last count before each topology event.
    pub breaks: &'a [f64],
}

type Coord = (
    &'static str,
    fn(&Params) -> f64,
    fn(&mut Params, f64),
    f64,
    f64,
);

fn coords(free: &Free) -> Vec<Coord> {
    let all: [(bool, Coord); 5] = [
        (
            free.serial,
            ("serial", |p| p.serial, |p, x| p.serial = x, 0.0, 1.0),
        ),
        (free.sync, ("sync", |p| p.sync, |p, x| p.sync = x, 0.0, 2.0)),
        (
            free.remote,
            ("remote", |p| p.remote, |p, x| p.remote = x, 0.1, 1.0),
        ),
        (
            free.bandwidth,
            (
                "inv_bandwidth",
                |p| p.inv_bandwidth,
                |p, x| p.inv_bandwidth = x,
                0.0,
                2.0,
            ),
        ),
        (
            free.smt,
            (
                "smt_yield",
                |p| p.smt_yield,
                |p, x| p.smt_yield = x,
                0.0,
                1.0,
            ),
        ),
    ];
    all.into_iter()
        .filter(|(f, _)| *f)
        .map(|(_, c)| c)
        .collect()
}

fn mean(v: &[f64]) -> f64 {
    crate::stats::mean(v)
}

/// The model fitted to the means of the curve's points.
/// A choice of free parameters and its fit.
type Explanation = (Free, Fitted);

fn fitted(c: &Curve) -> Option<(Vec<CalPoint>, Vec<Explanation>)> {
    let points: Vec<CalPoint> = c
        .threads
        .iter()
        .zip(c.perf)
        .map(|(&t, p)| {
            Some(CalPoint {
                placement: c.placement.clone(),
                layout: layout(c.topo, c.placement, t)?,
                perfs: vec![mean(p)],
                wall_secs: Vec::new(),
            })
        })
        .collect::<Option<_>>()?;
    let cov = calibrate::coverage(&points);
    // Every subset of the parameters the sweep determines, each fitted from the
    // prediction's priors (a free parameter) or no mechanism (a held one): which
    // mechanisms explain a curve is itself uncertain (a cap per node can mimic a
    // poor SMT yield), so the choice is made among all of them.
    let all = Free::determinable(&cov);
    let obs: Vec<(&Layout, f64)> = points.iter().map(|p| (&p.layout, p.perfs[0])).collect();
    let out = (0u32..32)
        .filter_map(|m| {
            let bit = |i: u32| m & (1 << i) != 0;
            let free = Free {
                serial: bit(0),
                sync: bit(1),
                remote: bit(2),
                bandwidth: bit(3),
                smt: bit(4),
                // The gradual per-node limit is left to predictions: on the
                // corpus's multi-node curves it only doubles the subsets fitted.
                mem_time: false,
                cap_shape: false,
                home_memory: false,
            };
            let allowed = (!free.serial || all.serial)
                && (!free.sync || all.sync)
                && (!free.remote || all.remote)
                && (!free.bandwidth || all.bandwidth)
                && (!free.smt || all.smt);
            let start = Params {
                remote: if free.remote {
                    super::START.remote
                } else {
                    1.0
                },
                smt_yield: if free.smt {
                    super::START.smt_yield
                } else {
                    1.0
                },
                ..Params::NEUTRAL
            };
            (allowed && free.count() + 2 < points.len()).then(|| {
                (
                    free,
                    calibrate::fit(&obs, &free, start, &Scales::default(), 4),
                )
            })
        })
        .collect();
    Some((points, out))
}

/// Small-sample AIC of a fit with `k` values (the scale included) on `n` points
/// from its squared log residuals.
fn log_aicc(n: usize, k: usize, sse: f64) -> f64 {
    crate::stats::aicc(n, k, sse).unwrap_or(f64::MAX)
}

/// log performance of `l` under `p` (less the log scale).
fn log_perf(p: &Params, l: &Layout) -> f64 {
    -time(p, &Scales::default(), l).ln()
}

/// Parameter draws (and each draw's log scale) from the normal approximation of
/// the fit: covariance = s^2 (J^T N J)^-1, widened by `widen`. Parameters that
/// change no fitted value are held at the estimate.
fn draws(
    points: &[CalPoint],
    reps: &[f64],
    cs: &[Coord],
    best: &Fitted,
    var: f64,
    widen: f64,
) -> Option<Vec<(Params, f64)>> {
    let p0 = best.params;
    let mut cols: Vec<(Option<usize>, Vec<f64>)> = vec![(None, vec![1.0; points.len()])];
    for (i, (_, get, set, lo, hi)) in cs.iter().enumerate() {
        let h = 1e-4 * (hi - lo);
        let (a, b) = ((get(&p0) - h).max(*lo), (get(&p0) + h).min(*hi));
        let (mut pa, mut pb) = (p0, p0);
        set(&mut pa, a);
        set(&mut pb, b);
        let col: Vec<f64> = points
            .iter()
            .map(|pt| (log_perf(&pb, &pt.layout) - log_perf(&pa, &pt.layout)) / (b - a))
            .collect();
        if col.iter().map(|x| x * x).sum::<f64>() > 1e-10 {
            cols.push((Some(i), col));
        }
    }
    let k = cols.len();
    let info: Vec<Vec<f64>> = (0..k)
        .map(|a| {
            (0..k)
                .map(|b| {
                    (0..points.len())
                        .map(|i| reps[i] * cols[a].1[i] * cols[b].1[i])
                        .sum::<f64>()
                        / var
                })
                .collect()
        })
        .collect();
    let inv: Vec<Vec<f64>> = (0..k)
        .map(|j| fit::solve(info.clone(), (0..k).map(|i| f64::from(i == j)).collect()))
        .collect::<Option<_>>()?;
    let cov: Vec<Vec<f64>> = inv
        .iter()
        .map(|r| r.iter().map(|x| x * widen * widen).collect())
        .collect();
    let l = crate::stats::cholesky(&cov)?;
    let mut rng = Rng::new(0x1a9d_5eed);
    Some(
        (0..boot::RESAMPLES)
            .map(|_| {
                let z: Vec<f64> = (0..k).map(|_| rng.normal()).collect();
                let mut p = p0;
                let mut log_scale = best.scale.ln();
                for (a, (which, _)) in cols.iter().enumerate() {
                    let d: f64 = (0..=a).map(|b| l[a][b] * z[b]).sum();
                    match which {
                        None => log_scale += d,
                        Some(i) => {
                            let (_, get, set, lo, hi) = cs[*i];
                            set(&mut p, (get(&p0) + d).clamp(lo, hi));
                        }
                    }
                }
                (p, log_scale.exp())
            })
            .collect(),
    )
}

/// The accepted fit: its summary and its draws, and the other explanations with
/// substantial support (within [`RIVAL_AICC`] of it, not rejected by lack of fit).
struct Accepted {
    summary: MechanismFit,
    best: Fitted,
    draws: Vec<(Params, f64)>,
    rivals: Vec<Fitted>,
}

/// How close (in AICc) another explanation must come to be a rival whose implied
/// knees must agree (Burnham and Anderson's "substantial support").
pub const RIVAL_AICC: f64 = 2.0;

/// F and its upper-tail probability for the lack of fit of `fit` with `k`
/// values, against the replicate variance `var` with `df` degrees of freedom.
fn lack_of_fit(
    points: &[CalPoint],
    reps: &[f64],
    fit: &Fitted,
    k: usize,
    var: f64,
    df: usize,
) -> Option<(f64, usize, f64)> {
    let d1 = points.len().checked_sub(k).filter(|d| *d > 0)?;
    let ss: f64 = points
        .iter()
        .zip(reps)
        .map(|(p, n)| {
            n * (p.perfs[0].ln() - fit.scale.ln() - log_perf(&fit.params, &p.layout)).powi(2)
        })
        .sum();
    let f = ss / d1 as f64 / var;
    Some((f, d1, crate::stats::f_upper_tail(f, d1 as f64, df as f64)))
}

/// An explanation that passed the lack-of-fit test: its AICc on the log means
/// and (F, its first degrees of freedom, its upper-tail probability).
struct Passed {
    free: Free,
    fit: Fitted,
    aicc: f64,
    lof: (f64, usize, f64),
}

/// The model's AICc and R^2 against every model `analyze` fits, all on the same
/// points: the means' speedups, each weighted by its noise (the pooled CV times
/// the speedup over the root of its runs). None unless the model has the least.
fn compete(
    c: &Curve,
    points: &[CalPoint],
    best: &Fitted,
    k: usize,
    cv: f64,
) -> Option<(f64, f64, String, f64)> {
    let base = mean(c.perf.first()?);
    let pts: Vec<FitPoint> = c
        .threads
        .iter()
        .zip(c.perf)
        .map(|(&t, v)| {
            let s = mean(v) / base;
            (t as f64, s, cv * s / (v.len() as f64).sqrt())
        })
        .collect();
    let (others, _, _) = fit::choose(&pts, c.threads[0] == 1, c.breaks);
    let s = Scales::default();
    let model = |t: f64| {
        let l = points.iter().find(|p| p.layout.threads as f64 == t);
        l.map_or(f64::NAN, |l| {
            best.scale / time(&best.params, &s, &l.layout) / base
        })
    };
    let aicc = fit::aicc_of(&pts, k, model)?;
    let (beaten, beaten_aicc) = others
        .candidates
        .iter()
        .filter(|m| m.rejected.is_none())
        .filter_map(|m| Some((m.model.clone(), m.aicc?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    (aicc < beaten_aicc).then(|| (aicc, fit::r_squared(&pts, model), beaten, beaten_aicc))
}

/// Fits the model and applies the lack-of-fit and AICc tests.
fn accept(c: &Curve) -> Option<Accepted> {
    let (cv, df) = pooled_cv(c.perf)?;
    let (points, fits) = fitted(c)?;
    let var = (cv * cv).max(1e-12);
    let reps: Vec<f64> = c.perf.iter().map(|v| v.len() as f64).collect();
    let m = points.len();
    let mut ok: Vec<Passed> = fits
        .into_iter()
        .filter_map(|(free, fit)| {
            let k = free.count() + 1;
            let lof = lack_of_fit(&points, &reps, &fit, k, var, df)?;
            (lof.2 >= LACK_OF_FIT_P).then(|| Passed {
                free,
                fit,
                aicc: log_aicc(m, k, fit.sse),
                lof,
            })
        })
        .collect();
    ok.sort_by(|a, b| a.aicc.total_cmp(&b.aicc));
    let first = ok.first()?;
    let (free, best, (f, d1, p)) = (first.free, first.fit, first.lof);
    let rivals = ok
        .iter()
        .skip(1)
        .filter(|r| r.aicc - first.aicc <= RIVAL_AICC)
        .map(|r| r.fit)
        .collect();
    let cs = coords(&free);
    let k = cs.len() + 1;
    let (aicc, r_squared, beaten, beaten_aicc) = compete(c, &points, &best, k, cv)?;
    let widen = crate::stats::t_quantile(df) / 1.96;
    let draws = draws(&points, &reps, &cs, &best, var, widen)?;
    let params = cs
        .iter()
        .map(|(name, get, ..)| {
            let v: Vec<f64> = draws.iter().map(|d| get(&d.0)).collect();
            let ci = boot::percentile_ci(&v).unwrap_or((f64::NAN, f64::NAN));
            ParamInterval {
                name: (*name).into(),
                value: get(&best.params),
                ci95: ci,
            }
        })
        .collect();
    Some(Accepted {
        summary: MechanismFit {
            params,
            lack_of_fit_f: f,
            lack_of_fit_df: (d1, df),
            lack_of_fit_p: p,
            aicc,
            r_squared,
            beaten,
            beaten_aicc,
        },
        best,
        draws,
        rivals,
    })
}

/// The thread counts k (2..max-1) after which the layout changes what the next
/// thread gets: the marginal rate of the model with every mechanism on changes.
fn layout_events(layouts: &[Layout]) -> Vec<usize> {
    let probe = Params {
        serial: 0.0,
        sync: 0.0,
        remote: 0.5,
        inv_bandwidth: 0.0,
        smt_yield: 0.3,
        mem_time: 0.0,
        cap_shape: 0.0,
        home_memory: false,
    };
    let rate: Vec<f64> = layouts
        .iter()
        .map(|l| 1.0 / time(&probe, &Scales::default(), l))
        .collect();
    (1..rate.len().saturating_sub(1))
        .filter(|&i| ((rate[i + 1] - rate[i]) - (rate[i] - rate[i - 1])).abs() > 1e-9)
        .map(|i| layouts[i].threads)
        .collect()
}

fn rel_change(before: f64, after: f64, floor: f64) -> f64 {
    ((after - before) / before.abs().max(floor).max(1e-9)).clamp(-10.0, 10.0)
}

/// Knees the fitted model implies that `found` (the local test's) does not show,
/// each with the fit it rests on. Empty where the model is refused.
pub fn implied_knees(c: &Curve, found: &[Knee]) -> Vec<(Knee, MechanismFit)> {
    let n = c.threads.len();
    if n < 4 || c.perf.len() != n {
        return Vec::new();
    }
    let (first, last) = (c.threads[0], c.threads[n - 1]);
    let Some(layouts) = (first.max(2) - 1..=last)
        .map(|t| layout(c.topo, c.placement, t))
        .collect::<Option<Vec<Layout>>>()
    else {
        return Vec::new();
    };
    let inside: Vec<usize> = layout_events(&layouts)
        .into_iter()
        .filter(|&k| k > first && k < last)
        .collect();
    let candidates: Vec<usize> = inside
        .iter()
        .copied()
        .filter(|&k| !found.iter().any(|f| shows(c.threads, f, k)))
        .collect();
    if candidates.is_empty() {
        return Vec::new();
    }
    let Some(acc) = accept(c) else {
        return Vec::new();
    };
    let base = mean(&c.perf[0]);
    let span = (last - first) as f64;
    let at = At {
        c,
        acc: &acc,
        layouts: &layouts,
        offset: first.max(2) - 1,
        base,
        floor: 0.25 * ((mean(&c.perf[n - 1]) - base) / base / span).abs(),
        family: inside.len(),
    };
    candidates
        .into_iter()
        .filter_map(|k| Some((at.knee(k)?, acc.summary.clone())))
        .collect()
}

/// What testing one implied knee needs.
struct At<'a> {
    c: &'a Curve<'a>,
    acc: &'a Accepted,
    /// Layouts of `offset`, `offset + 1`, ... threads.
    layouts: &'a [Layout],
    offset: usize,
    /// The baseline's mean performance (speedups are against it).
    base: f64,
    /// The smallest slope a change is relative to (as in the local test).
    floor: f64,
    /// The candidate counts tested (the Bonferroni family).
    family: usize,
}

impl At<'_> {
    /// Slopes of the model's speedup before and after `k` under `p` and `scale`.
    fn slopes(&self, k: usize, p: &Params, scale: f64) -> (f64, f64) {
        let f = |t: usize| {
            scale / time(p, &Scales::default(), &self.layouts[t - self.offset]) / self.base
        };
        (f(k) - f(k - 1), f(k + 1) - f(k))
    }

    /// Whether `change` is at least 15% with the same sign as `of`.
    fn same(change: f64, of: f64) -> bool {
        change.signum() == of.signum() && change.abs() >= MIN_CHANGE
    }

    /// The knee implied at `k`, when every rule of the module holds.
    fn knee(&self, k: usize) -> Option<Knee> {
        let (acc, floor) = (self.acc, self.floor);
        let (before, after) = self.slopes(k, &acc.best.params, acc.best.scale);
        let change = rel_change(before, after, floor);
        // Every explanation with substantial support must imply it too.
        let agree = acc.rivals.iter().all(|r| {
            let (b, a) = self.slopes(k, &r.params, r.scale);
            Self::same(rel_change(b, a, floor), change)
        });
        if change.abs() < MIN_CHANGE || !agree {
            return None;
        }
        let d: Vec<(f64, f64)> = acc
            .draws
            .iter()
            .map(|(p, sc)| self.slopes(k, p, *sc))
            .collect();
        let changes: Vec<f64> = d.iter().map(|(b, a)| rel_change(*b, *a, floor)).collect();
        let change_ci = boot::percentile_ci(&changes)?;
        let diffs: Vec<f64> = d.iter().map(|(b, a)| a - b).collect();
        let m = mean(&diffs);
        let sd = (diffs.iter().map(|x| (x - m).powi(2)).sum::<f64>()
            / (diffs.len().max(2) - 1) as f64)
            .sqrt();
        let z = crate::stats::upper_normal_quantile(ALPHA / 2.0 / self.family.max(1) as f64);
        let p = changes.iter().filter(|x| Self::same(**x, change)).count() as f64
            / changes.len().max(1) as f64;
        let crosses = change_ci.0 <= 0.0 && change_ci.1 >= 0.0;
        if crosses || (after - before).abs() <= z * sd || p < 0.8 {
            return None;
        }
        let threads = self.c.threads.iter().copied().filter(|&t| t <= k).max()?;
        let next_threads = self.c.threads.iter().copied().find(|&t| t > threads)?;
        let col =
            |i: usize| -> Vec<f64> { d.iter().map(|x| if i == 0 { x.0 } else { x.1 }).collect() };
        let reps = self.c.perf.iter().map(Vec::len).min().unwrap_or(0);
        Some(Knee {
            threads,
            next_threads,
            slope_before: before,
            slope_before_ci95: boot::percentile_ci(&col(0)),
            slope_after: after,
            slope_after_ci95: boot::percentile_ci(&col(1)),
            change,
            change_ci95: Some(change_ci),
            bend: crate::knee::bend(before, after),
            reps,
            confidence: Confidence::from_probability(p, reps),
        })
    }
}

/// Whether knee `f` already shows a change between `k` and `k + 1`: they overlap
/// within one measured point.
fn shows(threads: &[usize], f: &Knee, k: usize) -> bool {
    let prev = threads
        .iter()
        .copied()
        .filter(|&t| t < f.threads)
        .max()
        .unwrap_or(f.threads);
    prev <= k + 1 && k <= f.next_threads
}
