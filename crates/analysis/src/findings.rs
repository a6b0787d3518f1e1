//! Findings in words and typed evidence: each curve's efficiency, knees, undecided
//! intervals, models and rejected fits, a special one-thread baseline, bandwidth
//! saturation against a measured ceiling; the hyper-threading yield like with like;
//! significant placement differences; the measurement's own warnings; and what this
//! machine cannot show. A phrase is printed only when its premise was measured:
//! mechanisms that were not measured are named as hypotheses with the check that
//! would confirm or refute them.

use scalescope_topo::Topology;

use crate::ceiling::{self, Ceiling};
use crate::consistency::{command, Premise};
use crate::curve::boundary_of;
use crate::events::EventKind;
use crate::finding::{
    Boundary, Confidence, Evidence, EvidenceItem, Finding, FindingKind, Severity,
};
use crate::predict::implied::MechanismFit;
use crate::quality::Quality;
use crate::{AttributedKnee, Basis, Curve, CurvePoint, PlacementComparison, SmtYield};

mod curves;
mod unmeasured;

pub(crate) use curves::curve_findings;

/// What the findings are made from.
pub(crate) struct Inputs<'a> {
    pub topo: &'a Topology,
    pub basis: &'a Basis,
    pub curves: &'a [Curve],
    pub smt: &'a SmtYield,
    pub cmp: &'a [PlacementComparison],
    pub quality: &'a Quality,
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn ci_text(ci: Option<(f64, f64)>) -> String {
    ci.map_or(" (no interval: one repetition)".into(), |(l, h)| {
        format!(" [95% interval {l:.2}..{h:.2}]")
    })
}

pub(crate) fn findings(inp: &Inputs, ceilings: &[Ceiling]) -> Vec<Finding> {
    let mut out: Vec<Finding> = inp
        .quality
        .warnings
        .iter()
        .map(|w| {
            let mut f = Finding::new(
                FindingKind::MeasurementQuality,
                if w.kind.is_fact() {
                    Severity::Info
                } else {
                    Severity::Warning
                },
                w.text.clone(),
            );
            f.evidence.push(Evidence::new(
                w.text.clone(),
                EvidenceItem::Header {
                    field: w.kind.as_str().into(),
                    value: w.text.clone(),
                },
            ));
            f
        })
        .collect();
    let one_per_core = crate::consistency::holds(&Premise::NoFasterWithSmt, inp.curves);
    for c in inp.curves {
        out.extend(curve_findings(
            inp.topo,
            c,
            inp.basis,
            ceilings,
            one_per_core,
        ));
    }
    out.extend(smt_finding(inp.smt, inp.basis, one_per_core));
    out.extend(
        inp.cmp
            .iter()
            .filter(|c| c.significant && c.ratio > 1.05)
            .filter(|c| c.ci95.is_none_or(|(lo, _)| lo > 1.0))
            .map(|c| placement_finding(c, inp.curves)),
    );
    if inp.topo.cpu_numa_nodes() < 2 && inp.topo.packages.len() < 2 {
        let mut f = Finding::new(
            FindingKind::MachineLimit,
            Severity::Info,
            "One package and one NUMA node: no socket or NUMA knee is possible on this machine",
        );
        f.evidence.push(Evidence::note(inp.topo.summary()));
        out.push(f);
    }
    for f in &mut out {
        if lowered_kind(f.kind) {
            for w in inp.quality.lowering() {
                f.confidence.lower(&w.text);
            }
        }
    }
    out
}

/// Findings whose confidence rests on timings and so on the measurement's quality.
fn lowered_kind(k: FindingKind) -> bool {
    matches!(
        k,
        FindingKind::Knee
            | FindingKind::Placement
            | FindingKind::SmtYield
            | FindingKind::Baseline
            | FindingKind::BandwidthSaturation
    )
}

