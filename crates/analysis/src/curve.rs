//! One curve per placement and memory policy: each point's performance, speedup
//! against the baseline with its standard deviation and bootstrap interval,
//! efficiency and Karp-Flatt fraction; the models fitted and chosen; the knees,
//! each attributed to the topology event it coincides with.

use scalescope_model::store::{Header, RunRecord, RunStatus};
use scalescope_place::{MemPolicy, Strategy};
use scalescope_topo::Topology;

use crate::events::{self, EventKind, TopologyEvent};
use crate::finding::Boundary;
use crate::knee::{self, Knee};
use crate::stats::summarize;
use crate::{boot, fit, AttributedKnee, Basis, Curve, CurvePoint};

pub(crate) fn ok_runs<'a>(
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

/// A point's repetitions reduced: median performance and its standard error, the
/// wall-time summary, the figure of merit's median.
struct Raw {
    threads: usize,
    perfs: Vec<f64>,
    /// The repetition number of each value of `perfs`.
    reps: Vec<usize>,
    /// What the sampler saw on each run's CPUs: (other work's share, steal share).
    others: Vec<Others>,
    runs: usize,
    perf: f64,
    se: f64,
    time: Option<crate::stats::Summary>,
    metric: Option<f64>,
}

/// Other work's share of a run's CPUs beyond its own, and the hypervisor's (steal).
type Others = (Option<f64>, Option<f64>);

/// [`Others`] as a run's evidence recorded them.
fn others_on_cpus(r: &RunRecord) -> Others {
    let Some(cpu) = r.evidence.as_ref().and_then(|e| e.cpu.value()) else {
        return (None, None);
    };
    (
        cpu.run_share_mean.map(|own| (cpu.busy_mean - own).max(0.0)),
        cpu.steal_share,
    )
}

fn raw_points(
    header: &Header,
    records: &[RunRecord],
    basis: &Basis,
    pl: &Strategy,
    mem: &MemPolicy,
) -> Vec<Raw> {
    header
        .plan
        .threads
        .iter()
        .filter_map(|&t| {
            let runs = ok_runs(records, t, pl, mem);
            let measured: Vec<(f64, usize, Others)> = runs
                .iter()
                .filter_map(|r| Some((basis.perf(r)?, r.rep, others_on_cpus(r))))
                .collect();
            let perfs: Vec<f64> = measured.iter().map(|m| m.0).collect();
            let reps: Vec<usize> = measured.iter().map(|m| m.1).collect();
            let others = measured.iter().map(|m| m.2).collect();
            // `summarize` keeps figures near 1e308 finite; a point whose figures
            // still give no finite summary has no figure to show (not `inf` or
            // `NaN`), and `quality::points_without_a_figure` names it.
            let s = summarize(&perfs)
                .filter(|s| s.median.is_finite() && s.mean.is_finite() && s.stddev.is_finite())?;
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
                perfs,
                reps,
                others,
                runs: s.n,
                perf: s.median,
                se: s.stddev / (s.n as f64).sqrt(),
                // Imported curves carry no wall time (0): not a measured time.
                time: summarize(
                    &runs
                        .iter()
                        .map(|r| r.wall_secs)
                        .filter(|w| *w > 0.0)
                        .collect::<Vec<_>>(),
                ),
                metric,
            })
        })
        .collect()
}

/// Speedup (with its propagated standard deviation), efficiency and Karp-Flatt
/// against the first point.
fn curve_points(topo: &Topology, pl: &Strategy, raw: &[Raw]) -> Vec<CurvePoint> {
    let Some(base) = raw.first() else {
        return Vec::new();
    };
    let (base_t, base_perf, base_rel) = (base.threads, base.perf, base.se / base.perf);
    raw.iter()
        // A ratio past the largest f64 (1e308 against 1e-5), or one that falls to
        // zero (1e-5 against 1e308), is no speedup to show.
        .filter(|r| (r.perf / base_perf).is_finite() && r.perf / base_perf >= f64::MIN_POSITIVE)
        .map(|r| {
            let speedup = r.perf / base_perf;
            let ci = (r.threads != base_t)
                .then(|| {
                    let seed = r.threads as u64;
                    boot::interval(&[base.perfs.clone(), r.perfs.clone()], seed, |m| {
                        m[1] / m[0]
                    })
                    .1
                })
                .flatten();
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
                speedup_ci95: ci,
                efficiency: speedup * base_t as f64 / p,
                karp_flatt: (base_t == 1 && r.threads > 1)
                    .then(|| (1.0 / speedup - 1.0 / p) / (1.0 - 1.0 / p)),
                outliers: outliers(&r.perfs, &r.reps, &r.others),
                usage: events::usage(topo, pl, r.threads),
            }
        })
        .collect()
}

