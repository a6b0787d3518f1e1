//! Which hinges a curve gets: forward selection over the admissible intervals
//! against the bars [`ALPHA`] sets (half the chance among the machine's
//! boundaries, half among every position tried), each hinge refined within its
//! interval and the one before, and where each selected hinge may lie
//! (localisation). The knee test around it is the parent module's.

use super::{
    f1_quantile, f_quantile, smooth, t_quantile, Ctx, Family, Fit, Hinge, ALPHA, LOCAL, LOCAL_SPAN,
    MAX_HINGES, REFINE_AT, TRY_AT,
};

/// The chance at which the points may reject a machine boundary near a knee's
/// best place as the knee's place (see [`Ctx::localise`]).
const BOUNDARY_KEPT: f64 = 0.01;

/// What a hinge between two measured points pays for its position: one more
/// parameter in the penalised error (chi-square + 2k), since its place was
/// fitted rather than given by a measured point.
const OFF_GRID: f64 = 2.0;

impl Ctx<'_> {
    /// Whether hinge `h` sits on its measured point.
    fn on_grid(&self, h: &Hinge) -> bool {
        h.t == self.x[h.j]
    }

    /// What placing `h` costs beyond its coefficient: [`OFF_GRID`] between
    /// points, nothing on one.
    fn place_cost(&self, h: &Hinge) -> f64 {
        if self.on_grid(h) {
            0.0
        } else {
            OFF_GRID
        }
    }

    /// Forward selection over every admissible interval: a hinge is added while
    /// the best one lowers the penalised error, chi-square + 2k (the chi-square
    /// against the replicate variance, every family refitted with the hinges), by
    /// at least its bar less its penalty, 2: the F(1, df) quantile of 1 - a, the
    /// F test of the hinge when one family wins both fits, and the same bar when
    /// the hinge makes another family the best (a segmented model against the
    /// best smooth one). Each interval is tried at its measured point and
    /// halfway to the next ([`TRY_AT`]; a hinge between points pays
    /// [`OFF_GRID`] more for its fitted place). The chance [`ALPHA`] is split:
    /// half among the machine's boundaries (known in advance, tried at the
    /// boundary's own point, so a bend there needs less), half among every
    /// position tried; the candidate that clears its bar by most is added, then
    /// refined within its interval and the one before ([`REFINE_AT`]) where a
    /// position there clears the bar for any position by more than the hinge
    /// cleared its own. (The first round tried the boundaries first: a boundary
    /// hinge could then be accepted to patch the tail of a family that had
    /// absorbed a bend elsewhere, and that bend was not found.)
    pub(super) fn select(&self) -> (Vec<Hinge>, Option<Fit>) {
        let mut at: Vec<Hinge> = Vec::new();
        let Some(mut current) = self.fit(&at) else {
            return (at, None);
        };
        while at.len() < MAX_HINGES {
            let cands: Vec<Hinge> = (0..self.n())
                .filter(|j| self.admissible(*j) && !at.iter().any(|h| h.j == *j))
                .flat_map(|j| TRY_AT.map(|f| self.hinge(j, f)))
                .collect();
            let at_boundary: Vec<Hinge> = cands
                .iter()
                .filter(|h| self.on_grid(h) && self.at_boundary(h.j))
                .copied()
                .collect();
            let pairs: Vec<[Hinge; 2]> = if at.len() + 2 <= MAX_HINGES {
                at_boundary.windows(2).map(|w| [w[0], w[1]]).collect()
            } else {
                Vec::new()
            };
            let bars = Bars::new(at_boundary.len(), cands.len(), pairs.len());
            let bar = |h: &Hinge, df: usize| {
                bars.bar(df, self.on_grid(h) && self.at_boundary(h.j)) + self.place_cost(h)
            };
            let try_add = |add: &[Hinge], bar: &dyn Fn(usize) -> f64| {
                let f = self.fit(&[at.as_slice(), add].concat())?;
                let (gain, df) = self.gain(&current, &f)?;
                Some((add.to_vec(), f, gain - bar(df)))
            };
            let single = cands
                .iter()
                .filter_map(|h| try_add(&[*h], &|df| bar(h, df)))
                .max_by(|a, b| a.2.total_cmp(&b.2));
            let pair = pairs
                .iter()
                .filter_map(|p| try_add(p, &|df| bars.pair(df)))
                .max_by(|a, b| a.2.total_cmp(&b.2))
                .filter(|(add, f, _)| {
                    same_way(f)
                        && self.each_needed(&at, add, f, &bars)
                        && self.sharper_than_one_bend(&at, add, f, &cands)
                });
            let best = single
                .into_iter()
                .chain(pair)
                .max_by(|a, b| a.2.total_cmp(&b.2));
            match best {
                Some((add, f, excess)) if excess >= 0.0 && add.len() == 1 => {
                    let any = |df: usize| bars.bar(df, false);
                    let (h, f, _) = self.refine(&at, &current, (add[0], f, excess), &any);
                    at.push(h);
                    current = f;
                }
                Some((add, f, excess)) if excess >= 0.0 => {
                    at.extend(add);
                    current = f;
                }
                _ => break,
            }
        }
        (at, Some(current))
    }

    /// Whether each hinge of `pair` (added together, the fit `with`) clears a
    /// boundary's bar on its own beside the other: a pair one of whose hinges
    /// the other makes redundant is a single hinge, which the single step
    /// weighs at its own bar.
    fn each_needed(&self, at: &[Hinge], pair: &[Hinge], with: &Fit, bars: &Bars) -> bool {
        pair.iter().all(|drop| {
            let rest: Vec<Hinge> = at
                .iter()
                .chain(pair.iter().filter(|h| *h != drop))
                .copied()
                .collect();
            self.fit(&rest)
                .and_then(|without| self.gain(&without, with))
                .is_some_and(|(gain, df)| gain >= bars.bar(df, true))
        })
    }

    /// Whether two hinges `pair` added together (the fit `with`) fit better
    /// than one gradual bend in their place ([`smooth::gradual_sse`], centred
    /// at any position tried from half the first's threads to twice the
    /// second's) by more than the 95% quantile of F(1, df) plus 2 for the
    /// pair's extra coefficient: a smooth curve's one wide bend (a logistic's
    /// shoulder) is otherwise fitted as two breaks at neighbouring boundaries.
    fn sharper_than_one_bend(
        &self,
        at: &[Hinge],
        pair: &[Hinge],
        with: &Fit,
        cands: &[Hinge],
    ) -> bool {
        let Some((var, df)) = self.variance(with) else {
            return false;
        };
        let (lo, hi) = (pair[0].t.min(pair[1].t), pair[0].t.max(pair[1].t));
        let others: Vec<f64> = at.iter().map(|h| h.t).collect();
        let gradual = cands
            .iter()
            .map(|h| h.t)
            .filter(|t| *t >= lo / LOCAL_SPAN && *t <= hi * LOCAL_SPAN)
            .filter_map(|t| smooth::gradual_sse(with.family, &others, t, &self.data()))
            .min_by(f64::total_cmp);
        gradual.is_some_and(|g| (g - with.sse) / var > t_quantile(df).powi(2) + 2.0)
    }

    /// The selected hinge `chosen` (with its excess over its bar) moved within
    /// its interval or the one before where it clears `bar` (the bar for any
    /// position, plus [`OFF_GRID`]) by more than it cleared its own: a hinge at
    /// a boundary keeps the advantage its lower bar gave it, as in the
    /// selection.
    fn refine(
        &self,
        at: &[Hinge],
        current: &Fit,
        chosen: (Hinge, Fit, f64),
        bar: &dyn Fn(usize) -> f64,
    ) -> (Hinge, Fit, f64) {
        let j = chosen.0.j;
        let free = |k: usize| self.admissible(k) && !at.iter().any(|h| h.j == k);
        let spots = [j.checked_sub(1).filter(|k| free(*k)), Some(j)];
        spots
            .into_iter()
            .flatten()
            .flat_map(|k| REFINE_AT.map(|f| self.hinge(k, f)))
            .filter_map(|h| {
                let f = self.fit(&[at, &[h]].concat())?;
                let (gain, df) = self.gain(current, &f)?;
                let excess = gain - bar(df) - OFF_GRID;
                (excess > chosen.2).then_some((h, f, excess))
            })
            .max_by(|a, b| a.2.total_cmp(&b.2))
            .unwrap_or(chosen)
    }

    /// How much `with` lowers the penalised error (chi-square + 2k) of `without`,
    /// and the error's degrees of freedom.
    pub(super) fn gain(&self, without: &Fit, with: &Fit) -> Option<(f64, usize)> {
        let (var, df) = self.variance(with)?;
        let pen = |f: &Fit| f.sse / var + 2.0 * f.k() as f64;
        Some((pen(without) - pen(with), df))
    }

    /// Where hinge `at[i]` of the selected model (`family`) may lie: every
    /// admissible interval, at its point and halfway to the next (and the hinge's
    /// own position), whose fit of that family (with the other hinges) is within
    /// the 95% quantile of F(1, df) of the best. The hinge to claim is the
    /// machine boundary's own point nearest the best among that set and the
    /// boundaries within [`LOCAL`] points of the best that the points do not
    /// reject at [`BOUNDARY_KEPT`] (99%), if any (the span then includes it); the set
    /// is localised when its positions lie within [`LOCAL`] points of the best
    /// or within a ratio of [`LOCAL_SPAN`] in threads; and the break is sharp when a gradual bend in its place
    /// ([`smooth::gradual_sse`], as gradual as a smooth family's sharpest) fits
    /// worse than the best sharp one by more than that quantile, wherever it is
    /// centred near the set.
    pub(super) fn localise(&self, at: &[Hinge], i: usize, family: Family) -> Option<Place> {
        let others: Vec<Hinge> = at
            .iter()
            .enumerate()
            .filter(|(k, _)| *k != i)
            .map(|(_, h)| *h)
            .collect();
        let other_t: Vec<f64> = others.iter().map(|h| h.t).collect();
        let fit_at = |h: Hinge| {
            let t: Vec<f64> = other_t.iter().copied().chain([h.t]).collect();
            smooth::fit(family, &t, &self.data())
        };
        let profile: Vec<(Hinge, f64)> = (0..self.n())
            .filter(|j| self.admissible(*j) && !others.iter().any(|h| h.j == *j))
            .flat_map(|j| TRY_AT.map(|f| self.hinge(j, f)))
            .chain([at[i]])
            .filter_map(|h| Some((h, fit_at(h)?.sse)))
            .collect();
        let &(best, min) = profile.iter().min_by(|a, b| a.1.total_cmp(&b.1))?;
        let (var, df) = self.variance(&fit_at(best)?)?;
        let q = t_quantile(df).powi(2);
        let set: Vec<Hinge> = profile
            .iter()
            .filter(|(_, e)| e - min <= q * var)
            .map(|(h, _)| *h)
            .collect();
        let (lo, hi) = set
            .iter()
            .fold((best.t, best.t), |(l, h), p| (l.min(p.t), h.max(p.t)));
        let gradual = profile
            .iter()
            .map(|(h, _)| h.t)
            .filter(|t| *t >= lo / LOCAL_SPAN && *t <= hi * LOCAL_SPAN)
            .filter_map(|t| smooth::gradual_sse(family, &other_t, t, &self.data()))
            .min_by(f64::total_cmp);
        let distance = |h: &Hinge| (h.t / best.t).ln().abs();
        // A machine boundary is where a knee is expected before any point is
        // measured: one near the best place stays plausible unless the points
        // reject it at 99% (a break one noisy point moved past its boundary).
        let kept = f1_quantile(BOUNDARY_KEPT, df) * var;
        let claim = profile
            .iter()
            .filter(|(h, e)| {
                let near = h.j.abs_diff(best.j) <= LOCAL;
                e - min <= q * var || (near && e - min <= kept)
            })
            .map(|(h, _)| *h)
            .filter(|h| self.on_grid(h) && self.at_boundary(h.j))
            .min_by(|a, b| distance(a).total_cmp(&distance(b)))
            .unwrap_or(best);
        let kept_from = (!set.contains(&claim)).then_some(best.t);
        let (lo, hi) = (lo.min(claim.t), hi.max(claim.t));
        Some(Place {
            claim,
            claim_at_boundary: self.on_grid(&claim) && self.at_boundary(claim.j),
            span: (lo, hi),
            localised: set.iter().all(|h| h.j.abs_diff(best.j) <= LOCAL)
                || (lo > 0.0 && hi / lo <= LOCAL_SPAN),
            sharpness: gradual.map(|g| (g - min) / var),
            bar: q,
            kept_from,
        })
    }
}

