//! The smooth scaling curves a knee must beat: the null hypothesis of the knee
//! test (docs/ANALYSIS.md, Knees). Each family is a shape g(x; theta) over x =
//! threads / the baseline's threads, times a free scale (the baseline's own mean
//! is measured with noise too):
//!
//! - Amdahl, g = x / (1 + s (x - 1)), s in [0, 1] (a saturating hyperbola: the
//!   Michaelis-Menten form a x / (1 + b x) is the same curve);
//! - the Universal Scalability Law, g = x / (1 + sigma (x - 1) + kappa x (x - 1))
//!   (N. J. Gunther, 2007), retrograde when kappa > 0;
//! - Gustafson's scaled speedup, a line with an intercept, g = s + (1 - s) x;
//! - a power law, g = x^a, a in [0, 1.5], and the power curve with an offset
//!   (Box and Cox's transform of x), g = 1 + b (x^a - 1) / a, a in [-1, 1.5],
//!   b >= 0, which holds Gustafson's line (a = 1) and logarithmic growth (a -> 0);
//! - exponential saturation, g = 1 - exp(-x / tau).
//!
//! Hinges h_j(x) = max(0, x - x_j) add a change of slope after x_j to any family.
//! For fixed shape parameters the model is linear in the scale and the hinges'
//! coefficients, solved by weighted least squares; the shape parameters are
//! searched (a grid, then golden section). Weights are the points' repetitions
//! over their value squared, so the weighted squared error divided by the run-to-run
//! variance (relative) is a chi-square statistic.

use crate::fit::solve;

/// A smooth family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Amdahl,
    Usl,
    Gustafson,
    PowerLaw,
    BoxCox,
    Saturating,
}

/// Every family, in the order they are tried.
pub const FAMILIES: [Family; 6] = [
    Family::Amdahl,
    Family::Usl,
    Family::Gustafson,
    Family::PowerLaw,
    Family::BoxCox,
    Family::Saturating,
];

impl Family {
    /// The family's name in the JSON and the text.
    pub fn name(self) -> &'static str {
        match self {
            Family::Amdahl => "amdahl",
            Family::Usl => "usl",
            Family::Gustafson => "gustafson",
            Family::PowerLaw => "power-law",
            Family::BoxCox => "power-offset",
            Family::Saturating => "saturating",
        }
    }

    /// Shape parameters (the scale not counted).
    fn shape_params(self) -> usize {
        match self {
            Family::Usl | Family::BoxCox => 2,
            _ => 1,
        }
    }

    /// g(x; theta).
    pub fn shape(self, th: &[f64], x: f64) -> f64 {
        let a = th.first().copied().unwrap_or(0.0);
        match self {
            Family::Amdahl => x / (1.0 + a * (x - 1.0)),
            Family::Usl => {
                let k = th.get(1).copied().unwrap_or(0.0);
                x / (1.0 + a * (x - 1.0) + k * x * (x - 1.0))
            }
            Family::Gustafson => a + (1.0 - a) * x,
            Family::PowerLaw => x.powf(a),
            Family::BoxCox => {
                let b = th.get(1).copied().unwrap_or(0.0);
                let t = if a.abs() < 1e-6 {
                    x.ln()
                } else {
                    (x.powf(a) - 1.0) / a
                };
                1.0 + b * t
            }
            Family::Saturating => 1.0 - (-x / a.max(1e-9)).exp(),
        }
    }

    /// dg/dx at x (numerical, central).
    pub fn slope(self, th: &[f64], x: f64) -> f64 {
        let h = 1e-4 * x.abs().max(1.0);
        (self.shape(th, x + h) - self.shape(th, x - h)) / (2.0 * h)
    }
}

/// The points to fit: x (threads over the baseline's), the mean performance over
/// the baseline's mean, and each point's weight (repetitions over value squared).
pub struct Data<'a> {
    pub x: &'a [f64],
    pub y: &'a [f64],
    pub w: &'a [f64],
}

/// One family with hinges, fitted.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    pub family: Family,
    pub theta: Vec<f64>,
    /// The scale, then one coefficient per hinge.
    pub coef: Vec<f64>,
    /// Hinge positions (x units).
    pub hinges: Vec<f64>,
    /// Weighted squared error.
    pub sse: f64,
}

impl Fit {
    /// Parameters fitted: scale, shape and hinges.
    pub fn k(&self) -> usize {
        1 + self.family.shape_params() + self.hinges.len()
    }

