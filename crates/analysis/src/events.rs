//! Topology events along a placement: the thread counts at which a strategy first
//! uses a second package, another NUMA node or L3 domain, puts two threads on one
//! physical core, keeps every core busy, or runs out of PUs. A knee in a speedup
//! curve is explained by the event it coincides with.

use serde::{Deserialize, Serialize};

use scalescope_place::{place, PlaceRequest, Strategy};
use scalescope_topo::Topology;

/// What happens when the thread count reaches `threads`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    /// One more package (socket) comes into use.
    NewPackage,
    /// One more NUMA node's CPUs come into use (remote memory for shared data).
    NewNumaNode,
    /// One more L3 domain comes into use (inside a package).
    NewL3,
    /// Every physical core has a thread.
    AllCoresBusy,
    /// Two threads share a physical core for the first time (SMT siblings).
    SmtSharing,
    /// More threads than usable PUs.
    Oversubscribed,
    /// One more node of a cluster comes into use: its ranks reach the others over
    /// the interconnect (a launched sweep's node axis).
    NewNode,
}

/// An event and the first thread count at which it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologyEvent {
    pub kind: EventKind,
    pub threads: usize,
    pub description: String,
}

impl TopologyEvent {
    /// The last thread count before the event changes what an added thread gets:
    /// one less than `threads` for an event that holds from `threads` on, and
    /// `threads` itself for "every core busy at `threads`" (the next thread is the
    /// first to share a core or a PU).
    pub fn last_before_change(&self) -> usize {
        match self.kind {
            EventKind::AllCoresBusy => self.threads,
            _ => self.threads - 1,
        }
    }
}

/// The node boundaries along a launched sweep's node axis at `per_node` ranks per
/// node: from rank `(k - 1) * per_node + 1` on, node #k is in use, for every k up
/// to `max_nodes`.
pub fn node_events(per_node: usize, max_nodes: usize) -> Vec<TopologyEvent> {
    (2..=max_nodes)
        .map(|k| {
            let threads = (k - 1) * per_node + 1;
            TopologyEvent {
                kind: EventKind::NewNode,
                threads,
                description: format!(
                    "from {threads} ranks ({per_node} per node), node #{k} is in use: ranks on it reach the others over the interconnect"
                ),
            }
        })
        .collect()
}

/// What a placement of n threads uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    pub packages: usize,
    pub numa_nodes: usize,
    pub l3_domains: usize,
    pub cores: usize,
    /// Some core runs two or more of the threads on distinct PUs (SMT siblings;
    /// threads beyond the PUs sharing one are oversubscription, not this).
    pub smt_shared: bool,
}

fn distinct(v: impl Iterator<Item = Option<usize>>) -> usize {
    let mut v: Vec<usize> = v.flatten().collect();
    v.sort_unstable();
    v.dedup();
    v.len()
}

/// What 1, 2, ... `max` threads use under `strategy`, up to the first count the
/// machine cannot host. Near-linear in PUs: every strategy but `spread` hands
/// threads out in one order (thread i takes the i-th position of the full
/// ordering), so one placement of `max` threads and running counts give every
/// prefix; `spread` places each count apart, by its rule (runs of cores).
pub fn usages(topo: &Topology, strategy: &Strategy, max: usize) -> Vec<Usage> {
    if max == 0 {
        return Vec::new();
    }
    if matches!(strategy, Strategy::Spread) {
        return spread_usages(topo, max);
    }
    let limit = scalescope_place::max_threads(topo.usable_cpus().len());
    let placed = |n: usize| {
        let mut req = PlaceRequest::new(strategy.clone(), n);
        req.oversubscribe = true;
        place(topo, &req).ok()
    };
    let Some(p) = placed(max).or_else(|| placed(max.min(limit))) else {
        return Vec::new();
    };
    let mut seen = Seen::default();
    p.first_cpus()
        .into_iter()
        .map_while(|c| topo.pu(c))
        .map(|pu| seen.add(pu))
        .collect()
}

/// Running distinct counts over the PUs threads were given, in order.
#[derive(Default)]
struct Seen {
    packages: std::collections::HashSet<Option<usize>>,
    nodes: std::collections::HashSet<Option<u32>>,
    l3: std::collections::HashSet<Option<usize>>,
    cores: std::collections::HashSet<Option<usize>>,
    /// Distinct PUs: two threads on one PU are oversubscription, not SMT.
    pus: std::collections::HashSet<u32>,
}

