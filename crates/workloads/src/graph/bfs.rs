//! Direction-optimizing breadth-first search (S. Beamer, K. Asanović, D. Patterson,
//! "Direction-Optimizing Breadth-First Search", SC 2012; as in the GAP benchmark
//! suite's bfs.cc): top-down steps claim children with compare-and-swap on the parent
//! array; when the frontier's edges exceed 1/alpha of the unexplored edges the search
//! switches to bottom-up steps (every unvisited vertex looks for a parent in the
//! frontier bitmap), and back when the frontier shrinks below n/beta vertices.
//! The result is a parent tree, verified against an independent serial BFS, and the
//! search's steps as its workers ran them (each step's time and the time its
//! workers waited at barriers: what a level costs beyond its work).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use scalescope_model::detail::BfsStep;

use super::bfs_arrays::Arrays;
use super::{Graph, Relabelled};
use crate::pool::{chunk, Pool, SpinBarrier};

const ALPHA: u64 = 15;
const BETA: u64 = 18;
/// Parent of an unvisited vertex.
pub const NONE: u32 = u32::MAX;

/// Frontier vertices a worker claims at a time in a top-down step, at least and at
/// most: a step hands out about [`TD_CLAIMS_PER_WORKER`] claims per worker between
/// these bounds, so a large frontier costs each worker a few read-modify-writes of
/// the shared cursor instead of one per 64 vertices (at 16 workers, each of them a
/// cache-line transfer), and a small one still spreads over the team.
const TD_CLAIM: (usize, usize) = (64, 2048);
const TD_CLAIMS_PER_WORKER: usize = 16;
/// Bitmap words (64 vertices each) a worker claims at a time in a bottom-up step
/// (1,024 vertices, GAP's `schedule(dynamic, 1024)`).
const BU_CLAIM: usize = 16;
/// Vertices a worker gathers before it appends them to the shared next frontier.
const LOCAL_CAP: usize = 4096;

/// One step's shared counters: work claimed, vertices appended, and a sum (the next
/// frontier's edges, or the vertices found). Three rotate (see [`Search::slot`]) so a
/// slot is reset two steps after it was read, never while it is in use. The claim
/// cursor, taken by every worker many times a step, has a line (two, against the
/// adjacent-line prefetcher) of its own: a worker appending its vertices or adding
/// its sum never takes it from a worker claiming.
#[derive(Default)]
struct Slot {
    claim: Padded<AtomicUsize>,
    len: Padded<AtomicUsize>,
    sum: AtomicU64,
}

