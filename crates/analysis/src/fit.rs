//! Scaling models fitted to a speedup curve S(p), where they are right: by weighted
//! least squares on the speedup itself (each point weighted by its measured
//! variance, unweighted when a point has one repetition), never in a transformed
//! space where one point dominates.
//!
//! - Amdahl's law S = 1 / (s + (1 - s)/p), s in [0, 1];
//! - Gunther's Universal Scalability Law S = p / (1 + sigma (p - 1) + kappa p (p - 1))
//!   (N. J. Gunther, "Guerrilla Capacity Planning", 2007), sigma, kappa >= 0;
//! - piecewise lines with their breakpoints at the machine's boundaries for this
//!   placement (continuous, one slope per piece).
//!
//! Amdahl and USL need a one-thread baseline. Every fit's residuals are checked (the
//! largest standardised residual, the runs of residual signs) and a fit that
//! contradicts the data is rejected with the reason: a limit below a measured
//! speedup, or a predicted peak before the last point when the last point is the
//! fastest measured. The models compete by the small-sample Akaike information
//! criterion (AICc); the one with the least AICc among those not rejected is chosen.

use serde::{Deserialize, Serialize};

/// Amdahl's law fitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AmdahlFit {
    /// Serial fraction s in [0, 1].
    pub serial_fraction: f64,
    /// Speedup as p grows without bound: 1/s (None when s = 0).
    pub max_speedup: Option<f64>,
    pub r_squared: f64,
    /// Why the fit contradicts the data, when it does.
    pub rejected: Option<String>,
}

/// The Universal Scalability Law fitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UslFit {
    /// Contention (serialisation), sigma >= 0.
    pub sigma: f64,
    /// Coherency (crosstalk), kappa >= 0.
    pub kappa: f64,
    /// Thread count of the predicted peak, sqrt((1 - sigma)/kappa), when kappa > 0.
    pub peak_threads: Option<f64>,
    pub peak_speedup: Option<f64>,
    pub r_squared: f64,
    pub rejected: Option<String>,
}

/// One model in the competition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelFit {
    /// `amdahl`, `usl` or `piecewise`.
    pub model: String,
    pub params: Vec<(String, f64)>,
    /// Free parameters.
    pub k: usize,
    /// Weighted sum of squared residuals.
    pub wsse: f64,
    pub r_squared: f64,
    /// Small-sample AIC (None when there are too few points for k parameters).
    pub aicc: Option<f64>,
    /// Largest |residual| / the point's standard deviation (None when unweighted).
    pub max_std_residual: Option<f64>,
    /// Runs of equal residual signs: few runs mean the model misses a shape.
    pub sign_runs: usize,
    pub rejected: Option<String>,
}

/// The models fitted to one curve and the one chosen.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelChoice {
    pub chosen: Option<String>,
    pub candidates: Vec<ModelFit>,
}

/// One point to fit: threads, speedup, its standard deviation (0: unknown).
pub type FitPoint = (f64, f64, f64);

pub fn amdahl(s: f64, p: f64) -> f64 {
    1.0 / (s + (1.0 - s) / p)
}

pub fn usl(sigma: f64, kappa: f64, p: f64) -> f64 {
    p / (1.0 + sigma * (p - 1.0) + kappa * p * (p - 1.0))
}

/// Weights 1/sd^2 when every point has a spread (floored at 0.5% of the speedup),
/// else 1.
fn weights(pts: &[FitPoint]) -> Vec<f64> {
    if pts.iter().all(|p| p.2 > 0.0) {
        pts.iter()
            .map(|p| 1.0 / p.2.max(0.005 * p.1.abs()).powi(2))
            .collect()
    } else {
        vec![1.0; pts.len()]
    }
}

fn wsse(pts: &[FitPoint], w: &[f64], model: impl Fn(f64) -> f64) -> f64 {
    pts.iter()
        .zip(w)
        .map(|(p, w)| w * (p.1 - model(p.0)).powi(2))
        .sum()
}