impl Seen {
    fn add(&mut self, pu: &scalescope_topo::Pu) -> Usage {
        self.packages.insert(pu.package);
        self.nodes.insert(pu.numa_node);
        self.l3.insert(pu.l3);
        self.cores.insert(pu.core);
        self.pus.insert(pu.cpu);
        self.usage()
    }

    fn usage(&self) -> Usage {
        let count = |n: usize, has_none: bool| n - usize::from(has_none);
        Usage {
            packages: count(self.packages.len(), self.packages.contains(&None)),
            numa_nodes: count(self.nodes.len(), self.nodes.contains(&None)),
            l3_domains: count(self.l3.len(), self.l3.contains(&None)),
            cores: count(self.cores.len(), self.cores.contains(&None)),
            smt_shared: count(self.cores.len(), self.cores.contains(&None)) < self.pus.len(),
        }
    }
}

/// `spread` at every count: with t <= P cores, thread i takes the first PU of run
/// i of t runs of consecutive cores (OpenMP 5.2, 10.1.3); placed at t = P, the
/// threads are exactly each core's first PU in order, from which every smaller
/// count's run starts are picked (O(t) each). Past P every core is used, and
/// shared, up to the placement limit.
fn spread_usages(topo: &Topology, max: usize) -> Vec<Usage> {
    let usable: Vec<&scalescope_topo::Pu> = topo.usable_pus().collect();
    let cores: std::collections::HashSet<Option<usize>> = usable.iter().map(|p| p.core).collect();
    let mut req = PlaceRequest::new(Strategy::Spread, cores.len());
    req.oversubscribe = true;
    let Ok(p) = place(topo, &req) else {
        return Vec::new();
    };
    let Some(all) = p
        .first_cpus()
        .into_iter()
        .map(|c| topo.pu(c))
        .collect::<Option<Vec<_>>>()
    else {
        return Vec::new();
    };
    let n = all.len();
    let mut out: Vec<Usage> = (1..=max.min(n))
        .map(|t| {
            let (base, extra) = (n / t, n % t);
            let mut seen = Seen::default();
            let mut start = 0;
            for i in 0..t {
                seen.add(all[start]);
                start += base + usize::from(i < extra);
            }
            seen.usage()
        })
        .collect();
    let limit = scalescope_place::max_threads(usable.len());
    if let Some(full) = out.last().copied() {
        // Past one thread per core, threads share cores on sibling PUs where
        // there are any; without SMT they are oversubscribed, not SMT-shared.
        let smt = usable.len() > n;
        out.extend((n + 1..=max.min(limit)).map(|_| Usage {
            smt_shared: smt,
            ..full
        }));
    }
    out
}

/// What `threads` threads use under `strategy` (None if the machine cannot host them).
pub fn usage(topo: &Topology, strategy: &Strategy, threads: usize) -> Option<Usage> {
    let mut req = PlaceRequest::new(strategy.clone(), threads);
    req.oversubscribe = true;
    let p = place(topo, &req).ok()?;
    let pus: Vec<_> = p
        .first_cpus()
        .into_iter()
        .filter_map(|c| topo.pu(c))
        .collect();
    let cores = distinct(pus.iter().map(|p| p.core));
    // Two threads on one PU are oversubscription, not SMT: count distinct PUs.
    let distinct_pus = distinct(pus.iter().map(|p| Some(p.cpu as usize)));
    Some(Usage {
        packages: distinct(pus.iter().map(|p| p.package)),
        numa_nodes: distinct(pus.iter().map(|p| p.numa_node.map(|n| n as usize))),
        l3_domains: distinct(pus.iter().map(|p| p.l3)),
        cores,
        smt_shared: cores < distinct_pus,
    })
}

