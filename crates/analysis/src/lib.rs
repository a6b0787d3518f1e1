//! Why the curve bends. Pure functions over a results header (which carries the
//! machine's topology) and its runs: per-placement speedup, efficiency and the
//! Karp-Flatt serial fraction; Amdahl and USL fits; knees, each attributed to the
//! topology event it coincides with under that placement; hyper-threading yield;
//! placement comparisons; and findings in words with their numbers. No I/O, no clock:
//! a sweep recorded on a 96-PU machine is analysed here exactly as it would be there.

pub mod compare;
pub mod events;
pub mod fit;
pub mod hops;
pub mod knee;
pub mod stats;
pub mod summary;
pub mod welch;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::stats::summarize;
use scalescope_place::{MemPolicy, Strategy};
use scalescope_results::store::{Header, RunRecord, RunStatus};
use scalescope_topo::Topology;

use events::{EventKind, TopologyEvent, Usage};
use fit::{AmdahlFit, UslFit};
use knee::Knee;

/// Version of the analysis JSON (docs/json.md).
pub const ANALYSIS_SCHEMA_VERSION: u32 = 1;

/// What "performance" means for a curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Basis {
    /// 1 / wall time.
    Time,
    /// A figure of merit; `higher_is_better` false means 1 / value.
    Metric {
        name: String,
        higher_is_better: bool,
    },
}

impl Basis {
    /// The header's first figure of merit if there is one, else time.
    pub fn default_for(header: &Header) -> Basis {
        match header.command.metrics.first() {
            Some(m) => Basis::Metric {
                name: m.name.clone(),
                higher_is_better: m.higher_is_better,
            },
            None => Basis::Time,
        }
    }

    /// `time`, `metric:NAME` (its direction taken from the header when it names
    /// the metric), or the header's default when `text` is `None`.
    ///
    /// # Errors
    /// A message naming the text when it is neither form.
    pub fn parse(text: Option<&str>, header: &Header) -> Result<Basis, String> {
        match text {
            None => Ok(Basis::default_for(header)),
            Some("time") => Ok(Basis::Time),
            Some(t) => match t.strip_prefix("metric:") {
                Some(name) if !name.is_empty() => Ok(Basis::Metric {
                    name: name.to_string(),
                    higher_is_better: header
                        .command
                        .metrics
                        .iter()
                        .find(|m| m.name == name)
                        .is_none_or(|m| m.higher_is_better),
                }),
                _ => Err(format!("basis `{t}`: expected `time` or `metric:NAME`")),
            },
        }
    }

    fn perf(&self, r: &RunRecord) -> Option<f64> {
        let v = match self {
            Basis::Time => 1.0 / r.wall_secs,
            Basis::Metric {
                name,
                higher_is_better: true,
            } => *r.metrics.get(name)?,
            Basis::Metric {
                name,
                higher_is_better: false,
            } => 1.0 / *r.metrics.get(name)?,
        };
        (v.is_finite() && v > 0.0).then_some(v)
    }

    pub fn label(&self) -> String {
        match self {
            Basis::Time => "wall time".into(),
            Basis::Metric { name, .. } => format!("figure of merit `{name}`"),
        }
    }
}

/// One measured thread count of a curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    pub threads: usize,
    pub runs: usize,
    /// Median performance (1/s for time, the metric otherwise) and its standard error.
    pub perf: f64,
    pub perf_se: f64,
    pub time_median_secs: Option<f64>,
    pub time_ci95_secs: Option<(f64, f64)>,
    pub metric_median: Option<f64>,
    /// Against the baseline (1 thread, or the smallest count measured).
    pub speedup: f64,
    pub speedup_sd: f64,
    pub efficiency: f64,
    /// Karp-Flatt experimentally determined serial fraction (needs a 1-thread baseline).
    pub karp_flatt: Option<f64>,
    pub usage: Option<Usage>,
}

/// A knee and what it coincides with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttributedKnee {
    #[serde(flatten)]
    pub knee: Knee,
    /// The topology event that happens between `threads` and `next_threads`.
    pub cause: Option<TopologyEvent>,
    /// `coincides` (inside the interval) or `none`.
    pub attribution: String,
}