/// The hyper-threading yield like with like; the advice to run one thread per core
/// only where no point sharing cores was faster (`one_per_core`).
fn smt_finding(smt: &SmtYield, basis: &Basis, one_per_core: bool) -> Option<Finding> {
    let Some(p) = smt.pairs.last() else {
        let why = smt.unavailable.as_ref()?;
        let mut f = Finding::new(
            FindingKind::SmtYield,
            Severity::Info,
            "Hyper-threading yield not measured",
        );
        f.boundary = Boundary::Smt;
        f.evidence.push(Evidence::note(why.clone()));
        return Some(f);
    };
    let (lo, hi) = p.ci95.unwrap_or((p.ratio, p.ratio));
    let verdict = if lo > 1.0 {
        "the second thread per core adds throughput"
    } else if hi < 1.0 {
        "the second thread per core makes it slower"
    } else {
        "no difference beyond the spread of the runs"
    };
    let mut f = Finding::new(
        FindingKind::SmtYield,
        if hi < 1.0 {
            Severity::Notice
        } else {
            Severity::Info
        },
        format!(
            "Hyper-threading yield {:.2}x on the same {} cores: {verdict}",
            p.ratio, p.cores
        ),
    );
    f.boundary = Boundary::Smt;
    f.after_threads = Some(p.cores);
    let decided = lo > 1.0 || hi < 1.0;
    f.confidence = Confidence::from_probability(if decided { 0.95 } else { 0.5 }, p.runs);
    f.evidence.push(Evidence::new(
        format!(
            "cores-first at {} threads {:.4}, smt-pairs at {} threads on the same cores {:.4} ({}){}",
            p.cores,
            p.one_per_core,
            2 * p.cores,
            p.two_per_core,
            basis.label(),
            ci_text(p.ci95)
        ),
        EvidenceItem::Comparison {
            a: format!("cores-first/{}", p.cores),
            b: format!("smt-pairs/{}", 2 * p.cores),
            ratio: p.ratio,
            ci95: p.ci95,
            p_value: None,
        },
    ));
    if hi < 1.0 && one_per_core {
        f.advice =
            Some("run one thread per physical core (cores-first up to the core count)".into());
        f.premises.push(Premise::NoFasterWithSmt);
    }
    Some(f)
}

fn placement_finding(c: &PlacementComparison, curves: &[Curve]) -> Finding {
    let p = c.p_value.unwrap_or(f64::NAN);
    let mut f = Finding::new(
        FindingKind::Placement,
        Severity::Notice,
        format!(
            "{} is {:.2}x faster than {} at {} threads",
            c.best, c.ratio, c.worst, c.threads
        ),
    );
    f.after_threads = Some(c.threads);
    f.confidence = Confidence::from_probability(1.0 - p, c.runs);
    if !c.interleaved {
        f.confidence.lower("the runs of the two placements did not alternate in time: drift over the sweep can look like a difference (interleave the run order)");
    }
    f.evidence.push(Evidence::new(
        format!(
            "{} threads, {}: {} {:.4} vs {} {:.4} ({}){}",
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
            },
            ci_text(c.ci95)
        ),
        EvidenceItem::Comparison {
            a: c.worst.clone(),
            b: c.best.clone(),
            ratio: c.ratio,
            ci95: c.ci95,
            p_value: c.p_value,
        },
    ));
    let usage_of = |name: &str| {
        curves
            .iter()
            .find(|k| k.placement.to_string() == name && k.mem == c.mem)
            .and_then(|k| k.points.iter().find(|pt| pt.threads == c.threads))
            .and_then(|pt| pt.usage)
    };
    let (b, w) = (usage_of(&c.best), usage_of(&c.worst));
    f.advice = Some(placement_advice(b, w));
    f.boundary = match (b, w) {
        (Some(b), Some(w)) if b.smt_shared != w.smt_shared => Boundary::Smt,
        (Some(b), Some(w)) if b.packages != w.packages => Boundary::Package,
        (Some(b), Some(w)) if b.numa_nodes != w.numa_nodes => Boundary::Numa,
        (Some(b), Some(w)) if b.l3_domains != w.l3_domains => Boundary::L3,
        _ => Boundary::None,
    };
    f
}

/// What the winning placement does differently (measured), and what would explain
/// it (not measured here).
fn placement_advice(
    best: Option<crate::events::Usage>,
    worst: Option<crate::events::Usage>,
) -> String {
    match (best, worst) {
        (Some(b), Some(w)) if !b.smt_shared && w.smt_shared => {
            "the slower placement puts threads on SMT siblings of one core: give each thread its own physical core".into()
        }
        (Some(b), Some(w)) if b.smt_shared && !w.smt_shared => {
            "sharing cores wins here; data shared in one core's L1/L2 would explain it (not measured)".into()
        }
        (Some(b), Some(w)) if b.packages > w.packages || b.numa_nodes > w.numa_nodes => {
            "spreading over more packages or NUMA nodes wins: more memory controllers or caches are in use; `mem stream` per placement would show whether bandwidth is the reason".into()
        }
        (Some(b), Some(w)) if b.packages < w.packages || b.l3_domains < w.l3_domains => {
            "packing threads into fewer packages or L3 domains wins; data shared between threads would explain it (not measured)".into()
        }
        _ => "the placement matters here; prefer the faster one for production runs".into(),
    }
}

