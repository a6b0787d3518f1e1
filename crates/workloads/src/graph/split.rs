//! Pull PageRank's input ([`SplitLists`]): the lists of a graph renumbered by
//! degree, each sorted list's ids below 2^16 (the hubs, which most entries name) in
//! 16 bits and the rest in 32, with both offsets. The iterations stream the lists,
//! and on a Kronecker graph of scale 20, where 81% of the entries name one of the
//! first 65,536 vertices, this reads 62% of the bytes. Made once, when the input is
//! prepared, straight from the original lists ([`SplitLists::renumbered`]: they are
//! streamed block by block, `renumber::stream`), so no renumbered CSR is
//! held beside them: the iterations need the split lists and the map back to the
//! original ids only.

use super::renumber::{stream, Order};
use super::{Disjoint, Graph};
use crate::pool::Pool;

/// Ids below this are kept in 16 bits.
const NARROW_BELOW: u32 = 1 << 16;

/// A renumbered graph's lists as the pull iterations read them.
pub struct SplitLists {
    narrow_at: Vec<usize>,
    narrow: Vec<u16>,
    wide_at: Vec<usize>,
    wide: Vec<u32>,
}

impl SplitLists {
    /// The lists of `g` (already renumbered) split.
    pub fn new(g: &Graph, pool: &Pool) -> SplitLists {
        SplitLists::below(g, NARROW_BELOW, pool)
    }

    /// The lists of `g` renumbered by `order`, split: made from `g`'s lists read
    /// twice, block by block (once to count each new list's narrow ids, once to
    /// write them), never holding the renumbered CSR.
    pub fn renumbered(g: &Graph, order: &Order, pool: &Pool) -> SplitLists {
        SplitLists::renumbered_below(g, order, NARROW_BELOW, pool)
    }

    /// Lists split at `bound` (at most 2^16; tests split smaller graphs lower).
    pub(super) fn below(g: &Graph, bound: u32, pool: &Pool) -> SplitLists {
        SplitLists::renumbered_below(g, &Order::identity(g.vertices()), bound, pool)
    }

    /// [`SplitLists::renumbered`] split at `bound`.
    pub(super) fn renumbered_below(
        g: &Graph,
        order: &Order,
        bound: u32,
        pool: &Pool,
    ) -> SplitLists {
        assert!(bound <= NARROW_BELOW);
        let n = g.vertices();
        let new = order.new_ids();
        // Each new list's narrow ids, counted from its old list.
        let mut cuts = vec![0u32; n];
        let at = Disjoint(cuts.as_mut_ptr());
        stream(g, pool, |vs| {
            let at = &at;
            for v in vs {
                let cut = g.neighbors(v as u32).iter();
                let cut = cut.filter(|&&w| new[w as usize] < bound).count() as u32;
                let u = new[v] as usize;
                assert!(u < n);
                // SAFETY: `new` is a permutation, so cell u is written for v alone,
                // in bounds (asserted), and read after `stream` returns.
                unsafe { at.0.add(u).write(cut) };
            }
        });
        let narrow_at = prefix(n, |u| cuts[u] as usize);
        let wide_at = prefix(n, |u| g.degree(order.old_ids()[u]) - cuts[u] as usize);
        drop(cuts);
        let mut lists = SplitLists {
            narrow: vec![0u16; narrow_at[n]],
            wide: vec![0u32; wide_at[n]],
            narrow_at,
            wide_at,
        };
        lists.fill(g, order, pool);
        lists
    }