/// Speedup against thread count for one placement and memory policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    pub placement: Strategy,
    pub mem: MemPolicy,
    pub baseline_threads: usize,
    pub points: Vec<CurvePoint>,
    pub amdahl: Option<AmdahlFit>,
    pub usl: Option<UslFit>,
    pub knees: Vec<AttributedKnee>,
    pub events: Vec<TopologyEvent>,
}

/// Best with SMT sharing over best without.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmtYield {
    pub best_with_smt: Option<f64>,
    pub best_without_smt: Option<f64>,
    pub ratio: Option<f64>,
    /// Why there is no ratio, when there is none.
    pub unavailable: Option<String>,
}

/// Placements compared at one thread count and memory policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacementComparison {
    pub threads: usize,
    pub mem: MemPolicy,
    /// Median performance per placement.
    pub perf: BTreeMap<String, f64>,
    pub best: String,
    pub worst: String,
    pub ratio: f64,
    /// Welch's t-test on the runs of best and worst, p < 0.05.
    pub significant: bool,
    pub p_value: Option<f64>,
}

/// One thing the analysis concludes, with the numbers behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// `info`, `notice` or `warning`.
    pub severity: String,
    pub title: String,
    pub evidence: Vec<String>,
    pub advice: Option<String>,
}

/// Everything `scalescope analyze` reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    pub schema_version: u32,
    pub machine: String,
    pub basis: Basis,
    pub curves: Vec<Curve>,
    pub smt_yield: SmtYield,
    pub placement_comparisons: Vec<PlacementComparison>,
    pub findings: Vec<Finding>,
}

/// Analyses a sweep.
pub fn analyze(header: &Header, records: &[RunRecord], basis: &Basis) -> Analysis {
    let topo = &header.machine.topology;
    let curves: Vec<Curve> = header
        .plan
        .placements
        .iter()
        .flat_map(|pl| header.plan.mems.iter().map(move |m| (pl, m)))
        .filter_map(|(pl, m)| curve(topo, header, records, basis, pl, m))
        .collect();
    let smt_yield = smt_yield(topo, &curves);
    let placement_comparisons = compare_placements(header, records, basis);
    let findings = findings(topo, basis, &curves, &smt_yield, &placement_comparisons);
    Analysis {
        schema_version: ANALYSIS_SCHEMA_VERSION,
        machine: topo.summary(),
        basis: basis.clone(),
        curves,
        smt_yield,
        placement_comparisons,
        findings,
    }
}

fn ok_runs<'a>(
    records: &'a [RunRecord],
    threads: usize,
    pl: &Strategy,
    mem: &MemPolicy,
) -> Vec<&'a RunRecord> {
    records
        .iter()
        .filter(|r| {
            !r.warmup
                && r.status == RunStatus::Ok
                && r.point.threads == threads
                && &r.point.placement == pl
                && &r.point.mem == mem
        })
        .collect()
}