/// A knee's boundary, title, advice and check; `one_per_core` false where a point
/// sharing cores was the fastest measured (no advice against SMT then).
fn knee_words(
    k: &AttributedKnee,
    name: &str,
    one_per_core: bool,
) -> (String, Option<String>, Option<String>) {
    if let Some(w) = unmeasured::words(k, name) {
        return w;
    }
    let t = k.knee.threads;
    let flat = k.knee.bend == crate::knee::Bend::Flattens;
    match (&k.cause, flat) {
        (Some(e), true) if e.kind == EventKind::SmtSharing && !one_per_core => (
            format!("{name}: scaling slows after {t} threads: {}", e.description),
            Some("threads sharing cores still gain: a point with two threads per core is the fastest measured, so keep them; each added thread gains less than a core".into()),
            Some(check_for(&e.kind)),
        ),
        (Some(e), true) => (
            format!("{name}: scaling slows after {t} threads: {}", e.description),
            Some(advice_for(&e.kind)),
            Some(check_for(&e.kind)),
        ),
        (Some(e), false) => (
            format!("{name}: scaling speeds up after {t} threads: {}", e.description),
            None,
            Some(check_for(&e.kind)),
        ),
        (None, true) => (
            format!("{name}: scaling slows after {t} threads with no topology boundary there"),
            Some("look for software limits: a lock, a serial phase, load imbalance, or memory bandwidth saturating".into()),
            Some("measure `scalescope mem stream` at these thread counts and analyse with --ceilings: a throughput at the ceiling confirms bandwidth".into()),
        ),
        (None, false) => (
            format!("{name}: scaling speeds up after {t} threads with no topology boundary there"),
            None,
            Some("not explained by anything measured here; a working set that starts to fit in the caches, or a slow baseline, would do this: compare the per-thread data size with the cache sizes (`scalescope topo`)".into()),
        ),
    }
}

fn knee_finding(k: &AttributedKnee, name: &str, one_per_core: bool) -> Finding {
    let (title, advice, check) = knee_words(k, name, one_per_core);
    let flat = k.knee.bend == crate::knee::Bend::Flattens;
    let mut f = Finding::new(
        FindingKind::Knee,
        if flat {
            Severity::Warning
        } else {
            Severity::Notice
        },
        title,
    );
    f.after_threads = Some(k.knee.threads);
    f.boundary = k
        .cause
        .as_ref()
        .map_or(Boundary::None, |e| boundary_of(&e.kind));
    f.confidence = k.knee.confidence.clone();
    f.advice = advice;
    f.check = check;
    f.premises = knee_premises(k, one_per_core);
    let kn = &k.knee;
    f.evidence.push(Evidence::new(
        format!(
            "marginal speedup per added thread {:.2}{} up to {} threads, {:.2}{} after (between {} and {} threads)",
            kn.slope_before, ci_text(kn.slope_before_ci95), kn.threads, kn.slope_after, ci_text(kn.slope_after_ci95), kn.threads, kn.next_threads
        ),
        EvidenceItem::Slope { from_threads: kn.threads, to_threads: kn.next_threads, slope: kn.slope_after, ci95: kn.slope_after_ci95 },
    ));
    f.evidence.push(Evidence::new(
        format!(
            "slope change {:+.0}%{}; confidence {}{}",
            kn.change * 100.0,
            kn.change_ci95
                .map_or(" (no interval: one repetition)".into(), |(l, h)| format!(
                    " [95% interval {:+.0}%..{:+.0}%]",
                    l * 100.0,
                    h * 100.0
                )),
            kn.confidence.label,
            kn.confidence.value.map_or(String::new(), |v| format!(
                " (bootstrap probability {v:.2})"
            ))
        ),
        EvidenceItem::SlopeChange {
            change: kn.change,
            ci95: kn.change_ci95,
        },
    ));
    if let Some(e) = &k.cause {
        f.evidence.push(Evidence::new(
            e.description.clone(),
            EvidenceItem::TopologyEvent {
                threads: e.threads,
                event: format!("{:?}", e.kind),
            },
        ));
    }
    if let Some(by) = &k.implied_by {
        implied_evidence(&mut f, kn, by);
    }
    f
}

