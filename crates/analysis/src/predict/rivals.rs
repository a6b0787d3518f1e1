//! Rival explanations of one calibration. Which mechanisms explain a sweep is
//! itself uncertain: on one NUMA node a serial part and a per-node memory time give
//! the same curve (Amdahl's law, exactly), a synchronisation cost bends it almost
//! alike, and they part ways only on more nodes or threads. So every subset of the
//! parameters the sweep determines is fitted and scored by AICc (small-sample
//! Akaike, on the log residuals). A fit is a rival when it is within
//! [`RIVAL_AICC`] of the best (Burnham and Anderson's "substantial support") or,
//! where the repetitions measure the noise, when lack of fit does not reject it
//! and no simpler form of it passes too: AICc ranks shapes inside the measured
//! range, but an explanation whose misfit is within the noise of the runs cannot
//! be excluded by them. Each rival is weighted by its Akaike weight exp(-delta/2).
//! A prediction's central value is the weighted mean of the rivals' log
//! predictions (model averaging) and its band the hull of their bands, so it
//! covers each explanation the data cannot rule out.
//!
//! A fit the data refute is no rival: one whose curve falls before the last point
//! of a placement when that point is the fastest measured (the rule `analyze`
//! applies to the USL). With too few points for AICc (a fit needs two points more
//! than its values), the rivals are the choices of as many parameters as the
//! points allow that fit them equally well (to 1e-6): with two thread counts, any
//! one mechanism passes through both.

use scalescope_place::Strategy;
use scalescope_topo::Topology;

use super::calibrate::{self, aicc, CalPoint, Coverage, Fitted, Free, PARAMS};
use super::model::{layout, time, Layout, Params, Scales};

/// How close (in AICc) a fit must come to the best to be a rival.
pub const RIVAL_AICC: f64 = 2.0;

/// The lack-of-fit probability at or above which the points cannot reject a fit.
pub const LACK_OF_FIT_P: f64 = 0.05;

/// One explanation kept: the mechanisms it frees, its fit, its score and weight,
/// and its bootstrap draws (filled by the calibration).
#[derive(Debug, Clone, PartialEq)]
pub struct Rival {
    pub free: Free,
    pub fit: Fitted,
    /// AICc (None where the points are too few to score it).
    pub aicc: Option<f64>,
    /// AICc above the best rival's (0 for the best, and without scores).
    pub delta: f64,
    /// Akaike weight among the rivals (they sum to 1).
    pub weight: f64,
    pub draws: Vec<Fitted>,
}

/// The measured counts of one placement and the layouts between its last two.
struct Top {
    /// The last point's layout, and every count from the one before it up to it
    /// (exclusive).
    last: Layout,
    before: Vec<Layout>,
}

/// The placements whose last measured point is their fastest, each with the
/// layouts a fit must not rank above it.
fn tops(topo: &Topology, points: &[CalPoint]) -> Vec<Top> {
    let mut placements: Vec<&Strategy> = points.iter().map(|p| &p.placement).collect();
    placements.sort_by_key(|s| s.to_string());
    placements.dedup();
    placements
        .into_iter()
        .filter_map(|pl| {
            let mut mine: Vec<&CalPoint> = points.iter().filter(|p| &p.placement == pl).collect();
            mine.sort_by_key(|p| p.layout.threads);
            let (last, rest) = mine.split_last()?;
            let lower = rest.last()?;
            let fastest = rest.iter().all(|p| p.median() <= last.median());
            let before = (lower.layout.threads..last.layout.threads)
                .map(|t| layout(topo, pl, t))
                .collect::<Option<Vec<_>>>()?;
            fastest.then(|| Top {
                last: last.layout.clone(),
                before,
            })
        })
        .collect()
}

/// Why the data refute `p`: it puts a placement's peak before its last point,
/// which is its fastest measured.
fn refuted(tops: &[Top], p: &Params, s: &Scales) -> bool {
    tops.iter().any(|t| {
        let at_last = 1.0 / time(p, s, &t.last);
        t.before
            .iter()
            .any(|l| 1.0 / time(p, s, l) > at_last * (1.0 + 1e-9))
    })
}

/// How many of the best fits of each size the larger ones are grown from.
const BEAM: usize = 3;

/// `g` is `f` with one value fewer (its structure, if it has one, `f`'s).
fn parent(g: &Free, f: &Free) -> bool {
    let (a, b) = (g.flags(), f.flags());
    let inside = (0..PARAMS).all(|i| !a[i] || b[i]);
    inside && g.count() + 1 == f.count()
}