fn curve(
    topo: &Topology,
    header: &Header,
    records: &[RunRecord],
    basis: &Basis,
    pl: &Strategy,
    mem: &MemPolicy,
) -> Option<Curve> {
    struct Raw {
        threads: usize,
        runs: usize,
        perf: f64,
        se: f64,
        time: Option<crate::stats::Summary>,
        metric: Option<f64>,
    }
    let raw: Vec<Raw> = header
        .plan
        .threads
        .iter()
        .filter_map(|&t| {
            let runs = ok_runs(records, t, pl, mem);
            let perfs: Vec<f64> = runs.iter().filter_map(|r| basis.perf(r)).collect();
            let s = summarize(&perfs)?;
            let metric = match basis {
                Basis::Metric { name, .. } => summarize(
                    &runs
                        .iter()
                        .filter_map(|r| r.metrics.get(name).copied())
                        .collect::<Vec<_>>(),
                )
                .map(|m| m.median),
                Basis::Time => None,
            };
            Some(Raw {
                threads: t,
                runs: s.n,
                perf: s.median,
                se: s.stddev / (s.n as f64).sqrt(),
                time: summarize(&runs.iter().map(|r| r.wall_secs).collect::<Vec<_>>()),
                metric,
            })
        })
        .collect();
    let base = raw.first()?;
    let (base_t, base_perf, base_rel) = (base.threads, base.perf, base.se / base.perf);
    let points: Vec<CurvePoint> = raw
        .iter()
        .map(|r| {
            let speedup = r.perf / base_perf;
            let p = r.threads as f64;
            let rel = if r.threads == base_t {
                0.0
            } else {
                ((r.se / r.perf).powi(2) + base_rel.powi(2)).sqrt()
            };
            CurvePoint {
                threads: r.threads,
                runs: r.runs,
                perf: r.perf,
                perf_se: r.se,
                time_median_secs: r.time.as_ref().map(|t| t.median),
                time_ci95_secs: r.time.as_ref().map(|t| t.ci95),
                metric_median: r.metric,
                speedup,
                speedup_sd: speedup * rel,
                efficiency: speedup * base_t as f64 / p,
                karp_flatt: (base_t == 1 && r.threads > 1)
                    .then(|| (1.0 / speedup - 1.0 / p) / (1.0 - 1.0 / p)),
                usage: events::usage(topo, pl, r.threads),
            }
        })
        .collect();
    let fit_points: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (p.threads as f64, p.speedup))
        .collect();
    let (amdahl, usl) = if base_t == 1 {
        (fit::fit_amdahl(&fit_points), fit::fit_usl(&fit_points))
    } else {
        (None, None)
    };
    let max_t = points.last().map(|p| p.threads).unwrap_or(1);
    let events = events::events(topo, pl, max_t);
    let samples: Vec<knee::Sample> = points
        .iter()
        .map(|p| (p.threads as f64, p.speedup, p.speedup_sd))
        .collect();
    let knees = knee::find_knees(&samples)
        .into_iter()
        .map(|k| attribute(k, &events))
        .collect();
    Some(Curve {
        placement: pl.clone(),
        mem: mem.clone(),
        baseline_threads: base_t,
        points,
        amdahl,
        usl,
        knees,
        events,
    })
}

/// The most specific event in (threads, next_threads]: a package boundary before a
/// NUMA node before an L3 domain before SMT sharing before all cores busy.
fn attribute(knee: Knee, events: &[TopologyEvent]) -> AttributedKnee {
    let rank = |k: &EventKind| match k {
        EventKind::Oversubscribed => 0,
        EventKind::SmtSharing => 1,
        EventKind::NewPackage => 2,
        EventKind::NewNumaNode => 3,
        EventKind::NewL3 => 4,
        EventKind::AllCoresBusy => 5,
    };
    // "All cores busy" at n explains a bend right at n as well.
    let inside = |e: &TopologyEvent| {
        (e.threads > knee.threads && e.threads <= knee.next_threads)
            || (e.kind == EventKind::AllCoresBusy && e.threads == knee.threads)
    };
    let cause = events
        .iter()
        .filter(|e| inside(e))
        .min_by_key(|e| rank(&e.kind))
        .cloned();
    AttributedKnee {
        attribution: if cause.is_some() { "coincides" } else { "none" }.into(),
        cause,
        knee,
    }
}

fn smt_yield(topo: &Topology, curves: &[Curve]) -> SmtYield {
    let unavailable = |why: String| SmtYield {
        best_with_smt: None,
        best_without_smt: None,
        ratio: None,
        unavailable: Some(why),
    };
    if topo.max_threads_per_core() < 2 {
        return unavailable("unavailable here: the machine that ran the sweep has no SMT (one hardware thread per core)".into());
    }
    let pts = curves.iter().flat_map(|c| c.points.iter());
    let best = |smt: bool| {
        pts.clone()
            .filter(|p| p.usage.is_some_and(|u| u.smt_shared == smt))
            .map(|p| p.perf)
            .fold(None, |a: Option<f64>, v| Some(a.map_or(v, |a| a.max(v))))
    };
    let (with, without) = (best(true), best(false));
    match (with, without) {
        (Some(w), Some(wo)) => SmtYield { best_with_smt: Some(w), best_without_smt: Some(wo), ratio: Some(w / wo), unavailable: None },
        (None, _) => unavailable("no measured point put two threads on one core (sweep past the core count with cores-first, or use smt-pairs)".into()),
        (_, None) => unavailable("every measured point shares cores; add a point with one thread per core".into()),
    }
}

