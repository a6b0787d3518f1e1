//! The five plans. Each picks its placements and thread counts from the topology
//! (the boundary counts of `analysis::events`), times a probe, sizes its input so
//! the one-thread run is long enough to time and the whole plan fits the budget's
//! share ([`crate::plan::BUDGET_SHARE`]), and says what this machine leaves out.
//!
//! Growth factors are per step of the size parameter and were measured on the
//! development machine (2-CPU EPYC VM); they only choose a size, the report shows
//! what each run took.

use scalescope_place::Strategy;

use crate::plan::{sweep_secs, thread_list, Ctx, Step, StepKind, StudyPlan, BUDGET_SHARE};
use crate::probe::words;
use crate::StudyError;

/// Measured repetitions and warm-ups of every study sweep.
pub const REPS: usize = 3;
pub const WARMUP: usize = 1;
/// Seconds a run costs beyond its kernel (process start, mapping the input, checks).
const RUN_OVERHEAD_SECS: f64 = 0.3;
/// The shortest one-thread kernel worth timing.
pub const MIN_ONE_THREAD_SECS: f64 = 0.2;

/// The placements of a thread sweep: cores first, and forced SMT pairs where cores
/// have two hardware threads.
pub(crate) fn smt_placements(ctx: &Ctx) -> Vec<Strategy> {
    let mut v = vec![Strategy::CoresFirst];
    if ctx.facts.smt >= 2 {
        v.push(Strategy::SmtPairs);
    }
    v
}

/// The boundary thread counts of `placements` on this machine.
pub(crate) fn boundaries(ctx: &Ctx, placements: &[Strategy]) -> Vec<usize> {
    scalescope_analysis::events::boundary_threads(ctx.topo, placements, ctx.facts.cpus.max(1))
}

