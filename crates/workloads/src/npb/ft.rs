//! NAS Parallel Benchmarks FT (NPB 3.4.1 ft.c): the 3-D heat equation solved with
//! FFTs. The complex array `u[z][y][x]` starts as NPB's deviate stream from the seed
//! (real and imaginary parts in turn, x fastest); a forward 3-D FFT (NPB's sign:
//! e^{+i}) is followed by `niter` steps of: multiply by exp(-4 alpha pi^2 |k|^2)
//! (cumulatively), inverse 3-D FFT without normalisation, and a checksum over 1024
//! fixed points divided by the number of points. The checksums are verified against
//! the official values to 1e-12 relative.
//!
//! The FFTs are radix-2 (iterative, decimation in time), on blocks of eight lines
//! at once: gathered bit-reversed into a scratch split into real and imaginary
//! parts, one SIMD lane per line (AVX2 where the CPU has it), and written back.
//! Each worker takes its z planes through initial conditions (or the inverse y
//! FFTs) and the x and y FFTs while the plane is in cache, then its y rows through
//! the z FFTs, whose gather also applies the evolve factors. Any correct FFT gives
//! NPB's values up to rounding far below the tolerance.
//!
//! The pieces a distributed FT needs (crates/mpi-nas: slabs of planes, transposed
//! by MPI all-to-all) are public: [`Ft::initial_planes`], [`fft_axis`] on a slab,
//! [`Ft::twiddle`], [`Ft::checksum_points`] and [`Ft::verify_sums`], so both
//! versions compute and verify with the same code.

use std::collections::BTreeMap;
use std::f64::consts::PI;
use std::ops::Range;
use std::time::Instant;

use scalescope_model::detail::{Detail, FtDetail};
use serde::Deserialize;

use super::rand::{next, A, R46};
use super::{Class, NpbSettings};
use crate::pool::{chunk, Pool};
use crate::{Figure, Verification, Workload, WorkloadError};
use scalescope_model::setting::Setting;

const SEED: u64 = 314_159_265;
const ALPHA: f64 = 1e-6;

#[derive(Deserialize)]
struct FtReference {
    params: BTreeMap<String, (usize, usize, usize, usize)>,
    epsilon_rel: f64,
    checksums: BTreeMap<String, Vec<(f64, f64)>>,
}

/// The official values of FT, from the embedded npb.json.
///
/// # Errors
/// [`WorkloadError::Reference`] if the embedded file lacks them (a build with a
/// broken fixture).
fn reference() -> Result<FtReference, WorkloadError> {
    super::reference_section("FT")
}

/// A complex number of the grid.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct C {
    pub re: f64,
    pub im: f64,
}

impl C {
    #[inline]
    fn add(self, o: C) -> C {
        C {
            re: self.re + o.re,
            im: self.im + o.im,
        }
    }
    #[cfg(test)]
    #[inline]
    fn mul(self, o: C) -> C {
        C {
            re: self.re * o.re - self.im * o.im,
            im: self.re * o.im + self.im * o.re,
        }
    }
}

/// The complex array, shared by workers that each touch disjoint lines.
struct Grid {
    data: Vec<C>,
}

/// A raw view for the workers.
#[derive(Clone, Copy)]
struct GridPtr(*mut C);
// SAFETY: workers write disjoint lines of the grid (partitioned by plane or row) and
// the broadcast completes before the grid is used otherwise.
unsafe impl Send for GridPtr {}
// SAFETY: as above.
unsafe impl Sync for GridPtr {}

impl GridPtr {
    /// Element `e` (a method, so closures capture the Sync wrapper, not the field).
    ///
    /// # Safety
    /// `e` must be inside the grid and touched by no other worker meanwhile.
    #[inline]
    unsafe fn at(self, e: usize) -> *mut C {
        // SAFETY: in bounds per the caller's contract.
        unsafe { self.0.add(e) }
    }
}

/// Lines transformed together, one per SIMD lane.
const W: usize = 8;

/// One block of up to `W` lines: element s of line b at `first + b * line + s *
/// elem`; lanes from `width` on are padding.
#[derive(Clone, Copy)]
struct Lines {
    first: usize,
    line: usize,
    elem: usize,
    width: usize,
}

