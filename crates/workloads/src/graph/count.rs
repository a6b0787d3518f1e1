//! Exact subgraph counts whose cost grows with wedges and triangles, never with all
//! 4-vertex paths. Vertices are ranked by (degree, id) and edges oriented from lower
//! to higher rank (Chiba and Nishizeki, SIAM J. Comput. 14(1), 1985):
//! - triangles: |out(u) ∩ out(v)| over oriented edges u->v;
//! - diamonds (chordal 4-cycles, non-induced): each edge e in t(e) triangles closes
//!   C(t(e), 2) diamonds with e as the chord;
//! - 4-cliques: for each oriented edge u->v, the pairs of out(u) ∩ out(v) joined by an
//!   edge;
//! - 4-cycles (non-induced): each has one highest-ranked vertex a; with the opposite
//!   vertex b, its two other vertices are common neighbours of a and b ranked below
//!   a, so c4 = sum over a, b of C(#such common neighbours, 2) (wedges through
//!   lower-ranked centres only).
//!
//! Induced counts follow: diamond_ind = diamond - 6 k4, c4_ind = c4 - diamond_ind - 3 k4.
//! Work is shared out among the workers by vertex, interleaved for balance.

use std::sync::atomic::{AtomicU32, Ordering};

use serde::Serialize;

use super::Graph;
use crate::pool::{Chunks, Pool};
use crate::prefetch;

/// A subgraph pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    Triangle,
    C4,
    Diamond,
    K4,
}

impl std::fmt::Display for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Pattern::Triangle => "triangle",
            Pattern::C4 => "c4",
            Pattern::Diamond => "diamond",
            Pattern::K4 => "k4",
        })
    }
}

impl std::str::FromStr for Pattern {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "triangle" => Pattern::Triangle,
            "c4" => Pattern::C4,
            "diamond" => Pattern::Diamond,
            "k4" => Pattern::K4,
            other => {
                return Err(format!(
                    "unknown pattern `{other}` (triangle, c4, diamond, k4)"
                ))
            }
        })
    }
}

/// The graph renumbered by rank (ascending degree, ties by id): vertex r's list holds
/// its lower-ranked neighbours, in no particular order, then its higher-ranked ones
/// (the out-neighbours of the orientation), sorted, with `split[r]` between them.
/// Only the out-lists are sorted: they are short (a hub has few neighbours of higher
/// degree), while the hubs' long lists are nearly all lower neighbours, which the
/// kernels only walk.
pub struct Oriented {
    offsets: Vec<usize>,
    split: Vec<usize>,
    adj: Vec<u32>,
    /// Rank of each original vertex id.
    rank: Vec<u32>,
}

impl Oriented {
    /// Ranks by degree (`DegreeRanks`), then the pool's workers write the
    /// renumbered lists, reading the graph's lists in order and each list's lower
    /// neighbours to its front, higher ones to its back (`scatter_ranked`); then
    /// sort the out-lists, each worker a contiguous run of ranks.
    pub fn new(g: &Graph, pool: &Pool) -> Oriented {
        let ranks = DegreeRanks::new(g);
        let n = ranks.rank.len();
        let offsets = ranks.offsets();
        let rank = ranks.rank;
        let mut adj = vec![0u32; offsets[n]];
        let split = scatter_ranked(g, &rank, &offsets, &mut adj, pool);
        let ranges = super::work_ranges(n, pool, |r| offsets[r]);
        super::for_each_list(&mut adj, &offsets, &ranges, pool, |r, l| {
            l[split[r] - offsets[r]..].sort_unstable();
        });
        Oriented {
            offsets,
            split,
            adj,
            rank,
        }
    }

    fn vertices(&self) -> usize {
        self.rank.len()
    }

    /// Higher-ranked neighbours, sorted.
    fn out(&self, r: u32) -> &[u32] {
        &self.adj[self.split[r as usize]..self.offsets[r as usize + 1]]
    }

