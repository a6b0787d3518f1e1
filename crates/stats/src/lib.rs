//! The statistics every scalescope crate shares, in one place (no other crate of
//! the project is a dependency): the median and quantiles of a sample, its summary
//! (location, spread, a 95% interval of the mean, outliers by the median absolute
//! deviation); the small-sample Akaike information criterion (AICc);
//! Welch's unequal-variance t-test (B. L. Welch, Biometrika 34, 1947), with the
//! Student t distribution's tail from the regularized incomplete beta function
//! (continued fraction by the modified Lentz method, as in Numerical Recipes §6.4),
//! and the F distribution's tail from the same function; a Cholesky factor (for
//! drawing correlated parameters); the seeded generator ([`Rng`]) and the bootstrap
//! ([`boot`]).

use serde::{Deserialize, Serialize};

pub mod boot;
mod rng;

pub use rng::Rng;

/// Summary of one sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub median: f64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// Sample standard deviation (n-1); 0 for one value.
    pub stddev: f64,
    /// 95% confidence interval (Student's t) of the mean, taken on the logarithms
    /// when every value is positive (a time or a rate: the interval of the geometric
    /// mean, which cannot cross zero); equal to the value for one value.
    pub ci95: (f64, f64),
    /// Values whose modified z-score exceeds 3.5 (Iglewicz and Hoaglin, 1993).
    pub outliers: usize,
}

/// Two-sided 97.5% quantiles of Student's t for 1..=30 degrees of freedom.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The t quantile for a 95% two-sided interval with `df` degrees of freedom.
pub fn t_quantile(df: usize) -> f64 {
    match df {
        0 => f64::NAN,
        1..=30 => T975[df - 1],
        31..=60 => 2.000,
        61..=120 => 1.980,
        _ => 1.960,
    }
}

/// z with P(Z > z) = p for a standard normal Z (Abramowitz and Stegun 26.2.23,
/// error below 4.5e-4), for 0 < p <= 0.5.
pub fn upper_normal_quantile(p: f64) -> f64 {
    let t = (-2.0 * p.clamp(1e-300, 0.5).ln()).sqrt();
    t - (2.515_517 + 0.802_853 * t + 0.010_328 * t * t)
        / (1.0 + 1.432_788 * t + 0.189_269 * t * t + 0.001_308 * t * t * t)
}

/// The median of a sorted sample (NaN when empty).
pub fn median(sorted: &[f64]) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        let (a, b) = (sorted[n / 2 - 1], sorted[n / 2]);
        // Two figures near 1e308 overflow the sum: halved first then (halving
        // is exact there; not below 4.5e-308, where the sum is used).
        if (a + b).is_finite() {
            (a + b) / 2.0
        } else {
            a / 2.0 + b / 2.0
        }
    }
}

/// The median of an unsorted sample; None when it is empty or holds a NaN.
pub fn median_of(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| v.is_nan()) {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    Some(median(&v))
}

/// The `q` quantile (0..=1) of a sorted sample, interpolated linearly between
/// order statistics (Hyndman and Fan's type 7, the default of R and NumPy); NaN
/// when empty.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let h = (sorted.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// The interquartile range of a sorted sample.
pub fn iqr(sorted: &[f64]) -> f64 {
    quantile(sorted, 0.75) - quantile(sorted, 0.25)
}

/// The arithmetic mean (NaN when empty).
pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.iter().sum::<f64>() / values.len() as f64
}

