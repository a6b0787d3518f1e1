//! Knees: where a curve departs from the best smooth scaling curve. The smooth
//! families ([`crate::smooth`]: Amdahl, the USL, Gustafson's line, a power law, a
//! power curve with an offset, exponential saturation, a Hill curve with an
//! offset, a soft cap; each smooth on the scale of a sweep's grid, and with
//! fewer parameters than the curve has points) are the null hypothesis; a
//! knee is a change of slope (a hinge) after a measured thread count, claimed only
//! when
//! - adding the hinge lowers the best fit's penalised error (chi-square against the
//!   replicate noise + 2k, every family refitted with the hinges) by at least the
//!   F(1, df) quantile of 1 - [`ALPHA`] / (positions tried) less 2: the
//!   extra-sum-of-squares F test against the pure error (the run-to-run CV pooled
//!   over every point, sum(reps - 1) degrees of freedom) when one family wins both
//!   fits. Hinges are added one at a time, each where it clears its bar by most
//!   (half the chance among every position, a quarter among the machine's
//!   boundaries, known in advance, a quarter among pairs of adjacent
//!   boundaries); a hinge may sit between two measured points (a cap reached at
//!   16 on a grid of 13 and 18 is one hinge there, not two). Two hinges at
//!   adjacent boundaries may be added together (a NUMA node's limit, then the
//!   package's, each masked by a family that bends between them) where both
//!   change the slope the same way, each clears a boundary's bar beside the
//!   other, and the two fit better than one gradual bend in their place;
//! - the break is localised: with the selected family, every position whose hinge
//!   fits within the 95% quantile of F(1, df) of the best one lies within `LOCAL` (2)
//!   measured points of it (a departure that could be anywhere is not a knee at a
//!   place); a machine boundary among them is preferred (and one within `LOCAL`
//!   points of the best that the points do not reject at 99%), and where they spread
//!   further but include one, the knee is claimed there of low confidence at most;
//! - the effect is large: the slope changes by at least [`MIN_CHANGE`] (15%) of
//!   the slope before it (or of a quarter of the curve's mean slope, if that is
//!   larger), and in at least 80% of 400 draws of the fitted coefficients (their
//!   normal approximation, widened by Student's t) with the stated sign.
//!
//! A knee needs two points past it with repetitions, three with one repetition; a
//! significant bend with one point past it is reported as undecided, with the
//! thread counts that would decide it. With one repetition there is no pure
//! error: the test uses the residual variance of the fit with the hinge, and the
//! confidence is unknown, never high. Where the model with its hinges still fails
//! its lack-of-fit test (p < 1%), the curve is of a shape the model does not
//! describe and its knees are of low confidence at most. Where a smooth curve
//! outside the null's families (a logistic sigmoid, the USL with a power-law
//! overhead) without the knee's hinge fits about as well as the selected
//! model, the knee is of low confidence at most. A knee is attributed to
//! a topology boundary only afterwards, when one lies between its point and the
//! next.

mod lowered;
pub use lowered::held_to_the_points;
mod select;

use serde::{Deserialize, Serialize};

use crate::boot;
use crate::finding::Confidence;
use crate::smooth::{self, Data, Family, Fit};
use crate::stats::{cholesky, f_upper_tail, t_quantile};

/// x with P(F > x) = `p` for F(1, df) (bisection on the tail).
fn f1_quantile(p: f64, df: usize) -> f64 {
    f_quantile(p, 1, df)
}