    /// The fitted curve at x.
    pub fn value(&self, x: f64) -> f64 {
        let row = row(self.family, &self.theta, &self.hinges, x);
        row.iter().zip(&self.coef).map(|(a, b)| a * b).sum()
    }

    /// The design row at x: the shape, then each hinge.
    pub fn row(&self, x: f64) -> Vec<f64> {
        row(self.family, &self.theta, &self.hinges, x)
    }

    /// The linear combination of the coefficients that gives the slope just before
    /// (`after` false) or just after x.
    pub fn slope_row(&self, x: f64, after: bool) -> Vec<f64> {
        let mut r = vec![self.family.slope(&self.theta, x)];
        r.extend(
            self.hinges
                .iter()
                .map(|h| f64::from(u8::from(*h < x || (after && *h <= x)))),
        );
        r
    }
}

fn row(f: Family, th: &[f64], hinges: &[f64], x: f64) -> Vec<f64> {
    let mut r = vec![f.shape(th, x)];
    r.extend(hinges.iter().map(|h| (x - h).max(0.0)));
    r
}

/// The normal matrix X'WX of a design.
pub fn normal_matrix(d: &Data, rows: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let k = rows.first().map_or(0, Vec::len);
    let mut a = vec![vec![0.0; k]; k];
    for (r, w) in rows.iter().zip(d.w) {
        for i in 0..k {
            for j in 0..k {
                a[i][j] += w * r[i] * r[j];
            }
        }
    }
    a
}

/// The linear coefficients and weighted SSE for fixed shape parameters.
fn linear(f: Family, th: &[f64], hinges: &[f64], d: &Data) -> Option<(Vec<f64>, f64)> {
    let k = 1 + hinges.len();
    let n = d.x.len();
    let mut rows = vec![0.0; n * k];
    for (i, &x) in d.x.iter().enumerate() {
        rows[i * k] = f.shape(th, x);
        for (j, h) in hinges.iter().enumerate() {
            rows[i * k + 1 + j] = (x - h).max(0.0);
        }
    }
    let mut a = vec![vec![0.0; k]; k];
    let mut b = vec![0.0; k];
    for i in 0..n {
        let (r, w, y) = (&rows[i * k..(i + 1) * k], d.w[i], d.y[i]);
        for p in 0..k {
            b[p] += w * r[p] * y;
            for q in 0..=p {
                a[p][q] += w * r[p] * r[q];
            }
        }
    }
    // The lower triangle mirrored into the upper one.
    let full: Vec<Vec<f64>> = (0..k)
        .map(|p| (0..k).map(|q| a[p.max(q)][p.min(q)]).collect())
        .collect();
    let coef = solve(full, b)?;
    let sse = (0..n)
        .map(|i| {
            let v: f64 = rows[i * k..(i + 1) * k]
                .iter()
                .zip(&coef)
                .map(|(a, c)| a * c)
                .sum();
            d.w[i] * (d.y[i] - v).powi(2)
        })
        .sum::<f64>();
    sse.is_finite().then_some((coef, sse))
}

/// Minimum of `f` over [lo, hi]: `steps` grid points (geometric when `log`), then
/// `iters` steps of golden section around the best (one evaluation each).
fn min1(
    (lo, hi): (f64, f64),
    steps: usize,
    iters: usize,
    log: bool,
    f: impl Fn(f64) -> f64,
) -> (f64, f64) {
    let at = |i: usize| {
        let u = i as f64 / steps as f64;
        if log {
            lo * (hi / lo).powf(u)
        } else {
            lo + (hi - lo) * u
        }
    };
    let (best, fbest) = (0..=steps)
        .map(|i| (i, f(at(i))))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((0, f64::INFINITY));
    let (mut a, mut b) = (at(best.saturating_sub(1)), at((best + 1).min(steps)));
    let g = 0.618_033_988_75;
    let (mut c, mut e) = (b - g * (b - a), a + g * (b - a));
    let (mut fc, mut fe) = (f(c), f(e));
    for _ in 0..iters {
        if fc < fe {
            (b, e, fe) = (e, c, fc);
            c = b - g * (b - a);
            fc = f(c);
        } else {
            (a, c, fc) = (c, e, fe);
            e = a + g * (b - a);
            fe = f(e);
        }
    }
    [(at(best), fbest), (c, fc), (e, fe)]
        .into_iter()
        .min_by(|x, y| x.1.total_cmp(&y.1))
        .unwrap_or((at(best), fbest))
}

