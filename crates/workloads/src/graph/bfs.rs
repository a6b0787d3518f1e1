//! Direction-optimizing breadth-first search (S. Beamer, K. Asanović, D. Patterson,
//! "Direction-Optimizing Breadth-First Search", SC 2012; as in the GAP benchmark
//! suite's bfs.cc): top-down steps claim children with compare-and-swap on the parent
//! array; when the frontier's edges exceed 1/alpha of the unexplored edges the search
//! switches to bottom-up steps (every unvisited vertex looks for a parent in the
//! frontier bitmap), and back when the frontier shrinks below n/beta vertices.
//! The result is a parent tree, verified against an independent serial BFS, and the
//! search's steps as its workers ran them (each step's time and the time its
//! workers waited at barriers: what a level costs beyond its work).

use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use scalescope_results::detail::BfsStep;

use super::{Graph, Relabelled};
use crate::pool::{chunk, Pool, SpinBarrier};

const ALPHA: u64 = 15;
const BETA: u64 = 18;
/// Parent of an unvisited vertex.
pub const NONE: u32 = u32::MAX;

/// Frontier vertices a worker claims at a time in a top-down step.
const TD_CLAIM: usize = 64;
/// Bitmap words (64 vertices each) a worker claims at a time in a bottom-up step.
const BU_CLAIM: usize = 16;
/// Vertices a worker gathers before it appends them to the shared next frontier.
const LOCAL_CAP: usize = 4096;

/// One step's shared counters: work claimed, vertices appended, and a sum (the next
/// frontier's edges, or the vertices found). Three rotate (see [`Search::slot`]) so a
/// slot is reset two steps after it was read, never while it is in use.
#[repr(align(64))]
#[derive(Default)]
struct Slot {
    claim: AtomicUsize,
    len: AtomicUsize,
    sum: AtomicU64,
}

/// What every worker of one search shares. All workers run the same sequence of
/// steps inside one `broadcast`, separated by a spinning barrier, and decide the
/// direction from the same shared counters, so they never disagree.
struct Search<'g> {
    g: &'g Graph,
    n: usize,
    parent: Vec<AtomicU32>,
    /// Frontier queues, current and next, by parity.
    queue: [Cells; 2],
    /// Frontier bitmaps of bottom-up steps, current and next, by parity.
    bits: [Vec<AtomicU64>; 2],
    /// Visited vertices (and the padding past `n`), kept during bottom-up steps.
    visited: Vec<AtomicU64>,
    slots: [Slot; 3],
    barrier: SpinBarrier,
    /// One worker: plain loads and stores where a team needs read-modify-writes.
    solo: bool,
    /// The renumbering the graph came from (then `parent`, indexed by new id, holds
    /// original ids), and the parent tree in original ids that the workers gather
    /// from it at the end (empty without one).
    map: Option<&'g Relabelled>,
    out: Cells,
}

/// `n` zeroed atomics from a zeroed allocation: the system hands out zero pages, so
/// the parts never touched (most of a queue) cost nothing, and the rest no extra
/// pass of stores.
fn atomics32(n: usize) -> Vec<AtomicU32> {
    let mut v = std::mem::ManuallyDrop::new(vec![0u32; n]);
    // SAFETY: AtomicU32 has the size, alignment and bit validity of u32, and the
    // allocation is handed over whole (pointer, length and capacity), never freed twice.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr().cast::<AtomicU32>(), v.len(), v.capacity()) }
}

/// As [`atomics32`], for 64-bit words.
fn atomics64(n: usize) -> Vec<AtomicU64> {
    let mut v = std::mem::ManuallyDrop::new(vec![0u64; n]);
    // SAFETY: as in `atomics32`: AtomicU64 has the size, alignment and bit validity
    // of u64 (on every target with 64-bit atomics, which this module needs).
    unsafe { Vec::from_raw_parts(v.as_mut_ptr().cast::<AtomicU64>(), v.len(), v.capacity()) }
}

/// Where one worker is in the search; identical in every worker after each barrier.
struct Cursor {
    step: usize,
    queue: usize,
    len: usize,
    scout: u64,
    edges_to_check: u64,
}

/// What one worker saw of the search, step by step: when the current step began,
/// how long it has waited at barriers in it, and the steps so far.
struct Log {
    began: Instant,
    waited: f64,
    steps: Vec<BfsStep>,
}

