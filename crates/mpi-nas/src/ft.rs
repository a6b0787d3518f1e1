//! FT over MPI (NPB 3.4.1 ft, the slab decomposition): rank r holds a slab of z
//! planes (`a[z][y][x]`, layout A) for the x and y FFTs, and a slab of y rows
//! (`b[y][z][x]`, layout B) for the z FFTs and the evolution; MPI_Alltoallv
//! transposes between the two. Forward: x, y in A, transpose, z in B. Each
//! iteration: evolve in B, inverse z in B, transpose back, inverse y and x in A,
//! and the checksum points of this rank's planes added up with MPI_Allreduce.
//! The FFTs, initial conditions, evolution factors, checksum points and official
//! verification are the threaded FT's (`scalescope_workloads::npb::ft`).

use std::ops::Range;

use anyhow::bail;
use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::traits::*;
use scalescope_workloads::npb::ft::{fft_axis, Ft, C};
use scalescope_workloads::pool::{chunk, Pool};
use scalescope_workloads::Workload;

use crate::Outcome;

pub fn run(world: &impl Communicator, class: &str, pool: &Pool) -> anyhow::Result<Outcome> {
    let mut ft = Ft::new(class)?;
    let ((nx, ny, nz), niter) = ft.shape();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    if size > ny.min(nz) {
        bail!(
            "FT class {class} over MPI takes at most {} ranks (a plane and a row each), not {size}",
            ny.min(nz)
        );
    }
    let planes: Vec<Range<usize>> = (0..size).map(|r| chunk(nz, size, r, 1)).collect();
    let rows: Vec<Range<usize>> = (0..size).map(|r| chunk(ny, size, r, 1)).collect();
    let (mine_z, mine_y) = (planes[rank].clone(), rows[rank].clone());
    let a_dims = (nx, ny, mine_z.len());
    let b_dims = (nx, nz, mine_y.len());
    let to_b = Transpose::new(nx, planes.clone(), rows.clone(), rank);
    let to_a = Transpose::new(nx, rows, planes, rank);
    let twiddle: Vec<f64> = mine_y
        .clone()
        .flat_map(|y| (0..nz).flat_map(move |z| (0..nx).map(move |x| (x, y, z))))
        .map(|(x, y, z)| ft.twiddle(x, y, z))
        .collect();
    world.barrier();
    let t0 = mpi::time();
    let mut a = ft.initial_planes(mine_z.clone());
    fft_axis(pool, &mut a, a_dims, 0, false)?;
    fft_axis(pool, &mut a, a_dims, 1, false)?;
    let mut u0 = transpose(world, &to_b, &a);
    fft_axis(pool, &mut u0, b_dims, 1, false)?;
    let mut sums = Vec::with_capacity(niter);
    for _ in 0..niter {
        for (v, t) in u0.iter_mut().zip(&twiddle) {
            (v.re, v.im) = (v.re * t, v.im * t);
        }
        let mut b = u0.clone();
        fft_axis(pool, &mut b, b_dims, 1, true)?;
        a = transpose(world, &to_a, &b);
        fft_axis(pool, &mut a, a_dims, 1, true)?;
        fft_axis(pool, &mut a, a_dims, 0, true)?;
        sums.push(checksum(world, &ft, &mine_z, &a));
    }
    let mut seconds = 0.0;
    world.all_reduce_into(&(mpi::time() - t0), &mut seconds, SystemOperation::max());
    let verification = ft.verify_sums(sums, seconds, pool);
    Ok(Outcome {
        verification,
        seconds,
        mops: ft.mops(),
        detail: ft.detail(),
    })
}

/// `src` transposed among every rank with one MPI_Alltoallv.
fn transpose(world: &impl Communicator, t: &Transpose, src: &[C]) -> Vec<C> {
    let (send, send_counts) = t.pack(src);
    let recv_counts = t.recv_counts();
    let (sd, rd) = (displs(&send_counts), displs(&recv_counts));
    let mut recv = vec![0.0; recv_counts.iter().sum::<i32>() as usize];
    {
        let mut into = PartitionMut::new(&mut recv[..], &recv_counts[..], &rd[..]);
        world.all_to_all_varcount_into(
            &Partition::new(&send[..], &send_counts[..], &sd[..]),
            &mut into,
        );
    }
    t.unpack(&recv)
}

fn displs(counts: &[i32]) -> Vec<i32> {
    counts
        .iter()
        .scan(0, |acc, &c| {
            let d = *acc;
            *acc += c;
            Some(d)
        })
        .collect()
}

/// This rank's part of an iteration's checksum (the points in its `planes`),
/// added up over every rank and divided by the number of points.
fn checksum(world: &impl Communicator, ft: &Ft, planes: &Range<usize>, a: &[C]) -> (f64, f64) {
    let ((nx, ny, nz), _) = ft.shape();
    let mut s = [0.0f64; 2];
    for (x, y, z) in ft.checksum_points() {
        if planes.contains(&z) {
            let v = a[((z - planes.start) * ny + y) * nx + x];
            (s[0], s[1]) = (s[0] + v.re, s[1] + v.im);
        }
    }
    let mut total = [0.0f64; 2];
    world.all_reduce_into(&s[..], &mut total[..], SystemOperation::sum());
    let n = (nx * ny * nz) as f64;
    (total[0] / n, total[1] / n)
}