/// Fits one family with hinges at `hinges` (x units).
pub fn fit(f: Family, hinges: &[f64], d: &Data) -> Option<Fit> {
    let sse = |th: &[f64]| linear(f, th, hinges, d).map_or(f64::INFINITY, |(_, e)| e);
    let theta = match f {
        Family::Amdahl | Family::Gustafson => {
            vec![min1((0.0, 1.0), 16, 24, false, |a| sse(&[a])).0]
        }
        Family::PowerLaw => vec![min1((0.0, 1.5), 16, 24, false, |a| sse(&[a])).0],
        Family::Saturating => vec![min1((0.05, 1e4), 20, 24, true, |a| sse(&[a])).0],
        Family::BoxCox => {
            let b_for = |a: f64| min1((1e-3, 1e3), 10, 16, true, |b| sse(&[a, b]));
            let (a, _) = min1((-1.0, 1.5), 10, 16, false, |a| b_for(a).1);
            vec![a, b_for(a).0]
        }
        Family::Usl => {
            let sigma_for = |k: f64| min1((0.0, 1.0), 10, 16, false, |s| sse(&[s, k]));
            let (k, _) = min1((1e-6, 1.0), 10, 16, true, |k| sigma_for(k).1);
            let (k0, e0) = (0.0, sigma_for(0.0));
            let (k, s) = if e0.1 <= sigma_for(k).1 {
                (k0, e0.0)
            } else {
                (k, sigma_for(k).0)
            };
            vec![s, k]
        }
    };
    let (coef, sse) = linear(f, &theta, hinges, d)?;
    Some(Fit {
        family: f,
        theta,
        coef,
        hinges: hinges.to_vec(),
        sse,
    })
}

/// The family (with these hinges) of least weighted squared error.
pub fn best(hinges: &[f64], d: &Data) -> Option<Fit> {
    FAMILIES
        .iter()
        .filter_map(|f| fit(*f, hinges, d))
        .min_by(|a, b| a.sse.total_cmp(&b.sse))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(f: impl Fn(f64) -> f64, x: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let y: Vec<f64> = x.iter().map(|&x| f(x)).collect();
        let w = y.iter().map(|y| 3.0 / (y * y)).collect();
        (y, w)
    }

    #[test]
    fn each_family_fits_its_own_curve() {
        let x: Vec<f64> = [1, 2, 4, 8, 12, 16, 24, 32].map(f64::from).to_vec();
        for (fam, th) in [
            (Family::Amdahl, vec![0.05]),
            (Family::Usl, vec![0.02, 0.002]),
            (Family::Gustafson, vec![0.3]),
            (Family::PowerLaw, vec![0.8]),
            (Family::BoxCox, vec![0.0, 4.0]),
            (Family::Saturating, vec![10.0]),
        ] {
            let (y, w) = data(|x| 2.0 * fam.shape(&th, x), &x);
            let f = fit(
                fam,
                &[],
                &Data {
                    x: &x,
                    y: &y,
                    w: &w,
                },
            )
            .unwrap();
            assert!(f.sse < 1e-6, "{fam:?}: {f:?}");
            assert!((f.value(8.0) / (2.0 * fam.shape(&th, 8.0)) - 1.0).abs() < 1e-3);
        }
    }

    #[test]
    fn a_hinge_captures_a_bend_no_family_can() {
        let x: Vec<f64> = [1, 2, 4, 8, 12, 16, 20, 24, 28, 32].map(f64::from).to_vec();
        let bent = |x: f64| {
            if x <= 16.0 {
                x
            } else {
                16.0 + 0.3 * (x - 16.0)
            }
        };
        let (y, w) = data(bent, &x);
        let d = Data {
            x: &x,
            y: &y,
            w: &w,
        };
        let smooth = best(&[], &d).unwrap();
        let hinged = best(&[16.0], &d).unwrap();
        assert!(
            smooth.sse > 0.01 && hinged.sse < 1e-6,
            "{smooth:?} {hinged:?}"
        );
        assert!((hinged.coef[1] + 0.7).abs() < 1e-3, "{hinged:?}");
        let before: f64 = hinged
            .slope_row(16.0, false)
            .iter()
            .zip(&hinged.coef)
            .map(|(a, b)| a * b)
            .sum();
        assert!((before - 1.0).abs() < 1e-3, "{before}");
    }
}