/// x with P(F > x) = `p` for F(`d1`, df) (bisection on the tail).
fn f_quantile(p: f64, d1: usize, df: usize) -> f64 {
    let (mut lo, mut hi) = (0.0, 1e6);
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if f_upper_tail(mid, d1 as f64, df as f64) > p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// Fewest points on each side of a knee with one repetition (the knee point counts
/// on both sides).
pub const MIN_SIDE: usize = 3;
/// Smallest relative slope change reported as a knee.
pub const MIN_CHANGE: f64 = 0.15;
/// The chance of reporting a bend where a smooth curve explains the points, per
/// curve (divided among the thread counts searched).
pub const ALPHA: f64 = 0.01;
/// The run-to-run CV below which a measurement is taken as this precise: no timing
/// repeats better than 0.1%, and a noise of zero would make every wiggle a knee.
pub const MIN_CV: f64 = 0.001;
/// How many measured points either side of the best position a localised break's
/// plausible positions may reach, or else ([`LOCAL_SPAN`]) the widest ratio, in
/// threads, between them: one doubling. Either suffices: in points alone a dense
/// grid is held to a tighter place than a sparse one (two points either side of
/// 12 on 7, 9, 12, 13, 15 span less than a doubling), in threads alone a sparse
/// grid's neighbours (8, 16, 32) would leave no room at all. Whether the
/// boundary in the interval was measured is the attribution's question
/// (`curve::attribute`), whether the break is sharper than a smooth bend the
/// gradual-bend test's (`select::Place`).
const LOCAL: usize = 2;
const LOCAL_SPAN: f64 = 2.0;
/// Where the model with its hinges still fails its lack-of-fit test at this
/// level, the curve is of a shape neither the smooth families nor their hinges
/// describe: its knees are of low confidence at most.
const MISFIT_P: f64 = 0.01;
/// The most hinges one curve is given.
const MAX_HINGES: usize = 6;

/// A hinge of the fit: a change of slope at `t` (x units), after measured point
/// `j` and before the next (x_j <= t < x_{j+1}). A break need not sit on a
/// measured point: a bandwidth cap reached between two of them is one hinge
/// there, where hinges at measured points would need two (and would report the
/// second as a knee of its own).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Hinge {
    j: usize,
    t: f64,
}

/// Where in its interval a hinge is tried while hinges are selected (at the
/// measured point and halfway to the next), and where the selected one is then
/// refined (quarters of its interval and of the one before).
const TRY_AT: [f64; 2] = [0.0, 0.5];
const REFINE_AT: [f64; 3] = [0.25, 0.5, 0.75];

/// Which way the slope changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bend {
    /// Scaling slows.
    Flattens,
    /// Scaling speeds up.
    Steepens,
}

impl std::fmt::Display for Bend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Bend::Flattens => "flattens",
            Bend::Steepens => "steepens",
        })
    }
}

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
    pub bend: Bend,
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
    /// The best smooth family with the knees' hinges, when one was fitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smooth: Option<SmoothNull>,
}

/// The null hypothesis as fitted: the best smooth family, its fit without hinges
/// against the pure error, and the hinges the F test added.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmoothNull {
    pub family: String,
    /// Lack of fit of the smooth family alone against the replicate noise: F and
    /// its upper-tail probability (None with one repetition).
    pub lack_of_fit_f: Option<f64>,
    pub lack_of_fit_p: Option<f64>,
    /// The same for the selected model, the family with the hinges added (None
    /// without hinges). Where it is still significant (p < 1%), the knees'
    /// confidence is at most low.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with_knees_lack_of_fit_f: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with_knees_lack_of_fit_p: Option<f64>,
    /// Thread counts after which a hinge was added (claimed or not).
    pub hinges_after: Vec<usize>,
}

/// A curve: thread counts ascending and each point's repetitions (performance,
/// higher is better); the first point is the baseline.
pub struct Samples<'a> {
    pub threads: &'a [usize],
    pub perf: &'a [Vec<f64>],
    /// Thread counts after which a machine boundary lies (the last count before a
    /// topology event). Of the positions a localised break could be at, one of
    /// these is preferred.
    pub boundaries: &'a [usize],
}

/// The word for a knee whose slope goes from `before` to `after`.
pub(crate) fn bend(before: f64, after: f64) -> Bend {
    if after < before {
        Bend::Flattens
    } else {
        Bend::Steepens
    }
}

fn rel_change(before: f64, after: f64, floor: f64) -> f64 {
    ((after - before) / before.abs().max(floor).max(1e-9)).clamp(-10.0, 10.0)
}

