//! `scalescope topo` and `scalescope place`: the machine for people (a condensed
//! tree, the summary line, the distance matrix, the numbering report, what each
//! strategy would pick) or as JSON; and one placement on it, per thread and in every
//! tool's syntax.

use std::collections::BTreeMap;
use std::process::ExitCode;

use scalescope_place::{place as place_on, render, PlaceError};
use scalescope_topo::{CpuSet, NumberingReport, Topology, Virtualization};
use serde::Serialize;

use crate::cli::{PlaceArgs, TopoArgs};

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

pub fn topo(args: &TopoArgs) -> anyhow::Result<ExitCode> {
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

#[derive(Serialize)]
struct ThreadJson {
    thread: usize,
    cpus: CpuSet,
}

#[derive(Serialize)]
struct PlaceJson<'a> {
    kind: &'static str,
    schema_version: u32,
    strategy: String,
    granularity: String,
    threads: Vec<ThreadJson>,
    renderings: BTreeMap<&'a str, String>,
}

pub fn place(args: &PlaceArgs) -> anyhow::Result<ExitCode> {
    let topo = crate::shared::load_topology(&args.source)?;
    let req = args.request(&topo)?;
    let placement = place_on(&topo, &req).map_err(|e| match e {
        // The library names no flags; this is the command that has one.
        PlaceError::TooManyThreads { .. } => {
            anyhow::anyhow!("{e}; pass --oversubscribe to let threads share PUs")
        }
        e => e.into(),
    })?;
    if args.json {
        let doc = PlaceJson {
            kind: "scalescope.place",
            schema_version: crate::shared::JSON_SCHEMA_VERSION,
            strategy: placement.strategy.to_string(),
            granularity: placement.granularity.to_string(),
            threads: placement
                .threads
                .iter()
                .enumerate()
                .map(|(thread, cpus)| ThreadJson {
                    thread,
                    cpus: cpus.clone(),
                })
                .collect(),
            renderings: render::renderings(&placement, &topo),
        };
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!(
            "{}",
            scalescope_report::machine::placement_text(&topo, &placement)
        );
    }
    Ok(ExitCode::SUCCESS)
}
