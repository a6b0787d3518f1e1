//! One module per subcommand; each takes its parsed arguments and returns an exit code.
//! Command modules never call each other: what they share lives in [`crate::shared`]
//! or in the libraries.

pub mod analyze;
mod docs;
mod graph;
mod import;
pub mod mem;
mod mpi;
mod npb;
mod place;
mod predict;
mod sweep;
mod sync;
mod topo;
mod tour;
mod tpch;
mod workload_child;

use std::process::ExitCode;

use crate::cli::{Cli, Command};

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    // Sessions that start runs start a guard (this executable, `__guard`) that kills
    // what is left of a run if scalescope itself is killed.
    if let Ok(exe) = std::env::current_exe() {
        scalescope_sweep::reap::set_guard_program(exe);
    }
    crate::progress::set_quiet(cli.quiet);
    match cli.command {
        None => tour::run(),
        Some(Command::Topo(args)) => topo::run(&args),
        Some(Command::Place(args)) => place::run(&args),
        Some(Command::Sweep(args)) => sweep::run(&args),
        Some(Command::Mem(cmd)) => mem::run(&cmd),
        Some(Command::Analyze(args)) => analyze::run_analyze(&args),
        Some(Command::Import(args)) => import::run(&args),
        Some(Command::Predict(args)) => predict::run(&args),
        Some(Command::Report(args)) => analyze::run_report(&args),
        Some(Command::Compare(args)) => analyze::run_compare(&args),
        Some(Command::Npb(cmd)) => npb::run(&cmd),
        Some(Command::Tpch(args)) => tpch::run(&args),
        Some(Command::Graph(cmd)) => graph::run(&cmd),
        Some(Command::Sync(args)) => sync::run(&args),
        Some(Command::Completions(args)) => docs::completions(args.shell),
        Some(Command::Man) => docs::man(),
        Some(Command::WorkloadChild(args)) => workload_child::run(&args),
        Some(Command::MpiCheck(args)) => mpi::run(&args),
        Some(Command::Probe) => mpi::probe(),
        Some(Command::Guard { token }) => {
            Ok(ExitCode::from(scalescope_sweep::reap::guard_main(&token)))
        }
    }
}