use crate::stats::mean;

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

/// The curve prepared for the test.
struct Ctx<'a> {
    x: Vec<f64>,
    y: Vec<f64>,
    w: Vec<f64>,
    /// The pooled CV (floored at [`MIN_CV`]) and its degrees of freedom; None with
    /// one repetition.
    noise: Option<(f64, usize)>,
    /// A quarter of the curve's mean slope (x units): the smallest slope a change is
    /// relative to.
    floor: f64,
    reps: usize,
    samples: &'a Samples<'a>,
}

impl Ctx<'_> {
    fn data(&self) -> Data<'_> {
        Data {
            x: &self.x,
            y: &self.y,
            w: &self.w,
        }
    }

    fn n(&self) -> usize {
        self.x.len()
    }

    /// Positions (indexes) a knee may be claimed at: enough points on both sides.
    fn admissible(&self, j: usize) -> bool {
        let side = if self.noise.is_some() { 2 } else { MIN_SIDE };
        j + 1 >= side && j + side < self.n() + 1 && j + 2 < self.n()
    }

    /// The hinge a fraction `f` of the way from point `j` to the next.
    fn hinge(&self, j: usize, f: f64) -> Hinge {
        Hinge {
            j,
            t: self.x[j] + f * (self.x[j + 1] - self.x[j]),
        }
    }

    /// Whether point `j` is the last before a machine boundary.
    fn at_boundary(&self, j: usize) -> bool {
        self.samples.boundaries.contains(&self.samples.threads[j])
    }

    /// The best smooth fit with the hinges `at`.
    fn fit(&self, at: &[Hinge]) -> Option<Fit> {
        let h: Vec<f64> = at.iter().map(|h| h.t).collect();
        // One degree of freedom to spare where the replicates measure the
        // noise, two where the residual must (`smooth::best`).
        let spare = if self.noise.is_some() { 1 } else { 2 };
        smooth::best(&h, &self.data(), spare)
    }

    /// The error variance (relative, per run) and its degrees of freedom: the pure
    /// error, or with one repetition the residual variance of `fit`.
    fn variance(&self, fit: &Fit) -> Option<(f64, usize)> {
        match self.noise {
            Some((cv, df)) => Some((cv * cv, df)),
            None => {
                let df = self.n().checked_sub(fit.k())?;
                (df >= 1).then(|| ((fit.sse / df as f64).max(MIN_CV * MIN_CV), df))
            }
        }
    }

    /// The F statistic and its upper-tail probability of adding a hinge: `with`
    /// against `without`.
    fn f_test(&self, without: &Fit, with: &Fit) -> Option<(f64, f64)> {
        let (var, df) = self.variance(with)?;
        let f = ((without.sse - with.sse) / var).max(0.0);
        Some((f, f_upper_tail(f, 1.0, df as f64)))
    }
}