/// A knee implied by the whole-curve mechanism model: the parameters it rests on
/// and the tests the model passed, and what would decide it locally.
fn implied_evidence(f: &mut Finding, kn: &crate::knee::Knee, by: &MechanismFit) {
    f.title
        .push_str(" (implied by the mechanism model fitted to the whole curve)");
    f.advice = Some("where the added threads land changes at this count (a new node, SMT sharing, or siblings on another node); the bend follows from the mechanisms the model measured elsewhere on the curve (the parameters below), not from a local test".into());
    let params: Vec<String> = by
        .params
        .iter()
        .map(|p| {
            format!(
                "{} {:.3} [{:.3}, {:.3}]",
                p.name, p.value, p.ci95.0, p.ci95.1
            )
        })
        .collect();
    f.evidence.push(Evidence::new(
        format!(
            "implied by the mechanism model fitted to every point: {}; lack of fit F = {:.2} ({}, {} df), p = {:.2}; AICc {:.1} against {} {:.1}",
            params.join(", "),
            by.lack_of_fit_f,
            by.lack_of_fit_df.0,
            by.lack_of_fit_df.1,
            by.lack_of_fit_p,
            by.aicc,
            by.beaten,
            by.beaten_aicc
        ),
        EvidenceItem::Fit {
            model: "mechanism".into(),
            params: by.params.iter().map(|p| (p.name.clone(), p.value)).collect(),
            aicc: Some(by.aicc),
            r_squared: by.r_squared,
        },
    ));
    f.check = Some(format!(
        "the bend rests on parameters measured elsewhere on the curve; more repetitions at {} and {} and a point between them would let the local test confirm or refute it",
        kn.threads, kn.next_threads
    ));
}

/// What a knee's advice and check rest on: one thread per core where it advises
/// so, and the commands its check names.
fn knee_premises(k: &AttributedKnee, one_per_core: bool) -> Vec<Premise> {
    if let Some(p) = unmeasured::premises(k) {
        return p;
    }
    let flat = k.knee.bend == crate::knee::Bend::Flattens;
    match k.cause.as_ref().map(|e| &e.kind) {
        Some(EventKind::SmtSharing) if flat && one_per_core => vec![Premise::NoFasterWithSmt],
        Some(EventKind::NewPackage | EventKind::NewNumaNode) => vec![
            command(&["sweep", "--mem", "interleave"]),
            command(&["mem", "matrix"]),
        ],
        None if flat => vec![
            command(&["mem", "stream"]),
            command(&["analyze", "--ceilings"]),
        ],
        None => vec![command(&["topo"])],
        _ => Vec::new(),
    }
}

/// Advice whose premise is the measured topology event itself.
fn advice_for(kind: &EventKind) -> String {
    match kind {
        EventKind::NewPackage | EventKind::NewNumaNode => "threads on the new node may reach memory on the first one, or the first node's bandwidth may be exhausted: compare memory policies (--mem interleave, first-touch) and placements across this boundary".into(),
        EventKind::NewL3 => "threads now span L3 domains: data they share crosses between caches; keep communicating threads in one L3 (compact) or partition the data".into(),
        EventKind::SmtSharing => "SMT siblings share one core's execution units and caches: for compute- or cache-bound code, run one thread per physical core".into(),
        EventKind::AllCoresBusy => "every core is busy: more threads can only share cores".into(),
        EventKind::Oversubscribed => "threads outnumber hardware threads: they time-share PUs".into(),
        EventKind::NewNode => "ranks on the new node reach the others over the interconnect: what stayed in one node's memory now crosses the network; fewer nodes with more ranks each keep more of it inside".into(),
    }
}

/// The measurement that would confirm or refute the event as the cause.
fn check_for(kind: &EventKind) -> String {
    match kind {
        EventKind::NewPackage | EventKind::NewNumaNode => "sweep this boundary with --mem interleave and with scatter: a curve that no longer bends points at remote memory or one node's bandwidth; `mem matrix` measures both".into(),
        EventKind::NewL3 => "compare compact and scatter at the same thread counts".into(),
        EventKind::SmtSharing => "the like-with-like yield: cores-first at N against smt-pairs at 2N on the same cores".into(),
        EventKind::AllCoresBusy | EventKind::Oversubscribed => "a point on each side of the boundary with several repetitions".into(),
        EventKind::NewNode => "the same total ranks on fewer nodes (more ranks per node), and each node's evidence side by side: a curve that bends only where a node is added points at the interconnect".into(),
    }
}

