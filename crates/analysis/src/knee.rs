//! Knees: where the marginal speedup per added thread changes. The curve is split
//! recursively into straight pieces (binary segmentation with least-squares lines
//! on the speedup). A split is a knee when
//! - each side has at least [`MIN_SIDE`] measured points (two points always make a
//!   line, so they cannot show a bend): otherwise the interval is reported as
//!   undecided, with the thread counts that would decide it;
//! - the effect is large: the slope changes by at least [`MIN_CHANGE`] (15%);
//! - the change is not noise: its bootstrap 95% interval (each point's repetitions
//!   resampled) excludes no-change.
//!
//! The confidence is the bootstrap probability that the change has the stated sign
//! and size; with one repetition there is no spread to resample and it is unknown.

use serde::{Deserialize, Serialize};

use crate::boot;
use crate::finding::Confidence;

/// Fewest points on each side of a knee (the knee point counts on both sides).
pub const MIN_SIDE: usize = 3;
/// Smallest relative slope change reported as a knee.
pub const MIN_CHANGE: f64 = 0.15;

/// A bend in the curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    /// Thread count of the last point before the slope changes.
    pub threads: usize,
    /// The next measured thread count.
    pub next_threads: usize,
    /// Speedup gained per added thread before and after, with 95% intervals.
    pub slope_before: f64,
    pub slope_before_ci95: Option<(f64, f64)>,
    pub slope_after: f64,
    pub slope_after_ci95: Option<(f64, f64)>,
    /// The effect size: (after - before) / |before|.
    pub change: f64,
    pub change_ci95: Option<(f64, f64)>,
    /// `flattens` (scaling slows) or `steepens` (scaling speeds up).
    pub bend: String,
    /// Fewest repetitions of any point involved.
    pub reps: usize,
    pub confidence: Confidence,
}

/// An interval where the curve bends by at least [`MIN_CHANGE`] but a side has too
/// few points to tell a knee from a line through two points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Undecided {
    pub threads: usize,
    pub next_threads: usize,
}

/// Knees and undecided intervals of one curve.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KneeSearch {
    pub knees: Vec<Knee>,
    pub undecided: Vec<Undecided>,
}

/// A curve: thread counts ascending and each point's repetitions (performance,
/// higher is better); the first point is the baseline.
pub struct Samples<'a> {
    pub threads: &'a [usize],
    pub perf: &'a [Vec<f64>],
}

fn slope(t: &[f64], s: &[f64]) -> f64 {
    let n = t.len() as f64;
    let mx = t.iter().sum::<f64>() / n;
    let my = s.iter().sum::<f64>() / n;
    let sxx: f64 = t.iter().map(|x| (x - mx).powi(2)).sum();
    let sxy: f64 = t.iter().zip(s).map(|(x, y)| (x - mx) * (y - my)).sum();
    if sxx > 0.0 {
        sxy / sxx
    } else {
        0.0
    }
}

fn sse(t: &[f64], s: &[f64]) -> f64 {
    let b = slope(t, s);
    let n = t.len() as f64;
    let (mx, my) = (t.iter().sum::<f64>() / n, s.iter().sum::<f64>() / n);
    t.iter()
        .zip(s)
        .map(|(x, y)| (y - my - b * (x - mx)).powi(2))
        .sum()
}

fn rel_change(before: f64, after: f64) -> f64 {
    ((after - before) / before.abs().max(1e-9)).clamp(-10.0, 10.0)
}

/// Slopes before and after split `k` of `lo..=hi`, from speedups `s`.
fn slopes(t: &[f64], s: &[f64], lo: usize, k: usize, hi: usize) -> (f64, f64) {
    (slope(&t[lo..=k], &s[lo..=k]), slope(&t[k..=hi], &s[k..=hi]))
}

