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
pub mod mapping;
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
    /// Drops what only the timed trials use (a copy of the input made for the
    /// kernel, its kept arrays), keeping the last result and what `verify` and
    /// `detail` read; called once, after the last trial and before its check, so the
    /// check and the kernel's working set are never resident at once. The workload
    /// runs nothing more until it is prepared again.
    fn release(&mut self) {}
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

/// The shared trial loop once: take the inputs, prepare, run, verify as
/// `inputs.verify` says, report with the set-up seconds.
///
/// # Errors
/// Whatever `prepare` reports.
pub fn execute_with(
    workload: &mut dyn Workload,
    pool: &Pool,
    inputs: &Inputs,
) -> Result<Report, WorkloadError> {
    execute_trials(workload, pool, inputs, 1)
}

/// What the trials of one process measured and found.
struct TrialRuns {
    seconds: Vec<f64>,
    /// Each trial's figures.
    figures: Vec<Vec<Figure>>,
    kernel_secs: f64,
    verify_secs: f64,
    verification: Verification,
}

/// The check of trial `trial` of `trials` (0 first): the last as `policy` says
/// (after [`Workload::release`]), every earlier one under `all`, none under `first`
/// or `none` (so `--verify first` checks the last trial of the first run on an
/// input, beside the input alone).
fn trial_check(
    workload: &dyn Workload,
    pool: &Pool,
    policy: VerifyPolicy,
    (trial, trials): (usize, usize),
) -> Option<Verification> {
    match (trial + 1 == trials, policy) {
        (true, _) => Some(checked(workload, pool, policy)),
        (false, VerifyPolicy::All) => Some(workload.verify(pool)),
        _ => None,
    }
}

/// Runs the kernel `trials` times on the prepared input, each trial timed and
/// checked as [`trial_check`] says; the verdict is the first failed check's, else
/// the last check's.
fn run_trials(
    workload: &mut dyn Workload,
    pool: &Pool,
    policy: VerifyPolicy,
    trials: usize,
) -> TrialRuns {
    let mut runs = TrialRuns {
        seconds: Vec::with_capacity(trials),
        figures: Vec::with_capacity(trials),
        kernel_secs: 0.0,
        verify_secs: 0.0,
        verification: Verification::Unavailable("nothing ran".into()),
    };
    let trials = trials.max(1);
    for trial in 0..trials {
        let t = Instant::now();
        let (seconds, figures) = workload.run(pool);
        runs.kernel_secs += t.elapsed().as_secs_f64();
        runs.seconds.push(seconds);
        runs.figures.push(figures);
        if trial + 1 == trials {
            workload.release();
        }
        let t = Instant::now();
        let check = trial_check(workload, pool, policy, (trial, trials));
        runs.verify_secs += t.elapsed().as_secs_f64();
        let failed_before = matches!(runs.verification, Verification::Failed(_));
        if let Some(v) = check.filter(|_| !failed_before) {
            runs.verification = v;
        }
    }
    runs
}

/// The verdict of several trials, saying which were checked.
fn trials_verdict(v: Verification, trials: usize, policy: VerifyPolicy) -> Verification {
    let which = match policy {
        // One trial, or none checked: the verdict already says all there is.
        _ if trials < 2 => return v,
        VerifyPolicy::None => return v,
        VerifyPolicy::All => format!("every one of {trials} trials checked"),
        VerifyPolicy::First => {
            format!("the last of {trials} trials checked (verify policy: {policy})")
        }
    };
    match v {
        Verification::Passed(w) => Verification::Passed(format!("{w}; {which}")),
        Verification::Failed(w) => Verification::Failed(format!("{w}; {which}")),
        Verification::Unavailable(w) => Verification::Unavailable(format!("{w}; {which}")),
    }
}

/// Which trial's seconds and figures a report of several trials carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrialPick {
    /// The last (`graph bfs|pr|count --trials N`: GAP prints its last trial's).
    Last,
    /// The warm trial (every one after the first) of median seconds, the lower of
    /// the two middle ones for an even count (a sweep's run: one figure per run
    /// that neither the cold first trial nor one slow warm trial moves).
    WarmMedian,
}

impl TrialPick {
    /// The index of the picked trial among `seconds` (0 with none).
    pub fn index(self, seconds: &[f64]) -> usize {
        let last = seconds.len().saturating_sub(1);
        if self == TrialPick::Last || seconds.len() < 2 {
            return last;
        }
        let mut warm: Vec<usize> = (1..seconds.len()).collect();
        warm.sort_by(|a, b| seconds[*a].total_cmp(&seconds[*b]));
        warm[(warm.len() - 1) / 2]
    }
}

/// The shared trial loop: take the inputs, prepare once, then run the kernel
/// `trials` times in this process (at least once), verifying as `inputs.verify`
/// says; report with the set-up seconds. With more than one trial the report lists
/// every trial's seconds ([`Report::trials`]) and its seconds, figures and detail are
/// the last trial's.
///
/// # Errors
/// Whatever `prepare` reports.
pub fn execute_trials(
    workload: &mut dyn Workload,
    pool: &Pool,
    inputs: &Inputs,
    trials: usize,
) -> Result<Report, WorkloadError> {
    execute_picked(workload, pool, inputs, trials, TrialPick::Last)
}

