//! Direction-optimizing breadth-first search (S. Beamer, K. Asanović, D. Patterson,
//! "Direction-Optimizing Breadth-First Search", SC 2012; as in the GAP benchmark
//! suite's bfs.cc): top-down steps claim children by their bit in the visited bitmap
//! (an atomic OR: the worker that sets the bit writes the parent; GAP claims by a
//! compare-and-swap on the parent array, 32 times the bytes to probe); when the
//! frontier's edges exceed 1/alpha of the unexplored edges the search switches to
//! bottom-up steps (every unvisited vertex looks for a parent in the
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
/// A team's top-down step over a frontier of fewer than `TD_CLAIM.0` vertices a
/// worker claims the frontier's edges, this many at a time, instead of its vertices:
/// the first step's frontier is the source alone (on a Kronecker graph a hub of
/// thousands of edges), which claiming by vertex gives one worker while the others
/// wait at the barrier.
const TD_EDGE_CLAIM: usize = 512;
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
    /// The parent tree, queues and bitmaps, kept between searches ([`Arrays`]).
    a: &'g Arrays,
    slots: [Slot; 3],
    barrier: SpinBarrier,
    /// One worker: plain loads and stores where a team needs read-modify-writes.
    solo: bool,
    /// The renumbering the graph came from: then each parent is written, as an
    /// original id, straight to its vertex's original id in the tree `a.tree`, so no
    /// pass maps the tree back.
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
        let home = self.label(source) as usize;
        for i in chunk(self.n, t, w, 16) {
            let p = if i == home { home as u32 } else { NONE };
            // SAFETY: i lies in this worker's chunk; the search writes the tree only
            // after the barrier below.
            unsafe { self.a.tree.set(i, p) };
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

    /// The id `u` has in the parent tree, and its place there: its original id where
    /// the graph was renumbered.
    #[inline]
    fn label(&self, u: u32) -> u32 {
        match self.map {
            Some(r) => r.old[u as usize],
            None => u,
        }
    }

    /// Makes `label` (a tree id) the parent of `v` if v is unvisited; false if it
    /// was visited. The visited bit decides: in a team, the worker whose atomic OR
    /// sets it claims v, and only that worker writes v's parent (the bitmap is kept
    /// all along, so a switch to bottom-up needs no pass over the parents).
    #[inline]
    fn claim_vertex(&self, v: u32, label: u32) -> bool {
        let (word, bit) = (&self.a.visited[v as usize / 64], 1u64 << (v % 64));
        let seen = word.load(Ordering::Relaxed);
        if seen & bit != 0 {
            return false;
        }
        if self.solo {
            word.store(seen | bit, Ordering::Relaxed);
        } else if word.fetch_or(bit, Ordering::Relaxed) & bit != 0 {
            return false;
        }
        // SAFETY: this worker set v's visited bit, so no other worker writes v's
        // parent in this search, and the tree is read only after the team.
        unsafe { self.a.tree.set(self.label(v) as usize, label) };
        true
    }

    /// One top-down step: the frontier's unvisited neighbours get a parent (each
    /// claimed by its visited bit).
    fn top_down(&self, w: usize, c: &mut Cursor, log: &mut Log) {
        log.begin();
        let frontier = c.len as u64;
        let slot = self.begin(w, c.step);
        let (cur, next) = (&self.a.queue[c.queue], 1 - c.queue);
        let mut local = (Vec::new(), 0u64);
        if !self.solo && c.len < self.t * TD_CLAIM.0 && c.scout >= 2 * TD_EDGE_CLAIM as u64 {
            self.top_down_by_edges(slot, c, &mut local);
        } else {
            let size = (c.len / (self.t * TD_CLAIMS_PER_WORKER)).clamp(TD_CLAIM.0, TD_CLAIM.1);
            while let Some(r) = Self::claim(slot, c.len, size) {
                // SAFETY: the current queue was filled up to c.len before the last
                // barrier and nobody writes it during this step.
                for u in r.map(|i| unsafe { cur.get(i) }) {
                    self.visit(u, self.g.neighbors(u), &mut local);
                }
                if local.0.len() >= LOCAL_CAP {
                    self.flush(slot, next, &mut local.0);
                }
            }
        }
        self.end_queue_step(slot, next, (&mut local.0, local.1), c, log);
        log.end("top-down", frontier, c.len as u64);
    }

    /// Frontier vertex `u`'s `edges` (all of its list or a part): each unvisited
    /// neighbour claimed gets u as parent and goes to the worker's `found` vertices,
    /// its degree added to their edge count.
    #[inline]
    fn visit(&self, u: u32, edges: &[u32], (found, scout): &mut (Vec<u32>, u64)) {
        let label = self.label(u);
        for &v in edges {
            if self.claim_vertex(v, label) {
                found.push(v);
                *scout += self.g.degree(v) as u64;
            }
        }
    }

    /// A small frontier's step, claimed by edges: the frontier's lists, end to end
    /// (`c.scout` entries, their degrees' sum), are handed out [`TD_EDGE_CLAIM`]
    /// entries at a time. A worker's claims only grow, so it walks the frontier once;
    /// its vertices found are flushed when the step ends.
    fn top_down_by_edges(&self, slot: &Slot, c: &Cursor, local: &mut (Vec<u32>, u64)) {
        let cur = &self.a.queue[c.queue];
        // The frontier vertex the walk is at, and the position of its list's start.
        let (mut i, mut base) = (0, 0);
        while let Some(r) = Self::claim(slot, c.scout as usize, TD_EDGE_CLAIM) {
            let mut at = r.start;
            while at < r.end && i < c.len {
                // SAFETY: i < c.len: filled before the last barrier, not written now.
                let u = unsafe { cur.get(i) };
                let list = self.g.neighbors(u);
                if at >= base + list.len() {
                    (i, base) = (i + 1, base + list.len());
                    continue;
                }
                let to = r.end.min(base + list.len());
                self.visit(u, &list[at - base..to - base], local);
                at = to;
            }
        }
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
                        // SAFETY: this worker owns v's visited word in this step, and
                        // v was unvisited: nobody else writes its parent.
                        unsafe {
                            self.a
                                .tree
                                .set(self.label(v as u32) as usize, self.label(p))
                        };
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

    /// The whole search as worker `w` of `t` runs it; its steps.
    fn run(&self, w: usize, t: usize, source: u32) -> Vec<BfsStep> {
        let mut log = Log::new();
        self.search(w, t, source, &mut log);
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
    a.fit(g.vertices());
    let steps = team(g, None, source, pool, a);
    // SAFETY: the workers' first phase set every cell (their chunks tile 0..n).
    let parent = unsafe { a.take_tree() };
    Tree { parent, steps }
}

/// BFS from `source` (an original id) on a graph renumbered by degree when the
/// input was prepared; the parent tree comes back in the original ids (each parent
/// written there as it is found).
pub fn bfs_relabelled(r: &Relabelled, source: u32, pool: &Pool) -> Vec<u32> {
    bfs_relabelled_in(r, source, pool, &mut Arrays::default()).parent
}

/// [`bfs_relabelled`] in the arrays `a`, with its steps.
pub fn bfs_relabelled_in(r: &Relabelled, source: u32, pool: &Pool, a: &mut Arrays) -> Tree {
    a.fit(r.graph.vertices());
    let steps = team(&r.graph, Some(r), r.new[source as usize], pool, a);
    // SAFETY: the workers' first phase set every cell (their chunks tile 0..n).
    let parent = unsafe { a.take_tree() };
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
                plain.recycle(t.parent);
                let t = bfs_relabelled_in(&r, source, &p, &mut mapped);
                verify(&g, source, &t.parent).unwrap_or_else(|e| panic!("{source}: {e}"));
                mapped.recycle(t.parent);
            }
        }
    }

    #[test]
    fn a_small_frontier_of_hubs_claimed_by_edges_gives_a_valid_tree() {
        // Source 4 reaches four hubs of 1,500 leaves each (plus the other hubs):
        // the second step's frontier is 4 vertices with 6,000+ edges, claimed in
        // chunks of TD_EDGE_CLAIM that start and end inside the hubs' lists; the
        // leaves then reach a tail, so later steps run too.
        let mut edges: Vec<(u32, u32)> = (0..4).map(|h| (4, h)).collect();
        edges.extend([(0, 1), (1, 2), (2, 3)]);
        for h in 0..4u32 {
            edges.extend((0..1500).map(|i| (h, 5 + h * 1500 + i)));
        }
        edges.extend((5905..6000).map(|v| (v, v + 300)));
        let n = 6400;
        for threads in [1, 2, 3] {
            let p = pool(threads);
            let g = Graph::from_edges(n, &edges, &p);
            let r = Relabelled::new(&g, &p);
            for parent in [bfs(&g, 4, &p), bfs_relabelled(&r, 4, &p)] {
                assert_eq!(verify(&g, 4, &parent), Ok(edges.len() as u64));
                assert_eq!(parent[0..5], [4, 4, 4, 4, 4]);
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
