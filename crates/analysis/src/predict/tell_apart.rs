//! The rival explanations of a calibration in words, and the measurement that
//! would tell them apart: the layout on the calibration machine (a named
//! placement at some thread count it has not measured) with the fewest threads
//! where the leading explanation's band and another's do not overlap, else the one
//! where their central predictions differ most; and, where an explanation rests on
//! a memory limit, the `mem stream` ceiling that would confirm or refute it.

use serde::{Deserialize, Serialize};

use scalescope_place::Strategy;

use super::band::{context, Estimate, Rivals};
use super::calibrate::Free;
use super::model::{self, Layout, Params};
use super::rivals::{Rival, RIVAL_AICC};
use super::target::{self, TargetBandwidth};
use super::Calibration;

/// One explanation of the calibration, as the prediction JSON shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    /// The mechanisms it frees (`serial`, `sync`, `remote`, `bandwidth-cap`,
    /// `cap-shape`, `memory-time`, `smt`; `home-memory` when its memory limit is
    /// the home node's, serving every thread).
    pub mechanisms: Vec<String>,
    pub description: String,
    pub aicc: Option<f64>,
    /// AICc above the best explanation's.
    pub delta_aicc: f64,
    /// Akaike weight in the central prediction (the weights sum to 1).
    pub weight: f64,
}

/// A measurement on the calibration machine that tells two explanations apart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TellApart {
    pub placement: Strategy,
    pub threads: usize,
    pub numa_nodes: usize,
    /// Each explanation's predicted speedup there and its 95% band.
    pub speedups: Vec<(f64, Option<(f64, f64)>)>,
    /// The two bands do not overlap there (false: the point narrows the choice
    /// without deciding it).
    pub decisive: bool,
    pub sentence: String,
}

fn mechanisms(f: &Free) -> Vec<String> {
    let names = [
        (f.serial, "serial"),
        (f.sync, "sync"),
        (f.remote, "remote"),
        (f.bandwidth, "bandwidth-cap"),
        (f.cap_shape, "cap-shape"),
        (f.mem_time, "memory-time"),
        (f.smt, "smt"),
        (f.home_memory, "home-memory"),
    ];
    names
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, n)| n.to_string())
        .collect()
}

/// The explanation in words, with its fitted values.
pub fn describe(f: &Free, p: &Params) -> String {
    let (whose, scope) = if f.home_memory {
        (
            "on the data's node",
            "in all (the data on the first thread's node serves every thread)",
        )
    } else {
        (
            "per node",
            "per node (each node's memory serves its own threads)",
        )
    };
    let mut parts = Vec::new();
    if f.serial {
        parts.push(format!("a serial part of {:.1}%", p.serial * 100.0));
    }
    if f.sync {
        parts.push(format!(
            "a synchronisation cost of {:.2}% of one thread's time per added thread",
            p.sync * 100.0
        ));
    }
    if f.remote {
        parts.push(format!("remote threads at {:.2} of local speed", p.remote));
    }
    if f.bandwidth && p.inv_bandwidth > 0.0 {
        let how = if f.cap_shape {
            format!(
                "approached with shape {:.2} (0 abrupt, 1 gradual)",
                p.cap_shape
            )
        } else {
            "reached abruptly".to_string()
        };
        parts.push(format!(
            "a bandwidth cap {whose}: {:.1} one-thread rates {scope}, {how}",
            1.0 / p.inv_bandwidth
        ));
    }
    if f.mem_time && p.mem_time > 0.0 {
        parts.push(format!(
            "memory time {whose}: at most {:.1} one-thread rates {scope}, approached gradually",
            1.0 / p.mem_time
        ));
    }
    if f.smt {
        parts.push(format!("an SMT yield of {:.2}", p.smt_yield));
    }
    if parts.is_empty() {
        "no mechanism: the speedup follows the cores".into()
    } else {
        parts.join(", ")
    }
}

/// The calibration's rivals as the JSON shows them.
pub fn explanations(rivals: &[Rival]) -> Vec<Explanation> {
    rivals
        .iter()
        .map(|r| Explanation {
            mechanisms: mechanisms(&r.free),
            description: describe(&r.free, &r.fit.params),
            aicc: r.aicc,
            delta_aicc: r.delta,
            weight: r.weight,
        })
        .collect()
}

/// How far apart (in log ratio) explanation `j`'s band lies from the first's (0
/// when they overlap), and their central log ratio.
fn gap(e: &Estimate, j: usize) -> (f64, f64) {
    let (a, b) = (e.each[0], e.each[j]);
    let central = (b.0 / a.0).ln().abs();
    let apart = match (a.1, b.1) {
        (Some((alo, ahi)), Some((blo, bhi))) => (blo / ahi).ln().max((alo / bhi).ln()).max(0.0),
        _ => 0.0,
    };
    (apart, central)
}

/// A candidate measurement: its placement, layout, estimate, the rival it
/// separates from the first, and (band gap, central log ratio).
type Candidate = (Strategy, Layout, Estimate, usize, (f64, f64));

