//! Core-to-core latency: two threads pinned to two CPUs pass the ownership of one
//! cache line back and forth with compare-and-swap on a flag (one side swaps it from
//! 0 to 1, the other from 1 to 0). One-way latency is a sample's time divided by
//! twice its round trips. This is the protocol and the definition of nviennot's
//! core-to-core-latency (its benchmark 1), so the two are comparable. The line lives in a page bound to a
//! chosen NUMA node. Samples during which the timing thread was involuntarily
//! switched out are dropped (they time the scheduler). Results are summarised by
//! how the two CPUs are related.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::Instant;

use serde::Serialize;

use scalescope_place::MemPolicy;
use scalescope_topo::Topology;

use super::buffer::MmapBuffer;
use crate::pool::Pool;
use crate::WorkloadError;
use scalescope_model::setting::Setting;

/// How two CPUs are related, nearest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Relation {
    SameCore,
    SameL3,
    SamePackage,
    OtherPackage,
}

impl Relation {
    pub fn label(self) -> &'static str {
        match self {
            Relation::SameCore => "same core (SMT siblings)",
            Relation::SameL3 => "same L3",
            Relation::SamePackage => "same package",
            Relation::OtherPackage => "other package",
        }
    }
}

/// The relation between two CPUs on `topo`.
pub fn relation(topo: &Topology, a: u32, b: u32) -> Relation {
    let (pa, pb) = (topo.pu(a), topo.pu(b));
    let same = |f: &dyn Fn(&scalescope_topo::Pu) -> Option<usize>| matches!((pa.and_then(f), pb.and_then(f)), (Some(x), Some(y)) if x == y);
    if same(&|p| p.core) {
        Relation::SameCore
    } else if same(&|p| p.l3) {
        Relation::SameL3
    } else if same(&|p| p.package) {
        Relation::SamePackage
    } else {
        Relation::OtherPackage
    }
}

/// One pair's samples (nanoseconds one-way).
#[derive(Debug, Clone, Serialize)]
pub struct PairLatency {
    pub a: u32,
    pub b: u32,
    pub relation: Relation,
    pub mean_ns: f64,
    pub median_ns: f64,
    pub stddev_ns: f64,
}

/// The matrix and its summary by relation.
#[derive(Debug, Clone, Serialize)]
pub struct C2cMatrix {
    pub cpus: Vec<u32>,
    /// Mean one-way latency; `ns[i][j]` for `cpus[i]`, `cpus[j]`; None on the diagonal.
    pub ns: Vec<Vec<Option<f64>>>,
    pub pairs: Vec<PairLatency>,
    /// (relation, pairs, mean of pair means, min, max).
    pub summary: Vec<(Relation, usize, f64, f64, f64)>,
    pub line_node: Option<u32>,
    pub round_trips: usize,
    pub samples: usize,
}

/// Ping-pong between `a` and `b` on `line`; one-way ns per sample.
fn ping_pong(
    a: u32,
    b: u32,
    line: &AtomicU64,
    round_trips: u64,
    samples: usize,
) -> Result<Vec<f64>, WorkloadError> {
    let pool = Pool::new(
        &[[a].into_iter().collect(), [b].into_iter().collect()],
        None,
    )?;
    line.store(0, Ordering::SeqCst);
    let barrier = Barrier::new(2);
    let out = pool.broadcast(|i| {
        barrier.wait();
        let mut times = Vec::new();
        let (from, to) = if i == 0 { (0, 1) } else { (1, 0) };
        let mut disturbed = Vec::new();
        for _ in 0..samples {
            let before = involuntary_switches();
            let t = Instant::now();
            for _ in 0..round_trips {
                // No PAUSE in the retry loop: it would add its own delay (100+ cycles on
                // recent x86) to every hand-off and measure the hint, not the line.
                while line
                    .compare_exchange(from, to, Ordering::Relaxed, Ordering::Relaxed)
                    .is_err()
                {}
            }
            times.push(t.elapsed().as_nanos() as f64 / round_trips as f64 / 2.0);
            disturbed.push(involuntary_switches() != before);
        }
        // A sample during which this thread was switched out measured the scheduler,
        // not the cache line: drop it (unless that would leave too few).
        let clean: Vec<f64> = times
            .iter()
            .zip(&disturbed)
            .filter(|(_, d)| !**d)
            .map(|(t, _)| *t)
            .collect();
        if clean.len() * 2 >= times.len() {
            clean
        } else {
            times
        }
    });
    Ok(out.into_iter().next().unwrap_or_default())
}

/// Involuntary context switches of the calling thread so far.
fn involuntary_switches() -> i64 {
    // SAFETY: rusage is plain data; getrusage writes it fully.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_THREAD with a valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
    u.ru_nivcsw
}