/// [`execute_trials`], the report carrying the seconds and figures of the trial
/// `pick` names (its detail stays the last trial's).
///
/// # Errors
/// Whatever `prepare` reports.
pub fn execute_picked(
    workload: &mut dyn Workload,
    pool: &Pool,
    inputs: &Inputs,
    trials: usize,
    pick: TrialPick,
) -> Result<Report, WorkloadError> {
    workload.use_inputs(inputs);
    let t = Instant::now();
    workload.prepare(pool)?;
    let prepare_secs = t.elapsed().as_secs_f64();
    let runs = run_trials(workload, pool, inputs.verify, trials);
    let setup = SetupCosts {
        prepare_secs,
        verify_secs: runs.verify_secs,
        kernel_secs: Some(runs.kernel_secs),
        ..workload.setup()
    };
    let count = runs.seconds.len();
    let picked = pick.index(&runs.seconds);
    let figures = runs.figures.into_iter().nth(picked).unwrap_or_default();
    Ok(Report {
        workload: workload.name().to_string(),
        threads: pool.threads(),
        verification: trials_verdict(runs.verification, count, inputs.verify),
        seconds: runs.seconds.get(picked).copied().unwrap_or(f64::NAN),
        units: figures
            .iter()
            .map(|f| (f.name.clone(), f.unit.to_string()))
            .collect(),
        figures: figures.into_iter().map(|f| (f.name, f.value)).collect(),
        detail: workload.detail(),
        setup: Some(setup),
        trials: (count > 1).then_some(scalescope_model::workload::Trials {
            seconds: runs.seconds,
            picked: (pick != TrialPick::Last).then_some(picked),
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// Records the trial loop's calls in order.
    #[derive(Default)]
    struct Recorder {
        calls: RefCell<Vec<&'static str>>,
    }

    impl Workload for Recorder {
        fn name(&self) -> &'static str {
            "recorder"
        }
        fn primary_figure(&self) -> &'static str {
            "none"
        }
        fn prepare(&mut self, _pool: &Pool) -> Result<(), WorkloadError> {
            self.calls.borrow_mut().push("prepare");
            Ok(())
        }
        fn run(&mut self, _pool: &Pool) -> (f64, Vec<Figure>) {
            self.calls.borrow_mut().push("run");
            (1.0, Vec::new())
        }
        fn verify(&self, _pool: &Pool) -> Verification {
            self.calls.borrow_mut().push("verify");
            Verification::Passed("recorded".into())
        }
        fn release(&mut self) {
            self.calls.borrow_mut().push("release");
        }
    }

    /// Issue 36: the kernel's copies are released after the last trial and before
    /// its check; `first` checks that last trial only, `all` every trial.
    #[test]
    fn the_last_trial_is_checked_after_the_release() {
        let pool = crate::pool::test_pool(1);
        let cases = [
            (
                VerifyPolicy::First,
                3,
                "prepare run run run release verify",
                "the last of 3",
            ),
            (
                VerifyPolicy::All,
                2,
                "prepare run verify run release verify",
                "every one of 2",
            ),
            (
                VerifyPolicy::None,
                2,
                "prepare run run release",
                "not checked",
            ),
            (
                VerifyPolicy::First,
                1,
                "prepare run release verify",
                "recorded",
            ),
        ];
        for (verify, trials, calls, says) in cases {
            let mut w = Recorder::default();
            let inputs = Inputs {
                verify,
                ..Inputs::default()
            };
            let r = execute_trials(&mut w, &pool, &inputs, trials).unwrap();
            assert_eq!(w.calls.borrow().join(" "), calls, "{verify} x{trials}");
            let text = match &r.verification {
                Verification::Passed(t)
                | Verification::Failed(t)
                | Verification::Unavailable(t) => t,
            };
            assert!(text.contains(says), "{verify} x{trials}: {text}");
        }
    }

    /// Returns the scripted seconds one trial at a time, with a figure of each.
    struct Scripted {
        seconds: Vec<f64>,
        next: usize,
    }

    impl Workload for Scripted {
        fn name(&self) -> &'static str {
            "scripted"
        }
        fn primary_figure(&self) -> &'static str {
            "rate"
        }
        fn prepare(&mut self, _pool: &Pool) -> Result<(), WorkloadError> {
            Ok(())
        }
        fn run(&mut self, _pool: &Pool) -> (f64, Vec<Figure>) {
            let s = self.seconds[self.next];
            self.next += 1;
            let rate = Figure {
                name: "rate".into(),
                value: 100.0 / s,
                unit: "ops/s",
            };
            (s, vec![rate])
        }
        fn verify(&self, _pool: &Pool) -> Verification {
            Verification::Passed("scripted".into())
        }
    }

    /// A sweep's run carries its median warm trial (the cold first left out, the
    /// lower middle one of an even count), its seconds and its figures together;
    /// the graph commands carry the last, as before.
    #[test]
    fn a_sweep_run_carries_its_median_warm_trial() {
        let pool = crate::pool::test_pool(1);
        let cases = [
            (
                vec![5.0, 1.2, 0.9, 1.0, 3.0],
                TrialPick::WarmMedian,
                1.0,
                Some(3),
            ),
            (
                vec![5.0, 2.0, 1.0, 3.0],
                TrialPick::WarmMedian,
                2.0,
                Some(1),
            ),
            (vec![5.0, 1.2, 0.9, 1.0, 3.0], TrialPick::Last, 3.0, None),
            (vec![5.0], TrialPick::WarmMedian, 5.0, None),
        ];
        for (seconds, pick, want, picked) in cases {
            let n = seconds.len();
            let mut w = Scripted { seconds, next: 0 };
            let r = execute_picked(&mut w, &pool, &Inputs::default(), n, pick).unwrap();
            assert_eq!(r.seconds, want, "{pick:?} of {n}");
            assert_eq!(r.figures["rate"], 100.0 / want, "{pick:?} of {n}");
            assert_eq!(r.trials.as_ref().and_then(|t| t.picked), picked);
            assert_eq!(r.trials.map_or(1, |t| t.seconds.len()), n);
        }
    }
}