fn compare_placements(
    header: &Header,
    records: &[RunRecord],
    basis: &Basis,
) -> Vec<PlacementComparison> {
    if header.plan.placements.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for mem in &header.plan.mems {
        for &t in &header.plan.threads {
            let per: Vec<(String, Vec<f64>)> = header
                .plan
                .placements
                .iter()
                .map(|pl| {
                    (
                        pl.to_string(),
                        ok_runs(records, t, pl, mem)
                            .iter()
                            .filter_map(|r| basis.perf(r))
                            .collect::<Vec<f64>>(),
                    )
                })
                .filter(|(_, v)| !v.is_empty())
                .collect();
            if per.len() < 2 {
                continue;
            }
            let med: BTreeMap<String, f64> = per
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        summarize(v).map(|s| s.median).unwrap_or(f64::NAN),
                    )
                })
                .collect();
            let best = med
                .iter()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .map(|(k, _)| k.clone())
                .unwrap_or_default();
            let worst = med
                .iter()
                .min_by(|a, b| a.1.total_cmp(b.1))
                .map(|(k, _)| k.clone())
                .unwrap_or_default();
            let runs = |name: &str| {
                per.iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            };
            let p_value = welch::welch_t_test(&runs(&best), &runs(&worst)).map(|w| w.p_value);
            out.push(PlacementComparison {
                threads: t,
                mem: mem.clone(),
                ratio: med[&best] / med[&worst],
                significant: p_value.is_some_and(|p| p < 0.05),
                p_value,
                perf: med,
                best,
                worst,
            });
        }
    }
    out
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn findings(
    topo: &Topology,
    basis: &Basis,
    curves: &[Curve],
    smt: &SmtYield,
    cmp: &[PlacementComparison],
) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in curves {
        out.extend(curve_findings(c, basis));
    }
    if let Some(r) = smt.ratio {
        let good = r > 1.1;
        out.push(Finding {
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
    } else if let Some(why) = &smt.unavailable {
        out.push(Finding {
            severity: "info".into(),
            title: "Hyper-threading yield not measured".into(),
            evidence: vec![why.clone()],
            advice: None,
        });
    }
    for c in cmp.iter().filter(|c| c.significant && c.ratio > 1.05) {
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
        out.push(Finding {
            severity: "notice".into(),
            title: format!(
                "{} is {:.2}x faster than {} at {} threads",
                c.best, c.ratio, c.worst, c.threads
            ),
            evidence,
            advice: Some(placement_advice(usage_of(&c.best), usage_of(&c.worst))),
        });
    }
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
    let mut out = Vec::new();
    let name = format!("{} / {}", c.placement, c.mem);
    let Some(last) = c.points.last() else {
        return out;
    };
    if c.points.len() >= 2 {
        let eff = last.efficiency;
        out.push(Finding {
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
        });
    }
    for k in &c.knees {
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
        out.push(Finding {
            severity: if k.knee.bend == "flattens" { "warning" } else { "notice" }.into(),
            title,
            evidence: vec![format!(
                "marginal speedup per added thread {:.2} up to {} threads, {:.2} after (between {} and {} threads; confidence {}, z = {:.1})",
                k.knee.slope_before, k.knee.threads, k.knee.slope_after, k.knee.threads, k.knee.next_threads, k.knee.confidence, k.knee.z
            )],
            advice,
        });
    }
    if let (Some(a), Some(u)) = (&c.amdahl, &c.usl) {
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
        out.push(Finding {
            severity: if retrograde { "warning" } else { "info" }.into(),
            title: format!("{name}: scaling model ({})", basis.label()),
            evidence: ev,
            advice: retrograde.then(|| "beyond the USL peak more threads make it slower: coherency traffic (shared writes, false sharing, lock hand-offs) dominates".to_string()),
        });
    }
    out
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