    /// Brings in what the triangle kernel reads for lower neighbours ahead of `i`:
    /// the bounds of the one 16 ahead and the tail of the one 8 ahead (those
    /// random reads are most of its time otherwise).
    #[inline]
    fn prefetch_ahead(&self, lower: &[u32], i: usize) {
        if let Some(&p) = lower.get(i + 16) {
            prefetch(self.offsets.as_ptr().wrapping_add(p as usize + 1));
            prefetch(self.split.as_ptr().wrapping_add(p as usize));
        }
        if let Some(&p) = lower.get(i + 8) {
            prefetch(
                self.adj
                    .as_ptr()
                    .wrapping_add(self.offsets[p as usize + 1])
                    .wrapping_sub(1),
            );
        }
    }

    /// Lower-ranked neighbours, in no particular order.
    fn lower(&self, r: u32) -> &[u32] {
        &self.adj[self.offsets[r as usize]..self.split[r as usize]]
    }
}

/// Writes every vertex v's neighbours, as ranks, into the list of rank[v] in `adj`
/// (`offsets` by rank): those ranked below v from the front, the others from the
/// back. The graph's lists are read in order, so no read waits on a jump across
/// memory (reading them in rank order did, one miss or two per vertex); the jumps
/// are writes, which do not stall. Returns where each rank's higher neighbours
/// start (its `split`).
fn scatter_ranked(
    g: &Graph,
    rank: &[u32],
    offsets: &[usize],
    adj: &mut [u32],
    pool: &Pool,
) -> Vec<usize> {
    let n = g.vertices();
    assert!(rank.len() == n && offsets.len() == n + 1 && adj.len() == offsets[n]);
    let out = super::Disjoint(adj.as_mut_ptr());
    let mut split = vec![0usize; n];
    let split_out = super::Disjoint(split.as_mut_ptr());
    let ranges = super::work_ranges(n, pool, |v| g.offsets[v] as usize);
    // Units only to hand the vertex ranges out; every write goes through `out`.
    super::for_each_range(&mut vec![(); n], &ranges, pool, |vs, _| {
        let (out, split_out) = (&out, &split_out);
        for v in vs {
            let r = rank[v] as usize;
            let (start, end) = (offsets[r], offsets[r + 1]);
            let list = g.neighbors(v as u32);
            assert_eq!(end - start, list.len());
            let (mut front, mut back) = (start, end);
            for &w in list {
                let x = rank[w as usize];
                let at = if x < r as u32 {
                    front += 1;
                    front - 1
                } else {
                    back -= 1;
                    back
                };
                // SAFETY: `at` lies in start..end, the list of rank r, which holds
                // exactly v's list.len() entries (asserted): front and back meet
                // after the last one. `rank` is a permutation, so rank r's list is
                // written by this worker alone, for v; `adj` outlives the call.
                unsafe { out.0.add(at).write(x) };
            }
            // SAFETY: r < n (rank is a permutation of 0..n, asserted length n), and
            // slot r belongs to v alone; `split` outlives the call.
            unsafe { split_out.0.add(r).write(front) };
        }
    });
    split
}

/// Vertices ranked by ascending (degree, id), by a counting sort: one pass counts
/// the degrees, one hands out ranks in vertex order, both sequential. The ranks of
/// one degree are consecutive, so the graph renumbered by rank has its lists laid out
/// by degree, and where each starts follows from its rank and degree alone.
pub(super) struct DegreeRanks {
    /// Rank of each vertex.
    pub(super) rank: Vec<u32>,
    /// Ranks `first[d]..first[d + 1]` are the vertices of degree d.
    first: Vec<usize>,
}

impl DegreeRanks {
    pub(super) fn new(g: &Graph) -> DegreeRanks {
        let n = g.vertices();
        let max = (0..n as u32).map(|v| g.degree(v)).max().unwrap_or(0);
        let mut first = vec![0usize; max + 2];
        for v in 0..n as u32 {
            first[g.degree(v) + 1] += 1;
        }
        for d in 0..=max {
            first[d + 1] += first[d];
        }
        let mut next = first.clone();
        let rank = (0..n as u32)
            .map(|v| {
                let d = g.degree(v);
                next[d] += 1;
                (next[d] - 1) as u32
            })
            .collect();
        DegreeRanks { rank, first }
    }

