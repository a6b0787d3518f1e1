//! PageRank as in the GAP benchmark suite (pr.cc): damping 0.85, at most 20
//! iterations, stop when the sum of absolute score changes drops below the
//! tolerance (1e-4). The pull form reads each vertex's in-neighbours' contributions
//! (no synchronisation) over the graph renumbered by degree (hubs first), so the
//! hubs' contributions share cache lines and vertices of one degree run together;
//! only contributions are kept, in single precision (half the bytes; scores are
//! contribution times degree, relative error below 1e-6, against the tolerance's
//! 1e-4), summed in double precision; the lists are streamed with their ids below
//! 2^16 in 16 bits ([`SplitLists`], made straight from the original lists: the
//! iterations hold them and the map back to the original ids, no renumbered CSR). The push form (the `push` module) adds each
//! vertex's contribution into its neighbours' next scores, which needs
//! synchronisation, selectable to compare the mechanisms of the irregular-algorithms
//! study: one coarse lock, K striped locks, or atomics (a compare-and-swap loop on
//! the f64 bits), with `batch` updates made per critical section; or hardware
//! transactions (Intel RTM), where the CPU has them.
//! Results are verified against an independent serial pull PageRank.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use super::renumber::Order;
pub use super::split::SplitLists;
use super::Graph;
use crate::pool::{chunk, Pool, SpinBarrier};
pub use crate::sync::{rtm_available, transaction_status, Aborts, ElidedLock, Sync};

pub const DAMPING: f64 = 0.85;
pub const MAX_ITERS: usize = 20;

/// Result of a PageRank run.
#[derive(Debug, Clone)]
pub struct Ranks {
    pub scores: Vec<f64>,
    pub iterations: usize,
    /// HTM only: transactions started, and aborts by cause.
    pub transactions: u64,
    pub aborts: Aborts,
}

pub(super) fn add_f64(cell: &AtomicU64, v: f64) {
    let mut cur = cell.load(Ordering::Relaxed);
    loop {
        let next = (f64::from_bits(cur) + v).to_bits();
        match cell.compare_exchange_weak(cur, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return,
            Err(seen) => cur = seen,
        }
    }
}

/// PageRank with the chosen synchronisation and `batch` updates per critical section.
///
/// # Errors
/// `htm` on a CPU without RTM: the message says so and nothing runs.
pub fn pagerank(
    g: &Graph,
    sync: &Sync,
    batch: usize,
    tolerance: f64,
    pool: &Pool,
) -> Result<Ranks, String> {
    if *sync == Sync::Htm && !rtm_available() {
        return Err("unavailable here: this CPU does not offer Intel RTM (TSX absent or disabled), so no htm run is made".into());
    }
    Ok(match sync {
        Sync::Pull => pull_pagerank(g, tolerance, pool),
        _ => {
            // Vertex ranges with about the same number of list entries, claimed by
            // the workers.
            let ranges = super::work_ranges(g.vertices(), pool, |v| g.offsets[v] as usize);
            super::push::push_pagerank(g, sync, batch, tolerance, &ranges, pool)
        }
    })
}

/// Pull PageRank over the graph renumbered by degree ([`Order`]), the renumbering
/// part of the time.
fn pull_pagerank(g: &Graph, tolerance: f64, pool: &Pool) -> Ranks {
    let order = Order::by_degree(g);
    let lists = SplitLists::renumbered(g, &order, pool);
    pagerank_relabelled(&order, &lists, tolerance, pool)
}

