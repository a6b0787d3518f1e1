//! The strategies themselves: each orders the usable PUs by hardware position and
//! hands them out to threads.

use scalescope_topo::{CpuSet, Topology};

use crate::{likwid, Granularity, PlaceError, PlaceRequest, Placement, Strategy};

/// A usable PU with its hardware position. `core_rank` counts cores inside the
/// package, `smt_rank` counts usable PUs inside the core (a sibling the cgroup
/// forbids does not leave a hole).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    pub cpu: u32,
    pub package: usize,
    pub core: usize,
    pub core_rank: usize,
    pub smt_rank: usize,
}

/// Node or package indexes as the flags take them: `0,2`.
fn list<T: std::fmt::Display>(ids: &[T]) -> String {
    let each: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
    each.join(",")
}

/// Usable PUs (online, allowed, inside the restriction) with their positions, in
/// hardware order (package, core, thread).
pub(crate) fn slots(topo: &Topology, req: &PlaceRequest) -> Result<Vec<Slot>, PlaceError> {
    let r = &req.restriction;
    let mut v: Vec<Slot> = topo
        .usable_pus()
        .filter(|p| {
            r.numa_nodes
                .as_ref()
                .is_none_or(|n| p.numa_node.is_some_and(|id| n.contains(&id)))
        })
        .filter(|p| {
            r.packages
                .as_ref()
                .is_none_or(|k| p.package.is_some_and(|id| k.contains(&id)))
        })
        .map(|p| Slot {
            cpu: p.cpu,
            package: p.package.unwrap_or(0),
            core: p.core.unwrap_or(usize::MAX),
            core_rank: 0,
            smt_rank: 0,
        })
        .collect();
    if v.is_empty() {
        let what = match (&r.numa_nodes, &r.packages) {
            (Some(n), _) => format!("NUMA nodes {}", list(n)),
            (_, Some(p)) => format!("packages {}", list(p)),
            _ => "this machine".into(),
        };
        return Err(PlaceError::EmptyRestriction { what });
    }
    v.sort_by_key(|s| (s.package, s.core, s.cpu));
    let mut core_rank = 0;
    for i in 0..v.len() {
        if i > 0 && v[i].core == v[i - 1].core {
            v[i].smt_rank = v[i - 1].smt_rank + 1;
            v[i].core_rank = v[i - 1].core_rank;
            continue;
        }
        if i > 0 && v[i].package != v[i - 1].package {
            core_rank = 0;
        } else if i > 0 {
            core_rank += 1;
        }
        v[i].core_rank = core_rank;
    }
    Ok(v)
}

/// Computes the placement a request asks for.
///
/// # Errors
/// [`PlaceError`] for zero threads, more threads than usable PUs without
/// oversubscription, more than [`crate::max_threads`] with it, an empty restriction,
/// smt-pairs without SMT, or a bad expression. The thread count is checked before
/// anything is allocated for it.
pub fn place(topo: &Topology, req: &PlaceRequest) -> Result<Placement, PlaceError> {
    if let Strategy::Runtime(bind) = &req.strategy {
        return runtime_plan(topo, req, *bind);
    }
    let slots = slots(topo, req)?;
    let ordered: Vec<Slot> = match &req.strategy {
        Strategy::Compact => sorted(&slots, |s| (s.package, s.core_rank, s.smt_rank)),
        Strategy::Scatter => sorted(&slots, |s| (s.smt_rank, s.core_rank, s.package)),
        Strategy::CoresFirst => sorted(&slots, |s| (s.smt_rank, s.package, s.core_rank)),
        Strategy::SmtPairs => smt_pairs(&slots)?,
        Strategy::Spread => return spread(&slots, req),
        Strategy::Cpus(expr) => expression(topo, &slots, expr)?,
        Strategy::Runtime(_) => unreachable_runtime(&slots),
    };
    if ordered.is_empty() {
        // Only reachable through an expression that names no CPU; never divide by it.
        return Err(PlaceError::BadExpression {
            expr: match &req.strategy {
                Strategy::Cpus(e) => e.clone(),
                other => other.to_string(),
            },
            detail: "names no CPU".into(),
        });
    }
    let threads = req.threads.unwrap_or(ordered.len());
    check_count(threads, ordered.len(), req)?;
    let sets = (0..threads)
        .map(|i| bind_set(&slots, &ordered[i % ordered.len()], req.granularity))
        .collect();
    Ok(Placement {
        strategy: req.strategy.clone(),
        granularity: req.granularity,
        threads: sets,
    })
}

fn sorted<K: Ord>(slots: &[Slot], key: impl Fn(&Slot) -> K) -> Vec<Slot> {
    let mut v = slots.to_vec();
    v.sort_by_key(|s| key(s));
    v
}

fn check_count(threads: usize, available: usize, req: &PlaceRequest) -> Result<(), PlaceError> {
    if threads == 0 {
        return Err(PlaceError::ZeroThreads);
    }
    let limit = crate::max_threads(available);
    if threads > limit && req.oversubscribe {
        return Err(PlaceError::ThreadsOverLimit {
            requested: threads,
            limit,
            available,
        });
    }
    if threads > available && !req.oversubscribe {
        let r = &req.restriction;
        let where_ = match (&r.numa_nodes, &r.packages) {
            (Some(n), _) => format!(" on NUMA nodes {}", list(n)),
            (_, Some(p)) => format!(" on packages {}", list(p)),
            _ if matches!(req.strategy, Strategy::SmtPairs) => " on cores with SMT".into(),
            _ if matches!(req.strategy, Strategy::Cpus(_)) => " in the expression".into(),
            _ => String::new(),
        };
        return Err(PlaceError::TooManyThreads {
            requested: threads,
            available,
            where_,
        });
    }
    Ok(())
}

