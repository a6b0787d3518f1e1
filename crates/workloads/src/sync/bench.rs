//! The synchronisation study's microbenchmark: every worker makes updates to random
//! slots of a shared table, N updates per critical section (a coarse lock, the
//! stripes a batch needs locked in order, one RTM transaction eliding a lock, or
//! atomics per update), either BFS-style (mark a vertex visited) or PageRank-style
//! (add to a score). The table size sets the contention. For each mechanism the time
//! of one critical section T(N) is fitted with T(N) = A N + B (A: cost per update,
//! B: start/commit overhead), and the batch with the lowest time per update is
//! reported. Totals are checked exactly, so a lost update is an error.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use super::model::fit;
use super::{rtm_available, ElidedLock, Sync};
use crate::pool::Pool;
use scalescope_stats::Rng;

// The measurements' types are the shared model's: the report reads them typed.
pub use scalescope_model::detail::{Curve, Op, Point};

/// The slots worker `w` updates, in order (deterministic, so totals can be checked).
fn slots(w: usize, updates: usize, table: usize) -> Vec<u32> {
    let mut r = Rng::new(0x5eed_0000 + w as u64);
    (0..updates).map(|_| r.below(table) as u32).collect()
}

/// One update inside a lock or a transaction: a plain load and store.
fn plain_update(c: &AtomicU64, op: Op) {
    match op {
        Op::MarkVisited => {
            if c.load(Ordering::Relaxed) == 0 {
                c.store(1, Ordering::Relaxed);
            }
        }
        Op::Increment => c.store(
            (f64::from_bits(c.load(Ordering::Relaxed)) + 1.0).to_bits(),
            Ordering::Relaxed,
        ),
    }
}

/// One update made safe by itself: a compare-and-swap (loop).
fn atomic_update(c: &AtomicU64, op: Op) {
    match op {
        Op::MarkVisited => {
            let _ = c.compare_exchange(0, 1, Ordering::Relaxed, Ordering::Relaxed);
        }
        Op::Increment => {
            let mut cur = c.load(Ordering::Relaxed);
            while let Err(seen) = c.compare_exchange_weak(
                cur,
                (f64::from_bits(cur) + 1.0).to_bits(),
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                cur = seen;
            }
        }
    }
}

/// Locks the stripes a batch touches, each once and in order (no deadlock); the
/// guards hold them until dropped.
fn lock_stripes<'a>(
    stripes: &'a [Mutex<()>],
    k: usize,
    group: &[u32],
    ids: &mut Vec<usize>,
) -> Vec<std::sync::MutexGuard<'a, ()>> {
    ids.clear();
    ids.extend(group.iter().map(|&i| i as usize % k));
    ids.sort_unstable();
    ids.dedup();
    ids.iter()
        .map(|&s| stripes[s].lock().unwrap_or_else(|p| p.into_inner()))
        .collect()
}

/// Runs one mechanism at one batch size; returns ns per section per worker and aborts.
///
/// # Errors
/// A lost or duplicated update, or `htm` where RTM cannot commit.
pub fn run(
    sync: &Sync,
    op: Op,
    batch: usize,
    table: usize,
    updates: usize,
    pool: &Pool,
) -> Result<Point, String> {
    if *sync == Sync::Htm && !rtm_available() {
        return Err(
            "unavailable here: this CPU does not offer Intel RTM (TSX absent or disabled)".into(),
        );
    }
    let t = pool.threads();
    let cells: Vec<AtomicU64> = (0..table).map(|_| AtomicU64::new(0)).collect();
    let coarse = Mutex::new(());
    let elided = ElidedLock::default();
    let stripes: Vec<Mutex<()>> = match sync {
        Sync::StripedLocks(k) => (0..*k).map(|_| Mutex::new(())).collect(),
        _ => Vec::new(),
    };
    let work: Vec<Vec<u32>> = (0..t).map(|w| slots(w, updates, table)).collect();
    let apply = |i: u32| plain_update(&cells[i as usize], op);
    let start = Instant::now();
    let aborts: u64 = pool
        .broadcast(|w| {
            let mut aborts = 0u64;
            let mut stripe_ids: Vec<usize> = Vec::new();
            for group in work[w].chunks(batch) {
                match sync {
                    Sync::Atomic => group
                        .iter()
                        .for_each(|&i| atomic_update(&cells[i as usize], op)),
                    Sync::StripedLocks(k) => {
                        let _guards = lock_stripes(&stripes, *k, group, &mut stripe_ids);
                        group.iter().for_each(|&i| apply(i));
                    }
                    Sync::Htm => {
                        if elided
                            .run(|| group.iter().for_each(|&i| apply(i)))
                            .is_some()
                        {
                            aborts += 1;
                        }
                    }
                    Sync::CoarseLock | Sync::Pull => {
                        let _g = coarse.lock().unwrap_or_else(|p| p.into_inner());
                        group.iter().for_each(|&i| apply(i));
                    }
                }
            }
            aborts
        })
        .iter()
        .sum();
    let secs = start.elapsed().as_secs_f64();
    check(op, &cells, &work)?;
    let sections = updates.div_ceil(batch) as f64;
    let ns = secs * 1e9 / sections;
    Ok(Point {
        batch,
        ns_per_section: ns,
        ns_per_update: ns / batch.min(updates) as f64,
        ns_per_section_reps: vec![ns],
        aborts,
    })
}