/// A transpose between slabs: the source `[p][q][x]` holds this rank's range of p
/// and all of q; the result `[q][p][x]` this rank's range of q and all of p. Values
/// travel as (re, im) pairs of f64, the blocks in rank order.
struct Transpose {
    nx: usize,
    p: Vec<Range<usize>>,
    q: Vec<Range<usize>>,
    rank: usize,
}

impl Transpose {
    fn new(nx: usize, p: Vec<Range<usize>>, q: Vec<Range<usize>>, rank: usize) -> Transpose {
        Transpose { nx, p, q, rank }
    }

    fn full(ranges: &[Range<usize>]) -> usize {
        ranges.last().map_or(0, |r| r.end)
    }

    /// The blocks for every rank, `[p mine][q theirs][x]` each, and their lengths.
    fn pack(&self, src: &[C]) -> (Vec<f64>, Vec<i32>) {
        let (nx, nq) = (self.nx, Self::full(&self.q));
        let mine = self.p[self.rank].len();
        let mut out = Vec::with_capacity(2 * src.len());
        let mut counts = Vec::with_capacity(self.q.len());
        for theirs in &self.q {
            for pl in 0..mine {
                for v in &src[(pl * nq + theirs.start) * nx..(pl * nq + theirs.end) * nx] {
                    out.extend([v.re, v.im]);
                }
            }
            counts.push((2 * mine * theirs.len() * nx) as i32);
        }
        (out, counts)
    }

    /// The lengths of the blocks every rank sends this one.
    fn recv_counts(&self) -> Vec<i32> {
        let mine = self.q[self.rank].len();
        self.p
            .iter()
            .map(|theirs| (2 * theirs.len() * mine * self.nx) as i32)
            .collect()
    }

    /// The result `[q mine][p][x]` from every rank's block, in rank order.
    fn unpack(&self, recv: &[f64]) -> Vec<C> {
        let (nx, np) = (self.nx, Self::full(&self.p));
        let mine = self.q[self.rank].len();
        let mut out = vec![C::default(); mine * np * nx];
        let mut at = 0;
        for theirs in &self.p {
            for p in theirs.clone() {
                for ql in 0..mine {
                    let row = &mut out[(ql * np + p) * nx..(ql * np + p + 1) * nx];
                    for (x, v) in row.iter_mut().enumerate() {
                        *v = C {
                            re: recv[at + 2 * x],
                            im: recv[at + 2 * x + 1],
                        };
                    }
                    at += 2 * nx;
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four simulated ranks on an uneven grid: every rank's slab packed, the blocks
    /// routed as MPI_Alltoallv would, unpacked, give the transposed grid, and the
    /// way back gives the original.
    #[test]
    fn slabs_transpose_and_back() {
        let (nx, ny, nz, size) = (3, 6, 5, 4);
        let value = |x: usize, y: usize, z: usize| C {
            re: (x + 10 * y + 100 * z) as f64,
            im: -((x * y * z) as f64),
        };
        let planes: Vec<_> = (0..size).map(|r| chunk(nz, size, r, 1)).collect();
        let rows: Vec<_> = (0..size).map(|r| chunk(ny, size, r, 1)).collect();
        let a: Vec<Vec<C>> = planes
            .iter()
            .map(|zs| {
                zs.clone()
                    .flat_map(|z| (0..ny).flat_map(move |y| (0..nx).map(move |x| value(x, y, z))))
                    .collect()
            })
            .collect();
        let route = |from: &[Vec<C>], p: &[Range<usize>], q: &[Range<usize>]| -> Vec<Vec<C>> {
            let t: Vec<_> = (0..size)
                .map(|r| Transpose::new(nx, p.to_vec(), q.to_vec(), r))
                .collect();
            let sent: Vec<_> = (0..size).map(|r| t[r].pack(&from[r])).collect();
            (0..size)
                .map(|d| {
                    let mut recv = Vec::new();
                    for (buf, counts) in &sent {
                        let start = counts[..d].iter().sum::<i32>() as usize;
                        recv.extend_from_slice(&buf[start..start + counts[d] as usize]);
                    }
                    assert_eq!(recv.len() as i32, t[d].recv_counts().iter().sum::<i32>());
                    t[d].unpack(&recv)
                })
                .collect()
        };
        let b = route(&a, &planes, &rows);
        for (r, ys) in rows.iter().enumerate() {
            let want: Vec<C> = ys
                .clone()
                .flat_map(|y| (0..nz).flat_map(move |z| (0..nx).map(move |x| value(x, y, z))))
                .collect();
            assert_eq!(b[r], want, "rank {r}");
        }
        assert_eq!(route(&b, &rows, &planes), a);
    }
}
