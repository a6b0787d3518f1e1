//! What lowers a claimed knee's confidence to low at most, beside the test
//! that claimed it: a gradual bend that fits its points about as well (the
//! break is not sharp), a smooth curve outside the null's families that
//! explains them without the knee (a logistic sigmoid, the USL with a
//! power-law overhead), a change of slope the points beside the break do not
//! show, a steepening to a slope the points already reach on average before
//! it, and, for a knee the whole-curve mechanism model implies, points that
//! lean its way without showing it.

use super::{f1_quantile, select, smooth, Bend, Ctx, Family, Fit, Hinge, Knee, Support, ALPHA};

/// A knee the whole-curve mechanism model implies, held to the points: None
/// where they do not lean its way at all (a hinge at its place, added to the
/// selected fit, lowers the penalised error by nothing or bends the other way); of low
/// confidence at most where a hinge at its place lowers the chi-square by
/// less than the 1 - [`ALPHA`] quantile of F(1, df) (the F test of one hinge
/// at a position named in advance, at the curve's own false-alarm rate). The model's own draws agree on a knee its
/// structure implies whatever the points say (a second socket's fresh
/// bandwidth after a cap reached on the first): only the points can make such
/// a knee confident.
pub fn held_to_the_points(mut k: Knee, support: &Support) -> Option<Knee> {
    let (gain, df) = support.lean(k.threads, k.bend).filter(|(g, _)| *g > 0.0)?;
    let bar = f1_quantile(ALPHA, df);
    // The gain is penalised (chi-square + 2k): the chi-square drop is 2 more.
    let drop = gain + 2.0;
    if drop < bar {
        k.confidence.cap_low(&format!(
            "the points lean towards this bend but do not show it on their own (a break here lowers the chi-square by {drop:.1}, under the 99% bar {bar:.1}): the whole-curve model implies it"
        ));
    }
    Some(k)
}

/// A knee whose plausible positions are not localised (they spread beyond
/// [`super::LOCAL`] points and a ratio of [`super::LOCAL_SPAN`] in threads) but
/// include a machine boundary is claimed there, of low confidence at most: the
/// points show a bend, and the boundary is one place it may be, not the only
/// one. (Where no boundary is among them, no knee is claimed: a departure that
/// could be anywhere is not a knee at a place.) A knee claimed at a boundary
/// that the points reject at 95% but not at 99% is of low confidence at most too:
/// its place rests on one point.
pub(super) fn held_to_place(mut k: Knee, place: &select::Place) -> Knee {
    if let Some(best) = place.kept_from {
        k.confidence.cap_low(&format!(
            "the points place the break best at {best:.1} threads; the machine boundary after {} is kept as its place, since they reject it only at 95%, not at 99%: one point a little off decides between the two, and more repetitions there would tell them apart",
            k.threads
        ));
    }
    if !place.localised {
        let (lo, hi) = place.span;
        k.confidence.cap_low(&format!(
            "the break is not localised: a hinge anywhere from {lo:.1} to {hi:.1} threads fits the points about as well (within the 95% quantile of F(1, df)); it is claimed at the machine boundary among those places"
        ));
    }
    k
}

/// A knee whose break is no sharper than a gradual bend in its place is of low
/// confidence at most: the points show the curve bending there, not a break
/// that no smooth curve makes.
pub(super) fn held_to_sharpness(mut k: Knee, place: &select::Place) -> Knee {
    if let (false, Some(s)) = (place.sharp(), place.sharpness) {
        k.confidence.cap_low(&format!(
            "a gradual bend (its slope turning over a factor of 4 in threads, as smooth curves may) fits the points about as well as a sharp break (chi-square difference {s:.1}, under the 95% bar {:.1}): the curve bends here, but nothing shows a break",
            place.bar
        ));
    }
    k
}

/// A knee whose points a smooth curve outside the null's families explains
/// about as well is of low confidence at most: a logistic curve (growth that
/// starts convex and saturates, symmetric in threads) or the USL with a
/// power-law overhead (a retrograde fall steeper than the USL's), each with
/// the other hinges and without this one, within the 1 - [`ALPHA`] quantile of
/// F(1, df) of the selected model's penalised error (chi-square + 2k): a
/// confident knee beats every smooth curve at the curve's own false-alarm
/// rate. Such curves otherwise put a break where they saturate or turn over.
pub(super) fn held_to_other_smooth(
    mut k: Knee,
    ctx: &Ctx,
    at: &[Hinge],
    i: usize,
    selected: &Fit,
) -> Knee {
    if k.confidence.label == "low" || k.confidence.label == "unknown" {
        return k;
    }
    let others: Vec<f64> = (0..at.len()).filter(|o| *o != i).map(|o| at[o].t).collect();
    for (family, what) in [
        (
            Family::Logistic,
            "a smooth sigmoid (a logistic curve: growth that starts convex and saturates)",
        ),
        (
            Family::UslPower,
            "a smooth rise and fall (the USL with an overhead growing as a power of the threads)",
        ),
    ] {
        let Some(alt) = smooth::fit(family, &others, &ctx.data()) else {
            continue;
        };
        let Some((gain, df)) = ctx.gain(&alt, selected) else {
            continue;
        };
        let bar = f1_quantile(ALPHA, df);
        if gain <= bar {
            k.confidence.cap_low(&format!(
                "{what} fits the points about as well without this break (penalised chi-square difference {gain:.1}, under the 99% bar {bar:.1})"
            ));
            return k;
        }
    }
    k
}

