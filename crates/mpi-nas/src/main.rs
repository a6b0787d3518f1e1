//! `scalescope-mpi-nas KERNEL [CLASS]`: a NAS Parallel Benchmark over MPI, started
//! by an MPI launcher (mpirun, srun). Each rank computes its share with the same
//! kernel code and the same official verification values as scalescope's threaded
//! version (`scalescope_workloads::npb`); the ranks' results are reduced with MPI,
//! and rank 0 verifies the whole and prints one human line, then the shared
//! `WorkloadReport` JSON as its last line (what a sweep reads), and every rank
//! exits with the verdict's status (0 passed, 4 failed, 5 unavailable).
//!
//! Kernels: `ep` ([`ep`]), `is` ([`is`]) and `ft` ([`ft`]).

mod ep;
mod ft;
mod is;

use std::collections::BTreeMap;
use std::process::ExitCode;

use anyhow::{bail, Context};
use mpi::traits::*;
use scalescope_model::workload::{Verification, WorkloadReport};
use scalescope_workloads::pool::Pool;

/// What rank 0 reports of a run.
pub struct Outcome {
    pub verification: Verification,
    pub seconds: f64,
    pub mops: f64,
    pub detail: scalescope_model::detail::Detail,
}

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("scalescope-mpi-nas: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run() -> anyhow::Result<ExitCode> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (kernel, class) = match args.as_slice() {
        [k] => (k.as_str(), "S"),
        [k, c] => (k.as_str(), c.as_str()),
        _ => bail!("usage: scalescope-mpi-nas ep|is|ft [CLASS]  (class S, W, A, ...; default S)"),
    };
    if !["ep", "is", "ft"].contains(&kernel) {
        bail!("kernel `{kernel}` is not one of ep, is, ft");
    }
    let universe = mpi::initialize().context("MPI_Init failed (started by an MPI launcher?)")?;
    let world = universe.world();
    let affinity = scalescope_topo::affinity::process_affinity()
        .context("reading this rank's CPU affinity")?;
    // One worker per rank, on every CPU the launcher gave the rank.
    let pool = Pool::new(&[affinity], None).context("starting this rank's worker")?;
    let outcome = match kernel {
        "ep" => ep::run(&world, class, &pool)?,
        "is" => is::run(&world, class, &pool)?,
        _ => ft::run(&world, class, &pool)?,
    };
    // Every rank exits with rank 0's verdict.
    let mut code = outcome.verification.exit_code();
    world.process_at_rank(0).broadcast_into(&mut code);
    if world.rank() == 0 {
        print_report(kernel, world.size() as usize, &outcome)?;
    }
    Ok(ExitCode::from(code))
}

fn print_report(kernel: &str, ranks: usize, o: &Outcome) -> anyhow::Result<()> {
    println!(
        "{kernel} over MPI on {ranks} ranks: {:.4} s, mops={:.4} ({})",
        o.seconds, o.mops, o.verification
    );
    let report = WorkloadReport {
        workload: kernel.into(),
        threads: ranks,
        verification: o.verification.clone(),
        seconds: o.seconds,
        figures: BTreeMap::from([("mops".to_string(), o.mops)]),
        units: BTreeMap::from([("mops".to_string(), "Mop/s".to_string())]),
        detail: o.detail.clone(),
        setup: None,
        trials: None,
    };
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}