/// Pull PageRank on a graph renumbered by degree when the input was prepared; the
/// scores come back in the original ids (the mapping back is part of the time). The
/// hubs' contributions, which most lists read, share cache lines (Graph500
/// scrambles ids, so in vertex order they are spread over the whole array), and
/// vertices of one degree are visited together, so the loop over their lists runs
/// the same number of times in a row (in vertex order the lengths are random and
/// every list's end is a mispredicted branch). `lists` are the renumbered graph's
/// lists ([`SplitLists::renumbered`]) under `order`.
pub fn pagerank_relabelled(
    order: &Order,
    lists: &SplitLists,
    tolerance: f64,
    pool: &Pool,
) -> Ranks {
    let n = lists.vertices();
    let old = order.old_ids();
    assert_eq!(old.len(), n);
    // Zeroed by the allocator; the workers write the first contributions.
    let mut contrib = [vec![0.0f32; n], vec![0.0f32; n]];
    let mut out = vec![0.0; n];
    let [c0, c1] = &mut contrib;
    // Every vertex from `active` on has no neighbours (the renumbering puts them
    // last): its contribution stays 0 in both buffers and its score at the base, so
    // no iteration visits it (a Kronecker graph has many).
    let active = super::first_at(n, |v| lists.offset(v), lists.entries());
    let team = Team {
        old,
        lists,
        tolerance,
        gather: Gather::for_len(n),
        active,
        // Ranges of the vertices with neighbours, with about the same number of list
        // entries, claimed by the workers.
        ranges: super::work_ranges(active, pool, |v| lists.offset(v)),
        contrib: [Buf::of(c0), Buf::of(c1)],
        out: Buf::of(&mut out),
        claims: Default::default(),
        errors: Default::default(),
        barrier: SpinBarrier::new(pool.threads()),
    };
    let iterations = pool.broadcast(|w| team.run(w, pool.threads()))[0];
    Ranks {
        scores: out,
        iterations,
        transactions: 0,
        aborts: Aborts::default(),
    }
}

/// A buffer the workers of a [`Team`] share: each iteration reads one of a pair
/// whole and writes the other in ranges no two workers share, a barrier between.
struct Buf<T> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: a `Buf` is only read while no worker writes it and written at positions
// one worker owns (see `Team`), with values that may move between threads; the
// vector it points into outlives the broadcast.
unsafe impl<T: Send> std::marker::Sync for Buf<T> {}

impl<T> Buf<T> {
    fn of(v: &mut [T]) -> Buf<T> {
        Buf {
            ptr: v.as_mut_ptr(),
            len: v.len(),
        }
    }

    /// # Safety
    /// No worker writes the buffer while the slice lives.
    unsafe fn all(&self) -> &[T] {
        // SAFETY: ptr and len come from one live slice; the caller excludes writes.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// # Safety
    /// No other worker reads or writes position `at` while this writes it.
    unsafe fn put(&self, at: usize, value: T) {
        assert!(at < self.len);
        // SAFETY: in bounds (asserted); the caller makes the position this worker's.
        unsafe { self.ptr.add(at).write(value) }
    }

    /// # Safety
    /// `at` lies in the buffer, and no other worker reads or writes it while the
    /// slice lives.
    #[allow(clippy::mut_from_ref)]
    unsafe fn part(&self, at: Range<usize>) -> &mut [T] {
        assert!(at.start <= at.end && at.end <= self.len);
        // SAFETY: in bounds (asserted); the caller makes the range this worker's alone.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(at.start), at.len()) }
    }
}

/// The workers of one pull PageRank: they stay in one team for every iteration
/// (a spinning barrier between iterations instead of a return to the pool, whose
/// sleeping workers a VM can take milliseconds to wake), claim vertex ranges as they
/// go, and map the scores back to the original ids at the end. Iteration i reads
/// scores and contributions `i % 2` and writes the other pair; its claim counter
/// and error sum are slot `i % 3`, reset by worker 0 two iterations after use.
struct Team<'r> {
    /// The original id of each new one.
    old: &'r [u32],
    lists: &'r SplitLists,
    tolerance: f64,
    /// How lists are summed, for contributions of this length.
    gather: Gather,
    /// The vertices with neighbours, ids `0..active`; the rest, which the ranges
    /// leave out, move their scores from 1/n to the base in the first iteration only.
    active: usize,
    ranges: Vec<Range<usize>>,
    contrib: [Buf<f32>; 2],
    out: Buf<f64>,
    claims: [AtomicUsize; 3],
    errors: [AtomicU64; 3],
    barrier: SpinBarrier,
}