/// R^2 of `model` against the observed speedups (unweighted).
pub(crate) fn r_squared(pts: &[FitPoint], model: impl Fn(f64) -> f64) -> f64 {
    let mean = pts.iter().map(|p| p.1).sum::<f64>() / pts.len() as f64;
    let ss_tot: f64 = pts.iter().map(|p| (p.1 - mean).powi(2)).sum();
    let ss_res: f64 = pts.iter().map(|p| (p.1 - model(p.0)).powi(2)).sum();
    if ss_tot > 0.0 {
        1.0 - ss_res / ss_tot
    } else {
        1.0
    }
}

/// Minimum of `f` on [lo, hi]: a geometric grid from `lo.max(1e-9)`, then golden
/// section around the best grid point.
pub(crate) fn minimise(lo: f64, hi: f64, f: impl Fn(f64) -> f64) -> f64 {
    let steps = 80;
    let start = lo.max(1e-9);
    let ratio = (hi / start).powf(1.0 / steps as f64);
    let mut grid: Vec<f64> = vec![lo];
    grid.extend((0..=steps).map(|i| start * ratio.powi(i)));
    let best = (0..grid.len())
        .min_by(|&a, &b| f(grid[a]).total_cmp(&f(grid[b])))
        .unwrap_or(0);
    let (mut a, mut b) = (
        grid[best.saturating_sub(1)],
        grid[(best + 1).min(grid.len() - 1)],
    );
    let g = 0.618_033_988_75;
    for _ in 0..60 {
        let (c, d) = (b - g * (b - a), a + g * (b - a));
        if f(c) < f(d) {
            b = d;
        } else {
            a = c;
        }
    }
    let mid = (a + b) / 2.0;
    if f(grid[best]) < f(mid) {
        grid[best]
    } else {
        mid
    }
}

/// Fits Amdahl's law; `None` with fewer than two thread counts above 1.
pub fn fit_amdahl(pts: &[FitPoint]) -> Option<AmdahlFit> {
    if pts.iter().filter(|p| p.0 > 1.0).count() < 2 {
        return None;
    }
    let w = weights(pts);
    let s = minimise(0.0, 1.0, |s| wsse(pts, &w, |p| amdahl(s, p)));
    let max_speedup = (s > 0.0).then(|| 1.0 / s);
    let best = fastest(pts);
    // A limit is at or above every measured speedup, or the model is rejected.
    let rejected = match (max_speedup, best) {
        (Some(m), Some(b)) if m < b.1 => Some(format!(
            "its limit {m:.2}x is below the {:.2}x measured at {} threads",
            b.1, b.0
        )),
        _ => None,
    };
    Some(AmdahlFit {
        serial_fraction: s,
        max_speedup,
        r_squared: r_squared(pts, |p| amdahl(s, p)),
        rejected,
    })
}

/// The point with the highest speedup.
fn fastest(pts: &[FitPoint]) -> Option<&FitPoint> {
    pts.iter().max_by(|a, b| a.1.total_cmp(&b.1))
}

/// Fits the USL with sigma, kappa >= 0; `None` with fewer than three thread counts
/// above 1.
pub fn fit_usl(pts: &[FitPoint]) -> Option<UslFit> {
    if pts.iter().filter(|p| p.0 > 1.0).count() < 3 {
        return None;
    }
    let w = weights(pts);
    let sigma_for = |kappa: f64| minimise(0.0, 1.0, |s| wsse(pts, &w, |p| usl(s, kappa, p)));
    let kappa = minimise(0.0, 1.0, |k| {
        let s = sigma_for(k);
        wsse(pts, &w, |p| usl(s, k, p))
    });
    let sigma = sigma_for(kappa);
    let peak_threads = (kappa > 1e-12 && sigma < 1.0).then(|| ((1.0 - sigma) / kappa).sqrt());
    let rejected = usl_rejection(pts, sigma, kappa, peak_threads);
    Some(UslFit {
        sigma,
        kappa,
        peak_threads,
        peak_speedup: peak_threads.map(|p| usl(sigma, kappa, p)),
        r_squared: r_squared(pts, |p| usl(sigma, kappa, p)),
        rejected,
    })
}

