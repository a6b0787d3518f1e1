//! Knees: where the marginal speedup per added thread changes. Breakpoints are
//! first placed at the machine's boundaries (the last count before each topology
//! event of the placement), then searched inside each piece (binary segmentation
//! with least-squares lines on the mean speedups), and every breakpoint is tested
//! against its neighbours until all pass. A split is a knee when
//! - each side has at least two measured points with repetitions, or [`MIN_SIDE`]
//!   when a point has a single run (two single points always make a line with no
//!   residual, so they cannot show a bend against noise): otherwise the interval is
//!   reported as undecided, with the thread counts that would decide it;
//! - the effect is large: the slope changes by at least [`MIN_CHANGE`] (15%) of the
//!   slope before it (or of a quarter of the curve's mean slope, if that is larger, so
//!   that two flat pieces never differ "by 300%");
//! - the change is not noise: the two slopes are weighted least-squares lines (each
//!   point weighted by its repetitions over its speedup squared) and their
//!   difference must exceed its standard error times the normal quantile of
//!   [`ALPHA`] (two-sided), divided among the family the split was chosen from: the
//!   machine boundaries of the curve, or the candidate counts of the piece searched
//!   (Bonferroni). The standard error comes from parametric draws of every point's
//!   mean: the run-to-run CV pooled over all points of the curve (many degrees of
//!   freedom even with three repetitions each), widened by Student's t.
//!
//! A bend found by searching lies anywhere between its point and the next, so when
//! it is a neighbour of the split tested its own point is left out of the piece
//! (it could belong to either line). The confidence is the probability, over the
//! draws, that the change has the stated sign and a size of at least 15%; below
//! 0.8 the bend is not reported as a knee (it could be smaller than 15%). With one
//! repetition there is no spread to measure and the confidence is unknown.

use serde::{Deserialize, Serialize};

use crate::boot;
use crate::finding::Confidence;

/// Fewest points on each side of a knee (the knee point counts on both sides).
pub const MIN_SIDE: usize = 3;
/// Smallest relative slope change reported as a knee.
pub const MIN_CHANGE: f64 = 0.15;
/// The chance of reporting a bend where the curve is straight, per family of
/// candidate splits (the machine boundaries; the counts searched in one piece).
pub const ALPHA: f64 = 0.02;

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
    /// Thread counts after which a machine boundary lies (the last count before a
    /// topology event). A split there is preferred over the least-squares best when
    /// their squared errors differ by less than the points' own noise.
    pub boundaries: &'a [usize],
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

fn rel_change(before: f64, after: f64, floor: f64) -> f64 {
    ((after - before) / before.abs().max(floor).max(1e-9)).clamp(-10.0, 10.0)
}

/// The least-squares slope of `s` over `t` with weights `w`.
fn wslope(t: &[f64], s: &[f64], w: &[f64]) -> f64 {
    let sw: f64 = w.iter().sum();
    if sw <= 0.0 {
        return slope(t, s);
    }
    let mx = t.iter().zip(w).map(|(x, w)| x * w).sum::<f64>() / sw;
    let my = s.iter().zip(w).map(|(y, w)| y * w).sum::<f64>() / sw;
    let sxx: f64 = t.iter().zip(w).map(|(x, w)| w * (x - mx).powi(2)).sum();
    let sxy: f64 = t
        .iter()
        .zip(s)
        .zip(w)
        .map(|((x, y), w)| w * (x - mx) * (y - my))
        .sum();
    if sxx > 0.0 {
        sxy / sxx
    } else {
        0.0
    }
}

/// Slopes before and after split `k` of `lo..=hi`, from speedups `s`, each point
/// weighted by `w` (the inverse of its variance: noise grows with the speedup).
fn slopes(t: &[f64], s: &[f64], w: &[f64], (lo, k, hi): (usize, usize, usize)) -> (f64, f64) {
    (
        wslope(&t[lo..=k], &s[lo..=k], &w[lo..=k]),
        wslope(&t[k..=hi], &s[k..=hi], &w[k..=hi]),
    )
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
    /// Each point's weight: repetitions over speedup squared (noise grows with it).
    w: Vec<f64>,
    /// A quarter of the curve's mean slope: the smallest slope a change is relative to.
    floor: f64,
    /// Fewest points a side needs (2 with repetitions everywhere, else 3).
    min_side: usize,
    /// The pooled CV of one run and its degrees of freedom ([`pooled_cv`]).
    noise: Option<(f64, usize)>,
    /// How many measured thread counts lie at a machine boundary.
    boundary_count: usize,
    samples: &'a Samples<'a>,
}

