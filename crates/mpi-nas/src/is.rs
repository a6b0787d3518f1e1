//! IS over MPI (NPB 3.4.1 is): each rank generates its block of the key sequence;
//! every iteration the two edited keys change on the rank holding them, the test
//! keys' values and the ranks' key histograms are added up with MPI_Allreduce, and
//! every rank ranks by the whole histogram (a counting sort; NPB's MPI version
//! exchanges keys into buckets instead, which ranks identically). Rank 0 checks the
//! test ranks against the official values and, after the timed iterations, gathers
//! every key for the full verification (placed by rank, sorted).

use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::traits::*;
use scalescope_workloads::npb::is::Is;
use scalescope_workloads::pool::{chunk, Pool};
use scalescope_workloads::Workload;

use crate::Outcome;

const ITERATIONS: usize = 10;

pub fn run(world: &impl Communicator, class: &str, pool: &Pool) -> anyhow::Result<Outcome> {
    let mut is = Is::new(class)?;
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let mine = chunk(is.total_keys(), size, rank, 1);
    let mut keys = is.keys_range(mine.clone());
    world.barrier();
    let t0 = mpi::time();
    let (mut passed, mut below) = (0, Vec::new());
    for it in 1..=ITERATIONS {
        for (index, value) in is.iteration_edits(it) {
            if mine.contains(&index) {
                keys[index - mine.start] = value;
            }
        }
        let local: Vec<u32> = is
            .test_index()
            .iter()
            .map(|&i| {
                if mine.contains(&i) {
                    keys[i - mine.start]
                } else {
                    0
                }
            })
            .collect();
        let mut probes = vec![0u32; local.len()];
        world.all_reduce_into(&local[..], &mut probes[..], SystemOperation::sum());
        let hist = is.histogram(&keys);
        let mut whole = vec![0u32; hist.len()];
        world.all_reduce_into(&hist[..], &mut whole[..], SystemOperation::sum());
        below = Is::below(&whole);
        passed += is.probes_passed(it, &probes, &below);
    }
    let mut seconds = 0.0;
    world.all_reduce_into(&(mpi::time() - t0), &mut seconds, SystemOperation::max());
    let sorted = gather_sorted(world, &keys, is.total_keys(), &below);
    let verification = is.verify_distributed(passed, sorted, seconds, pool);
    Ok(Outcome {
        verification,
        seconds,
        mops: is.mops(),
        detail: is.detail(),
    })
}

/// Rank 0 gathers every rank's keys and checks they sort by the ranking; the
/// other ranks return `true` (only rank 0's verdict is reported).
fn gather_sorted(world: &impl Communicator, keys: &[u32], total: usize, below: &[u32]) -> bool {
    let root = world.process_at_rank(0);
    let n = keys.len() as i32;
    if world.rank() != 0 {
        root.gather_into(&n);
        root.gather_varcount_into(keys);
        return true;
    }
    let mut counts = vec![0i32; world.size() as usize];
    root.gather_into_root(&n, &mut counts[..]);
    let displs: Vec<i32> = counts
        .iter()
        .scan(0, |acc, &c| {
            let d = *acc;
            *acc += c;
            Some(d)
        })
        .collect();
    let mut all = vec![0u32; total];
    let mut partition = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
    root.gather_varcount_into_root(keys, &mut partition);
    Is::sorted_by(&all, below)
}
