//! STREAM (John D. McCalpin, "Memory Bandwidth and Machine Balance in Current High
//! Performance Computers", IEEE TCCA Newsletter, 1995; stream.c v5.10): copy, scale,
//! add and triad, plus the machine's write and read ceilings (a fill with ordinary
//! and one with non-temporal stores, and a sum through the read loop a short trial
//! found faster here: [`super::vector`]), over
//! three arrays each at least four times the total last-level cache. Each worker
//! first-touches and then works on its own contiguous slice, so pages live where
//! their thread runs; the workers run every iteration inside one broadcast, in step
//! at a spinning barrier around each kernel. Bytes are counted as STREAM counts
//! them (copy and scale move 2 arrays, add and triad 3, the writes and the read 1);
//! the best of `ntimes` iterations, the first excluded, gives the rate. Validation
//! replays the iterations on scalars, as stream.c's checkSTREAMresults does, and
//! checks the read kernel's sum.

use std::alloc::{alloc, dealloc, Layout};
use std::ops::Range;
use std::ptr::NonNull;
use std::time::Instant;

use scalescope_model::detail::{Detail, StreamDetail};
use scalescope_model::mem::{StreamKernel, SustainedBlock};
use scalescope_topo::Topology;

use super::read_trial::{self, Choice};
use super::settings::StreamSettings;
use super::vector::{self, ReadLoop};
use crate::pool::{chunk, Pool, SpinBarrier};
use crate::{Figure, Verification, Workload, WorkloadError};
use scalescope_model::setting::Setting;
use scalescope_model::value::Bytes;

/// STREAM's scalar.
const SCALAR: f64 = 3.0;
/// stream.c's tolerance for double precision.
const EPSILON: f64 = 1e-13;
/// Chunk boundaries on whole cache lines (8 doubles).
const ALIGN: usize = 8;

/// The kernels in the order they run: STREAM's four, then the write-only ones (over
/// `c` with ordinary stores, over `b` with non-temporal stores; the next copy and
/// scale overwrite them) and the read-only one (over `a`).
pub const KERNELS: [&str; 7] = ["copy", "scale", "add", "triad", "write", "write_nt", "read"];
/// Arrays each kernel moves, as STREAM counts them (one for the writes and the read).
const ARRAYS_MOVED: [u64; 7] = [2, 2, 3, 3, 1, 1, 1];
/// What the write kernel stores in every element of `c`.
const WRITTEN: f64 = 0.5;
/// What the non-temporal write kernel stores in every element of `b`.
const WRITTEN_NT: f64 = 0.25;

/// An uninitialised, page-aligned array of doubles: its pages are first touched by
/// the worker that owns them.
struct Array {
    ptr: NonNull<f64>,
    len: usize,
    layout: Layout,
}

// SAFETY: an Array is only accessed through `slice`/`slice_mut` on disjoint ranges,
// one range per worker, and never resized while shared.
unsafe impl Send for Array {}
// SAFETY: as above; concurrent access is to disjoint ranges only.
unsafe impl Sync for Array {}

impl Array {
    fn new(len: usize) -> Result<Array, WorkloadError> {
        let bytes = len.max(1) * 8;
        let layout =
            Layout::from_size_align(bytes, 4096).map_err(|_| WorkloadError::Allocation {
                bytes: bytes as u64,
            })?;
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc(layout) } as *mut f64;
        let ptr = NonNull::new(raw).ok_or(WorkloadError::Allocation {
            bytes: bytes as u64,
        })?;
        Ok(Array { ptr, len, layout })
    }

    /// # Safety
    /// No other thread may write `r` while the slice lives, and `r` must have been
    /// initialised.
    unsafe fn slice(&self, r: Range<usize>) -> &[f64] {
        debug_assert!(r.end <= self.len);
        // SAFETY: in bounds (checked by the caller's ranges), initialised per contract.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().add(r.start), r.len()) }
    }

    /// # Safety
    /// No other thread may touch `r` while the slice lives.
    #[allow(clippy::mut_from_ref)]
    unsafe fn slice_mut(&self, r: Range<usize>) -> &mut [f64] {
        debug_assert!(r.end <= self.len);
        // SAFETY: in bounds; exclusive per the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().add(r.start), r.len()) }
    }
}

impl Drop for Array {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr.as_ptr() as *mut u8, self.layout) }
    }
}

