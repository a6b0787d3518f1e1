//! Built-in workloads behind one [`Workload`] trait, each with a verifier against an
//! independent result, and the one trial loop ([`execute`]) that prepares, times,
//! verifies and reports all of them. One folder per product: [`graph`] (loaders,
//! generators, subgraph counts, BFS, PageRank), [`mem`] (STREAM and the NUMA
//! matrices, latency ladder, core-to-core latency), [`npb`] (EP, IS, FT), [`tpch`]
//! (Q1 and Q6) and [`sync`] (locks, atomics, RTM and their microbenchmark); [`pool`]
//! and [`size`] are shared by all of them. Threads come from a [`pool::Pool`] whose workers
//! are pinned to a placement before any data is touched, so first-touch puts every
//! thread's pages where it runs.

pub mod graph;
pub mod mem;
pub mod npb;
pub mod pool;
pub mod size;
pub mod sync;
pub mod tpch;

// The paths these modules had before each product got its own folder.
pub use mem::stream;
pub use npb::{ep as npb_ep, ft as npb_ft, is as npb_is, rand as npb_rand};

use std::collections::BTreeMap;

use serde::Serialize;

pub use pool::Pool;

/// Why a workload could not run.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    #[error("unknown workload `{0}` (available: {AVAILABLE})")]
    Unknown(String),
    #[error("workload parameter `{key}`: {detail}")]
    BadParam { key: String, detail: String },
    #[error("pinning worker threads: {0}")]
    Pinning(String),
    #[error(transparent)]
    Place(#[from] scalescope_place::PlaceError),
    #[error(transparent)]
    Graph(#[from] graph::load::LoadError),
    #[error("allocating {bytes} bytes: out of memory")]
    Allocation { bytes: u64 },
}

/// Hints the CPU to bring the cache line at `p` into every cache level; kernels use
/// it ahead of reads the hardware prefetcher cannot foresee (random jumps) or does not
/// run far enough ahead on (several streams per core).
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it never faults and reads nothing, whatever
    // the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p.cast::<i8>(), std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Names accepted by [`build`].
pub const AVAILABLE: &str = "stream, ep, is, ft, tpch, graph";

pub use scalescope_results::workload::{Verification, WorkloadReport as Report};

/// One figure of merit (all built-in figures are rates: higher is better).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    pub name: String,
    pub value: f64,
    pub unit: &'static str,
}

/// A workload: allocate and first-touch in `prepare`, do the timed work in `run`,
/// check it in `verify`.
pub trait Workload {
    fn name(&self) -> &'static str;
    /// The figure a sweep analyses by default (its name among the run's figures).
    fn primary_figure(&self) -> &'static str;
    /// Allocates and initialises data from the pool's pinned threads.
    ///
    /// # Errors
    /// Allocation failures.
    fn prepare(&mut self, pool: &Pool) -> Result<(), WorkloadError>;
    /// Does the measured work; returns the seconds the workload counts and its figures.
    fn run(&mut self, pool: &Pool) -> (f64, Vec<Figure>);
    /// Checks the work against an independent reference.
    fn verify(&self, pool: &Pool) -> Verification;
    /// Workload-specific detail for the JSON report.
    fn detail(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
}

/// The shared trial loop: prepare, run, verify, report.
///
/// # Errors
/// Whatever `prepare` reports.
pub fn execute(workload: &mut dyn Workload, pool: &Pool) -> Result<Report, WorkloadError> {
    workload.prepare(pool)?;
    let (seconds, figures) = workload.run(pool);
    let verification = workload.verify(pool);
    Ok(Report {
        workload: workload.name().to_string(),
        threads: pool.threads(),
        verification,
        seconds,
        units: figures
            .iter()
            .map(|f| (f.name.clone(), f.unit.to_string()))
            .collect(),
        figures: figures.into_iter().map(|f| (f.name, f.value)).collect(),
        detail: workload.detail(),
    })
}

/// Builds a workload by name from `key=value` parameters.
///
/// # Errors
/// [`WorkloadError::Unknown`] or [`WorkloadError::BadParam`].
pub fn build(
    name: &str,
    params: &BTreeMap<String, String>,
    topo: &scalescope_topo::Topology,
) -> Result<Box<dyn Workload>, WorkloadError> {
    match name {
        "stream" => Ok(Box::new(stream::Stream::from_params(params, topo)?)),
        "ep" => Ok(Box::new(npb_ep::Ep::from_params(params)?)),
        "is" => Ok(Box::new(npb_is::Is::from_params(params)?)),
        "ft" => Ok(Box::new(npb_ft::Ft::from_params(params)?)),
        "tpch" => Ok(Box::new(tpch::Tpch::from_params(params)?)),
        "graph" => Ok(Box::new(graph::workload::GraphCount::from_params(params)?)),
        other => Err(WorkloadError::Unknown(other.to_string())),
    }
}
