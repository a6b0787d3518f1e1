//! EP over MPI (NPB 3.4.1 ep): the class's batches split statically among the
//! ranks, each rank's sums and annulus counts added up with MPI_Allreduce, the
//! whole checked against the official values.

use mpi::collective::SystemOperation;
use mpi::traits::*;
use scalescope_workloads::npb::ep::{Ep, Partial};
use scalescope_workloads::pool::Pool;
use scalescope_workloads::Workload;

use crate::Outcome;

pub fn run(world: &impl Communicator, class: &str, pool: &Pool) -> anyhow::Result<Outcome> {
    let mut ep = Ep::new(class)?;
    world.barrier();
    let t0 = mpi::time();
    let mine = ep.rank_share(pool, world.rank() as usize, world.size() as usize);
    let total = reduce(world, &mine);
    let mut seconds = 0.0;
    world.all_reduce_into(&(mpi::time() - t0), &mut seconds, SystemOperation::max());
    let verification = ep.verify_total(total, seconds, pool);
    Ok(Outcome {
        verification,
        seconds,
        mops: ep.mops(),
        detail: ep.detail(),
    })
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
