//! Memory-subsystem measurements beyond STREAM: the NUMA bandwidth and latency
//! matrices (threads on node i, memory bound to node j), the latency ladder across
//! working-set sizes, and core-to-core latency. Buffers are mapped, bound with
//! `mbind` before they are touched, and their placement read back from
//! `/proc/self/numa_maps`.

pub mod buffer;
pub mod c2c;
pub mod chase;
pub mod matrix;
pub mod settings;
pub mod stream;

use scalescope_topo::Topology;

use crate::WorkloadError;
use scalescope_model::setting::Setting;
use scalescope_model::value::Bytes;

/// Total last-level cache from the topology (L3, else L2), if known.
pub fn llc_bytes(topo: &Topology) -> Option<u64> {
    let llc = if topo.l3.is_empty() {
        &topo.l2
    } else {
        &topo.l3
    };
    let total: u64 = llc.iter().filter_map(|c| c.size_bytes).sum();
    (total > 0).then_some(total)
}

/// A buffer size: `size` as given, or by default `times` x
/// the last-level cache, so the buffer is out of every cache level.
///
/// # Errors
/// [`WorkloadError::BadParam`] naming `field`: a size that does not parse, or no
/// size given where the cache size is unknown.
pub fn size_or_llc(
    field: &str,
    size: Option<Bytes>,
    topo: &Topology,
    times: u64,
) -> Result<u64, WorkloadError> {
    match size {
        Some(b) => Ok(b.get()),
        None => llc_bytes(topo).map(|b| b * times).ok_or_else(|| {
            WorkloadError::param(
                field,
                "the last-level cache size is unknown here; give the size (e.g. 1GiB)",
            )
        }),
    }
}

fn bad(field: &str, detail: String) -> WorkloadError {
    WorkloadError::BadParam {
        setting: Setting::param(field),
        detail,
    }
}

/// The CPU a one-thread measurement runs on: `cpu` if it is usable here, else the
/// first usable CPU.
///
/// # Errors
/// [`WorkloadError::BadParam`] naming `cpu` when it is not usable.
pub fn usable_cpu(topo: &Topology, cpu: Option<u32>) -> Result<u32, WorkloadError> {
    let usable = topo.usable_cpus();
    match cpu {
        Some(c) if usable.contains(c) => Ok(c),
        Some(c) => Err(bad(
            "cpu",
            format!("{c} is not a usable CPU here (usable: {usable})"),
        )),
        None => usable
            .first()
            .ok_or_else(|| bad("cpu", "no usable CPU".into())),
    }
}

/// The CPUs of a set, each usable here; every usable CPU by default.
///
/// # Errors
/// [`WorkloadError::BadParam`] naming `cpus`: a CPU that is not usable.
pub fn usable_cpus(
    topo: &Topology,
    list: Option<&scalescope_topo::CpuSet>,
) -> Result<Vec<u32>, WorkloadError> {
    let usable = topo.usable_cpus();
    let Some(set) = list else {
        return Ok(usable.iter().collect());
    };
    let bad_cpu = set.iter().find(|c| !usable.contains(*c));
    match bad_cpu {
        Some(c) => Err(bad(
            "cpus",
            format!("CPU {c} is not usable here (usable: {usable})"),
        )),
        None => Ok(set.iter().collect()),
    }
}

/// The L2 and L3 sizes `cpu` sees, `(level, bytes)`, where known.
pub fn caches_of(topo: &Topology, cpu: u32) -> Vec<(u8, u64)> {
    let pu = topo.pu(cpu);
    let l2 = pu
        .and_then(|p| p.l2)
        .and_then(|i| topo.l2.get(i)?.size_bytes);
    let l3 = pu
        .and_then(|p| p.l3)
        .and_then(|i| topo.l3.get(i)?.size_bytes);
    [(2u8, l2), (3u8, l3)]
        .into_iter()
        .filter_map(|(l, s)| Some((l, s?)))
        .collect()
}

/// The trial that picks the loop a sustained read runs through: both loops read
/// the same slices in interleaved blocks timed as the sustained blocks are, and
/// the one with the higher median GB/s is kept (docs/PERFORMANCE.md: which loop
/// is faster depends on the machine).
pub mod read_trial {
    use std::time::Instant;

    use std::collections::BTreeMap;

    use scalescope_model::mem::ReadLoopChoice;

    use super::vector::{self, ReadLoop};
    use crate::pool::SpinBarrier;