/// A value alone on its 128 bytes.
#[repr(align(128))]
#[derive(Default)]
struct Padded<T>(T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// What every worker of one search shares. All workers run the same sequence of
/// steps inside one `broadcast`, separated by a spinning barrier, and decide the
/// direction from the same shared counters, so they never disagree.
struct Search<'g> {
    g: &'g Graph,
    n: usize,
    /// Workers in the team.
    t: usize,
    /// The parent array, queues and bitmaps, kept between searches ([`Arrays`]).
    a: &'g Arrays,
    slots: [Slot; 3],
    barrier: SpinBarrier,
    /// One worker: plain loads and stores where a team needs read-modify-writes.
    solo: bool,
    /// The renumbering the graph came from (then `parent`, indexed by new id, holds
    /// original ids; the workers gather the tree in original ids into `a.out` at the
    /// end).
    map: Option<&'g Relabelled>,
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
            unsafe { self.a.queue[q].set(i, v) };
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

    /// Every parent unset but the source's; the visited bitmap cleared (the arrays
    /// may hold an earlier search's) but for the source and the padding past `n`.
    /// Each worker writes its own chunks, so one barrier ends the phase.
    fn init(&self, w: usize, t: usize, source: u32) {
        for v in chunk(self.n, t, w, 16) {
            let p = if v == source as usize {
                self.label(source)
            } else {
                NONE
            };
            self.a.parent[v].store(p, Ordering::Relaxed);
        }
        let last = self.a.visited.len() - 1;
        for word in chunk(self.a.visited.len(), t, w, 8) {
            let mut bits = 0u64;
            if word == source as usize / 64 {
                bits |= 1 << (source % 64);
            }
            if word == last && !self.n.is_multiple_of(64) {
                bits |= !0u64 << (self.n - 64 * last);
            }
            self.a.visited[word].store(bits, Ordering::Relaxed);
        }
        self.barrier.wait();
    }

    /// Sets v's visited bit (a top-down step keeps the visited bitmap as it claims
    /// vertices, so a switch to bottom-up needs no pass over the parents).
    #[inline]
    fn mark_visited(&self, v: u32) {
        let (word, bit) = (&self.a.visited[v as usize / 64], 1u64 << (v % 64));
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
        let p = &self.a.parent[v as usize];
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
        let (cur, next) = (&self.a.queue[c.queue], 1 - c.queue);
        let mut local = Vec::new();
        let mut scout = 0u64;
        let size = (c.len / (self.t * TD_CLAIMS_PER_WORKER)).clamp(TD_CLAIM.0, TD_CLAIM.1);
        while let Some(r) = Self::claim(slot, c.len, size) {
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
        for word in chunk(self.a.visited.len(), t, w, 8) {
            self.a.bits[0][word].store(0, Ordering::Relaxed);
        }
        self.wait(log);
        for i in chunk(c.len, t, w, 16) {
            // SAFETY: as in `top_down`: filled before the barrier, not written now.
            let v = unsafe { self.a.queue[c.queue].get(i) };
            self.a.bits[0][v as usize / 64].fetch_or(1 << (v % 64), Ordering::Relaxed);
        }
        self.wait(log);
        log.end("queue-to-bitmap", c.len as u64, 0);
    }

    /// One bottom-up step from bitmap `f`: every unvisited vertex looks for a parent
    /// in the frontier. A worker owns whole words, so it writes them without RMW.
    /// Returns the vertices found.
    fn bottom_up(&self, w: usize, step: usize, f: usize, log: &mut Log) -> u64 {
        let slot = self.begin(w, step);
        let (front, next) = (&self.a.bits[f], &self.a.bits[1 - f]);
        let mut found = 0u64;
        while let Some(r) = Self::claim(slot, self.a.visited.len(), BU_CLAIM) {
            for word in r {
                let vis = self.a.visited[word].load(Ordering::Relaxed);
                let mut todo = !vis;
                let mut new = 0u64;
                while todo != 0 {
                    let b = todo.trailing_zeros();
                    todo &= todo - 1;
                    let v = word * 64 + b as usize;
                    if let Some(&p) = self.g.neighbors(v as u32).iter().find(|&&u| {
                        front[u as usize / 64].load(Ordering::Relaxed) & (1 << (u % 64)) != 0
                    }) {
                        self.a.parent[v].store(self.label(p), Ordering::Relaxed);
                        new |= 1 << b;
                    }
                }
                found += u64::from(new.count_ones());
                next[word].store(new, Ordering::Relaxed);
                self.a.visited[word].store(vis | new, Ordering::Relaxed);
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
        while let Some(r) = Self::claim(slot, self.a.visited.len(), 4 * BU_CLAIM) {
            for word in r {
                let mut bits = self.a.bits[f][word].load(Ordering::Relaxed);
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
                let p = self.a.parent[r.new[v] as usize].load(Ordering::Relaxed);
                // SAFETY: v lies in this worker's chunk; `out` is read after the team.
                unsafe { self.a.out.set(v, p) };
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
    bfs_in(g, source, pool, &mut Arrays::default()).parent
}

/// [`bfs`] in the arrays `a` (kept from an earlier search where they fit), with
/// its steps.
pub fn bfs_in(g: &Graph, source: u32, pool: &Pool, a: &mut Arrays) -> Tree {
    a.fit(g.vertices(), false);
    let steps = team(g, None, source, pool, a);
    Tree {
        parent: a.take_parent(),
        steps,
    }
}

/// BFS from `source` (an original id) on a graph renumbered by degree when the
/// input was prepared; the parent tree comes back in the original ids, mapped by
/// the same workers at the end of the search (part of the time).
pub fn bfs_relabelled(r: &Relabelled, source: u32, pool: &Pool) -> Vec<u32> {
    bfs_relabelled_in(r, source, pool, &mut Arrays::default()).parent
}

/// [`bfs_relabelled`] in the arrays `a`, with its steps.
pub fn bfs_relabelled_in(r: &Relabelled, source: u32, pool: &Pool, a: &mut Arrays) -> Tree {
    a.fit(r.graph.vertices(), true);
    let steps = team(&r.graph, Some(r), r.new[source as usize], pool, a);
    // SAFETY: the workers set every vertex's cell (their chunks tile 0..n).
    let parent = unsafe { a.take_out() };
    Tree { parent, steps }
}

/// Runs the search from `s` (an id of `g`) with the pool's workers in the arrays
/// `a`, sized for `g`; its steps.
fn team(g: &Graph, map: Option<&Relabelled>, s: u32, pool: &Pool, a: &Arrays) -> Vec<BfsStep> {
    let t = pool.threads();
    let search = Search {
        g,
        n: g.vertices(),
        t,
        a,
        slots: Default::default(),
        barrier: SpinBarrier::parking(t),
        solo: t == 1,
        map,
    };
    // SAFETY: no worker runs yet.
    unsafe { a.queue[0].set(0, s) };
    merged(pool.broadcast(|w| search.run(w, t, s)))
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
    fn searches_in_kept_arrays_from_one_source_after_another_give_valid_trees() {
        // A trial loop's searches: the arrays and the last tree are reused, so the
        // visited bitmap and parents of the search before must not leak into the next.
        for threads in [1, 3] {
            let p = pool(threads);
            let (n, e) = generate(Kind::Kronecker, 12, &p);
            let g = Graph::from_edges(n, &e, &p);
            let r = Relabelled::new(&g, &p);
            let (mut plain, mut mapped) = (Arrays::default(), Arrays::default());
            for source in [0, 17, 4095, 0, 1234] {
                let t = bfs_in(&g, source, &p, &mut plain);
                verify(&g, source, &t.parent).unwrap();
                assert!(!t.steps.is_empty());
                plain.recycle(t.parent, false);
                let t = bfs_relabelled_in(&r, source, &p, &mut mapped);
                verify(&g, source, &t.parent).unwrap_or_else(|e| panic!("{source}: {e}"));
                mapped.recycle(t.parent, true);
            }
        }
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
