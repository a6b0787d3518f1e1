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
//! - exponential saturation, g = 1 - exp(-x / tau);
//! - a Hill curve with an offset, c0 + c1 x^n / (K^n + x^n), n in [0.3, 3.17]:
//!   a saturating curve that may start convex (Gompertz's and the logistic's
//!   shape; n = 1 is a hyperbola with an offset, Michaelis-Menten's);
//! - a soft cap, g = x / (1 + (x / B)^n)^(1/n), n in [0.5, 2.9]: linear growth
//!   that levels off near B, the smooth form of a bandwidth limit approached
//!   gradually;
//! - a logistic curve with an offset, c0 + c1 / (1 + exp(-(x - m) / s)), s >=
//!   0.273 m, its midpoint m within the points: growth that starts convex and
//!   saturates, symmetric in threads rather than in their logarithm (the Hill
//!   curve's), the shape of logistic and Gompertz growth;
//! - the USL with a power-law overhead, g = x / (1 + sigma (x - 1) + kappa x
//!   (x^b - 1)), b in [1, 3]: time that grows as p^b past the peak (b = 1 is
//!   the USL; all-to-all exchanges cost p^2), a retrograde fall steeper than the
//!   USL's.
//!
//! The last two are not among the families the null is chosen from
//! ([`FAMILIES`]): a claimed knee is checked against them
//! (`knee::held_to_other_smooth`), since as null families their flexibility
//! absorbs real breaks on a straight start as readily as it explains smooth
//! curves (a ninth family, the logistic, cost the studied set 7 of 55 knees).
//!
//! What makes these smooth rather than knees is a cap on their sharpness, from
//! the knee's own definition: a knee is a bend localised within two measured
//! points (`knee::LOCAL`), which on a doubling grid is a factor of 4 in threads.
//! So a smooth family's bend must take longer than that: the soft cap's slope
//! falls from 90% to 10% of its start over at least a factor of 4 in threads
//! (n <= 2.9), the Hill curve rises from 10% to 90% of its range over at
//! least a factor of 4 (81^(1/n) >= 4, n <= 3.17), and the logistic curve
//! from m - 2.2 s to m + 2.2 s, a factor of 4 when s = 0.273 m
//! ([`LOGISTIC_MIN_S`]). A bend sharper than that is left for the hinges, and
//! so for the knee test.
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
    Hill,
    SoftCap,
    Logistic,
    UslPower,
}

/// Every family the null is chosen from, in the order they are tried. The
/// logistic family is not among them: it is the sigmoid a knee is checked
/// against once claimed (`knee::held_to_other_smooth`), since as a null for the
/// selection its flexibility (a convex start, an offset and a saturation)
/// absorbs real breaks on a straight start as readily as it explains a sigmoid.
pub const FAMILIES: [Family; 8] = [
    Family::Amdahl,
    Family::Usl,
    Family::Gustafson,
    Family::PowerLaw,
    Family::BoxCox,
    Family::Saturating,
    Family::Hill,
    Family::SoftCap,
];