    /// Interleaved blocks of each loop.
    pub const PAIRS: usize = 5;
    /// Each block's length as a share of the sustained target: with the default
    /// 1 s, ten blocks of 50 ms, half a second in all.
    pub const SHARE: f64 = 0.05;

    /// What a trial found: the loop kept, each loop's median GB/s (in the order
    /// tried; empty where no trial ran) and the sweeps in each block (0: none).
    #[derive(Debug, Clone, PartialEq, Default)]
    pub struct Choice {
        pub chosen: ReadLoop,
        pub medians: Vec<(ReadLoop, f64)>,
        pub sweeps: usize,
    }

    /// Sweeps per block: as many sweeps of `best_secs` (the read's best
    /// iteration) as fit in [`SHARE`] of `sustain` seconds, at least one.
    pub fn sweeps(sustain: f64, best_secs: f64) -> usize {
        let sweeps = (sustain * SHARE / best_secs).ceil();
        if sweeps.is_finite() {
            sweeps.max(1.0) as usize
        } else {
            1
        }
    }

    /// One worker's part of the trial over its slice `a`: [`PAIRS`] rounds, each
    /// a block of `sweeps` back-to-back sweeps of every loop (in `loops` order in
    /// even rounds, reversed in odd ones, so neither always goes first), each
    /// block timed from a barrier to a barrier with none between its sweeps (so
    /// worker 0's times are the slowest worker's). Seconds per round, by loop in
    /// `loops` order.
    pub fn blocks(
        a: &[f64],
        barrier: &SpinBarrier,
        loops: &[ReadLoop],
        sweeps: usize,
    ) -> Vec<Vec<f64>> {
        (0..PAIRS)
            .map(|round| {
                let mut secs = vec![0.0; loops.len()];
                for k in 0..loops.len() {
                    let l = if round % 2 == 0 {
                        k
                    } else {
                        loops.len() - 1 - k
                    };
                    barrier.wait();
                    let t = Instant::now();
                    for _ in 0..sweeps {
                        std::hint::black_box(vector::read_with(a, loops[l]));
                    }
                    barrier.wait();
                    secs[l] = t.elapsed().as_secs_f64();
                }
                secs
            })
            .collect()
    }

    /// The choice from the trial's rounds (`rounds[r][l]` seconds of a block of
    /// `block_bytes` through `loops[l]` in round `r`): each loop's median GB/s,
    /// non-finite ones dropped, and the loop with the highest (the first listed on
    /// a tie; [`ReadLoop::Wide`] when none is left).
    pub fn choose(
        loops: &[ReadLoop],
        block_bytes: f64,
        sweeps: usize,
        rounds: &[Vec<f64>],
    ) -> Choice {
        let medians: Vec<(ReadLoop, f64)> = loops
            .iter()
            .enumerate()
            .filter_map(|(l, &how)| {
                let gbs: Vec<f64> = rounds.iter().map(|r| block_bytes / r[l] / 1e9).collect();
                let median = scalescope_stats::median_of(&gbs)?;
                median.is_finite().then_some((how, median))
            })
            .collect();
        let chosen = medians
            .iter()
            .fold(None::<(ReadLoop, f64)>, |best, &(how, g)| match best {
                Some((_, b)) if b >= g => best,
                _ => Some((how, g)),
            })
            .map_or(ReadLoop::Wide, |(how, _)| how);
        Choice {
            chosen,
            medians,
            sweeps,
        }
    }

    impl Choice {
        /// As the `mem stream` detail records it (`kernels.read.loop`): the loop's
        /// name, the median GB/s by loop name, blocks per loop and sweeps per block.
        pub fn typed(&self) -> ReadLoopChoice {
            let trial: BTreeMap<String, f64> = self
                .medians
                .iter()
                .map(|(how, gbs)| (how.name().to_string(), *gbs))
                .collect();
            ReadLoopChoice {
                chosen: self.chosen.name().to_string(),
                trial_pairs: if trial.is_empty() { 0 } else { PAIRS },
                trial_gb_per_s: trial,
                trial_sweeps: self.sweeps,
            }
        }
    }
}

/// The inner loops of the bandwidth kernels: AVX where the CPU has it (checked at
/// run time), SSE2 on every other x86_64, portable loops elsewhere. Every loop
/// handles any length and alignment (a scalar tail after the vectors, and a scalar
/// head up to an aligned address before the stores; the reads load unaligned
/// data as it comes, so a misaligned slice splits some loads across lines).
pub mod vector {
    /// A read-only sum: the read-bandwidth ceiling, through the [`ReadLoop::Wide`] loop.
    pub fn read(a: &[f64]) -> f64 {
        read_with(a, ReadLoop::Wide)
    }

