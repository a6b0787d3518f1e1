//! The sampler's evidence per point: medians over a point's measured runs of the
//! cross-node traffic, bandwidth, CPU use, resident pages per node and NUMA
//! counters; the threads that sat idle or shared a CPU, named; and, where a source
//! was unavailable, why.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use scalescope_model::evidence::RunEvidence;
use scalescope_model::plan::Point;
use scalescope_model::store::{RunRecord, RunStatus};

use crate::stats::median;

/// What the sampler saw at one point (medians over its measured `ok` runs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointEvidence {
    #[serde(flatten)]
    pub point: Point,
    pub runs: usize,
    /// Bytes that crossed between nodes (resctrl: total - local), and its source.
    pub cross_node_bytes: Option<f64>,
    /// Why there is no cross-node traffic figure, when there is none.
    pub cross_node_unavailable: Option<String>,
    pub bandwidth_source: Option<String>,
    /// Per domain (socket or L3 domain): median of mean, highest peak, in bytes/s.
    pub bandwidth_mean: BTreeMap<u32, f64>,
    pub bandwidth_peak: BTreeMap<u32, f64>,
    pub bandwidth_unavailable: Option<String>,
    /// Busy share of the run's CPUs (`/proc/stat`) and the run's own share.
    pub cpu_busy_mean: Option<f64>,
    pub run_share_mean: Option<f64>,
    /// Share of the run's CPU time the hypervisor gave to others (`steal`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_share: Option<f64>,
    /// Resident bytes per node at the peak (median run's).
    pub peak_bytes_per_node: BTreeMap<u32, u64>,
    /// numastat over the run, summed over nodes (pages).
    pub other_node_pages: Option<f64>,
    pub numa_miss_pages: Option<f64>,
    /// Per-run PMU totals: name -> median, and why a counter was unavailable.
    pub pmu: BTreeMap<String, f64>,
    pub pmu_unavailable: BTreeMap<String, String>,
    /// Threads that sat idle while others worked, and threads that ran on a CPU
    /// another running thread of the run was on, each named with its numbers.
    pub idle_threads: Vec<String>,
    pub shared_cpu_threads: Vec<String>,
    /// The sampler's highest cost over the point's runs (fraction of wall time).
    pub sampler_fraction_max: f64,
}

/// The median of unsorted values, `None` for none.
fn med(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then(|| median(&v))
}

/// One entry per point that has runs with evidence, in plan order of `records`.
pub fn summarize(records: &[RunRecord]) -> Vec<PointEvidence> {
    let mut by_point: BTreeMap<&Point, Vec<&RunEvidence>> = BTreeMap::new();
    for r in records
        .iter()
        .filter(|r| !r.warmup && r.status == RunStatus::Ok)
    {
        if let Some(e) = &r.evidence {
            by_point.entry(&r.point).or_default().push(e);
        }
    }
    by_point
        .into_iter()
        .map(|(p, runs)| point_evidence(p, &runs))
        .collect()
}

