//! Graphs for the graph-mining and traversal workloads: an undirected CSR with
//! 32-bit vertex ids (symmetrised, without self-loops or duplicate edges, neighbour
//! lists sorted), built in parallel from an edge list; loaders for SNAP edge lists,
//! plain `.el` and Matrix Market, and a checked binary cache (`.csr`); the Graph500 Kronecker and uniform generators;
//! exact subgraph counts.

pub mod bfs;
pub mod bfs_arrays;
pub mod cache;
pub mod count;
pub mod gen;
pub mod load;
pub mod pagerank;
mod push;
pub mod reference;
pub mod renumber;
pub mod settings;
pub mod split;
pub use crate::sync::bench as syncbench;
pub mod workload;

use std::ops::Range;
use std::sync::Mutex;

use crate::blob::Column;
use crate::pool::{chunk, Chunks, Pool};

/// An undirected simple graph in compressed sparse row form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    /// `offsets[v]..offsets[v + 1]` indexes `neighbors` for vertex v.
    pub offsets: Column<u64>,
    /// Sorted neighbour lists, each edge stored in both directions (owned, or read
    /// in place from a mapped `.csr` cache).
    pub neighbors: Column<u32>,
}

impl Graph {
    pub fn vertices(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Undirected edges.
    pub fn edges(&self) -> usize {
        self.neighbors.len() / 2
    }

    pub fn neighbors(&self, v: u32) -> &[u32] {
        &self.neighbors[self.offsets[v as usize] as usize..self.offsets[v as usize + 1] as usize]
    }

    pub fn degree(&self, v: u32) -> usize {
        (self.offsets[v as usize + 1] - self.offsets[v as usize]) as usize
    }

    /// Bytes of the CSR per undirected edge.
    pub fn bytes_per_edge(&self) -> f64 {
        (self.offsets.len() * 8 + self.neighbors.len() * 4) as f64 / self.edges().max(1) as f64
    }

    /// Builds the CSR from directed or undirected pairs: both directions are kept,
    /// self-loops and duplicates dropped. Every phase runs on the pool's workers:
    /// degrees are counted per slice of the edge list, each worker scatters its slice
    /// to its own cursors, lists are sorted and deduplicated, then compacted.
    pub fn from_edges(n: usize, edges: &[(u32, u32)], pool: &Pool) -> Graph {
        let (offsets, mut lists) = fill_lists(n, edges, pool);
        let ranges = work_ranges(n, pool, |v| offsets[v]);
        let lengths = for_each_list(&mut lists, &offsets, &ranges, pool, |_, l| {
            l.sort_unstable();
            dedup_sorted(l)
        });
        let mut kept = vec![0usize; n + 1];
        for (v, len) in lengths.into_iter().enumerate() {
            kept[v + 1] = kept[v] + len;
        }
        let mut neighbors = vec![0u32; kept[n]];
        for_each_list(&mut neighbors, &kept, &ranges, pool, |v, l| {
            l.copy_from_slice(&lists[offsets[v]..offsets[v] + l.len()]);
        });
        Graph {
            offsets: kept
                .into_iter()
                .map(|o| o as u64)
                .collect::<Vec<_>>()
                .into(),
            neighbors: neighbors.into(),
        }
    }
}

/// A graph renumbered by decreasing degree (hubs first), with the maps both ways.
/// BFS and PageRank run on it: hubs get small ids, so a bottom-up BFS step, reading
/// a list in id order, asks the hubs (the likeliest frontier members) first, and the
/// hubs' frontier bits and PageRank contributions, which most lists read, share
/// cache lines; vertices of one degree are consecutive, so the loops over their lists
/// run the same number of times in a row. Built once when the input is prepared.
#[derive(Debug, Clone)]
pub struct Relabelled {
    pub graph: Graph,
    /// The original id of each new id.
    pub old: Vec<u32>,
    /// The new id of each original id.
    pub new: Vec<u32>,
}

impl Relabelled {
    /// Ranks the vertices by (degree, id) descending ([`renumber::Order`]), then the
    /// pool's workers write each new list (the old list mapped to new ids, sorted),
    /// reading the old lists block by block (`renumber::stream`: a mapped graph's
    /// pages are released as they are read).
    pub fn new(g: &Graph, pool: &Pool) -> Relabelled {
        let order = renumber::Order::by_degree(g);
        let graph = renumber::renumbered_csr(g, &order, pool);
        let (old, new) = order.into_maps();
        Relabelled { graph, old, new }
    }

