//! The tour (`scalescope` with no arguments, what `cargo run --release` runs): this
//! machine's topology and numbering traps, then short sweeps of the built-in
//! workloads (NAS EP, compute-bound; STREAM, bandwidth-bound; diamond counting on a
//! Kronecker graph, irregular) over the placements that actually differ here, one
//! HTML report, and the main findings.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Context;
use scalescope_place::{place, MemPolicy, PlaceRequest, Strategy, STRATEGY_NAMES};
use scalescope_results::plan::Plan;
use scalescope_results::store::{CommandSpec, MetricSpec, ResultsStore};
use scalescope_sweep::engine::{self, Clock, SweepSetup, SystemClock};
use scalescope_sweep::exec::ProcessExecutor;
use scalescope_topo::{NumberingReport, Source, Topology};

use super::sweep::{new_header, template_of, Bar};

/// Thread counts: every count on small machines, powers of two (and the maximum)
/// on large ones.
fn tour_threads(usable: usize) -> Vec<usize> {
    if usable <= 8 {
        (1..=usable).collect()
    } else {
        let mut v: Vec<usize> = std::iter::successors(Some(1), |t| Some(t * 2))
            .take_while(|t| *t < usable)
            .collect();
        v.push(usable);
        v
    }
}

/// Strategies whose CPU choices differ somewhere along `threads` (one per group,
/// in the order cores-first, compact, scatter, spread, smt-pairs).
fn distinct_placements(topo: &Topology, threads: &[usize]) -> Vec<Strategy> {
    let order = ["cores-first", "compact", "scatter", "spread", "smt-pairs"];
    debug_assert!(order.iter().all(|o| STRATEGY_NAMES.contains(o)));
    let mut seen: Vec<Vec<Vec<u32>>> = Vec::new();
    let mut out = Vec::new();
    for name in order {
        let strategy: Strategy = name.parse().expect("built-in strategy names parse");
        let choices: Option<Vec<Vec<u32>>> = threads
            .iter()
            .map(|&t| {
                place(topo, &PlaceRequest::new(strategy.clone(), t))
                    .ok()
                    .map(|p| p.first_cpus())
            })
            .collect();
        let Some(choices) = choices else { continue };
        if !seen.contains(&choices) {
            seen.push(choices);
            out.push(strategy);
        }
    }
    out
}

fn print_machine(topo: &Topology) {
    println!("scalescope tour: why does a parallel program stop scaling on this machine?\n");
    println!("Machine: {}", topo.summary());
    if let Some(model) = &topo.cpu_model {
        println!("CPU model: {model}");
    }
    let report = NumberingReport::of(topo);
    for f in &report.facts {
        println!("  - {f}");
    }
    for w in &report.warnings {
        println!("  ! warning: {w}");
    }
}

/// One short workload sweep; returns its results directory.
fn sweep_workload(
    topo: &Topology,
    dir: &Path,
    workload: &str,
    params: &[(&str, &str)],
    plan: Plan,
    interrupt: &Arc<AtomicBool>,
) -> anyhow::Result<(PathBuf, bool)> {
    let params: BTreeMap<String, String> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let w = scalescope_workloads::build(workload, &params, topo)?;
    let command = CommandSpec {
        kind: "workload".into(),
        argv: vec![],
        shell: false,
        workload: Some(workload.into()),
        params,
        env: vec![],
        metrics: vec![MetricSpec {
            name: w.primary_figure().into(),
            regex: None,
            higher_is_better: true,
        }],
    };
    let template = template_of(&command, Some(300.0), 2.0)?;
    let points = engine::prepare_points(topo, &plan.points())?;
    let header = new_header(command, plan, Some(300.0), topo);
    let out = dir.join(workload);
    let mut store = ResultsStore::create(&out, &header)?;
    let setup = SweepSetup {
        header: &header,
        template: &template,
        points: &points,
    };
    let mut bar = Bar::new(!std::io::stderr().is_terminal());
    let outcome = engine::run(
        &setup,
        &mut store,
        Vec::new(),
        &mut ProcessExecutor,
        &mut bar,
        interrupt,
        &SystemClock,
    )?;
    Ok((out, outcome.interrupted))
}

pub fn run() -> anyhow::Result<ExitCode> {
    let topo = Source::Live.load()?;
    print_machine(&topo);
    let threads = tour_threads(topo.usable_cpus().len());
    let placements = distinct_placements(&topo, &threads);
    let names: Vec<String> = placements.iter().map(|p| p.to_string()).collect();
    println!(
        "\nSweeping threads {:?} over the placements that differ here ({}), 3 runs each after a warm-up:",
        threads,
        names.join(", ")
    );
    let interrupt = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, interrupt.clone())
            .context("installing the Ctrl-C handler")?;
    }
    let dir = PathBuf::from(format!(
        "scalescope-results/tour-{}",
        SystemClock.unix_secs() as u64
    ));
    let plan = Plan {
        threads,
        placements,
        mems: vec![MemPolicy::FirstTouch],
        reps: 3,
        warmup: 1,
    };
    let mut results = Vec::new();
    for (workload, what, params) in [
        ("ep", "NAS EP class S (compute-bound)", vec![("class", "S")]),
        (
            "stream",
            "STREAM, 4x the last-level cache per array (bandwidth-bound)",
            vec![("ntimes", "4")],
        ),
        (
            "graph",
            "diamond counting on a Kronecker graph, scale 14 (irregular, memory-hungry)",
            vec![("graph", "kron:14"), ("pattern", "diamond")],
        ),
    ] {
        println!("  {what} ...");
        let (out, interrupted) =
            sweep_workload(&topo, &dir, workload, &params, plan.clone(), &interrupt)?;
        results.push(out.join("results.jsonl"));
        if interrupted {
            eprintln!("interrupted: finished runs are in {}", dir.display());
            return Ok(ExitCode::from(130));
        }
    }
    let sets = results
        .iter()
        .map(|p| {
            let (h, r, _) = scalescope_results::store::read_results(p)?;
            super::analyze::analysed(p.display().to_string(), h, r, None)
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let report = dir.join("report");
    super::analyze::write_report(&sets, &report)?;
    println!("\nMain findings:");
    for set in &sets {
        let name = set.header.command.workload.clone().unwrap_or_default();
        for f in set.analysis.findings.iter().take(4) {
            println!("  [{name}] {}", f.title);
            if let Some(e) = f.evidence.last() {
                println!("        {e}");
            }
        }
    }
    println!("\nReport: {}", report.join("index.html").display());
    println!("Next: `scalescope sweep -- ./your_program` to explain your own program's curve.");
    Ok(ExitCode::SUCCESS)
}