    /// Where each rank's list starts in the renumbered graph (n + 1 values, the last
    /// the entry count).
    pub(super) fn offsets(&self) -> Vec<usize> {
        let mut offsets = Vec::with_capacity(self.rank.len() + 1);
        offsets.push(0);
        let mut at = 0;
        offsets.extend(self.degrees().map(|d| {
            at += d;
            at
        }));
        offsets
    }

    /// The degree of each rank, in rank order.
    pub(super) fn degrees(&self) -> impl Iterator<Item = usize> + '_ {
        (self.first.windows(2).enumerate()).flat_map(|(d, w)| std::iter::repeat_n(d, w[1] - w[0]))
    }
}

/// Calls `f(i, j)` for positions of common elements of two sorted lists.
#[inline]
fn intersect(a: &[u32], b: &[u32], mut f: impl FnMut(usize, usize)) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                f(i, j);
                i += 1;
                j += 1;
            }
        }
    }
}

/// Runs `f(state, vertex)` over all `n` vertices on the pool's workers, claimed in
/// chunks of about equal list entries (64 per worker; `offset(v)` is where v's list
/// starts), so hubs, whose lists dwarf thousands of others, and slowed workers
/// balance out; each worker makes its `state` once and its results are summed.
fn over_vertices<S>(
    n: usize,
    offset: impl Fn(usize) -> usize + Sync,
    pool: &Pool,
    state: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, u32) -> u64 + Sync,
) -> u64 {
    let total = offset(n);
    let chunks = Chunks::per_worker(total, pool.threads(), 64);
    pool.broadcast(|_| {
        let mut s = state();
        let mut c = 0u64;
        while let Some(r) = chunks.claim() {
            // The vertices whose lists start inside the claimed entries (and the
            // empty lists at the very end with the last chunk).
            let lo = super::first_at(n, &offset, r.start);
            let hi = if r.end == total {
                n
            } else {
                super::first_at(n, &offset, r.end)
            };
            for v in lo..hi {
                c += f(&mut s, v as u32);
            }
        }
        c
    })
    .iter()
    .sum()
}

/// Triangles u < v < x (by rank) counted at their middle vertex v: the out-neighbours
/// of v are marked, then for each lower neighbour u only the tail of out(u) above v
/// is scanned (from the end, stopping at v). Each wedge u-v, u-x with v < x is looked
/// at once, so the cost is the sum of C(|out(u)|, 2), bounded by the orientation,
/// with no term for v's own list beyond marking it.
pub fn triangles(o: &Oriented, pool: &Pool) -> u64 {
    let n = o.vertices();
    over_vertices(
        n,
        |v| o.offsets[v],
        pool,
        || vec![false; n],
        |mark, v| {
            let (lower, upper) = (o.lower(v), o.out(v));
            if lower.is_empty() || upper.is_empty() {
                return 0;
            }
            for &x in upper {
                mark[x as usize] = true;
            }
            let mut c = 0;
            for (i, &u) in lower.iter().enumerate() {
                o.prefetch_ahead(lower, i);
                for &x in o.out(u).iter().rev() {
                    if x <= v {
                        break;
                    }
                    c += u64::from(mark[x as usize]);
                }
            }
            for &x in upper {
                mark[x as usize] = false;
            }
            c
        },
    )
}

/// Triangles on each oriented edge (indexed like `Oriented::out`).
fn edge_triangles(o: &Oriented, pool: &Pool) -> Vec<u32> {
    let counts: Vec<AtomicU32> = (0..o.adj.len()).map(|_| AtomicU32::new(0)).collect();
    over_vertices(
        o.vertices(),
        |v| o.offsets[v],
        pool,
        || (),
        |_, u| {
            let base_u = o.split[u as usize];
            for (iv, &v) in o.out(u).iter().enumerate() {
                let base_v = o.split[v as usize];
                let mut found = 0;
                intersect(o.out(u), o.out(v), |i, j| {
                    found += 1;
                    counts[base_u + i].fetch_add(1, Ordering::Relaxed);
                    counts[base_v + j].fetch_add(1, Ordering::Relaxed);
                });
                if found > 0 {
                    counts[base_u + iv].fetch_add(found, Ordering::Relaxed);
                }
            }
            0
        },
    );
    counts.into_iter().map(AtomicU32::into_inner).collect()
}

