//! `scalescope place`: one placement, per thread and in every tool's syntax.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::Context;
use scalescope_place::{place, render, PlaceError, PlaceRequest, Placement, Restriction, Strategy};
use scalescope_topo::{CpuSet, Topology};
use serde::Serialize;

use crate::cli::PlaceArgs;

#[derive(Serialize)]
struct ThreadJson {
    thread: usize,
    cpus: CpuSet,
}

#[derive(Serialize)]
struct PlaceJson<'a> {
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
    let topo = super::load_topology(&args.source)?;
    let placement = place(&topo, &req).map_err(|e| match e {
        // The library names no flags; this is the command that has one.
        PlaceError::TooManyThreads { .. } => {
            anyhow::anyhow!("{e}; pass --oversubscribe to let threads share PUs")
        }
        e => e.into(),
    })?;
    if args.json {
        let doc = PlaceJson {
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
            renderings: render::renderings(&placement),
        };
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", render_text(&topo, &placement));
    }
    Ok(ExitCode::SUCCESS)
}

fn render_text(topo: &Topology, p: &Placement) -> String {
    let mut out = format!(
        "{} threads, strategy {}, granularity {} on {}\n\n",
        p.threads.len(),
        p.strategy,
        p.granularity,
        topo.summary()
    );
    let _ = writeln!(
        out,
        "{:>6}  {:<12} {:>5} {:>8} {:>5}",
        "thread", "cpus", "core", "package", "numa"
    );
    for (i, cpus) in p.threads.iter().enumerate() {
        let pu = cpus.first().and_then(|c| topo.pu(c));
        let field = |v: Option<usize>| v.map(|x| x.to_string()).unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "{i:>6}  {:<12} {:>5} {:>8} {:>5}",
            cpus.to_string(),
            field(pu.and_then(|p| p.core)),
            field(pu.and_then(|p| p.package)),
            field(pu.and_then(|p| p.numa_node).map(|n| n as usize)),
        );
    }
    out.push('\n');
    for (tool, text) in render::renderings(p) {
        if text.contains('\n') {
            let _ = writeln!(out, "{tool}:\n  {}", text.replace('\n', "\n  "));
        } else {
            let _ = writeln!(out, "{tool:<18} {text}");
        }
    }
    out
}