impl Team<'_> {
    /// Worker `w` of `t`: its share of the first contributions, every iteration,
    /// then its share of the mapping back. Returns the iterations run (the same in
    /// every worker).
    fn run(&self, w: usize, t: usize) -> usize {
        let n = self.old.len();
        self.first_contributions(w, t);
        self.barrier.wait();
        let mut it = 0;
        loop {
            let (cur, next) = (it % 2, 1 - it % 2);
            if w == 0 {
                self.claims[(it + 1) % 3].store(0, Ordering::Relaxed);
                self.errors[(it + 1) % 3].store(0, Ordering::Relaxed);
            }
            // SAFETY: the `cur` buffer is written only in the iterations before and
            // after this one, each behind a barrier.
            let contrib = unsafe { self.contrib[cur].all() };
            let mut error = match (w, it) {
                (0, 0) => {
                    (n - self.active) as f64 * ((1.0 - DAMPING) / n as f64 - 1.0 / n as f64).abs()
                }
                _ => 0.0,
            };
            loop {
                let i = self.claims[it % 3].fetch_add(1, Ordering::Relaxed);
                let Some(vs) = self.ranges.get(i) else { break };
                // SAFETY: range i is claimed by this worker alone, the ranges are
                // disjoint and lie in 0..n, and nobody reads `next` this iteration.
                let c = unsafe { self.contrib[next].part(vs.clone()) };
                error += pull_range(self.lists, vs.clone(), contrib, it == 0, self.gather, c);
            }
            add_f64(&self.errors[it % 3], error);
            self.barrier.wait();
            it += 1;
            let total = f64::from_bits(self.errors[(it - 1) % 3].load(Ordering::Relaxed));
            if total < self.tolerance || it == MAX_ITERS {
                break;
            }
        }
        // SAFETY: the last iteration's contributions are final (its barrier passed).
        self.map_back(unsafe { self.contrib[it % 2].all() }, w, t);
        it
    }

    /// Worker `w`'s share of the first contributions, 1/n / degree, over the
    /// vertices with neighbours (one division per run of equal degrees: the
    /// renumbering sorts by degree).
    fn first_contributions(&self, w: usize, t: usize) {
        let n = self.old.len();
        let vs = chunk(self.active, t, w, 16);
        // SAFETY: chunk w of buffer 0 is this worker's alone, and nobody reads the
        // buffer before the barrier that follows.
        let part = unsafe { self.contrib[0].part(vs.clone()) };
        let (mut last, mut value) = (0, 0.0);
        for (c, v) in part.iter_mut().zip(vs) {
            let d = self.lists.degree(v);
            if d != last {
                (last, value) = (d, (1.0 / n as f64 / d as f64) as f32);
            }
            *c = value;
        }
    }

    /// Worker `w`'s share of the scores in the original ids from the final
    /// contributions `fin`: its chunk of the new ids, read in order (the list
    /// offsets stream), each score written to its original id.
    fn map_back(&self, fin: &[f32], w: usize, t: usize) {
        let n = fin.len();
        let base = (1.0 - DAMPING) / n as f64;
        for u in chunk(n, t, w, 8) {
            let s = score(fin[u], self.lists.degree(u), base);
            // SAFETY: `old` is an `Order`'s, a permutation of 0..n (asserted n
            // long), so no other worker writes
            // position old[u]; nobody reads `out` before the broadcast ends.
            unsafe { self.out.put(self.old[u] as usize, s) };
        }
    }
}

/// A vertex's score from its contribution (score / degree, single precision;
/// relative error 6e-8): a vertex without neighbours has the base score (after the
/// first iteration), so no scores are kept beside the contributions.
#[inline]
fn score(contrib: f32, degree: usize, base: f64) -> f64 {
    match degree {
        0 => base,
        d => f64::from(contrib) * d as f64,
    }
}

