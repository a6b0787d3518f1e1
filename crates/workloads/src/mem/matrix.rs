//! The NUMA matrices and the latency ladder.
//!
//! Bandwidth: for every (CPU node i, memory node j), one pinned thread per usable PU
//! of node i reads (sums) a buffer bound to node j and first-touched by those same
//! threads; the best of several passes gives GB/s. The passes read through the loop
//! `mem stream`'s sustained read would pick on this cell: both read loops run in
//! interleaved one-pass blocks first ([`super::read_trial`]), the faster kept. The pages' node is read back
//! from `numa_maps`, so a cell whose memory did not land where asked says so.
//! Latency: one thread on node i's first PU chases pointers through a buffer bound
//! to node j, larger than the last-level cache; the best of as many chases as
//! bandwidth passes counts. Every pass and chase is kept, so hop inference can
//! tell a level from the spread of repeated measurements.

use std::time::Instant;

use serde::Serialize;

use scalescope_place::MemPolicy;
use scalescope_topo::{CpuSet, Topology};

use super::buffer::{pages_by_node, MmapBuffer};
use super::chase::{build_cycle, chase, LINE_WORDS};
use super::read_trial::{self, Choice};
use super::vector::{self, ReadLoop};
use crate::pool::{chunk, Pool, SpinBarrier};
use crate::WorkloadError;
use scalescope_model::setting::Setting;

/// What to measure.
#[derive(Debug, Clone)]
pub struct MatrixConfig {
    /// Bytes read per bandwidth cell.
    pub bandwidth_bytes: usize,
    /// Passes per bandwidth cell and chases per latency cell (the best counts).
    pub passes: usize,
    /// Bytes chased per latency cell.
    pub latency_bytes: usize,
    /// Loads timed per latency cell.
    pub latency_steps: usize,
    /// Threads per CPU node for bandwidth (default: every usable PU of the node).
    pub threads_per_node: Option<usize>,
    /// Measure even when the buffers' estimate exceeds the available memory.
    pub force: bool,
}

/// The measured matrices (rows CPU nodes, columns memory nodes): the results
/// crate's type, so the `mem matrix` document carries them as measured.
pub use scalescope_model::mem::NodeMatrix as MemMatrix;

fn io_err(what: &str, e: std::io::Error) -> WorkloadError {
    WorkloadError::Memory {
        what: what.to_string(),
        detail: e.to_string(),
    }
}

/// The memory one cell needs (one buffer at a time, bound to one node), estimated
/// before anything is mapped: refused when it is more than the machine has
/// available, or more than a memory node holds (a buffer bound there could not
/// fit: the kernel would kill the process, not return an error).
fn check_memory(topo: &Topology, cfg: &MatrixConfig) -> Result<(), WorkloadError> {
    // One bandwidth and one latency buffer are mapped at a time; each is bound to
    // one memory node, so the larger must fit the smallest node.
    let total = (cfg.bandwidth_bytes as u64).saturating_add(cfg.latency_bytes as u64);
    let need = cfg.bandwidth_bytes.max(cfg.latency_bytes) as u64;
    let what = format!(
        "mem matrix (buffers of {} MiB bound to each memory node in turn)",
        total >> 20
    );
    crate::budget::check(&what, total, cfg.force)?;
    let smallest = topo
        .numa_nodes
        .iter()
        .filter(|n| n.allowed && n.memory_bytes != Some(0))
        .filter_map(|n| Some((n.id, n.memory_bytes?)))
        .min_by_key(|(_, bytes)| *bytes);
    match smallest {
        Some((id, bytes)) if need > bytes => Err(WorkloadError::param(
            "size",
            format!(
                "a {} MiB buffer does not fit memory node {id} ({} MiB)",
                need >> 20,
                bytes >> 20
            ),
        )),
        _ => Ok(()),
    }
}

/// The read loop for a buffer of `n` doubles: the read-loop trial of `mem stream`
/// ([`read_trial::blocks`], one pass of the buffer per block), or the only loop
/// this CPU has.
fn pick_loop(pool: &Pool, buf: &MmapBuffer, n: usize) -> Choice {
    let loops = ReadLoop::available();
    if loops.len() < 2 {
        return Choice::default();
    }
    let t = pool.threads();
    let barrier = SpinBarrier::new(t);
    let rounds = pool.broadcast(|i| {
        // SAFETY: read-only access to worker i's own chunk; nothing writes now.
        let a = unsafe { buf.range::<f64>(chunk(n, t, i, 8)) };
        read_trial::blocks(a, &barrier, loops, 1)
    });
    // Worker 0's times: it leaves every end barrier after the slowest worker.
    read_trial::choose(loops, buf.len() as f64, 1, &rounds[0])
}

