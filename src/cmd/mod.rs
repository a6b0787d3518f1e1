//! One module per subcommand; each takes its parsed arguments and returns an exit code.

pub mod analyze;
mod docs;
mod graph;
pub mod mem;
mod npb;
mod place;
mod progress;
mod sweep;
mod topo;
mod tour;
mod tpch;
mod workload_child;

use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Context;
use scalescope_place::place;
use scalescope_topo::{Source, Topology};
use scalescope_workloads::Pool;

use crate::cli::{Cli, Command, SourceArgs};

/// The version of the command documents (`place`, `npb`, `tpch`, `graph`, `sync`
/// `--json`) documented in docs/json.md; bumped when a field is removed or changes
/// meaning.
pub const JSON_SCHEMA_VERSION: u32 = 1;

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    // Sessions that start runs start a guard (this executable, `__guard`) that kills
    // what is left of a run if scalescope itself is killed.
    if let Ok(exe) = std::env::current_exe() {
        scalescope_sweep::reap::set_guard_program(exe);
    }
    progress::set_quiet(cli.quiet);
    match cli.command {
        None => tour::run(),
        Some(Command::Topo(args)) => topo::run(&args),
        Some(Command::Place(args)) => place::run(&args),
        Some(Command::Sweep(args)) => sweep::run(&args),
        Some(Command::Mem(cmd)) => mem::run(&cmd),
        Some(Command::Analyze(args)) => analyze::run_analyze(&args),
        Some(Command::Report(args)) => analyze::run_report(&args),
        Some(Command::Compare(args)) => analyze::run_compare(&args),
        Some(Command::Npb(cmd)) => npb::run(&cmd),
        Some(Command::Tpch(args)) => tpch::run(&args),
        Some(Command::Graph(cmd)) => graph::run(&cmd),
        Some(Command::Sync(args)) => graph::sync_cmd(&args),
        Some(Command::Completions(args)) => docs::completions(args.shell),
        Some(Command::Man) => docs::man(),
        Some(Command::WorkloadChild(args)) => workload_child::run(&args),
        Some(Command::Guard { token }) => {
            Ok(ExitCode::from(scalescope_sweep::reap::guard_main(&token)))
        }
    }
}

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
pub fn pinned_pool(
    options: &crate::cli::PlacementArgs,
    threads: Option<usize>,
) -> anyhow::Result<Pool> {
    let topo = Source::Live.load()?;
    let placement = place(&topo, &options.request(&topo, threads)?)?;
    Ok(Pool::new(&placement.threads, None)?)
}