/// One range `vs` of a pull iteration over a renumbered graph (ids below n):
/// writes the new contributions (single precision), returns the sum of absolute
/// score changes, the previous scores taken from the previous contributions (the
/// stopping rule's sum then moves by at most 6e-8 of the scores' sum, 1, against
/// its tolerance of 1e-4; a score array would cost a read and a write of 8 bytes a
/// vertex each iteration).
fn pull_range(
    lists: &SplitLists,
    vs: Range<usize>,
    contrib: &[f32],
    first: bool,
    gather: Gather,
    next_contrib: &mut [f32],
) -> f64 {
    let n = contrib.len();
    assert!(lists.vertices() == n);
    let base = (1.0 - DAMPING) / n as f64;
    let mut error = 0.0;
    for (c, v) in next_contrib.iter_mut().zip(vs) {
        let (narrow, wide) = lists.of(v);
        // SAFETY: split lists hold the new ids of a renumbered graph, below n. The
        // narrow ids read at most 256 KiB of contributions, which stay in the L2:
        // scalar loads there (kron:18 1.05x faster than the gather, kron:20 level).
        let sum = unsafe { gather_sum(narrow, contrib) + gather.sum(wide, contrib) };
        let s = base + DAMPING * sum;
        let d = narrow.len() + wide.len();
        let old = match (d, first) {
            (0, true) => 1.0 / n as f64,
            (d, _) => score(contrib[v], d, base),
        };
        *c = match d {
            0 => 0.0,
            d => (s / d as f64) as f32,
        };
        error += (s - old).abs();
    }
    error
}

/// Contribution arrays from this size up are summed with the AVX2 gather
/// instruction on lists of at least [`WIDE_FROM`] entries. Measured on a Zen 4 (1 MiB
/// L2 a core; per-iteration CPU time, Kronecker graphs): an array in the L2 (scale
/// 16, 256 KiB) is read faster by scalar loads (the gather took 1.17x longer), one
/// past it (scale 18 and 20, 1 and 4 MiB) faster by the gather, which keeps eight
/// misses in flight per instruction (0.88x the time).
const WIDE_FROM_BYTES: usize = 512 << 10;
/// Shorter lists than this are summed by scalar loads even in wide mode.
const WIDE_FROM: usize = 32;

/// How pull iterations over `n` contributions sum a list: wide ([`gather_sum_wide`])
/// when the array is past [`WIDE_FROM_BYTES`], every id fits the gather's signed
/// 32-bit index and the CPU has AVX2 (only [`Gather::for_len`] makes one, so a wide
/// one proves all three).
#[derive(Clone, Copy)]
struct Gather {
    wide: bool,
}

impl Gather {
    fn for_len(n: usize) -> Gather {
        #[cfg(target_arch = "x86_64")]
        let wide = n * 4 >= WIDE_FROM_BYTES
            && n <= i32::MAX as usize
            && std::arch::is_x86_feature_detected!("avx2");
        #[cfg(not(target_arch = "x86_64"))]
        let wide = false;
        Gather { wide }
    }

    /// The sum of `contrib` (the array this was made for) over `ids`,
    /// [`gather_sum_wide`] when wide and the list has at least [`WIDE_FROM`]
    /// entries, [`gather_sum`] otherwise.
    ///
    /// # Safety
    /// Every id must be below `contrib.len()`.
    #[inline]
    unsafe fn sum(self, ids: &[u32], contrib: &[f32]) -> f64 {
        #[cfg(target_arch = "x86_64")]
        if self.wide && ids.len() >= WIDE_FROM {
            // SAFETY: ids in bounds (the caller's promise); wide means the CPU has
            // AVX2 and every id fits an i32 (`for_len`).
            return unsafe { gather_sum_wide(ids, contrib) };
        }
        // SAFETY: ids in bounds (the caller's promise).
        unsafe { gather_sum(ids, contrib) }
    }
}