pub(crate) fn names(placements: &[Strategy]) -> String {
    placements
        .iter()
        .map(Strategy::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// `sweep --workload W --param k=v ... --threads T --placement P --reps --warmup --out NAME`.
pub(crate) fn workload_sweep(
    name: &str,
    workload: &str,
    params: &[(&str, String)],
    threads: &[usize],
    placements: &[Strategy],
) -> Vec<String> {
    let mut a = words(&["sweep", "--workload", workload]);
    for (k, v) in params {
        a.push("--param".into());
        a.push(format!("{k}={v}"));
    }
    a.extend([
        "--threads".into(),
        thread_list(threads),
        "--placement".into(),
        names(placements),
        "--reps".into(),
        REPS.to_string(),
        "--warmup".into(),
        WARMUP.to_string(),
        "--quiet".into(),
        "--out".into(),
        name.into(),
    ]);
    a
}

/// The largest size in `sizes` (ascending) whose cost fits `budget`, else the smallest.
fn largest_fitting<T: Copy>(sizes: &[T], budget: f64, cost: impl Fn(T) -> f64) -> T {
    let mut best = sizes[0];
    for &s in sizes {
        if cost(s) <= budget {
            best = s;
        }
    }
    best
}

/// Diamond counting on a Kronecker graph over the boundary counts, cores first and
/// forced SMT pairs.
pub fn graph_mining(ctx: &mut Ctx, p: &mut StudyPlan) -> Result<(), StudyError> {
    const PROBE_SCALE: i32 = 12;
    const KERNEL_GROWTH: f64 = 2.9;
    const PREP_GROWTH: f64 = 2.6;
    let placements = smt_placements(ctx);
    let threads = boundaries(ctx, &placements);
    let t = ctx.probe.time(&words(&[
        "graph",
        "count",
        "--graph",
        "kron:12",
        "--pattern",
        "diamond",
        "--threads",
        "1",
        "--json",
    ]))?;
    let prep0 = (t.wall_secs - t.kernel_secs).max(0.0);
    let kernel = |s: i32| t.kernel_secs * KERNEL_GROWTH.powi(s - PROBE_SCALE);
    let prep = |s: i32| prep0 * PREP_GROWTH.powi(s - PROBE_SCALE);
    let runs = placements.len() * (REPS + WARMUP);
    let cost = |s: i32| {
        prep(s)
            + sweep_secs(
                &threads,
                ctx.facts.cores,
                runs,
                kernel(s),
                RUN_OVERHEAD_SECS,
            )
    };
    let scales: Vec<i32> = (PROBE_SCALE..=26).collect();
    let scale = largest_fitting(&scales, BUDGET_SHARE * ctx.budget_secs, cost);
    p.sizing.push(format!(
        "probe: diamonds on kron:12 at 1 thread took {:.3} s (kernel), {:.3} s building and checking the graph",
        t.kernel_secs, prep0
    ));
    p.sizing.push(format!(
        "chosen kron:{scale}: one-thread kernel about {:.2} s ({KERNEL_GROWTH}x per scale), input prepared once in about {:.1} s ({PREP_GROWTH}x per scale); the largest scale whose sweep fits {:.0}% of the budget",
        kernel(scale), prep(scale), BUDGET_SHARE * 100.0
    ));
    if kernel(scale) < MIN_ONE_THREAD_SECS {
        p.sizing.push(format!("warning: the one-thread run (about {:.2} s) is short for the budget; timings carry more noise", kernel(scale)));
    }
    let params = [
        ("graph", format!("kron:{scale}")),
        ("pattern", "diamond".to_string()),
    ];
    p.steps.push(Step::scalescope(
        "graph",
        &format!(
            "diamonds on kron:{scale}, threads {}, {}, evidence sampled",
            thread_list(&threads),
            names(&placements)
        ),
        StepKind::Sweep,
        workload_sweep("graph", "graph", &params, &threads, &placements),
        cost(scale),
    ));
    p.notes.extend(
        [
            ctx.facts.no_smt(),
            ctx.facts.one_package(),
            ctx.facts.one_node(),
        ]
        .into_iter()
        .flatten(),
    );
    Ok(())
}

/// Topology and numbering, the bandwidth matrix and its hops against the SLIT, the
/// OpenMP runtime's own compact and scatter, verified.
pub fn numa_structure(ctx: &mut Ctx, p: &mut StudyPlan) -> Result<(), StudyError> {
    let nodes = ctx.facts.nodes as f64;
    p.steps.push(Step::scalescope(
        "topo",
        "topology, numbering report",
        StepKind::Document,
        words(&["topo", "--json"]),
        1.0,
    ));
    p.steps.push(Step::scalescope(
        "matrix",
        "bandwidth and latency from every node's CPUs to every node's memory, hops inferred",
        StepKind::Document,
        words(&["mem", "matrix", "--json", "--quiet"]),
        10.0 * nodes * nodes,
    ));
    p.sizing.push(format!("mem matrix at its default size (4x the last-level cache per cell): about 10 s per node pair here, {} pairs", ctx.facts.nodes * ctx.facts.nodes));
    crate::studies_omp::runtime_steps(ctx, p);
    p.notes.extend(
        [ctx.facts.one_package(), ctx.facts.one_node()]
            .into_iter()
            .flatten(),
    );
    Ok(())
}

/// TPC-H Q1 and Q6, numa and naive layouts, over the boundary counts; lineitem
/// generated once into `inputs/` and shared by the four sweeps.
pub fn tpch_numa(ctx: &mut Ctx, p: &mut StudyPlan) -> Result<(), StudyError> {
    const REPEAT: usize = 3;
    let placements = [Strategy::CoresFirst];
    let threads = boundaries(ctx, &placements);
    let t = ctx.probe.time(&words(&[
        "tpch",
        "q1",
        "--sf",
        "0.1",
        "--threads",
        "1",
        "--repeat",
        "1",
        "--json",
    ]))?;
    let prep01 = (t.wall_secs - t.kernel_secs).max(0.0);
    // Scale factors with reference answers (tpch.json): every run verified.
    let sfs = [0.1, 1.0];
    let runs = REPS + WARMUP;
    let one_sweep = |sf: f64| {
        sweep_secs(
            &threads,
            ctx.facts.cores,
            runs,
            REPEAT as f64 * t.kernel_secs * sf / 0.1,
            RUN_OVERHEAD_SECS,
        )
    };
    let cost = |sf: f64| prep01 * sf / 0.1 + 4.0 * one_sweep(sf);
    let sf = largest_fitting(&sfs, BUDGET_SHARE * ctx.budget_secs, cost);
    p.sizing.push(format!(
        "probe: Q1 at SF 0.1 on 1 thread took {:.3} s, generating and checking lineitem {:.2} s",
        t.kernel_secs, prep01
    ));
    p.sizing.push(format!(
        "chosen SF {sf} (scale factors with reference answers: 0.1, 1): Q1 one-thread about {:.2} s, {REPEAT} query runs per run (the fastest counts); lineitem generated once in inputs/ for all four sweeps",
        t.kernel_secs * sf / 0.1
    ));
    for query in ["q1", "q6"] {
        for layout in ["numa", "naive"] {
            let name = format!("{query}-{layout}");
            let params = [
                ("query", query.to_string()),
                ("sf", sf.to_string()),
                ("layout", layout.to_string()),
                ("repeat", REPEAT.to_string()),
            ];
            let mut args = workload_sweep(&name, "tpch", &params, &threads, &placements);
            args.extend(words(&["--input-cache", "inputs"]));
            let what = format!(
                "TPC-H {} SF {sf}, layout {layout}, threads {}",
                query.to_uppercase(),
                thread_list(&threads)
            );
            p.steps.push(Step::scalescope(
                &name,
                &what,
                StepKind::Sweep,
                args,
                one_sweep(sf),
            ));
        }
    }
    if let Some(first) = p.steps.first_mut() {
        first.estimate_secs += prep01 * sf / 0.1;
    }
    p.notes.extend(
        [ctx.facts.one_package(), ctx.facts.one_node()]
            .into_iter()
            .flatten(),
    );
    Ok(())
}