/// A worker's scratch for lines of length n: a block's real and imaginary parts
/// (element s of lane b at `[s][b]`, so every butterfly is the same arithmetic on
/// `W` lanes, which vectorises), the bit-reversal permutation and the roots
/// e^{+2 pi i k / n}, k < n/2.
struct Scratch {
    re: Vec<[f64; W]>,
    im: Vec<[f64; W]>,
    rev: Vec<usize>,
    roots: Vec<C>,
}

impl Scratch {
    fn new(n: usize) -> Scratch {
        let bits = n.trailing_zeros();
        let rev = (0..n)
            .map(|s| match bits {
                0 => 0,
                _ => s.reverse_bits() >> (usize::BITS - bits),
            })
            .collect();
        let roots = (0..n / 2)
            .map(|k| {
                let t = 2.0 * PI * k as f64 / n as f64;
                C {
                    re: t.cos(),
                    im: t.sin(),
                }
            })
            .collect();
        Scratch {
            re: vec![[0.0; W]; n],
            im: vec![[0.0; W]; n],
            rev,
            roots,
        }
    }

    /// Transforms the block `l` of `src` into the same positions of `dst` (which may
    /// be `src`), each value first multiplied by `fs[s] * lane[b]` where `fs` is given
    /// (the evolve factors); `inverse` with the conjugate roots, unnormalised. Built
    /// for AVX2 where the CPU has it (four lanes per instruction instead of two).
    ///
    /// # Safety
    /// The block lies inside both grids and no other worker touches it meanwhile.
    unsafe fn transform(&mut self, io: (GridPtr, GridPtr), l: Lines, scale: Scale, inv: bool) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above; the block as the caller's.
            return unsafe { self.transform_avx2(io, l, scale, inv) };
        }
        // SAFETY: as the caller's.
        unsafe { self.body(io, l, scale, inv) }
    }

    /// [`Self::transform`] built for AVX2: the caller checks that the CPU has it.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn transform_avx2(&mut self, io: (GridPtr, GridPtr), l: Lines, scale: Scale, inv: bool) {
        // SAFETY: as the caller's.
        unsafe { self.body(io, l, scale, inv) }
    }

    /// Gathers the block bit-reversed (asking for strided rows 16 ahead, which the
    /// hardware prefetchers do not foresee), transforms, scatters.
    ///
    /// # Safety
    /// As [`Self::transform`].
    #[inline(always)]
    unsafe fn body(&mut self, (src, dst): (GridPtr, GridPtr), l: Lines, scale: Scale, inv: bool) {
        let ahead = 16 * l.elem;
        for (s, &r) in self.rev.iter().enumerate() {
            let p = l.first + s * l.elem;
            if l.line == 1 {
                for e in [p + ahead, p + ahead + W - 1] {
                    prefetch(src, e);
                    prefetch(dst, e);
                }
            }
            let (f, lane) = scale.map_or((1.0, &[1.0; W]), |(fs, lane)| (fs[s], lane));
            let row: [C; W] = match l.width == W {
                // SAFETY: inside the block, per the caller's contract.
                true => std::array::from_fn(|b| unsafe { *src.at(p + b * l.line) }),
                false => std::array::from_fn(|b| match b < l.width {
                    // SAFETY: as above; the lanes past `width` are left zero.
                    true => unsafe { *src.at(p + b * l.line) },
                    false => C::default(),
                }),
            };
            self.re[r] = std::array::from_fn(|b| row[b].re * (f * lane[b]));
            self.im[r] = std::array::from_fn(|b| row[b].im * (f * lane[b]));
        }
        match inv {
            true => self.stages::<true>(),
            false => self.stages::<false>(),
        }
        for (s, (re, im)) in self.re.iter().zip(&self.im).enumerate() {
            let p = l.first + s * l.elem;
            for b in 0..l.width {
                // SAFETY: as above.
                unsafe {
                    *dst.at(p + b * l.line) = C {
                        re: re[b],
                        im: im[b],
                    }
                };
            }
        }
    }

    /// Radix-2 decimation in time on every lane, input in bit-reversed order,
    /// output in natural order.
    #[inline(always)]
    fn stages<const INVERSE: bool>(&mut self) {
        let n = self.re.len();
        let mut half = 1;
        while half < n {
            let step = n / (2 * half);
            let blocks = self.re.chunks_exact_mut(2 * half);
            for (br, bi) in blocks.zip(self.im.chunks_exact_mut(2 * half)) {
                let ((lr, hr), (li, hi)) = (br.split_at_mut(half), bi.split_at_mut(half));
                let rows = lr.iter_mut().zip(hr).zip(li.iter_mut().zip(hi));
                for (k, ((ar, br), (ai, bi))) in rows.enumerate() {
                    let w = self.roots[k * step];
                    let wi = if INVERSE { -w.im } else { w.im };
                    // Whole rows in and out, so the lanes vectorise.
                    let (xr, xi, yr, yi) = (*ar, *ai, *br, *bi);
                    let vr: [f64; W] = std::array::from_fn(|l| yr[l] * w.re - yi[l] * wi);
                    let vi: [f64; W] = std::array::from_fn(|l| yr[l] * wi + yi[l] * w.re);
                    *ar = std::array::from_fn(|l| xr[l] + vr[l]);
                    *ai = std::array::from_fn(|l| xi[l] + vi[l]);
                    *br = std::array::from_fn(|l| xr[l] - vr[l]);
                    *bi = std::array::from_fn(|l| xi[l] - vi[l]);
                }
            }
            half *= 2;
        }
    }
}