/// Every event along `strategy` from 1 to `max_threads` threads.
pub fn events(topo: &Topology, strategy: &Strategy, max_threads: usize) -> Vec<TopologyEvent> {
    let usable_set = topo.usable_cpus();
    let total_cores = topo
        .cores
        .iter()
        .filter(|c| c.cpus.intersects(&usable_set))
        .count();
    let usable = usable_set.len();
    let mut out = Vec::new();
    let mut prev: Option<Usage> = None;
    for (i, u) in usages(topo, strategy, max_threads).into_iter().enumerate() {
        let n = i + 1;
        if let Some(p) = prev {
            let mut push = |kind: EventKind, description: String| {
                out.push(TopologyEvent {
                    kind,
                    threads: n,
                    description,
                })
            };
            if u.packages > p.packages {
                push(
                    EventKind::NewPackage,
                    format!("from {n} threads, package #{} is in use", u.packages),
                );
            }
            if u.numa_nodes > p.numa_nodes {
                push(
                    EventKind::NewNumaNode,
                    format!(
                        "from {n} threads, NUMA node #{} is in use (remote memory)",
                        u.numa_nodes
                    ),
                );
            }
            if u.l3_domains > p.l3_domains && u.packages == p.packages {
                push(
                    EventKind::NewL3,
                    format!("from {n} threads, L3 domain #{} is in use", u.l3_domains),
                );
            }
            if u.smt_shared && !p.smt_shared {
                push(
                    EventKind::SmtSharing,
                    format!("from {n} threads, two threads share a physical core (SMT siblings)"),
                );
            }
        }
        if u.cores == total_cores && prev.is_none_or(|p| p.cores < total_cores) && total_cores > 1 {
            out.push(TopologyEvent {
                kind: EventKind::AllCoresBusy,
                threads: n,
                description: format!("at {n} threads every physical core ({total_cores}) is busy"),
            });
        }
        if n == usable + 1 {
            out.push(TopologyEvent {
                kind: EventKind::Oversubscribed,
                threads: n,
                description: format!("from {n} threads, threads outnumber the {usable} usable PUs"),
            });
        }
        prev = Some(u);
    }
    out
}

/// The thread counts a sweep designed for diagnosis measures under `strategies`: a
/// point on each side of every boundary (the last count before each event and the
/// event's own), then midpoints (two rounds), so each piece has points inside it;
/// then, where a span without a boundary is still long (one package of 44 cores:
/// 2, 12, 22 before), doublings until each point is at least half the next (the
/// log axis has no empty octave; none one thread from the next), and equal
/// splits until no gap exceeds an eighth of the range (at least 4).
pub fn boundary_threads(topo: &Topology, strategies: &[Strategy], max: usize) -> Vec<usize> {
    let mut t: Vec<usize> = vec![1, 2.min(max), max];
    for s in strategies {
        for e in events(topo, s, max) {
            t.push(e.threads - 1);
            t.push(e.threads.min(max));
        }
    }
    t.retain(|x| (1..=max).contains(x));
    t.sort_unstable();
    t.dedup();
    for _ in 0..2 {
        let mids: Vec<usize> = t
            .windows(2)
            .filter(|w| w[1] - w[0] >= 3)
            .map(|w| (w[0] + w[1]) / 2)
            .collect();
        add(&mut t, mids);
    }
    let more = doublings(&t);
    add(&mut t, more);
    let more = gap_fill(&t, max.div_ceil(8).max(4));
    add(&mut t, more);
    t
}

fn add(t: &mut Vec<usize>, more: Vec<usize>) {
    t.extend(more);
    t.sort_unstable();
    t.dedup();
}

/// Doublings of each point p >= 2 until the last is at least half the next
/// point, but none one thread from the next (8 beside 9 costs runs and gives a
/// one-thread slope to misread).
fn doublings(t: &[usize]) -> Vec<usize> {
    let mut out = Vec::new();
    for w in t.windows(2) {
        let mut p = w[0];
        while p >= 2 && w[1] > 2 * p && w[1] - 2 * p > 1 {
            p *= 2;
            out.push(p);
        }
    }
    out
}

