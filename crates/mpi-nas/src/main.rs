//! `scalescope-mpi-nas KERNEL [CLASS]`: a NAS Parallel Benchmark over MPI, started
//! by an MPI launcher (mpirun, srun). Each rank computes its share with the same
//! kernel code and the same official verification values as scalescope's threaded
//! version (`scalescope_workloads::npb`); the ranks' results are reduced with MPI,
//! and rank 0 verifies the whole and prints one human line, then the shared
//! `WorkloadReport` JSON as its last line (what a sweep reads), and every rank
//! exits with the verdict's status (0 passed, 4 failed, 5 unavailable).
//!
//! Kernels: `ep` (NPB 3.4.1 ep: batches split statically among ranks, sums and
//! annulus counts reduced with MPI_Allreduce). IS and FT over MPI are not written
//! yet and are refused with a clear error.

use std::collections::BTreeMap;
use std::process::ExitCode;

use anyhow::{bail, Context};
use mpi::collective::SystemOperation;
use mpi::traits::*;
use scalescope_results::workload::{Verification, WorkloadReport};
use scalescope_workloads::npb::ep::{Ep, Partial};
use scalescope_workloads::pool::Pool;
use scalescope_workloads::Workload;

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
    if kernel != "ep" {
        bail!("kernel `{kernel}` over MPI is not implemented yet (only ep)");
    }
    let universe = mpi::initialize().context("MPI_Init failed (started by an MPI launcher?)")?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let affinity = scalescope_topo::affinity::process_affinity()
        .context("reading this rank's CPU affinity")?;
    // One worker per rank, on every CPU the launcher gave the rank.
    let pool = Pool::new(&[affinity], None).context("starting this rank's worker")?;
    let mut ep = Ep::new(class)?;
    world.barrier();
    let t0 = mpi::time();
    let mine = ep.rank_share(&pool, rank as usize, size as usize);
    let total = reduce(&world, &mine);
    let mut seconds = 0.0;
    world.all_reduce_into(&(mpi::time() - t0), &mut seconds, SystemOperation::max());
    let verification = ep.verify_total(total, seconds, &pool);
    if rank == 0 {
        print_report(&ep, size as usize, seconds, &verification)?;
    }
    Ok(ExitCode::from(verification.exit_code()))
}

/// Every rank's sums and counts added up, on every rank.
fn reduce(world: &impl Communicator, mine: &Partial) -> Partial {
    let mut total = Partial::default();
    let sums = [mine.sx, mine.sy];
    let mut out = [0.0f64; 2];
    world.all_reduce_into(&sums[..], &mut out[..], SystemOperation::sum());
    (total.sx, total.sy) = (out[0], out[1]);
    world.all_reduce_into(&mine.q[..], &mut total.q[..], SystemOperation::sum());
    total
}

fn print_report(ep: &Ep, ranks: usize, seconds: f64, v: &Verification) -> anyhow::Result<()> {
    let mops = ep.mops();
    println!("ep over MPI on {ranks} ranks: {seconds:.4} s, mops={mops:.4} ({v})");
    let report = WorkloadReport {
        workload: "ep".into(),
        threads: ranks,
        verification: v.clone(),
        seconds,
        figures: BTreeMap::from([("mops".to_string(), mops)]),
        units: BTreeMap::from([("mops".to_string(), "Mop/s".to_string())]),
        detail: ep.detail(),
    };
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}
