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

/// The parameter table: compute per core, each mechanism's parameter (fitted with
/// its bootstrap interval, or undetermined with the range drawn for it), and the
/// bandwidths measured or stated.
pub(crate) fn params(cal: &Calibration, bw: &TargetBandwidth) -> Vec<Param> {
    let mut v = vec![compute_param(cal)];
    v.extend(mechanism_params(cal));
    v.extend(bandwidth_params(cal, bw));
    v
}

fn compute_param(cal: &Calibration) -> Param {
    let t1 = |f: &Fitted| model::time(&f.params, &Scales::default(), &one_thread()) / f.scale;
    let (b, d) = (&cal.best, &cal.draws);
    match &cal.basis {
        crate::Basis::Time => param(
            "compute per core: one thread's time per unit of work",
            "s",
            t1(b),
            ci_of(d, t1),
            "fitted",
        ),
        crate::Basis::Metric { name, .. } => param(
            &format!("compute per core: one thread's {name} (per unit of work: 1 / it)"),
            name,
            1.0 / t1(b),
            ci_of(d, |f| 1.0 / t1(f)),
            "fitted",
        ),
    }
}

type Row = (
    &'static str,
    &'static str,
    fn(&Params) -> f64,
    bool,
    Option<(f64, (f64, f64))>,
);

fn mechanism_params(cal: &Calibration) -> Vec<Param> {
    let fr = &cal.free;
    let rows: [Row; 5] = [
        ("serial part s", "fraction", |p| p.serial, fr.serial, None),
        ("synchronisation cost kappa per added thread", "one-thread times", |p| p.sync, fr.sync, None),
        ("remote rate r (a thread off the data's node, at the measured distance)", "of local", |p| p.remote, fr.remote, Some((0.8, (0.6, 1.0)))),
        ("memory traffic per unit of work: one thread's share of a node's bandwidth (1/b; 0 = no cap seen)", "of a node", |p| p.inv_bandwidth, fr.bandwidth, None),
        ("SMT yield y per core", "extra throughput of a second sibling", |p| p.smt_yield, fr.smt, Some((0.15, (0.0, 0.3)))),
    ];
    rows.iter()
        .map(|(name, unit, get, free, prior)| match (free, prior) {
            (true, _) => param(
                name,
                unit,
                get(&cal.best.params),
                ci_of(&cal.draws, |f| get(&f.params)),
                "fitted",
            ),
            (false, Some((c, range))) => param(
                &format!("{name}: never measured"),
                unit,
                *c,
                Some(*range),
                "assumed",
            ),
            (false, None) => param(name, unit, get(&cal.best.params), None, "assumed"),
        })
        .collect()
}

fn bandwidth_params(cal: &Calibration, bw: &TargetBandwidth) -> Vec<Param> {
    let mut v = Vec::new();
    let inv = cal.best.params.inv_bandwidth;
    if let Some(n) = cal.node_gbps {
        v.push(param(
            "bandwidth ceiling per node (calibration, mem stream)",
            "GB/s",
            n,
            None,
            "measured",
        ));
        let ci = ci_of(&cal.draws, |f| f.params.inv_bandwidth).map(|(a, z)| (a * n, z * n));
        v.push(param(
            "one thread's traffic (ceiling x 1/b)",
            "GB/s",
            n * inv,
            ci,
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
    v
}

/// The fastest predicted point (the fewer threads on a tie), and the fewest
/// threads of its placement within 5% of it.
pub(crate) fn recommend(curves: &[PredictedCurve]) -> Option<Recommendation> {
    let mut best: Option<(&PredictedCurve, &super::target::PredictedPoint)> = None;
    for c in curves {
        for p in &c.points {
            let better = best.is_none_or(|(_, b)| {
                p.speedup > b.speedup * (1.0 + 1e-9)
                    || (p.speedup >= b.speedup * (1.0 - 1e-9) && p.threads < b.threads)
            });
            if better {
                best = Some((c, p));
            }
        }
    }
    let (c, p) = best?;
    // At one thread, what stops more threads is the limit at the next count.
    let lim = if p.threads == 1 {
        c.points.get(1).unwrap_or(p)
    } else {
        p
    };
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
    let limit = match (p.threads, lim.limit) {
        (1, m) => format!(
            "more threads are predicted slower, limited by {} (without it: {:.2}x more at {} threads)",
            m.describe(),
            lim.limit_gain,
            lim.threads
        ),
        (_, model::Mechanism::Compute) => format!("limited by {}", p.limit.describe()),
        (_, m) => format!(
            "limited there by {} (without it: {:.2}x more)",
            m.describe(),
            p.limit_gain
        ),
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
        limit: lim.limit,
        limit_gain: lim.limit_gain,
        within_5_percent: within,
        extrapolated: !p.extrapolated.is_empty(),
        sentence: format!(
            "predicted best: {} thread(s) {}, speedup {:.1}x{ci}, {limit}; {} thread(s) already reach 95% of it{extra}",
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
    if any(curves, "oversubscribed") {
        v.push("Points with more threads than PUs are oversubscribed (threads time-share a PU); the calibration had none, so what a shared PU yields is assumed to be 0-30% (15% central).".into());
    }
    if any(curves, "threads-per-node") && !evidence_demand {
        v.push(format!("The target runs more threads per NUMA node than measured ({}): a bandwidth cap not reached in the calibration may lie beyond it; the band's lower edge allows one just past it.", c.max_per_node));
    }
    v.push(match (bw.node_gbps, cal.node_gbps, evidence_demand) {
        (Some(t), Some(h), _) => format!("The target's bandwidth per node ({t:.1} GB/s, {}) against the calibration's ({h:.1} GB/s) scales the bandwidth cap.", bw.source.clone().unwrap_or_default()),
        (Some(t), None, true) => format!("The bandwidth cap on the target is its {t:.1} GB/s per node over the traffic one thread moved in the calibration (sampler evidence)."),
        (Some(t), None, false) => format!("The target's bandwidth was given ({t:.1} GB/s per node) but the calibration's was not measured (no `mem stream` document beside the results, no sampler bandwidth), so the bandwidth cap is assumed equal on both machines."),
        _ => "No bandwidth ceiling was given for the target (--ceilings): a node's bandwidth is assumed equal to the calibration machine's.".into(),
    });
    v
}