/// Draws of the fitted coefficients (their normal approximation, widened by
/// Student's t for the error's degrees of freedom).
fn coef_draws(ctx: &Ctx, fit: &Fit) -> Vec<Vec<f64>> {
    let Some((var, df)) = ctx.variance(fit) else {
        return Vec::new();
    };
    let rows: Vec<Vec<f64>> = ctx.x.iter().map(|&x| fit.row(x)).collect();
    let a = smooth::normal_matrix(&ctx.data(), &rows);
    let k = a.len();
    let inv: Option<Vec<Vec<f64>>> = (0..k)
        .map(|c| {
            let e: Vec<f64> = (0..k).map(|r| f64::from(u8::from(r == c))).collect();
            crate::fit::solve(a.clone(), e)
        })
        .collect();
    let Some(inv) = inv else {
        return Vec::new();
    };
    let cov: Vec<Vec<f64>> = inv
        .iter()
        .map(|r| r.iter().map(|v| v * var).collect())
        .collect();
    let Some(l) = cholesky(&cov) else {
        return Vec::new();
    };
    let widen = t_quantile(df) / 1.96;
    let mut rng = boot::Rng::new(0x5ca1_e5c0 ^ (fit.hinges.len() as u64) << 20);
    (0..boot::RESAMPLES)
        .map(|_| {
            let z: Vec<f64> = (0..k).map(|_| rng.normal() * widen).collect();
            (0..k)
                .map(|r| fit.coef[r] + (0..=r).map(|c| l[r][c] * z[c]).sum::<f64>())
                .collect()
        })
        .collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The knee of hinge `j` in `fit`, or None when its change is too small or not
/// sure enough.
fn knee_at(ctx: &Ctx, fit: &Fit, h: Hinge, draws: &[Vec<f64>]) -> Option<Knee> {
    let (j, x) = (h.j, h.t);
    let (rb, ra) = (fit.slope_row(x, false), fit.slope_row(x, true));
    let (before, after) = (dot(&rb, &fit.coef), dot(&ra, &fit.coef));
    let change = rel_change(before, after, ctx.floor);
    if change.abs() < MIN_CHANGE {
        return None;
    }
    let per_thread = 1.0 / ctx.samples.threads[0].max(1) as f64;
    let slopes: Vec<(f64, f64)> = draws.iter().map(|c| (dot(&rb, c), dot(&ra, c))).collect();
    let changes: Vec<f64> = slopes
        .iter()
        .map(|(b, a)| rel_change(*b, *a, ctx.floor))
        .collect();
    let scaled =
        |v: Vec<f64>| boot::percentile_ci(&v).map(|(l, h)| (l * per_thread, h * per_thread));
    let confidence = if ctx.noise.is_none() || draws.is_empty() {
        Confidence::unknown("one repetition: no spread measured")
    } else {
        let same = changes
            .iter()
            .filter(|d| d.signum() == change.signum() && d.abs() >= MIN_CHANGE)
            .count();
        let p = same as f64 / changes.len().max(1) as f64;
        if p < 0.8 {
            return None;
        }
        Confidence::from_probability(p, ctx.reps)
    };
    Some(Knee {
        threads: ctx.samples.threads[j],
        next_threads: ctx.samples.threads[j + 1],
        slope_before: before * per_thread,
        slope_before_ci95: scaled(slopes.iter().map(|s| s.0).collect()),
        slope_after: after * per_thread,
        slope_after_ci95: scaled(slopes.iter().map(|s| s.1).collect()),
        change,
        change_ci95: boot::percentile_ci(&changes),
        bend: bend(before, after),
        reps: ctx.reps,
        confidence,
    })
}

/// A significant bend where a side is too short to claim it: the best such
/// position, if adding its hinge passes the F test at [`ALPHA`] and changes the
/// slope by at least [`MIN_CHANGE`].
fn undecided(ctx: &Ctx, at: &[Hinge], current: &Fit) -> Option<Undecided> {
    let (j, fit, _) = (1..ctx.n().saturating_sub(1))
        .filter(|j| !ctx.admissible(*j) && !at.iter().any(|h| h.j == *j))
        .filter_map(|j| {
            let f = ctx.fit(&[at, &[ctx.hinge(j, 0.0)]].concat())?;
            let (stat, p) = ctx.f_test(current, &f)?;
            (p < ALPHA).then_some((j, f, stat))
        })
        .max_by(|a, b| a.2.total_cmp(&b.2))?;
    let x = ctx.x[j];
    let before = dot(&fit.slope_row(x, false), &fit.coef);
    let after = dot(&fit.slope_row(x, true), &fit.coef);
    (rel_change(before, after, ctx.floor).abs() >= MIN_CHANGE).then(|| Undecided {
        threads: ctx.samples.threads[j],
        next_threads: ctx.samples.threads[j + 1],
    })
}

/// The curve prepared, or None when it cannot be (fewer than three points, a
/// baseline that is not positive).
fn prepare<'a>(samples: &'a Samples<'a>) -> Option<Ctx<'a>> {
    let n = samples.threads.len().min(samples.perf.len());
    let means: Vec<f64> = samples.perf[..n].iter().map(|v| mean(v)).collect();
    let base = *means.first()?;
    let p0 = *samples.threads.first()? as f64;
    if n < 3 || means.iter().any(|m| !m.is_finite() || *m <= 0.0) {
        return None;
    }
    let x: Vec<f64> = samples.threads[..n]
        .iter()
        .map(|&p| p as f64 / p0)
        .collect();
    let y: Vec<f64> = means.iter().map(|m| m / base).collect();
    let w: Vec<f64> = (0..n)
        .map(|i| samples.perf[i].len() as f64 / (y[i] * y[i]))
        .collect();
    let span = x[n - 1] - x[0];
    Some(Ctx {
        floor: if span > 0.0 {
            0.25 * ((y[n - 1] - y[0]) / span).abs()
        } else {
            0.0
        },
        x,
        y,
        w,
        noise: pooled_cv(&samples.perf[..n]).map(|(cv, df)| (cv.max(MIN_CV), df)),
        reps: samples.perf[..n].iter().map(Vec::len).min().unwrap_or(0),
        samples,
    })
}

/// Knees of a curve, in thread order.
pub fn find_knees(samples: &Samples) -> KneeSearch {
    let mut out = KneeSearch::default();
    let Some(ctx) = prepare(samples) else {
        return out;
    };
    let (at, Some(fit)) = ctx.select() else {
        return out;
    };
    let draws = coef_draws(&ctx, &fit);
    let mut claimed = Vec::new();
    for i in 0..at.len() {
        let Some(place) = ctx
            .localise(&at, i, fit.family)
            .filter(|p| p.localised || p.claim_at_boundary)
        else {
            continue;
        };
        let h = place.claim;
        let knee = if h == at[i] {
            knee_at(&ctx, &fit, h, &draws)
        } else {
            let mut moved = at.clone();
            moved[i] = h;
            let t: Vec<f64> = moved.iter().map(|h| h.t).collect();
            smooth::fit(fit.family, &t, &ctx.data())
                .and_then(|f| knee_at(&ctx, &f, h, &coef_draws(&ctx, &f)))
        };
        claimed.extend(knee.map(|k| {
            let k = lowered::held_to_sharpness(lowered::held_to_place(k, &place), &place);
            let k = lowered::held_to_other_smooth(k, &ctx, &at, i, &fit);
            let k = lowered::held_to_neighbours(k, &ctx, h);
            lowered::held_to_stretch(k, &ctx, (&at, i), h)
        }));
    }
    claimed.sort_by_key(|k| k.threads);
    claimed.dedup_by_key(|k| k.threads);
    out.undecided.extend(undecided(&ctx, &at, &fit));
    if let Some((f, p)) = lack_of_fit(&ctx, &fit).filter(|l| l.1 < MISFIT_P) {
        let why = format!(
            "the curve with its knees still departs from the points (lack of fit F = {f:.1}, \
             p = {p:.1e}): a shape no smooth family takes, so where and how much it bends is uncertain"
        );
        for k in &mut claimed {
            k.confidence.cap_low(&why);
        }
    }
    out.smooth = null_summary(&ctx, &at, &fit);
    out.knees = claimed;
    out
}

/// The hinge selection of one curve, made once, against which any number of
/// implied knees are checked ([`held_to_the_points`]).
pub struct Support<'a> {
    ctx: Option<Ctx<'a>>,
    at: Vec<Hinge>,
    current: Option<Fit>,
}

