//! The synchronisation study's cost model and its claims. T(N) = A N + B (the time
//! of one critical section of N updates: A per update, B to start and commit) is
//! fitted by least squares over every repetition of every batch size; A and B get
//! 95% intervals from the residual variance (Student's t). A fit is rejected, not
//! printed as a model, when it explains too little (R^2 below [`MIN_R_SQUARED`]) or
//! when B is negative beyond its interval (no critical section starts in negative
//! time). The study predicts B_atomic < B_htm (an atomic needs no transaction to
//! begin and commit) and A_atomic > A_htm (inside a transaction an update is a plain
//! store); each prediction is tested on the intervals and reported as holding,
//! contradicted, undecided, or unavailable here with the reason.

use super::bench::{Curve, Op};

/// Least R^2 for T(N) = A N + B to be taken as the mechanism's cost model.
pub const MIN_R_SQUARED: f64 = 0.9;

// The fit and the claims are the shared model's types (the report reads them).
use scalescope_model::detail::show_ns as show;
pub use scalescope_model::detail::{Claim, LinearFit};

/// Student's t at 0.975 for `df` degrees of freedom.
fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    T.get(df.wrapping_sub(1)).copied().unwrap_or(1.96)
}

/// Fits T(N) = A N + B to (N, nanoseconds per section) observations.
pub fn fit(obs: &[(f64, f64)]) -> LinearFit {
    let n = obs.len() as f64;
    let mx = obs.iter().map(|o| o.0).sum::<f64>() / n;
    let my = obs.iter().map(|o| o.1).sum::<f64>() / n;
    let sxx: f64 = obs.iter().map(|o| (o.0 - mx).powi(2)).sum();
    let sxy: f64 = obs.iter().map(|o| (o.0 - mx) * (o.1 - my)).sum();
    let a = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let b = my - a * mx;
    let ss_tot: f64 = obs.iter().map(|o| (o.1 - my).powi(2)).sum();
    let ss_res: f64 = obs.iter().map(|o| (o.1 - a * o.0 - b).powi(2)).sum();
    let r_squared = if ss_tot > 0.0 {
        1.0 - ss_res / ss_tot
    } else {
        1.0
    };
    let (a_ci95, b_ci95) = if obs.len() > 2 && sxx > 0.0 {
        let s2 = ss_res / (n - 2.0);
        let t = t975(obs.len() - 2);
        let (se_a, se_b) = ((s2 / sxx).sqrt(), (s2 * (1.0 / n + mx * mx / sxx)).sqrt());
        (
            Some((a - t * se_a, a + t * se_a)),
            Some((b - t * se_b, b + t * se_b)),
        )
    } else {
        (None, None)
    };
    let rejected = if r_squared < MIN_R_SQUARED {
        Some(format!(
            "R² {r_squared:.3} is below {MIN_R_SQUARED}: the time of a section is not linear in its updates here"
        ))
    } else if b_ci95.is_some_and(|(_, hi)| hi < 0.0) {
        Some(format!(
            "B = {b:.1} ns is negative beyond its interval: the line does not describe a start-up cost"
        ))
    } else {
        None
    };
    LinearFit {
        a_ns: a,
        b_ns: b,
        a_ci95,
        b_ci95,
        r_squared,
        observations: obs.len(),
        rejected,
    }
}

/// `lower` < `higher` on their intervals: holds when the intervals are apart in
/// that order, contradicted when apart the other way, undecided when they overlap.
fn compare(lower: Option<(f64, f64)>, higher: Option<(f64, f64)>) -> &'static str {
    match (lower, higher) {
        (Some(l), Some(h)) if l.1 < h.0 => "holds",
        (Some(l), Some(h)) if h.1 < l.0 => "contradicted",
        _ => "undecided",
    }
}