/// The split of `lo..=hi` with the least squared error whose sides have at least
/// `min_side` points.
fn best_split(t: &[f64], s: &[f64], lo: usize, hi: usize, min_side: usize) -> Option<usize> {
    (lo + min_side - 1..=hi.checked_sub(min_side - 1)?)
        .filter(|&k| k > lo && k < hi)
        .min_by(|&a, &b| {
            let e = |k: usize| sse(&t[lo..=k], &s[lo..=k]) + sse(&t[k..=hi], &s[k..=hi]);
            e(a).total_cmp(&e(b))
        })
}

struct Ctx<'a> {
    t: Vec<f64>,
    s: Vec<f64>,
    samples: &'a Samples<'a>,
}

impl Ctx<'_> {
    /// The knee at `k` of `lo..=hi` with its bootstrap intervals, if it is one.
    fn test(&self, lo: usize, k: usize, hi: usize) -> Option<Knee> {
        let (before, after) = slopes(&self.t, &self.s, lo, k, hi);
        let change = rel_change(before, after);
        if change.abs() < MIN_CHANGE {
            return None;
        }
        // Samples: the baseline, then lo..=hi.
        let mut idx = vec![0];
        idx.extend(lo..=hi);
        let sub: Vec<Vec<f64>> = idx.iter().map(|&i| self.samples.perf[i].clone()).collect();
        let t: Vec<f64> = (lo..=hi).map(|i| self.t[i]).collect();
        let speedups = |m: &[f64]| m[1..].iter().map(|v| v / m[0]).collect::<Vec<f64>>();
        let (kk, hh) = (k - lo, hi - lo);
        let seed = 0x5ca1_e5c0_u64 ^ ((lo as u64) << 32) ^ ((k as u64) << 16) ^ hi as u64;
        let side = |which: bool| {
            boot::interval(&sub, seed, |m| {
                let (b, a) = slopes(&t, &speedups(m), 0, kk, hh);
                if which {
                    b
                } else {
                    a
                }
            })
            .1
        };
        let (_, change_ci, draws) = boot::interval(&sub, seed, |m| {
            let (b, a) = slopes(&t, &speedups(m), 0, kk, hh);
            rel_change(b, a)
        });
        let reps = sub.iter().map(Vec::len).min().unwrap_or(0);
        let confidence = match change_ci {
            None => Confidence::unknown("one repetition: no spread measured"),
            Some((l, h)) if l <= 0.0 && h >= 0.0 => return None,
            Some(_) => {
                let same = draws
                    .iter()
                    .filter(|d| d.signum() == change.signum() && d.abs() >= MIN_CHANGE)
                    .count();
                Confidence::from_probability(same as f64 / draws.len().max(1) as f64, reps)
            }
        };
        Some(Knee {
            threads: self.samples.threads[k],
            next_threads: self.samples.threads[k + 1],
            slope_before: before,
            slope_before_ci95: side(true),
            slope_after: after,
            slope_after_ci95: side(false),
            change,
            change_ci95: change_ci,
            bend: if after < before {
                "flattens"
            } else {
                "steepens"
            }
            .into(),
            reps,
            confidence,
        })
    }

    fn segment(&self, lo: usize, hi: usize, out: &mut KneeSearch) {
        if hi < lo + 2 {
            return;
        }
        // A bend with a two-point side: undecided, with the counts to add.
        if let Some(k) = best_split(&self.t, &self.s, lo, hi, 2) {
            let short = k - lo + 1 < MIN_SIDE || hi - k + 1 < MIN_SIDE;
            let (b, a) = slopes(&self.t, &self.s, lo, k, hi);
            if short && rel_change(b, a).abs() >= MIN_CHANGE {
                let u = Undecided {
                    threads: self.samples.threads[k],
                    next_threads: self.samples.threads[k + 1],
                };
                if !out.undecided.contains(&u) {
                    out.undecided.push(u);
                }
            }
        }
        let Some(k) = best_split(&self.t, &self.s, lo, hi, MIN_SIDE) else {
            return;
        };
        let Some(knee) = self.test(lo, k, hi) else {
            return;
        };
        self.segment(lo, k, out);
        out.knees.push(knee);
        self.segment(k, hi, out);
    }
}