/// One bandwidth cell: every pass's GB/s, the fraction of pages on its memory
/// node, and the read loop the passes went through.
struct Cell {
    passes: Vec<f64>,
    on_node: Option<f64>,
    read_loop: Choice,
}

/// Reads a buffer bound to `node` with the pool's threads, through the read loop
/// a trial on it picks.
fn bandwidth_cell(
    topo: &Topology,
    pool: &Pool,
    node: u32,
    cfg: &MatrixConfig,
) -> Result<Cell, WorkloadError> {
    let buf = MmapBuffer::new(cfg.bandwidth_bytes).map_err(|e| io_err("bandwidth buffer", e))?;
    let policy =
        MemPolicy::Bind(vec![node])
            .resolve(topo)
            .map_err(|e| WorkloadError::BadParam {
                setting: Setting::param("node"),
                detail: e.to_string(),
            })?;
    buf.bind(&policy).map_err(|e| io_err("mbind", e))?;
    let n = buf.len() / 8;
    let t = pool.threads();
    pool.broadcast(|i| {
        // SAFETY: worker i gets only its own chunk (the chunks are disjoint); f64 is
        // valid for zeroed pages.
        unsafe { buf.range_mut::<f64>(chunk(n, t, i, 8)) }.fill(1.0);
    });
    let verified = pages_by_node(buf.addr()).map(|m| {
        let total: u64 = m.values().sum();
        m.get(&node).copied().unwrap_or(0) as f64 / total.max(1) as f64
    });
    let read_loop = pick_loop(pool, &buf, n);
    let mut passes = Vec::with_capacity(cfg.passes.max(1));
    for _ in 0..cfg.passes.max(1) {
        let t0 = Instant::now();
        let sums = pool.broadcast(|i| {
            // SAFETY: read-only access; no worker writes during the pass.
            let a = unsafe { buf.range::<f64>(chunk(n, t, i, 8)) };
            vector::read_with(a, read_loop.chosen)
        });
        passes.push(buf.len() as f64 / t0.elapsed().as_secs_f64() / 1e9);
        std::hint::black_box(sums);
    }
    Ok(Cell {
        passes,
        on_node: verified,
        read_loop,
    })
}

fn best(samples: &[f64], higher_is_better: bool) -> f64 {
    let pick = if higher_is_better { f64::max } else { f64::min };
    samples.iter().copied().reduce(pick).unwrap_or(f64::NAN)
}

/// Latency of dependent loads from `cpu` into a buffer bound to `node`, once per
/// pass.
fn latency_cell(
    topo: &Topology,
    cpu: u32,
    node: u32,
    cfg: &MatrixConfig,
) -> Result<Vec<f64>, WorkloadError> {
    let pool = Pool::new(&[[cpu].into_iter().collect()], None)?;
    let policy =
        MemPolicy::Bind(vec![node])
            .resolve(topo)
            .map_err(|e| WorkloadError::BadParam {
                setting: Setting::param("node"),
                detail: e.to_string(),
            })?;
    let buf = MmapBuffer::new(cfg.latency_bytes).map_err(|e| io_err("latency buffer", e))?;
    buf.bind(&policy).map_err(|e| io_err("mbind", e))?;
    let lines = buf.len() / 64;
    let passes = cfg.passes.max(1);
    Ok(pool
        .broadcast(|_| {
            // SAFETY: the only thread touching the buffer.
            let words = unsafe { buf.range_mut::<u64>(0..buf.count::<u64>()) };
            build_cycle(words, lines, 0x5ca1_e5c0 + u64::from(node));
            (0..passes)
                .map(|_| chase(words, cfg.latency_steps))
                .collect::<Vec<f64>>()
        })
        .swap_remove(0))
}

