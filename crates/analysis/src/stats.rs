//! Statistics over a point's repetitions: location, spread, a 95% confidence
//! interval of the mean (Student's t), and outliers by the median absolute deviation.

use serde::{Deserialize, Serialize};

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
    /// 95% confidence interval of the mean; equal to the mean for one value.
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

pub fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Summarises `values`; `None` when empty or any value is not finite.
pub fn summarize(values: &[f64]) -> Option<Summary> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let mean = v.iter().sum::<f64>() / n as f64;
    let stddev = if n > 1 {
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let half = if n > 1 {
        t_quantile(n - 1) * stddev / (n as f64).sqrt()
    } else {
        0.0
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
        ci95: (mean - half, mean + half),
        outliers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_sample() {
        // Mean 5, sample sd sqrt(10/3 * ...) computed by hand: values 2,4,4,4,5,5,7,9.
        let s = summarize(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(
            (s.n, s.median, s.mean, s.min, s.max),
            (8, 4.5, 5.0, 2.0, 9.0)
        );
        assert!((s.stddev - 2.138_089_935).abs() < 1e-6);
        let half = 2.365 * s.stddev / 8f64.sqrt();
        assert!((s.ci95.1 - (5.0 + half)).abs() < 1e-9);
    }

    #[test]
    fn mad_outliers() {
        let s = summarize(&[1.0, 1.01, 0.99, 1.0, 1.02, 5.0]).unwrap();
        assert_eq!(s.outliers, 1);
        assert_eq!(summarize(&[3.0, 3.0, 3.0]).unwrap().outliers, 0);
    }

    #[test]
    fn degenerate() {
        assert!(summarize(&[]).is_none());
        assert!(summarize(&[f64::NAN]).is_none());
        let one = summarize(&[2.0]).unwrap();
        assert_eq!((one.stddev, one.ci95), (0.0, (2.0, 2.0)));
    }
}