/// Why a USL fit contradicts the points: its peak speedup below a measured one, or
/// a peak before the last point where the last point is the fastest measured (or
/// within one standard deviation of it, and said so).
fn usl_rejection(pts: &[FitPoint], sigma: f64, kappa: f64, peak: Option<f64>) -> Option<String> {
    let last = pts.iter().max_by(|a, b| a.0.total_cmp(&b.0))?;
    let f = fastest(pts)?;
    let pk = peak?;
    if usl(sigma, kappa, pk) < f.1 {
        return Some(format!(
            "its peak {:.2}x is below the {:.2}x measured at {} threads",
            usl(sigma, kappa, pk),
            f.1,
            f.0
        ));
    }
    if pk >= last.0 {
        return None;
    }
    if last.1 >= f.1 {
        Some(format!(
            "it predicts a slowdown after {pk:.0} threads, but {} threads (the last point) is the fastest measured",
            last.0
        ))
    } else if last.1 + last.2 >= f.1 {
        Some(format!(
            "it predicts a slowdown after {pk:.0} threads, but {} threads (the last point) is within one standard deviation of the fastest measured ({} threads)",
            last.0, f.0
        ))
    } else {
        None
    }
}

/// Solves the normal equations `a x = b` (Gaussian elimination, partial pivoting).
pub(crate) fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for c in 0..n {
        let piv = (c..n).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        if a[piv][c].abs() < 1e-12 {
            return None;
        }
        a.swap(c, piv);
        b.swap(c, piv);
        let pivot_row = a[c].clone();
        for r in c + 1..n {
            let f = a[r][c] / pivot_row[c];
            for (x, p) in a[r].iter_mut().zip(&pivot_row).skip(c) {
                *x -= f * p;
            }
            b[r] -= f * b[c];
        }
    }
    let mut x = vec![0.0; n];
    for r in (0..n).rev() {
        let s: f64 = (r + 1..n).map(|k| a[r][k] * x[k]).sum();
        x[r] = (b[r] - s) / a[r][r];
    }
    Some(x)
}

/// Continuous piecewise lines through (p0, 1) with a change of slope at each of
/// `breaks` (thread counts); returns the slopes' coefficients.
pub fn fit_piecewise(pts: &[FitPoint], breaks: &[f64]) -> Option<Vec<f64>> {
    let p0 = pts.first()?.0;
    let w = weights(pts);
    let row = |p: f64| -> Vec<f64> {
        let mut r = vec![p - p0];
        r.extend(breaks.iter().map(|b| (p - b).max(0.0)));
        r
    };
    let k = breaks.len() + 1;
    let mut a = vec![vec![0.0; k]; k];
    let mut b = vec![0.0; k];
    for (pt, wi) in pts.iter().zip(&w) {
        let x = row(pt.0);
        for i in 0..k {
            b[i] += wi * x[i] * (pt.1 - 1.0);
            for j in 0..k {
                a[i][j] += wi * x[i] * x[j];
            }
        }
    }
    solve(a, b)
}

/// The value of a piecewise fit at `p`.
pub fn piecewise(coef: &[f64], breaks: &[f64], p0: f64, p: f64) -> f64 {
    1.0 + coef.first().copied().unwrap_or(0.0) * (p - p0)
        + breaks
            .iter()
            .zip(coef.iter().skip(1))
            .map(|(b, c)| c * (p - b).max(0.0))
            .sum::<f64>()
}

use crate::stats::aicc;

/// The AICc of a model with `k` parameters on the points, scored as every
/// candidate of [`choose`] is (so it can compete with them).
pub(crate) fn aicc_of(pts: &[FitPoint], k: usize, model: impl Fn(f64) -> f64) -> Option<f64> {
    aicc(pts.len(), k, wsse(pts, &weights(pts), model))
}

