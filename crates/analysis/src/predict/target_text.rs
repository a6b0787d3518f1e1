//! The prediction in words: the parameter table with intervals, the
//! recommendation, and one sentence per assumption the prediction rests on.

use super::calibrate::Fitted;
use super::model::{self, Params, Scales};
use super::target::{one_thread, Param, PredictedCurve, Recommendation, TargetBandwidth};
use super::Calibration;
use crate::boot::percentile_ci;

fn param(name: &str, unit: &str, value: f64, ci95: Option<(f64, f64)>, source: &str) -> Param {
    Param {
        name: name.into(),
        value,
        ci95,
        unit: unit.into(),
        source: source.into(),
    }
}

fn ci_of(draws: &[Fitted], f: impl Fn(&Fitted) -> f64) -> Option<(f64, f64)> {
    percentile_ci(&draws.iter().map(f).collect::<Vec<_>>())
}

/// The parameter table: each fitted one with its bootstrap interval, each
/// undetermined one with the range drawn for it.
pub(crate) fn params(cal: &Calibration, bw: &TargetBandwidth) -> Vec<Param> {
    let (b, d, fr) = (&cal.best, &cal.draws, &cal.free);
    let t1 = |f: &Fitted| model::time(&f.params, &Scales::default(), &one_thread()) / f.scale;
    let fitted = |free: bool| if free { "fitted" } else { "assumed" };
    let mut v = vec![param(
        "compute per core: one thread's time per unit of work (1 / performance)",
        "s",
        t1(b),
        ci_of(d, t1),
        "fitted",
    )];
    let g = |p: fn(&Params) -> f64| ci_of(d, move |f| p(&f.params));
    v.push(param(
        "serial part s",
        "fraction",
        b.params.serial,
        g(|p| p.serial),
        fitted(fr.serial),
    ));
    v.push(param(
        "synchronisation cost kappa per added thread",
        "one-thread times",
        b.params.sync,
        g(|p| p.sync),
        fitted(fr.sync),
    ));
    v.push(if fr.remote {
        param(
            "remote rate r (a thread off the data's node, at the measured distance)",
            "of local",
            b.params.remote,
            g(|p| p.remote),
            "fitted",
        )
    } else {
        param(
            "remote rate r (never measured)",
            "of local",
            0.8,
            Some((0.6, 1.0)),
            "assumed",
        )
    });
    v.push(param(
        "memory traffic per unit of work: one thread's share of a node's bandwidth (1/b; 0 = no cap seen)",
        "of a node",
        b.params.inv_bandwidth,
        if fr.bandwidth { g(|p| p.inv_bandwidth) } else { None },
        fitted(fr.bandwidth),
    ));
    if let Some(n) = cal.node_gbps {
        v.push(param(
            "bandwidth ceiling per node (calibration, mem stream)",
            "GB/s",
            n,
            None,
            "measured",
        ));
        v.push(param(
            "one thread's traffic (ceiling x 1/b)",
            "GB/s",
            n * b.params.inv_bandwidth,
            g(|p| p.inv_bandwidth).map(|(a, z)| (a * n, z * n)),
            "fitted",
        ));
    }
    if let Some(dm) = cal.demand_gbps {
        v.push(param(
            "one thread's traffic (sampler evidence)",
            "GB/s",
            dm,
            None,
            "measured",
        ));
    }
    if let Some(n) = bw.node_gbps {
        v.push(param(
            "bandwidth ceiling per node (target)",
            "GB/s",
            n,
            None,
            "measured",
        ));
    }
    v.push(if fr.smt {
        param(
            "SMT yield y per core",
            "extra throughput of a second sibling",
            b.params.smt_yield,
            g(|p| p.smt_yield),
            "fitted",
        )
    } else {
        param(
            "SMT yield y per core (never measured)",
            "extra throughput of a second sibling",
            0.15,
            Some((0.0, 0.3)),
            "assumed",
        )
    });
    v
}