/// A list entry: a vertex id in 16 bits ([`SplitLists`]'s narrow part) or 32.
trait Id: Copy + Into<u64> {}
impl Id for u16 {}
impl Id for u32 {}

/// The sum of `contrib` over `ids` with AVX2: two gathers of eight single-precision
/// contributions per step, widened to double precision into four running sums of
/// four; the tail of fewer than 16 entries by [`gather_sum`].
///
/// # Safety
/// The CPU has AVX2; every id is below `contrib.len()` and at most `i32::MAX`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn gather_sum_wide(ids: &[u32], contrib: &[f32]) -> f64 {
    use std::arch::x86_64::*;
    let mut acc = [_mm256_setzero_pd(); 4];
    let mut steps = ids.chunks_exact(16);
    let base = contrib.as_ptr();
    for step in &mut steps {
        // SAFETY: each load reads 8 ids of the 16-entry step (unaligned loads); each
        // gather reads contrib at those ids, in bounds and non-negative as i32 (the
        // caller's promise).
        let (low, high) = unsafe {
            let i0 = _mm256_loadu_si256(step.as_ptr().cast());
            let i1 = _mm256_loadu_si256(step.as_ptr().add(8).cast());
            (
                _mm256_i32gather_ps::<4>(base, i0),
                _mm256_i32gather_ps::<4>(base, i1),
            )
        };
        for (k, v) in [low, high].into_iter().enumerate() {
            let halves = [_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v)];
            for (j, half) in halves.into_iter().enumerate() {
                acc[2 * k + j] = _mm256_add_pd(acc[2 * k + j], _mm256_cvtps_pd(half));
            }
        }
    }
    let mut lanes = [0.0f64; 4];
    let sum = _mm256_add_pd(_mm256_add_pd(acc[0], acc[1]), _mm256_add_pd(acc[2], acc[3]));
    // SAFETY: `lanes` holds four f64, the store's width.
    unsafe { _mm256_storeu_pd(lanes.as_mut_ptr(), sum) };
    // SAFETY: the remainder's ids are in bounds too.
    (lanes[0] + lanes[1])
        + (lanes[2] + lanes[3])
        + unsafe { gather_sum(steps.remainder(), contrib) }
}

/// The sum of `contrib` over `ids`, in four independent running sums so the adds do
/// not wait on each other (one chain of dependent adds would bound the kernel by the
/// add latency, not by the loads). Unchecked loads: with a bounds check per entry
/// the kernel ran 1.2x slower.
///
/// # Safety
/// Every id must be below `contrib.len()`.
#[inline]
unsafe fn gather_sum<I: Id>(ids: &[I], contrib: &[f32]) -> f64 {
    // SAFETY: the caller guarantees every id is in bounds.
    let at = |u: I| f64::from(unsafe { *contrib.get_unchecked(u.into() as usize) });
    let mut acc = [0.0f64; 4];
    let mut quads = ids.chunks_exact(4);
    for q in &mut quads {
        for (a, &u) in acc.iter_mut().zip(q) {
            *a += at(u);
        }
    }
    let rest: f64 = quads.remainder().iter().map(|&u| at(u)).sum();
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + rest
}