    /// How the read-only sum walks its slice (front to back, one stream per
    /// thread, both loops on x86_64 with AVX, checked at run time; the portable
    /// sum elsewhere). Which one reads faster depends on the machine: `mem stream`
    /// tries both and keeps the faster (docs/PERFORMANCE.md).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub enum ReadLoop {
        /// [`STEP`] doubles (two cache lines) per step as four 32-byte loads, each
        /// into its own register accumulator, as likwid-bench's `load_avx` loads:
        /// the core runs as far ahead of its loads as it can.
        #[default]
        Wide,
        /// [`PACED_SLOTS`] accumulators kept in memory (each 32-byte load is added
        /// to one slot, stored back and reloaded a step later), which bounds how
        /// fast the core consumes lines to about twice a core's share of DRAM on
        /// the machine of docs/PERFORMANCE.md, where the hardware prefetcher then
        /// keeps ahead: 1.09x the wide loop there at one thread.
        Paced,
    }

    impl ReadLoop {
        /// The loops this CPU runs as themselves (without AVX both fall back to
        /// the portable sum, so only [`ReadLoop::Wide`] is listed).
        pub fn available() -> &'static [ReadLoop] {
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx") {
                return &[ReadLoop::Wide, ReadLoop::Paced];
            }
            &[ReadLoop::Wide]
        }

        /// The loop's name in the JSON and text output.
        pub fn name(self) -> &'static str {
            match self {
                ReadLoop::Wide => "wide",
                ReadLoop::Paced => "paced",
            }
        }
    }

    /// The sum of `a` through loop `how`.
    pub fn read_with(a: &[f64], how: ReadLoop) -> f64 {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx") {
            // SAFETY: AVX is present (checked just above).
            return unsafe {
                match how {
                    ReadLoop::Wide => x86::read_avx(a),
                    ReadLoop::Paced => x86::read_paced_avx(a),
                }
            };
        }
        let _ = how;
        portable_sum(a)
    }

    /// Fills `dst` with `v`: the write-bandwidth ceiling. With `nt`, through
    /// non-temporal stores (straight to memory, no read for ownership), else through
    /// ordinary stores; AVX where the CPU has it, SSE2 (non-temporal) or a plain
    /// fill otherwise.
    pub fn write(dst: &mut [f64], v: f64, nt: bool) {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx") {
                // SAFETY: AVX is present (checked just above).
                unsafe { x86::write_avx(dst, v, nt) };
            } else if nt {
                x86::combine_sse2(dst, &[], v, None, 0.0, true);
            } else {
                dst.fill(v);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = nt;
            dst.fill(v);
        }
    }

    /// `dst[j] = x[j] * p + y[j] * q` (`y` optional) through non-temporal stores
    /// where the architecture has them.
    pub fn combine_nt(dst: &mut [f64], x: &[f64], p: f64, y: Option<&[f64]>, q: f64) {
        #[cfg(target_arch = "x86_64")]
        x86::combine_sse2(dst, x, p, y, q, false);
        #[cfg(not(target_arch = "x86_64"))]
        for k in 0..dst.len() {
            dst[k] = x[k] * p + y.map_or(0.0, |y| y[k] * q);
        }
    }

    /// Eight accumulators, so the compiler vectorises it without AVX.
    pub fn portable_sum(a: &[f64]) -> f64 {
        let mut acc = [0.0f64; 8];
        let chunks = a.chunks_exact(8);
        let rest: f64 = chunks.remainder().iter().sum();
        for c in chunks {
            for k in 0..8 {
                acc[k] += c[k];
            }
        }
        acc.iter().sum::<f64>() + rest
    }

    /// Doubles the read and write loops move per step: two cache lines.
    pub const STEP: usize = 16;

    /// The paced read's accumulator slots, each four doubles: one step of the paced
    /// loop reads `4 * PACED_SLOTS` doubles (four cache lines).
    pub const PACED_SLOTS: usize = 8;

    #[cfg(target_arch = "x86_64")]
    mod x86 {
        use std::arch::x86_64::{
            __m256d, _mm256_add_pd, _mm256_loadu_pd, _mm256_set1_pd, _mm256_setzero_pd,
            _mm256_storeu_pd, _mm256_stream_pd, _mm_add_pd, _mm_loadu_pd, _mm_mul_pd, _mm_set1_pd,
            _mm_sfence, _mm_stream_pd,
        };

        use super::{PACED_SLOTS, STEP};

        /// The first index from which `p.add(j)` is aligned to `bytes`, at most `n`.
        fn aligned_from(p: *const f64, n: usize, bytes: usize) -> usize {
            (p.align_offset(bytes)).min(n)
        }

        /// # Safety
        /// The CPU must support AVX.
        #[target_feature(enable = "avx")]
        pub unsafe fn read_avx(a: &[f64]) -> f64 {
            let (p, whole) = (a.as_ptr(), a.len() / STEP * STEP);
            let mut acc = [_mm256_setzero_pd(); STEP / 4];
            let mut j = 0;
            while j < whole {
                for (k, acc) in acc.iter_mut().enumerate() {
                    // SAFETY: j + 4k + 4 <= j + STEP <= whole <= a.len().
                    let v = unsafe { _mm256_loadu_pd(p.add(j + 4 * k)) };
                    *acc = _mm256_add_pd(*acc, v);
                }
                j += STEP;
            }
            total(&acc) + a[whole..].iter().sum::<f64>()
        }

        /// The sum of every lane of every accumulator.
        #[target_feature(enable = "avx")]
        fn total(acc: &[__m256d]) -> f64 {
            let mut lanes = [0.0f64; 4];
            let sum = acc
                .iter()
                .fold(_mm256_setzero_pd(), |s, a| _mm256_add_pd(s, *a));
            // SAFETY: `lanes` holds four doubles.
            unsafe { _mm256_storeu_pd(lanes.as_mut_ptr(), sum) };
            lanes.iter().sum()
        }

        /// The paced sum: every 32-byte load is added to its slot's accumulator,
        /// which is loaded from and stored back to memory around the add, so the
        /// loop's pace is set by store-to-load forwarding, not by how far ahead
        /// the core can issue loads. Written in assembly so that no compiler keeps
        /// the slots in registers.
        ///
        /// # Safety
        /// The CPU must support AVX.
        #[target_feature(enable = "avx")]
        pub unsafe fn read_paced_avx(a: &[f64]) -> f64 {
            const STEP_DOUBLES: usize = 4 * PACED_SLOTS;
            let whole = a.len() / STEP_DOUBLES * STEP_DOUBLES;
            let mut slots = [_mm256_setzero_pd(); PACED_SLOTS];
            if whole > 0 {
                let p = a.as_ptr();
                // SAFETY: `whole <= a.len()`, so `end` is at most one past the slice.
                let end = unsafe { p.add(whole) };
                // SAFETY: the loop reads [p, end), whole steps of 32 doubles inside
                // `a` (whole > 0, a multiple of 32), through unaligned-tolerant VEX
                // loads; it loads and stores only the eight 32-byte slots of
                // `slots` (an array of __m256d, so 32-byte aligned for vmovapd);
                // it pushes nothing and uses no red zone (`nostack`: `slots`, on
                // this function's stack, is reached only through `s`), and it
                // clobbers only the flags, `t` and `p` (declared).
                unsafe {
                    std::arch::asm!(
                        "2:",
                        "vmovapd {t}, ymmword ptr [{s}]",
                        "vaddpd {t}, {t}, ymmword ptr [{p}]",
                        "vmovapd ymmword ptr [{s}], {t}",
                        "vmovapd {t}, ymmword ptr [{s} + 32]",
                        "vaddpd {t}, {t}, ymmword ptr [{p} + 32]",
                        "vmovapd ymmword ptr [{s} + 32], {t}",
                        "vmovapd {t}, ymmword ptr [{s} + 64]",
                        "vaddpd {t}, {t}, ymmword ptr [{p} + 64]",
                        "vmovapd ymmword ptr [{s} + 64], {t}",
                        "vmovapd {t}, ymmword ptr [{s} + 96]",
                        "vaddpd {t}, {t}, ymmword ptr [{p} + 96]",
                        "vmovapd ymmword ptr [{s} + 96], {t}",
                        "vmovapd {t}, ymmword ptr [{s} + 128]",
                        "vaddpd {t}, {t}, ymmword ptr [{p} + 128]",
                        "vmovapd ymmword ptr [{s} + 128], {t}",
                        "vmovapd {t}, ymmword ptr [{s} + 160]",
                        "vaddpd {t}, {t}, ymmword ptr [{p} + 160]",
                        "vmovapd ymmword ptr [{s} + 160], {t}",
                        "vmovapd {t}, ymmword ptr [{s} + 192]",
                        "vaddpd {t}, {t}, ymmword ptr [{p} + 192]",
                        "vmovapd ymmword ptr [{s} + 192], {t}",
                        "vmovapd {t}, ymmword ptr [{s} + 224]",
                        "vaddpd {t}, {t}, ymmword ptr [{p} + 224]",
                        "vmovapd ymmword ptr [{s} + 224], {t}",
                        "add {p}, 256",
                        "cmp {p}, {e}",
                        "jb 2b",
                        p = inout(reg) p => _,
                        e = in(reg) end,
                        s = in(reg) slots.as_mut_ptr(),
                        t = out(ymm_reg) _,
                        options(nostack),
                    );
                }
            }
            total(&slots) + a[whole..].iter().sum::<f64>()
        }

        /// # Safety
        /// The CPU must support AVX.
        #[target_feature(enable = "avx")]
        pub unsafe fn write_avx(dst: &mut [f64], v: f64, nt: bool) {
            let (p, n) = (dst.as_mut_ptr(), dst.len());
            let head = aligned_from(p, n, 32);
            dst[..head].fill(v);
            let x: __m256d = _mm256_set1_pd(v);
            let mut j = head;
            while j + STEP <= n {
                for k in 0..STEP / 4 {
                    // SAFETY: p + j is 32-byte aligned (j starts at the aligned head
                    // and steps by STEP doubles), and j + 4k + 4 <= j + STEP <= n.
                    unsafe {
                        if nt {
                            _mm256_stream_pd(p.add(j + 4 * k), x);
                        } else {
                            _mm256_storeu_pd(p.add(j + 4 * k), x);
                        }
                    }
                }
                j += STEP;
            }
            if nt {
                _mm_sfence();
            }
            dst[j..].fill(v);
        }

        /// `dst[j] = x[j] * p + y[j] * q`, or `v` everywhere when `fill` (then `x`
        /// and `y` are unused), through SSE2 streaming stores.
        pub fn combine_sse2(
            dst: &mut [f64],
            x: &[f64],
            p: f64,
            y: Option<&[f64]>,
            q: f64,
            fill: bool,
        ) {
            let n = dst.len();
            assert!(fill || (x.len() >= n && y.is_none_or(|y| y.len() >= n)));
            let at = |k: usize| {
                if fill {
                    p
                } else {
                    x[k] * p + y.map_or(0.0, |y| y[k] * q)
                }
            };
            let head = aligned_from(dst.as_ptr(), n, 16);
            let d = dst.as_mut_ptr();
            // SAFETY: SSE2 is part of x86_64; d + j is 16-byte aligned from `head` on
            // (steps of 2 doubles); j + 2 <= n, and x and y hold at least n doubles
            // (asserted) whenever they are read.
            unsafe {
                for k in 0..head {
                    *d.add(k) = at(k);
                }
                let (pv, qv) = (_mm_set1_pd(p), _mm_set1_pd(q));
                let mut j = head;
                while j + 2 <= n {
                    let v = if fill {
                        pv
                    } else {
                        let mut v = _mm_mul_pd(pv, _mm_loadu_pd(x.as_ptr().add(j)));
                        if let Some(y) = y {
                            v = _mm_add_pd(v, _mm_mul_pd(qv, _mm_loadu_pd(y.as_ptr().add(j))));
                        }
                        v
                    };
                    _mm_stream_pd(d.add(j), v);
                    j += 2;
                }
                _mm_sfence();
                for k in j..n {
                    *d.add(k) = at(k);
                }
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn read_and_write_cover_every_length_and_alignment() {
            let base: Vec<f64> = (0..2000).map(|i| (i % 7) as f64).collect();
            for start in [0, 1, 3] {
                for len in [0, 1, 15, 16, 127, 128, 129, 1000, 1997] {
                    let a = &base[start..start + len];
                    let want: f64 = a.iter().sum();
                    assert_eq!(read(a), want, "read start {start} len {len}");
                    for how in ReadLoop::available() {
                        assert_eq!(read_with(a, *how), want, "{how:?} start {start} len {len}");
                    }
                    assert_eq!(portable_sum(a), want);
                    for nt in [false, true] {
                        let mut d = vec![1.0; 2000];
                        write(&mut d[start..start + len], 0.25, nt);
                        assert!(d[start..start + len].iter().all(|v| *v == 0.25));
                        assert!(d[..start]
                            .iter()
                            .chain(&d[start + len..])
                            .all(|v| *v == 1.0));
                    }
                    let mut e = vec![0.0; len];
                    combine_nt(&mut e, a, 2.0, Some(a), 3.0);
                    assert!(
                        e.iter().zip(a).all(|(e, x)| *e == 5.0 * x),
                        "combine len {len}"
                    );
                }
            }
        }
    }
}