impl<'a> Support<'a> {
    /// The curve prepared and its hinges selected.
    pub fn new(samples: &'a Samples<'a>) -> Self {
        let ctx = prepare(samples);
        let (at, current) = ctx.as_ref().map_or((Vec::new(), None), |c| c.select());
        Support { ctx, at, current }
    }

    /// How much a hinge after `threads`, added to the best smooth fit with the
    /// hinges the test selected, lowers its penalised error (with its degrees
    /// of freedom), where it changes the slope the way of `bend`: whether and
    /// how far the points themselves lean towards that bend.
    fn lean(&self, threads: usize, bend: Bend) -> Option<(f64, usize)> {
        let (ctx, current) = (self.ctx.as_ref()?, self.current.as_ref()?);
        let j = ctx.samples.threads.iter().position(|t| *t == threads)?;
        if self.at.iter().any(|h| h.j == j) || j == 0 || j + 1 >= ctx.n() {
            return None;
        }
        let with = ctx.fit(&[self.at.clone(), vec![ctx.hinge(j, 0.0)]].concat())?;
        let x = ctx.x[j];
        let before = dot(&with.slope_row(x, false), &with.coef);
        let after = dot(&with.slope_row(x, true), &with.coef);
        (self::bend(before, after) == bend)
            .then(|| ctx.gain(current, &with))
            .flatten()
    }
}

