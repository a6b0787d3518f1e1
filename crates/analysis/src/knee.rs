//! Knees: where the marginal speedup per added thread changes. The curve is split
//! recursively into straight pieces (binary segmentation with least-squares lines);
//! a split is kept when the slope changes by at least a quarter and the change is
//! large against the measurement noise: z = |slope change| / its standard error,
//! with each point's speedup uncertainty and the residual scatter propagated into
//! the slopes. z >= 3 is high confidence, z >= 2 medium, z >= 1 low.

use serde::{Deserialize, Serialize};

/// A bend in the curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    /// Thread count of the last point before the slope changes.
    pub threads: usize,
    /// The next measured thread count.
    pub next_threads: usize,
    /// Speedup gained per added thread before and after.
    pub slope_before: f64,
    pub slope_after: f64,
    /// `flattens` (scaling slows) or `steepens` (scaling speeds up).
    pub bend: String,
    pub z: f64,
    pub confidence: String,
}

/// One point: threads, speedup, standard deviation of the speedup.
pub type Sample = (f64, f64, f64);

struct Line {
    slope: f64,
    sse: f64,
    slope_var: f64,
}

fn line(pts: &[Sample]) -> Line {
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let sse: f64 = pts
        .iter()
        .map(|p| (p.1 - my - slope * (p.0 - mx)).powi(2))
        .sum();
    let resid_var = if pts.len() > 2 { sse / (n - 2.0) } else { 0.0 };
    let slope_var = if sxx > 0.0 {
        pts.iter()
            .map(|p| (p.0 - mx).powi(2) * (p.2 * p.2 + resid_var))
            .sum::<f64>()
            / (sxx * sxx)
    } else {
        f64::INFINITY
    };
    Line {
        slope,
        sse,
        slope_var,
    }
}

/// The best single split of `pts` (the knee point belongs to both sides).
fn best_split(pts: &[Sample]) -> Option<(usize, Line, Line)> {
    (1..pts.len() - 1)
        .map(|k| (k, line(&pts[..=k]), line(&pts[k..])))
        .min_by(|a, b| (a.1.sse + a.2.sse).total_cmp(&(b.1.sse + b.2.sse)))
}

fn segment(pts: &[Sample], offset: usize, out: &mut Vec<(usize, Line, Line)>) {
    if pts.len() < 3 {
        return;
    }
    let Some((k, before, after)) = best_split(pts) else {
        return;
    };
    let ratio = if before.slope.abs() > 1e-12 {
        after.slope / before.slope
    } else {
        f64::INFINITY
    };
    let changed = !(0.75..=1.0 / 0.75).contains(&ratio);
    let z = (before.slope - after.slope).abs() / (before.slope_var + after.slope_var).sqrt();
    if !changed || z < 1.0 {
        return;
    }
    segment(&pts[..=k], offset, out);
    out.push((offset + k, before, after));
    segment(&pts[k..], offset + k, out);
}

/// Knees of a curve given as (threads, speedup, speedup standard deviation),
/// sorted by thread count.
pub fn find_knees(pts: &[Sample]) -> Vec<Knee> {
    let mut found = Vec::new();
    segment(pts, 0, &mut found);
    found
        .into_iter()
        .map(|(k, before, after)| {
            let z = ((before.slope - after.slope).abs()
                / (before.slope_var + after.slope_var).sqrt())
            .min(99.0);
            Knee {
                threads: pts[k].0 as usize,
                next_threads: pts[k + 1].0 as usize,
                slope_before: before.slope,
                slope_after: after.slope,
                bend: if after.slope < before.slope {
                    "flattens"
                } else {
                    "steepens"
                }
                .into(),
                z,
                confidence: if z >= 3.0 {
                    "high"
                } else if z >= 2.0 {
                    "medium"
                } else {
                    "low"
                }
                .into(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(f: impl Fn(f64) -> f64, threads: &[usize], sd: f64) -> Vec<Sample> {
        threads
            .iter()
            .map(|&p| (p as f64, f(p as f64), sd))
            .collect()
    }

    #[test]
    fn two_knees() {
        let f = |p: f64| {
            if p <= 24.0 {
                p
            } else if p <= 48.0 {
                24.0 + 0.7 * (p - 24.0)
            } else {
                40.8 + 0.05 * (p - 48.0)
            }
        };
        let t = [
            1, 2, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 56, 64, 72, 80, 88, 96,
        ];
        let k = find_knees(&curve(f, &t, 0.2));
        assert_eq!(
            k.iter().map(|k| k.threads).collect::<Vec<_>>(),
            vec![24, 48],
            "{k:?}"
        );
        assert!(k
            .iter()
            .all(|k| k.bend == "flattens" && k.confidence == "high"));
    }

    #[test]
    fn straight_and_noisy_curves_have_none() {
        let t = [1, 2, 4, 8, 16, 32];
        assert!(find_knees(&curve(|p| p, &t, 0.1)).is_empty());
        // A wobble well inside the noise is not a knee.
        let wobble = |p: f64| p + if p == 8.0 { 0.5 } else { 0.0 };
        assert!(find_knees(&curve(wobble, &t, 2.0)).is_empty());
        assert!(find_knees(&curve(|p| p, &[1, 2], 0.0)).is_empty());
    }
}
