//! A pool of worker threads, worker i pinned to the placement's set i (and under the
//! memory policy) before it runs anything. Pinning is read back from every worker;
//! a pool that is not where it was asked to be is an error, never a silent number.

use std::sync::Mutex;

use scalescope_place::mempolicy::{PreparedPolicy, ResolvedPolicy};
use scalescope_place::pin::{current_affinity, pin_current_thread};
use scalescope_topo::CpuSet;

use crate::WorkloadError;

/// Pinned workers.
pub struct Pool {
    inner: rayon::ThreadPool,
    cpus: Vec<CpuSet>,
}

impl Pool {
    /// Workers on the machine `topo` describes: `threads` of them (default: every
    /// usable CPU) placed by `strategy`, under memory policy `mem` (default: first
    /// touch). Returns the placement too, for reports.
    ///
    /// # Errors
    /// The placement's error, or [`WorkloadError::Pinning`].
    pub fn placed(
        topo: &scalescope_topo::Topology,
        strategy: &scalescope_place::Strategy,
        threads: Option<usize>,
        mem: Option<&ResolvedPolicy>,
    ) -> Result<(Pool, scalescope_place::Placement), WorkloadError> {
        let threads = threads.unwrap_or_else(|| scalescope_place::every_usable_cpu(topo));
        let request = scalescope_place::PlaceRequest::new(strategy.clone(), threads);
        let placement = scalescope_place::place(topo, &request)?;
        Ok((Pool::new(&placement.threads, mem)?, placement))
    }

    /// Starts one worker per CPU set.
    ///
    /// # Errors
    /// [`WorkloadError::Pinning`] when a worker could not be pinned or its affinity
    /// does not read back as planned.
    pub fn new(
        thread_cpus: &[CpuSet],
        mem: Option<&ResolvedPolicy>,
    ) -> Result<Pool, WorkloadError> {
        if thread_cpus.is_empty() {
            return Err(WorkloadError::Pinning("no threads".into()));
        }
        let sets = thread_cpus.to_vec();
        let policy = mem.map(PreparedPolicy::new);
        let errors: std::sync::Arc<Mutex<Vec<String>>> = Default::default();
        let errs = errors.clone();
        let inner = rayon::ThreadPoolBuilder::new()
            .num_threads(sets.len())
            .thread_name(|i| format!("scalescope-worker-{i}"))
            .start_handler(move |i| {
                if let Err(e) = pin_current_thread(&sets[i]) {
                    errs.lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(format!("worker {i} to CPUs {}: {e}", sets[i]));
                }
                if let Some(p) = &policy {
                    if let Err(e) = p.apply() {
                        errs.lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push(format!("worker {i} memory policy: {e}"));
                    }
                }
            })
            .build()
            .map_err(|e| WorkloadError::Pinning(e.to_string()))?;
        let pool = Pool {
            inner,
            cpus: thread_cpus.to_vec(),
        };
        let seen = pool.broadcast(|_| current_affinity());
        let errors = errors.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(e) = errors.first() {
            return Err(WorkloadError::Pinning(e.clone()));
        }
        for (i, s) in seen.iter().enumerate() {
            if s.as_ref() != Some(&pool.cpus[i]) {
                let on = s
                    .as_ref()
                    .map_or("CPUs it could not read".into(), |c| format!("CPUs {c}"));
                return Err(WorkloadError::Pinning(format!(
                    "worker {i} runs on {on}, planned {}",
                    pool.cpus[i]
                )));
            }
        }
        Ok(pool)
    }

    pub fn threads(&self) -> usize {
        self.cpus.len()
    }

    /// Every CPU a worker may run on (the union of the workers' sets).
    pub fn all_cpus(&self) -> CpuSet {
        self.cpus.iter().fold(CpuSet::new(), |acc, s| acc.union(s))
    }

    /// Runs `f(worker index)` once on every worker and returns the results in order.
    pub fn broadcast<R: Send>(&self, f: impl Fn(usize) -> R + Sync) -> Vec<R> {
        self.inner.broadcast(|ctx| f(ctx.index()))
    }
}