/// An independent serial pull PageRank in double precision for the same number of
/// iterations; every score of `ranks` must be within [`VERIFY_RELATIVE`] of it.
///
/// # Errors
/// A sentence naming the worst vertex.
pub fn verify(g: &Graph, ranks: &Ranks) -> Result<(), String> {
    let n = g.vertices();
    let base = (1.0 - DAMPING) / n as f64;
    // Two arrays, each rewritten in place: an iteration's scores read only the
    // contributions, which are made from the scores before.
    let mut s = vec![1.0 / n as f64; n];
    let mut c = vec![0.0f64; n];
    for _ in 0..ranks.iterations {
        for (v, cv) in c.iter_mut().enumerate() {
            *cv = match g.degree(v as u32) {
                0 => 0.0,
                d => s[v] / d as f64,
            };
        }
        let mut released = 0;
        for (v, sv) in s.iter_mut().enumerate() {
            let sum = g
                .neighbors(v as u32)
                .iter()
                .map(|&u| c[u as usize])
                .sum::<f64>();
            *sv = base + DAMPING * sum;
            // The lists are read in order: a mapped graph's pages read so far go
            // (a page of them at a time, read back from the page cache in the next
            // iteration), so the check holds its arrays and about one page of the
            // graph, not the whole graph (it runs after the kernel's copies are
            // released: the memory peak is then the kernel's).
            let read = g.offsets[v + 1] as usize;
            if read - released >= RELEASE_EVERY {
                g.neighbors.release(released.saturating_sub(1024)..read);
                released = read;
            }
        }
        g.neighbors.release(0..g.neighbors.len());
    }
    // Every reference score is at least `base` > 0, so the relative error is defined.
    let (worst, diff) = (0..n)
        .map(|v| (v, (s[v] - ranks.scores[v]).abs() / s[v]))
        .fold((0, 0.0), |a, b| if b.1 > a.1 { b } else { a });
    if diff <= VERIFY_RELATIVE {
        Ok(())
    } else {
        Err(format!(
            "vertex {worst}: score {} differs from the reference {} by {:.2e} of it",
            ranks.scores[worst], s[worst], diff
        ))
    }
}

/// List entries the check reads between releases of a mapped graph's pages (1 MiB).
const RELEASE_EVERY: usize = 1 << 18;

