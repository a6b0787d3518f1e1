//! The findings of one curve: efficiency, knees, the thread counts that would
//! decide what the measured ones cannot, the chosen model and the rejected fits,
//! a special one-thread baseline, and bandwidth saturation.

use scalescope_topo::Topology;

use super::{efficiency_finding, knee_finding, saturation};
use crate::ceiling::Ceiling;
use crate::consistency::{command, Premise};
use crate::finding::{
    Boundary, Confidence, Evidence, EvidenceItem, Finding, FindingKind, Severity,
};
use crate::{Basis, Curve};

pub(crate) fn curve_findings(
    topo: &Topology,
    c: &Curve,
    basis: &Basis,
    ceilings: &[Ceiling],
    one_per_core: bool,
) -> Vec<Finding> {
    let name = c.label();
    let Some(last) = c.points.last() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if c.points.len() >= 2 {
        out.push(efficiency_finding(c, &name, last));
    }
    out.extend(c.knees.iter().map(|k| {
        let mut f = knee_finding(k, &name, one_per_core);
        // Had the slope before the knee continued to the last point.
        let span = last.threads.saturating_sub(k.knee.threads) as f64;
        f.speedup_lost = Some((k.knee.slope_before - k.knee.slope_after) * span);
        f
    }));
    out.extend(not_enough_points(c, &name));
    out.extend(model_findings(c, &name, basis));
    out.extend(baseline_finding(c, &name));
    out.extend(saturation(topo, c, &name, basis, ceilings));
    out.extend(outlier_findings(c, &name, basis));
    if !ceilings.is_empty() {
        let saturated_at = out
            .iter()
            .filter(|f| f.kind == FindingKind::BandwidthSaturation)
            .find_map(|f| f.after_threads);
        for f in out.iter_mut().filter(|f| unexplained_slowdown(c, f)) {
            let knee = f.after_threads.unwrap_or(usize::MAX);
            f.check = Some(ceiling_check(topo, c, basis, ceilings, saturated_at, knee));
            f.premises = vec![
                command(&["mem", "stream"]),
                command(&["analyze", "--ceilings"]),
            ];
            if !matches!(basis, Basis::Metric { name, .. } if crate::ceiling::is_bandwidth(name)) {
                f.premises
                    .push(command(&["analyze", "--basis", "metric:NAME"]));
            }
        }
    }
    for f in &mut out {
        f.curve = Some(name.clone());
    }
    out
}

/// One finding per run far from its point's others: named, with its factor.
fn outlier_findings(c: &Curve, name: &str, basis: &Basis) -> Vec<Finding> {
    c.points
        .iter()
        .flat_map(|p| p.outliers.iter().map(move |o| (p, o)))
        .map(|(p, o)| {
            let mut f = Finding::new(
                FindingKind::MeasurementQuality,
                Severity::Notice,
                format!(
                    "{name}: run {} at {} threads is an outlier: {:.2}x the point's median performance ({})",
                    o.rep, p.threads, o.perf_over_median, basis.label()
                ),
            );
            f.after_threads = Some(p.threads);
            f.evidence.push(Evidence::note(format!(
                "{} runs at {} threads; the point's median and intervals are kept (a median resists one run); {}",
                p.runs,
                p.threads,
                outlier_causes(o)
            )));
            f.check = Some(format!("repeat the point at {} threads: a second wild run would make it the program's, not the machine's", p.threads));
            f
        })
        .collect()
}

/// What may have made a run stand out, held to what the sampler saw on its CPUs:
/// for a slow run, other processes and the hypervisor are named only where its
/// evidence does not rule them out; a fast run is not blamed on interference.
fn outlier_causes(o: &crate::Outlier) -> String {
    if o.perf_over_median >= 1.0 {
        return "a run this much faster than the others: either they were held back (their own evidence says by what) or it had an advantage (a warm cache, a quieter moment)".into();
    }
    let mut held = Vec::new();
    let mut ruled_out = Vec::new();
    match o.others_share {
        Some(x) if x < crate::quality::QUIET_SHARE => ruled_out.push(format!(
            "other work used {:.1}% of its CPUs beyond its own",
            x * 100.0
        )),
        _ => held.push("another process"),
    }
    match o.steal_share {
        Some(x) if x < crate::evidence_findings::STEAL_SHARE => ruled_out.push(format!(
            "the hypervisor took {:.1}% of its CPU time",
            x * 100.0
        )),
        _ => held.push("the hypervisor"),
    }
    held.extend(["frequency", "a cold page cache", "the program itself"]);
    let mut text = format!(
        "a run this much slower than the others was held back by something: {}",
        held.join(", ")
    );
    if !ruled_out.is_empty() {
        text += &format!(
            "; not by other work or the hypervisor as far as measured: while it ran, {}",
            ruled_out.join(" and ")
        );
    }
    text
}