/// Items `0..n` handed out in chunks to whichever worker asks next, so a worker that
/// is slowed (a preempted vCPU, a heavy chunk) takes fewer chunks instead of holding
/// everyone up at the end, as a fixed share would.
pub struct Chunks {
    next: std::sync::atomic::AtomicUsize,
    n: usize,
    size: usize,
}

impl Chunks {
    /// Chunks of `size` items (at least 1).
    pub fn new(n: usize, size: usize) -> Chunks {
        Chunks {
            next: std::sync::atomic::AtomicUsize::new(0),
            n,
            size: size.max(1),
        }
    }

    /// About `per_worker` chunks for each of `threads` workers.
    pub fn per_worker(n: usize, threads: usize, per_worker: usize) -> Chunks {
        Chunks::new(n, n.div_ceil(threads * per_worker))
    }

    /// The next unclaimed chunk, if any is left.
    pub fn claim(&self) -> Option<std::ops::Range<usize>> {
        let lo = self
            .next
            .fetch_add(self.size, std::sync::atomic::Ordering::Relaxed);
        (lo < self.n).then(|| lo..(lo + self.size).min(self.n))
    }
}

/// A barrier for a team of `n` workers that spins first: waiters spin, then yield
/// the CPU but stay runnable, and (a [`SpinBarrier::parking`] one only) after
/// waiting [`PARK_AFTER`] they sleep until the last worker arrives. A kernel whose
/// phases are short (a BFS level, say) keeps its workers in one `broadcast` and
/// separates phases with this, instead of returning to the pool between phases: a
/// worker the pool puts to sleep must be woken, and on a VM a halted vCPU can take
/// milliseconds to wake. Parking bounds what a long wait costs the CPUs that other
/// work needs (an oversubscribed machine, or many workers waiting on a slow one);
/// a phase that ends within [`PARK_AFTER`] never pays a wake-up.
pub struct SpinBarrier {
    n: usize,
    arrived: std::sync::atomic::AtomicUsize,
    generation: std::sync::atomic::AtomicUsize,
    /// Whether waiters park after [`PARK_AFTER`], and how many are parked.
    park: bool,
    sleepers: std::sync::atomic::AtomicUsize,
    lock: Mutex<()>,
    wake: std::sync::Condvar,
}

/// How long a waiter at a parking barrier spins and yields before it sleeps.
pub const PARK_AFTER: std::time::Duration = std::time::Duration::from_millis(2);

impl SpinBarrier {
    pub fn new(n: usize) -> SpinBarrier {
        SpinBarrier {
            n: n.max(1),
            arrived: Default::default(),
            generation: Default::default(),
            park: false,
            sleepers: Default::default(),
            lock: Mutex::new(()),
            wake: std::sync::Condvar::new(),
        }
    }

    /// A barrier whose waiters sleep after waiting [`PARK_AFTER`].
    pub fn parking(n: usize) -> SpinBarrier {
        SpinBarrier {
            park: true,
            ..SpinBarrier::new(n)
        }
    }

    /// Returns when all `n` workers have called it; everything a worker wrote before
    /// its call is visible to every worker after the call returns.
    pub fn wait(&self) {
        use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, SeqCst};
        let generation = self.generation.load(Acquire);
        if self.arrived.fetch_add(1, AcqRel) + 1 == self.n {
            self.arrived.store(0, Relaxed);
            // SeqCst with the sleepers' count: either a parking waiter sees the
            // new generation, or this sees it counted and wakes it.
            self.generation.fetch_add(1, SeqCst);
            if self.park && self.sleepers.load(SeqCst) > 0 {
                let _guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
                self.wake.notify_all();
            }
            return;
        }
        let mut spins = 0u32;
        let since = self.park.then(std::time::Instant::now);
        while self.generation.load(Acquire) == generation {
            if spins < 1 << 12 {
                spins += 1;
                std::hint::spin_loop();
                continue;
            }
            if since.is_some_and(|t| t.elapsed() >= PARK_AFTER) {
                return self.sleep(generation);
            }
            std::thread::yield_now();
        }
    }

    /// Sleeps until the generation moves past `generation`.
    fn sleep(&self, generation: usize) {
        use std::sync::atomic::Ordering::SeqCst;
        let mut guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.sleepers.fetch_add(1, SeqCst);
        while self.generation.load(SeqCst) == generation {
            guard = self.wake.wait(guard).unwrap_or_else(|p| p.into_inner());
        }
        self.sleepers.fetch_sub(1, SeqCst);
    }
}