/// A knee whose stated change of slope the points beside it do not show is of
/// low confidence at most. The measured change: the slope over the two measured
/// intervals after the break less the slope over the two before it (a hinge
/// between two points leaves their interval out), with its standard error from
/// the points' own noise. Where the stated change (the fit's slopes at the
/// hinge) lies outside that change's 99% interval, the slopes are the fitted
/// family's, bent hard beside the hinge that makes up for it (an efficiency
/// falling as a Hill curve read as "steepens +77% after 5" where the points go
/// from 0.90 to 0.93 per thread), not the curve's.
pub(super) fn held_to_neighbours(mut k: Knee, ctx: &Ctx, h: Hinge) -> Knee {
    if k.confidence.label != "high" && k.confidence.label != "medium" {
        return k;
    }
    let Some((cv, _)) = ctx.noise else {
        return k;
    };
    let n = ctx.n();
    let j = h.j;
    let start = if h.t == ctx.x[j] { j } else { j + 1 };
    let (a, c) = (j.saturating_sub(2), (start + 2).min(n - 1));
    if a == j || c == start {
        return k;
    }
    let (db, da) = (ctx.x[j] - ctx.x[a], ctx.x[c] - ctx.x[start]);
    // The measured change as a sum of weights on the points' means.
    let mut weights = vec![0.0; n];
    weights[c] += 1.0 / da;
    weights[start] -= 1.0 / da;
    weights[j] -= 1.0 / db;
    weights[a] += 1.0 / db;
    let measured: f64 = weights.iter().zip(&ctx.y).map(|(w, y)| w * y).sum();
    let var: f64 = weights
        .iter()
        .zip(&ctx.w)
        .map(|(w, wi)| w * w * cv * cv / wi)
        .sum();
    let p0 = ctx.samples.threads[0].max(1) as f64;
    let stated = (k.slope_after - k.slope_before) * p0;
    let z = 2.576;
    if (stated - measured).abs() > z * var.sqrt() {
        let per = |v: f64| v / p0;
        k.confidence.cap_low(&format!(
            "the points beside the break show the slope change by {:+.2} per thread ({:+.2} to {:+.2}, 99%), not the {:+.2} the fitted curve states: the smooth family bends hard here and the break makes up for it",
            per(measured),
            per(measured - z * var.sqrt()),
            per(measured + z * var.sqrt()),
            per(stated)
        ));
    }
    k
}

/// A steepening whose slope after the break the points already reach, on
/// average, over the stretch the fit treats as one smooth piece before it (from
/// the selected hinge before it, or the first point, to the break) is of low
/// confidence at most: the curve does not speed up there beyond what it showed
/// before; the fitted family bent down over that stretch (absorbing a flattening
/// earlier on) and the break makes up for it ("speeds up after 14, 0.28 -> 0.67
/// per thread" on a line that flattens to 0.5 after 7 and rises at 0.70 per
/// thread on average from 1 to 14). The stated slope after must exceed the
/// stretch's secant slope by more than the 99% bound of its noise.
pub(super) fn held_to_stretch(
    mut k: Knee,
    ctx: &Ctx,
    (at, i): (&[Hinge], usize),
    h: Hinge,
) -> Knee {
    if k.bend != Bend::Steepens || (k.confidence.label != "high" && k.confidence.label != "medium")
    {
        return k;
    }
    let Some((cv, _)) = ctx.noise else {
        return k;
    };
    let j = h.j;
    // The stretch starts at the last selected hinge before this one (its
    // measured point on or after it), or at the first point.
    let a = at
        .iter()
        .enumerate()
        .filter(|(o, _)| *o != i)
        .map(|(_, o)| o)
        .filter(|o| o.t < h.t)
        .map(|o| if o.t == ctx.x[o.j] { o.j } else { o.j + 1 })
        .max()
        .unwrap_or(0);
    if a >= j {
        return k;
    }
    let dx = ctx.x[j] - ctx.x[a];
    let secant = (ctx.y[j] - ctx.y[a]) / dx;
    let se = (cv * cv / ctx.w[j] + cv * cv / ctx.w[a]).sqrt() / dx;
    let p0 = ctx.samples.threads[0].max(1) as f64;
    let after = k.slope_after * p0;
    let z = 2.576;
    if after <= secant + z * se {
        let per = |v: f64| v / p0;
        k.confidence.cap_low(&format!(
            "the points rise by {:.2} per thread on average from {} to {} threads (up to {:.2}, 99%), as much as the {:.2} this steepening states after the break: the fitted curve bends down before it and the break makes up for it",
            per(secant),
            ctx.samples.threads[a],
            ctx.samples.threads[j],
            per(secant + z * se),
            per(after)
        ));
    }
    k
}
