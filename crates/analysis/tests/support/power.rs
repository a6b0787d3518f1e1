//! How detectable a true knee is at all, whatever the detector: the
//! noncentrality of the F test for its hinge against the knees' null (the best
//! smooth family, `scalescope_analysis::smooth`, refitted with the other true
//! hinges), computed on the noise-free means with the weights the detector uses
//! (repetitions over (value x CV) squared), and the power a chi-square test of
//! one degree of freedom has at the detector's critical value. The sum of the
//! powers over the true knees is the recall a test at that false-alarm rate can
//! expect: a recall bar above it cannot be met by any detector that keeps the
//! null, and the corpora print it beside the recall found.

#![allow(dead_code)] // each test uses part of it

use scalescope_analysis::knee::ALPHA;
use scalescope_analysis::smooth::{self, Data};
use scalescope_analysis::stats::f_upper_tail;

/// The drop of the weighted chi-square when a hinge after `x[j]` is added to the
/// best smooth fit with hinges after `others` (indexes into `x`): the F test's
/// noncentrality for that hinge. `y` is the noise-free speedup (y[0] = 1).
pub fn noncentrality(
    x: &[f64],
    y: &[f64],
    reps: usize,
    cv: f64,
    others: &[usize],
    j: usize,
) -> f64 {
    let w: Vec<f64> = y.iter().map(|v| reps as f64 / (v * v * cv * cv)).collect();
    let d = Data { x, y, w: &w };
    let hx = |idx: &[usize]| idx.iter().map(|&i| x[i]).collect::<Vec<f64>>();
    let without = smooth::best(&hx(others), &d, 1).map_or(f64::INFINITY, |f| f.sse);
    let mut all = others.to_vec();
    all.push(j);
    let with = smooth::best(&hx(&all), &d, 1).map_or(f64::INFINITY, |f| f.sse);
    (without - with).max(0.0)
}

/// The detector's critical value for one hinge: the F(1, df) quantile of
/// 1 - ALPHA / `positions` (df = points x (reps - 1)).
pub fn critical(points: usize, reps: usize, positions: usize) -> f64 {
    let df = (points * (reps - 1)) as f64;
    let p = ALPHA / positions.max(1) as f64;
    let (mut lo, mut hi) = (0.0, 1e6);
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if f_upper_tail(mid, 1.0, df) > p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// P(|Z + sqrt(lambda)| > sqrt(c)), Z standard normal: the power of a chi-square
/// test of one degree of freedom with critical value c at noncentrality lambda.
pub fn power(lambda: f64, c: f64) -> f64 {
    let (m, z) = (lambda.max(0.0).sqrt(), c.sqrt());
    normal_cdf(m - z) + normal_cdf(-m - z)
}

/// The standard normal distribution function (Abramowitz and Stegun 7.1.26 for
/// erf, absolute error under 1.5e-7).
pub fn normal_cdf(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-z * z).exp();
    if x >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// The hinge index for a true change after thread count `k` on `grid`: the
/// measured point at k, or of the two around it the one whose hinge the null
/// finds easier to tell (a change between two measured points).
pub fn noncentrality_at(
    grid: &[usize],
    y: &[f64],
    reps: usize,
    cv: f64,
    others: &[usize],
    k: usize,
) -> f64 {
    let x: Vec<f64> = grid.iter().map(|&t| t as f64 / grid[0] as f64).collect();
    let after = grid.iter().position(|&t| t >= k).unwrap_or(grid.len() - 1);
    let mut cands = vec![after];
    if grid[after] != k && after > 0 {
        cands.push(after - 1);
    }
    cands
        .into_iter()
        .filter(|j| *j > 0 && j + 1 < grid.len() && !others.contains(j))
        .map(|j| noncentrality(&x, y, reps, cv, others, j))
        .fold(0.0, f64::max)
}