fn point_evidence(point: &Point, runs: &[&RunEvidence]) -> PointEvidence {
    let bw: Vec<_> = runs.iter().filter_map(|e| e.bandwidth.value()).collect();
    let first_why = |f: &dyn Fn(&RunEvidence) -> Option<String>| runs.iter().find_map(|e| f(e));
    let mut mean: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    let mut peak: BTreeMap<u32, f64> = BTreeMap::new();
    for b in &bw {
        for d in &b.domains {
            mean.entry(d.domain).or_default().push(d.mean_bytes_per_sec);
            let p = peak.entry(d.domain).or_insert(0.0);
            *p = p.max(d.peak_bytes_per_sec);
        }
    }
    let cross: Vec<f64> = bw
        .iter()
        .filter_map(|b| b.cross_node_bytes.map(|c| c as f64))
        .collect();
    let cross_node_unavailable = cross.is_empty().then(|| {
        first_why(&|e| e.bandwidth.why().map(str::to_string)).unwrap_or_else(|| {
            "the bandwidth source counts the whole socket and cannot split local from remote traffic".into()
        })
    });
    let pages = median_pages(runs);
    let (pmu, pmu_unavailable) = pmu(runs);
    let (idle_threads, shared_cpu_threads) = threads(runs);
    PointEvidence {
        point: point.clone(),
        runs: runs.len(),
        cross_node_bytes: med(cross),
        cross_node_unavailable,
        bandwidth_source: bw.first().map(|b| b.source.clone()),
        bandwidth_mean: mean
            .into_iter()
            .filter_map(|(d, v)| Some((d, med(v)?)))
            .collect(),
        bandwidth_peak: peak,
        bandwidth_unavailable: first_why(&|e| e.bandwidth.why().map(str::to_string)),
        cpu_busy_mean: med(runs
            .iter()
            .filter_map(|e| Some(e.cpu.value()?.busy_mean))
            .collect()),
        run_share_mean: med(runs
            .iter()
            .filter_map(|e| e.cpu.value()?.run_share_mean)
            .collect()),
        steal_share: med(runs
            .iter()
            .filter_map(|e| e.cpu.value()?.steal_share)
            .collect()),
        peak_bytes_per_node: pages,
        other_node_pages: med(runs
            .iter()
            .filter_map(|e| e.other_node_pages().map(|p| p as f64))
            .collect()),
        numa_miss_pages: med(runs
            .iter()
            .filter_map(|e| {
                Some(
                    e.numastat
                        .value()?
                        .values()
                        .map(|c| c.numa_miss)
                        .sum::<u64>() as f64,
                )
            })
            .collect()),
        pmu,
        pmu_unavailable,
        idle_threads,
        shared_cpu_threads,
        sampler_fraction_max: runs
            .iter()
            .map(|e| e.sampler.fraction_of_wall)
            .fold(0.0, f64::max),
    }
}

/// The peak bytes per node of the run with the median total.
fn median_pages(runs: &[&RunEvidence]) -> BTreeMap<u32, u64> {
    let mut v: Vec<&BTreeMap<u32, u64>> = runs
        .iter()
        .filter_map(|e| e.peak_bytes_per_node())
        .collect();
    v.sort_by_key(|m| m.values().sum::<u64>());
    v.get(v.len() / 2).map(|m| (*m).clone()).unwrap_or_default()
}

fn pmu(runs: &[&RunEvidence]) -> (BTreeMap<String, f64>, BTreeMap<String, String>) {
    let mut counts: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut why: BTreeMap<String, String> = BTreeMap::new();
    for c in runs.iter().flat_map(|e| &e.pmu) {
        match (c.count.value(), c.count.why()) {
            (Some(v), _) => counts.entry(c.name.clone()).or_default().push(*v as f64),
            (None, Some(w)) => {
                why.entry(c.name.clone()).or_insert_with(|| w.to_string());
            }
            _ => {}
        }
    }
    why.retain(|k, _| !counts.contains_key(k));
    (
        counts
            .into_iter()
            .filter_map(|(k, v)| Some((k, med(v)?)))
            .collect(),
        why,
    )
}

/// A thread is idle when it was seen in at least 3 samples, used under 10% of a CPU,
/// and the run's busiest thread used over half of one; the main thread of each
/// process is left out (it often only waits for its workers). A thread shared a CPU
/// when it ran beside another running thread of the run in half its samples or more.
fn threads(runs: &[&RunEvidence]) -> (Vec<String>, Vec<String>) {
    let mut idle = Vec::new();
    let mut shared = Vec::new();
    for e in runs {
        let busiest = e.threads.iter().filter_map(|t| t.busy).fold(0.0, f64::max);
        for t in e
            .threads
            .iter()
            .filter(|t| t.tid != t.pid && t.samples >= 3)
        {
            if busiest >= 0.5 && t.busy.is_some_and(|b| b < 0.1) && idle.len() < 8 {
                idle.push(format!(
                    "thread {} ({}) used {:.0}% of a CPU over {:.1} s while the busiest used {:.0}% (CPUs {})",
                    t.tid,
                    t.comm,
                    t.busy.unwrap_or(0.0) * 100.0,
                    t.last_seen_secs - t.first_seen_secs,
                    busiest * 100.0,
                    t.cpus_seen
                ));
            }
            if t.shared_cpu_samples * 2 >= t.samples && shared.len() < 8 {
                shared.push(format!(
                    "thread {} ({}) ran beside another thread of the run on the same CPU in {} of {} samples (CPUs {}, {} migrations)",
                    t.tid, t.comm, t.shared_cpu_samples, t.samples, t.cpus_seen, t.migrations
                ));
            }
        }
    }
    (idle, shared)
}