pub fn diamonds(o: &Oriented, pool: &Pool) -> u64 {
    edge_triangles(o, pool)
        .iter()
        .map(|&t| u64::from(t) * u64::from(t.saturating_sub(1)) / 2)
        .sum()
}

pub fn k4(o: &Oriented, pool: &Pool) -> u64 {
    over_vertices(
        o.vertices(),
        |v| o.offsets[v],
        pool,
        Vec::new,
        |common, u| {
            let mut c = 0;
            for &v in o.out(u) {
                common.clear();
                intersect(o.out(u), o.out(v), |i, _| common.push(o.out(u)[i]));
                for &x in common.iter() {
                    intersect(common, o.out(x), |_, _| c += 1);
                }
            }
            c
        },
    )
}

pub fn c4(g: &Graph, o: &Oriented, pool: &Pool) -> u64 {
    let n = g.vertices();
    let state = || (vec![0u32; n], Vec::new());
    let offset = |v: usize| g.offsets[v] as usize;
    over_vertices(n, offset, pool, state, |(cnt, touched), a| {
        let ra = o.rank[a as usize];
        for &v in g.neighbors(a) {
            if o.rank[v as usize] >= ra {
                continue;
            }
            for &b in g.neighbors(v) {
                if o.rank[b as usize] < ra {
                    if cnt[b as usize] == 0 {
                        touched.push(b);
                    }
                    cnt[b as usize] += 1;
                }
            }
        }
        let mut c = 0;
        for &b in touched.iter() {
            let k = u64::from(cnt[b as usize]);
            c += k * (k - 1) / 2;
            cnt[b as usize] = 0;
        }
        touched.clear();
        c
    })
}

/// The count of `pattern`, non-induced or vertex-induced.
pub fn count(g: &Graph, pattern: Pattern, induced: bool, pool: &Pool) -> u64 {
    let o = Oriented::new(g, pool);
    match (pattern, induced) {
        (Pattern::Triangle, _) => triangles(&o, pool),
        (Pattern::K4, _) => k4(&o, pool),
        (Pattern::Diamond, false) => diamonds(&o, pool),
        (Pattern::Diamond, true) => diamonds(&o, pool) - 6 * k4(&o, pool),
        (Pattern::C4, false) => c4(g, &o, pool),
        (Pattern::C4, true) => {
            let (k, d) = (k4(&o, pool), diamonds(&o, pool));
            c4(g, &o, pool) - (d - 6 * k) - 3 * k
        }
    }
}

pub use super::reference::{brute_force, reference_count};

#[cfg(test)]
mod rank_tests {
    use super::*;
    use crate::graph::gen::{generate, Kind};
    use crate::graph::tests::pool;

    #[test]
    fn the_ranked_layout_follows_from_rank_and_degree() {
        let p = pool(2);
        let (n, e) = generate(Kind::Kronecker, 9, &p);
        let g = Graph::from_edges(n, &e, &p);
        let ranks = DegreeRanks::new(&g);
        let offsets = ranks.offsets();
        assert_eq!(offsets.len(), n + 1);
        assert_eq!(offsets[n], g.neighbors.len());
        let mut seen = vec![false; n];
        for v in 0..n {
            let (r, d) = (ranks.rank[v] as usize, g.degree(v as u32));
            assert!(!std::mem::replace(&mut seen[r], true), "rank {r} twice");
            assert_eq!(offsets[r + 1] - offsets[r], d);
        }
        // Ascending by (degree, id).
        let mut by_rank = vec![0; n];
        (0..n).for_each(|v| by_rank[ranks.rank[v] as usize] = v);
        assert!(by_rank
            .windows(2)
            .all(|w| (g.degree(w[0] as u32), w[0]) < (g.degree(w[1] as u32), w[1])));
    }
}