/// The mean and the sample standard deviation (0 for one value). Values past
/// 1e150, whose squares or sums would overflow, are scaled by a power of two
/// first (exact), so figures of one sign near 1e308 give a finite mean and
/// spread (of mixed signs the spread itself may pass the largest number); below
/// 1e150 the arithmetic is the plain one, bit for bit.
fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len();
    let big = v.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    // 2^-600: 1e308 becomes 2.4e127, whose square is finite.
    let scale = if big > 1e150 { 2f64.powi(-600) } else { 1.0 };
    let mean = v.iter().map(|x| x * scale).sum::<f64>() / n as f64;
    let sd = if n > 1 {
        (v.iter().map(|x| (x * scale - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    (mean / scale, sd / scale)
}

/// The small-sample Akaike information criterion of a least-squares fit of `k`
/// parameters to `n` points with residual sum of squares `sse` (Hurvich and Tsai,
/// 1989): n ln(sse / n) + 2k + 2k(k + 1)/(n - k - 1); None when n <= k + 1.
pub fn aicc(n: usize, k: usize, sse: f64) -> Option<f64> {
    let (nf, kf) = (n as f64, k as f64);
    (n > k + 1).then(|| {
        nf * (sse.max(1e-300) / nf).ln() + 2.0 * kf + 2.0 * kf * (kf + 1.0) / (nf - kf - 1.0)
    })
}

/// Summarises `values`; `None` when empty or any value is not finite.
pub fn summarize(values: &[f64]) -> Option<Summary> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let (mean, stddev) = mean_sd(&v);
    let ci95 = if n < 2 {
        (mean, mean)
    } else if v[0] > 0.0 {
        let logs: Vec<f64> = v.iter().map(|x| x.ln()).collect();
        let lm = logs.iter().sum::<f64>() / n as f64;
        let lsd = (logs.iter().map(|x| (x - lm).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
        let half = t_quantile(n - 1) * lsd / (n as f64).sqrt();
        ((lm - half).exp(), (lm + half).exp())
    } else {
        let half = t_quantile(n - 1) * stddev / (n as f64).sqrt();
        (mean - half, mean + half)
    };
    let med = median(&v);
    let mut dev: Vec<f64> = v.iter().map(|x| (x - med).abs()).collect();
    dev.sort_by(f64::total_cmp);
    let mad = median(&dev);
    let outliers = if mad > 0.0 {
        v.iter()
            .filter(|x| 0.6745 * (*x - med).abs() / mad > 3.5)
            .count()
    } else {
        0
    };
    Some(Summary {
        n,
        median: med,
        mean,
        min: v[0],
        max: v[n - 1],
        stddev,
        ci95,
        outliers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two figures of 1e308: a finite median, mean and spread (the sum of the two
    /// overflowed to infinity).
    #[test]
    fn figures_near_the_largest_number_summarize_finite() {
        let s = summarize(&[1e308, 1.2e308, 1.1e308]).unwrap();
        assert_eq!(s.median, 1.1e308);
        assert!((s.mean / 1.1e308 - 1.0).abs() < 1e-12, "{s:?}");
        assert!((s.stddev / 1e307 - 1.0).abs() < 1e-9, "{s:?}");
        let s = summarize(&[1e308, 1e308]).unwrap();
        assert_eq!((s.median, s.mean, s.stddev), (1e308, 1e308, 0.0));
    }

    #[test]
    fn known_sample() {
        // Mean 5, sample sd sqrt(10/3 * ...) computed by hand: values 2,4,4,4,5,5,7,9.
        let s = summarize(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(
            (s.n, s.median, s.mean, s.min, s.max),
            (8, 4.5, 5.0, 2.0, 9.0)
        );
        assert!((s.stddev - 2.138_089_935).abs() < 1e-6);
        // Positive values: the interval of the geometric mean, on logarithms.
        let logs: Vec<f64> = [2.0f64, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]
            .map(f64::ln)
            .to_vec();
        let lm = logs.iter().sum::<f64>() / 8.0;
        let lsd = (logs.iter().map(|x| (x - lm).powi(2)).sum::<f64>() / 7.0).sqrt();
        let half = 2.365 * lsd / 8f64.sqrt();
        assert!((s.ci95.1 - (lm + half).exp()).abs() < 1e-9);
        // One wild time among three stays above zero; a signed sample keeps the mean's.
        let wild = summarize(&[0.1, 1.0, 30.0]).unwrap();
        assert!(
            wild.ci95.0 > 0.0 && wild.ci95.0 < 1.0 && wild.ci95.1 > 1.0,
            "{wild:?}"
        );
        let signed = summarize(&[-1.0, 1.0, 3.0]).unwrap();
        assert!((signed.ci95.0 - (1.0 - 4.303 * 2.0 / 3f64.sqrt())).abs() < 1e-9);
    }

    #[test]
    fn mad_outliers() {
        let s = summarize(&[1.0, 1.01, 0.99, 1.0, 1.02, 5.0]).unwrap();
        assert_eq!(s.outliers, 1);
        assert_eq!(summarize(&[3.0, 3.0, 3.0]).unwrap().outliers, 0);
    }

    #[test]
    fn quantiles_as_r_and_numpy() {
        // R: quantile(c(1, 2, 3, 4, 10), c(.25, .5, .75)) = 2, 3, 4; type 7.
        let v = [1.0, 2.0, 3.0, 4.0, 10.0];
        assert_eq!(
            (quantile(&v, 0.25), quantile(&v, 0.5), quantile(&v, 0.75)),
            (2.0, 3.0, 4.0)
        );
        assert_eq!(iqr(&v), 2.0);
        // numpy.quantile([1, 2, 3, 4], 0.1) = 1.3.
        assert!((quantile(&[1.0, 2.0, 3.0, 4.0], 0.1) - 1.3).abs() < 1e-12);
        assert_eq!(median_of(&[3.0, 1.0, 2.0, 10.0]), Some(2.5));
        assert_eq!(median_of(&[]), None);
        assert_eq!(mean(&[1.0, 2.0, 6.0]), 3.0);
    }

    #[test]
    fn aicc_by_hand() {
        // n = 10, k = 2, sse = 5: 10 ln 0.5 + 4 + 12/7.
        let a = aicc(10, 2, 5.0).unwrap_or(f64::NAN);
        assert!((a - (10.0 * 0.5f64.ln() + 4.0 + 12.0 / 7.0)).abs() < 1e-12);
        assert_eq!(aicc(3, 2, 1.0), None);
    }

    #[test]
    fn degenerate() {
        assert!(summarize(&[]).is_none());
        assert!(summarize(&[f64::NAN]).is_none());
        let one = summarize(&[2.0]).unwrap();
        assert_eq!((one.stddev, one.ci95), (0.0, (2.0, 2.0)));
    }
}

/// The test's result.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Welch {
    pub t: f64,
    pub df: f64,
    /// Two-sided p-value.
    pub p_value: f64,
}

fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    (
        m,
        x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0),
    )
}

/// Welch's test of equal means; `None` with fewer than two values on a side.
pub fn welch_t_test(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let ((ma, va), (mb, vb)) = (mean_var(a), mean_var(b));
    let (sa, sb) = (va / a.len() as f64, vb / b.len() as f64);
    let se2 = sa + sb;
    if se2 == 0.0 {
        // No spread at all: identical means are equal, different ones certainly not.
        return Some(Welch {
            t: if ma == mb { 0.0 } else { f64::INFINITY },
            df: f64::INFINITY,
            p_value: if ma == mb { 1.0 } else { 0.0 },
        });
    }
    let t = (ma - mb) / se2.sqrt();
    let df = se2 * se2 / (sa * sa / (a.len() as f64 - 1.0) + sb * sb / (b.len() as f64 - 1.0));
    Some(Welch {
        t,
        df,
        p_value: student_two_sided(t, df),
    })
}

/// P(|T| > |t|) for Student's t with `df` degrees of freedom.
pub fn student_two_sided(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
}

fn ln_gamma(x: f64) -> f64 {
    // Lanczos approximation (g = 7, n = 9).
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + 7.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularized incomplete beta function I_x(a, b).
/// Lower-triangular L with L L^T = `a` (None when `a` is not positive definite).
pub fn cholesky(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let s: f64 = (0..j).map(|k| l[i][k] * l[j][k]).sum();
            if i == j {
                let d = a[i][i] - s;
                if d <= 0.0 || !d.is_finite() {
                    return None;
                }
                l[i][i] = d.sqrt();
            } else {
                l[i][j] = (a[i][j] - s) / l[j][j];
            }
        }
    }
    Some(l)
}

/// P(F > f) for an F distribution with (d1, d2) degrees of freedom.
pub fn f_upper_tail(f: f64, d1: f64, d2: f64) -> f64 {
    if f <= 0.0 {
        return 1.0;
    }
    incomplete_beta(d2 / 2.0, d1 / 2.0, d2 / (d2 + d1 * f))
}

pub fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

#[cfg(test)]
mod welch_tests {
    use super::*;

    #[test]
    fn f_distribution_tails() {
        // Table values of the 95th percentile: F(10, 20) 2.348, F(5, 60) 2.368;
        // F(1, 10) is t(10) squared (2.228^2 = 4.965).
        assert!((f_upper_tail(2.348, 10.0, 20.0) - 0.05).abs() < 0.001);
        assert!((f_upper_tail(2.368, 5.0, 60.0) - 0.05).abs() < 0.001);
        assert!((f_upper_tail(4.965, 1.0, 10.0) - 0.05).abs() < 0.001);
        assert!((f_upper_tail(1.5, 1.0, 7.0) - student_two_sided(1.5f64.sqrt(), 7.0)).abs() < 1e-9);
        assert!((f_upper_tail(0.0, 5.0, 60.0) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn t_distribution_tails() {
        // Two-sided 5% critical values of Student's t.
        assert!((student_two_sided(12.706, 1.0) - 0.05).abs() < 1e-4);
        assert!((student_two_sided(2.228, 10.0) - 0.05).abs() < 1e-4);
        assert!((student_two_sided(1.96, 1e6) - 0.05).abs() < 1e-3);
        assert!((student_two_sided(0.0, 5.0) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn welch_known_example() {
        // Two samples with clearly different means, and two with the same.
        let a = [1.0, 1.1, 0.9, 1.05, 0.95];
        let b = [2.0, 2.1, 1.9, 2.05, 1.95];
        let w = welch_t_test(&a, &b).unwrap();
        assert!(w.p_value < 1e-6, "{w:?}");
        let w = welch_t_test(&a, &a).unwrap();
        assert!((w.p_value - 1.0).abs() < 1e-9);
        assert!(welch_t_test(&a[..1], &b).is_none());
    }
}
