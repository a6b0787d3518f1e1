//! Findings in words: each curve's efficiency, knees and scaling model, the
//! hyper-threading yield, significant placement differences, and what this machine
//! cannot show; each with its numbers and, where one follows, advice.

use scalescope_topo::Topology;

use crate::events::{EventKind, Usage};
use crate::{AttributedKnee, Basis, Curve, CurvePoint, Finding, PlacementComparison, SmtYield};

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

pub(crate) fn findings(
    topo: &Topology,
    basis: &Basis,
    curves: &[Curve],
    smt: &SmtYield,
    cmp: &[PlacementComparison],
) -> Vec<Finding> {
    let mut out: Vec<Finding> = curves
        .iter()
        .flat_map(|c| curve_findings(c, basis))
        .collect();
    out.extend(smt_finding(smt, basis));
    out.extend(
        cmp.iter()
            .filter(|c| c.significant && c.ratio > 1.05)
            .map(|c| placement_finding(c, curves)),
    );
    if topo.cpu_numa_nodes() < 2 && topo.packages.len() < 2 {
        out.push(Finding {
            severity: "info".into(),
            title:
                "One package and one NUMA node: no socket or NUMA knee is possible on this machine"
                    .into(),
            evidence: vec![topo.summary()],
            advice: None,
        });
    }
    out
}

fn smt_finding(smt: &SmtYield, basis: &Basis) -> Option<Finding> {
    if let Some(r) = smt.ratio {
        let good = r > 1.1;
        return Some(Finding {
            severity: if good { "info" } else { "notice" }.into(),
            title: format!(
                "Hyper-threading yield {r:.2}x: {}",
                if good {
                    "sharing cores still pays"
                } else {
                    "SMT siblings add little or hurt"
                }
            ),
            evidence: vec![format!(
                "best performance with threads sharing cores {:.4}, without {:.4} ({})",
                smt.best_with_smt.unwrap_or(f64::NAN),
                smt.best_without_smt.unwrap_or(f64::NAN),
                basis.label()
            )],
            advice: (!good).then(|| {
                "run one thread per physical core (cores-first up to the core count)".to_string()
            }),
        });
    }
    smt.unavailable.as_ref().map(|why| Finding {
        severity: "info".into(),
        title: "Hyper-threading yield not measured".into(),
        evidence: vec![why.clone()],
        advice: None,
    })
}

fn placement_finding(c: &PlacementComparison, curves: &[Curve]) -> Finding {
    let p = c.p_value.unwrap_or(f64::NAN);
    let evidence = vec![format!(
        "{} threads, {}: {} {:.4} vs {} {:.4} ({})",
        c.threads,
        c.mem,
        c.best,
        c.perf[&c.best],
        c.worst,
        c.perf[&c.worst],
        if p < 0.001 {
            "p < 0.001".to_string()
        } else {
            format!("p = {p:.3}")
        }
    )];
    let usage_of = |name: &str| {
        curves
            .iter()
            .find(|k| k.placement.to_string() == name && k.mem == c.mem)
            .and_then(|k| k.points.iter().find(|pt| pt.threads == c.threads))
            .and_then(|pt| pt.usage)
    };
    Finding {
        severity: "notice".into(),
        title: format!(
            "{} is {:.2}x faster than {} at {} threads",
            c.best, c.ratio, c.worst, c.threads
        ),
        evidence,
        advice: Some(placement_advice(usage_of(&c.best), usage_of(&c.worst))),
    }
}

/// What the winning placement does differently, in words.
fn placement_advice(best: Option<Usage>, worst: Option<Usage>) -> String {
    match (best, worst) {
        (Some(b), Some(w)) if !b.smt_shared && w.smt_shared => {
            "the slower placement puts threads on SMT siblings of one core: give each thread its own physical core".into()
        }
        (Some(b), Some(w)) if b.smt_shared && !w.smt_shared => {
            "sharing cores wins here: the threads share data that SMT siblings find in the same L1/L2".into()
        }
        (Some(b), Some(w)) if b.packages > w.packages || b.numa_nodes > w.numa_nodes => {
            "spreading over more packages or NUMA nodes wins: the program is bound by memory bandwidth or cache capacity per thread, so use every memory controller".into()
        }
        (Some(b), Some(w)) if b.packages < w.packages || b.l3_domains < w.l3_domains => {
            "packing threads wins: they share data, so keep them in one L3 and one package".into()
        }
        _ => "the placement matters here; prefer the faster one for production runs".into(),
    }
}

fn curve_findings(c: &Curve, basis: &Basis) -> Vec<Finding> {
    let name = format!("{} / {}", c.placement, c.mem);
    let Some(last) = c.points.last() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if c.points.len() >= 2 {
        out.push(efficiency_finding(c, &name, last));
    }
    out.extend(c.knees.iter().map(|k| knee_finding(k, &name)));
    out.extend(model_finding(c, &name, last, basis));
    out
}