/// Runs far from their point's others: a modified z-score of the logarithm of
/// their performance above 3.5 (Iglewicz and Hoaglin, 1993), with at least three
/// runs; each with its factor from the point's median.
fn outliers(perfs: &[f64], reps: &[usize], others: &[Others]) -> Vec<crate::Outlier> {
    if perfs.len() < 3 || perfs.iter().any(|p| p.is_nan() || *p <= 0.0) {
        return Vec::new();
    }
    let logs: Vec<f64> = perfs.iter().map(|p| p.ln()).collect();
    let mut sorted = logs.clone();
    sorted.sort_by(f64::total_cmp);
    let med = crate::stats::median(&sorted);
    let mut dev: Vec<f64> = logs.iter().map(|l| (l - med).abs()).collect();
    dev.sort_by(f64::total_cmp);
    // Runs that agree to within 0.1% have no spread to judge by: take that as it.
    let mad = crate::stats::median(&dev).max(0.001 / 0.6745);
    logs.iter()
        .zip(reps)
        .zip(
            others
                .iter()
                .copied()
                .chain(std::iter::repeat((None, None))),
        )
        .filter(|((l, _), _)| 0.6745 * (*l - med).abs() / mad > 3.5 && (*l - med).abs() > 0.1)
        .map(|((l, rep), (others_share, steal_share))| crate::Outlier {
            rep: *rep,
            perf_over_median: (l - med).exp(),
            others_share,
            steal_share,
        })
        .collect()
}

/// Where the knee search starts: past a baseline in a regime the rest of the curve
/// never returns to (one thread alone on its core where every other point shares
/// cores, as smt-pairs from 2): such a curve is analysed in its own frame.
fn own_frame(points: &[CurvePoint]) -> usize {
    let shared = |p: &CurvePoint| p.usage.map(|u| u.smt_shared);
    match points {
        [first, rest @ ..]
            if rest.len() >= 3
                && shared(first) == Some(false)
                && rest.iter().all(|p| shared(p) == Some(true)) =>
        {
            1
        }
        _ => 0,
    }
}

pub(crate) fn curve(
    topo: &Topology,
    header: &Header,
    records: &[RunRecord],
    basis: &Basis,
    pl: &Strategy,
    mem: &MemPolicy,
) -> Option<Curve> {
    let raw = raw_points(header, records, basis, pl, mem);
    let max_t = raw.last().map(|p| p.threads).unwrap_or(1);
    curve_of(topo, (pl, mem), &raw, events::events(topo, pl, max_t), true)
}

/// One ranks-per-node value of a launched sweep's node axis: its points are its
/// runs at each node count (`threads`: their total ranks), its events the node
/// boundaries; what one machine's topology says of thread counts (usage, the
/// mechanism model's implied knees) does not apply.
pub(crate) fn node_curve(
    topo: &Topology,
    header: &Header,
    records: &[RunRecord],
    basis: &Basis,
    (pl, mem): (&Strategy, &MemPolicy),
    per_node: usize,
) -> Option<Curve> {
    let mine: Vec<RunRecord> = records
        .iter()
        .filter(|r| r.point.nodes.is_some())
        .filter(|r| {
            r.ranks
                .as_ref()
                .is_some_and(|k| k.ranks_per_node == per_node)
        })
        .cloned()
        .collect();
    let mut nodes: Vec<usize> = mine.iter().filter_map(|r| r.point.nodes).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let mut h = header.clone();
    h.plan.threads = nodes.iter().map(|n| n * per_node).collect();
    let raw = raw_points(&h, &mine, basis, pl, mem);
    let max_nodes = nodes.last().copied().unwrap_or(1);
    let events = events::node_events(per_node, max_nodes);
    let mut c = curve_of(topo, (pl, mem), &raw, events, false)?;
    c.ranks_per_node = Some(per_node);
    Some(c)
}

/// The curve over `raw`'s points with `events`; `on_one_machine` says whether
/// the points are threads (or ranks) of this machine's topology.
fn curve_of(
    topo: &Topology,
    (pl, mem): (&Strategy, &MemPolicy),
    raw: &[Raw],
    events: Vec<TopologyEvent>,
    on_one_machine: bool,
) -> Option<Curve> {
    let base_t = raw.first()?.threads;
    let mut points = curve_points(topo, pl, raw);
    if !on_one_machine {
        points.iter_mut().for_each(|p| p.usage = None);
    }
    let fit_points: Vec<fit::FitPoint> = points
        .iter()
        .map(|p| (p.threads as f64, p.speedup, p.speedup_sd))
        .collect();
    let breaks: Vec<f64> = events
        .iter()
        .map(|e| e.last_before_change() as f64)
        .collect();
    let (models, amdahl, usl) = fit::choose(&fit_points, base_t == 1, &breaks);
    let start = own_frame(&points);
    let threads: Vec<usize> = raw[start..].iter().map(|r| r.threads).collect();
    let perf: Vec<Vec<f64>> = raw[start..].iter().map(|r| r.perfs.clone()).collect();
    let boundaries: Vec<usize> = events.iter().map(|e| e.last_before_change()).collect();
    let samples = knee::Samples {
        threads: &threads,
        perf: &perf,
        boundaries: &boundaries,
    };
    let found = knee::find_knees(&samples);
    let implied = if on_one_machine {
        implied_knees(topo, pl, &samples, &breaks, &found)
    } else {
        Vec::new()
    };
    let mut knees: Vec<AttributedKnee> = found
        .knees
        .into_iter()
        .map(|k| attribute(k, &events))
        .collect();
    knees.extend(implied.into_iter().map(|(k, by)| AttributedKnee {
        implied_by: Some(by),
        ..attribute(k, &events)
    }));
    knees.sort_by_key(|k| k.knee.threads);
    Some(Curve {
        smooth: found.smooth,
        placement: pl.clone(),
        mem: mem.clone(),
        baseline_threads: base_t,
        points,
        amdahl,
        usl,
        models,
        knees,
        undecided: found.undecided,
        events,
        ranks_per_node: None,
    })
}