fn candidates(cal: &Calibration) -> Vec<Candidate> {
    let counts = target::counts(&cal.topo);
    let pls = target::placements(&cal.topo, &counts);
    let most = pls
        .iter()
        .flat_map(|(_, ls)| ls.iter().map(Layout::max_per_node))
        .max()
        .unwrap_or(0);
    let ctx = context(cal, most, &TargetBandwidth::default());
    let rivals = Rivals::new(cal, &ctx, 100);
    let measured: Vec<&Layout> = cal.points.iter().map(|p| &p.layout).collect();
    let mut out = Vec::new();
    for (s, ls) in &pls {
        let Some(one) = ls.first() else {
            continue;
        };
        for l in ls.iter().skip(1).filter(|l| !measured.contains(l)) {
            let e = rivals.estimate(|p, sc, _| model::speedup(p, sc, one, l));
            let best = (1..e.each.len())
                .map(|j| (j, gap(&e, j)))
                .max_by(|a, b| a.1 .0.total_cmp(&b.1 .0).then(a.1 .1.total_cmp(&b.1 .1)));
            if let Some((j, g)) = best {
                out.push((s.clone(), l.clone(), e, j, g));
            }
        }
    }
    out
}

fn band(e: &(f64, Option<(f64, f64)>)) -> String {
    match e.1 {
        Some((lo, hi)) => format!("{:.1}x ({lo:.1}-{hi:.1})", e.0),
        None => format!("{:.1}x", e.0),
    }
}

/// The measurement that would tell the leading explanation from its rivals (None
/// with one explanation).
pub fn tell_apart(cal: &Calibration) -> Option<TellApart> {
    if cal.rivals.len() < 2 {
        return None;
    }
    let all = candidates(cal);
    let decisive = all.iter().filter(|c| c.4 .0 > 0.0).min_by(|a, b| {
        a.1.threads
            .cmp(&b.1.threads)
            .then(b.4 .0.total_cmp(&a.4 .0))
    });
    let widest = all.iter().max_by(|a, b| a.4 .1.total_cmp(&b.4 .1));
    let (s, l, e, j, g) = decisive.or(widest)?;
    let describe_of = |i: usize| describe(&cal.rivals[i].free, &cal.rivals[i].fit.params);
    let sentence = if g.1 < 0.02 {
        format!("No layout of the calibration machine ({}) tells them apart: they agree within 2% on every placement and thread count it has; the first point on another NUMA node or package of the target will.", cal.topo.summary())
    } else {
        format!(
            "To tell them apart, measure {} thread(s) under {s} on the calibration machine ({} NUMA node(s)): with {} the speedup there is {}; with {}, {}{}.",
            l.threads,
            l.nodes.len(),
            describe_of(0),
            band(&e.each[0]),
            describe_of(*j),
            band(&e.each[*j]),
            if g.0 > 0.0 { "" } else { " (the bands overlap there: the point narrows the choice without deciding it)" }
        )
    };
    Some(TellApart {
        placement: s.clone(),
        threads: l.threads,
        numa_nodes: l.nodes.len(),
        speedups: e.each.clone(),
        decisive: g.0 > 0.0 && g.1 >= 0.02,
        sentence,
    })
}

/// The sentences the assumptions gain from rival explanations: what fits the
/// calibration about equally, how the band and the central line are made, what
/// would tell them apart, and the `mem stream` check of a memory limit.
pub fn sentences(cal: &Calibration, tell: Option<&TellApart>) -> Vec<String> {
    if cal.rivals.len() < 2 {
        return Vec::new();
    }
    let list: Vec<String> = cal
        .rivals
        .iter()
        .map(|r| {
            format!(
                "{} (weight {:.2})",
                describe(&r.free, &r.fit.params),
                r.weight
            )
        })
        .collect();
    let scored = cal.rivals.iter().any(|r| r.aicc.is_some());
    let how = if scored && cal.coverage.fewest_reps >= 2 {
        format!("within {RIVAL_AICC} of the best AICc, or not rejected by lack of fit against the repetitions")
    } else if scored {
        format!("within {RIVAL_AICC} of the best AICc; one repetition measures no noise to test them against")
    } else {
        "equally well: too few points to score them".to_string()
    };
    let mut v = vec![format!(
        "{} explanations fit the calibration about equally ({how}): {}. The band covers each; the central line is their Akaike-weighted average.",
        cal.rivals.len(),
        list.join("; ")
    )];
    v.extend(tell.map(|t| t.sentence.clone()));
    let memory = cal
        .rivals
        .iter()
        .any(|r| r.free.bandwidth || r.free.mem_time);
    if memory {
        v.push(format!("`scalescope mem stream` on one NUMA node gives its bandwidth ceiling: if the program's own traffic at {} thread(s) on one node (the sampler's bandwidth evidence, or a GB/s figure of merit) is near it, a memory limit explains the bend; far below it, it does not.", cal.coverage.max_per_node));
    }
    v
}