/// Knees of a curve, in thread order.
pub fn find_knees(samples: &Samples) -> KneeSearch {
    let n = samples.threads.len().min(samples.perf.len());
    let meds = boot::medians(&samples.perf[..n]);
    let mut out = KneeSearch::default();
    let Some(&base) = meds.first() else {
        return out;
    };
    let ctx = Ctx {
        t: samples.threads[..n].iter().map(|&p| p as f64).collect(),
        s: meds.iter().map(|m| m / base).collect(),
        samples,
    };
    if n >= 3 {
        ctx.segment(0, n - 1, &mut out);
    }
    out.knees.sort_by_key(|k| k.threads);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Five repetitions of performance f(p), spread by +-`cv`, deterministic.
    fn reps(f: impl Fn(f64) -> f64, threads: &[usize], cv: f64, n: usize) -> Vec<Vec<f64>> {
        threads
            .iter()
            .map(|&p| {
                (0..n)
                    .map(|r| {
                        let u = ((p * 31 + r * 17) % 11) as f64 / 5.0 - 1.0;
                        f(p as f64) * (1.0 + cv * u)
                    })
                    .collect()
            })
            .collect()
    }

    fn study(p: f64) -> f64 {
        if p <= 24.0 {
            p
        } else if p <= 48.0 {
            24.0 + 0.7 * (p - 24.0)
        } else {
            40.8 + 0.05 * (p - 48.0)
        }
    }

    const T: [usize; 20] = [
        1, 2, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 56, 64, 72, 80, 88, 96,
    ];

    #[test]
    fn two_knees_with_intervals() {
        let perf = reps(study, &T, 0.01, 5);
        let k = find_knees(&Samples {
            threads: &T,
            perf: &perf,
        });
        assert_eq!(
            k.knees.iter().map(|k| k.threads).collect::<Vec<_>>(),
            vec![24, 48],
            "{k:?}"
        );
        for knee in &k.knees {
            assert_eq!(knee.bend, "flattens");
            assert_eq!(knee.confidence.label, "high", "{knee:?}");
            let (lo, hi) = knee.change_ci95.unwrap_or((0.0, 0.0));
            assert!(lo < knee.change && knee.change < hi && hi < 0.0);
        }
    }

    #[test]
    fn one_repetition_gives_unknown_confidence() {
        let perf = reps(study, &T, 0.0, 1);
        let k = find_knees(&Samples {
            threads: &T,
            perf: &perf,
        });
        assert!(!k.knees.is_empty());
        assert!(k.knees.iter().all(|k| k.confidence.label == "unknown"));
    }

    #[test]
    fn straight_and_noisy_curves_have_none() {
        let t = [1, 2, 4, 8, 16, 32];
        let perf = reps(|p| p, &t, 0.01, 5);
        let k = find_knees(&Samples {
            threads: &t,
            perf: &perf,
        });
        assert!(k.knees.is_empty() && k.undecided.is_empty(), "{k:?}");
        // A bend inside a 30% spread is not a knee.
        let bent = reps(
            |p| if p <= 8.0 { p } else { 8.0 + 0.8 * (p - 8.0) },
            &t,
            0.3,
            3,
        );
        let k = find_knees(&Samples {
            threads: &t,
            perf: &bent,
        });
        assert!(k.knees.is_empty(), "{k:?}");
    }

    #[test]
    fn a_bend_with_a_two_point_side_is_undecided() {
        let t = [1, 2, 4, 8];
        let perf = reps(
            |p| if p <= 4.0 { p } else { 4.0 + 0.2 * (p - 4.0) },
            &t,
            0.01,
            3,
        );
        let k = find_knees(&Samples {
            threads: &t,
            perf: &perf,
        });
        assert!(k.knees.is_empty(), "{k:?}");
        assert_eq!(
            k.undecided,
            vec![Undecided {
                threads: 4,
                next_threads: 8
            }]
        );
    }
}
