//! NAS Parallel Benchmarks FT (NPB 3.4.1 ft.c): the 3-D heat equation solved with
//! FFTs. The complex array `u[z][y][x]` starts as NPB's deviate stream from the seed
//! (real and imaginary parts in turn, x fastest); a forward 3-D FFT (NPB's sign:
//! e^{+i}) is followed by `niter` steps of: multiply by exp(-4 alpha pi^2 |k|^2)
//! (cumulatively), inverse 3-D FFT without normalisation, and a checksum over 1024
//! fixed points divided by the number of points. The checksums are verified against
//! the official values to 1e-12 relative.
//!
//! The FFTs are radix-2 (iterative, in place, per line); lines along x, y and z are
//! shared out among the workers by plane (x, y) or by row (z). Any correct FFT gives
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

use serde::Deserialize;
use serde_json::json;

use super::ep::NPB_JSON;
use super::rand::{next, A, R46};
use crate::pool::{chunk, Pool};
use crate::{Figure, Verification, Workload, WorkloadError};

const SEED: u64 = 314_159_265;
const ALPHA: f64 = 1e-6;

#[derive(Deserialize)]
struct FtReference {
    params: BTreeMap<String, (usize, usize, usize, usize)>,
    epsilon_rel: f64,
    checksums: BTreeMap<String, Vec<(f64, f64)>>,
}

fn reference() -> FtReference {
    let v: serde_json::Value =
        serde_json::from_str(NPB_JSON).expect("the embedded npb.json is valid JSON");
    serde_json::from_value(v["FT"].clone()).expect("the embedded npb.json has the FT section")
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
    #[inline]
    fn sub(self, o: C) -> C {
        C {
            re: self.re - o.re,
            im: self.im - o.im,
        }
    }
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

/// In-place radix-2 FFT of `a` (length a power of two), with `roots[k] =
/// e^{+2 pi i k / n}` for k < n/2; `inverse` uses the conjugate roots.
fn fft_line(a: &mut [C], roots: &[C], inverse: bool) {
    if inverse {
        fft_line_dir::<true>(a, roots)
    } else {
        fft_line_dir::<false>(a, roots)
    }
}

/// [`fft_line`] with the direction fixed at compile time; the first two stages,
/// whose roots are 1 and +-i, without multiplications.
fn fft_line_dir<const INVERSE: bool>(a: &mut [C], roots: &[C]) {
    let n = a.len();
    let mut j = 0;
    for i in 1..n {
        let mut bit = n >> 1;
        while j & bit != 0 {
            j ^= bit;
            bit >>= 1;
        }
        j |= bit;
        if i < j {
            a.swap(i, j);
        }
    }
    for pair in a.chunks_exact_mut(2) {
        let (u, v) = (pair[0], pair[1]);
        pair[0] = u.add(v);
        pair[1] = u.sub(v);
    }
    // The second stage's roots are 1 and i (-i inverse): swaps and signs.
    for quad in a.chunks_exact_mut(4) {
        let (u0, v0, u1, w) = (quad[0], quad[2], quad[1], quad[3]);
        let v1 = if INVERSE {
            C {
                re: w.im,
                im: -w.re,
            }
        } else {
            C {
                re: -w.im,
                im: w.re,
            }
        };
        quad[0] = u0.add(v0);
        quad[2] = u0.sub(v0);
        quad[1] = u1.add(v1);
        quad[3] = u1.sub(v1);
    }
    let mut len = 8;
    while len <= n {
        let (half, step) = (len / 2, n / len);
        for block in a.chunks_exact_mut(len) {
            let (lo, hi) = block.split_at_mut(half);
            for (k, (x, y)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                let w = roots[k * step];
                let w = if INVERSE {
                    C {
                        re: w.re,
                        im: -w.im,
                    }
                } else {
                    w
                };
                let (u, v) = (*x, y.mul(w));
                *x = u.add(v);
                *y = u.sub(v);
            }
        }
        len *= 2;
    }
}

fn roots(n: usize) -> Vec<C> {
    (0..n / 2)
        .map(|k| {
            let t = 2.0 * PI * k as f64 / n as f64;
            C {
                re: t.cos(),
                im: t.sin(),
            }
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
            key: "grid".into(),
            detail: format!(
                "{} values for dims {dims:?}, axis {axis}: need nx * ny * nz values and a power-of-two line",
                data.len()
            ),
        });
    }
    fft_axis_raw(pool, GridPtr(data.as_mut_ptr()), dims, axis, inverse);
    Ok(())
}

