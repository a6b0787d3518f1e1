//! `scalescope`: parse the command line into a checked configuration, dispatch to a
//! command, report errors in one line with their context. Nothing else lives here.

mod alloc;
mod cli;
mod cmd;

use std::process::ExitCode;

use clap::Parser;

#[global_allocator]
static ALLOCATOR: alloc::HugePageAdvice = alloc::HugePageAdvice;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cmd::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("scalescope: error: {e:#}");
            ExitCode::from(1)
        }
    }
}