impl Ctx<'_> {
    /// The least-squares split of `lo..=hi`.
    fn split(&self, lo: usize, hi: usize) -> Option<usize> {
        best_split(&self.t, &self.s, lo, hi, self.min_side)
    }

    /// The breakpoints that survive testing against their neighbours: the weakest
    /// failing one is dropped and the rest re-tested until all pass.
    fn prune(&self, mut bps: Vec<usize>, n: usize, out: &mut KneeSearch) -> Vec<Knee> {
        loop {
            let mut weakest: Option<(usize, f64)> = None;
            let mut knees = Vec::new();
            for (i, &k) in bps.iter().enumerate() {
                let lo = if i == 0 { 0 } else { bps[i - 1] };
                let hi = bps.get(i + 1).copied().unwrap_or(n - 1);
                let short = k - lo + 1 < self.min_side || hi - k + 1 < self.min_side;
                let result = if short {
                    let (b, a) = slopes(&self.t, &self.s, &self.w, (lo, k, hi));
                    let change = rel_change(b, a, self.floor);
                    if change.abs() >= MIN_CHANGE && k > lo && k < hi {
                        self.undecided(k, out);
                    }
                    Err(f64::NEG_INFINITY)
                } else {
                    self.test(lo, k, hi)
                };
                match result {
                    Ok(knee) => knees.push(knee),
                    Err(c)
                        if weakest
                            .is_none_or(|(_, w)| c.abs() < w.abs() || c == f64::NEG_INFINITY) =>
                    {
                        weakest = Some((i, c))
                    }
                    Err(_) => {}
                }
            }
            match weakest {
                None => return knees,
                Some((i, _)) => {
                    bps.remove(i);
                }
            }
        }
    }

    fn undecided(&self, k: usize, out: &mut KneeSearch) {
        let u = Undecided {
            threads: self.samples.threads[k],
            next_threads: self.samples.threads[k + 1],
        };
        if !out.undecided.contains(&u) {
            out.undecided.push(u);
        }
    }

    /// Parametric draws of the slopes before and after split `k` of `lo..=hi`:
    /// every point's mean moved by its standard error (the pooled CV times the
    /// speedup over the square root of its repetitions, widened by Student's t for
    /// the pooled degrees of freedom) and every speedup scaled by the baseline's
    /// own error (which moves both slopes alike and leaves their ratio alone).
    fn draws(&self, lo: usize, k: usize, hi: usize, noise: (f64, usize)) -> Vec<[f64; 2]> {
        let (cv, df) = noise;
        let widen = crate::stats::t_quantile(df) / 1.96;
        let reps = |i: usize| self.samples.perf[i].len().max(1) as f64;
        let sd: Vec<f64> = (lo..=hi)
            .map(|i| {
                let own = if i == 0 { 0.0 } else { cv * self.s[i] };
                own / reps(i).sqrt() * widen
            })
            .collect();
        let sd0 = cv / reps(0).sqrt() * widen;
        let t: Vec<f64> = self.t[lo..=hi].to_vec();
        let seed = 0x5ca1_e5c0_u64 ^ ((lo as u64) << 32) ^ ((k as u64) << 16) ^ hi as u64;
        let mut rng = boot::Rng::new(seed);
        (0..boot::RESAMPLES)
            .map(|_| {
                let scale = 1.0 / (1.0 + sd0 * rng.normal()).max(0.1);
                let s: Vec<f64> = (lo..=hi)
                    .zip(&sd)
                    .map(|(i, d)| (self.s[i] + d * rng.normal()) * scale)
                    .collect();
                let (b, a) = slopes(&t, &s, &self.w[lo..=hi], (0, k - lo, hi - lo));
                [b, a]
            })
            .collect()
    }

    /// The piece `lo..=hi` around split `k` without its ends where they are bends
    /// found by searching (not machine boundaries) and a side keeps enough points: such
    /// a bend lies anywhere between its point and the next, so its own point may
    /// belong to either line and would tilt the neighbouring piece.
    fn trim(&self, lo: usize, k: usize, hi: usize) -> (usize, usize) {
        let n = self.t.len();
        let soft = |i: usize| {
            i > 0 && i + 1 < n && !self.samples.boundaries.contains(&self.samples.threads[i])
        };
        let lo = if soft(lo) && k >= lo + self.min_side {
            lo + 1
        } else {
            lo
        };
        let hi = if soft(hi) && hi >= k + self.min_side {
            hi - 1
        } else {
            hi
        };
        (lo, hi)
    }

    /// Whether the slope difference `d` of split `k` excludes zero: |d| over the
    /// draws' standard deviation beyond the normal quantile for [`ALPHA`] two-sided,
    /// divided among the candidate splits of `lo..=hi` (Bonferroni) when `k` was
    /// found by searching them rather than known in advance as a machine boundary.
    fn significant(&self, lo: usize, k: usize, hi: usize, draws: &[[f64; 2]], d: f64) -> bool {
        let at_boundary = self.samples.boundaries.contains(&self.samples.threads[k]);
        let candidates = if at_boundary {
            self.boundary_count
        } else {
            (hi - lo).saturating_sub(1)
        };
        let diffs: Vec<f64> = draws.iter().map(|x| x[1] - x[0]).collect();
        let n = diffs.len().max(2) as f64;
        let m = diffs.iter().sum::<f64>() / n;
        let sd = (diffs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        d.abs() > crate::stats::upper_normal_quantile(ALPHA / 2.0 / candidates.max(1) as f64) * sd
    }

    /// The knee at `k` of `lo..=hi` with its intervals, or the slope change when
    /// it is not one.
    fn test(&self, lo: usize, k: usize, hi: usize) -> Result<Knee, f64> {
        let (lo, hi) = self.trim(lo, k, hi);
        let (before, after) = slopes(&self.t, &self.s, &self.w, (lo, k, hi));
        let change = rel_change(before, after, self.floor);
        if change.abs() < MIN_CHANGE {
            return Err(change);
        }
        let reps = std::iter::once(0)
            .chain(lo..=hi)
            .map(|i| self.samples.perf[i].len())
            .min()
            .unwrap_or(0);
        let draws = self.noise.map(|n| self.draws(lo, k, hi, n));
        let draws = draws.unwrap_or_default();
        let column = |i: usize| draws.iter().map(|d| d[i]).collect::<Vec<f64>>();
        let floor = self.floor;
        let changes: Vec<f64> = draws
            .iter()
            .map(|d| rel_change(d[0], d[1], floor))
            .collect();
        let change_ci = boot::percentile_ci(&changes);
        let confidence = match change_ci {
            None => Confidence::unknown("one repetition: no spread measured"),
            Some((l, h)) if l <= 0.0 && h >= 0.0 => return Err(change),
            Some(_) if !self.significant(lo, k, hi, &draws, after - before) => return Err(change),
            Some(_) => {
                let same = changes
                    .iter()
                    .filter(|d| d.signum() == change.signum() && d.abs() >= MIN_CHANGE)
                    .count();
                let p = same as f64 / changes.len().max(1) as f64;
                if p < 0.8 {
                    return Err(change);
                }
                Confidence::from_probability(p, reps)
            }
        };
        Ok(Knee {
            threads: self.samples.threads[k],
            next_threads: self.samples.threads[k + 1],
            slope_before: before,
            slope_before_ci95: boot::percentile_ci(&column(0)),
            slope_after: after,
            slope_after_ci95: boot::percentile_ci(&column(1)),
            change,
            change_ci95: change_ci,
            bend: bend(before, after),
            reps,
            confidence,
        })
    }

    /// Binary segmentation inside one piece: the breakpoints (indexes) of knees
    /// that are not at a machine boundary.
    fn segment(&self, lo: usize, hi: usize, out: &mut KneeSearch, bps: &mut Vec<usize>) {
        if hi < lo + 2 {
            return;
        }
        // A bend with a two-point side: undecided, with the counts to add.
        if let Some(k) = best_split(&self.t, &self.s, lo, hi, 2) {
            let short = k - lo + 1 < self.min_side || hi - k + 1 < self.min_side;
            let (b, a) = slopes(&self.t, &self.s, &self.w, (lo, k, hi));
            if short && rel_change(b, a, self.floor).abs() >= MIN_CHANGE {
                self.undecided(k, out);
            }
        }
        let Some(k) = self.split(lo, hi) else {
            return;
        };
        if self.test(lo, k, hi).is_err() {
            return;
        }
        self.segment(lo, k, out, bps);
        bps.push(k);
        self.segment(k, hi, out, bps);
    }
}