/// The largest relative difference from the reference that [`verify`] accepts:
/// single-precision contributions round each by at most 2^-24 (6e-8), damping
/// keeps the accumulated error within 1 / (1 - 0.85) of that, 4e-7, and a score
/// read back from its contribution adds one more rounding, 6e-8.
pub const VERIFY_RELATIVE: f64 = 1e-6;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::gen::{generate, Kind};
    use crate::graph::tests::pool;

    #[test]
    fn the_verifier_names_a_score_off_by_more_than_rounding() {
        let p = pool(2);
        let (n, e) = generate(Kind::Kronecker, 10, &p);
        let g = Graph::from_edges(n, &e, &p);
        let good = pagerank(&g, &Sync::Pull, 1, 1e-4, &p).unwrap();
        verify(&g, &good).unwrap();
        let mut bad = good.clone();
        bad.scores[77] *= 1.0 + 10.0 * VERIFY_RELATIVE;
        let why = verify(&g, &bad).unwrap_err();
        assert!(why.starts_with("vertex 77:"), "{why}");
        // One iteration fewer than the scores had is a different answer too.
        bad = good.clone();
        bad.iterations -= 1;
        assert!(verify(&g, &bad).is_err());
    }

    #[test]
    fn every_available_mechanism_gives_the_reference_scores() {
        let p = pool(2);
        let (n, e) = generate(Kind::Kronecker, 11, &p);
        let g = Graph::from_edges(n, &e, &p);
        for sync in ["pull", "coarse-lock", "striped-locks:64", "atomic", "htm"] {
            let s: Sync = sync.parse().unwrap();
            for batch in [1, 16] {
                match pagerank(&g, &s, batch, 1e-4, &p) {
                    Ok(r) => {
                        verify(&g, &r).unwrap_or_else(|e| panic!("{sync} batch {batch}: {e}"));
                        assert!(r.iterations > 1);
                    }
                    Err(why) => {
                        assert_eq!(s, Sync::Htm);
                        assert!(
                            !rtm_available() && why.starts_with("unavailable here"),
                            "{why}"
                        );
                    }
                }
            }
        }
        assert!("striped-locks:0".parse::<Sync>().is_err() && "mutex".parse::<Sync>().is_err());
    }

    #[test]
    fn the_wide_gather_sums_what_the_scalar_one_does() {
        let n = WIDE_FROM_BYTES / 4;
        let wide = Gather::for_len(n);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(wide.wide, std::arch::is_x86_feature_detected!("avx2"));
        assert!(!Gather::for_len(n - 1).wide);
        let contrib: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 / 7.0 + 1e-3).collect();
        for len in [0, 1, 15, 16, 31, 32, 33, 47, 100, 1001] {
            let mut ids: Vec<u32> = (0..len).map(|i| ((i * 7919 + 13) % n) as u32).collect();
            ids.extend([0, n as u32 - 1]);
            let want: f64 = ids.iter().map(|&u| f64::from(contrib[u as usize])).sum();
            let short: Vec<u16> = ids.iter().map(|&u| (u % (1 << 16)) as u16).collect();
            let want16: f64 = short.iter().map(|&u| f64::from(contrib[u as usize])).sum();
            // SAFETY: every id is below n, the length of `contrib`.
            let sums = unsafe {
                [
                    ("wide", wide.sum(&ids, &contrib), want),
                    ("scalar", gather_sum(&ids, &contrib), want),
                    ("scalar 16-bit", gather_sum(&short, &contrib), want16),
                ]
            };
            for (how, sum, want) in sums {
                assert!(
                    (sum - want).abs() <= 1e-12 * want,
                    "{how} {len}: {sum} vs {want}"
                );
            }
        }
    }

    #[test]
    fn pull_handles_isolated_vertices_and_graphs_without_edges() {
        // One edge and an isolated vertex: the pair sits at the fixed point
        // 0.05 / 0.15 = 1/3 from the first iteration on, the isolated vertex at the
        // base 0.05; the second iteration changes nothing and stops.
        for threads in [1, 2, 3] {
            let p = pool(threads);
            let g = Graph::from_edges(3, &[(0, 1)], &p);
            let r = pagerank(&g, &Sync::Pull, 1, 1e-4, &p).unwrap();
            assert_eq!(r.iterations, 2);
            for (got, want) in r.scores.iter().zip([1.0 / 3.0, 1.0 / 3.0, 0.05]) {
                assert!((got - want).abs() < 1e-7, "{:?}", r.scores);
            }
            let empty = Graph::from_edges(4, &[], &p);
            let r = pagerank(&empty, &Sync::Pull, 1, 1e-4, &p).unwrap();
            assert!(r.scores.iter().all(|&s| (s - 0.15 / 4.0).abs() < 1e-12));
            verify(&empty, &r).unwrap();
        }
    }

    #[test]
    fn pull_agrees_with_the_reference_at_every_thread_count() {
        let g1 = pool(1);
        let (n, e) = generate(Kind::Uniform, 9, &g1);
        let g = Graph::from_edges(n, &e, &g1);
        for threads in [1, 2, 3, 5] {
            let r = pagerank(&g, &Sync::Pull, 1, 1e-6, &pool(threads)).unwrap();
            verify(&g, &r).unwrap_or_else(|e| panic!("{threads} threads: {e}"));
        }
    }

    #[test]
    fn a_prepared_relabelling_gives_the_reference_scores_in_original_ids() {
        let p = pool(3);
        let (n, e) = generate(Kind::Kronecker, 10, &p);
        let g = Graph::from_edges(n, &e, &p);
        let order = Order::by_degree(&g);
        let lists = SplitLists::renumbered(&g, &order, &p);
        let ranks = pagerank_relabelled(&order, &lists, 1e-4, &p);
        verify(&g, &ranks).unwrap();
        let direct = pagerank(&g, &Sync::Pull, 1, 1e-4, &p).unwrap();
        assert_eq!(
            (ranks.scores, ranks.iterations),
            (direct.scores, direct.iterations)
        );
        // Split low, so both parts of the lists are used at this size (the lists
        // themselves are checked in `split`): scores the reference accepts.
        for bound in [0, 1, 64, 1000] {
            let low = SplitLists::renumbered_below(&g, &order, bound, &p);
            verify(&g, &pagerank_relabelled(&order, &low, 1e-4, &p)).unwrap();
        }
        assert_eq!(n, lists.vertices());
    }
}