/// Points that split every gap wider than `widest` into equal parts no wider.
fn gap_fill(t: &[usize], widest: usize) -> Vec<usize> {
    let mut out = Vec::new();
    for w in t.windows(2) {
        let gap = w[1] - w[0];
        let parts = gap.div_ceil(widest);
        out.extend((1..parts).map(|i| w[0] + gap * i / parts));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use scalescope_topo::Source;

    /// Threads beyond the cores of a machine without SMT are oversubscribed: no
    /// "two threads share a physical core (SMT siblings)" event.
    #[test]
    fn threads_beyond_the_cores_without_smt_are_oversubscribed_not_smt() {
        let t = Source::Synthetic("package:2 numa:1 core:4".into())
            .load()
            .unwrap();
        let e = events(&t, &Strategy::CoresFirst, 12);
        assert!(e.iter().all(|e| e.kind != EventKind::SmtSharing), "{e:?}");
        let over = e
            .iter()
            .find(|e| e.kind == EventKind::Oversubscribed)
            .unwrap();
        assert_eq!(over.threads, 9);
        assert!(!usage(&t, &Strategy::CoresFirst, 12).unwrap().smt_shared);
    }

    #[test]
    fn usages_at_once_equal_each_count_placed_apart() {
        let specs = [
            "package:2 numa:1 core:6 pu:2 numbering=smt-last",
            "package:2 numa:2 core:5 pu:3",
            "package:3 core:4 pu:1 numbering=interleaved",
            "core:7 pu:2",
        ];
        let strategies = [
            Strategy::Compact,
            Strategy::Scatter,
            Strategy::CoresFirst,
            Strategy::SmtPairs,
            Strategy::Spread,
            Strategy::Cpus("S0:0-3".into()),
        ];
        for spec in specs {
            let t = Source::Synthetic(spec.into()).load().unwrap();
            let max = t.usable_cpus().len() * 2 + 3;
            for s in &strategies {
                let each: Vec<Usage> = (1..=max).map_while(|n| usage(&t, s, n)).collect();
                assert_eq!(usages(&t, s, max), each, "{spec} {s}");
            }
        }
    }

    #[test]
    fn boundaries_have_a_point_on_each_side() {
        let t = Source::Synthetic("package:2 numa:1 core:24 pu:2 numbering=smt-last".into())
            .load()
            .unwrap();
        let b = boundary_threads(&t, &[Strategy::CoresFirst], 96);
        for x in [1, 2, 24, 25, 48, 49, 96] {
            assert!(b.contains(&x), "{x} missing from {b:?}");
        }
        assert!(b.windows(2).all(|w| w[1] - w[0] <= 24), "{b:?}");
    }

    /// One package of 44 cores has no boundary between 2 and 43: the design
    /// still places a point in every octave and every eighth of the range.
    #[test]
    fn a_long_span_without_a_boundary_gets_points() {
        let t = Source::Synthetic("package:1 numa:1 core:44 pu:1".into())
            .load()
            .unwrap();
        let b = boundary_threads(&t, &[Strategy::CoresFirst], 44);
        assert_eq!(b, [1, 2, 4, 8, 12, 17, 22, 27, 32, 37, 43, 44]);
        assert!(b.windows(2).all(|w| w[1] - w[0] <= 6), "{b:?}");
        assert!(b.windows(2).all(|w| w[1] <= 2 * w[0]), "{b:?}");
        // No doubling one thread from a midpoint (8 beside 9 on 1 x 32 x 2).
        let t = Source::Synthetic("package:1 numa:1 core:32 pu:2".into())
            .load()
            .unwrap();
        let b = boundary_threads(&t, &[Strategy::CoresFirst], 64);
        assert!(b.contains(&4) && b.contains(&9) && !b.contains(&8), "{b:?}");
    }

    #[test]
    fn two_by_24_by_2_cores_first() {
        let t = Source::Synthetic("package:2 numa:1 core:24 pu:2 numbering=smt-last".into())
            .load()
            .unwrap();
        let ev = events(&t, &Strategy::CoresFirst, 96);
        let at = |k: EventKind| ev.iter().find(|e| e.kind == k).map(|e| e.threads);
        assert_eq!(at(EventKind::NewPackage), Some(25));
        assert_eq!(at(EventKind::NewNumaNode), Some(25));
        assert_eq!(at(EventKind::AllCoresBusy), Some(48));
        assert_eq!(at(EventKind::SmtSharing), Some(49));
        let ev = events(&t, &Strategy::Compact, 4);
        assert_eq!(
            ev.iter()
                .find(|e| e.kind == EventKind::SmtSharing)
                .map(|e| e.threads),
            Some(2)
        );
        let ev = events(&t, &Strategy::Scatter, 4);
        assert_eq!(
            ev.iter()
                .find(|e| e.kind == EventKind::NewPackage)
                .map(|e| e.threads),
            Some(2)
        );
    }
}