/// A fit's lack of fit against the pure error: F = (weighted error / its
/// degrees of freedom) / the replicate variance, and its upper-tail probability
/// (None with one repetition or no degrees of freedom left).
fn lack_of_fit(ctx: &Ctx, fit: &Fit) -> Option<(f64, f64)> {
    let (cv, df) = ctx.noise?;
    let dfl = ctx.n().checked_sub(fit.k()).filter(|d| *d > 0)? as f64;
    let f = fit.sse / dfl / (cv * cv);
    Some((f, f_upper_tail(f, dfl, df as f64)))
}

/// The best smooth family alone and its lack of fit against the pure error,
/// and the lack of fit of the selected model (the family with its hinges).
fn null_summary(ctx: &Ctx, at: &[Hinge], selected: &Fit) -> Option<SmoothNull> {
    let alone = ctx.fit(&[])?;
    let lof = lack_of_fit(ctx, &alone);
    let with = lack_of_fit(ctx, selected).filter(|_| !at.is_empty());
    let mut hinges_after: Vec<usize> = at.iter().map(|h| ctx.samples.threads[h.j]).collect();
    hinges_after.sort_unstable();
    Some(SmoothNull {
        family: alone.family.name().into(),
        lack_of_fit_f: lof.map(|l| l.0),
        lack_of_fit_p: lof.map(|l| l.1),
        with_knees_lack_of_fit_f: with.map(|l| l.0),
        with_knees_lack_of_fit_p: with.map(|l| l.1),
        hinges_after,
    })
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
            assert_eq!(knee.bend, Bend::Flattens);
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
        assert!(!k.knees.is_empty(), "{k:?}");
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

    /// The curves: Amdahl (5% serial) and a retrograde USL peaking at 12
    /// threads bend at every point, but a smooth family explains them, so no knee
    /// is claimed, at 4, 8, 16 or anywhere; the same points bent at 16 get one.
    #[test]
    fn smooth_curves_have_no_knee_and_a_real_bend_does() {
        let t = [1, 2, 4, 8, 12, 16, 20, 24, 28, 32];
        let amdahl = |p: f64| 1.0 / (0.05 + 0.95 / p);
        let usl = |p: f64| p / (1.0 + 0.02 * (p - 1.0) + 0.98 / 144.0 * p * (p - 1.0));
        for f in [&amdahl as &dyn Fn(f64) -> f64, &usl] {
            let perf = reps(f, &t, 0.03, 3);
            let k = find_knees(&Samples {
                threads: &t,
                perf: &perf,
                boundaries: &[16],
            });
            assert!(k.knees.is_empty(), "{k:?}");
        }
        let bent = |p: f64| {
            if p <= 16.0 {
                p
            } else {
                16.0 + 0.4 * (p - 16.0)
            }
        };
        let perf = reps(bent, &t, 0.03, 3);
        let k = find_knees(&Samples {
            threads: &t,
            perf: &perf,
            boundaries: &[16],
        });
        let at: Vec<(usize, Bend)> = k.knees.iter().map(|k| (k.threads, k.bend)).collect();
        assert_eq!(at, vec![(16, Bend::Flattens)], "{k:?}");
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