/// The predicted inequalities for each kind of update; `htm_missing` says why RTM
/// was not measured, if it was not.
pub fn claims(curves: &[Curve], htm_missing: Option<&str>) -> Vec<Claim> {
    let mut out = Vec::new();
    for op in [Op::MarkVisited, Op::Increment] {
        let find = |s: &str| curves.iter().find(|c| c.op == op && c.sync == s);
        for (claim, b_side) in [("B_atomic < B_htm", true), ("A_atomic > A_htm", false)] {
            let (verdict, detail) = match (find("atomic"), find("htm")) {
                (_, None) => (
                    format!(
                        "unavailable here: {}",
                        htm_missing.unwrap_or("htm was not measured")
                    ),
                    String::new(),
                ),
                (None, _) => (
                    "unavailable here: atomics were not measured".into(),
                    String::new(),
                ),
                (Some(at), Some(htm)) => {
                    let (fa, fh) = (&at.fit, &htm.fit);
                    let rejected = fa.rejected.is_some() || fh.rejected.is_some();
                    let verdict = if rejected {
                        "undecided"
                    } else if b_side {
                        compare(fa.b_ci95, fh.b_ci95)
                    } else {
                        compare(fh.a_ci95, fa.a_ci95)
                    };
                    let (x, y) = if b_side {
                        (
                            show("B_atomic", fa.b_ns, fa.b_ci95),
                            show("B_htm", fh.b_ns, fh.b_ci95),
                        )
                    } else {
                        (
                            show("A_atomic", fa.a_ns, fa.a_ci95),
                            show("A_htm", fh.a_ns, fh.a_ci95),
                        )
                    };
                    let why = if rejected { " (a fit is rejected)" } else { "" };
                    (verdict.to_string(), format!("{x}, {y}{why}"))
                }
            };
            out.push(Claim {
                claim: claim.into(),
                op,
                verdict,
                detail,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::bench::Point;

    fn curve(sync: &str, a: f64, b: f64, noise: f64) -> Curve {
        let obs: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0, 16.0]
            .iter()
            .flat_map(|&n| (0..3).map(move |r| (n, a * n + b + noise * (r as f64 - 1.0))))
            .collect();
        let f = fit(&obs);
        Curve {
            sync: sync.into(),
            op: Op::Increment,
            points: vec![Point {
                batch: 1,
                ns_per_section: a + b,
                ns_per_update: a + b,
                ns_per_section_reps: vec![a + b],
                aborts: 0,
            }],
            a_ns: f.a_ns,
            b_ns: f.b_ns,
            r_squared: f.r_squared,
            best_batch: 1,
            fit: f,
        }
    }

    #[test]
    fn intervals_cover_the_line_and_bad_fits_are_rejected() {
        let c = curve("atomic", 5.0, 10.0, 0.5);
        let (lo, hi) = c.fit.a_ci95.unwrap_or((f64::NAN, f64::NAN));
        assert!(
            lo < 5.0 && 5.0 < hi && c.fit.rejected.is_none(),
            "{:?}",
            c.fit
        );
        // Negative B beyond its interval.
        let neg = curve("atomic", 5.0, -40.0, 0.5);
        assert!(neg
            .fit
            .rejected
            .as_deref()
            .unwrap_or("")
            .contains("negative"));
        // No line at all: R^2 near zero.
        let flat = fit(&[
            (1.0, 10.0),
            (2.0, 30.0),
            (4.0, 5.0),
            (8.0, 28.0),
            (16.0, 12.0),
        ]);
        assert!(flat.rejected.as_deref().unwrap_or("").contains("R²"));
    }

    #[test]
    fn claims_are_tested_on_the_intervals_or_unavailable() {
        let cs = vec![curve("atomic", 8.0, 5.0, 0.3), curve("htm", 2.0, 60.0, 0.3)];
        let got = claims(&cs, None);
        let inc: Vec<_> = got.iter().filter(|c| c.op == Op::Increment).collect();
        assert_eq!(inc[0].verdict, "holds", "{inc:?}");
        assert_eq!(inc[1].verdict, "holds", "{inc:?}");
        let wrong = vec![curve("atomic", 1.0, 80.0, 0.3), curve("htm", 9.0, 5.0, 0.3)];
        let got = claims(&wrong, None);
        assert!(got
            .iter()
            .filter(|c| c.op == Op::Increment)
            .all(|c| c.verdict == "contradicted"));
        let none = claims(&cs[..1], Some("no RTM on this CPU"));
        assert!(none
            .iter()
            .all(|c| c.verdict == "unavailable here: no RTM on this CPU"));
    }
}
