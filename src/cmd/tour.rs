//! The tour (`scalescope` with no arguments, what `cargo run --release` runs): this
//! machine's topology and numbering traps, the library's tour sweeps, a prediction
//! for a larger synthetic machine calibrated on the first sweep, one report, and the
//! main findings.

use std::process::ExitCode;

use scalescope_session::run::Hooks;
use scalescope_session::tour;
use scalescope_topo::{NumberingReport, Source, Topology};

use crate::progress::Bar;

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

pub fn run() -> anyhow::Result<ExitCode> {
    let topo = Source::Live.load()?;
    print_machine(&topo);
    let plan = tour::plan(&topo);
    let names: Vec<String> = plan.placements.iter().map(|p| p.to_string()).collect();
    println!(
        "\nSweeping threads {} over the placements that differ here ({}), 3 runs each after a warm-up:",
        plan.threads.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(","),
        names.join(", ")
    );
    let interrupt = crate::shared::interrupt_flag()?;
    let dir = tour::out_dir();
    let mut sets = Vec::new();
    for w in &tour::WORKLOADS {
        println!("  {} ...", w.what);
        let mut bar = Bar::new(!crate::progress::may_draw());
        let hooks = Hooks {
            progress: &mut bar,
            interrupt: &interrupt,
        };
        let (set, interrupted) = tour::sweep(&topo, &plan, w, &dir, hooks)?;
        sets.push(set);
        if interrupted {
            eprintln!("interrupted: finished runs are in {}", dir.display());
            return Ok(ExitCode::from(130));
        }
    }
    let (said, sections) = tour::prediction(&topo, &sets);
    print!("{said}");
    let report = scalescope_files::OutDir::create(&dir)?.subdir("report")?;
    let index = scalescope_report::html::write_into(&sets, &sections, &report)?;
    print!("{}", tour::main_findings(&sets));
    println!("\nReport: {}", index.display());
    println!("Next: `scalescope sweep -- ./your_program` to explain your own program's curve.");
    Ok(ExitCode::SUCCESS)
}