/// The fastest predicted point (the fewer threads on a tie), and the fewest
/// threads of its placement within 5% of it.
pub(crate) fn recommend(curves: &[PredictedCurve]) -> Option<Recommendation> {
    let (c, p) = curves
        .iter()
        .flat_map(|c| c.points.iter().map(move |p| (c, p)))
        .max_by(|a, b| {
            a.1.speedup
                .total_cmp(&b.1.speedup)
                .then(b.1.threads.cmp(&a.1.threads))
        })?;
    let within = c
        .points
        .iter()
        .filter(|q| q.speedup >= 0.95 * p.speedup)
        .map(|q| q.threads)
        .min()
        .unwrap_or(p.threads);
    let ci = p
        .ci95
        .map(|(a, b)| format!(" (95% interval {a:.1}-{b:.1})"))
        .unwrap_or_default();
    let limit = if p.limit == model::Mechanism::Compute {
        format!("limited by {}", p.limit.describe())
    } else {
        format!(
            "limited there by {} (without it: {:.2}x more)",
            p.limit.describe(),
            p.limit_gain
        )
    };
    let extra = if p.extrapolated.is_empty() {
        String::new()
    } else {
        format!("; an extrapolation ({})", p.extrapolated.join(", "))
    };
    Some(Recommendation {
        placement: c.placement.clone(),
        threads: p.threads,
        speedup: p.speedup,
        ci95: p.ci95,
        limit: p.limit,
        limit_gain: p.limit_gain,
        within_5_percent: within,
        extrapolated: !p.extrapolated.is_empty(),
        sentence: format!(
            "predicted best: {} threads {}, speedup {:.1}x{ci}, {limit}; {} threads already reach 95% of it{extra}",
            p.threads, c.placement, p.speedup, within
        ),
    })
}

fn any(curves: &[PredictedCurve], why: &str) -> bool {
    curves
        .iter()
        .flat_map(|c| &c.points)
        .any(|p| p.extrapolated.iter().any(|e| e == why))
}

/// One sentence per assumption the curves rest on.
pub(crate) fn assumptions(
    cal: &Calibration,
    curves: &[PredictedCurve],
    bw: &TargetBandwidth,
    evidence_demand: bool,
) -> Vec<String> {
    let c = &cal.coverage;
    let mut v = vec!["This is a prediction, not a measurement: the target's cores are assumed as fast as the calibration machine's, and each speedup is against one thread on the target.".to_string()];
    let fitted = cal.free.count();
    let could = [
        c.max_threads >= 2,
        c.max_per_node >= 2,
        c.remote,
        c.smt,
        c.max_threads >= 3,
    ];
    if could.iter().filter(|x| **x).count() > fitted {
        v.push(format!("With {} distinct measured points the calibration could fit only {fitted} mechanism parameter(s) besides the scale; the others are drawn from their ranges, so the bands are wide.", c.distinct_points));
    }
    if any(curves, "threads") {
        v.push(format!("Beyond {} threads (the most measured), the fitted serial part and synchronisation cost are extrapolated.", c.max_threads));
    }
    if any(curves, "remote") {
        v.push("The calibration never ran threads off the first NUMA node: remote access is assumed to run at 0.6-1.0 of local speed (0.8 central), which carries every point that uses a second node.".into());
    } else if any(curves, "numa-nodes") || any(curves, "packages") {
        v.push(format!("The target uses more NUMA nodes or packages than the calibration ({} nodes, {} packages): the remote rate measured there is assumed to hold on every remote node, its penalty scaled between 1x and the SLIT distance ratio where the firmware gives distances.", c.nodes, c.packages));
    }
    if any(curves, "smt") {
        v.push("The calibration had no SMT siblings sharing a core: the SMT yield is assumed to be 0-30% (15% central), which carries every point with two threads on a core.".into());
    }
    if any(curves, "threads-per-node") && !evidence_demand {
        v.push(format!("The target runs more threads per NUMA node than measured ({}): a bandwidth cap not reached in the calibration may lie beyond it; the band's lower edge allows one just past it.", c.max_per_node));
    }
    v.push(match (bw.node_gbps, cal.node_gbps, evidence_demand) {
        (Some(t), Some(h), _) => format!("The target's bandwidth per node ({t:.1} GB/s, {}) against the calibration's ({h:.1} GB/s) scales the bandwidth cap.", bw.source.clone().unwrap_or_default()),
        (Some(t), None, true) => format!("The bandwidth cap on the target is its {t:.1} GB/s per node over the traffic one thread moved in the calibration (sampler evidence)."),
        (Some(_), None, false) => "The target's bandwidth was given but the calibration's was not measured (no `mem stream` document beside the results, no sampler bandwidth), so a node's bandwidth is assumed equal on both machines.".into(),
        _ => "No bandwidth ceiling was given for the target (--ceilings): a node's bandwidth is assumed equal to the calibration machine's.".into(),
    });
    v
}