impl Log {
    fn new() -> Log {
        Log {
            began: Instant::now(),
            waited: 0.0,
            steps: Vec::new(),
        }
    }

    fn begin(&mut self) {
        (self.began, self.waited) = (Instant::now(), 0.0);
    }

    fn end(&mut self, kind: &str, frontier: u64, found: u64) {
        self.steps.push(BfsStep {
            kind: kind.into(),
            frontier,
            found,
            seconds: self.began.elapsed().as_secs_f64(),
            wait_seconds: self.waited,
        });
    }
}

/// The search's steps from every worker's log: worker 0's kinds, sizes and times,
/// with the mean wait over the workers (every worker runs the same steps).
fn merged(logs: Vec<Vec<BfsStep>>) -> Vec<BfsStep> {
    let workers = logs.len().max(1) as f64;
    let mut steps = logs.first().cloned().unwrap_or_default();
    for (i, step) in steps.iter_mut().enumerate() {
        let waits = logs.iter().filter_map(|l| l.get(i)).map(|s| s.wait_seconds);
        step.wait_seconds = waits.sum::<f64>() / workers;
    }
    steps
}

impl Search<'_> {
    /// Waits at the barrier, adding the time to the step's waits.
    fn wait(&self, log: &mut Log) {
        let t = Instant::now();
        self.barrier.wait();
        log.waited += t.elapsed().as_secs_f64();
    }

    /// The counters of `step`; the slot after it is reset at the step's start.
    fn slot(&self, step: usize) -> &Slot {
        &self.slots[step % 3]
    }

    /// Starts a step: worker 0 clears the next step's counters.
    fn begin(&self, w: usize, step: usize) -> &Slot {
        if w == 0 {
            let next = self.slot(step + 1);
            next.claim.store(0, Ordering::Relaxed);
            next.len.store(0, Ordering::Relaxed);
            next.sum.store(0, Ordering::Relaxed);
        }
        self.slot(step)
    }

    /// Claims the next `size` of `n` items of this step.
    fn claim(slot: &Slot, n: usize, size: usize) -> Option<std::ops::Range<usize>> {
        let lo = slot.claim.fetch_add(size, Ordering::Relaxed);
        (lo < n).then(|| lo..(lo + size).min(n))
    }

    /// Appends a worker's gathered vertices to queue `q`.
    fn flush(&self, slot: &Slot, q: usize, local: &mut Vec<u32>) {
        let at = slot.len.fetch_add(local.len(), Ordering::Relaxed);
        for (i, &v) in (at..).zip(local.iter()) {
            // SAFETY: positions at..at + len were reserved by this worker alone, and
            // queue q is read only after the step's barrier.
            unsafe { self.queue[q].set(i, v) };
        }
        local.clear();
    }

    /// Ends a step that fills queue `next`: the worker's last vertices and edge count
    /// go in, everyone meets, and every cursor moves to the new frontier.
    fn end_queue_step(
        &self,
        slot: &Slot,
        next: usize,
        (local, scout): (&mut Vec<u32>, u64),
        c: &mut Cursor,
        log: &mut Log,
    ) {
        self.flush(slot, next, local);
        slot.sum.fetch_add(scout, Ordering::Relaxed);
        self.wait(log);
        (c.len, c.scout) = (
            slot.len.load(Ordering::Relaxed),
            slot.sum.load(Ordering::Relaxed),
        );
        (c.queue, c.step) = (next, c.step + 1);
    }

    /// Every parent unset but the source's; the source and the padding past `n`
    /// visited.
    fn init(&self, w: usize, t: usize, source: u32) {
        for v in chunk(self.n, t, w, 16) {
            let p = if v == source as usize {
                self.label(source)
            } else {
                NONE
            };
            self.parent[v].store(p, Ordering::Relaxed);
        }
        if w == 0 {
            self.mark_visited(source);
            let last = self.visited.len() - 1;
            if !self.n.is_multiple_of(64) {
                let tail = !0u64 << (self.n - 64 * last);
                self.visited[last].fetch_or(tail, Ordering::Relaxed);
            }
        }
        self.barrier.wait();
    }

    /// Sets v's visited bit (a top-down step keeps the visited bitmap as it claims
    /// vertices, so a switch to bottom-up needs no pass over the parents).
    #[inline]
    fn mark_visited(&self, v: u32) {
        let (word, bit) = (&self.visited[v as usize / 64], 1u64 << (v % 64));
        if self.solo {
            word.store(word.load(Ordering::Relaxed) | bit, Ordering::Relaxed);
        } else {
            word.fetch_or(bit, Ordering::Relaxed);
        }
    }

    /// The id `u` has in the parent tree: its original id where the graph was
    /// renumbered (the parents are stored so, and one gather maps the tree back).
    #[inline]
    fn label(&self, u: u32) -> u32 {
        match self.map {
            Some(r) => r.old[u as usize],
            None => u,
        }
    }

    /// Makes `u` the parent of unvisited `v`; false if v has one (in a team, a
    /// compare-and-swap decides which worker claims it).
    #[inline]
    fn claim_vertex(&self, v: u32, u: u32) -> bool {
        let p = &self.parent[v as usize];
        if p.load(Ordering::Relaxed) != NONE {
            return false;
        }
        if self.solo {
            p.store(u, Ordering::Relaxed);
            true
        } else {
            p.compare_exchange(NONE, u, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        }
    }

    /// One top-down step: the frontier's unvisited neighbours claim a parent (CAS).
    fn top_down(&self, w: usize, c: &mut Cursor, log: &mut Log) {
        log.begin();
        let frontier = c.len as u64;
        let slot = self.begin(w, c.step);
        let (cur, next) = (&self.queue[c.queue], 1 - c.queue);
        let mut local = Vec::new();
        let mut scout = 0u64;
        while let Some(r) = Self::claim(slot, c.len, TD_CLAIM) {
            // SAFETY: the current queue was filled up to c.len before the last barrier
            // and nobody writes it during this step.
            for u in r.map(|i| unsafe { cur.get(i) }) {
                let label = self.label(u);
                for &v in self.g.neighbors(u) {
                    if self.claim_vertex(v, label) {
                        self.mark_visited(v);
                        local.push(v);
                        scout += self.g.degree(v) as u64;
                    }
                }
            }
            if local.len() >= LOCAL_CAP {
                self.flush(slot, next, &mut local);
            }
        }
        self.end_queue_step(slot, next, (&mut local, scout), c, log);
        log.end("top-down", frontier, c.len as u64);
    }

    /// From queue to bitmap: the frontier's bits (the visited bitmap is kept up to
    /// date all along). Uses no counters, so it takes no step of the rotation.
    fn to_bitmap(&self, w: usize, t: usize, c: &Cursor, log: &mut Log) {
        log.begin();
        for word in chunk(self.visited.len(), t, w, 8) {
            self.bits[0][word].store(0, Ordering::Relaxed);
        }
        self.wait(log);
        for i in chunk(c.len, t, w, 16) {
            // SAFETY: as in `top_down`: filled before the barrier, not written now.
            let v = unsafe { self.queue[c.queue].get(i) };
            self.bits[0][v as usize / 64].fetch_or(1 << (v % 64), Ordering::Relaxed);
        }
        self.wait(log);
        log.end("queue-to-bitmap", c.len as u64, 0);
    }

    /// One bottom-up step from bitmap `f`: every unvisited vertex looks for a parent
    /// in the frontier. A worker owns whole words, so it writes them without RMW.
    /// Returns the vertices found.
    fn bottom_up(&self, w: usize, step: usize, f: usize, log: &mut Log) -> u64 {
        let slot = self.begin(w, step);
        let (front, next) = (&self.bits[f], &self.bits[1 - f]);
        let mut found = 0u64;
        while let Some(r) = Self::claim(slot, self.visited.len(), BU_CLAIM) {
            for word in r {
                let vis = self.visited[word].load(Ordering::Relaxed);
                let mut todo = !vis;
                let mut new = 0u64;
                while todo != 0 {
                    let b = todo.trailing_zeros();
                    todo &= todo - 1;
                    let v = word * 64 + b as usize;
                    if let Some(&p) = self.g.neighbors(v as u32).iter().find(|&&u| {
                        front[u as usize / 64].load(Ordering::Relaxed) & (1 << (u % 64)) != 0
                    }) {
                        self.parent[v].store(self.label(p), Ordering::Relaxed);
                        new |= 1 << b;
                    }
                }
                found += u64::from(new.count_ones());
                next[word].store(new, Ordering::Relaxed);
                self.visited[word].store(vis | new, Ordering::Relaxed);
            }
        }
        slot.sum.fetch_add(found, Ordering::Relaxed);
        self.wait(log);
        slot.sum.load(Ordering::Relaxed)
    }

    /// From bitmap `f` back to a queue, with the new frontier's edge count. One step.
    fn to_queue(&self, w: usize, f: usize, c: &mut Cursor, log: &mut Log) {
        log.begin();
        let slot = self.begin(w, c.step);
        let next = 1 - c.queue;
        let (mut local, mut scout) = (Vec::new(), 0u64);
        while let Some(r) = Self::claim(slot, self.visited.len(), 4 * BU_CLAIM) {
            for word in r {
                let mut bits = self.bits[f][word].load(Ordering::Relaxed);
                while bits != 0 {
                    let v = (word * 64) as u32 + bits.trailing_zeros();
                    bits &= bits - 1;
                    local.push(v);
                    scout += self.g.degree(v) as u64;
                }
            }
            if local.len() >= LOCAL_CAP {
                self.flush(slot, next, &mut local);
            }
        }
        self.end_queue_step(slot, next, (&mut local, scout), c, log);
        log.end("bitmap-to-queue", 0, 0);
    }

    /// Bottom-up steps until the frontier is small again (or empty); the bitmap that
    /// holds the last frontier, and its size.
    fn bottom_up_run(&self, w: usize, c: &mut Cursor, log: &mut Log) -> (usize, u64) {
        let (mut f, mut size) = (0, c.len as u64);
        loop {
            log.begin();
            let awake = self.bottom_up(w, c.step, f, log);
            log.end("bottom-up", size, awake);
            c.step += 1;
            f = 1 - f;
            let grew = awake > size;
            size = awake;
            if size == 0 || (!grew && size < self.n as u64 / BETA) {
                return (f, size);
            }
        }
    }

    /// The whole search as worker `w` of `t` runs it, then its share of the parent
    /// tree in original ids where the graph was renumbered (every parent is final:
    /// each step ends at the barrier).
    fn run(&self, w: usize, t: usize, source: u32) -> Vec<BfsStep> {
        let mut log = Log::new();
        self.search(w, t, source, &mut log);
        if let Some(r) = self.map {
            for v in chunk(self.n, t, w, 16) {
                let p = self.parent[r.new[v] as usize].load(Ordering::Relaxed);
                // SAFETY: v lies in this worker's chunk; `out` is read after the team.
                unsafe { self.out.set(v, p) };
            }
        }
        log.steps
    }

    /// The search as worker `w` of `t` runs it.
    fn search(&self, w: usize, t: usize, source: u32, log: &mut Log) {
        self.init(w, t, source);
        let mut c = Cursor {
            step: 0,
            queue: 0,
            len: 1,
            scout: self.g.degree(source) as u64,
            edges_to_check: self.g.neighbors.len() as u64,
        };
        while c.len > 0 {
            if c.scout > c.edges_to_check / ALPHA {
                self.to_bitmap(w, t, &c, log);
                let (f, size) = self.bottom_up_run(w, &mut c, log);
                if size == 0 {
                    return;
                }
                self.to_queue(w, f, &mut c, log);
                continue;
            }
            c.edges_to_check = c.edges_to_check.saturating_sub(c.scout);
            self.top_down(w, &mut c, log);
        }
    }
}

