//! Built-in workloads behind one [`Workload`] trait, each with a verifier against an
//! independent result, and the one trial loop ([`execute`]) that prepares, times,
//! verifies and reports all of them. One folder per product: [`graph`] (loaders,
//! generators, subgraph counts, BFS, PageRank), [`mem`] (STREAM and the NUMA
//! matrices, latency ladder, core-to-core latency), [`npb`] (EP, IS, FT), [`tpch`]
//! (Q1 and Q6) and [`sync`] (locks, atomics, RTM and their microbenchmark); [`pool`]
//! and [`size`] are shared by all of them. Threads come from a [`pool::Pool`] whose workers
//! are pinned to a placement before any data is touched, so first-touch puts every
//! thread's pages where it runs.

pub mod blob;
pub mod budget;
pub mod graph;
pub mod inputs;
pub mod mem;
pub mod npb;
pub mod pool;
pub mod sync;
pub mod tpch;

// The paths these modules had before each product got its own folder.
pub use mem::stream;
pub use npb::{ep as npb_ep, ft as npb_ft, is as npb_is, rand as npb_rand};

use std::collections::BTreeMap;
use std::time::Instant;

use serde::Serialize;

pub use inputs::{Answer, AnswerBook, Inputs, VerifyPolicy};
pub use pool::Pool;
pub use scalescope_results::workload::SetupCosts;

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
    #[error("input cache {file}: {detail}")]
    Cache { file: String, detail: String },
    #[error(transparent)]
    Blob(#[from] blob::BlobError),
    #[error(transparent)]
    File(#[from] scalescope_files::FileError),
    #[error("{what} needs about {need} (estimated before allocating), more than the {available} this machine has available (MemAvailable); pass --force (force=true in a sweep) to try anyway")]
    TooBig {
        what: String,
        need: String,
        available: String,
    },
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
    /// Takes the shared inputs (cache directory, verification policy) before
    /// `prepare`; workloads without a cacheable input ignore them.
    fn use_inputs(&mut self, _inputs: &Inputs) {}
    /// Whether `prepare` writes a cache that later runs share (then a sweep prepares
    /// it once, before its runs).
    fn shares_inputs(&self) -> bool {
        false
    }
    /// What `prepare` spent where the workload can say more than the total (load,
    /// first-touch, build) and where its input came from.
    fn setup(&self) -> SetupCosts {
        SetupCosts {
            input: "built in memory".into(),
            ..SetupCosts::default()
        }
    }
    /// Where a passed check is remembered for `--verify first` (the cached input's
    /// answers and the kernel's key), if the input is cached.
    fn answer_slot(&self) -> Option<(AnswerBook, String)> {
        None
    }
    /// After `prepare`, the token of the cache file it checked in full or wrote
    /// (a sweep hands it to its runs, [`Inputs::verified`]); `None` where there is
    /// no such file or it was checked less than fully.
    fn verified_input(&self) -> Option<String> {
        None
    }
}

/// The shared trial loop without a cache, every run checked.
///
/// # Errors
/// Whatever `prepare` reports.
pub fn execute(workload: &mut dyn Workload, pool: &Pool) -> Result<Report, WorkloadError> {
    execute_with(workload, pool, &Inputs::default())
}

/// The check `policy` asks for: skipped under `none`, and under `first` once an
/// earlier run on the same cached input passed.
fn checked(workload: &dyn Workload, pool: &Pool, policy: VerifyPolicy) -> Verification {
    let slot = workload.answer_slot();
    match policy {
        VerifyPolicy::None => Verification::Unavailable("not checked (--verify none)".into()),
        VerifyPolicy::First if slot.as_ref().is_some_and(|(b, k)| b.checked(k)) => {
            Verification::Unavailable(
                "not checked (--verify first): an earlier run on this input was checked and passed"
                    .into(),
            )
        }
        _ => {
            let v = workload.verify(pool);
            if let (VerifyPolicy::First, true, Some((book, key))) = (policy, v.passed(), slot) {
                // Unrecorded, the next run checks again: slower, never wrong.
                let _ = book.mark_checked(&key);
            }
            v
        }
    }
}

/// The shared trial loop: take the inputs, prepare, run, verify as `inputs.verify`
/// says, report with the set-up seconds.
///
/// # Errors
/// Whatever `prepare` reports.
pub fn execute_with(
    workload: &mut dyn Workload,
    pool: &Pool,
    inputs: &Inputs,
) -> Result<Report, WorkloadError> {
    workload.use_inputs(inputs);
    let t = Instant::now();
    workload.prepare(pool)?;
    let prepare_secs = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let (seconds, figures) = workload.run(pool);
    let kernel_secs = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let verification = checked(workload, pool, inputs.verify);
    let setup = SetupCosts {
        prepare_secs,
        verify_secs: t.elapsed().as_secs_f64(),
        kernel_secs: Some(kernel_secs),
        ..workload.setup()
    };
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
        setup: Some(setup),
    })
}

