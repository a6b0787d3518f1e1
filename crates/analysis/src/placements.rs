//! Placements against each other: the hyper-threading yield and, at each thread
//! count, the best placement against the worst with Welch's t-test.

use std::collections::BTreeMap;

use scalescope_results::store::{Header, RunRecord};
use scalescope_topo::Topology;

use crate::curve::ok_runs;
use crate::stats::summarize;
use crate::{Basis, Curve, PlacementComparison, SmtYield};

pub(crate) fn smt_yield(topo: &Topology, curves: &[Curve]) -> SmtYield {
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

pub(crate) fn compare_placements(
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
            let p_value =
                crate::welch::welch_t_test(&runs(&best), &runs(&worst)).map(|w| w.p_value);
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