/// Per-row and per-lane factors applied while gathering a block.
type Scale<'a> = Option<(&'a [f64], &'a [f64; W])>;

/// Asks for the cache line holding element `e` of `grid`; a prefetch past the
/// grid's end is harmless (it never faults).
#[inline(always)]
fn prefetch(grid: GridPtr, e: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of x86-64; a prefetch reads nothing and never faults, and
    // the address is computed without dereferencing it.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(grid.0.wrapping_add(e) as *const i8)
    };
}

/// The blocks of lines along `axis` (0 = x, 1 = y, 2 = z) of a grid `[z][y][x]` of
/// `dims`, in planes `part` (x and y) or rows `part` (z).
fn blocks(dims: (usize, usize, usize), axis: usize, part: Range<usize>) -> Vec<Lines> {
    let (nx, ny, _) = dims;
    let (across, line, elem) = match axis {
        0 => (ny, nx, 1),
        1 => (nx, 1, nx),
        _ => (nx, 1, nx * ny),
    };
    let step = if axis == 2 { nx } else { nx * ny };
    part.flat_map(|p| {
        (0..across).step_by(W).map(move |a| Lines {
            first: p * step + a * line,
            line,
            elem,
            width: W.min(across - a),
        })
    })
    .collect()
}

/// FFTs along one axis of a grid `data[z][y][x]` of `dims` (nx, ny, nz), with the
/// pool's workers: `axis` 0 = x, 1 = y, 2 = z; `inverse` without normalisation.
/// A slab of planes is such a grid (its own nz), and so is a transposed slab.
///
/// # Errors
/// [`WorkloadError::BadParam`] when `data` is not nx * ny * nz long or a length is
/// not a power of two.
pub fn fft_axis(
    pool: &Pool,
    data: &mut [C],
    dims: (usize, usize, usize),
    axis: usize,
    inverse: bool,
) -> Result<(), WorkloadError> {
    let (nx, ny, nz) = dims;
    let n = [nx, ny, nz].get(axis).copied().unwrap_or(0);
    if data.len() != nx * ny * nz || !n.is_power_of_two() {
        return Err(WorkloadError::BadParam {
            setting: Setting::param("grid"),
            detail: format!(
                "{} values for dims {nx}x{ny}x{nz}, axis {axis}: need nx * ny * nz values and a power-of-two line",
                data.len()
            ),
        });
    }
    let grid = GridPtr(data.as_mut_ptr());
    pool.broadcast(|w| {
        let mut sc = Scratch::new(n);
        let part = chunk(if axis == 2 { ny } else { nz }, pool.threads(), w, 1);
        for l in blocks(dims, axis, part) {
            // SAFETY: the block lies in this worker's planes (rows for z) only.
            unsafe { sc.transform((grid, grid), l, None, inverse) };
        }
    });
    Ok(())
}

/// The FT workload at one class.
pub struct Ft {
    class: Class,
    nx: usize,
    ny: usize,
    nz: usize,
    niter: usize,
    u0: Grid,
    u1: Grid,
    sums: Vec<(f64, f64)>,
    seconds: f64,
}

