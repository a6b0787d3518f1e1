//! Renumbering a graph by degree without holding two copies of it at once: the
//! order (hubs first, [`Order`]), and the reading of the original lists block by
//! block (`stream`), each block's pages dropped from the process once every worker
//! is done with it where the graph is mapped from a `.csr` file, so what is made
//! from the lists (the renumbered CSR for BFS, the split lists for PageRank) grows
//! while the original shrinks. The original reads the same afterwards (a later read
//! maps its pages again from the page cache): the independent checks read it there,
//! in original ids, once the kernel's copy is gone.

use std::ops::Range;

use super::{balanced_ranges, first_at, Disjoint, Graph};
use crate::pool::{Chunks, Pool};

/// List entries read per block: 1 MiB of ids, so about this much of the original
/// is resident beside what is made from it (4 KiB in the unit tests, so their small
/// graphs take many blocks).
const BLOCK_ENTRIES: usize = if cfg!(test) { 1 << 10 } else { 1 << 18 };

/// A renumbering: a permutation of the vertices (made only by [`Order::by_degree`]
/// and [`Order::identity`], so the kernels' disjoint writes can rely on it).
#[derive(Debug, Clone)]
pub struct Order {
    /// The original id of each new id.
    old: Vec<u32>,
    /// The new id of each original id.
    new: Vec<u32>,
}

impl Order {
    /// Every vertex keeps its id.
    pub fn identity(n: usize) -> Order {
        let ids: Vec<u32> = (0..n as u32).collect();
        Order {
            old: ids.clone(),
            new: ids,
        }
    }

    /// The original id of each new id.
    pub fn old_ids(&self) -> &[u32] {
        &self.old
    }

    /// The new id of each original id.
    pub fn new_ids(&self) -> &[u32] {
        &self.new
    }

    /// Both maps, `(old, new)`.
    pub fn into_maps(self) -> (Vec<u32>, Vec<u32>) {
        (self.old, self.new)
    }

    /// The renumbering by decreasing degree (hubs first; ties to the higher original
    /// id): a counting sort of the degrees (the offsets are read, not the lists).
    pub fn by_degree(g: &Graph) -> Order {
        let n = g.vertices();
        let ranks = super::count::DegreeRanks::new(g);
        let new: Vec<u32> = ranks.rank.iter().map(|&r| (n - 1) as u32 - r).collect();
        let mut old = vec![0u32; n];
        for (v, &i) in new.iter().enumerate() {
            old[i as usize] = v as u32;
        }
        Order { old, new }
    }

    /// Where each new id's list starts in the renumbered graph (n + 1 values).
    pub fn offsets(&self, g: &Graph) -> Vec<usize> {
        let mut offsets = Vec::with_capacity(self.old.len() + 1);
        offsets.push(0usize);
        for &v in &self.old {
            offsets.push(offsets[offsets.len() - 1] + g.degree(v));
        }
        offsets
    }
}

impl Graph {
    /// Drops the graph's pages from this process where it is mapped from a file (see
    /// [`crate::blob::Column::release`]); it reads the same afterwards.
    pub fn release(&self) {
        self.offsets.release(0..self.offsets.len());
        self.neighbors.release(0..self.neighbors.len());
    }
}

/// Runs `f` over every vertex range of `g` in order of blocks of about
/// [`BLOCK_ENTRIES`] list entries: a block's ranges (about four per worker, equal
/// in entries) are claimed by the pool's workers, and once the block is done its
/// pages are released ([`crate::blob::Column::release`]; nothing happens to a graph
/// built in memory). The whole graph is released first (a mapped file is resident
/// after its load check), so each block faults in its own pages from the page cache
/// and only about one block is resident at a time: what `f` makes is written all
/// over its output from the first block on (a renumbering scatters), so it is fully
/// resident early, and the original must not be.
pub(super) fn stream(g: &Graph, pool: &Pool, f: impl Fn(Range<usize>) + Sync) {
    g.release();
    let n = g.vertices();
    let off = |v: usize| g.offsets[v] as usize;
    let mut lo = 0;
    while lo < n {
        let hi = first_at(n, off, off(lo) + BLOCK_ENTRIES).clamp(lo + 1, n);
        let ranges: Vec<Range<usize>> =
            balanced_ranges(hi - lo, pool.threads() * 4, |v| off(lo + v) - off(lo))
                .into_iter()
                .map(|r| lo + r.start..lo + r.end)
                .collect();
        let claims = Chunks::new(ranges.len(), 1);
        pool.broadcast(|_| {
            while let Some(i) = claims.claim() {
                f(ranges[i.start].clone());
            }
        });
        // From the start, so the page a block shares with the one before goes too.
        g.neighbors.release(0..off(hi));
        g.offsets.release(0..hi);
        lo = hi;
    }
}

/// The lists of `g` under `order`, as a CSR: each original list, streamed, is
/// written mapped to new ids at its new vertex's place and sorted there.
pub(super) fn renumbered_csr(g: &Graph, order: &Order, pool: &Pool) -> Graph {
    let offsets = order.offsets(g);
    let m = g.neighbors.len();
    let mut neighbors = vec![0u32; m];
    let out = Disjoint(neighbors.as_mut_ptr());
    let new = order.new_ids();
    stream(g, pool, |vs| {
        let out = &out;
        for v in vs {
            let u = new[v] as usize;
            let (a, b) = (offsets[u], offsets[u + 1]);
            assert!(a <= b && b <= m);
            // SAFETY: `new` is a permutation, so list u is written by this call for
            // v alone; its range a..b lies in `neighbors` (asserted), the ranges of
            // distinct u are disjoint (offsets rise), and nothing reads `neighbors`
            // before `stream` returns.
            let list = unsafe { std::slice::from_raw_parts_mut(out.0.add(a), b - a) };
            for (x, &w) in list.iter_mut().zip(g.neighbors(v as u32)) {
                *x = new[w as usize];
            }
            list.sort_unstable();
        }
    });
    Graph {
        offsets: offsets
            .into_iter()
            .map(|o| o as u64)
            .collect::<Vec<_>>()
            .into(),
        neighbors: neighbors.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::gen::{generate, Kind};
    use crate::graph::tests::pool;

    /// Streaming a mapped graph releases its pages as it goes, and the graph reads
    /// the same afterwards: the renumbered copy equals the one made list by list.
    #[test]
    fn a_mapped_graph_released_block_by_block_reads_the_same() {
        let p = pool(2);
        let (n, e) = generate(Kind::Kronecker, 14, &p);
        let built = Graph::from_edges(n, &e, &p);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("g.csr");
        super::super::cache::save(&built, &file, "kron:14").unwrap();
        let (mapped, _) = super::super::cache::load(&file, &p).unwrap();
        assert!(mapped.neighbors.release(0..1) && !built.neighbors.release(0..1));
        let order = Order::by_degree(&mapped);
        let streamed = renumbered_csr(&mapped, &order, &p);
        mapped.release();
        assert_eq!(mapped, built, "the released map reads as before");
        for u in 0..n as u32 {
            let mut want: Vec<u32> = built
                .neighbors(order.old[u as usize])
                .iter()
                .map(|&w| order.new[w as usize])
                .collect();
            want.sort_unstable();
            assert_eq!(streamed.neighbors(u), want.as_slice(), "new vertex {u}");
        }
    }
}