/// A knee where scaling slows at no topology boundary: its generic check asks for
/// the bandwidth ceilings, which a sweep analysed with ceilings already has.
fn unexplained_slowdown(c: &Curve, f: &Finding) -> bool {
    f.kind == FindingKind::Knee
        && f.boundary == Boundary::None
        && c.knees.iter().any(|k| {
            Some(k.knee.threads) == f.after_threads && k.knee.bend == crate::knee::Bend::Flattens
        })
}

/// What the measured ceilings say about a slowdown after `knee` threads at no
/// topology boundary, where the curve reached 85% of its ceiling at `saturated_at`
/// threads (if it did).
fn ceiling_check(
    topo: &Topology,
    c: &Curve,
    basis: &Basis,
    ceilings: &[Ceiling],
    saturated_at: Option<usize>,
    knee: usize,
) -> String {
    let bandwidth =
        matches!(basis, Basis::Metric { name, .. } if crate::ceiling::is_bandwidth(name));
    if !bandwidth {
        return "the ceilings beside this sweep are in GB/s and this curve's figure is not: analyse with --basis metric:NAME, NAME a GB/s figure of the program, to compare them".into();
    }
    // The bend lies between the knee's point and the next measured one: only the
    // points up to that one can explain it.
    let end = c
        .points
        .iter()
        .map(|p| p.threads)
        .find(|t| *t > knee)
        .unwrap_or(knee);
    if let Some(s) = saturated_at.filter(|s| *s <= end) {
        return format!("the curve reached 85% of the bandwidth ceiling measured beside the sweep at {s} threads, by the end of this bend (the bandwidth finding)");
    }
    let compared: Vec<usize> = c
        .points
        .iter()
        .filter(|p| p.threads <= end)
        .filter(|p| {
            p.usage
                .is_some_and(|u| crate::ceiling::for_nodes(topo, ceilings, u.numa_nodes).is_some())
        })
        .map(|p| p.threads)
        .collect();
    if compared.is_empty() {
        "no ceiling was measured on as many NUMA nodes as these points use: measure `scalescope mem stream` with their placement and analyse with --ceilings".into()
    } else {
        format!(
            "at {} threads this curve stays under 85% of the bandwidth ceiling measured on as many NUMA nodes, so that ceiling does not explain the bend",
            list(&compared)
        )
    }
}

