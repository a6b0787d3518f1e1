//! What the commands share: the topology the flags name, the interrupt flag for
//! sessions, pinned workers, and a built-in workload's exit status.

use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Context;
use scalescope_model::evidence::RunEvidence;
use scalescope_topo::{Source, Topology};
use scalescope_workloads::{execute, Pool, Report, Verification, Workload};

use crate::cli::{PlacementArgs, SourceArgs, ThreadCount};

/// The version of the command documents (`place`, `npb`, `tpch`, `graph`, `sync`
/// `--json`; docs/json.md).
pub use scalescope_report::kernels::SCHEMA_VERSION as JSON_SCHEMA_VERSION;
/// Version of the `mem matrix|latency|c2c|stream --json` documents (docs/json.md).
pub use scalescope_report::mem::SCHEMA_VERSION as MEM_SCHEMA_VERSION;

/// The topology source the flags name.
pub fn source_of(args: &SourceArgs) -> Source {
    if let Some(dir) = &args.sysfs_root {
        Source::SysfsRoot(dir.clone())
    } else if let Some(file) = &args.hwloc_xml {
        Source::HwlocXml(file.clone())
    } else if let Some(spec) = &args.synthetic {
        Source::Synthetic(spec.clone())
    } else {
        Source::Live
    }
}

/// Loads the topology, saying which source failed.
pub fn load_topology(args: &SourceArgs) -> anyhow::Result<Topology> {
    let source = source_of(args);
    source.load().with_context(|| match &source {
        Source::Live => "reading this machine's topology",
        Source::SysfsRoot(_) => "loading the topology from --sysfs-root",
        Source::HwlocXml(_) => "loading the topology from --hwloc-xml",
        Source::Synthetic(_) => "building the topology from --synthetic",
    })
}

/// A flag set by Ctrl-C (SIGINT), SIGTERM or SIGHUP (a closed terminal or ssh
/// session), for sessions to stop at: the running child is stopped, finished runs stay.
pub fn interrupt_flag() -> anyhow::Result<Arc<AtomicBool>> {
    let interrupt = Arc::new(AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(signal, interrupt.clone())
            .context("installing the Ctrl-C handler")?;
    }
    Ok(interrupt)
}

/// Pinned workers on this machine: `threads` of them (default: every usable CPU
/// the placement options leave) placed as the options say, with first-touch memory.
pub fn pinned_pool(options: &PlacementArgs, threads: Option<ThreadCount>) -> anyhow::Result<Pool> {
    let topo = Source::Live
        .load()
        .context("reading this machine's topology")?;
    let placement = scalescope_place::place(&topo, &options.request(&topo, threads))?;
    Ok(Pool::new(&placement.threads, None)?)
}

/// The exit status of a command that ran a built-in workload: its verdict's
/// (0 passed, 4 failed, 5 unavailable; docs/json.md). A verdict other than passed is
/// also said on stderr, so it is never only a number in a JSON field.
pub fn verdict_exit(v: &Verification) -> ExitCode {
    if !v.passed() {
        eprintln!("scalescope: verification {}: {}", v.verdict(), v.why());
    }
    ExitCode::from(v.exit_code())
}

/// Runs a built-in workload in this process with the evidence sampler beside it (as
/// a sweep has beside each run): CPU use of the pool's CPUs and of this process's
/// threads, its pages per node, numastat deltas, bandwidth where a source exists,
/// every `interval_ms` milliseconds; 0 runs no sampler. The evidence is None then, or
/// if the sampling thread failed.
///
/// # Errors
/// The workload's error.
pub fn execute_sampled(
    workload: &mut dyn Workload,
    pool: &Pool,
    interval_ms: crate::cli::SampleMs,
) -> anyhow::Result<(Report, Option<RunEvidence>)> {
    let interval_ms = interval_ms.get();
    if interval_ms == 0 {
        return Ok((execute(workload, pool)?, None));
    }
    let interval = std::time::Duration::from_millis(interval_ms);
    let sampler = scalescope_sampler::Background::start(interval, pool.all_cpus());
    let report = execute(workload, pool);
    let evidence = sampler.finish();
    Ok((report?, evidence))
}

/// A results file; each line a crash damaged is set aside with a warning.
pub fn load_results(
    path: &std::path::Path,
) -> anyhow::Result<(
    scalescope_model::store::Header,
    Vec<scalescope_model::store::RunRecord>,
)> {
    let read = scalescope_model::store::read_results_checked(path).context("reading results")?;
    for s in &read.set_aside {
        eprintln!("warning: {}: {s}", path.display());
    }
    Ok((read.header, read.runs))
}

/// `predict`'s files, with a warning for each results line set aside, as
/// [`load_results`] gives.
pub fn predict_inputs(
    f: &scalescope_model::prediction_files::PredictFiles,
) -> anyhow::Result<scalescope_model::prediction_files::PredictInputs> {
    let inputs = scalescope_model::prediction_files::load(f)?;
    for s in &inputs.set_aside {
        eprintln!("warning: {}: {s}", inputs.from.display());
    }
    Ok(inputs)
}

/// What a resume set aside, one warning a line.
pub fn warn_set_aside(store: &scalescope_model::store::ResultsStore) {
    let aside = scalescope_model::store::SET_ASIDE_FILE;
    for s in store.set_aside() {
        eprintln!("warning: {}: {s}; kept in {aside}", store.dir().display());
    }
}