/// Timings of one kernel over all iterations.
#[derive(Debug, Clone, Default)]
struct KernelTimes {
    secs: Vec<f64>,
}

/// The kernels also run as a sustained block (see [`Stream::with_sustain`]).
pub const SUSTAINED: [&str; 3] = ["write", "write_nt", "read"];

/// One sustained block: `sweeps` back-to-back sweeps of one kernel in `secs`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sustained {
    pub sweeps: usize,
    pub secs: f64,
}

/// The STREAM workload.
pub struct Stream {
    n: usize,
    ntimes: usize,
    nt: bool,
    arrays: Option<[Array; 3]>,
    times: Vec<KernelTimes>,
    last_sum: f64,
    /// Target seconds of each sustained block (0: none).
    sustain: f64,
    /// Per kernel in [`KERNELS`] order, its sustained block if it ran one.
    sustained: [Option<Sustained>; KERNELS.len()],
    /// The sustained read block's loop, picked by a trial just before the
    /// sustained blocks (the iterations read through [`ReadLoop::Wide`]).
    read: Choice,
}

impl Stream {
    /// `n` elements per array, `ntimes` iterations (at least 2), optional
    /// non-temporal stores.
    pub fn new(n: usize, ntimes: usize, nt: bool) -> Stream {
        Stream {
            n,
            ntimes: ntimes.max(2),
            nt,
            arrays: None,
            times: vec![KernelTimes::default(); KERNELS.len()],
            last_sum: 0.0,
            sustain: 0.0,
            sustained: [None; KERNELS.len()],
            read: Choice::default(),
        }
    }

    /// The read loop the last run's sustained read ran through, and its trial.
    pub fn read_loop(&self) -> &Choice {
        &self.read
    }

    /// After the iterations, each of [`SUSTAINED`] also runs alone as one block of
    /// back-to-back sweeps lasting about `secs` (as many sweeps as its best
    /// iteration fits in `secs`, at least one), timed from one barrier to the next
    /// with no barrier between sweeps: what likwid-bench measures (each thread
    /// repeats one kernel for about a second between two barriers and the rate is
    /// the average over the repetitions). 0 runs no block.
    ///
    /// # Errors
    /// [`WorkloadError::BadParam`] naming `sustain` when `secs` is negative or not
    /// finite.
    pub fn with_sustain(mut self, secs: f64) -> Result<Stream, WorkloadError> {
        if !(secs.is_finite() && secs >= 0.0) {
            return Err(WorkloadError::BadParam {
                setting: Setting::param("sustain"),
                detail: format!("{secs}: not a number of seconds of at least 0"),
            });
        }
        self.sustain = secs;
        Ok(self)
    }

    /// Per-array bytes from `size`, or four times the total last-level cache.
    ///
    /// # Errors
    /// [`WorkloadError::BadParam`] for a bad size, or when no cache size is known and
    /// no size was given.
    pub fn array_bytes(size: Option<Bytes>, topo: &Topology) -> Result<u64, WorkloadError> {
        super::size_or_llc("size", size, topo, 4)
    }

    /// `n` doubles per array, `ntimes` iterations (at least 2: the first is not
    /// counted), non-temporal stores if `nt`.
    ///
    /// # Errors
    /// [`WorkloadError::BadParam`] naming `ntimes` when it is below 2.
    pub fn with_iterations(n: usize, ntimes: usize, nt: bool) -> Result<Stream, WorkloadError> {
        if ntimes < 2 {
            return Err(WorkloadError::BadParam {
                setting: Setting::param("ntimes"),
                detail: format!(
                    "{ntimes}: STREAM needs at least 2 iterations (the first is not counted)"
                ),
            });
        }
        Ok(Stream::new(n, ntimes, nt))
    }

    /// The workload its settings describe: arrays of the size given, else four
    /// times the last-level cache of `topo` (read only then).
    ///
    /// # Errors
    /// [`WorkloadError::BadParam`] naming `size` when none is given and the cache
    /// size is unknown.
    pub fn with(
        settings: &StreamSettings,
        topo: Option<&Topology>,
    ) -> Result<Stream, WorkloadError> {
        let bytes = match (settings.size, topo) {
            (Some(size), _) => size.get(),
            (None, Some(topo)) => Stream::array_bytes(None, topo)?,
            (None, None) => {
                return Err(WorkloadError::param(
                    "size",
                    "the last-level cache size is unknown here; give the size (e.g. 1GiB)",
                ))
            }
        };
        Stream::new((bytes / 8) as usize, settings.ntimes.usize(), settings.nt)
            .with_sustain(settings.sustain.get())
    }

