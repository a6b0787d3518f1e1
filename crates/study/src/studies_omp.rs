//! The NUMA-structure study's portable placements: a small OpenMP program built
//! with this machine's C compiler, swept with the runtime placing its own threads
//! (`runtime:compact`, `runtime:scatter`, `runtime:spread`: `OMP_PLACES` and
//! `OMP_PROC_BIND`), while the sweep's placement monitor checks each run's threads
//! against the hardware-position plan of the same name.

use scalescope_place::Strategy;

use crate::plan::{thread_list, Ctx, Step, StepKind, StudyPlan};
use crate::probe::words;

/// The probe's source, written beside the plan before it is built.
pub const SOURCE: (&str, &str) = ("omp-probe.c", include_str!("../studies/omp-probe.c"));
/// The built probe, in the study directory.
pub const PROGRAM: &str = "omp-probe";
/// Milliseconds each probe run computes.
const RUN_MS: u32 = 400;

/// The build and the runtime-placed sweep, or a note saying why not.
pub fn runtime_steps(ctx: &mut Ctx, p: &mut StudyPlan) {
    let Some(cc) = ctx.facts.openmp_cc.clone() else {
        p.notes.push("OpenMP runtime placement: unavailable here: no C compiler (cc, gcc, clang) on PATH to build the OpenMP probe".into());
        return;
    };
    p.steps.push(Step {
        name: PROGRAM.into(),
        what: "the OpenMP probe, built with this machine's compiler".into(),
        kind: StepKind::Build,
        program: Some(cc.display().to_string()),
        args: words(&["-fopenmp", "-O2", "-o", PROGRAM, SOURCE.0]),
        estimate_secs: 2.0,
    });
    let plans = [Strategy::Compact, Strategy::Scatter, Strategy::Spread];
    let threads =
        scalescope_analysis::events::boundary_threads(ctx.topo, &plans, ctx.facts.cpus.max(1));
    let runs = threads.len() * plans.len() * 2;
    let mut args = words(&[
        "sweep",
        "--placement",
        "runtime:compact,runtime:scatter,runtime:spread",
        "--threads",
    ]);
    args.push(thread_list(&threads));
    args.extend(words(&[
        "--reps",
        "2",
        "--warmup",
        "0",
        "--quiet",
        "--out",
        "omp-runtime",
        "--",
        "./omp-probe",
    ]));
    args.push(RUN_MS.to_string());
    p.steps.push(Step::scalescope(
        "omp-runtime",
        &format!("the OpenMP runtime places its own threads (compact, scatter, spread), threads {}; each run checked against the plan", thread_list(&threads)),
        StepKind::Sweep,
        args,
        runs as f64 * (f64::from(RUN_MS) / 1000.0 + 0.2),
    ));
}