/// A search's result: the parent of every vertex (`NONE` if unreached; the source
/// is its own parent) and its steps.
pub struct Tree {
    pub parent: Vec<u32>,
    pub steps: Vec<BfsStep>,
}

/// BFS from `source`; returns the parent tree. The workers stay in one team for the
/// whole search, claim work in chunks as they go (a slowed worker takes less), and
/// meet at a barrier between steps.
pub fn bfs(g: &Graph, source: u32, pool: &Pool) -> Vec<u32> {
    bfs_steps(g, source, pool).parent
}

/// [`bfs`] with its steps.
pub fn bfs_steps(g: &Graph, source: u32, pool: &Pool) -> Tree {
    let search = Search::new(g, None, pool.threads());
    // SAFETY: no worker runs yet.
    unsafe { search.queue[0].set(0, source) };
    let logs = pool.broadcast(|w| search.run(w, pool.threads(), source));
    Tree {
        parent: into_u32s(search.parent),
        steps: merged(logs),
    }
}

/// BFS from `source` (an original id) on a graph renumbered by degree when the
/// input was prepared; the parent tree comes back in the original ids, mapped by
/// the same workers at the end of the search (part of the time).
pub fn bfs_relabelled(r: &Relabelled, source: u32, pool: &Pool) -> Vec<u32> {
    bfs_relabelled_steps(r, source, pool).parent
}