/// FFTs along one axis of `grid`: `axis` 0 = x, 1 = y, 2 = z. x lines are
/// contiguous and transformed in place; y and z lines are strided, so they are
/// gathered eight adjacent lines at a time (each cache line read serves four
/// complex values), transformed, and scattered back. x and y lines are shared
/// out by plane, z lines by row.
fn fft_axis_raw(
    pool: &Pool,
    grid: GridPtr,
    dims: (usize, usize, usize),
    axis: usize,
    inverse: bool,
) {
    const BLOCK: usize = 8;
    let (nx, ny, nz) = dims;
    let (n, stride) = match axis {
        0 => (nx, 1),
        1 => (ny, nx),
        _ => (nz, nx * ny),
    };
    let r = roots(n);
    pool.broadcast(|w| {
        let t = pool.threads();
        if axis == 0 {
            for k in chunk(nz, t, w, 1) {
                for j in 0..ny {
                    // SAFETY: this x line lies in this worker's plane k only.
                    let line =
                        unsafe { std::slice::from_raw_parts_mut(grid.at((k * ny + j) * nx), nx) };
                    fft_line(line, &r, inverse);
                }
            }
            return;
        }
        // First elements of the blocks this worker owns.
        let blocks: Vec<usize> = if axis == 1 {
            chunk(nz, t, w, 1)
                .flat_map(|k| (0..nx).step_by(BLOCK).map(move |i| k * nx * ny + i))
                .collect()
        } else {
            chunk(ny, t, w, 1)
                .flat_map(|j| (0..nx).step_by(BLOCK).map(move |i| j * nx + i))
                .collect()
        };
        let mut buf = vec![C::default(); BLOCK * n];
        for first in blocks {
            let width = BLOCK.min(nx - first % nx);
            for s in 0..n {
                for b in 0..width {
                    // SAFETY: the block's lines belong to this worker alone.
                    buf[b * n + s] = unsafe { *grid.at(first + b + s * stride) };
                }
            }
            for b in 0..width {
                fft_line(&mut buf[b * n..(b + 1) * n], &r, inverse);
            }
            for s in 0..n {
                for b in 0..width {
                    // SAFETY: as above.
                    unsafe { *grid.at(first + b + s * stride) = buf[b * n + s] };
                }
            }
        }
    });
}

/// The FT workload at one class.
pub struct Ft {
    class: String,
    nx: usize,
    ny: usize,
    nz: usize,
    niter: usize,
    u0: Grid,
    u1: Grid,
    twiddle: Vec<f64>,
    sums: Vec<(f64, f64)>,
    seconds: f64,
}

