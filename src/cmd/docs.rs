//! `scalescope completions SHELL`, `scalescope man` and the hidden `__inventory`:
//! generated from the clap definitions, so they never drift from the flags.

use std::process::ExitCode;

use clap::CommandFactory;

use crate::cli::Cli;

pub fn completions(shell: clap_complete::Shell) -> anyhow::Result<ExitCode> {
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "scalescope", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}

pub fn man() -> anyhow::Result<ExitCode> {
    clap_mangen::Man::new(Cli::command()).render(&mut std::io::stdout())?;
    Ok(ExitCode::SUCCESS)
}

/// One JSON line per argument of every command ([`crate::cli::inventory`]).
pub fn inventory() -> anyhow::Result<ExitCode> {
    for line in crate::cli::inventory::arguments() {
        println!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}