/// [`bfs_relabelled`] with its steps.
pub fn bfs_relabelled_steps(r: &Relabelled, source: u32, pool: &Pool) -> Tree {
    let search = Search::new(&r.graph, Some(r), pool.threads());
    let s = r.new[source as usize];
    // SAFETY: no worker runs yet.
    unsafe { search.queue[0].set(0, s) };
    let logs = pool.broadcast(|w| search.run(w, pool.threads(), s));
    Tree {
        // SAFETY: the workers set every vertex's cell (their chunks tile 0..n).
        parent: unsafe { search.out.into_vec() },
        steps: merged(logs),
    }
}

impl<'g> Search<'g> {
    fn new(g: &'g Graph, map: Option<&'g Relabelled>, t: usize) -> Search<'g> {
        let n = g.vertices();
        let words = n.div_ceil(64);
        Search {
            g,
            n,
            parent: atomics32(n),
            queue: [Cells::new(n.max(1)), Cells::new(n.max(1))],
            bits: [atomics64(words), atomics64(words)],
            visited: atomics64(words),
            slots: Default::default(),
            barrier: SpinBarrier::new(t),
            solo: t == 1,
            map,
            out: Cells::new(if map.is_some() { n } else { 0 }),
        }
    }
}

/// `u32` cells that start uninitialised (no pass of zeroes, and a queue's pages that
/// no step reaches are never touched), each set by one worker and read only after a
/// barrier (or the team's end) orders the read after the write.
struct Cells(Vec<UnsafeCell<MaybeUninit<u32>>>);

