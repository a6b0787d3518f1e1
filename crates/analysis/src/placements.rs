//! Placements against each other: the hyper-threading yield like with like (the
//! same N cores with one thread each, cores-first at N, and with two, smt-pairs at
//! 2N) and, at each thread count, the best placement against the worst with a
//! bootstrap interval, Welch's t-test, and whether their runs alternated in time.

use std::collections::{BTreeMap, BTreeSet};

use scalescope_model::store::{Header, RunRecord};
use scalescope_place::{place, MemPolicy, PlaceRequest, Strategy};
use scalescope_topo::Topology;

use crate::boot;
use crate::curve::ok_runs;
use crate::stats::summarize;
use crate::{Basis, PlacementComparison, SmtPair, SmtYield};

/// The physical cores `threads` threads use under `s`.
fn cores(topo: &Topology, s: &Strategy, threads: usize) -> Option<BTreeSet<usize>> {
    let p = place(topo, &PlaceRequest::new(s.clone(), threads)).ok()?;
    p.first_cpus()
        .into_iter()
        .map(|c| topo.pu(c).and_then(|pu| pu.core))
        .collect()
}

fn perfs(records: &[RunRecord], basis: &Basis, t: usize, s: &Strategy, m: &MemPolicy) -> Vec<f64> {
    ok_runs(records, t, s, m)
        .iter()
        .filter_map(|r| basis.perf(r))
        .collect()
}

fn smt_pair(
    topo: &Topology,
    records: &[RunRecord],
    basis: &Basis,
    n: usize,
    mem: &MemPolicy,
) -> Option<SmtPair> {
    let one = perfs(records, basis, n, &Strategy::CoresFirst, mem);
    let two = perfs(records, basis, 2 * n, &Strategy::SmtPairs, mem);
    if one.is_empty() || two.is_empty() {
        return None;
    }
    let c1 = cores(topo, &Strategy::CoresFirst, n)?;
    if c1.len() != n || cores(topo, &Strategy::SmtPairs, 2 * n)? != c1 {
        return None;
    }
    let (ratio, ci95, _) = boot::interval(&[one.clone(), two.clone()], n as u64, |m| m[1] / m[0]);
    let med = |v: &[f64]| summarize(v).map_or(f64::NAN, |s| s.median);
    Some(SmtPair {
        cores: n,
        mem: mem.clone(),
        one_per_core: med(&one),
        two_per_core: med(&two),
        ratio,
        ci95,
        runs: one.len().min(two.len()),
    })
}

pub(crate) fn smt_yield(
    topo: &Topology,
    header: &Header,
    records: &[RunRecord],
    basis: &Basis,
) -> SmtYield {
    let unavailable = |why: String| SmtYield {
        pairs: Vec::new(),
        ratio: None,
        unavailable: Some(why),
    };
    if topo.max_threads_per_core() < 2 {
        return unavailable("unavailable here: the machine that ran the sweep has no SMT (one hardware thread per core)".into());
    }
    let pl = &header.plan.placements;
    if !(pl.contains(&Strategy::CoresFirst) && pl.contains(&Strategy::SmtPairs)) {
        return unavailable("the yield compares the same cores with one and two threads each: sweep both cores-first (at N) and smt-pairs (at 2N)".into());
    }
    let mut pairs: Vec<SmtPair> = header
        .plan
        .mems
        .iter()
        .flat_map(|m| header.plan.threads.iter().map(move |&n| (n, m)))
        .filter_map(|(n, m)| smt_pair(topo, records, basis, n, m))
        .collect();
    pairs.sort_by_key(|p| p.cores);
    match pairs.last() {
        Some(p) => SmtYield {
            ratio: Some(p.ratio),
            pairs,
            unavailable: None,
        },
        None => unavailable("no thread count N has both cores-first at N and smt-pairs at 2N on the same cores; add the pair (e.g. N = the cores of one package)".into()),
    }
}

/// Whether the runs of two placements alternate in time: each one's runs are not
/// all before the other's.
fn interleaved(a: &[&RunRecord], b: &[&RunRecord]) -> bool {
    let span = |v: &[&RunRecord]| {
        v.iter()
            .map(|r| r.started_unix_secs)
            .fold((f64::MAX, f64::MIN), |(lo, hi), t| (lo.min(t), hi.max(t)))
    };
    let ((a0, a1), (b0, b1)) = (span(a), span(b));
    // Imported or synthetic results carry no times: nothing to judge, say yes.
    (a0 == a1 && b0 == b1 && a0 == b0) || (a0 < b1 && b0 < a1)
}

fn compare_at(
    header: &Header,
    records: &[RunRecord],
    basis: &Basis,
    t: usize,
    mem: &MemPolicy,
) -> Option<PlacementComparison> {
    let per: Vec<(&Strategy, Vec<f64>)> = header
        .plan
        .placements
        .iter()
        .map(|pl| (pl, perfs(records, basis, t, pl, mem)))
        .filter(|(_, v)| !v.is_empty())
        .collect();
    if per.len() < 2 {
        return None;
    }
    let med: BTreeMap<String, f64> = per
        .iter()
        .map(|(k, v)| (k.to_string(), summarize(v).map_or(f64::NAN, |s| s.median)))
        .collect();
    let by = |better: bool| {
        per.iter()
            .max_by(|a, b| {
                let (x, y) = (med[&a.0.to_string()], med[&b.0.to_string()]);
                if better {
                    x.total_cmp(&y)
                } else {
                    y.total_cmp(&x)
                }
            })
            .map(|(s, v)| (*s, v.clone()))
    };
    let ((best, bv), (worst, wv)) = (by(true)?, by(false)?);
    let (ratio, ci95, _) = boot::interval(&[wv.clone(), bv.clone()], t as u64, |m| m[1] / m[0]);
    let p_value = crate::stats::welch_t_test(&bv, &wv).map(|w| w.p_value);
    Some(PlacementComparison {
        threads: t,
        mem: mem.clone(),
        ratio,
        ci95,
        significant: p_value.is_some_and(|p| p < 0.05),
        p_value,
        interleaved: interleaved(
            &ok_runs(records, t, best, mem),
            &ok_runs(records, t, worst, mem),
        ),
        runs: bv.len().min(wv.len()),
        perf: med,
        best: best.to_string(),
        worst: worst.to_string(),
    })
}

pub(crate) fn compare_placements(
    header: &Header,
    records: &[RunRecord],
    basis: &Basis,
) -> Vec<PlacementComparison> {
    if header.plan.placements.len() < 2 {
        return Vec::new();
    }
    header
        .plan
        .mems
        .iter()
        .flat_map(|m| header.plan.threads.iter().map(move |&t| (t, m)))
        .filter_map(|(t, m)| compare_at(header, records, basis, t, m))
        .collect()
}
