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
pub mod params;
pub mod pool;
pub mod registry;
pub mod size;
pub mod sync;
pub mod tpch;

// The paths these modules had before each product got its own folder.
pub use mem::stream;
pub use npb::{ep as npb_ep, ft as npb_ft, is as npb_is, rand as npb_rand};

use std::time::Instant;

use scalescope_model::detail::Detail;
use scalescope_model::setting::{AboutSetting, Setting};
use serde::Serialize;

pub use inputs::{Answer, AnswerBook, Inputs, VerifyPolicy};
pub use pool::Pool;
pub use registry::{build, build_here, prepare_inputs, Prepared, Settings, AVAILABLE};
pub use scalescope_model::workload::SetupCosts;

/// Why a workload could not run.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    #[error("unknown workload `{0}` (available: {AVAILABLE})")]
    Unknown(String),
    /// A setting (a workload parameter, or a flag of a command) with a value the
    /// workload cannot take.
    #[error("{setting}: {detail}")]
    BadParam { setting: Setting, detail: String },
    #[error("pinning worker threads: {0}")]
    Pinning(String),
    #[error(transparent)]
    Place(#[from] scalescope_place::PlaceError),
    #[error(transparent)]
    Graph(#[from] graph::load::LoadError),
    /// A buffer that could not be mapped, bound or read back.
    #[error("{what}: {detail}")]
    Memory { what: String, detail: String },
    /// A line of an input file the workload cannot read.
    #[error("{file}:{line}: {detail}")]
    Input {
        file: String,
        line: usize,
        detail: String,
    },
    #[error("the embedded reference values ({0})")]
    Reference(String),
    #[error("allocating {bytes} bytes: out of memory")]
    Allocation { bytes: u64 },
    #[error("input cache {file}: {detail}")]
    Cache { file: String, detail: String },
    #[error(transparent)]
    Blob(#[from] blob::BlobError),
    #[error(transparent)]
    File(#[from] scalescope_files::FileError),
    #[error("{what} needs about {need} (estimated before allocating), more than the {available} this machine has available (MemAvailable); force it to try anyway")]
    TooBig {
        what: String,
        need: String,
        available: String,
    },
}

impl WorkloadError {
    /// A bad value of the workload parameter (or command flag) `key`.
    pub fn param(key: &str, detail: impl Into<String>) -> WorkloadError {
        WorkloadError::BadParam {
            setting: Setting::param(key),
            detail: detail.into(),
        }
    }
}

impl AboutSetting for WorkloadError {
    fn setting(&self) -> Option<Setting> {
        match self {
            WorkloadError::BadParam { setting, .. } => Some(setting.clone()),
            WorkloadError::TooBig { .. } => Some(Setting::param("force")),
            _ => None,
        }
    }
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

pub use scalescope_model::workload::{Verification, WorkloadReport as Report};

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
    /// Workload-specific detail for the report, typed.
    fn detail(&self) -> Detail {
        Detail::None
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
        VerifyPolicy::None => Verification::Unavailable("not checked (verify policy: none)".into()),
        VerifyPolicy::First if slot.as_ref().is_some_and(|(b, k)| b.checked(k)) => {
            Verification::Unavailable(
                "not checked (verify policy: first): an earlier run on this input was checked and passed"
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