fn efficiency_finding(c: &Curve, name: &str, last: &CurvePoint) -> Finding {
    let eff = last.efficiency;
    Finding {
        severity: if eff >= 0.8 {
            "info"
        } else if eff >= 0.5 {
            "notice"
        } else {
            "warning"
        }
        .into(),
        title: format!(
            "{name}: {:.2}x at {} threads against {} ({} parallel efficiency)",
            last.speedup,
            last.threads,
            c.baseline_threads,
            pct(eff)
        ),
        evidence: c
            .points
            .iter()
            .map(|p| {
                format!(
                    "{} threads: speedup {:.2} ± {:.2}, efficiency {}",
                    p.threads,
                    p.speedup,
                    p.speedup_sd,
                    pct(p.efficiency)
                )
            })
            .collect(),
        advice: None,
    }
}

fn knee_finding(k: &AttributedKnee, name: &str) -> Finding {
    let (title, advice) = match (&k.cause, k.knee.bend.as_str()) {
            (Some(e), "flattens") => (
                format!("{name}: scaling slows after {} threads: {}", k.knee.threads, e.description),
                Some(advice_for(&e.kind)),
            ),
            (Some(e), _) => (format!("{name}: scaling speeds up after {} threads: {}", k.knee.threads, e.description), None),
            (None, "flattens") => (
                format!("{name}: scaling slows after {} threads with no topology boundary there", k.knee.threads),
                Some("look for software limits: a lock, a serial phase, load imbalance, or memory bandwidth saturating (compare with `scalescope mem stream`)".into()),
            ),
            (None, _) => (format!("{name}: scaling speeds up after {} threads (superlinear: the working set starts to fit in the caches)", k.knee.threads), None),
        };
    Finding {
            severity: if k.knee.bend == "flattens" { "warning" } else { "notice" }.into(),
            title,
            evidence: vec![format!(
                "marginal speedup per added thread {:.2} up to {} threads, {:.2} after (between {} and {} threads; confidence {}, z = {:.1})",
                k.knee.slope_before, k.knee.threads, k.knee.slope_after, k.knee.threads, k.knee.next_threads, k.knee.confidence, k.knee.z
            )],
            advice,
        }
}

fn model_finding(c: &Curve, name: &str, last: &CurvePoint, basis: &Basis) -> Option<Finding> {
    let (Some(a), Some(u)) = (&c.amdahl, &c.usl) else {
        return None;
    };
    let mut ev = vec![
        format!(
            "Amdahl: serial fraction {:.4}, limit {} (R² {:.3})",
            a.serial_fraction,
            a.max_speedup
                .map(|m| format!("{m:.1}x"))
                .unwrap_or("none".into()),
            a.r_squared
        ),
        format!(
            "USL: contention σ {:.4}, coherency κ {:.6} (R² {:.3})",
            u.sigma, u.kappa, u.r_squared
        ),
    ];
    if let (Some(pt), Some(ps)) = (u.peak_threads, u.peak_speedup) {
        ev.push(format!(
            "USL predicts a peak of {ps:.1}x at {pt:.0} threads"
        ));
    }
    let kf: Vec<String> = c
        .points
        .iter()
        .filter_map(|p| p.karp_flatt.map(|e| format!("{}: {:.3}", p.threads, e)))
        .collect();
    if !kf.is_empty() {
        ev.push(format!(
            "Karp-Flatt serial fraction by threads: {}",
            kf.join(", ")
        ));
    }
    let retrograde = u.peak_threads.is_some_and(|p| p < last.threads as f64);
    Some(Finding {
            severity: if retrograde { "warning" } else { "info" }.into(),
            title: format!("{name}: scaling model ({})", basis.label()),
            evidence: ev,
            advice: retrograde.then(|| "beyond the USL peak more threads make it slower: coherency traffic (shared writes, false sharing, lock hand-offs) dominates".to_string()),
        })
}

fn advice_for(kind: &EventKind) -> String {
    match kind {
        EventKind::NewPackage | EventKind::NewNumaNode => "threads on the new package reach memory on the first one: let each thread first-touch the data it works on, try --mem interleave, and compare placements (scatter spreads bandwidth over both packages from the start)".into(),
        EventKind::NewL3 => "threads now span L3 domains: data they share crosses between caches; keep communicating threads in one L3 (compact) or partition the data".into(),
        EventKind::SmtSharing => "SMT siblings share one core's execution units and caches: for compute- or cache-bound code, run one thread per physical core".into(),
        EventKind::AllCoresBusy => "every core is busy: more threads can only share cores".into(),
        EventKind::Oversubscribed => "threads outnumber hardware threads: they time-share PUs".into(),
    }
}