/// Thread counts as `1, 2, 4`.
fn list(threads: &[usize]) -> String {
    threads
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Thread counts that would decide: a point on each side of every boundary inside
/// the measured range, and inside every undecided interval. A boundary at the last
/// point measured (every core busy at the top of a machine without SMT) has no
/// point after it, so no count below it could show a bend there: none is asked for.
fn missing_counts(c: &Curve) -> Vec<usize> {
    let measured: Vec<usize> = c.points.iter().map(|p| p.threads).collect();
    let (Some(&first), Some(&last)) = (measured.first(), measured.last()) else {
        return Vec::new();
    };
    let mut want: Vec<usize> = c
        .events
        .iter()
        .filter(|e| e.threads > first && e.threads < last)
        .flat_map(|e| [e.threads - 1, e.threads])
        .collect();
    for u in &c.undecided {
        let inside: Vec<usize> = c
            .events
            .iter()
            .map(|e| e.threads)
            .filter(|t| *t > u.threads && *t < u.next_threads)
            .collect();
        if inside.is_empty() {
            want.push(u.threads + (u.next_threads - u.threads) / 2);
        } else {
            want.extend(inside);
        }
    }
    want.retain(|t| !measured.contains(t));
    want.sort_unstable();
    want.dedup();
    want
}

fn not_enough_points(c: &Curve, name: &str) -> Option<Finding> {
    // A curve over nodes has points only at whole node counts: no count between
    // two of them can be measured.
    if c.ranks_per_node.is_some() {
        return None;
    }
    let want = missing_counts(c);
    if want.is_empty() {
        return None;
    }
    let list: Vec<String> = want.iter().map(usize::to_string).collect();
    let mut f = Finding::new(
        FindingKind::NotEnoughPoints,
        Severity::Info,
        format!("{name}: not enough points: measure at {}", list.join(", ")),
    );
    f.confidence = Confidence::stated("measured");
    for u in &c.undecided {
        f.evidence.push(Evidence::note(format!(
            "the slope changes between {} and {} threads, but a side has fewer than 3 points: a line through two points cannot show a bend",
            u.threads, u.next_threads
        )));
    }
    for e in &c.events {
        if want.contains(&e.threads) || want.contains(&(e.threads.saturating_sub(1))) {
            f.evidence.push(Evidence::new(
                format!("{} (needs a point on each side)", e.description),
                EvidenceItem::TopologyEvent {
                    threads: e.threads,
                    event: format!("{:?}", e.kind),
                },
            ));
        }
    }
    f.advice = Some(format!(
        "sweep with --threads boundaries, or add {}",
        list.join(",")
    ));
    f.premises = vec![
        command(&["sweep", "--threads", "boundaries"]),
        command(&["sweep", "--threads", &list.join(",")]),
    ];
    Some(f)
}

fn fit_evidence(c: &Curve) -> Vec<Evidence> {
    c.models
        .candidates
        .iter()
        .map(|m| {
            let params: Vec<String> = m
                .params
                .iter()
                .map(|(k, v)| format!("{k} {v:.4}"))
                .collect();
            Evidence::new(
                format!(
                    "{}: {} (R² {:.3}, AICc {}){}{}",
                    m.model,
                    params.join(", "),
                    m.r_squared,
                    m.aicc.map_or("n/a".into(), |a| format!("{a:.1}")),
                    if c.models.chosen.as_deref() == Some(m.model.as_str()) {
                        " [chosen]"
                    } else {
                        ""
                    },
                    m.rejected
                        .as_ref()
                        .map_or(String::new(), |r| format!(" [rejected: {r}]"))
                ),
                EvidenceItem::Fit {
                    model: m.model.clone(),
                    params: m.params.clone(),
                    aicc: m.aicc,
                    r_squared: m.r_squared,
                },
            )
        })
        .collect()
}

fn model_findings(c: &Curve, name: &str, basis: &Basis) -> Vec<Finding> {
    if c.models.candidates.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let chosen = c.models.chosen.clone();
    let none = if c
        .models
        .candidates
        .iter()
        .any(|m| m.rejected.is_none() && m.aicc.is_none())
    {
        format!(
            "none chosen: {} points are too few to weigh one model against another (AICc needs more points than parameters plus one)",
            c.points.len()
        )
    } else {
        "none fits without contradicting the data".to_string()
    };
    let mut f = Finding::new(
        FindingKind::Model,
        Severity::Info,
        format!(
            "{name}: scaling model ({}): {}",
            basis.label(),
            chosen.as_deref().unwrap_or(&none)
        ),
    );
    f.evidence = fit_evidence(c);
    f.premises = limit_premises(c, name, chosen.as_deref());
    let last = c.points.last().map_or(0.0, |p| p.threads as f64);
    if let (Some("usl"), Some(u)) = (chosen.as_deref(), &c.usl) {
        if let Some(pk) = u.peak_threads.filter(|pk| *pk < last) {
            f.severity = Severity::Warning;
            f.advice = Some(format!("the measured curve falls after its peak near {pk:.0} threads: more threads make it slower; coherency traffic (shared writes, false sharing, lock hand-offs) is what the USL's kappa models"));
        }
    }
    out.push(f);
    for m in c.models.candidates.iter().filter(|m| m.rejected.is_some()) {
        let mut r = Finding::new(
            FindingKind::RejectedFit,
            Severity::Info,
            format!(
                "{name}: the {} fit is rejected: {}",
                m.model,
                m.rejected.as_deref().unwrap_or("")
            ),
        );
        r.confidence = Confidence::stated("measured");
        r.premises = rejection_premises(c, name, &m.model);
        out.push(r);
    }
    out
}

/// The chosen model's limit stays at or above every measured speedup.
fn limit_premises(c: &Curve, name: &str, chosen: Option<&str>) -> Vec<Premise> {
    let limit = match chosen {
        Some("amdahl") => c.amdahl.as_ref().and_then(|a| a.max_speedup),
        Some("usl") => c.usl.as_ref().and_then(|u| u.peak_speedup),
        _ => None,
    };
    limit
        .map(|l| Premise::LimitAtLeast {
            curve: name.to_string(),
            model: chosen.unwrap_or_default().to_string(),
            limit: l,
        })
        .into_iter()
        .collect()
}

/// What a USL rejected for its early peak rests on: the last point is the fastest
/// measured (or within one standard deviation of it, as its text then says).
fn rejection_premises(c: &Curve, name: &str, model: &str) -> Vec<Premise> {
    let (Some(u), Some(last)) = (c.usl.as_ref(), c.points.last()) else {
        return Vec::new();
    };
    let early = u.peak_threads.is_some_and(|pk| pk < last.threads as f64);
    let best = c.points.iter().map(|p| p.speedup).fold(0.0, f64::max);
    let above = u.peak_speedup.is_some_and(|s| s >= best);
    if model != "usl" || !early || !above {
        return Vec::new();
    }
    vec![Premise::FastestAt {
        curve: name.to_string(),
        threads: last.threads,
        within_sd: last.speedup < best,
    }]
}

/// A falling Karp-Flatt fraction: the parallel runs pay a fixed factor over the
/// one-thread run, which a serial fraction cannot do.
fn baseline_finding(c: &Curve, name: &str) -> Option<Finding> {
    let kf: Vec<(usize, f64)> = c
        .points
        .iter()
        .filter_map(|p| p.karp_flatt.map(|e| (p.threads, e)))
        .collect();
    let (&(t0, e0), &(t1, e1)) = (kf.first()?, kf.last()?);
    let falling = kf.windows(2).filter(|w| w[1].1 < w[0].1).count();
    if kf.len() < 3 || e0 < 0.1 || e1 > e0 / 2.0 || falling * 4 < (kf.len() - 1) * 3 {
        return None;
    }
    // A special baseline is one fixed factor on every parallel point; a p/S that
    // keeps growing is a serial fraction's, whatever Karp-Flatt does early on.
    let fixed = Premise::FixedFactor {
        curve: name.to_string(),
    };
    if !crate::consistency::holds(&fixed, std::slice::from_ref(c)) {
        return None;
    }
    let factors: Vec<f64> = c
        .points
        .iter()
        .filter(|p| p.threads > 1)
        .map(|p| p.threads as f64 / p.speedup)
        .collect();
    let mut sorted = factors.clone();
    sorted.sort_by(f64::total_cmp);
    let factor = crate::stats::median(&sorted);
    let mut f = Finding::new(
        FindingKind::Baseline,
        Severity::Notice,
        format!(
            "{name}: the one-thread baseline is special: Karp-Flatt falls from {e0:.2} at {t0} threads to {e1:.2} at {t1}"
        ),
    );
    f.boundary = Boundary::Baseline;
    f.after_threads = Some(1);
    let reps = c.points.iter().map(|p| p.runs).min().unwrap_or(0);
    f.confidence =
        Confidence::from_probability(if falling == kf.len() - 1 { 0.95 } else { 0.8 }, reps);
    f.evidence.push(Evidence::new(
        format!(
            "Karp-Flatt serial fraction by threads: {}",
            kf.iter()
                .map(|(t, e)| format!("{t}: {e:.3}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        EvidenceItem::KarpFlatt { values: kf.clone() },
    ));
    f.evidence.push(Evidence::note(format!(
        "a serial fraction keeps Karp-Flatt flat or rising; a falling one means the parallel runs pay a fixed factor (median p/S = {factor:.2}) over the one-thread run"
    )));
    f.advice = Some("speedups against this baseline understate scaling between parallel runs and overstate the parallel overhead: compare against the parallel code at its smallest thread count (`scalescope sweep --baseline threads=2`)".into());
    f.premises = vec![fixed, command(&["sweep", "--baseline", "threads=2"])];
    f.check = Some("run the parallel code path on one thread (if the program has one) and compare with this baseline: a special sequential path explains the gap".into());
    Some(f)
}
