//! What lowers a claimed knee's confidence to low at most, beside the test
//! that claimed it: a gradual bend that fits its points about as well (the
//! break is not sharp), a smooth curve outside the null's families that
//! explains them without the knee (a logistic sigmoid, the USL with a
//! power-law overhead), and, for a knee the whole-curve mechanism model
//! implies, points that lean its way without showing it.

use super::{f1_quantile, select, smooth, Ctx, Family, Fit, Hinge, Knee, Support, ALPHA};

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
