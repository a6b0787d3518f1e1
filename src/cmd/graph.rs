//! `scalescope graph count`: exact subgraph counts, checked by brute force where the
//! graph is small enough for it.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use scalescope_place::{place, PlaceRequest, Strategy};
use scalescope_topo::Source;
use scalescope_workloads::graph::count::{brute_force, count, Pattern};
use scalescope_workloads::graph::gen::{generate, Kind};
use scalescope_workloads::graph::{load::load, Graph};
use scalescope_workloads::Pool;

use crate::cli::{GraphCommand, GraphCountArgs};

/// Brute force checks graphs up to this many vertices (C(64, 4) = 635,376 subsets).
const BRUTE_FORCE_MAX_VERTICES: usize = 64;

pub fn run(cmd: &GraphCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        GraphCommand::Count(args) => count_cmd(args),
    }
}

/// `kron:SCALE`, `uniform:SCALE` or a file.
fn edges_of(src: &str, pool: &Pool) -> anyhow::Result<(usize, Vec<(u32, u32)>)> {
    let generated = |kind: Kind, scale: &str| -> anyhow::Result<(usize, Vec<(u32, u32)>)> {
        let s: u32 = scale
            .parse()
            .ok()
            .filter(|s| (1..=30).contains(s))
            .with_context(|| format!("--graph `{src}`: the scale must be 1-30"))?;
        Ok(generate(kind, s, pool))
    };
    if let Some(s) = src.strip_prefix("kron:") {
        generated(Kind::Kronecker, s)
    } else if let Some(s) = src.strip_prefix("uniform:") {
        generated(Kind::Uniform, s)
    } else {
        Ok(load(Path::new(src))?)
    }
}

fn count_cmd(args: &GraphCountArgs) -> anyhow::Result<ExitCode> {
    let pattern: Pattern = args
        .pattern
        .parse()
        .map_err(|e: String| anyhow::anyhow!("--pattern: {e}"))?;
    if args.induced && matches!(pattern, Pattern::Triangle | Pattern::K4) {
        bail!(
            "--induced changes only c4 and diamond (triangles and 4-cliques are induced already)"
        );
    }
    let strategy: Strategy = args.placement.parse()?;
    let topo = Source::Live.load()?;
    let threads = args.threads.unwrap_or_else(|| topo.usable_cpus().len());
    let placement = place(&topo, &PlaceRequest::new(strategy, threads))?;
    let pool = Pool::new(&placement.threads, None)?;
    let t0 = Instant::now();
    let (n, edges) = edges_of(&args.graph, &pool)?;
    let g = Graph::from_edges(n, &edges, &pool);
    let build_secs = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let c = count(&g, pattern, args.induced, &pool);
    let secs = t1.elapsed().as_secs_f64();
    let verified = (g.vertices() <= BRUTE_FORCE_MAX_VERTICES)
        .then(|| brute_force(&g, pattern, args.induced) == c);
    let kind = if args.induced {
        "induced"
    } else {
        "non-induced"
    };
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "pattern": pattern,
                "induced": args.induced,
                "graph": {"source": args.graph, "vertices": g.vertices(), "edges": g.edges(), "bytes_per_edge": g.bytes_per_edge()},
                "threads": threads,
                "count": c,
                "seconds": secs,
                "build_seconds": build_secs,
                "verified": verified,
            }))?
        );
    } else {
        println!(
            "{} ({kind}) in {}: {c}\n  {} vertices, {} edges, {:.1} bytes/edge; counted in {:.4} s on {threads} threads (graph built in {:.4} s)",
            args.pattern,
            args.graph,
            g.vertices(),
            g.edges(),
            g.bytes_per_edge(),
            secs,
            build_secs
        );
        match verified {
            Some(true) => println!("  verified by brute force over every vertex subset"),
            Some(false) => {}
            None => println!("  no verifier at this size (brute force stops at {BRUTE_FORCE_MAX_VERTICES} vertices)"),
        }
    }
    if verified == Some(false) {
        bail!("{} count {c} disagrees with brute force", args.pattern);
    }
    Ok(ExitCode::SUCCESS)
}
