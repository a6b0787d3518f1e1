//! `scalescope topo`: the machine for people (a condensed tree, the summary line, the
//! distance matrix, the numbering report, what each strategy would pick) or as JSON.

use std::process::ExitCode;

use scalescope_topo::{NumberingReport, Topology, Virtualization};
use serde::Serialize;

use crate::cli::TopoArgs;

/// The `topo --json` document: the model plus what scalescope concludes from it.
#[derive(Serialize)]
struct TopoJson<'a> {
    #[serde(flatten)]
    topology: &'a Topology,
    summary: String,
    numbering: NumberingReport,
    /// Null where the source cannot tell (hwloc XML, synthetic).
    virtualization: Option<Virtualization>,
}

pub fn run(args: &TopoArgs) -> anyhow::Result<ExitCode> {
    let topo = crate::shared::load_topology(&args.source)?;
    let virtualization = crate::shared::source_of(&args.source).virtualization();
    if args.json {
        let doc = TopoJson {
            topology: &topo,
            summary: topo.summary(),
            numbering: NumberingReport::of(&topo),
            virtualization,
        };
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", scalescope_report::machine::topology_text(&topo));
        if let Some(v) = virtualization {
            println!("\nVirtualization: {}", v.describe());
        }
    }
    Ok(ExitCode::SUCCESS)
}
