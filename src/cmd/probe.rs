//! `scalescope __probe`: this rank's host, rank, CPUs, CPU and memory policy as one
//! JSON line, for `mpi-check` to compare with the plan.

use std::process::ExitCode;

pub fn run() -> anyhow::Result<ExitCode> {
    let probe = scalescope_sweep::launch::probe_here().map_err(anyhow::Error::msg)?;
    println!("{}", serde_json::to_string(&probe)?);
    Ok(ExitCode::SUCCESS)
}