fn sign_runs(res: &[f64]) -> usize {
    let signs: Vec<bool> = res
        .iter()
        .filter(|r| r.abs() > 0.0)
        .map(|r| *r > 0.0)
        .collect();
    signs.windows(2).filter(|w| w[0] != w[1]).count() + usize::from(!signs.is_empty())
}

/// Scores one model on the points.
fn score(
    pts: &[FitPoint],
    model: &str,
    params: Vec<(String, f64)>,
    rejected: Option<String>,
    f: impl Fn(f64) -> f64,
) -> ModelFit {
    let w = weights(pts);
    let res: Vec<f64> = pts.iter().map(|p| p.1 - f(p.0)).collect();
    let weighted = pts.iter().all(|p| p.2 > 0.0);
    let k = params.len();
    let e = wsse(pts, &w, &f);
    ModelFit {
        model: model.into(),
        k,
        wsse: e,
        r_squared: r_squared(pts, &f),
        aicc: aicc(pts.len(), k, e),
        max_std_residual: weighted.then(|| {
            res.iter()
                .zip(&w)
                .map(|(r, w)| (r * w.sqrt()).abs())
                .fold(0.0, f64::max)
        }),
        sign_runs: sign_runs(&res),
        params,
        rejected,
    }
}

/// The breakpoints a piecewise fit can determine: inside the range, at least two
/// points beyond, a measured point between consecutive ones, and fewer parameters
/// than points less one.
fn usable_breaks(pts: &[FitPoint], breaks: &[f64], first: f64, last: f64) -> Vec<f64> {
    let mut sorted: Vec<f64> = breaks
        .iter()
        .copied()
        .filter(|b| *b > first && *b < last && pts.iter().filter(|p| p.0 > *b).count() >= 2)
        .collect();
    sorted.sort_by(f64::total_cmp);
    let mut out: Vec<f64> = Vec::new();
    for b in sorted {
        let prev = out.last().copied().unwrap_or(f64::MIN);
        if pts.iter().any(|p| p.0 > prev && p.0 <= b) && out.len() + 3 < pts.len() {
            out.push(b);
        }
    }
    out
}

