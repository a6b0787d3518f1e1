//! The synchronisation and the SMT/MPI studies' plans (see [`crate::studies`]).

use crate::plan::{sweep_secs, thread_list, Ctx, Step, StepKind, StudyPlan, BUDGET_SHARE};
use crate::probe::words;
use crate::studies::{REPS, WARMUP};
use crate::StudyError;

/// Batch sizes of the synchronisation study: the published sweet spots (about 2,
/// 10, 100 and 144 vertices) lie inside.
pub const SYNC_BATCHES: &str = "1,2,4,8,16,32,64,128,256";

/// Locks, atomics and RTM over batch sizes: one `sync` document (fits with
/// intervals, best batch, the paper's inequalities tested).
pub fn sync(ctx: &mut Ctx, p: &mut StudyPlan) -> Result<(), StudyError> {
    const PROBE_UPDATES: u64 = 20_000;
    const SYNC_REPS: u64 = 5;
    let t = ctx.probe.time(&words(&[
        "sync",
        "--updates",
        "20000",
        "--reps",
        "1",
        "--batches",
        SYNC_BATCHES,
        "--json",
    ]))?;
    let per_update_rep = t.wall_secs.max(1e-3) / PROBE_UPDATES as f64;
    let fit = BUDGET_SHARE * ctx.budget_secs / (per_update_rep * SYNC_REPS as f64);
    let updates = (fit as u64).clamp(PROBE_UPDATES, 5_000_000) / 1000 * 1000;
    let estimate = per_update_rep * (updates * SYNC_REPS) as f64;
    p.sizing.push(format!("probe: {PROBE_UPDATES} updates per thread, one repetition of every mechanism and batch, took {:.2} s", t.wall_secs));
    p.sizing.push(format!("chosen {updates} updates per thread per measurement, {SYNC_REPS} repetitions (the fits use every one): about {estimate:.0} s"));
    let args = vec![
        "sync".into(),
        "--json".into(),
        "--quiet".into(),
        "--updates".into(),
        updates.to_string(),
        "--reps".into(),
        SYNC_REPS.to_string(),
        "--batches".into(),
        SYNC_BATCHES.into(),
    ];
    let what = format!(
        "coarse lock, striped locks, atomics{} over batches {SYNC_BATCHES}, every usable CPU",
        if ctx.facts.rtm { ", RTM" } else { "" }
    );
    p.steps.push(Step::scalescope(
        "sync",
        &what,
        StepKind::Document,
        args,
        estimate,
    ));
    p.notes.extend(ctx.facts.no_htm());
    Ok(())
}

/// A NAS class's work against class S (NPB's sizes: EP 2^24/2^25/2^28 pairs, IS
/// 2^16/2^20/2^23 keys, FT 64^3/128x128x32/256x256x128 points).
fn class_factor(kernel: &str, class: &str) -> f64 {
    match (kernel, class) {
        (_, "S") => 1.0,
        ("ep", "W") | ("ft", "W") => 2.0,
        ("ep", "A") => 16.0,
        ("is", "W") => 16.0,
        ("is", "A") => 128.0,
        ("ft", "A") => 32.0,
        _ => f64::INFINITY,
    }
}