/// The largest shape exponent of the Hill family: its rise from 10% to 90%
/// spans a factor of 81^(1/n) >= 4 in threads (see above).
pub const HILL_MAX_N: f64 = 3.17;
/// The largest shape exponent of the soft cap: its slope falls from 90% to 10%
/// over a factor of 4.0 in threads at n = 2.9 (see above).
pub const SOFT_CAP_MAX_N: f64 = 2.9;
/// The largest exponent of the USL-power family's overhead: time growing as
/// p^3 (three-way interactions) at most.
pub const USL_POWER_MAX_B: f64 = 3.0;
/// The smallest scale of the logistic family relative to its midpoint: its rise
/// from 10% to 90% spans m +- 2.2 s, a factor of 4 in threads at s = 0.273 m
/// (the gradual bend's [`GRADUAL_WIDTH`], for the same reason).
pub const LOGISTIC_MIN_S: f64 = GRADUAL_WIDTH;

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
            Family::Hill => "hill",
            Family::SoftCap => "soft-cap",
            Family::Logistic => "logistic",
            Family::UslPower => "usl-power",
        }
    }

    /// Shape parameters (the linear coefficients not counted).
    fn shape_params(self) -> usize {
        match self {
            Family::UslPower => 3,
            Family::Usl | Family::BoxCox | Family::Hill | Family::SoftCap | Family::Logistic => 2,
            _ => 1,
        }
    }

    /// Linear coefficients of the family itself: the scale, and the Hill
    /// curve's offset.
    fn linear_params(self) -> usize {
        match self {
            Family::Hill | Family::Logistic => 2,
            _ => 1,
        }
    }

    /// The family's design columns at x: the shape (scaled), or for the Hill
    /// curve a constant and the shape.
    fn basis(self, th: &[f64], x: f64) -> Vec<f64> {
        match self {
            Family::Hill | Family::Logistic => vec![1.0, self.shape(th, x)],
            _ => vec![self.shape(th, x)],
        }
    }

    /// d(basis)/dx at x.
    fn basis_slope(self, th: &[f64], x: f64) -> Vec<f64> {
        match self {
            Family::Hill | Family::Logistic => vec![0.0, self.slope(th, x)],
            _ => vec![self.slope(th, x)],
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
            Family::UslPower => {
                let k = th.get(1).copied().unwrap_or(0.0);
                let b = th.get(2).copied().unwrap_or(1.0);
                x / (1.0 + a * (x - 1.0) + k * x * (x.powf(b) - 1.0))
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
            Family::Hill => {
                let k = th.get(1).copied().unwrap_or(1.0).max(1e-9);
                let u = (x / k).powf(a);
                u / (1.0 + u)
            }
            Family::SoftCap => {
                let n = th.get(1).copied().unwrap_or(1.0).max(1e-3);
                x / (1.0 + (x / a.max(1e-9)).powf(n)).powf(1.0 / n)
            }
            Family::Logistic => {
                let r = th.get(1).copied().unwrap_or(1.0).max(LOGISTIC_MIN_S);
                let s = (r * a).max(1e-9);
                1.0 / (1.0 + (-(x - a) / s).exp())
            }
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
    /// Parameters fitted: scale (and offset), shape and hinges.
    pub fn k(&self) -> usize {
        self.family.linear_params() + self.family.shape_params() + self.hinges.len()
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
        let mut r = self.family.basis_slope(&self.theta, x);
        r.extend(
            self.hinges
                .iter()
                .map(|h| f64::from(u8::from(*h < x || (after && *h <= x)))),
        );
        r
    }
}

fn row(f: Family, th: &[f64], hinges: &[f64], x: f64) -> Vec<f64> {
    let mut r = f.basis(th, x);
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
    let nb = f.linear_params();
    let k = nb + hinges.len();
    let n = d.x.len();
    let mut rows = vec![0.0; n * k];
    for (i, &x) in d.x.iter().enumerate() {
        rows[i * k..i * k + nb].copy_from_slice(&f.basis(th, x));
        for (j, h) in hinges.iter().enumerate() {
            rows[i * k + nb + j] = (x - h).max(0.0);
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

/// The most columns the shape search's fast path holds (the family's own and
/// its hinges); a design with more takes `linear`.
const MAX_K: usize = 12;

/// A set of hinges over the data, with the hinge columns' weighted cross
/// products computed once: the search over a family's shape parameters (hundreds
/// of evaluations per fit) then adds only the family's own one or two columns,
/// on the stack. Its error is the least-squares one, y'Wy - coef'X'Wy.
struct Design<'a> {
    d: &'a Data<'a>,
    /// Each hinge column's value at each point.
    cols: Vec<Vec<f64>>,
    /// H'WH (lower triangle) and H'Wy of the hinge columns, and y'Wy.
    hh: [[f64; MAX_K]; MAX_K],
    hy: [f64; MAX_K],
    yy: f64,
}

/// The columns of hinges at `hinges` over the points.
fn hinge_columns(d: &Data, hinges: &[f64]) -> Vec<Vec<f64>> {
    hinges
        .iter()
        .map(|h| d.x.iter().map(|x| (x - h).max(0.0)).collect())
        .collect()
}

impl<'a> Design<'a> {
    fn new(d: &'a Data<'a>, hinges: &[f64]) -> Option<Self> {
        Self::with_columns(d, hinge_columns(d, hinges))
    }

    /// A design whose extra columns (hinges, sharp or gradual) are given.
    fn with_columns(d: &'a Data<'a>, cols: Vec<Vec<f64>>) -> Option<Self> {
        if cols.len() + 2 > MAX_K {
            return None;
        }
        let (mut hh, mut hy, mut yy) = ([[0.0; MAX_K]; MAX_K], [0.0; MAX_K], 0.0);
        for (i, (&w, &y)) in d.w.iter().zip(d.y).enumerate() {
            yy += w * y * y;
            for (p, cp) in cols.iter().enumerate() {
                hy[p] += w * cp[i] * y;
                for (q, cq) in cols.iter().enumerate().take(p + 1) {
                    hh[p][q] += w * cp[i] * cq[i];
                }
            }
        }
        Some(Design {
            d,
            cols,
            hh,
            hy,
            yy,
        })
    }

    /// The weighted squared error of family `f` at `th`, the linear
    /// coefficients at their least-squares values (infinite when the design is
    /// singular).
    fn sse(&self, f: Family, th: &[f64]) -> f64 {
        let (nb, h) = (f.linear_params(), self.cols.len());
        let mut a = [[0.0; MAX_K]; MAX_K];
        let mut b = [0.0; MAX_K];
        for (i, ((&x, &w), &y)) in self.d.x.iter().zip(self.d.w).zip(self.d.y).enumerate() {
            let g = f.shape(th, x);
            let cols = if nb == 2 { [1.0, g] } else { [g, 0.0] };
            for p in 0..nb {
                b[p] += w * cols[p] * y;
                for q in 0..=p {
                    a[p][q] += w * cols[p] * cols[q];
                }
                for (j, cj) in self.cols.iter().enumerate() {
                    a[nb + j][p] += w * cols[p] * cj[i];
                }
            }
        }
        for p in 0..h {
            b[nb + p] = self.hy[p];
            a[nb + p][nb..=nb + p].copy_from_slice(&self.hh[p][..=p]);
        }
        let rhs = b;
        match cholesky_solve(&mut a, &mut b, nb + h) {
            Some(()) => {
                let fitted: f64 = (0..nb + h).map(|p| b[p] * rhs[p]).sum();
                (self.yy - fitted).max(0.0)
            }
            None => f64::INFINITY,
        }
    }
}

/// Solves a x = b in place for the symmetric positive definite `a` given by its
/// lower triangle (the first `k` rows): Cholesky, then two triangular solves.
/// None when a pivot vanishes (a singular design).
fn cholesky_solve(a: &mut [[f64; MAX_K]; MAX_K], b: &mut [f64; MAX_K], k: usize) -> Option<()> {
    for i in 0..k {
        let scale = a[i][i].abs().max(f64::MIN_POSITIVE);
        for j in 0..=i {
            let s: f64 = (0..j).map(|m| a[i][m] * a[j][m]).sum();
            if i == j {
                let d = a[i][i] - s;
                if d.is_nan() || d <= 1e-12 * scale {
                    return None;
                }
                a[i][i] = d.sqrt();
            } else {
                a[i][j] = (a[i][j] - s) / a[j][j];
            }
        }
    }
    for i in 0..k {
        let s: f64 = (0..i).map(|m| a[i][m] * b[m]).sum();
        b[i] = (b[i] - s) / a[i][i];
    }
    for i in (0..k).rev() {
        let s: f64 = (i + 1..k).map(|m| a[m][i] * b[m]).sum();
        b[i] = (b[i] - s) / a[i][i];
    }
    Some(())
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
    let design = Design::new(d, hinges);
    let sse = |th: &[f64]| match &design {
        Some(design) => design.sse(f, th),
        None => linear(f, th, hinges, d).map_or(f64::INFINITY, |(_, e)| e),
    };
    let theta = shape_search(f, span(d), &sse);
    let (coef, sse) = linear(f, &theta, hinges, d)?;
    Some(Fit {
        family: f,
        theta,
        coef,
        hinges: hinges.to_vec(),
        sse,
    })
}

/// How gradual a bend [`gradual_sse`] puts in place of a sharp one: its slope
/// changes from 10% to 90% of the way over a factor of 4 in x around its
/// centre t (a logistic slope of scale `GRADUAL_WIDTH` t goes from 10% to 90%
/// over 4.39 scales, t - 2.2 w to t + 2.2 w, and (1 + 0.6) / (1 - 0.6) = 4):
/// as gradual as the sharpest bend a smooth family may make (see above).
pub const GRADUAL_WIDTH: f64 = 0.273;

/// The weighted squared error of family `f` with sharp hinges at `hinges` and
/// one gradual bend centred at `t` (x units) instead of a sharp one: the column
/// w ln(1 + exp((x - t) / w)), w = [`GRADUAL_WIDTH`] t, whose slope rises
/// smoothly from 0 to 1 where a hinge's jumps. None where the design is
/// singular or too large.
pub fn gradual_sse(f: Family, hinges: &[f64], t: f64, d: &Data) -> Option<f64> {
    let w = GRADUAL_WIDTH * t.abs().max(1e-9);
    let mut cols = hinge_columns(d, hinges);
    cols.push(d.x.iter().map(|x| w * softplus((x - t) / w)).collect());
    let design = Design::with_columns(d, cols)?;
    let theta = shape_search(f, span(d), &|th| design.sse(f, th));
    Some(design.sse(f, &theta)).filter(|e| e.is_finite())
}

/// The smallest and largest x of the points (positive): the logistic family's
/// midpoint lies between them, so its bend is measured (a midpoint beyond the
/// points would make it an exponential, convex or concave, over the sweep).
fn span(d: &Data) -> (f64, f64) {
    let lo = d.x.iter().copied().fold(f64::INFINITY, f64::min).max(1e-3);
    let hi = d.x.iter().copied().fold(0.0, f64::max);
    (lo, hi.max(lo))
}

/// ln(1 + e^u), without overflow.
fn softplus(u: f64) -> f64 {
    if u > 30.0 {
        u
    } else {
        u.exp().ln_1p()
    }
}

/// The shape parameters of family `f` that minimise `sse`: a grid, then golden
/// section, per parameter.
fn shape_search(f: Family, (lo, hi): (f64, f64), sse: &dyn Fn(&[f64]) -> f64) -> Vec<f64> {
    match f {
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
        Family::Hill => {
            let k_for = |n: f64| min1((0.3, 1e3), 10, 16, true, |k| sse(&[n, k]));
            let (n, _) = min1((0.3, HILL_MAX_N), 10, 16, false, |n| k_for(n).1);
            vec![n, k_for(n).0]
        }
        Family::Logistic => {
            let r_for = |m: f64| min1((LOGISTIC_MIN_S, 4.0), 8, 12, true, |r| sse(&[m, r]));
            let (m, _) = min1((lo, hi.max(lo * 1.01)), 12, 16, true, |m| r_for(m).1);
            vec![m, r_for(m).0]
        }
        Family::SoftCap => {
            let n_for = |b: f64| min1((0.5, SOFT_CAP_MAX_N), 8, 12, false, |n| sse(&[b, n]));
            let (b, _) = min1((0.5, 1e4), 12, 16, true, |b| n_for(b).1);
            vec![b, n_for(b).0]
        }
        Family::UslPower => {
            let sigma_for = |k: f64, b: f64| min1((0.0, 1.0), 8, 12, false, |s| sse(&[s, k, b]));
            let k_for = |b: f64| min1((1e-7, 1.0), 10, 12, true, |k| sigma_for(k, b).1);
            let (b, _) = min1((1.0, USL_POWER_MAX_B), 6, 10, false, |b| k_for(b).1);
            let k = k_for(b).0;
            vec![sigma_for(k, b).0, k, b]
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
    }
}

/// The family (with these hinges) of least weighted squared error, among the
/// families that leave the curve `spare` degrees of freedom beyond their own
/// parameters: a null with as many parameters as points explains any curve. The
/// caller gives 1 where the replicates measure the noise (the family's lack of
/// fit is then testable), 2 with one repetition (the fit with a hinge must
/// leave a residual to estimate the noise from).
pub fn best(hinges: &[f64], d: &Data, spare: usize) -> Option<Fit> {
    FAMILIES
        .iter()
        .filter(|f| f.linear_params() + f.shape_params() + spare <= d.x.len())
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

    /// The shape search's fast error equals the full least-squares one, for
    /// every family with and without hinges.
    #[test]
    fn the_fast_design_gives_the_least_squares_error() {
        let x: Vec<f64> = [1, 2, 4, 7, 8, 12, 16, 20, 24, 32].map(f64::from).to_vec();
        let (y, w) = data(|x| 0.3 + x.powf(0.8) + 0.01 * (x * 1.7).sin(), &x);
        let d = Data {
            x: &x,
            y: &y,
            w: &w,
        };
        for hinges in [vec![], vec![8.0], vec![7.5, 16.0, 24.0]] {
            let design = Design::new(&d, &hinges).unwrap();
            for (fam, th) in [
                (Family::Amdahl, vec![0.05]),
                (Family::Usl, vec![0.02, 0.002]),
                (Family::Hill, vec![1.5, 12.0]),
                (Family::SoftCap, vec![16.0, 2.0]),
            ] {
                let slow = linear(fam, &th, &hinges, &d).unwrap().1;
                let fast = design.sse(fam, &th);
                assert!(
                    (slow - fast).abs() <= 1e-9 * (1.0 + slow),
                    "{fam:?} {hinges:?}: {slow} vs {fast}"
                );
            }
        }
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
            (Family::Hill, vec![1.5, 12.0]),
            (Family::SoftCap, vec![16.0, 2.0]),
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
        let smooth = best(&[], &d, 1).unwrap();
        let hinged = best(&[16.0], &d, 1).unwrap();
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