    pub fn array_bytes_each(&self) -> u64 {
        self.n as u64 * 8
    }

    /// Best rate of each kernel in GB/s (1e9 bytes), STREAM's first iteration excluded.
    pub fn rates(&self) -> Vec<(&'static str, f64, f64)> {
        KERNELS
            .iter()
            .zip(ARRAYS_MOVED)
            .zip(&self.times)
            .map(|((name, arrays), t)| {
                let best = t.secs.iter().skip(1).copied().fold(f64::INFINITY, f64::min);
                let bytes = (arrays * self.array_bytes_each()) as f64;
                (*name, bytes / best / 1e9, best)
            })
            .collect()
    }

    /// Each kernel's sustained block and its rate in GB/s, where it ran one.
    pub fn sustained_rates(&self) -> Vec<(&'static str, Sustained, f64)> {
        KERNELS
            .iter()
            .zip(ARRAYS_MOVED)
            .zip(&self.sustained)
            .filter_map(|((name, arrays), s)| {
                let s = (*s)?;
                let bytes = (arrays * self.array_bytes_each()) as f64 * s.sweeps as f64;
                Some((*name, s, bytes / s.secs / 1e9))
            })
            .collect()
    }
}

impl Stream {
    /// Every iteration of every kernel on worker `i` of `threads`, the workers kept
    /// in step by a spinning barrier before and after each kernel, so no worker
    /// sleeps between kernels (on a VM, waking a halted vCPU takes long enough to
    /// show in a 3 ms kernel). Each kernel is timed from the barrier that starts it
    /// to the one that ends it, as stream.c times a parallel loop. Returns this
    /// worker's times (one row per iteration) and its part of the last read's sum.
    fn worker(
        &self,
        i: usize,
        threads: usize,
        arrays: &[Array; 3],
        barrier: &SpinBarrier,
    ) -> (Vec<[f64; KERNELS.len()]>, f64) {
        let mut rows = Vec::with_capacity(self.ntimes);
        let mut sum = 0.0;
        for _ in 0..self.ntimes {
            let mut row = [0.0; KERNELS.len()];
            for (k, secs) in row.iter_mut().enumerate() {
                barrier.wait();
                let t = Instant::now();
                let s = self.kernel(k, i, threads, arrays);
                barrier.wait();
                *secs = t.elapsed().as_secs_f64();
                if KERNELS[k] == "read" {
                    sum = s;
                }
            }
            rows.push(row);
        }
        (rows, sum)
    }

    /// The sustained blocks on worker `i`: for each `(k, sweeps)`, `sweeps` runs of
    /// kernel `k` back to back between two barriers, no barrier in between (each
    /// worker streams its own slice at its own pace, as likwid-bench's threads do);
    /// the block's time runs from the first barrier to the second, so it is the
    /// slowest worker's. Returns this worker's seconds per block and the last
    /// read's sum (0 if no read ran).
    fn sustained_worker(
        &self,
        i: usize,
        threads: usize,
        arrays: &[Array; 3],
        barrier: &SpinBarrier,
        plan: &[(usize, usize)],
    ) -> (Vec<f64>, f64) {
        let mut sum = 0.0;
        let secs = plan
            .iter()
            .map(|&(k, sweeps)| {
                barrier.wait();
                let t = Instant::now();
                for _ in 0..sweeps {
                    // Opaque to the optimiser: every sweep's read must happen, though
                    // only the last sum is kept and checked.
                    let s = std::hint::black_box(self.kernel(k, i, threads, arrays));
                    if KERNELS[k] == "read" {
                        sum = s;
                    }
                }
                barrier.wait();
                t.elapsed().as_secs_f64()
            })
            .collect();
        (secs, sum)
    }