/// Fits every model that applies and picks one by AICc. `one_thread_baseline`
/// enables Amdahl and USL; `breaks` are the boundaries' last thread counts before
/// each topology event.
pub fn choose(
    pts: &[FitPoint],
    one_thread_baseline: bool,
    breaks: &[f64],
) -> (ModelChoice, Option<AmdahlFit>, Option<UslFit>) {
    let mut cands = Vec::new();
    let (a, u) = if one_thread_baseline {
        (fit_amdahl(pts), fit_usl(pts))
    } else {
        (None, None)
    };
    if let Some(a) = &a {
        let s = a.serial_fraction;
        cands.push(score(
            pts,
            "amdahl",
            vec![("s".into(), s)],
            a.rejected.clone(),
            |p| amdahl(s, p),
        ));
    }
    if let Some(u) = &u {
        let (s, k) = (u.sigma, u.kappa);
        cands.push(score(
            pts,
            "usl",
            vec![("sigma".into(), s), ("kappa".into(), k)],
            u.rejected.clone(),
            |p| usl(s, k, p),
        ));
    }
    if let (Some(first), Some(last)) = (pts.first(), pts.last()) {
        let inside = usable_breaks(pts, breaks, first.0, last.0);
        if let Some(coef) = fit_piecewise(pts, &inside) {
            let mut params = vec![("slope".to_string(), coef[0])];
            params.extend(
                inside
                    .iter()
                    .zip(&coef[1..])
                    .map(|(b, c)| (format!("slope change after {b}"), *c)),
            );
            cands.push(score(pts, "piecewise", params, None, |p| {
                piecewise(&coef, &inside, first.0, p)
            }));
        }
    }
    let chosen = cands
        .iter()
        .filter(|c| c.rejected.is_none() && c.aicc.is_some())
        .min_by(|x, y| {
            x.aicc
                .unwrap_or(f64::MAX)
                .total_cmp(&y.aicc.unwrap_or(f64::MAX))
        })
        .map(|c| c.model.clone());
    (
        ModelChoice {
            chosen,
            candidates: cands,
        },
        a,
        u,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(f: impl Fn(f64) -> f64, t: &[f64], rel_sd: f64) -> Vec<FitPoint> {
        t.iter().map(|&p| (p, f(p), rel_sd * f(p))).collect()
    }

    #[test]
    fn recovers_amdahl() {
        let p = pts(|p| amdahl(0.05, p), &[1.0, 2.0, 4.0, 8.0, 16.0], 0.01);
        let f = fit_amdahl(&p).unwrap();
        assert!((f.serial_fraction - 0.05).abs() < 1e-6, "{f:?}");
        assert!(f.r_squared > 0.999_999 && f.rejected.is_none());
    }

    #[test]
    fn recovers_usl_and_its_peak() {
        let t: Vec<f64> = (1..=64).map(|p| p as f64).collect();
        let p = pts(|p| usl(0.02, 0.0005, p), &t, 0.01);
        let f = fit_usl(&p).unwrap();
        assert!(
            (f.sigma - 0.02).abs() < 1e-4 && (f.kappa - 0.0005).abs() < 1e-5,
            "{f:?}"
        );
        assert!(f.rejected.is_none());
    }

    /// The curve: reaches 19x; a limit below that is rejected, and the
    /// speedup-space fit's limit is above the data.
    #[test]
    fn a_limit_below_a_measured_speedup_is_rejected() {
        let t = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];
        let s = [1.0, 1.6, 3.4, 6.9, 12.0, 16.5, 19.0];
        let p: Vec<FitPoint> = t.iter().zip(s).map(|(t, s)| (*t, s, 0.0)).collect();
        let f = fit_amdahl(&p).unwrap();
        assert!(
            f.max_speedup.unwrap_or(0.0) > 19.0 || f.rejected.is_some(),
            "{f:?}"
        );
        // A hand-made contradiction: limit 10x against 19x measured.
        let bad = score(&p, "amdahl", vec![("s".into(), 0.1)], None, |x| {
            amdahl(0.1, x)
        });
        assert!(bad.r_squared < f.r_squared);
    }

    #[test]
    fn retrograde_usl_is_rejected_when_the_last_point_is_fastest() {
        // Peak at 95 of 96 threads where 96 is the fastest point measured.
        let t: Vec<f64> = [1, 8, 16, 32, 48, 64, 80, 96]
            .iter()
            .map(|p| *p as f64)
            .collect();
        let mut p = pts(|p| usl(0.0, 0.000_11, p), &t, 0.0);
        if let Some(last) = p.last_mut() {
            last.1 += 0.3;
        }
        let u = fit_usl(&p).unwrap();
        if u.peak_threads.is_some_and(|pk| pk < 96.0) {
            assert!(u.rejected.is_some(), "{u:?}");
        }
    }

    #[test]
    fn piecewise_wins_on_a_boundary_knee() {
        let t: Vec<f64> = [1, 2, 4, 8, 12, 16, 20, 24, 28, 32, 40, 48]
            .iter()
            .map(|p| *p as f64)
            .collect();
        let f = |p: f64| {
            if p <= 24.0 {
                p
            } else {
                24.0 + 0.5 * (p - 24.0)
            }
        };
        let p = pts(f, &t, 0.01);
        let (c, _, _) = choose(&p, true, &[24.0]);
        assert_eq!(c.chosen.as_deref(), Some("piecewise"), "{c:?}");
        assert_eq!(c.candidates.len(), 3);
    }

    #[test]
    fn linear_scaling_has_no_serial_fraction() {
        let p = pts(|p| p, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], 0.01);
        assert!(fit_amdahl(&p).unwrap().serial_fraction < 1e-6);
        let u = fit_usl(&p).unwrap();
        assert!(u.sigma < 1e-6 && u.kappa < 1e-6);
        assert!(fit_usl(&p[..2]).is_none());
    }
}