/// The efficiency of the last point against the baseline.
fn efficiency_finding(c: &Curve, name: &str, last: &CurvePoint) -> Finding {
    let eff = last.efficiency;
    let sev = if eff >= 0.8 {
        Severity::Info
    } else if eff >= 0.5 {
        Severity::Notice
    } else {
        Severity::Warning
    };
    let mut f = Finding::new(
        FindingKind::Efficiency,
        sev,
        format!(
            "{name}: {:.2}x at {} threads against {} ({} parallel efficiency)",
            last.speedup,
            last.threads,
            c.baseline_threads,
            pct(eff)
        ),
    );
    f.curve = Some(name.to_string());
    f.after_threads = Some(last.threads);
    // The distance to ideal speedup at the last point.
    f.speedup_lost = Some(last.threads as f64 / c.baseline_threads.max(1) as f64 - last.speedup);
    f.evidence = c
        .points
        .iter()
        .map(|p| {
            Evidence::new(
                format!(
                    "{} threads: speedup {:.2}{}{}, efficiency {}",
                    p.threads,
                    p.speedup,
                    // One run has no spread to state (not a spread of 0).
                    if p.runs >= 2 {
                        format!(" ± {:.2}", p.speedup_sd)
                    } else {
                        String::new()
                    },
                    if p.threads == c.baseline_threads {
                        String::new()
                    } else {
                        ci_text(p.speedup_ci95)
                    },
                    pct(p.efficiency)
                ),
                EvidenceItem::Speedup {
                    threads: p.threads,
                    speedup: p.speedup,
                    ci95: p.speedup_ci95,
                    runs: p.runs,
                },
            )
        })
        .collect();
    f
}

/// What to do about a saturated bandwidth: spread over more nodes where the machine
/// has any left, else move fewer bytes (a one-node machine has nowhere to spread).
fn saturation_words(used: usize, machine: usize) -> (&'static str, &'static str) {
    if used < machine {
        (
            "more threads on these nodes cannot add bandwidth: spread the threads (and the data) over more NUMA nodes",
            "a point using one more node should raise the throughput by about one node's ceiling",
        )
    } else {
        (
            "these threads already use every NUMA node of the machine, so its memory bandwidth is the limit: move fewer bytes per unit of work (blocking, narrower types, fewer passes), or run fewer threads for the same throughput",
            "more threads should add no throughput past this point; a kernel that moves fewer bytes should run faster at every thread count",
        )
    }
}

/// The NUMA nodes holding a PU this process may run on (a cpuset can leave nodes
/// of the machine out of reach).
fn usable_nodes(topo: &Topology) -> usize {
    topo.pus
        .iter()
        .filter(|p| p.allowed)
        .filter_map(|p| p.numa_node)
        .collect::<std::collections::BTreeSet<_>>()
        .len()
}

/// Bandwidth saturation: the first point whose GB/s reach 85% of the ceiling
/// measured on as many NUMA nodes.
fn saturation(
    topo: &Topology,
    c: &Curve,
    name: &str,
    basis: &Basis,
    ceilings: &[Ceiling],
) -> Option<Finding> {
    let Basis::Metric { name: metric, .. } = basis else {
        return None;
    };
    if !ceiling::is_bandwidth(metric) || ceilings.is_empty() {
        return None;
    }
    let (p, cl, nodes) = c.points.iter().find_map(|p| {
        let nodes = p.usage?.numa_nodes;
        let cl = ceiling::for_nodes(topo, ceilings, nodes)?;
        (p.perf >= 0.85 * cl.for_metric(metric).0).then_some((p, cl, nodes))
    })?;
    let (gbs, kernel) = cl.for_metric(metric);
    let mut f = Finding::new(
        FindingKind::BandwidthSaturation,
        Severity::Warning,
        format!(
            "{name}: memory bandwidth saturates at {} threads: {:.1} GB/s is {} of the {kernel} ceiling, {gbs:.1} GB/s, measured on {nodes} NUMA node(s){}",
            p.threads,
            p.perf,
            pct(p.perf / gbs),
            if p.perf > gbs {
                " (above it: the ceiling understates this machine, or part of these bytes came from caches)"
            } else {
                ""
            }
        ),
    );
    f.curve = Some(name.to_string());
    f.after_threads = Some(p.threads);
    f.boundary = Boundary::Bandwidth;
    f.confidence = Confidence::from_probability(0.95, p.runs);
    f.evidence.push(Evidence::new(
        format!(
            "`mem stream` {kernel} ceiling {gbs:.1} GB/s from {} ({} threads, {})",
            cl.source, cl.threads, cl.placement
        ),
        EvidenceItem::Ceiling {
            source: cl.source.clone(),
            ceiling: gbs,
            reached: p.perf,
            unit: "GB/s".into(),
        },
    ));
    let (advice, check) = saturation_words(nodes, usable_nodes(topo));
    f.advice = Some(advice.into());
    f.check = Some(check.into());
    Some(f)
}