/// Measures both matrices over the allowed nodes.
///
/// # Errors
/// Pinning, mapping or binding failures.
pub fn measure(topo: &Topology, cfg: &MatrixConfig) -> Result<MemMatrix, WorkloadError> {
    check_memory(topo, cfg)?;
    let cpu_nodes: Vec<&scalescope_topo::NumaNode> = topo
        .numa_nodes
        .iter()
        .filter(|n| n.allowed && n.cpus.intersects(&topo.usable_cpus()))
        .collect();
    let mem_nodes: Vec<u32> = topo
        .numa_nodes
        .iter()
        .filter(|n| n.allowed && n.memory_bytes != Some(0))
        .map(|n| n.id)
        .collect();
    let (mut bw, mut lat) = (Vec::new(), Vec::new());
    let (mut bw_samples, mut lat_samples) = (Vec::new(), Vec::new());
    let mut verified = Vec::new();
    let mut threads = Vec::new();
    let mut loops = Vec::new();
    for src in &cpu_nodes {
        let cpus: Vec<u32> = src.cpus.intersection(&topo.usable_cpus()).iter().collect();
        let take = cfg
            .threads_per_node
            .unwrap_or(cpus.len())
            .clamp(1, cpus.len());
        let sets: Vec<CpuSet> = cpus[..take]
            .iter()
            .map(|c| [*c].into_iter().collect())
            .collect();
        let pool = Pool::new(&sets, None)?;
        threads.push(take);
        let (mut bsrow, mut lsrow, mut vrow) = (Vec::new(), Vec::new(), Vec::new());
        let mut lrow = Vec::new();
        for &dst in &mem_nodes {
            let cell = bandwidth_cell(topo, &pool, dst, cfg)?;
            bsrow.push(cell.passes);
            vrow.push(cell.on_node);
            lrow.push(cell.read_loop.typed());
            lsrow.push(latency_cell(topo, cpus[0], dst, cfg)?);
        }
        loops.push(lrow);
        bw.push(bsrow.iter().map(|s| best(s, true)).collect());
        lat.push(lsrow.iter().map(|s| best(s, false)).collect());
        bw_samples.push(bsrow);
        lat_samples.push(lsrow);
        verified.push(vrow);
    }
    let slit: Vec<Vec<u32>> = cpu_nodes
        .iter()
        .map(|src| {
            mem_nodes
                .iter()
                .filter_map(|d| {
                    topo.numa_nodes
                        .iter()
                        .position(|n| n.id == *d)
                        .and_then(|j| src.distances.get(j).copied())
                })
                .collect()
        })
        .filter(|row: &Vec<u32>| row.len() == mem_nodes.len())
        .collect();
    Ok(MemMatrix {
        cpu_nodes: cpu_nodes.iter().map(|n| n.id).collect(),
        memory_nodes: mem_nodes,
        bandwidth_gb_per_s: bw,
        latency_ns: lat,
        bandwidth_samples: bw_samples,
        latency_samples: lat_samples,
        placement_verified: verified,
        slit: if slit.len() == cpu_nodes.len() {
            slit
        } else {
            Vec::new()
        },
        threads_per_node: threads,
        read_loops: loops,
    })
}

/// One rung of the latency ladder.
#[derive(Debug, Clone, Serialize)]
pub struct Rung {
    pub bytes: usize,
    pub ns: f64,
}

/// Working-set sizes from 4 KiB doubling to at least `max_bytes`.
pub fn ladder_sizes(max_bytes: usize) -> Vec<usize> {
    std::iter::successors(Some(4096usize), |s| (*s < max_bytes).then(|| s * 2)).collect()
}

/// Latency against working-set size, from one thread pinned to `cpu`. The
/// largest buffer is estimated against the available memory first (refused past
/// it unless `force`).
///
/// # Errors
/// [`WorkloadError::TooBig`], pinning or mapping failures.
pub fn ladder(
    cpu: u32,
    sizes: &[usize],
    max_steps: usize,
    force: bool,
) -> Result<Vec<Rung>, WorkloadError> {
    let largest = sizes.iter().copied().max().unwrap_or(0) as u64;
    crate::budget::check("the latency ladder's largest buffer", largest, force)?;
    let pool = Pool::new(&[[cpu].into_iter().collect()], None)?;
    sizes
        .iter()
        .map(|&bytes| {
            let buf = MmapBuffer::new(bytes).map_err(|e| io_err("ladder buffer", e))?;
            let lines = bytes / (LINE_WORDS * 8);
            // Enough loads to pass over the set several times, bounded for big sets.
            let steps = (lines * 16).clamp(200_000, max_steps.max(200_000));
            let ns = pool.broadcast(|_| {
                // SAFETY: the only thread touching the buffer.
                let words = unsafe { buf.range_mut::<u64>(0..buf.count::<u64>()) };
                build_cycle(words, lines, 0xc0ffee);
                chase(words, steps)
            })[0];
            Ok(Rung { bytes, ns })
        })
        .collect()
}
