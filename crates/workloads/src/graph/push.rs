//! PageRank in push form, for the irregular-algorithms study of synchronisation
//! mechanisms ([`super::pagerank::pagerank`] with any `Sync` but `pull`): each vertex
//! adds its contribution into its neighbours' next scores under one coarse lock, K
//! striped locks, atomics (a compare-and-swap loop on the f64 bits) or hardware
//! transactions, with `batch` updates per critical section.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use super::pagerank::{add_f64, Ranks, DAMPING, MAX_ITERS};
use super::Graph;
use crate::pool::Pool;
use crate::sync::{Aborts, ElidedLock, Sync};

/// Push PageRank with `sync`, with the transaction statistics summed over iterations.
pub(super) fn push_pagerank(
    g: &Graph,
    sync: &Sync,
    batch: usize,
    tolerance: f64,
    ranges: &[Range<usize>],
    pool: &Pool,
) -> Ranks {
    let n = g.vertices();
    let (mut transactions, mut aborts) = (0u64, Aborts::default());
    let mut contrib = vec![0.0; n];
    contributions(g, &vec![1.0 / n as f64; n], &mut contrib, ranges, pool);
    let (scores, iterations) = iterate(
        n,
        tolerance,
        contrib,
        |contrib, scores, (next, next_contrib)| {
            let pushed = push(g, sync, batch, contrib, pool);
            transactions += pushed.transactions;
            aborts.add(pushed.aborts);
            next.copy_from_slice(&pushed.scores);
            contributions(g, next, next_contrib, ranges, pool);
            next.iter().zip(scores).map(|(a, b)| (a - b).abs()).sum()
        },
    );
    Ranks {
        scores,
        iterations,
        transactions,
        aborts,
    }
}

/// Iterations from uniform scores and their `contrib`utions until the summed change
/// drops below `tolerance` or [`MAX_ITERS`] have run; `step(contrib, scores, (next,
/// next contrib))` makes one and returns its summed change. Returns the scores and
/// the iterations run.
fn iterate<C: Copy + Default>(
    n: usize,
    tolerance: f64,
    mut contrib: Vec<C>,
    mut step: impl FnMut(&[C], &[f64], (&mut [f64], &mut [C])) -> f64,
) -> (Vec<f64>, usize) {
    let mut scores = vec![1.0 / n as f64; n];
    let mut next = vec![0.0; n];
    let mut next_contrib = vec![C::default(); contrib.len()];
    let mut iterations = 0;
    while iterations < MAX_ITERS {
        iterations += 1;
        let error = step(&contrib, &scores, (&mut next, &mut next_contrib));
        std::mem::swap(&mut scores, &mut next);
        std::mem::swap(&mut contrib, &mut next_contrib);
        if error < tolerance {
            break;
        }
    }
    (scores, iterations)
}

/// Each vertex's share of its score, `score / degree`, written by the workers.
fn contributions(
    g: &Graph,
    scores: &[f64],
    contrib: &mut [f64],
    ranges: &[Range<usize>],
    pool: &Pool,
) {
    super::for_each_range(contrib, ranges, pool, |vs, part| {
        for (c, v) in part.iter_mut().zip(vs) {
            let d = g.degree(v as u32);
            *c = if d > 0 { scores[v] / d as f64 } else { 0.0 };
        }
    });
}

/// One push iteration: the new scores, with the HTM statistics.
fn push(g: &Graph, sync: &Sync, batch: usize, contrib: &[f64], pool: &Pool) -> Ranks {
    let (n, t) = (g.vertices(), pool.threads());
    let base = (1.0 - DAMPING) / n as f64;
    let (mut transactions, mut aborts) = (0u64, Aborts::default());
    let cells: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0f64.to_bits())).collect();
    let coarse = Mutex::new(());
    let elided = ElidedLock::default();
    let stripes: Vec<Mutex<()>> = match sync {
        Sync::StripedLocks(k) => (0..*k).map(|_| Mutex::new(())).collect(),
        _ => Vec::new(),
    };
    let stats = pool.broadcast(|w| {
        let (mut tx, mut ab) = (0u64, Aborts::default());
        // `batch` is a flush threshold, not a size to reserve: 10^11 would abort.
        let mut pending: Vec<(u32, f64)> = Vec::with_capacity(batch.min(1 << 16));
        let mut flush = |pending: &mut Vec<(u32, f64)>| {
            match sync {
                Sync::Atomic => pending
                    .iter()
                    .for_each(|&(v, c)| add_f64(&cells[v as usize], c)),
                Sync::CoarseLock => {
                    let _g = coarse.lock().unwrap_or_else(|p| p.into_inner());
                    pending
                        .iter()
                        .for_each(|&(v, c)| add_f64(&cells[v as usize], c));
                }
                Sync::StripedLocks(k) => {
                    for &(v, c) in pending.iter() {
                        let _g = stripes[v as usize % k]
                            .lock()
                            .unwrap_or_else(|p| p.into_inner());
                        add_f64(&cells[v as usize], c);
                    }
                }
                Sync::Htm => {
                    tx += 1;
                    let apply = || {
                        for &(v, c) in pending.iter() {
                            let cell = &cells[v as usize];
                            cell.store(
                                (f64::from_bits(cell.load(Ordering::Relaxed)) + c).to_bits(),
                                Ordering::Relaxed,
                            );
                        }
                    };
                    if let Some(status) = elided.run(apply) {
                        ab.record(status);
                    }
                }
                Sync::Pull => {}
            }
            pending.clear();
        };
        for u in (w..n).step_by(t) {
            for &v in g.neighbors(u as u32) {
                pending.push((v, contrib[u]));
                if pending.len() >= batch.max(1) {
                    flush(&mut pending);
                }
            }
        }
        flush(&mut pending);
        (tx, ab)
    });
    for (tx, ab) in stats {
        transactions += tx;
        aborts.add(ab);
    }
    let scores = cells
        .iter()
        .map(|c| base + DAMPING * f64::from_bits(c.load(Ordering::Relaxed)))
        .collect();
    Ranks {
        scores,
        iterations: 1,
        transactions,
        aborts,
    }
}
