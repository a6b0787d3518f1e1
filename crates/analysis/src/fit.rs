//! Scaling models fitted to a speedup curve S(p) measured against one thread:
//! Amdahl's law S = 1 / (s + (1 - s)/p) and Gunther's Universal Scalability Law
//! S = p / (1 + sigma (p - 1) + kappa p (p - 1)) (N. J. Gunther, "Guerrilla Capacity
//! Planning", 2007). Both are linear in their parameters after a transformation, so
//! they are solved exactly by least squares there; R^2 is reported on S itself.

use serde::{Deserialize, Serialize};

/// Amdahl's law fitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AmdahlFit {
    /// Serial fraction s in [0, 1].
    pub serial_fraction: f64,
    /// Speedup as p grows without bound: 1/s (None when s = 0).
    pub max_speedup: Option<f64>,
    pub r_squared: f64,
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
}

pub fn amdahl(s: f64, p: f64) -> f64 {
    1.0 / (s + (1.0 - s) / p)
}

pub fn usl(sigma: f64, kappa: f64, p: f64) -> f64 {
    p / (1.0 + sigma * (p - 1.0) + kappa * p * (p - 1.0))
}

/// R^2 of `model` against the observed speedups.
fn r_squared(points: &[(f64, f64)], model: impl Fn(f64) -> f64) -> f64 {
    let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len() as f64;
    let ss_tot: f64 = points.iter().map(|p| (p.1 - mean).powi(2)).sum();
    let ss_res: f64 = points.iter().map(|p| (p.1 - model(p.0)).powi(2)).sum();
    if ss_tot > 0.0 {
        1.0 - ss_res / ss_tot
    } else {
        1.0
    }
}

/// Fits Amdahl's law to (threads, speedup) points (speedup against 1 thread).
/// Returns `None` with fewer than two thread counts above 1.
pub fn fit_amdahl(points: &[(f64, f64)]) -> Option<AmdahlFit> {
    // 1/S - 1/p = s (1 - 1/p): a line through the origin in x = 1 - 1/p.
    let usable: Vec<&(f64, f64)> = points
        .iter()
        .filter(|(p, s)| *p > 1.0 && *s > 0.0)
        .collect();
    if usable.len() < 2 {
        return None;
    }
    let (sxy, sxx) = usable.iter().fold((0.0, 0.0), |(a, b), (p, s)| {
        let x = 1.0 - 1.0 / p;
        (a + x * (1.0 / s - 1.0 / p), b + x * x)
    });
    let s = (sxy / sxx).clamp(0.0, 1.0);
    Some(AmdahlFit {
        serial_fraction: s,
        max_speedup: (s > 0.0).then(|| 1.0 / s),
        r_squared: r_squared(points, |p| amdahl(s, p)),
    })
}

/// Fits the USL with sigma, kappa >= 0. Returns `None` with fewer than three thread
/// counts above 1.
pub fn fit_usl(points: &[(f64, f64)]) -> Option<UslFit> {
    // p/S - 1 = sigma (p - 1) + kappa p (p - 1): two regressors, no intercept.
    let rows: Vec<(f64, f64, f64)> = points
        .iter()
        .filter(|(p, s)| *p > 1.0 && *s > 0.0)
        .map(|(p, s)| (p - 1.0, p * (p - 1.0), p / s - 1.0))
        .collect();
    if rows.len() < 3 {
        return None;
    }
    let (mut a11, mut a12, mut a22, mut b1, mut b2) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (x1, x2, y) in &rows {
        a11 += x1 * x1;
        a12 += x1 * x2;
        a22 += x2 * x2;
        b1 += x1 * y;
        b2 += x2 * y;
    }
    let det = a11 * a22 - a12 * a12;
    let (mut sigma, mut kappa) = if det.abs() > 1e-12 * a11 * a22 {
        ((b1 * a22 - b2 * a12) / det, (a11 * b2 - a12 * b1) / det)
    } else {
        (b1 / a11, 0.0)
    };
    // Constrained refits on the boundary when the free solution leaves it.
    if kappa < 0.0 {
        kappa = 0.0;
        sigma = b1 / a11;
    }
    if sigma < 0.0 {
        sigma = 0.0;
        kappa = (b2 / a22).max(0.0);
    }
    let peak_threads = (kappa > 0.0 && sigma < 1.0).then(|| ((1.0 - sigma) / kappa).sqrt());
    Some(UslFit {
        sigma,
        kappa,
        peak_threads,
        peak_speedup: peak_threads.map(|p| usl(sigma, kappa, p)),
        r_squared: r_squared(points, |p| usl(sigma, kappa, p)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_amdahl() {
        let pts: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0, 16.0]
            .iter()
            .map(|&p| (p, amdahl(0.05, p)))
            .collect();
        let f = fit_amdahl(&pts).unwrap();
        assert!((f.serial_fraction - 0.05).abs() < 1e-12);
        assert!((f.max_speedup.unwrap() - 20.0).abs() < 1e-9);
        assert!(f.r_squared > 0.999_999);
    }

    #[test]
    fn recovers_usl_and_its_peak() {
        let pts: Vec<(f64, f64)> = (1..=64)
            .map(|p| p as f64)
            .map(|p| (p, usl(0.02, 0.0005, p)))
            .collect();
        let f = fit_usl(&pts).unwrap();
        assert!((f.sigma - 0.02).abs() < 1e-9 && (f.kappa - 0.0005).abs() < 1e-12);
        assert!((f.peak_threads.unwrap() - (0.98f64 / 0.0005).sqrt()).abs() < 1e-6);
    }

    #[test]
    fn linear_scaling_has_no_serial_fraction() {
        let pts: Vec<(f64, f64)> = (1..=8).map(|p| (p as f64, p as f64)).collect();
        assert_eq!(fit_amdahl(&pts).unwrap().serial_fraction, 0.0);
        let u = fit_usl(&pts).unwrap();
        assert!(u.sigma.abs() < 1e-12 && u.kappa.abs() < 1e-12 && u.peak_threads.is_none());
        assert!(fit_usl(&pts[..2]).is_none());
    }
}