// SAFETY: cells are accessed only as `set` and `get` require: no cell is written by
// one thread while another reads or writes it.
unsafe impl std::marker::Sync for Cells {}

impl Cells {
    fn new(n: usize) -> Cells {
        let mut v = Vec::with_capacity(n);
        // SAFETY: MaybeUninit needs no initialisation, and n fit the capacity.
        unsafe { v.set_len(n) };
        Cells(v)
    }

    /// # Safety
    /// No other thread reads or writes cell i until a barrier.
    #[inline]
    unsafe fn set(&self, i: usize, x: u32) {
        // SAFETY: exclusive access to cell i, as the caller promises.
        unsafe { (*self.0[i].get()).write(x) };
    }

    /// # Safety
    /// Cell i was set before a barrier this thread passed, and nobody writes it now.
    #[inline]
    unsafe fn get(&self, i: usize) -> u32 {
        // SAFETY: set and not being written, as the caller promises.
        unsafe { (*self.0[i].get()).assume_init() }
    }

    /// # Safety
    /// Every cell was set.
    unsafe fn into_vec(self) -> Vec<u32> {
        let mut v = std::mem::ManuallyDrop::new(self.0);
        // SAFETY: UnsafeCell<MaybeUninit<u32>> has u32's layout, every cell holds a
        // value (the caller promises), and the allocation is handed over whole.
        unsafe { Vec::from_raw_parts(v.as_mut_ptr().cast::<u32>(), v.len(), v.capacity()) }
    }
}

/// The values of atomics no thread uses any more, without a pass over them.
fn into_u32s(v: Vec<AtomicU32>) -> Vec<u32> {
    let mut v = std::mem::ManuallyDrop::new(v);
    // SAFETY: u32 has the size, alignment and bit validity of AtomicU32; the vector is
    // owned (no thread holds a reference) and its allocation is handed over whole.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr().cast::<u32>(), v.len(), v.capacity()) }
}