/// What a sweep's preparation of its shared input cost, and the token of the cache
/// file it checked in full, for its runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prepared {
    pub setup: SetupCosts,
    pub verified: Option<String>,
}

/// Prepares the shared input of the workload `name` once (a sweep does this before
/// its runs): the cache file and its answers. Returns what was prepared, or `None`
/// for a workload whose runs share nothing.
///
/// # Errors
/// A workload that does not build, or whatever its `prepare` reports.
pub fn prepare_inputs(
    name: &str,
    params: &BTreeMap<String, String>,
    topo: &scalescope_topo::Topology,
    inputs: &Inputs,
    pool: &Pool,
) -> Result<Option<Prepared>, WorkloadError> {
    let mut workload = build(name, params, topo)?;
    workload.use_inputs(inputs);
    if inputs.cache.is_none() || !workload.shares_inputs() {
        return Ok(None);
    }
    inputs.create_dir()?;
    let t = Instant::now();
    workload.prepare(pool)?;
    Ok(Some(Prepared {
        setup: SetupCosts {
            prepare_secs: t.elapsed().as_secs_f64(),
            ..workload.setup()
        },
        verified: workload.verified_input(),
    }))
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
        other => build_without_topology(other, params),
    }
}

/// [`build`] on this machine, discovering its topology (`topo`) only for the one
/// workload that reads it (`stream` sizes its arrays from the LLC): a sweep's run of
/// any other skips that walk of sysfs (about 1 ms of every run).
///
/// # Errors
/// As [`build`], or `topo`'s.
pub fn build_here<E: From<WorkloadError>>(
    name: &str,
    params: &BTreeMap<String, String>,
    topo: impl FnOnce() -> Result<scalescope_topo::Topology, E>,
) -> Result<Box<dyn Workload>, E> {
    match name {
        "stream" => Ok(build(name, params, &topo()?)?),
        other => Ok(build_without_topology(other, params)?),
    }
}

/// Every workload but `stream`.
fn build_without_topology(
    name: &str,
    params: &BTreeMap<String, String>,
) -> Result<Box<dyn Workload>, WorkloadError> {
    match name {
        "ep" => Ok(Box::new(npb_ep::Ep::from_params(params)?)),
        "is" => Ok(Box::new(npb_is::Is::from_params(params)?)),
        "ft" => Ok(Box::new(npb_ft::Ft::from_params(params)?)),
        "tpch" => Ok(Box::new(tpch::Tpch::from_params(params)?)),
        "graph" => Ok(Box::new(graph::workload::GraphCount::from_params(params)?)),
        other => Err(WorkloadError::Unknown(other.to_string())),
    }
}

pub mod size {
    //! Byte sizes as people write them: `200MB`, `1GiB`, `512k`, `4096`.

    /// Parses a size; decimal units (kB, MB, GB) are powers of 1000, binary ones (KiB,
    /// MiB, GiB, and the bare K, M, G) powers of 1024.
    ///
    /// # Errors
    /// A sentence naming what is wrong.
    pub fn parse_bytes(text: &str) -> Result<u64, String> {
        let t = text.trim();
        let split = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let value: f64 = num
            .parse()
            .map_err(|_| format!("`{text}` is not a size like 200MB or 1GiB"))?;
        let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 1.0,
            "kb" => 1e3,
            "mb" => 1e6,
            "gb" => 1e9,
            "tb" => 1e12,
            "k" | "kib" => 1024.0,
            "m" | "mib" => 1024.0 * 1024.0,
            "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
            "t" | "tib" => 1024f64.powi(4),
            other => {
                return Err(format!(
                    "`{text}`: unknown unit `{other}` (B, kB, MB, GB, KiB, MiB, GiB)"
                ))
            }
        };
        let bytes = value * mult;
        if !(1.0..=1e15).contains(&bytes) {
            return Err(format!("`{text}` is out of range (1 byte to 1 PB)"));
        }
        Ok(bytes as u64)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn sizes() {
            assert_eq!(parse_bytes("200MB").unwrap(), 200_000_000);
            assert_eq!(parse_bytes("1GiB").unwrap(), 1 << 30);
            assert_eq!(parse_bytes("512k").unwrap(), 512 * 1024);
            assert_eq!(parse_bytes("4096").unwrap(), 4096);
            assert_eq!(parse_bytes("1.5GB").unwrap(), 1_500_000_000);
            for bad in ["", "MB", "12XB", "0", "-5MB", "1e30"] {
                assert!(parse_bytes(bad).is_err(), "{bad}");
            }
        }
    }
}