    /// The sustained blocks' plan: each of [`SUSTAINED`] with as many sweeps as its
    /// best iteration fits in the target seconds (at least one); empty at 0.
    fn sustain_plan(&self) -> Vec<(usize, usize)> {
        if self.sustain <= 0.0 {
            return Vec::new();
        }
        let best = self.rates();
        KERNELS
            .iter()
            .enumerate()
            .filter(|(_, name)| SUSTAINED.contains(name))
            .map(|(k, _)| {
                let sweeps = (self.sustain / best[k].2).ceil();
                (
                    k,
                    if sweeps.is_finite() {
                        sweeps.max(1.0) as usize
                    } else {
                        1
                    },
                )
            })
            .collect()
    }

    /// The read-loop trial on every worker, kept as the sustained read's loop.
    fn pick_read_loop(&mut self, pool: &Pool, arrays: &[Array; 3], barrier: &SpinBarrier) {
        let loops = ReadLoop::available();
        if loops.len() < 2 {
            return;
        }
        let best = self.rates().into_iter().find(|r| r.0 == "read");
        let sweeps = read_trial::sweeps(self.sustain, best.map_or(f64::INFINITY, |r| r.2));
        let (n, threads) = (self.n, pool.threads());
        let rounds = pool.broadcast(|i| {
            // SAFETY: worker i reads only its own range of `a`, initialised in
            // `prepare`; nothing writes during the trial.
            let a = unsafe { arrays[0].slice(chunk(n, threads, i, ALIGN)) };
            read_trial::blocks(a, barrier, loops, sweeps)
        });
        // Worker 0's times: it leaves every end barrier after the slowest worker.
        let block = (self.array_bytes_each() * sweeps as u64) as f64;
        self.read = read_trial::choose(loops, block, sweeps, &rounds[0]);
    }

    /// Kernel `k` (in [`KERNELS`] order) on worker `i`'s range of `threads`; the
    /// read returns its sum, the others 0.
    fn kernel(&self, k: usize, i: usize, threads: usize, [a, b, c]: &[Array; 3]) -> f64 {
        let r = chunk(self.n, threads, i, ALIGN);
        let nt = self.nt;
        // SAFETY: (every arm) worker i only touches range r(i) of each array, the
        // ranges are disjoint, every array was initialised in `prepare`, and the
        // barrier after each kernel orders it before the next.
        unsafe {
            match KERNELS[k] {
                "copy" if nt => {
                    vector::combine_nt(c.slice_mut(r.clone()), a.slice(r), 1.0, None, 0.0)
                }
                "copy" => c.slice_mut(r.clone()).copy_from_slice(a.slice(r)),
                "scale" if nt => {
                    vector::combine_nt(b.slice_mut(r.clone()), c.slice(r), SCALAR, None, 0.0)
                }
                "scale" => b
                    .slice_mut(r.clone())
                    .iter_mut()
                    .zip(c.slice(r))
                    .for_each(|(d, s)| *d = SCALAR * s),
                "add" if nt => vector::combine_nt(
                    c.slice_mut(r.clone()),
                    a.slice(r.clone()),
                    1.0,
                    Some(b.slice(r)),
                    1.0,
                ),
                "add" => c
                    .slice_mut(r.clone())
                    .iter_mut()
                    .zip(a.slice(r.clone()).iter().zip(b.slice(r)))
                    .for_each(|(d, (x, y))| *d = x + y),
                "triad" if nt => vector::combine_nt(
                    a.slice_mut(r.clone()),
                    b.slice(r.clone()),
                    1.0,
                    Some(c.slice(r)),
                    SCALAR,
                ),
                "triad" => a
                    .slice_mut(r.clone())
                    .iter_mut()
                    .zip(b.slice(r.clone()).iter().zip(c.slice(r)))
                    .for_each(|(d, (x, y))| *d = x + SCALAR * y),
                "write" => vector::write(c.slice_mut(r), WRITTEN, false),
                "write_nt" => vector::write(b.slice_mut(r), WRITTEN_NT, true),
                _ => return vector::read_with(a.slice(r), self.read.chosen),
            }
        }
        0.0
    }

    /// The values every element should hold after `ntimes` iterations.
    fn expected(&self) -> (f64, f64, f64) {
        let (mut aj, mut bj, mut cj) = (1.0f64, 2.0f64, 0.0f64);
        for _ in 0..self.ntimes {
            cj = aj;
            bj = SCALAR * cj;
            cj = aj + bj;
            aj = bj + SCALAR * cj;
            cj = WRITTEN;
            bj = WRITTEN_NT;
        }
        (aj, bj, cj)
    }
}