/// No update lost or duplicated: increments sum to their count, visited flags are
/// exactly the distinct slots touched.
fn check(op: Op, cells: &[AtomicU64], work: &[Vec<u32>]) -> Result<(), String> {
    match op {
        Op::Increment => {
            let total: f64 = cells
                .iter()
                .map(|c| f64::from_bits(c.load(Ordering::Relaxed)))
                .sum();
            let want = work.iter().map(Vec::len).sum::<usize>() as f64;
            if total != want {
                return Err(format!(
                    "lost updates: the scores sum to {total}, {want} increments were made"
                ));
            }
        }
        Op::MarkVisited => {
            let mut touched = vec![false; cells.len()];
            work.iter()
                .flatten()
                .for_each(|&i| touched[i as usize] = true);
            let want = touched.iter().filter(|t| **t).count() as u64;
            let got: u64 = cells.iter().map(|c| c.load(Ordering::Relaxed)).sum();
            if got != want {
                return Err(format!(
                    "{got} flags set, {want} distinct slots were marked"
                ));
            }
        }
    }
    Ok(())
}

/// The median of `v` (NaN when empty).
fn median(v: &[f64]) -> f64 {
    scalescope_stats::median_of(v).unwrap_or(f64::NAN)
}

/// One mechanism's batches, `reps` rounds of every batch (so drift spreads over
/// all of them), each point the median of its rounds.
fn measure(
    m: &Sync,
    op: Op,
    batches: &[usize],
    s: &Sizes,
    pool: &Pool,
) -> Result<Vec<Point>, String> {
    let mut points: Vec<Point> = Vec::new();
    for round in 0..s.reps.max(1) {
        for (i, &b) in batches.iter().enumerate() {
            let p = run(m, op, b, s.table, s.updates, pool)?;
            if round == 0 {
                points.push(p);
            } else {
                points[i].ns_per_section_reps.push(p.ns_per_section);
                points[i].aborts += p.aborts;
            }
        }
    }
    for p in &mut points {
        p.ns_per_section = median(&p.ns_per_section_reps);
        p.ns_per_update = p.ns_per_section / p.batch.min(s.updates) as f64;
    }
    Ok(points)
}

/// The sizes of one study: table slots, updates per thread, repetitions.
#[derive(Debug, Clone, Copy)]
pub struct Sizes {
    pub table: usize,
    pub updates: usize,
    pub reps: usize,
}

/// Sweeps `batches` for each mechanism that can run here, `reps` times, and fits
/// each curve over every repetition.
///
/// # Errors
/// Any lost update.
pub fn sweep(
    mechanisms: &[Sync],
    op: Op,
    batches: &[usize],
    sizes: &Sizes,
    pool: &Pool,
) -> Result<Vec<Curve>, String> {
    let mut out = Vec::new();
    for m in mechanisms {
        if *m == Sync::Htm && !rtm_available() {
            continue;
        }
        let points = measure(m, op, batches, sizes, pool)?;
        let obs: Vec<(f64, f64)> = points
            .iter()
            .flat_map(|p| p.ns_per_section_reps.iter().map(|t| (p.batch as f64, *t)))
            .collect();
        let f = fit(&obs);
        let best = points
            .iter()
            .min_by(|x, y| x.ns_per_update.total_cmp(&y.ns_per_update))
            .map(|p| p.batch)
            .unwrap_or(1);
        out.push(Curve {
            sync: m.to_string(),
            op,
            points,
            a_ns: f.a_ns,
            b_ns: f.b_ns,
            r_squared: f.r_squared,
            best_batch: best,
            fit: f,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::tests::pool;

    #[test]
    fn no_mechanism_loses_an_update_and_repetitions_are_kept() {
        let p = pool(2);
        let mechs = [
            Sync::CoarseLock,
            Sync::StripedLocks(64),
            Sync::Atomic,
            Sync::Htm,
        ];
        let sizes = Sizes {
            table: 256,
            updates: 20_000,
            reps: 3,
        };
        for op in [Op::Increment, Op::MarkVisited] {
            let curves = sweep(&mechs, op, &[1, 4, 16, 64], &sizes, &p).unwrap();
            assert!(curves.len() >= 3);
            for c in &curves {
                assert!(c.points.iter().all(|p| p.ns_per_section > 0.0));
                assert!(c.points.iter().all(|p| p.ns_per_section_reps.len() == 3));
                assert_eq!(c.fit.observations, 12);
                assert!([1, 4, 16, 64].contains(&c.best_batch));
            }
        }
    }
}