/// The knees the mechanism model implies, held to the smooth null: only where no
/// smooth family describes the points (their lack of fit against the replicate
/// noise is significant) and where the points lean the same way at that count;
/// confident only where the points show the bend on their own
/// ([`knee::held_to_the_points`]).
fn implied_knees(
    topo: &Topology,
    pl: &Strategy,
    samples: &knee::Samples,
    breaks: &[f64],
    found: &knee::KneeSearch,
) -> Vec<(Knee, crate::predict::implied::MechanismFit)> {
    let smooth_fails = found
        .smooth
        .as_ref()
        .and_then(|s| s.lack_of_fit_p)
        .is_some_and(|p| p < crate::predict::implied::LACK_OF_FIT_P);
    if !smooth_fails {
        return Vec::new();
    }
    let implied = crate::predict::implied::implied_knees(
        &crate::predict::implied::Curve {
            topo,
            placement: pl,
            threads: samples.threads,
            perf: samples.perf,
            breaks,
        },
        &found.knees,
    );
    if implied.is_empty() {
        return implied;
    }
    let support = knee::Support::new(samples);
    implied
        .into_iter()
        .filter_map(|(k, m)| Some((knee::held_to_the_points(k, &support)?, m)))
        .collect()
}

/// The boundary a topology event marks.
pub(crate) fn boundary_of(kind: &EventKind) -> Boundary {
    match kind {
        EventKind::NewPackage => Boundary::Package,
        EventKind::NewNumaNode => Boundary::Numa,
        EventKind::NewL3 => Boundary::L3,
        EventKind::AllCoresBusy => Boundary::AllCores,
        EventKind::SmtSharing => Boundary::Smt,
        EventKind::Oversubscribed => Boundary::Oversubscribed,
        EventKind::NewNode => Boundary::Node,
    }
}

/// The most specific event in (threads, next_threads]: a package boundary before a
/// NUMA node before an L3 domain before SMT sharing before all cores busy. An
/// event whose last count before the change is the knee's own point coincides
/// with it; one that falls strictly between the knee's point and the next was
/// not measured (`inside`): the bend lies somewhere in that interval, the
/// boundary is one explanation of it and a smooth bend another, so the knee is of
/// low confidence at most and the reason names the counts that would decide.
fn attribute(mut knee: Knee, events: &[TopologyEvent]) -> AttributedKnee {
    let rank = |k: &EventKind| match k {
        EventKind::Oversubscribed => 0,
        EventKind::SmtSharing => 1,
        EventKind::NewNode => 2,
        EventKind::NewPackage => 3,
        EventKind::NewNumaNode => 4,
        EventKind::NewL3 => 5,
        EventKind::AllCoresBusy => 6,
    };
    // An event explains a bend when the last count before its change lies in
    // [threads, next_threads): "every core busy at n" changes things after n, so it
    // explains a bend at n, not one between n - 1 and n.
    let inside = |e: &TopologyEvent| {
        let c = e.last_before_change();
        c >= knee.threads && c < knee.next_threads
    };
    let cause = events
        .iter()
        .filter(|e| inside(e))
        .min_by_key(|e| rank(&e.kind))
        .cloned();
    let attribution = match &cause {
        Some(e) if e.last_before_change() > knee.threads => {
            knee.confidence.cap_low(&unmeasured_boundary(&knee, e));
            "inside"
        }
        Some(_) => "coincides",
        None => "none",
    };
    AttributedKnee {
        attribution: attribution.into(),
        boundary: cause
            .as_ref()
            .map_or(Boundary::None, |e| boundary_of(&e.kind)),
        cause,
        knee,
        implied_by: None,
    }
}

/// Why a knee whose boundary was not measured is of low confidence at most.
fn unmeasured_boundary(knee: &Knee, e: &TopologyEvent) -> String {
    let c = e.last_before_change();
    format!(
        "the bend lies between the measured {} and {} threads and the boundary ({}) falls between them, after {c}, where nothing was measured: a break at the boundary and a smooth bend elsewhere in the interval fit alike; points at {c} and {} would tell them apart",
        knee.threads,
        knee.next_threads,
        e.description,
        c + 1
    )
}