    /// Original-id values from new-id ones: `out[v] = map(by_new[new[v]])`, written
    /// by the pool's workers.
    pub fn to_original<T: Copy + Default + Send + Sync>(
        &self,
        by_new: &[T],
        pool: &Pool,
        map: impl Fn(T) -> T + Sync,
    ) -> Vec<T> {
        let n = self.new.len();
        let mut out = vec![T::default(); n];
        let ranges = balanced_ranges(n, pool.threads() * 4, |v| v);
        for_each_range(&mut out, &ranges, pool, |vs, part| {
            for (o, v) in part.iter_mut().zip(vs) {
                *o = map(by_new[self.new[v] as usize]);
            }
        });
        out
    }
}

/// Both directions of the edges in worker w's slice of the list, self-loops left out.
fn each_entry(edges: &[(u32, u32)], w: usize, t: usize, mut f: impl FnMut(u32, u32)) {
    for &(a, b) in &edges[chunk(edges.len(), t, w, 1)] {
        if a != b {
            f(a, b);
            f(b, a);
        }
    }
}

/// Per worker, how many list entries its slice of the edges gives each vertex.
fn count_entries(n: usize, edges: &[(u32, u32)], pool: &Pool) -> Vec<Vec<u32>> {
    let t = pool.threads();
    pool.broadcast(|w| {
        let mut c = vec![0u32; n];
        each_entry(edges, w, t, |v, _| c[v as usize] += 1);
        c
    })
}

/// Unsorted lists with repeats, filled in parallel: entries are counted per worker,
/// then every worker writes its slice to its own run of each list. Returns offsets
/// and lists.
fn fill_lists(n: usize, edges: &[(u32, u32)], pool: &Pool) -> (Vec<usize>, Vec<u32>) {
    let mut starts = count_entries(n, edges, pool);
    let offsets = exclusive_prefix(n, &mut starts);
    let mut lists = vec![0u32; offsets[n]];
    scatter(edges, &starts, &offsets, &mut lists, pool);
    (offsets, lists)
}

/// List offsets from per-worker counts; each count becomes that worker's starting
/// position inside the vertex's list (the counts of the workers before it).
fn exclusive_prefix(n: usize, counts: &mut [Vec<u32>]) -> Vec<usize> {
    let mut offsets = vec![0usize; n + 1];
    for v in 0..n {
        let mut within = 0u32;
        for c in counts.iter_mut() {
            let k = c[v];
            c[v] = within;
            within += k;
        }
        offsets[v + 1] = offsets[v] + within as usize;
    }
    offsets
}

/// A pointer the workers share for writes to positions no two of them own.
pub(crate) struct Disjoint<T>(pub(crate) *mut T);
// SAFETY: the pointer is only written through at positions each worker owns alone
// (see `scatter` and PageRank's `pull`), with values that may move between threads,
// and the buffer outlives the broadcast that uses it.
unsafe impl<T: Send> Sync for Disjoint<T> {}

/// Every worker writes its slice of the edges at its own cursors.
fn scatter(
    edges: &[(u32, u32)],
    starts: &[Vec<u32>],
    offsets: &[usize],
    lists: &mut [u32],
    pool: &Pool,
) {
    let t = pool.threads();
    let out = Disjoint(lists.as_mut_ptr());
    let len = lists.len();
    pool.broadcast(|w| {
        let out = &out;
        // Absolute positions, so each entry costs one random read-modify-write.
        let mut cursor: Vec<usize> = starts[w]
            .iter()
            .zip(offsets)
            .map(|(&s, &o)| o + s as usize)
            .collect();
        each_entry(edges, w, t, |v, x| {
            let at = cursor[v as usize];
            cursor[v as usize] += 1;
            assert!(at < len);
            // SAFETY: `at` lies in list v, in the run of positions `exclusive_prefix`
            // gave worker w alone (as many as it counted for v in the same visiting
            // order, each written once); the assert keeps it in bounds.
            unsafe { out.0.add(at).write(x) };
        });
    });
}

/// Removes repeats from a sorted list in place; returns the length kept.
fn dedup_sorted(l: &mut [u32]) -> usize {
    let mut kept = 0;
    for i in 0..l.len() {
        if kept == 0 || l[i] != l[kept - 1] {
            l[kept] = l[i];
            kept += 1;
        }
    }
    kept
}

/// Vertex ranges for the pool's workers to claim (16 per worker), cut so each holds
/// about the same number of list entries (hubs make equal vertex counts unequal
/// work); `offset(v)` is where vertex v's list starts, for v in 0..=n.
pub(crate) fn work_ranges(
    n: usize,
    pool: &Pool,
    offset: impl Fn(usize) -> usize,
) -> Vec<Range<usize>> {
    balanced_ranges(n, pool.threads() * 16, offset)
}

/// The first vertex in `0..=n` whose list starts at or past entry `goal` (`offset`
/// is non-decreasing).
pub(crate) fn first_at(n: usize, offset: impl Fn(usize) -> usize, goal: usize) -> usize {
    let (mut a, mut b) = (0, n);
    while a < b {
        let mid = a + (b - a) / 2;
        if offset(mid) < goal {
            a = mid + 1;
        } else {
            b = mid;
        }
    }
    a
}

/// `t` contiguous vertex ranges holding about the same number of list entries.
fn balanced_ranges(n: usize, t: usize, offset: impl Fn(usize) -> usize) -> Vec<Range<usize>> {
    let total = offset(n);
    let mut ranges = Vec::with_capacity(t);
    let mut lo = 0;
    for w in 1..=t {
        let hi = if w == t {
            n
        } else {
            // The first vertex whose list starts at or past w/t of the entries.
            first_at(n, &offset, total * w / t).max(lo)
        };
        ranges.push(lo..hi);
        lo = hi;
    }
    ranges
}

/// Runs `f(i, part i of a, part i of b)` for every part, the parts cut from the
/// front of `a` and `b` with the given lengths and claimed one at a time by whichever
/// worker is free; the results come back in part order.
fn for_each_split2<A: Send, B: Send, R: Send>(
    a: &mut [A],
    b: &mut [B],
    lengths: impl Iterator<Item = usize>,
    pool: &Pool,
    f: impl Fn(usize, &mut [A], &mut [B]) -> R + Sync,
) -> Vec<R> {
    let mut parts = Vec::new();
    let (mut rest_a, mut rest_b) = (a, b);
    for len in lengths {
        let (part_a, tail_a) = rest_a.split_at_mut(len);
        let (part_b, tail_b) = rest_b.split_at_mut(len);
        parts.push(Mutex::new(Some((part_a, part_b))));
        (rest_a, rest_b) = (tail_a, tail_b);
    }
    let claims = Chunks::new(parts.len(), 1);
    let mut done: Vec<(usize, R)> = pool
        .broadcast(|_| {
            let mut mine = Vec::new();
            while let Some(r) = claims.claim() {
                let i = r.start;
                // Each index is claimed once, so its part is still there.
                let part = parts[i].lock().unwrap_or_else(|p| p.into_inner()).take();
                if let Some((part_a, part_b)) = part {
                    mine.push((i, f(i, part_a, part_b)));
                }
            }
            mine
        })
        .into_iter()
        .flatten()
        .collect();
    done.sort_unstable_by_key(|&(i, _)| i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Runs `f(i, part i)` for every part, the parts cut from the front of `data` with
/// the given lengths and claimed by whichever worker is free.
fn for_each_split<T: Send, R: Send>(
    data: &mut [T],
    lengths: impl Iterator<Item = usize>,
    pool: &Pool,
    f: impl Fn(usize, &mut [T]) -> R + Sync,
) -> Vec<R> {
    // Units take no memory: the second array is only there to share the splitting.
    let mut units = vec![(); data.len()];
    for_each_split2(data, &mut units, lengths, pool, |w, part, _| f(w, part))
}

/// Runs `f(range, &mut data[range])` for every range (contiguous from 0), each on
/// whichever worker claims it.
pub(crate) fn for_each_range<T: Send, R: Send>(
    data: &mut [T],
    ranges: &[Range<usize>],
    pool: &Pool,
    f: impl Fn(Range<usize>, &mut [T]) -> R + Sync,
) -> Vec<R> {
    for_each_split(data, ranges.iter().map(Range::len), pool, |w, part| {
        f(ranges[w].clone(), part)
    })
}

/// Runs `f(v, list of v)` for every vertex, the list being the mutable part of
/// `data` that `offsets` gives v, on the pool's workers (vertices claimed in
/// `ranges`); the results come back in vertex order.
pub(crate) fn for_each_list<T: Send, R: Send>(
    data: &mut [T],
    offsets: &[usize],
    ranges: &[Range<usize>],
    pool: &Pool,
    f: impl Fn(usize, &mut [T]) -> R + Sync,
) -> Vec<R> {
    let lengths = ranges.iter().map(|r| offsets[r.end] - offsets[r.start]);
    let per_range = for_each_split(data, lengths, pool, |w, part| {
        let base = offsets[ranges[w].start];
        ranges[w]
            .clone()
            .map(|v| f(v, &mut part[offsets[v] - base..offsets[v + 1] - base]))
            .collect::<Vec<_>>()
    });
    per_range.into_iter().flatten().collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) use crate::pool::test_pool as pool;

    #[test]
    fn csr_is_symmetric_simple_and_sorted() {
        let g = Graph::from_edges(
            4,
            &[(0, 1), (1, 0), (2, 2), (3, 1), (0, 1), (2, 0)],
            &pool(2),
        );
        assert_eq!(g.edges(), 3);
        assert_eq!(g.neighbors(0), &[1, 2]);
        assert_eq!(g.neighbors(1), &[0, 3]);
        assert_eq!(g.neighbors(2), &[0]);
        let r = Relabelled::new(&g, &pool(2));
        assert_eq!(r.graph.edges(), 3);
        // Degrees 2, 2, 1, 1: the ties go to the higher original id.
        assert_eq!(r.old, [1, 0, 3, 2]);
        assert_eq!(r.new, [1, 0, 3, 2]);
        assert_eq!(r.graph.neighbors(0), &[1, 2]);
        assert_eq!(r.graph.neighbors(1), &[0, 3]);
        assert_eq!(
            r.to_original(&[10, 11, 12, 13], &pool(3), |x| x + 1),
            [12, 11, 14, 13]
        );
    }

    /// The parallel build equals a plain set-based one for every worker count, with
    /// repeats, self-loops and isolated vertices (empty ranges) in the input.
    #[test]
    fn parallel_build_equals_a_serial_reference() {
        let n = 300;
        let mut x = 12345u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 200) as u32
        };
        let edges: Vec<(u32, u32)> = (0..3000).map(|_| (next(), next())).collect();
        let mut sets = vec![std::collections::BTreeSet::new(); n];
        for &(a, b) in &edges {
            if a != b {
                sets[a as usize].insert(b);
                sets[b as usize].insert(a);
            }
        }
        for t in 1..=4 {
            let g = Graph::from_edges(n, &edges, &pool(t));
            for (v, set) in sets.iter().enumerate() {
                let want: Vec<u32> = set.iter().copied().collect();
                assert_eq!(
                    g.neighbors(v as u32),
                    want.as_slice(),
                    "vertex {v}, {t} workers"
                );
            }
        }
    }

    #[test]
    fn ranges_balance_entries_and_cover_every_vertex() {
        let offsets = [0usize, 0, 0, 10, 10, 11, 30, 30];
        for t in 1..=5 {
            let r = balanced_ranges(7, t, |v| offsets[v]);
            assert_eq!(r.len(), t);
            assert_eq!(r[0].start, 0);
            assert_eq!(r[t - 1].end, 7);
            assert!(r.windows(2).all(|w| w[0].end == w[1].start));
        }
    }
}