/// The contiguous slice of `n` items worker `i` of `t` owns, with boundaries on
/// multiples of `align` items (so two workers never share a cache line).
pub fn chunk(n: usize, t: usize, i: usize, align: usize) -> std::ops::Range<usize> {
    let blocks = n.div_ceil(align);
    let lo = (blocks * i / t * align).min(n);
    let hi = (blocks * (i + 1) / t * align).min(n);
    lo..hi
}

/// A pool of `threads` workers over this process's CPUs (wrapping around), for tests.
#[cfg(test)]
pub(crate) fn test_pool(threads: usize) -> Pool {
    let cpus: Vec<u32> = scalescope_topo::affinity::process_affinity()
        .expect("affinity is readable")
        .iter()
        .collect();
    let sets: Vec<CpuSet> = (0..threads)
        .map(|i| [cpus[i % cpus.len()]].into_iter().collect())
        .collect();
    Pool::new(&sets, None).expect("test workers pin")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claimed_chunks_cover_exactly_once_across_workers() {
        let p = test_pool(3);
        let chunks = Chunks::new(1000, 7);
        let mut seen: Vec<usize> = p
            .broadcast(|_| {
                let mut mine = Vec::new();
                while let Some(r) = chunks.claim() {
                    mine.extend(r);
                }
                mine
            })
            .concat();
        seen.sort_unstable();
        assert_eq!(seen, (0..1000).collect::<Vec<_>>());
        assert_eq!(Chunks::per_worker(10, 4, 8).claim(), Some(0..1));
        assert_eq!(Chunks::new(0, 5).claim(), None);
    }

    #[test]
    fn the_spin_barrier_separates_phases() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let p = test_pool(3);
        let barrier = SpinBarrier::new(3);
        let counter = AtomicUsize::new(0);
        let seen = p.broadcast(|_| {
            let mut seen = Vec::new();
            for phase in 1..=50 {
                counter.fetch_add(1, Ordering::Relaxed);
                barrier.wait();
                seen.push(counter.load(Ordering::Relaxed) == 3 * phase);
                barrier.wait();
            }
            seen
        });
        assert!(seen.concat().iter().all(|&ok| ok));
    }

    #[test]
    fn a_parking_barrier_wakes_its_sleepers_and_separates_phases() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let p = test_pool(3);
        let barrier = SpinBarrier::parking(3);
        let counter = AtomicUsize::new(0);
        let seen = p.broadcast(|w| {
            let mut seen = Vec::new();
            for phase in 1..=6 {
                // Worker 0 arrives late in every other phase: the others park.
                if w == 0 && phase % 2 == 0 {
                    std::thread::sleep(PARK_AFTER * 3);
                }
                counter.fetch_add(1, Ordering::Relaxed);
                barrier.wait();
                seen.push(counter.load(Ordering::Relaxed) == 3 * phase);
                barrier.wait();
            }
            seen
        });
        assert!(seen.concat().iter().all(|&ok| ok));
        assert_eq!(barrier.sleepers.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn chunks_cover_exactly_once() {
        for (n, t) in [(100, 3), (7, 4), (0, 2), (1_000_003, 7)] {
            let mut next = 0;
            for i in 0..t {
                let r = chunk(n, t, i, 8);
                assert_eq!(r.start, next);
                assert!(r.start.is_multiple_of(8) || r.start == n);
                next = r.end;
            }
            assert_eq!(next, n);
        }
    }

    #[test]
    fn workers_are_pinned() {
        let cpus = scalescope_topo::affinity::process_affinity().unwrap();
        let first: CpuSet = [cpus.first().unwrap()].into_iter().collect();
        let pool = Pool::new(&[first.clone(), first.clone()], None).unwrap();
        assert_eq!(
            pool.broadcast(|_| current_affinity().unwrap()),
            vec![first.clone(), first]
        );
        assert!(Pool::new(&[[9999].into_iter().collect()], None).is_err());
    }
}
