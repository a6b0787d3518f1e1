//! `scalescope`: parse the command line into a checked configuration, dispatch to a
//! command, report errors in one line with their context. Nothing else lives here.

mod alloc;
mod cli;
mod cmd;
mod progress;
mod shared;

use std::process::ExitCode;

use clap::Parser;

#[global_allocator]
static ALLOCATOR: alloc::HugePageAdvice = alloc::HugePageAdvice;

fn main() -> ExitCode {
    quiet_on_closed_pipe();
    let args = cli::Cli::parse();
    match cmd::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("scalescope: error: {e:#}");
            ExitCode::from(1)
        }
    }
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