impl Ft {
    /// FT at the class `class` names (`S`, `W`, `A`, `B`, `C`); errors as [`NpbSettings::of`].
    pub fn new(class: &str) -> Result<Ft, WorkloadError> {
        Ft::with(&NpbSettings::of(class)?)
    }

    /// FT with its settings.
    ///
    /// # Errors
    /// [`WorkloadError::Reference`] where the embedded values lack the class.
    pub fn with(settings: &NpbSettings) -> Result<Ft, WorkloadError> {
        let r = reference()?;
        let (nx, ny, nz, niter) = *super::official(&r.params, settings.class, "FT")?;
        Ok(Ft {
            class: settings.class,
            nx,
            ny,
            nz,
            niter,
            u0: Grid { data: Vec::new() },
            u1: Grid { data: Vec::new() },
            sums: Vec::new(),
            seconds: 0.0,
        })
    }

    fn total(&self) -> usize {
        self.nx * self.ny * self.nz
    }

    /// NPB's Mop/s: 1e-6 N (14.8157 + 7.19641 ln N + (5.23518 + 7.21113 ln N) niter) / t.
    pub fn mops(&self) -> f64 {
        let n = self.total() as f64;
        1e-6 * n * (14.8157 + 7.19641 * n.ln() + (5.23518 + 7.21113 * n.ln()) * self.niter as f64)
            / self.seconds
    }

    /// Per worker and plane: the initial conditions (`fill`: deviate 2e+1 and 2e+2
    /// of the stream for element e), then the x and y FFTs (y and x inverse) while
    /// the plane is still in cache.
    fn planes_xy(&self, pool: &Pool, grid: GridPtr, inverse: bool, fill: bool) {
        let dims = (self.nx, self.ny, self.nz);
        let plane = self.nx * self.ny;
        let order = if inverse { [1, 0] } else { [0, 1] };
        pool.broadcast(|w| {
            let mut sc = [Scratch::new(self.nx), Scratch::new(self.ny)];
            for k in chunk(self.nz, pool.threads(), w, 1) {
                if fill {
                    deviates(plane, k..k + 1, |e, v| {
                        // SAFETY: element e of plane k, this worker's plane.
                        unsafe { *grid.at(k * plane + e) = v };
                    });
                }
                for axis in order {
                    for l in blocks(dims, axis, k..k + 1) {
                        // SAFETY: the block lies in plane k, this worker's plane.
                        unsafe { sc[axis].transform((grid, grid), l, None, inverse) };
                    }
                }
            }
        });
    }

    /// The z FFTs from `src` into `dst`, each worker over its rows; inverse after
    /// iteration `t`'s evolve step, fused into the gather: each value times
    /// exp(-4 alpha pi^2 t (i'^2 + j'^2 + k'^2)), i' the signed frequency of i, which
    /// is NPB's twiddle factor to the power t (NPB multiplies u0 by the twiddle once
    /// per iteration and keeps it), built from three per-axis tables (NPB's
    /// compute_indexmap, done here per iteration).
    fn pass_z(&self, pool: &Pool, (src, dst): (GridPtr, GridPtr), t: usize) {
        let (nx, ny, nz) = (self.nx, self.ny, self.nz);
        let table = |n: usize| -> Vec<f64> {
            let ap = -4.0 * ALPHA * PI * PI * t as f64;
            (0..n)
                .map(|i| (ap * freq(i, n).pow(2) as f64).exp())
                .collect()
        };
        let (ex, ey, ez) = (table(nx), table(ny), table(nz));
        pool.broadcast(|w| {
            let mut sc = Scratch::new(nz);
            for l in blocks((nx, ny, nz), 2, chunk(ny, pool.threads(), w, 1)) {
                let (j, i) = (l.first / nx, l.first % nx);
                let lane: [f64; W] = std::array::from_fn(|b| ey[j] * ex.get(i + b).unwrap_or(&0.0));
                let scale = (t > 0).then_some((&ez[..], &lane));
                // SAFETY: the block lies in this worker's rows of both grids.
                unsafe { sc.transform((src, dst), l, scale, t > 0) };
            }
        });
    }

    /// The initial conditions of `planes` (z), as a slab `[z][y][x]`.
    pub fn initial_planes(&self, planes: Range<usize>) -> Vec<C> {
        let mut slab = Vec::with_capacity(planes.len() * self.nx * self.ny);
        deviates(self.nx * self.ny, planes, |_, v| slab.push(v));
        slab
    }