/// The scorable subsets of the determinable parameters fitted, smallest first:
/// every one of up to two values, then each larger size grown from the [`BEAM`]
/// best (by AICc) of the size below (a beam search: the subsets number in the
/// hundreds on a multi-node SMT sweep). Each is fitted from the priors and from
/// its best parent (a fit with more freedom never fits worse than one it
/// contains).
fn fit_subsets(points: &[CalPoint], c: &Coverage, start: Params) -> Vec<(Free, Fitted)> {
    let n = c.distinct_points;
    let all: Vec<Free> = Free::determinable(c)
        .subsets()
        .into_iter()
        .filter(|f| f.count() > 0 && aicc(n, f, 1.0).is_some())
        .collect();
    let largest = all.iter().map(Free::count).max().unwrap_or(0);
    let mut done: Vec<(Free, Fitted)> = Vec::new();
    for size in 1..=largest {
        let mut below: Vec<&(Free, Fitted)> =
            done.iter().filter(|(g, _)| g.count() + 1 == size).collect();
        below.sort_by(|a, b| a.1.sse.total_cmp(&b.1.sse));
        let beam: Vec<Free> = below.iter().take(BEAM).map(|(g, _)| *g).collect();
        let level: Vec<Free> = all
            .iter()
            .filter(|f| f.count() == size)
            .filter(|f| size <= 2 || beam.iter().any(|g| parent(g, f)))
            .copied()
            .collect();
        let mut fitted = Vec::new();
        for f in level {
            let warm = done
                .iter()
                .filter(|(g, _)| parent(g, &f))
                .min_by(|a, b| a.1.sse.total_cmp(&b.1.sse))
                .map(|(_, fit)| fit.params);
            let mut fit = calibrate::fit_points(points, &f, start);
            if let Some(w) = warm {
                let again = calibrate::fit_points(points, &f, w);
                if again.sse < fit.sse {
                    fit = again;
                }
            }
            fitted.push((f, fit));
        }
        done.extend(fitted);
    }
    done
}

/// The replicate (pure-error) variance of the log performances and its degrees
/// of freedom, where every point has two or more repetitions.
fn pure_error(points: &[CalPoint]) -> Option<(f64, usize)> {
    if points.iter().any(|p| p.perfs.len() < 2) {
        return None;
    }
    let (mut ss, mut df) = (0.0, 0usize);
    for p in points {
        let logs: Vec<f64> = p.perfs.iter().map(|v| v.ln()).collect();
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        ss += logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>();
        df += logs.len() - 1;
    }
    (ss > 0.0).then(|| (ss / df as f64, df))
}

/// The lack-of-fit probability of `fit` (k values with the scale) against the
/// replicate variance: F = (sum n_i (mean_i - fitted_i)^2 / (m - k)) / s^2 on the
/// log scale, with (m - k, df) degrees of freedom.
fn lack_of_fit_p(points: &[CalPoint], fit: &Fitted, k: usize, pure: (f64, usize)) -> Option<f64> {
    let d1 = points.len().checked_sub(k).filter(|d| *d > 0)?;
    let ss: f64 = points
        .iter()
        .map(|p| {
            let n = p.perfs.len() as f64;
            let mean = p.perfs.iter().map(|v| v.ln()).sum::<f64>() / n;
            let fitted = fit.scale.ln() - time(&fit.params, &Scales::default(), &p.layout).ln();
            n * (mean - fitted).powi(2)
        })
        .sum();
    let f = ss / d1 as f64 / pure.0;
    Some(crate::stats::f_upper_tail(f, d1 as f64, pure.1 as f64))
}

/// `g` is a simpler form of `f`: its values a proper part of `f`'s, and the same
/// memory structure where it has a memory limit.
fn simpler(g: &Free, f: &Free) -> bool {
    let (a, b) = (g.flags(), f.flags());
    let part = (0..PARAMS - 1).all(|i| !a[i] || b[i]) && g.count() < f.count();
    let limit = g.bandwidth || g.mem_time;
    part && (!limit || g.home_memory == f.home_memory)
}

/// The rivals among every scorable subset of the determinable parameters, best
/// first; empty when no subset can be scored. A fit is kept within [`RIVAL_AICC`]
/// of the best or, where the repetitions measure the noise, when lack of fit does
/// not reject it (p >= [`LACK_OF_FIT_P`]) and no simpler form of it passes too.
fn scored(points: &[CalPoint], c: &Coverage, start: Params, tops: &[Top]) -> Vec<Rival> {
    let n = c.distinct_points;
    // The scales every fit is made with.
    let s = Scales::default();
    let mut fits: Vec<(Free, Fitted, f64)> = fit_subsets(points, c, start)
        .into_iter()
        .filter(|(_, fit)| !refuted(tops, &fit.params, &s))
        .filter_map(|(f, fit)| Some((f, fit, aicc(n, &f, fit.sse)?)))
        .collect();
    fits.sort_by(|a, b| a.2.total_cmp(&b.2));
    let Some(best) = fits.first().map(|f| f.2) else {
        return Vec::new();
    };
    let adequate: Vec<bool> = match pure_error(points) {
        Some(pure) => fits
            .iter()
            .map(|(f, fit, _)| {
                lack_of_fit_p(points, fit, f.count() + 1, pure).is_some_and(|p| p >= LACK_OF_FIT_P)
            })
            .collect(),
        None => vec![false; fits.len()],
    };
    let minimal = |i: usize| {
        !fits
            .iter()
            .zip(&adequate)
            .any(|((g, _, _), ok)| *ok && simpler(g, &fits[i].0))
    };
    let keep: Vec<bool> = (0..fits.len())
        .map(|i| fits[i].2 - best <= RIVAL_AICC || (adequate[i] && minimal(i)))
        .collect();
    fits.into_iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|((free, fit, a), _)| Rival {
            free,
            fit,
            aicc: Some(a),
            delta: a - best,
            weight: (-(a - best) / 2.0).exp(),
            draws: Vec::new(),
        })
        .collect()
}

