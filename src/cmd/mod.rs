//! One module per subcommand, or per family of them (`kernels`: graph, npb, tpch,
//! sync; `machine`: topo, place; `other_machines`: import, predict; `mem`;
//! `analyze`: analyze, report, compare); each takes its parsed arguments and returns
//! an exit code.
//! Command modules never call each other: what they share lives in [`crate::shared`]
//! or in the libraries.

pub mod analyze;
mod docs;
mod kernels;
mod machine;
pub mod mem;
mod mpi;
mod other_machines;
mod study;
mod sweep;
mod tour;
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
        Some(Command::Topo(args)) => machine::topo(&args),
        Some(Command::Place(args)) => machine::place(&args),
        Some(Command::Sweep(args)) => sweep::run(&args),
        Some(Command::Mem(cmd)) => mem::run(&cmd),
        Some(Command::Analyze(args)) => analyze::run_analyze(&args),
        Some(Command::Import(args)) => other_machines::import(&args),
        Some(Command::Predict(args)) => other_machines::predict(&args),
        Some(Command::Report(args)) => analyze::run_report(&args),
        Some(Command::Compare(args)) => analyze::run_compare(&args),
        Some(Command::Npb(cmd)) => kernels::npb(&cmd),
        Some(Command::Tpch(args)) => kernels::tpch(&args),
        Some(Command::Graph(cmd)) => kernels::graph(&cmd),
        Some(Command::Sync(args)) => kernels::sync(&args),
        Some(Command::Completions(args)) => docs::completions(args.shell),
        Some(Command::Man) => docs::man(),
        Some(Command::Inventory) => docs::inventory(),
        Some(Command::WorkloadChild(args)) => workload_child::run(&args),
        Some(Command::MpiCheck(args)) => mpi::run(&args),
        Some(Command::Study(args)) => study::run(&args),
        Some(Command::Probe) => mpi::probe(),
        Some(Command::NodeSampler { interval_ms, mark }) => Ok(ExitCode::from(
            scalescope_sweep::launch::nodes::sampler_main(interval_ms, &mark),
        )),
        Some(Command::Guard { token }) => {
            Ok(ExitCode::from(scalescope_sweep::reap::guard_main(&token)))
        }
    }
}