impl Ft {
    /// # Errors
    /// [`WorkloadError::BadParam`] for a class without official values.
    pub fn new(class: &str) -> Result<Ft, WorkloadError> {
        let r = reference();
        let (nx, ny, nz, niter) = *r.params.get(class).ok_or_else(|| WorkloadError::BadParam {
            key: "class".into(),
            detail: format!(
                "`{class}` is not one of {}",
                r.params.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        })?;
        Ok(Ft {
            class: class.into(),
            nx,
            ny,
            nz,
            niter,
            u0: Grid { data: Vec::new() },
            u1: Grid { data: Vec::new() },
            twiddle: Vec::new(),
            sums: Vec::new(),
            seconds: 0.0,
        })
    }

    /// From sweep parameters: `class` (default S).
    ///
    /// # Errors
    /// [`WorkloadError::BadParam`] naming the parameter.
    pub fn from_params(params: &BTreeMap<String, String>) -> Result<Ft, WorkloadError> {
        if let Some(k) = params.keys().find(|k| k.as_str() != "class") {
            return Err(WorkloadError::BadParam {
                key: k.clone(),
                detail: "unknown (ft takes class)".into(),
            });
        }
        Ft::new(params.get("class").map(String::as_str).unwrap_or("S"))
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

    /// Initial conditions: deviate 2e+1 and 2e+2 of the stream for element e, filled
    /// plane by plane by the workers that own the planes.
    fn initial_conditions(&self, pool: &Pool, grid: GridPtr) {
        let (nx, ny, nz) = (self.nx, self.ny, self.nz);
        pool.broadcast(|w| {
            let planes = chunk(nz, pool.threads(), w, 1);
            let first = planes.start * nx * ny;
            deviates(nx * ny, planes, |e, v| {
                // SAFETY: element e lies in this worker's planes.
                unsafe { *grid.at(first + e) = v };
            });
        });
    }

    /// The initial conditions of `planes` (z), as a slab `[z][y][x]`.
    pub fn initial_planes(&self, planes: Range<usize>) -> Vec<C> {
        let mut slab = Vec::with_capacity(planes.len() * self.nx * self.ny);
        deviates(self.nx * self.ny, planes, |_, v| slab.push(v));
        slab
    }

    fn fft3(&self, pool: &Pool, grid: GridPtr, inverse: bool) {
        let order: [usize; 3] = if inverse { [2, 1, 0] } else { [0, 1, 2] };
        for axis in order {
            fft_axis_raw(pool, grid, (self.nx, self.ny, self.nz), axis, inverse);
        }
    }

    /// exp(-4 alpha pi^2 (i'^2 + j'^2 + k'^2)), i' the signed frequency of i.
    pub fn twiddle(&self, x: usize, y: usize, z: usize) -> f64 {
        let f = |i: usize, n: usize| ((i + n / 2) % n) as i64 - (n / 2) as i64;
        let (a, b, c) = (f(x, self.nx), f(y, self.ny), f(z, self.nz));
        (-4.0 * ALPHA * PI * PI * (a * a + b * b + c * c) as f64).exp()
    }

    /// The twiddle factor of every grid point (NPB's compute_indexmap) into
    /// `self.twiddle` (allocated by `prepare`), each worker writing its own planes.
    fn index_map(&mut self, pool: &Pool) {
        let (nx, ny, nz, t) = (self.nx, self.ny, self.nz, pool.threads());
        let mut tw = std::mem::take(&mut self.twiddle);
        let mut rest = &mut tw[..];
        let mut parts = Vec::with_capacity(t);
        for w in 0..t {
            let (part, tail) = rest.split_at_mut(chunk(nz, t, w, 1).len() * nx * ny);
            parts.push(std::sync::Mutex::new(part));
            rest = tail;
        }
        pool.broadcast(|w| {
            let mut part = parts[w].lock().unwrap_or_else(|e| e.into_inner());
            let planes = chunk(nz, t, w, 1);
            let points =
                planes.flat_map(|k| (0..ny).flat_map(move |j| (0..nx).map(move |i| (i, j, k))));
            for (v, (i, j, k)) in part.iter_mut().zip(points) {
                *v = self.twiddle(i, j, k);
            }
        });
        drop(parts);
        self.twiddle = tw;
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
        let (nx, ny, _) = (self.nx, self.ny, self.nz);
        let mut s = C::default();
        for (q, r, t) in self.checksum_points() {
            s = s.add(self.u1.data[(t * ny + r) * nx + q]);
        }
        let n = self.total() as f64;
        (s.re / n, s.im / n)
    }
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
        for g in [&mut self.u0, &mut self.u1] {
            g.data = Vec::with_capacity(n);
            let ptr = GridPtr(g.data.as_mut_ptr());
            let (nx, ny, nz) = (self.nx, self.ny, self.nz);
            pool.broadcast(|w| {
                for e in chunk(nz, pool.threads(), w, 1).start * nx * ny
                    ..chunk(nz, pool.threads(), w, 1).end * nx * ny
                {
                    // SAFETY: within capacity; each worker writes its own planes.
                    unsafe { ptr.at(e).write(C::default()) };
                }
            });
            // SAFETY: every element 0..n was written above.
            unsafe { g.data.set_len(n) };
        }
        // Each worker first-touches its planes of the twiddle factors here, as it
        // did the grids' (the timed run computes them all again).
        self.twiddle = vec![0.0; n];
        self.index_map(pool);
        Ok(())
    }

    /// Timed as NPB times FT (T_TOTAL): the index map, the initial conditions, the
    /// first forward FFT and the iterations.
    fn run(&mut self, pool: &Pool) -> (f64, Vec<Figure>) {
        let t0 = Instant::now();
        self.index_map(pool);
        let (u0, u1) = (
            GridPtr(self.u0.data.as_mut_ptr()),
            GridPtr(self.u1.data.as_mut_ptr()),
        );
        self.initial_conditions(pool, u1);
        self.fft3(pool, u1, false);
        self.sums.clear();
        let nz = self.nz;
        let plane = self.nx * self.ny;
        // u0 = u1, each worker copying its own planes (a serial copy of the whole
        // grid would leave the other workers idle).
        pool.broadcast(|w| {
            let planes = chunk(nz, pool.threads(), w, 1);
            for e in planes.start * plane..planes.end * plane {
                // SAFETY: element e lies in this worker's planes of both grids, and
                // the two grids are distinct allocations.
                unsafe { *u0.at(e) = *u1.at(e) };
            }
        });
        for _ in 0..self.niter {
            // evolve: u0 *= twiddle (cumulatively), u1 = u0.
            let tw = &self.twiddle;
            pool.broadcast(|w| {
                let planes = chunk(nz, pool.threads(), w, 1);
                let range = planes.start * plane..planes.end * plane;
                for (e, t) in range.clone().zip(&tw[range]) {
                    // SAFETY: element e lies in this worker's planes of both grids.
                    unsafe {
                        let v = *u0.at(e);
                        let v = C {
                            re: v.re * t,
                            im: v.im * t,
                        };
                        *u0.at(e) = v;
                        *u1.at(e) = v;
                    }
                }
            });
            self.fft3(pool, u1, true);
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
        let r = reference();
        let want = &r.checksums[&self.class];
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

    fn detail(&self) -> serde_json::Value {
        json!({"class": self.class, "nx": self.nx, "ny": self.ny, "nz": self.nz, "niter": self.niter, "checksums": self.sums, "seconds": self.seconds, "mops": self.mops()})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::pool::test_pool as pool;

    #[test]
    fn fft_matches_the_definition() {
        for n in [2, 4, 8, 16] {
            let x: Vec<C> = (0..n)
                .map(|i| C {
                    re: (i as f64).sin(),
                    im: (i as f64 * 0.3).cos(),
                })
                .collect();
            let mut a = x.clone();
            fft_line(&mut a, &roots(n), false);
            for (k, got) in a.iter().enumerate() {
                let mut want = C::default();
                for (j, v) in x.iter().enumerate() {
                    let t = 2.0 * PI * (j * k) as f64 / n as f64;
                    want = want.add(v.mul(C {
                        re: t.cos(),
                        im: t.sin(),
                    }));
                }
                assert!((got.re - want.re).abs() < 1e-12 && (got.im - want.im).abs() < 1e-12);
            }
            fft_line(&mut a, &roots(n), true);
            for (got, want) in a.iter().zip(&x) {
                assert!((got.re / n as f64 - want.re).abs() < 1e-12);
                assert!((got.im / n as f64 - want.im).abs() < 1e-12);
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
