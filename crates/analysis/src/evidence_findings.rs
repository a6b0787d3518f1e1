//! Findings decided by the sampler's evidence rather than by coincidence with the
//! topology: a knee at a socket or NUMA boundary where cross-node traffic rises by
//! an order of magnitude or more is remote memory (the numbers quoted); bandwidth
//! that stays at the sweep's measured ceiling while speedup flattens is
//! saturation; threads that sat idle or shared a CPU are named. Where no source
//! measured what would decide a knee, the finding says which measurement would and
//! why it was unavailable.

use scalescope_place::{MemPolicy, Strategy};

use crate::evidence::PointEvidence;
use crate::finding::{Boundary, Evidence, EvidenceItem, Finding, FindingKind, Severity};
use crate::Curve;

/// Cross-node traffic must grow by this factor across a knee to be called its cause.
pub const REMOTE_FACTOR: f64 = 10.0;
/// Bandwidth within this fraction of the sweep's highest counts as at the ceiling.
pub const CEILING_SHARE: f64 = 0.9;

/// What the evidence says about one knee.
#[derive(Debug, Clone, PartialEq)]
pub struct KneeVerdict {
    /// The knee is explained by remote memory (traffic rose by >= [`REMOTE_FACTOR`]).
    pub remote_memory: bool,
    /// Cross-node bytes before and after the knee, where measured.
    pub cross_node: Option<(f64, f64)>,
    /// Sentences with the numbers.
    pub evidence: Vec<String>,
    /// Which measurement would decide it and why it was unavailable, when none did.
    pub check: Option<String>,
}

fn at<'a>(
    ev: &'a [PointEvidence],
    placement: &Strategy,
    mem: &MemPolicy,
    threads: usize,
) -> Option<&'a PointEvidence> {
    ev.iter().find(|p| {
        p.point.threads == threads && &p.point.placement == placement && &p.point.mem == mem
    })
}

fn mb(b: f64) -> String {
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else {
        format!("{:.1} MB", b / 1e6)
    }
}

