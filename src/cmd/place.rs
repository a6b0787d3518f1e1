//! `scalescope place`: one placement, per thread and in every tool's syntax.

use std::collections::BTreeMap;
use std::process::ExitCode;

use anyhow::Context;
use scalescope_place::{place, render, PlaceError, PlaceRequest, Restriction, Strategy};
use scalescope_topo::CpuSet;
use serde::Serialize;

use crate::cli::PlaceArgs;

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

/// Turns the flags into a checked request (no I/O).
pub fn request_of(args: &PlaceArgs) -> anyhow::Result<PlaceRequest> {
    let strategy = match &args.cpus {
        Some(expr) => Strategy::Cpus(expr.clone()),
        None => args.strategy.parse()?,
    };
    let list = |flag: &str, v: &Option<String>| -> anyhow::Result<Option<Vec<u32>>> {
        v.as_ref()
            .map(|t| {
                CpuSet::parse_list(t)
                    .map(|s| s.iter().collect())
                    .with_context(|| format!("--{flag} `{t}`"))
            })
            .transpose()
    };
    if args.threads.is_none() && args.cpus.is_none() {
        anyhow::bail!("--threads N is required (or name CPUs with --cpus EXPR)");
    }
    Ok(PlaceRequest {
        strategy,
        threads: args.threads,
        granularity: args.granularity.parse()?,
        restriction: Restriction {
            numa_nodes: list("numa-nodes", &args.numa_nodes)?,
            packages: list("packages", &args.packages)?
                .map(|v| v.into_iter().map(|p| p as usize).collect()),
        },
        oversubscribe: args.oversubscribe,
    })
}

pub fn run(args: &PlaceArgs) -> anyhow::Result<ExitCode> {
    let req = request_of(args)?;
    let topo = crate::shared::load_topology(&args.source)?;
    let placement = place(&topo, &req).map_err(|e| match e {
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
