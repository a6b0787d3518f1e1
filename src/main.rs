//! `scalescope`: parse the command line into a checked configuration, dispatch to a
//! command, report errors in one line with their context and the flag that sets
//! what they are about. Nothing else lives here.

mod alloc;
mod cli;
mod cmd;
#[cfg(test)]
mod help_tests;
mod progress;
#[cfg(test)]
mod settings_tests;
mod shared;

use std::process::ExitCode;

use clap::Parser;

#[global_allocator]
static ALLOCATOR: alloc::HugePageAdvice = alloc::HugePageAdvice;

fn main() -> ExitCode {
    quiet_on_closed_pipe();
    let args = cli::Cli::parse();
    // A workload parameter is a flag of its command, but a `--param` of a sweep.
    let given = match &args.command {
        Some(cli::Command::Sweep(_) | cli::Command::WorkloadChild(_)) => cli::flags::Given::Params,
        _ => cli::flags::Given::Flags,
    };
    match cmd::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!(
                "scalescope: error: {}",
                printable(&format!("{:#}", cli::flags::explain(e, given)))
            );
            ExitCode::from(1)
        }
    }
}

/// An error as one printable line: control characters that reached a message
/// from an input file (a terminal escape in a CSV cell, say) are written as
/// escapes, never sent to the terminal.
fn printable(message: &str) -> String {
    message
        .chars()
        .map(|c| {
            if c.is_control() && c != '\n' {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `scalescope topo --json | head -1`: when the reader goes away, end quietly as
/// other command-line tools do (killed by SIGPIPE) instead of panicking in `print!`.
fn quiet_on_closed_pipe() {
    // SAFETY: restoring the default disposition of SIGPIPE at the start of main,
    // before any thread exists; no handler is installed, nothing else is touched.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