    /// exp(-4 alpha pi^2 (i'^2 + j'^2 + k'^2)), i' the signed frequency of i.
    pub fn twiddle(&self, x: usize, y: usize, z: usize) -> f64 {
        let (a, b, c) = (freq(x, self.nx), freq(y, self.ny), freq(z, self.nz));
        (-4.0 * ALPHA * PI * PI * (a * a + b * b + c * c) as f64).exp()
    }

    /// The 1024 (x, y, z) points whose values, added up and divided by the number
    /// of points, make each iteration's checksum.
    pub fn checksum_points(&self) -> impl Iterator<Item = (usize, usize, usize)> {
        let (nx, ny, nz) = (self.nx, self.ny, self.nz);
        (1..=1024).map(move |j| (j % nx, (3 * j) % ny, (5 * j) % nz))
    }

    /// The grid's (nx, ny, nz) and the number of iterations.
    pub fn shape(&self) -> ((usize, usize, usize), usize) {
        ((self.nx, self.ny, self.nz), self.niter)
    }

    /// Checks a distributed run's checksums (each already divided by the number of
    /// points) against the official values, with the run's time for the Mop/s.
    pub fn verify_sums(
        &mut self,
        sums: Vec<(f64, f64)>,
        seconds: f64,
        pool: &Pool,
    ) -> Verification {
        self.sums = sums;
        self.seconds = seconds;
        self.verify(pool)
    }

    fn checksum(&self) -> (f64, f64) {
        let mut s = C::default();
        for (q, r, t) in self.checksum_points() {
            s = s.add(self.u1.data[(t * self.ny + r) * self.nx + q]);
        }
        let n = self.total() as f64;
        (s.re / n, s.im / n)
    }
}

/// The signed frequency of index i of n: i for i < n/2, i - n from n/2 on.
fn freq(i: usize, n: usize) -> i64 {
    ((i + n / 2) % n) as i64 - (n / 2) as i64
}

/// NPB's deviate stream for `planes` of `plane` elements each: `put(e, value)`
/// with e counted from the first plane's first element.
fn deviates(plane: usize, planes: Range<usize>, mut put: impl FnMut(usize, C)) {
    let mut x = super::rand::jump(SEED, (2 * plane * planes.start) as u64, A);
    for e in 0..planes.len() * plane {
        x = next(x, A);
        let re = x as f64 * R46;
        x = next(x, A);
        put(
            e,
            C {
                re,
                im: x as f64 * R46,
            },
        );
    }
}