/// The page the contended line lives on, bound to `node` if one is given.
fn line_buffer(topo: &Topology, node: Option<u32>) -> Result<MmapBuffer, WorkloadError> {
    let buf = MmapBuffer::new(4096).map_err(|e| WorkloadError::Memory {
        what: "the shared line's page".into(),
        detail: e.to_string(),
    })?;
    if let Some(n) = node {
        let p = MemPolicy::Bind(vec![n])
            .resolve(topo)
            .map_err(|e| WorkloadError::BadParam {
                setting: Setting::param("node"),
                detail: e.to_string(),
            })?;
        buf.bind(&p).map_err(|e| WorkloadError::BadParam {
            setting: Setting::param("node"),
            detail: e.to_string(),
        })?;
    }
    Ok(buf)
}

/// Mean, median and sample standard deviation of `s` (sorted in place).
fn mean_median_sd(s: &mut [f64]) -> (f64, f64, f64) {
    let mean = s.iter().sum::<f64>() / s.len() as f64;
    let sd = (s.iter().map(|x| (x - mean).powi(2)).sum::<f64>()
        / s.len().max(2).saturating_sub(1) as f64)
        .sqrt();
    s.sort_by(f64::total_cmp);
    (mean, scalescope_stats::median(s), sd)
}

/// Pairs summarised per relation: count, mean, min and max latency.
fn by_relation(pairs: &[PairLatency]) -> Vec<(Relation, usize, f64, f64, f64)> {
    let mut summary = Vec::new();
    for r in [
        Relation::SameCore,
        Relation::SameL3,
        Relation::SamePackage,
        Relation::OtherPackage,
    ] {
        let v: Vec<f64> = pairs
            .iter()
            .filter(|p| p.relation == r)
            .map(|p| p.mean_ns)
            .collect();
        if !v.is_empty() {
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            summary.push((
                r,
                v.len(),
                mean,
                v.iter().copied().fold(f64::INFINITY, f64::min),
                v.iter().copied().fold(0.0, f64::max),
            ));
        }
    }
    summary
}

/// Measures every pair of `cpus`.
///
/// # Errors
/// Fewer than two CPUs, a bad node, or pinning failures.
pub fn measure(
    topo: &Topology,
    cpus: &[u32],
    node: Option<u32>,
    round_trips: usize,
    samples: usize,
) -> Result<C2cMatrix, WorkloadError> {
    if round_trips == 0 || samples < 2 {
        return Err(WorkloadError::BadParam {
            setting: Setting::param("round_trips"),
            detail:
                "round_trips must be at least 1 and samples at least 2 (the first is a warm-up)"
                    .into(),
        });
    }
    if cpus.len() < 2 {
        return Err(WorkloadError::BadParam {
            setting: Setting::param("cpus"),
            detail: format!(
                "core-to-core latency needs two CPUs; {} usable here",
                cpus.len()
            ),
        });
    }
    let buf = line_buffer(topo, node)?;
    // SAFETY: the page is zeroed and 4096-byte aligned, so its first 8 bytes are a valid,
    // aligned AtomicU64; the buffer outlives every use below.
    let line: &AtomicU64 = unsafe { &*(buf.addr() as *const AtomicU64) };
    let mut ns = vec![vec![None; cpus.len()]; cpus.len()];
    let mut pairs = Vec::new();
    for i in 0..cpus.len() {
        for j in i + 1..cpus.len() {
            let mut s = ping_pong(cpus[i], cpus[j], line, round_trips as u64, samples)?;
            // Warm-up: the first sample pays for page faults and wake-ups.
            if s.len() > 1 {
                s.remove(0);
            }
            let (mean, median, sd) = mean_median_sd(&mut s);
            ns[i][j] = Some(mean);
            ns[j][i] = Some(mean);
            pairs.push(PairLatency {
                a: cpus[i],
                b: cpus[j],
                relation: relation(topo, cpus[i], cpus[j]),
                mean_ns: mean,
                median_ns: median,
                stddev_ns: sd,
            });
        }
    }
    let summary = by_relation(&pairs);
    Ok(C2cMatrix {
        cpus: cpus.to_vec(),
        ns,
        pairs,
        summary,
        line_node: node,
        round_trips,
        samples,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relations_on_a_recorded_shape() {
        let t = scalescope_topo::Source::Synthetic(
            "package:2 l3:1 core:2 pu:2 numbering=smt-last".into(),
        )
        .load()
        .unwrap();
        assert_eq!(relation(&t, 0, 4), Relation::SameCore);
        assert_eq!(relation(&t, 0, 1), Relation::SameL3);
        assert_eq!(relation(&t, 0, 2), Relation::OtherPackage);
        let t = scalescope_topo::Source::Synthetic("package:1 l3:2 core:2".into())
            .load()
            .unwrap();
        assert_eq!(relation(&t, 0, 2), Relation::SamePackage);
    }

    #[test]
    fn two_cpus_ping_pong() {
        let topo = scalescope_topo::Source::Live.load().unwrap();
        let cpus: Vec<u32> = topo.usable_cpus().iter().take(2).collect();
        if cpus.len() < 2 {
            assert!(measure(&topo, &cpus, None, 100, 3).is_err());
            return;
        }
        let m = measure(&topo, &cpus, Some(0), 2000, 5).unwrap();
        let ns = m.ns[0][1].unwrap();
        assert!(ns > 1.0 && ns < 100_000.0, "{ns}");
        assert_eq!(m.summary.len(), 1);
    }
}
