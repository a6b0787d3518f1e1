//! Synthetic graphs. Kronecker (Graph500, "Graph500 benchmark specification" 1.2):
//! 2^scale vertices, 16 x 2^scale edges, each edge choosing one of four quadrants per
//! bit with probabilities A=0.57, B=0.19, C=0.19, D=0.05, and vertex ids scrambled by
//! a fixed random permutation. Uniform: endpoints uniformly random. Edges are made in
//! blocks of 2^18, block b from seed 27491095 + b (GAP's scheme), so the graph is
//! the same whatever the thread count.

use std::sync::Mutex;

use crate::pool::{chunk, Pool};

const SEED: u64 = 27_491_095;
const BLOCK: usize = 1 << 18;

/// The project's seeded generator (SplitMix64): small, fast, good enough to pick
/// quadrants.
type SplitMix = scalescope_stats::Rng;

/// The integer `k` of 53 random bits below which `k / 2^53 < p`: comparing `k` with
/// it decides exactly what comparing the unit draw `k / 2^53` with `p` would.
const fn below(p: f64) -> u64 {
    let t = p * (1u64 << 53) as f64;
    let floor = t as u64;
    if floor as f64 == t {
        floor
    } else {
        floor + 1
    }
}

/// The Kronecker quadrant bounds on 53-bit draws: A, A + B, A + B + C.
const AB: [u64; 3] = [below(0.57), below(0.76), below(0.95)];

/// Which generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Kronecker,
    Uniform,
}

fn edge(kind: Kind, scale: u32, rng: &mut SplitMix) -> (u32, u32) {
    match kind {
        Kind::Uniform => (
            (rng.next_u64() >> (64 - scale)) as u32,
            (rng.next_u64() >> (64 - scale)) as u32,
        ),
        Kind::Kronecker => {
            let (mut u, mut v) = (0u32, 0u32);
            for bit in 0..scale {
                // Quadrant by draw r: [0, A) top-left, [A, A+B) top-right, [A+B,
                // A+B+C) bottom-left, the rest bottom-right; without branches, which
                // a draw this random would mispredict about once a bit.
                let k = rng.next_u64() >> 11;
                let du = u32::from(k >= AB[1]);
                let dv = (u32::from(k >= AB[0]) & u32::from(k < AB[1])) | u32::from(k >= AB[2]);
                u |= du << bit;
                v |= dv << bit;
            }
            (u, v)
        }
    }
}

/// Vertex count and edges of `kind` at `scale` (edge factor 16). Each worker
/// writes its blocks straight into its own run of the one edge list (no copies, no
/// regrowing).
pub fn generate(kind: Kind, scale: u32, pool: &Pool) -> (usize, Vec<(u32, u32)>) {
    let n = 1usize << scale;
    let m = 16 * n;
    let blocks = m.div_ceil(BLOCK);
    let perm = permutation(n, kind);
    let t = pool.threads();
    let mut edges = vec![(0u32, 0u32); m];
    let mut slots = Vec::with_capacity(t);
    let mut rest = &mut edges[..];
    for w in 0..t {
        let mine = chunk(blocks, t, w, 1);
        let len = (mine.end * BLOCK).min(m) - (mine.start * BLOCK).min(m);
        let (part, tail) = rest.split_at_mut(len);
        slots.push(Mutex::new(Some((mine.start, part))));
        rest = tail;
    }
    pool.broadcast(|w| {
        let taken = slots[w].lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some((first, part)) = taken else { return };
        for (i, block) in part.chunks_mut(BLOCK).enumerate() {
            let mut rng = SplitMix::new(SEED + (first + i) as u64);
            for e in block {
                let (u, v) = edge(kind, scale, &mut rng);
                *e = (perm[u as usize], perm[v as usize]);
            }
        }
    });
    (n, edges)
}

/// Graph500 scrambles Kronecker vertex ids (so hubs are not all low numbers);
/// uniform graphs need no scrambling.
fn permutation(n: usize, kind: Kind) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n as u32).collect();
    if kind == Kind::Kronecker {
        let mut rng = SplitMix::new(SEED ^ 0x5eed);
        for i in (1..n).rev() {
            p.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn independent_of_the_thread_count() {
        let p1 = crate::graph::tests::pool(1);
        let p2 = crate::graph::tests::pool(2);
        for kind in [Kind::Kronecker, Kind::Uniform] {
            let (n, a) = generate(kind, 10, &p1);
            let (_, b) = generate(kind, 10, &p2);
            assert_eq!((n, a.len()), (1024, 16 * 1024));
            assert_eq!(a, b);
        }
    }

    #[test]
    fn integer_bounds_decide_as_the_unit_draw_did() {
        let unit = |k: u64| k as f64 / (1u64 << 53) as f64;
        for p in [0.57, 0.76, 0.95] {
            let b = below(p);
            for k in b.saturating_sub(3)..b + 3 {
                assert_eq!(unit(k) < p, k < b, "p {p}, k {k}");
            }
        }
    }

    #[test]
    fn kronecker_is_skewed() {
        let p = crate::graph::tests::pool(1);
        let (n, e) = generate(Kind::Kronecker, 12, &p);
        let g = crate::graph::Graph::from_edges(n, &e, &p);
        let max = (0..n as u32).map(|v| g.degree(v)).max().unwrap();
        let avg = 2.0 * g.edges() as f64 / n as f64;
        assert!(
            max as f64 > 20.0 * avg,
            "max degree {max}, average {avg:.1}"
        );
    }
}