/// Whether the last two hinges of `f` (a pair just added) change the slope the
/// same way: two opposite breaks at neighbouring boundaries are a bump, the
/// shape a smooth family's misfit takes (a peak a little off), not two limits
/// reached one after the other.
fn same_way(f: &Fit) -> bool {
    let c = &f.coef;
    c.len() >= 2 && c[c.len() - 1].signum() == c[c.len() - 2].signum()
}

/// Where a selected hinge may lie, and how much sharper than a gradual bend it is.
pub(super) struct Place {
    /// The hinge to claim.
    pub claim: Hinge,
    /// Whether the claim is a machine boundary's own point.
    pub claim_at_boundary: bool,
    /// The lowest and highest plausible positions (threads).
    pub span: (f64, f64),
    /// Whether its plausible positions lie within [`LOCAL`] points of the best
    /// or within [`LOCAL_SPAN`].
    pub localised: bool,
    /// How much worse the best gradual bend fits, in units of the pure error
    /// variance (a chi-square of one degree of freedom under "as gradual").
    pub sharpness: Option<f64>,
    /// The 95% quantile it must exceed.
    pub bar: f64,
    /// Where the points alone place the break best, when the claim is a
    /// boundary they reject at 95% but not at 99% ([`BOUNDARY_KEPT`]).
    pub kept_from: Option<f64>,
}