/// NAS EP, IS and FT with threads (cores first, SMT pairs where there is SMT) and,
/// where a launcher and `scalescope-mpi-nas` are found, with one and two ranks per core.
pub fn smt_mpi(ctx: &mut Ctx, p: &mut StudyPlan) -> Result<(), StudyError> {
    let placements = crate::studies::smt_placements(ctx);
    let threads = crate::studies::boundaries(ctx, &placements);
    let mpi = mpi_launch(ctx);
    for kernel in ["ep", "is", "ft"] {
        let (class, secs) = nas_class(ctx, p, kernel, &threads, placements.len(), mpi.is_some())?;
        let params = [("class", class.to_string())];
        let args = crate::studies::workload_sweep(kernel, kernel, &params, &threads, &placements);
        let what = format!(
            "NAS {} class {class} with threads {}, {}",
            kernel.to_uppercase(),
            thread_list(&threads),
            crate::studies::names(&placements)
        );
        p.steps
            .push(Step::scalescope(kernel, &what, StepKind::Sweep, args, secs));
        if let Some((launcher, nas)) = &mpi {
            p.steps
                .push(mpi_step(kernel, class, launcher, nas, secs + 4.0));
        }
    }
    if mpi.is_none() {
        p.notes.push(format!("MPI ranks: {}", mpi_unavailable(ctx)));
    }
    p.notes.extend(ctx.facts.no_smt());
    p.notes.push(
        "one node: the study's 2 to 16 nodes and its interconnects cannot be compared here".into(),
    );
    Ok(())
}

/// The largest NAS class whose thread sweep (and MPI sweep, where there is one)
/// fits a third of the budget's share, timed by a class S probe; the class and the
/// thread sweep's estimate.
fn nas_class(
    ctx: &mut Ctx,
    p: &mut StudyPlan,
    kernel: &str,
    threads: &[usize],
    placements: usize,
    mpi: bool,
) -> Result<(&'static str, f64), StudyError> {
    let t = ctx.probe.time(&words(&[
        "npb",
        kernel,
        "--class",
        "S",
        "--threads",
        "1",
        "--json",
    ]))?;
    let runs = placements * (REPS + WARMUP);
    let sweeps = if mpi { 2.0 } else { 1.0 };
    let cost = |c: &str| {
        sweep_secs(
            threads,
            ctx.facts.cores,
            runs,
            t.kernel_secs * class_factor(kernel, c),
            0.3,
        )
    };
    let share = BUDGET_SHARE * ctx.budget_secs / 3.0;
    let class = ["A", "W", "S"]
        .into_iter()
        .find(|c| sweeps * cost(c) <= share)
        .unwrap_or("S");
    p.sizing.push(format!(
        "{}: class S at 1 thread took {:.3} s; chosen class {class} (one-thread kernel about {:.2} s)",
        kernel.to_uppercase(),
        t.kernel_secs,
        t.kernel_secs * class_factor(kernel, class)
    ));
    Ok((class, cost(class)))
}

/// The launcher family and the MPI NAS program, where both are found.
fn mpi_launch(ctx: &Ctx) -> Option<(String, String)> {
    let launcher = ctx.facts.launcher.clone()?;
    let nas = ctx.facts.mpi_nas.as_ref()?;
    Some((launcher, nas.display().to_string()))
}

/// Why the MPI part cannot run here.
pub fn mpi_unavailable(ctx: &Ctx) -> String {
    match (&ctx.facts.launcher, &ctx.facts.mpi_nas) {
        (None, _) => "unavailable here: no MPI launcher (mpirun, mpiexec, srun) on PATH".into(),
        (_, None) => "unavailable here: scalescope-mpi-nas is neither beside scalescope nor on PATH (cargo build -p scalescope-mpi-nas)".into(),
        _ => String::new(),
    }
}

fn mpi_step(kernel: &str, class: &str, launcher: &str, nas: &str, estimate: f64) -> Step {
    let name = format!("mpi-{kernel}");
    let args = vec![
        "sweep".into(),
        "--launcher".into(),
        launcher.into(),
        "--ranks-per-node".into(),
        "cores,2xcores".into(),
        "--reps".into(),
        REPS.to_string(),
        "--warmup".into(),
        WARMUP.to_string(),
        "--quiet".into(),
        "--out".into(),
        name.clone(),
        "--".into(),
        nas.into(),
        kernel.into(),
        class.into(),
    ];
    let what = format!(
        "NAS {} class {class} over MPI ({launcher}), one and two ranks per core",
        kernel.to_uppercase()
    );
    Step::scalescope(&name, &what, StepKind::Sweep, args, estimate)
}
