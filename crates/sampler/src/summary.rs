//! Turning a run's samples into its per-run totals.

use std::collections::BTreeMap;

use scalescope_model::evidence::{
    BandwidthEvidence, CpuEvidence, DomainRate, DomainTraffic, Measured, NumaCounters,
    PagesEvidence, PmuCount, RunEvidence, SamplerCost, ThreadEvidence, MAX_THREADS_KEPT,
};

use crate::bandwidth::DomainReading;
use crate::procfs::{self, CpuTicks};
use crate::Sampler;

/// Resident bytes per node: the sample with the most, and the last.
#[derive(Debug, Default)]
pub(crate) struct PagesAcc {
    peak: Option<(u64, BTreeMap<u32, u64>)>,
    last: Option<BTreeMap<u32, u64>>,
    samples: usize,
}

impl PagesAcc {
    pub(crate) fn add(&mut self, per_node: &BTreeMap<u32, u64>) {
        let total: u64 = per_node.values().sum();
        if self.peak.as_ref().is_none_or(|(t, _)| total > *t) {
            self.peak = Some((total, per_node.clone()));
        }
        self.last = Some(per_node.clone());
        self.samples += 1;
    }
}

/// Peak rate per domain.
#[derive(Debug, Default)]
pub(crate) struct BandwidthAcc {
    peak: BTreeMap<u32, f64>,
}

impl BandwidthAcc {
    pub(crate) fn add(&mut self, rates: &[DomainRate]) {
        for r in rates {
            let p = self.peak.entry(r.domain).or_insert(0.0);
            *p = p.max(r.bytes_per_sec);
        }
    }
}

/// The readings taken after the run ended.
pub(crate) struct End {
    pub stat: BTreeMap<u32, CpuTicks>,
    pub numastat: Result<BTreeMap<u32, NumaCounters>, String>,
    pub pmu: Vec<PmuCount>,
    pub bandwidth_total: Option<Vec<DomainReading>>,
}

pub(crate) fn evidence(
    s: &Sampler,
    end: End,
    wall_secs: f64,
    run_cpu_secs: Option<f64>,
    series_file: Option<String>,
) -> RunEvidence {
    let cost = s.cost.as_secs_f64();
    RunEvidence {
        interval_ms: s.cfg.interval.as_secs_f64() * 1e3,
        samples: s.series.samples.len(),
        series_file,
        sampler: SamplerCost {
            cpu_secs: cost,
            fraction_of_wall: if wall_secs > 0.0 { cost / wall_secs } else { 0.0 },
        },
        cpu: cpu(s, &end.stat, wall_secs, run_cpu_secs),
        threads: threads(s),
        pages: match (&s.pages.peak, &s.pages.last) {
            (Some((_, peak)), Some(last)) => Measured::Measured(PagesEvidence {
                peak_bytes_per_node: peak.clone(),
                last_bytes_per_node: last.clone(),
                samples: s.pages.samples,
            }),
            _ if s.series.samples.is_empty() => Measured::Unavailable(
                "the run ended before its first sample; a shorter sampling interval would catch it"
                    .into(),
            ),
            _ => Measured::Unavailable(format!(
                "no /proc/PID/numa_maps could be read under {} (a kernel without NUMA support, or the processes ended first)",
                s.cfg.root.display()
            )),
        },
        numastat: match (&s.numastat_start, end.numastat) {
            (Ok(start), Ok(now)) => Measured::Measured(crate::procfs::deltas(start, &now)),
            (Err(why), _) => Measured::Unavailable(why.clone()),
            (_, Err(why)) => Measured::Unavailable(why),
        },
        bandwidth: bandwidth(s, end.bandwidth_total, wall_secs),
        pmu: end.pmu,
    }
}

fn cpu(
    s: &Sampler,
    stat: &BTreeMap<u32, CpuTicks>,
    wall_secs: f64,
    run_cpu_secs: Option<f64>,
) -> Measured<CpuEvidence> {
    let per_cpu = procfs::busy_between(&s.stat_start, stat, &s.cfg.cpus);
    if per_cpu.is_empty() {
        return Measured::Unavailable(format!(
            "{} holds no counters for CPUs {} (or no tick passed during the run)",
            s.cfg.root.join("proc/stat").display(),
            s.cfg.cpus
        ));
    }
    let n = s.cfg.cpus.len().max(1) as f64;
    Measured::Measured(CpuEvidence {
        cpus: s.cfg.cpus.clone(),
        busy_mean: per_cpu.values().sum::<f64>() / per_cpu.len() as f64,
        busy_per_cpu: per_cpu,
        run_share_mean: run_cpu_secs
            .filter(|_| wall_secs > 0.0)
            .map(|c| (c / (wall_secs * n)).min(1.0)),
        steal_share: procfs::steal_between(&s.stat_start, stat, &s.cfg.cpus),
    })
}

fn threads(s: &Sampler) -> Vec<ThreadEvidence> {
    let tps = s.ticks_per_sec;
    let mut out: Vec<ThreadEvidence> = s
        .threads
        .iter()
        .map(|(tid, t)| {
            let (t_last, u, st) = t.last;
            let span = t_last - t.first.0;
            ThreadEvidence {
                pid: t.pid,
                tid: *tid,
                comm: t.comm.clone(),
                cpus_seen: t.cpus_seen.clone(),
                migrations: t.migrations,
                user_secs: u as f64 / tps,
                sys_secs: st as f64 / tps,
                first_seen_secs: t.first.0,
                last_seen_secs: t_last,
                busy: (span > 0.0)
                    .then(|| ((u + st).saturating_sub(t.first.1) as f64 / tps / span).min(1.0)),
                shared_cpu_samples: t.shared_cpu_samples,
                samples: t.samples,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        (b.user_secs + b.sys_secs)
            .total_cmp(&(a.user_secs + a.sys_secs))
            .then(a.tid.cmp(&b.tid))
    });
    out.truncate(MAX_THREADS_KEPT);
    out
}

fn bandwidth(
    s: &Sampler,
    total: Option<Vec<DomainReading>>,
    wall_secs: f64,
) -> Measured<BandwidthEvidence> {
    let source = match &s.bandwidth {
        Ok(b) => b,
        Err(why) => return Measured::Unavailable(why.clone()),
    };
    let (Some(first), Some(last)) = (&s.bw_first, total) else {
        return Measured::Unavailable(format!("{} gave no reading", source.name()));
    };
    let domains: Vec<DomainTraffic> = last
        .iter()
        .filter_map(|end| {
            let start = first.iter().find(|f| f.domain == end.domain)?;
            let total_bytes = end.total_bytes.saturating_sub(start.total_bytes);
            let local_bytes = end
                .local_bytes
                .zip(start.local_bytes)
                .map(|(e, b)| e.saturating_sub(b).min(total_bytes));
            Some(DomainTraffic {
                domain: end.domain,
                total_bytes,
                local_bytes,
                remote_bytes: local_bytes.map(|l| total_bytes - l),
                mean_bytes_per_sec: if wall_secs > 0.0 {
                    total_bytes as f64 / wall_secs
                } else {
                    0.0
                },
                peak_bytes_per_sec: s.bw_acc.peak.get(&end.domain).copied().unwrap_or(0.0),
            })
        })
        .collect();
    let cross_node_bytes = domains
        .iter()
        .map(|d| d.remote_bytes)
        .sum::<Option<u64>>()
        .filter(|_| !domains.is_empty());
    Measured::Measured(BandwidthEvidence {
        source: source.name().to_string(),
        scope: source.scope().to_string(),
        domains,
        cross_node_bytes,
    })
}