    /// Writes every new list: the old list mapped to new ids and sorted (in a
    /// worker's scratch), its narrow ids in 16 bits, the rest in 32.
    fn fill(&mut self, g: &Graph, order: &Order, pool: &Pool) {
        let (narrow, wide) = (
            Disjoint(self.narrow.as_mut_ptr()),
            Disjoint(self.wide.as_mut_ptr()),
        );
        let (narrow_at, wide_at) = (&self.narrow_at, &self.wide_at);
        let (nm, wm) = (self.narrow.len(), self.wide.len());
        let new = order.new_ids();
        stream(g, pool, |vs| {
            let (narrow, wide) = (&narrow, &wide);
            let mut list = Vec::new();
            for v in vs {
                list.clear();
                list.extend(g.neighbors(v as u32).iter().map(|&w| new[w as usize]));
                list.sort_unstable();
                let u = new[v] as usize;
                let (a, b) = (narrow_at[u], narrow_at[u + 1]);
                let (c, d) = (wide_at[u], wide_at[u + 1]);
                assert!(a <= b && b <= nm && c <= d && d <= wm && b - a + d - c == list.len());
                for (i, &x) in list.iter().enumerate() {
                    // SAFETY: `new` is a permutation, so new list u's ranges a..b and
                    // c..d are written for v alone; they lie in the arrays (asserted)
                    // and the ranges of distinct u are disjoint (the offsets rise);
                    // nothing reads the lists before `stream` returns. The first b - a
                    // ids are the narrow ones (sorted, counted alike), below 2^16.
                    unsafe {
                        match i < b - a {
                            true => narrow.0.add(a + i).write(x as u16),
                            false => wide.0.add(c + i - (b - a)).write(x),
                        }
                    }
                }
            }
        });
    }

    pub(super) fn vertices(&self) -> usize {
        self.narrow_at.len() - 1
    }

    /// List entries in all.
    pub(super) fn entries(&self) -> usize {
        self.narrow.len() + self.wide.len()
    }

    /// Where vertex v's list starts among all entries (its offset in the
    /// renumbered CSR).
    #[inline]
    pub(super) fn offset(&self, v: usize) -> usize {
        self.narrow_at[v] + self.wide_at[v]
    }

    #[inline]
    pub(super) fn degree(&self, v: usize) -> usize {
        self.offset(v + 1) - self.offset(v)
    }

    /// Vertex v's list: its ids below the bound, then the others.
    #[inline]
    pub(super) fn of(&self, v: usize) -> (&[u16], &[u32]) {
        (
            &self.narrow[self.narrow_at[v]..self.narrow_at[v + 1]],
            &self.wide[self.wide_at[v]..self.wide_at[v + 1]],
        )
    }
}

/// `n + 1` running sums of `len(0..n)`, from 0.
fn prefix(n: usize, len: impl Fn(usize) -> usize) -> Vec<usize> {
    let mut at = Vec::with_capacity(n + 1);
    at.push(0);
    for u in 0..n {
        at.push(at[u] + len(u));
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::gen::{generate, Kind};
    use crate::graph::tests::pool;
    use crate::graph::Relabelled;

    /// Made straight from the original lists, split low enough that both parts are
    /// used: the renumbered CSR's lists, each cut at the bound.
    #[test]
    fn lists_made_from_the_original_are_the_renumbered_lists_split() {
        let p = pool(3);
        let (n, e) = generate(Kind::Kronecker, 11, &p);
        let g = Graph::from_edges(n, &e, &p);
        let r = Relabelled::new(&g, &p);
        let order = Order::by_degree(&g);
        assert_eq!((order.old_ids(), order.new_ids()), (&r.old[..], &r.new[..]));
        for bound in [0, 1, 64, 1000, NARROW_BELOW] {
            let lists = SplitLists::renumbered_below(&g, &order, bound, &p);
            assert_eq!(lists.entries(), r.graph.neighbors.len());
            for v in 0..n {
                let (narrow, wide) = lists.of(v);
                assert!(narrow.iter().all(|&u| u32::from(u) < bound));
                assert!(wide.iter().all(|&u| u >= bound));
                let joined: Vec<u32> = narrow
                    .iter()
                    .map(|&u| u32::from(u))
                    .chain(wide.iter().copied())
                    .collect();
                assert_eq!(
                    joined,
                    r.graph.neighbors(v as u32),
                    "bound {bound} vertex {v}"
                );
                assert_eq!(lists.degree(v), r.graph.degree(v as u32));
                assert_eq!(lists.offset(v), r.graph.offsets[v] as usize);
            }
            let direct = SplitLists::below(&r.graph, bound, &p);
            assert_eq!(
                (direct.narrow, direct.wide, direct.narrow_at, direct.wide_at),
                (lists.narrow, lists.wide, lists.narrow_at, lists.wide_at)
            );
        }
    }
}