/// The set one thread is bound to: its PU, or every usable PU of its core.
fn bind_set(slots: &[Slot], chosen: &Slot, granularity: Granularity) -> CpuSet {
    match granularity {
        Granularity::Thread => [chosen.cpu].into_iter().collect(),
        // Slots are in hardware order, a core's PUs together: the core's run.
        Granularity::Core => {
            let start =
                slots.partition_point(|s| (s.package, s.core) < (chosen.package, chosen.core));
            slots[start..]
                .iter()
                .take_while(|s| s.core == chosen.core)
                .map(|s| s.cpu)
                .collect()
        }
    }
}

/// Pairs of hardware threads on cores that have at least two: core k's first two
/// threads for threads 2k and 2k+1, then (on SMT4 and wider) its next two.
fn smt_pairs(slots: &[Slot]) -> Result<Vec<Slot>, PlaceError> {
    // Usable threads per core (smt ranks are 0..width), counted once: linear in PUs.
    let mut width: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    for s in slots {
        let w = width.entry(s.core).or_default();
        *w = (*w).max(s.smt_rank + 1);
    }
    let mut v: Vec<Slot> = slots
        .iter()
        .filter(|s| width[&s.core] >= 2)
        .copied()
        .collect();
    if v.is_empty() {
        return Err(PlaceError::NoSmt);
    }
    // Drop an unpaired last thread of an odd-width core, then order by round.
    v.retain(|s| (s.smt_rank ^ 1) < width[&s.core]);
    v.sort_by_key(|s| (s.smt_rank / 2, s.package, s.core_rank, s.smt_rank));
    Ok(v)
}

/// OpenMP `spread` with places = cores (OpenMP 5.2, section 10.1.3): with T <= P
/// threads, the P places split into T runs of consecutive places and thread i takes
/// the first place of run i; with T > P, each core gets consecutive threads (see
/// [`threads_per_core`]), which use its hardware threads in turn.
fn spread(slots: &[Slot], req: &PlaceRequest) -> Result<Placement, PlaceError> {
    let cores: Vec<Vec<Slot>> = {
        let mut v: Vec<Vec<Slot>> = Vec::new();
        for s in slots {
            match v.last_mut() {
                Some(core) if core[0].core == s.core => core.push(*s),
                _ => v.push(vec![*s]),
            }
        }
        v
    };
    let (t, p) = (req.threads.unwrap_or(cores.len()), cores.len());
    check_count(t, slots.len(), req)?;
    let mut chosen: Vec<Slot> = Vec::with_capacity(t);
    if t <= p {
        let (base, extra) = (p / t, p % t);
        let mut start = 0;
        for i in 0..t {
            chosen.push(cores[start][0]);
            start += base + usize::from(i < extra);
        }
    } else {
        for (j, n) in threads_per_core(&cores, t).into_iter().enumerate() {
            chosen.extend((0..n).map(|k| cores[j][k % cores[j].len()]));
        }
    }
    Ok(Placement {
        strategy: req.strategy.clone(),
        granularity: req.granularity,
        threads: chosen
            .iter()
            .map(|c| bind_set(slots, c, req.granularity))
            .collect(),
    })
}

/// How many of `t` threads each core gets when there are more threads than cores:
/// one per core per round, in hardware order, skipping cores whose PUs are all taken
/// (so a core with a forbidden sibling is not doubled up while PUs remain
/// elsewhere). On uniform cores this is OpenMP's rule: the first T%P places get one
/// thread more.
fn threads_per_core(cores: &[Vec<Slot>], t: usize) -> Vec<usize> {
    let mut counts = vec![0usize; cores.len()];
    let mut left = t;
    let mut capacity_bound = true;
    while left > 0 {
        let before = left;
        for (j, core) in cores.iter().enumerate() {
            if left > 0 && (!capacity_bound || counts[j] < core.len()) {
                counts[j] += 1;
                left -= 1;
            }
        }
        // Every PU is taken (oversubscription): keep going round-robin.
        capacity_bound &= left < before;
    }
    counts
}

/// A likwid-pin expression or plain list, checked against the usable PUs.
fn expression(topo: &Topology, slots: &[Slot], expr: &str) -> Result<Vec<Slot>, PlaceError> {
    let cpus = likwid::resolve(topo, expr)?;
    let by_cpu: std::collections::HashMap<u32, &Slot> = slots.iter().map(|s| (s.cpu, s)).collect();
    cpus.into_iter()
        .map(|cpu| {
            by_cpu.get(&cpu).map(|s| **s).ok_or_else(|| PlaceError::BadExpression {
                expr: expr.to_string(),
                detail: format!("CPU {cpu} is not usable here (offline, outside the cgroup, or outside the restriction)"),
            })
        })
        .collect()
}

/// The plan a runtime placement is checked against: its strategy at its granularity.
fn runtime_plan(
    topo: &Topology,
    req: &PlaceRequest,
    bind: crate::RuntimeBind,
) -> Result<Placement, PlaceError> {
    let plan = PlaceRequest {
        strategy: bind.plan(),
        granularity: bind.granularity(),
        ..req.clone()
    };
    let mut p = place(topo, &plan)?;
    p.strategy = req.strategy.clone();
    Ok(p)
}

/// Runtime placements return before slots are ordered ([`runtime_plan`]).
fn unreachable_runtime(slots: &[Slot]) -> Vec<Slot> {
    slots.to_vec()
}
