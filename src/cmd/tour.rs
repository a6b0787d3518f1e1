//! The tour (`scalescope` with no arguments): this machine's topology, where its
//! numbering misleads, and the placements that actually differ here.

use std::process::ExitCode;

use scalescope_place::{place, PlaceRequest, Strategy, STRATEGY_NAMES};
use scalescope_topo::{NumberingReport, Source};

pub fn run() -> anyhow::Result<ExitCode> {
    let topo = Source::Live.load()?;
    println!("scalescope tour: why does a parallel program stop scaling on this machine?\n");
    println!("Machine: {}", topo.summary());
    if let Some(model) = &topo.cpu_model {
        println!("CPU model: {model}");
    }
    let report = NumberingReport::of(&topo);
    for f in &report.facts {
        println!("  - {f}");
    }
    for w in &report.warnings {
        println!("  ! warning: {w}");
    }
    let n = topo.usable_cpus().len();
    println!("\nPlacements for {n} threads (strategies that pick the same CPUs are grouped):");
    let mut seen: Vec<(Vec<String>, String)> = Vec::new();
    for name in STRATEGY_NAMES {
        let strategy: Strategy = name.parse().expect("built-in strategy names parse");
        let line = match place(&topo, &PlaceRequest::new(strategy, n)) {
            Ok(p) => p
                .threads
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(" "),
            Err(e) => format!("not possible here: {e}"),
        };
        match seen.iter_mut().find(|(_, l)| *l == line) {
            Some((names, _)) => names.push(name.to_string()),
            None => seen.push((vec![name.to_string()], line)),
        }
    }
    for (names, line) in &seen {
        println!("  {:<34} {line}", names.join(", "));
    }
    println!(
        "\nNext: `scalescope topo` for the full picture, `scalescope place --help` to pin threads."
    );
    Ok(ExitCode::SUCCESS)
}