/// With too few points to score: the choices of as many parameters as the points
/// allow (every one where the data refute none), those that fit equally well.
fn unscored(points: &[CalPoint], c: &Coverage, start: Params, tops: &[Top]) -> Vec<Rival> {
    // The scales every fit is made with.
    let s = Scales::default();
    let fits: Vec<(Free, Fitted)> = Free::choices(c)
        .into_iter()
        .map(|f| (f, calibrate::fit_points(points, &f, start)))
        .collect();
    let kept: Vec<&(Free, Fitted)> = fits
        .iter()
        .filter(|(_, fit)| !refuted(tops, &fit.params, &s))
        .collect();
    let pool = if kept.is_empty() {
        fits.iter().collect()
    } else {
        kept
    };
    let least = pool.iter().map(|f| f.1.sse).fold(f64::INFINITY, f64::min);
    pool.into_iter()
        .filter(|f| f.1.sse <= least * (1.0 + 1e-6) + 1e-12)
        .map(|(free, fit)| Rival {
            free: *free,
            fit: *fit,
            aicc: None,
            delta: 0.0,
            weight: 1.0,
            draws: Vec::new(),
        })
        .collect()
}

/// The rival explanations of `points` measured on `topo`, best first, their
/// weights summing to 1. Never empty: with nothing else, the fit of no mechanism.
pub fn rivals(topo: &Topology, points: &[CalPoint], c: &Coverage, start: Params) -> Vec<Rival> {
    let tops = tops(topo, points);
    let mut out = scored(points, c, start, &tops);
    if out.is_empty() {
        out = unscored(points, c, start, &tops);
    }
    if out.is_empty() {
        out.push(Rival {
            free: Free::NONE,
            fit: calibrate::fit_points(points, &Free::NONE, start),
            aicc: None,
            delta: 0.0,
            weight: 1.0,
            draws: Vec::new(),
        });
    }
    let total: f64 = out.iter().map(|r| r.weight).sum();
    for r in &mut out {
        r.weight /= total;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use scalescope_topo::Source;

    fn points(topo: &Topology, speedups: &[(usize, f64)]) -> Vec<CalPoint> {
        speedups
            .iter()
            .map(|&(t, s)| CalPoint {
                placement: Strategy::CoresFirst,
                layout: layout(topo, &Strategy::CoresFirst, t).unwrap_or_else(|| panic!("{t}")),
                perfs: vec![s],
                wall_secs: vec![1.0 / s],
            })
            .collect()
    }

    /// Amdahl's law on one node: the serial part and the per-node memory time fit
    /// it exactly alike, so both are rivals of equal weight.
    #[test]
    fn a_serial_part_on_one_node_has_the_memory_time_as_its_rival() {
        let topo = Source::Synthetic("package:4 numa:1 core:8".into())
            .load()
            .unwrap_or_else(|e| panic!("{e}"));
        let amdahl = |p: f64| 1.0 / (0.08 + 0.92 / p);
        let noise = [1.0, 1.02, 0.985, 1.01, 0.99, 1.015];
        let pts: Vec<(usize, f64)> = [1usize, 2, 3, 4, 6, 8]
            .iter()
            .zip(noise)
            .map(|(&t, e)| (t, amdahl(t as f64) * e))
            .collect();
        let pts = points(&topo, &pts);
        let cov = calibrate::coverage(&pts);
        let r = rivals(&topo, &pts, &cov, super::super::START);
        let has = |f: fn(&Free) -> bool| r.iter().find(|x| f(&x.free));
        let serial = has(|f| f.serial && f.count() == 1).unwrap_or_else(|| panic!("{r:#?}"));
        let mem = has(|f| f.mem_time && f.count() == 1).unwrap_or_else(|| panic!("{r:#?}"));
        assert!((serial.weight - mem.weight).abs() < 0.02, "{r:#?}");
        assert!((r.iter().map(|x| x.weight).sum::<f64>() - 1.0).abs() < 1e-12);
    }

    /// A synchronisation cost whose fitted peak falls before the last point, the
    /// fastest measured, is refuted by the data and is no rival.
    #[test]
    fn a_fit_that_peaks_before_the_fastest_point_is_no_rival() {
        let topo = Source::Synthetic("package:1 numa:1 core:16".into())
            .load()
            .unwrap_or_else(|e| panic!("{e}"));
        let pts = points(&topo, &[(1, 1.0), (2, 1.9), (4, 3.5), (8, 5.6), (16, 7.0)]);
        let tops = tops(&topo, &pts);
        let usl = Params {
            sync: 0.0047,
            ..Params::NEUTRAL
        };
        assert!(refuted(&tops, &usl, &Scales::default()));
        let amdahl = Params {
            serial: 0.08,
            ..Params::NEUTRAL
        };
        assert!(!refuted(&tops, &amdahl, &Scales::default()));
    }
}