impl Workload for Stream {
    fn name(&self) -> &'static str {
        "stream"
    }

    fn primary_figure(&self) -> &'static str {
        "triad_gb_per_s"
    }

    fn prepare(&mut self, pool: &Pool) -> Result<(), WorkloadError> {
        let arrays = [
            Array::new(self.n)?,
            Array::new(self.n)?,
            Array::new(self.n)?,
        ];
        let (n, t) = (self.n, pool.threads());
        pool.broadcast(|i| {
            let r = chunk(n, t, i, ALIGN);
            // SAFETY: worker i initialises (first-touches) only its own range.
            unsafe {
                arrays[0].slice_mut(r.clone()).fill(1.0);
                arrays[1].slice_mut(r.clone()).fill(2.0);
                arrays[2].slice_mut(r).fill(0.0);
            }
        });
        self.arrays = Some(arrays);
        Ok(())
    }

    fn run(&mut self, pool: &Pool) -> (f64, Vec<Figure>) {
        // Unprepared, nothing runs: no figure, and `verify` says nothing ran.
        let Some(arrays) = self.arrays.take() else {
            return (0.0, Vec::new());
        };
        let (threads, barrier) = (pool.threads(), SpinBarrier::new(pool.threads()));
        let t0 = Instant::now();
        self.read = Choice::default();
        let this = &*self;
        let out = pool.broadcast(|i| this.worker(i, threads, &arrays, &barrier));
        self.last_sum = out.iter().map(|(_, s)| s).sum();
        // Worker 0's times: it leaves every end barrier after the slowest worker.
        for row in &out[0].0 {
            for (t, secs) in self.times.iter_mut().zip(row) {
                t.secs.push(*secs);
            }
        }
        let plan = self.sustain_plan();
        if !plan.is_empty() {
            self.pick_read_loop(pool, &arrays, &barrier);
            let this = &*self;
            let out =
                pool.broadcast(|i| this.sustained_worker(i, threads, &arrays, &barrier, &plan));
            // The blocks end with a read, so the last sum checked is theirs.
            self.last_sum = out.iter().map(|(_, s)| s).sum();
            for (&(k, sweeps), &secs) in plan.iter().zip(&out[0].0) {
                self.sustained[k] = Some(Sustained { sweeps, secs });
            }
        }
        let seconds = t0.elapsed().as_secs_f64();
        self.arrays = Some(arrays);
        let best = self
            .rates()
            .into_iter()
            .map(|(name, gbs, _)| (name, "", gbs));
        let sustained = self
            .sustained_rates()
            .into_iter()
            .map(|(name, _, gbs)| (name, "_sustained", gbs));
        let figures = best
            .chain(sustained)
            .map(|(name, how, gbs)| Figure {
                name: format!("{name}{how}_gb_per_s"),
                value: gbs,
                unit: "GB/s",
            })
            .collect();
        (seconds, figures)
    }

    fn verify(&self, pool: &Pool) -> Verification {
        let Some([a, b, c]) = &self.arrays else {
            return Verification::Failed("nothing ran".into());
        };
        let (aj, bj, cj) = self.expected();
        let (n, t) = (self.n, pool.threads());
        let errs = pool.broadcast(|i| {
            let r = chunk(n, t, i, ALIGN);
            // SAFETY: read-only access after all kernels finished.
            let err = |x: &Array, v: f64| unsafe {
                x.slice(r.clone())
                    .iter()
                    .map(|e| (e - v).abs())
                    .sum::<f64>()
            };
            (err(a, aj), err(b, bj), err(c, cj))
        });
        let avg = |k: usize| errs.iter().map(|e| [e.0, e.1, e.2][k]).sum::<f64>() / n as f64;
        let rel = [avg(0) / aj.abs(), avg(1) / bj.abs(), avg(2) / cj.abs()];
        let sum_rel = (self.last_sum - aj * n as f64).abs() / (aj * n as f64).abs();
        let passed = rel.iter().all(|e| *e <= EPSILON) && sum_rel <= 1e-8;
        let detail = format!(
            "average relative errors a {:.2e}, b {:.2e}, c {:.2e} (limit {EPSILON:e}); sum relative error {sum_rel:.2e} (limit 1e-8)",
            rel[0], rel[1], rel[2]
        );
        Verification::check(passed, detail)
    }

    fn detail(&self) -> Detail {
        let kernels = self
            .rates()
            .into_iter()
            .zip(&self.times)
            .zip(ARRAYS_MOVED)
            .zip(&self.sustained)
            .map(|((((name, gbs, best), t), arrays), sustained)| {
                let rest = &t.secs[1.min(t.secs.len())..];
                let avg = rest.iter().sum::<f64>() / rest.len().max(1) as f64;
                let max = rest.iter().copied().fold(0.0, f64::max);
                let bytes = arrays * self.array_bytes_each();
                let sustained = sustained.map(|s| SustainedBlock {
                    sweeps: s.sweeps,
                    secs: s.secs,
                    gb_per_s: (bytes * s.sweeps as u64) as f64 / s.secs / 1e9,
                });
                let read_loop = (name == "read" && sustained.is_some()).then(|| self.read.typed());
                let kernel = StreamKernel {
                    gb_per_s: gbs,
                    best_secs: best,
                    avg_secs: avg,
                    max_secs: max,
                    bytes,
                    sustained,
                    read_loop,
                };
                (name.to_string(), kernel)
            })
            .collect();
        Detail::Stream(StreamDetail {
            array_elements: self.n,
            array_bytes: self.array_bytes_each(),
            total_bytes: 3 * self.array_bytes_each(),
            ntimes: self.ntimes,
            non_temporal_stores: self.nt,
            sustain_secs: self.sustain,
            kernels,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execute;
    use std::collections::BTreeMap;

    use crate::pool::test_pool as pool;

    #[test]
    fn validates_at_one_and_two_threads_with_and_without_nt() {
        for (threads, nt) in [(1, false), (2, false), (2, true)] {
            let mut s = Stream::new(1_000_003, 3, nt);
            let r = execute(&mut s, &pool(threads)).unwrap();
            assert!(
                r.verification.passed(),
                "{threads} threads nt={nt}: {}",
                r.verification
            );
            for k in KERNELS {
                assert!(r.figures[&format!("{k}_gb_per_s")] > 0.0);
            }
        }
    }

    #[test]
    fn sustained_blocks_run_alone_and_are_checked() {
        for threads in [1, 2] {
            let mut s = Stream::new(100_000, 2, false).with_sustain(0.01).unwrap();
            let r = execute(&mut s, &pool(threads)).unwrap();
            assert!(r.verification.passed(), "{}", r.verification);
            let blocks = s.sustained_rates();
            let names: Vec<_> = blocks.iter().map(|b| b.0).collect();
            assert_eq!(names, SUSTAINED);
            for (name, block, gbs) in blocks {
                assert!(block.sweeps >= 1 && block.secs > 0.0, "{name}");
                assert_eq!(r.figures[&format!("{name}_sustained_gb_per_s")], gbs);
            }
            let Detail::Stream(d) = &r.detail else {
                panic!("{:?}", r.detail)
            };
            assert!(d.kernels["copy"].sustained.is_none());
        }
        // No block at 0; a negative or unparsable target is refused by name.
        let mut s = Stream::new(10_000, 2, false);
        execute(&mut s, &pool(1)).unwrap();
        assert!(s.sustained_rates().is_empty());
        assert!(Stream::new(8, 2, false).with_sustain(-1.0).is_err());
        let t = scalescope_topo::Source::Synthetic("core:2".into())
            .load()
            .unwrap();
        let p: BTreeMap<_, _> = [("size", "64KiB"), ("sustain", "soon")]
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .into();
        let e = crate::params::parse::<StreamSettings>("stream", &p)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("`sustain`"), "{e}");
        let _ = t;
    }

    #[test]
    fn the_read_trial_keeps_the_loop_with_the_highest_median() {
        let loops = [ReadLoop::Wide, ReadLoop::Paced];
        // 16.8 MB per block over these seconds. The paced loop wins most
        // rounds though the wide one has the single best.
        let secs = |w: f64, p: f64| vec![w, p];
        let rounds = [
            secs(0.010, 0.008),
            secs(0.004, 0.009),
            secs(0.011, 0.009),
            secs(0.012, 0.010),
            secs(0.010, 0.011),
        ];
        let block = 16.8e6;
        let c = read_trial::choose(&loops, block, 2, &rounds);
        assert_eq!(c.chosen, ReadLoop::Paced);
        let gbs = |t: f64| block / t / 1e9;
        assert_eq!(
            c.medians,
            [(ReadLoop::Wide, gbs(0.010)), (ReadLoop::Paced, gbs(0.009))]
        );
        // A tie keeps the first listed.
        assert_eq!(
            read_trial::choose(&loops, block, 1, &[secs(0.01, 0.01)]).chosen,
            ReadLoop::Wide
        );
        // A block timed at zero seconds gives no finite median: that loop is
        // left out rather than kept, and the document stays valid JSON.
        let c = read_trial::choose(&loops, block, 1, &[secs(0.01, 0.0)]);
        assert_eq!((c.chosen, c.medians.len()), (ReadLoop::Wide, 1));
        assert!(!c.typed().trial_gb_per_s.contains_key("paced"));
        assert_eq!(read_trial::sweeps(1.0, 0.004), 13);
        assert_eq!(read_trial::sweeps(0.0, 0.004), 1);
        assert_eq!(read_trial::sweeps(1.0, f64::INFINITY), 1);
    }

    #[test]
    fn the_read_trial_times_every_loop_in_every_round() {
        let a: Vec<f64> = (0..4096).map(f64::from).collect();
        let barrier = SpinBarrier::new(1);
        let rounds = read_trial::blocks(&a, &barrier, ReadLoop::available(), 3);
        assert_eq!(rounds.len(), read_trial::PAIRS);
        assert!(rounds
            .iter()
            .all(|r| r.len() == ReadLoop::available().len() && r.iter().all(|s| *s > 0.0)));
    }

    #[test]
    fn the_sustained_read_reports_its_loop_and_its_sum_is_checked() {
        let p = pool(2);
        let mut s = Stream::new(200_000, 2, false).with_sustain(0.02).unwrap();
        let r = execute(&mut s, &p).unwrap();
        assert!(r.verification.passed(), "{}", r.verification);
        let choice = s.read_loop();
        let Detail::Stream(d) = &r.detail else {
            panic!("{:?}", r.detail)
        };
        let l = d.kernels["read"].read_loop.as_ref().unwrap();
        assert_eq!(l.chosen, choice.chosen.name());
        if ReadLoop::available().len() > 1 {
            assert_eq!(choice.medians.len(), 2, "{choice:?}");
            assert_eq!(l.trial_pairs, read_trial::PAIRS);
        }
        // The sum verified is the sustained block's, read through the chosen loop;
        // a sum that is off by one element fails.
        s.last_sum += s.expected().0;
        assert!(!s.verify(&p).passed());
    }

    #[test]
    fn corruption_is_caught() {
        let p = pool(1);
        let mut s = Stream::new(10_000, 2, false);
        s.prepare(&p).unwrap();
        s.run(&p);
        // SAFETY: single-threaded test access after the run.
        unsafe { s.arrays.as_ref().unwrap()[0].slice_mut(5..6)[0] += 1.0 };
        let v = s.verify(&p);
        assert!(!v.passed(), "{v}");
    }

    #[test]
    fn expected_values_follow_stream_c() {
        // After one iteration: c=a=1, b=3, c=4, a=3+12=15, then the writes: c=0.5,
        // b=0.25; the next iteration's scale reads c=a, not b.
        let s = Stream::new(8, 2, false);
        let (a, b, c) = Stream { ntimes: 1, ..s }.expected();
        assert_eq!((a, b, c), (15.0, WRITTEN_NT, WRITTEN));
        let (a, _, _) = Stream::new(8, 2, false).expected();
        assert_eq!(a, 15.0 * 15.0);
    }

    #[test]
    fn size_rules() {
        let t = scalescope_topo::Source::Synthetic("core:2".into())
            .load()
            .unwrap();
        assert!(Stream::array_bytes(None, &t)
            .unwrap_err()
            .to_string()
            .contains("unknown here"));
        assert_eq!(
            Stream::array_bytes("1GiB".parse().ok(), &t).unwrap(),
            1 << 30
        );
        let live = scalescope_topo::Source::Live.load().unwrap();
        let llc: u64 = live.l3.iter().filter_map(|c| c.size_bytes).sum();
        if llc > 0 {
            assert_eq!(Stream::array_bytes(None, &live).unwrap(), 4 * llc);
        }
        let mut p = BTreeMap::new();
        p.insert("bogus".to_string(), "1".to_string());
        assert!(crate::params::parse::<StreamSettings>("stream", &p).is_err());
    }
}