/// Checks a parent tree against a serial BFS: the same vertices are reached, and
/// every reached vertex's parent is a neighbour one level closer to the source.
///
/// # Errors
/// A sentence naming the first vertex that is wrong.
pub fn verify(g: &Graph, source: u32, parent: &[u32]) -> Result<u64, String> {
    let n = g.vertices();
    let mut depth = vec![u32::MAX; n];
    depth[source as usize] = 0;
    let mut queue = VecDeque::from([source]);
    while let Some(u) = queue.pop_front() {
        for &v in g.neighbors(u) {
            if depth[v as usize] == u32::MAX {
                depth[v as usize] = depth[u as usize] + 1;
                queue.push_back(v);
            }
        }
    }
    let mut reached_edges = 0u64;
    for v in 0..n as u32 {
        let (d, p) = (depth[v as usize], parent[v as usize]);
        match (d == u32::MAX, p == NONE) {
            (true, true) => continue,
            (true, false) => return Err(format!("vertex {v} has parent {p} but is unreachable")),
            (false, true) => {
                return Err(format!(
                    "vertex {v} is reachable at depth {d} but has no parent"
                ))
            }
            (false, false) => {}
        }
        reached_edges += g.degree(v) as u64;
        if v == source {
            if p != source {
                return Err(format!("the source {source} has parent {p}"));
            }
            continue;
        }
        if depth[p as usize] != d - 1 || g.neighbors(v).binary_search(&p).is_err() {
            return Err(format!(
                "vertex {v} at depth {d} has parent {p}, which is not a neighbour at depth {}",
                d - 1
            ));
        }
    }
    Ok(reached_edges / 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::gen::{generate, Kind};
    use crate::graph::tests::pool;

    #[test]
    fn parent_trees_verify_on_generated_graphs() {
        for threads in [1, 2] {
            let p = pool(threads);
            for (kind, scale) in [(Kind::Kronecker, 12), (Kind::Uniform, 10)] {
                let (n, e) = generate(kind, scale, &p);
                let g = Graph::from_edges(n, &e, &p);
                let source = (0..n as u32).max_by_key(|&v| g.degree(v)).unwrap();
                let parent = bfs(&g, source, &p);
                let edges = verify(&g, source, &parent).unwrap();
                assert!(edges > 0);
                let parent = bfs_relabelled(&Relabelled::new(&g, &p), source, &p);
                assert_eq!(verify(&g, source, &parent), Ok(edges));
            }
        }
    }

    #[test]
    fn every_source_and_team_size_gives_a_valid_tree() {
        // Oversubscribed teams (3, 5 workers on this machine's CPUs), sources of every
        // kind (hub, leaf, isolated), sizes that are not multiples of 64, and graphs
        // that switch direction several times.
        let mut checked = 0;
        for threads in [1, 3, 5] {
            let p = pool(threads);
            for (kind, scale) in [(Kind::Kronecker, 13), (Kind::Uniform, 11)] {
                let (n, mut e) = generate(kind, scale, &p);
                e.retain(|&(u, v)| u % 97 != 5 && v % 97 != 5); // some isolated vertices
                let n = n - 3; // not a multiple of 64
                e.retain(|&(u, v)| (u as usize) < n && (v as usize) < n);
                let g = Graph::from_edges(n, &e, &p);
                let hub = (0..n as u32).max_by_key(|&v| g.degree(v)).unwrap();
                let leaf = (0..n as u32).find(|&v| g.degree(v) == 1).unwrap_or(1);
                let r = Relabelled::new(&g, &p);
                for source in [hub, leaf, 5, n as u32 - 1] {
                    for parent in [bfs(&g, source, &p), bfs_relabelled(&r, source, &p)] {
                        verify(&g, source, &parent).unwrap_or_else(|e| {
                            panic!("{kind:?} {threads} threads from {source}: {e}")
                        });
                        checked += 1;
                    }
                }
            }
        }
        assert_eq!(checked, 48);
    }

    #[test]
    fn a_wrong_parent_is_caught() {
        let p = pool(1);
        let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], &p);
        let mut parent = bfs(&g, 0, &p);
        assert_eq!(parent, vec![0, 0, 1, 2]);
        parent[3] = 1;
        assert!(verify(&g, 0, &parent).unwrap_err().contains("vertex 3"));
    }
}