fn nodes(p: &PointEvidence) -> String {
    p.peak_bytes_per_node
        .iter()
        .map(|(n, b)| format!("node {n}: {:.0} MiB", *b as f64 / (1 << 20) as f64))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The evidence about a knee between `before` and `after` threads of one curve
/// whose boundary is a socket or NUMA node; `None` when the sweep has no evidence
/// for those points.
pub fn knee_verdict(
    ev: &[PointEvidence],
    placement: &Strategy,
    mem: &MemPolicy,
    before: usize,
    after: usize,
) -> Option<KneeVerdict> {
    let (b, a) = (
        at(ev, placement, mem, before)?,
        at(ev, placement, mem, after)?,
    );
    let mut evidence = Vec::new();
    let cross_node = b.cross_node_bytes.zip(a.cross_node_bytes);
    let remote_memory = cross_node.is_some_and(|(x, y)| y >= REMOTE_FACTOR * x.max(1.0));
    if let Some((x, y)) = cross_node {
        evidence.push(format!(
            "cross-node memory traffic {} at {before} threads, {} at {after} ({}x; {})",
            mb(x),
            mb(y),
            if x > 0.0 {
                format!("{:.0}", y / x)
            } else {
                "from zero".into()
            },
            a.bandwidth_source.as_deref().unwrap_or("measured")
        ));
    }
    if let (Some(x), Some(y)) = (b.other_node_pages, a.other_node_pages) {
        evidence.push(format!(
            "pages the kernel allocated off their preferred node (numastat other_node, system-wide): {x:.0} at {before} threads, {y:.0} at {after}"
        ));
    }
    if !a.peak_bytes_per_node.is_empty() {
        evidence.push(format!("resident memory at {after} threads: {}", nodes(a)));
    }
    let check = cross_node.is_none().then(|| {
        format!(
            "cross-node traffic at {before} and {after} threads would decide it (resctrl MBM: total - local bytes of the run's tasks; or uncore memory-controller counts per socket); unavailable here: {}",
            a.cross_node_unavailable.as_deref().unwrap_or("no source")
        )
    });
    Some(KneeVerdict {
        remote_memory,
        cross_node,
        evidence,
        check,
    })
}

/// Bandwidth saturation on one curve: the first thread count from which the
/// sampled bandwidth (all domains) stays within [`CEILING_SHARE`] of the sweep's
/// highest, with that ceiling; `None` without bandwidth evidence.
pub fn saturation(
    ev: &[PointEvidence],
    placement: &Strategy,
    mem: &MemPolicy,
) -> Option<(usize, f64, f64)> {
    let ceiling = ev
        .iter()
        .map(|p| p.bandwidth_mean.values().sum::<f64>())
        .fold(0.0, f64::max);
    if ceiling <= 0.0 {
        return None;
    }
    let curve: Vec<(usize, f64)> = ev
        .iter()
        .filter(|p| &p.point.placement == placement && &p.point.mem == mem)
        .filter(|p| !p.bandwidth_mean.is_empty())
        .map(|p| (p.point.threads, p.bandwidth_mean.values().sum()))
        .collect();
    let first = curve
        .iter()
        .position(|(_, bw)| *bw >= CEILING_SHARE * ceiling)?;
    // It must stay there, and more than one point must reach it.
    let rest = &curve[first..];
    (rest.len() >= 2 && rest.iter().all(|(_, bw)| *bw >= CEILING_SHARE * ceiling))
        .then(|| (curve[first].0, curve[first].1, ceiling))
}

/// Points whose CPUs other work kept busy: the CPUs' busy share (`/proc/stat`)
/// exceeded the run's own share by at least [`FOREIGN_SHARE`]; (threads, busy, own).
pub fn contention(
    ev: &[PointEvidence],
    placement: &Strategy,
    mem: &MemPolicy,
) -> Vec<(usize, f64, f64)> {
    ev.iter()
        .filter(|p| &p.point.placement == placement && &p.point.mem == mem)
        .filter_map(|p| {
            let (busy, own) = (p.cpu_busy_mean?, p.run_share_mean?);
            (busy - own >= FOREIGN_SHARE).then_some((p.point.threads, busy, own))
        })
        .collect()
}

/// Other work's share of the run's CPUs from which it is reported.
pub const FOREIGN_SHARE: f64 = 0.3;

/// Points at which the hypervisor took at least [`STEAL_SHARE`] of the run's CPU
/// time (`steal` in `/proc/stat`); (threads, share).
pub fn stolen(ev: &[PointEvidence], placement: &Strategy, mem: &MemPolicy) -> Vec<(usize, f64)> {
    ev.iter()
        .filter(|p| &p.point.placement == placement && &p.point.mem == mem)
        .filter_map(|p| Some((p.point.threads, p.steal_share?)))
        .filter(|(_, s)| *s >= STEAL_SHARE)
        .collect()
}

/// Stolen share of the run's CPU time from which it is reported: a few percent
/// already bends a speedup curve that is meant to be read to a few percent.
pub const STEAL_SHARE: f64 = 0.02;

/// The warning that the hypervisor took CPU time from the runs of curve `name`.
fn steal_finding(ev: &[PointEvidence], c: &Curve, name: &str) -> Option<Finding> {
    let stolen = stolen(ev, &c.placement, &c.mem);
    if stolen.is_empty() {
        return None;
    }
    let mut f = Finding::new(
        FindingKind::MeasurementQuality,
        Severity::Warning,
        format!("{name}: the hypervisor took CPU time from the runs"),
    );
    f.curve = Some(name.to_string());
    f.evidence = stolen
        .iter()
        .map(|(t, s)| {
            Evidence::note(format!(
                "at {t} threads the hypervisor ran something else for {:.1}% of the run's CPU time (steal, /proc/stat)",
                s * 100.0
            ))
        })
        .collect();
    f.advice = Some("other guests share this host's CPUs: the timings include their turns; use dedicated vCPUs or bare metal, or repeat and compare".into());
    Some(f)
}

/// Named threads that sat idle or ran on a shared CPU, over one curve's points.
pub fn thread_notes(ev: &[PointEvidence], placement: &Strategy, mem: &MemPolicy) -> Vec<String> {
    ev.iter()
        .filter(|p| &p.point.placement == placement && &p.point.mem == mem)
        .flat_map(|p| {
            p.idle_threads
                .iter()
                .chain(&p.shared_cpu_threads)
                .map(move |t| format!("at {} threads: {t}", p.point.threads))
        })
        .take(8)
        .collect()
}

/// Adds the evidence to `findings`: numbers (or the missing measurement) to every
/// knee at a socket or NUMA boundary, and findings of their own for bandwidth
/// saturation and for idle or CPU-sharing threads.
/// `timed_share` is the timed part's median share of a run's wall time
/// (`basis_rule::timed_share`) and the basis of the speedups: what idle threads
/// were waiting for, and whether the speedups include it.
pub(crate) fn add(
    findings: &mut Vec<Finding>,
    curves: &[Curve],
    ev: &[PointEvidence],
    timed_share: Option<TimedShare>,
) {
    if ev.is_empty() {
        return;
    }
    for f in findings.iter_mut().filter(|f| {
        f.kind == FindingKind::Knee && matches!(f.boundary, Boundary::Numa | Boundary::Package)
    }) {
        let Some((c, knee)) = curves.iter().find_map(|c| {
            let name = format!("{} / {}", c.placement, c.mem);
            let k = c
                .knees
                .iter()
                .find(|k| Some(k.knee.threads) == f.after_threads)?;
            (f.curve.as_deref() == Some(name.as_str())).then_some((c, k))
        }) else {
            continue;
        };
        if let Some(v) = knee_verdict(
            ev,
            &c.placement,
            &c.mem,
            knee.knee.threads,
            knee.knee.next_threads,
        ) {
            attach(f, knee.knee.threads, knee.knee.next_threads, v);
        }
    }
    for c in curves {
        let name = format!("{} / {}", c.placement, c.mem);
        findings.extend(saturation_finding(ev, c, &name));
        findings.extend(steal_finding(ev, c, &name));
        let busy = contention(ev, &c.placement, &c.mem);
        if !busy.is_empty() {
            let mut f = Finding::new(
                FindingKind::MeasurementQuality,
                Severity::Warning,
                format!("{name}: other work used the run's CPUs"),
            );
            f.curve = Some(name.clone());
            f.evidence = busy
                .iter()
                .map(|(t, b, o)| {
                    Evidence::note(format!(
                        "at {t} threads the run's CPUs were {:.0}% busy but the run itself used {:.0}% of them (/proc/stat against its own CPU time)",
                        b * 100.0,
                        o * 100.0
                    ))
                })
                .collect();
            f.advice = Some("the timings include waiting for other processes: repeat on an idle machine or on CPUs nothing else uses".into());
            findings.push(f);
        }
        findings.extend(threads_finding(ev, c, name, timed_share));
    }
}

/// The timed part's median share of a run's wall time, and whether the speedups
/// are of wall time (which then includes the untimed part).
#[derive(Debug, Clone, Copy)]
pub(crate) struct TimedShare {
    pub share: f64,
    pub basis_is_time: bool,
}

/// Threads that sat idle or shared a CPU over curve `name`'s points. Where the
/// timed part is a small share of each run (under `basis_rule::SMALL_SHARE`), the
/// workers idled through the run's untimed, one-thread part (preparing, loading,
/// checking the input): the advice says so instead of blaming the timed part's
/// barriers, which nothing measured.
fn threads_finding(
    ev: &[PointEvidence],
    c: &Curve,
    name: String,
    timed_share: Option<TimedShare>,
) -> Option<Finding> {
    let notes = thread_notes(ev, &c.placement, &c.mem);
    if notes.is_empty() {
        return None;
    }
    let mut f = Finding::new(
        FindingKind::Threads,
        Severity::Notice,
        format!("{name}: threads that sat idle or shared a CPU"),
    );
    f.curve = Some(name);
    f.evidence = notes.into_iter().map(Evidence::note).collect();
    f.advice = Some(match timed_share.filter(|s| s.share < crate::basis_rule::SMALL_SHARE) {
        Some(t) => format!(
            "the timed part is {:.0}% of these runs' wall time (median): the rest, preparing, loading and checking the input, is where workers wait for one thread; {}",
            t.share * 100.0,
            if t.basis_is_time {
                "the speedups here are of wall time, so this idling is in them (`--basis metric:NAME` gives the timed part's own)"
            } else {
                "the speedups here are the timed part's own, so this idling is not in them; a run's whole time scales only if that part does"
            }
        ),
        None => "a starved or doubled-up thread holds the others at every barrier: check the placement (`scalescope place`) and the work split".into(),
    });
    Some(f)
}

/// The verdict on a knee, written into its finding.
fn attach(f: &mut Finding, before: usize, after: usize, v: KneeVerdict) {
    match (v.remote_memory, v.cross_node) {
        (true, Some((x, y))) => {
            f.title = format!(
                "{}; remote memory: cross-node traffic {} at {before} threads, {} at {after}",
                f.title,
                mb(x),
                mb(y)
            );
            f.check = None;
        }
        (false, Some((x, y))) => {
            f.title = format!(
                "{}; not remote memory: cross-node traffic only {} -> {}",
                f.title,
                mb(x),
                mb(y)
            );
            f.check = None;
        }
        (_, None) => {
            f.check = Some(match (&f.check, &v.check) {
                (Some(old), Some(new)) => format!("{old}; {new}"),
                (old, new) => old.clone().or(new.clone()).unwrap_or_default(),
            });
        }
    }
    if let Some((x, y)) = v.cross_node {
        f.evidence.push(Evidence::new(
            v.evidence.first().cloned().unwrap_or_default(),
            EvidenceItem::Traffic {
                before_threads: before,
                after_threads: after,
                before_bytes: x,
                after_bytes: y,
            },
        ));
    }
    let skip = usize::from(v.cross_node.is_some());
    f.evidence
        .extend(v.evidence.into_iter().skip(skip).map(Evidence::note));
}

fn saturation_finding(ev: &[PointEvidence], c: &Curve, name: &str) -> Option<Finding> {
    let (t, bw, ceiling) = saturation(ev, &c.placement, &c.mem)?;
    let source = ev
        .iter()
        .find_map(|p| p.bandwidth_source.clone())
        .unwrap_or_default();
    let mut f = Finding::new(
        FindingKind::BandwidthSaturation,
        Severity::Notice,
        format!(
            "{name}: memory bandwidth saturated from {t} threads ({:.2} GB/s, within {:.0}% of the highest measured in this sweep, {:.2} GB/s)",
            bw / 1e9,
            (1.0 - CEILING_SHARE) * 100.0,
            ceiling / 1e9
        ),
    );
    f.curve = Some(name.to_string());
    f.after_threads = Some(t);
    f.boundary = Boundary::Bandwidth;
    f.evidence.push(Evidence::new(
        format!("sampled memory bandwidth ({source}), all domains, median of each point's runs"),
        EvidenceItem::Ceiling {
            source,
            ceiling: ceiling / 1e9,
            reached: bw / 1e9,
            unit: "GB/s".into(),
        },
    ));
    f.advice = Some("more threads will not move more data: reduce traffic (blocking, smaller types), or, where the machine has NUMA nodes this curve does not use, spread the data over them".into());
    Some(f)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use scalescope_model::plan::Point;

    fn point(threads: usize, cross: Option<f64>, bw: f64) -> PointEvidence {
        PointEvidence {
            point: Point {
                threads,
                placement: Strategy::CoresFirst,
                mem: MemPolicy::FirstTouch,
                nodes: None,
            },
            runs: 3,
            cross_node_bytes: cross,
            cross_node_unavailable: cross.is_none().then(|| "no resctrl here".to_string()),
            bandwidth_source: cross.map(|_| "resctrl-mbm".to_string()),
            bandwidth_mean: if bw > 0.0 {
                BTreeMap::from([(0, bw)])
            } else {
                BTreeMap::new()
            },
            bandwidth_peak: BTreeMap::new(),
            bandwidth_unavailable: None,
            cpu_busy_mean: Some(0.9),
            run_share_mean: Some(0.9),
            steal_share: None,
            peak_bytes_per_node: BTreeMap::from([(0, 1 << 30), (1, 1 << 30)]),
            other_node_pages: Some(10.0),
            numa_miss_pages: Some(0.0),
            pmu: BTreeMap::new(),
            pmu_unavailable: BTreeMap::new(),
            idle_threads: Vec::new(),
            shared_cpu_threads: Vec::new(),
            sampler_fraction_max: 0.001,
        }
    }

    #[test]
    fn traffic_rising_by_orders_of_magnitude_is_remote_memory() {
        // The study's numbers: 4.9 MB at 24 threads, 86 GB at 48.
        let ev = [point(24, Some(4.9e6), 0.0), point(48, Some(86e9), 0.0)];
        let v = knee_verdict(&ev, &Strategy::CoresFirst, &MemPolicy::FirstTouch, 24, 48).unwrap();
        assert!(v.remote_memory);
        assert!(
            v.evidence[0].contains("4.9 MB at 24 threads, 86.0 GB at 48"),
            "{:?}",
            v.evidence
        );
        assert!(v.check.is_none());
        let mut f = Finding::new(
            FindingKind::Knee,
            Severity::Warning,
            "cores-first / first-touch: knee",
        );
        f.check = Some("sweep with --mem interleave".into());
        attach(&mut f, 24, 48, v);
        assert!(
            f.title.contains(
                "; remote memory: cross-node traffic 4.9 MB at 24 threads, 86.0 GB at 48"
            ),
            "{}",
            f.title
        );
        assert!(f.check.is_none());
        assert!(matches!(
            f.evidence[0].item,
            EvidenceItem::Traffic {
                after_threads: 48,
                ..
            }
        ));

        let flat = [point(24, Some(4.9e6), 0.0), point(48, Some(9e6), 0.0)];
        let v = knee_verdict(&flat, &Strategy::CoresFirst, &MemPolicy::FirstTouch, 24, 48).unwrap();
        assert!(!v.remote_memory);
    }

    #[test]
    fn without_a_source_the_finding_names_the_deciding_measurement() {
        let ev = [point(2, None, 0.0), point(4, None, 0.0)];
        let v = knee_verdict(&ev, &Strategy::CoresFirst, &MemPolicy::FirstTouch, 2, 4).unwrap();
        assert!(!v.remote_memory);
        let check = v.check.unwrap();
        assert!(
            check.contains("resctrl MBM") && check.contains("unavailable here: no resctrl here"),
            "{check}"
        );
        assert!(knee_verdict(&ev, &Strategy::CoresFirst, &MemPolicy::FirstTouch, 2, 8).is_none());
    }

    #[test]
    fn bandwidth_held_at_the_ceiling_is_saturation() {
        let ev = [
            point(1, None, 10e9),
            point(2, None, 19e9),
            point(4, None, 20e9),
            point(8, None, 19.5e9),
        ];
        let (t, bw, ceiling) =
            saturation(&ev, &Strategy::CoresFirst, &MemPolicy::FirstTouch).unwrap();
        assert_eq!((t, bw, ceiling), (2, 19e9, 20e9));
        let rising = [
            point(1, None, 5e9),
            point(2, None, 10e9),
            point(4, None, 20e9),
        ];
        assert!(saturation(&rising, &Strategy::CoresFirst, &MemPolicy::FirstTouch).is_none());
        assert!(saturation(
            &[point(1, None, 0.0)],
            &Strategy::CoresFirst,
            &MemPolicy::FirstTouch
        )
        .is_none());
    }

    #[test]
    fn foreign_work_on_the_run_cpus_is_reported() {
        let mut p = point(2, None, 0.0);
        p.cpu_busy_mean = Some(1.0);
        p.run_share_mean = Some(0.06);
        let q = point(1, None, 0.0);
        let c = contention(&[p, q], &Strategy::CoresFirst, &MemPolicy::FirstTouch);
        assert_eq!(c, vec![(2, 1.0, 0.06)]);
    }

    #[test]
    fn stolen_time_is_reported_from_two_percent() {
        let mut p = point(2, None, 0.0);
        p.steal_share = Some(0.05);
        let mut q = point(1, None, 0.0);
        q.steal_share = Some(0.019);
        let r = point(4, None, 0.0);
        let s = stolen(&[p, q, r], &Strategy::CoresFirst, &MemPolicy::FirstTouch);
        assert_eq!(s, vec![(2, 0.05)]);
    }

    #[test]
    fn idle_and_shared_threads_are_named() {
        let mut p = point(4, None, 0.0);
        p.idle_threads
            .push("thread 12 (worker) used 2% of a CPU".into());
        let notes = thread_notes(&[p], &Strategy::CoresFirst, &MemPolicy::FirstTouch);
        assert_eq!(
            notes,
            vec!["at 4 threads: thread 12 (worker) used 2% of a CPU".to_string()]
        );
    }
}