/// The word for a knee whose slope goes from `before` to `after`.
pub(crate) fn bend(before: f64, after: f64) -> String {
    if after < before {
        "flattens"
    } else {
        "steepens"
    }
    .into()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The noise of one run, pooled over every point of the curve: the root mean
/// square of each repetition's relative deviation from its point's mean, with
/// sum(reps - 1) degrees of freedom. None when a point has a single repetition (no
/// spread measured) or a mean that is not positive.
pub fn pooled_cv(perf: &[Vec<f64>]) -> Option<(f64, usize)> {
    let (mut ss, mut df) = (0.0, 0);
    for v in perf {
        let m = mean(v);
        if v.len() < 2 || m.is_nan() || m <= 0.0 {
            return None;
        }
        ss += v.iter().map(|x| ((x - m) / m).powi(2)).sum::<f64>();
        df += v.len() - 1;
    }
    (df > 0 && ss.is_finite()).then(|| ((ss / df as f64).sqrt(), df))
}

/// Knees of a curve, in thread order.
pub fn find_knees(samples: &Samples) -> KneeSearch {
    let n = samples.threads.len().min(samples.perf.len());
    let meds: Vec<f64> = samples.perf[..n].iter().map(|v| mean(v)).collect();
    let mut out = KneeSearch::default();
    let Some(&base) = meds.first() else {
        return out;
    };
    let t: Vec<f64> = samples.threads[..n].iter().map(|&p| p as f64).collect();
    let s: Vec<f64> = meds.iter().map(|m| m / base).collect();
    let span = t[n - 1] - t[0];
    let floor = if span > 0.0 {
        0.25 * ((s[n - 1] - s[0]) / span).abs()
    } else {
        0.0
    };
    let repeated = samples.perf[..n].iter().all(|v| v.len() >= 2);
    let w: Vec<f64> = (0..n)
        .map(|i| samples.perf[i].len() as f64 / s[i].abs().max(1e-9).powi(2))
        .collect();
    let ctx = Ctx {
        w,
        t,
        s,
        floor,
        min_side: if repeated { 2 } else { MIN_SIDE },
        noise: pooled_cv(&samples.perf[..n]),
        boundary_count: (1..n.saturating_sub(1))
            .filter(|&k| samples.boundaries.contains(&samples.threads[k]))
            .count(),
        samples,
    };
    if n < 3 {
        return out;
    }
    // Breakpoints at the machine's boundaries first (of two adjacent ones, the
    // later), then knees inside each piece, then every breakpoint tested against
    // its neighbours.
    let mut bps: Vec<usize> = (1..n - 1)
        .filter(|&k| samples.boundaries.contains(&samples.threads[k]))
        .collect();
    bps = bps
        .iter()
        .copied()
        .filter(|k| !bps.contains(&(k + 1)))
        .collect();
    let mut found = Vec::new();
    let mut edges = vec![0];
    edges.extend(&bps);
    edges.push(n - 1);
    for w in edges.windows(2) {
        ctx.segment(w[0], w[1], &mut out, &mut found);
    }
    bps.extend(found);
    bps.sort_unstable();
    bps.dedup();
    let mut knees = ctx.prune(bps, n, &mut out);
    knees.sort_by_key(|k| k.threads);
    out.undecided
        .retain(|u| !knees.iter().any(|k| k.threads == u.threads));
    out.knees = knees;
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
            boundaries: &[],
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
            boundaries: &[],
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
            boundaries: &[],
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
            boundaries: &[],
        });
        assert!(k.knees.is_empty(), "{k:?}");
    }

    /// With one repetition a two-point side has no residual to judge a bend by.
    #[test]
    fn a_bend_with_a_two_point_side_is_undecided() {
        let t = [1, 2, 4, 8];
        let perf = reps(
            |p| if p <= 4.0 { p } else { 4.0 + 0.2 * (p - 4.0) },
            &t,
            0.0,
            1,
        );
        let k = find_knees(&Samples {
            threads: &t,
            perf: &perf,
            boundaries: &[],
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