impl Workload for Ft {
    fn name(&self) -> &'static str {
        "ft"
    }

    fn primary_figure(&self) -> &'static str {
        "mops"
    }

    /// Allocates the grids; each worker first-touches its own planes.
    fn prepare(&mut self, pool: &Pool) -> Result<(), WorkloadError> {
        let n = self.total();
        // Two grids of 16-byte complex values (class C: 2 x 2 GiB).
        super::fits("FT", self.class, 2 * 16 * n as u64)?;
        for g in [&mut self.u0, &mut self.u1] {
            g.data = Vec::with_capacity(n);
            let ptr = GridPtr(g.data.as_mut_ptr());
            let (nx, ny, nz) = (self.nx, self.ny, self.nz);
            pool.broadcast(|w| {
                let planes = chunk(nz, pool.threads(), w, 1);
                for e in planes.start * nx * ny..planes.end * nx * ny {
                    // SAFETY: within capacity; each worker writes its own planes.
                    unsafe { ptr.at(e).write(C::default()) };
                }
            });
            // SAFETY: every element 0..n was written above.
            unsafe { g.data.set_len(n) };
        }
        Ok(())
    }

    /// Timed as NPB times FT (T_TOTAL): the index map (here per iteration, in
    /// `pass_z`), the initial conditions, the first forward FFT (its z pass
    /// writes u0) and the iterations (evolve fused into the inverse z pass from u0
    /// into u1).
    fn run(&mut self, pool: &Pool) -> (f64, Vec<Figure>) {
        let t0 = Instant::now();
        let (u0, u1) = (
            GridPtr(self.u0.data.as_mut_ptr()),
            GridPtr(self.u1.data.as_mut_ptr()),
        );
        self.planes_xy(pool, u1, false, true);
        self.pass_z(pool, (u1, u0), 0);
        self.sums.clear();
        for t in 1..=self.niter {
            self.pass_z(pool, (u0, u1), t);
            self.planes_xy(pool, u1, true, false);
            self.sums.push(self.checksum());
        }
        self.seconds = t0.elapsed().as_secs_f64();
        (
            self.seconds,
            vec![Figure {
                name: "mops".into(),
                value: self.mops(),
                unit: "Mop/s",
            }],
        )
    }

    fn verify(&self, _pool: &Pool) -> Verification {
        let r = match reference() {
            Ok(r) => r,
            Err(e) => return Verification::Unavailable(e.to_string()),
        };
        let want = match super::official(&r.checksums, self.class, "FT") {
            Ok(w) => w,
            Err(e) => return Verification::Unavailable(e.to_string()),
        };
        let mut worst = 0.0f64;
        for (got, exp) in self.sums.iter().zip(want) {
            let err = ((got.0 - exp.0).powi(2) + (got.1 - exp.1).powi(2)).sqrt()
                / (exp.0 * exp.0 + exp.1 * exp.1).sqrt();
            worst = worst.max(err);
        }
        let passed = self.sums.len() == want.len() && worst <= r.epsilon_rel;
        Verification::check(
            passed,
            format!(
                "class {}: {} of {} checksums computed, largest relative error {worst:.1e} (limit {:e})",
                self.class,
                self.sums.len(),
                want.len(),
                r.epsilon_rel
            ),
        )
    }

    fn detail(&self) -> Detail {
        Detail::Ft(FtDetail {
            class: self.class.to_string(),
            nx: self.nx,
            ny: self.ny,
            nz: self.nz,
            niter: self.niter,
            checksums: self.sums.clone(),
            seconds: self.seconds,
            mops: self.mops(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::pool::test_pool as pool;

    /// Every axis, with blocks of lines both full and partial (9 lines across).
    #[test]
    fn fft_matches_the_definition() {
        for n in [1, 2, 4, 8, 16] {
            for axis in 0..3 {
                let mut dims = [9, 3, 2];
                dims.swap(0, axis);
                dims[axis] = n;
                let dims = (dims[0], dims[1], dims[2]);
                let (nx, ny, nz) = dims;
                let x: Vec<C> = (0..nx * ny * nz)
                    .map(|i| C {
                        re: (i as f64).sin(),
                        im: (i as f64 * 0.3).cos(),
                    })
                    .collect();
                let stride = [1, nx, nx * ny][axis];
                let mut a = x.clone();
                fft_axis(&pool(2), &mut a, dims, axis, false).unwrap();
                for (e, got) in a.iter().enumerate() {
                    let (k, first) = ((e / stride) % n, e - (e / stride) % n * stride);
                    let mut want = C::default();
                    for j in 0..n {
                        let t = 2.0 * PI * (j * k) as f64 / n as f64;
                        let w = C {
                            re: t.cos(),
                            im: t.sin(),
                        };
                        want = want.add(x[first + j * stride].mul(w));
                    }
                    assert!((got.re - want.re).abs() < 1e-12, "{dims:?} {axis} {e}");
                    assert!((got.im - want.im).abs() < 1e-12, "{dims:?} {axis} {e}");
                }
                fft_axis(&pool(1), &mut a, dims, axis, true).unwrap();
                for (got, want) in a.iter().zip(&x) {
                    assert!((got.re / n as f64 - want.re).abs() < 1e-12);
                    assert!((got.im / n as f64 - want.im).abs() < 1e-12);
                }
            }
        }
    }

    #[test]
    fn class_s_verifies_on_one_and_two_workers() {
        for threads in [1, 2] {
            let mut ft = Ft::new("S").unwrap();
            let r = crate::execute(&mut ft, &pool(threads)).unwrap();
            assert!(r.verification.passed(), "{threads}: {}", r.verification);
        }
    }

    #[test]
    fn a_wrong_checksum_fails() {
        let p = pool(1);
        let mut ft = Ft::new("S").unwrap();
        ft.prepare(&p).unwrap();
        ft.run(&p);
        ft.sums[2].0 += 1e-6;
        assert!(!ft.verify(&p).passed());
    }
}