impl Place {
    /// Whether the points show a break sharper than a gradual bend.
    pub fn sharp(&self) -> bool {
        self.sharpness.is_some_and(|s| s > self.bar)
    }
}

/// The bars a hinge's gain must clear (see `Ctx::select`), per error df (with
/// one repetition the df is the fit's own), computed once each: half of
/// [`ALPHA`] among every position tried, a quarter among the machine's
/// boundaries one at a time and a quarter among pairs of adjacent boundaries
/// (a chi-square of two degrees of freedom, less their penalty of 4).
struct Bars {
    share: f64,
    boundaries: usize,
    positions: usize,
    pairs: usize,
    cache: std::cell::RefCell<std::collections::BTreeMap<usize, (f64, f64, f64)>>,
}

impl Bars {
    fn new(boundaries: usize, positions: usize, pairs: usize) -> Self {
        Bars {
            share: if boundaries > 0 { 2.0 } else { 1.0 },
            boundaries,
            positions,
            pairs,
            cache: Default::default(),
        }
    }

    fn bars(&self, df: usize) -> (f64, f64, f64) {
        *self.cache.borrow_mut().entry(df).or_insert_with(|| {
            let any = f1_quantile(ALPHA / self.share / self.positions.max(1) as f64, df);
            let split = if self.pairs > 0 { 4.0 } else { 2.0 };
            let boundary = f1_quantile(ALPHA / split / self.boundaries.max(1) as f64, df);
            let pair = 2.0 * f_quantile(ALPHA / 4.0 / self.pairs.max(1) as f64, 2, df);
            (any - 2.0, boundary.min(any) - 2.0, pair - 4.0)
        })
    }

    fn bar(&self, df: usize, at_boundary: bool) -> f64 {
        let (any, boundary, _) = self.bars(df);
        if at_boundary {
            boundary
        } else {
            any
        }
    }

    /// The bar two hinges at adjacent boundaries, added together, must clear.
    fn pair(&self, df: usize) -> f64 {
        self.bars(df).2
    }
}
