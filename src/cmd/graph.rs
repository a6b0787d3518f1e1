//! `scalescope graph count`: exact subgraph counts, checked by brute force where the
//! graph is small enough for it.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use scalescope_place::Strategy;
use scalescope_workloads::graph::count::{brute_force, count, Pattern};
use scalescope_workloads::graph::Graph;
use scalescope_workloads::Pool;

use crate::cli::{GraphCommand, GraphCountArgs, GraphExportArgs, GraphRunArgs, SyncArgs};

/// Brute force checks graphs up to this many vertices (C(64, 4) = 635,376 subsets).
const BRUTE_FORCE_MAX_VERTICES: usize = 64;

pub fn run(cmd: &GraphCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        GraphCommand::Count(args) => count_cmd(args),
        GraphCommand::Bfs(args) => bfs_cmd(args),
        GraphCommand::Pr(args) => pr_cmd(args),
        GraphCommand::Export(args) => export_cmd(args),
    }
}

/// The pinned pool and the graph the flags name.
fn setup(
    graph: &str,
    force: bool,
    threads: Option<usize>,
    placement: &str,
) -> anyhow::Result<(Pool, Graph)> {
    let strategy: Strategy = placement.parse()?;
    let pool = super::pinned_pool(&strategy, threads)?;
    let g = graph_of(graph, force, &pool)?;
    Ok((pool, g))
}

fn bfs_cmd(args: &GraphRunArgs) -> anyhow::Result<ExitCode> {
    let (pool, g) = setup(&args.graph, args.force, args.threads, &args.placement)?;
    let threads = pool.threads();
    if g.vertices() == 0 {
        bail!("--graph {}: the graph has no vertices", args.graph);
    }
    let source = match args.source {
        Some(s) if (s as usize) < g.vertices() => s,
        Some(s) => bail!(
            "--source {s}: the graph has vertices 0-{}",
            g.vertices() - 1
        ),
        None => (0..g.vertices() as u32)
            .max_by_key(|&v| g.degree(v))
            .unwrap_or(0),
    };
    let t = Instant::now();
    let parent = scalescope_workloads::graph::bfs::bfs(&g, source, &pool);
    let secs = t.elapsed().as_secs_f64();
    let edges = scalescope_workloads::graph::bfs::verify(&g, source, &parent)
        .map_err(|e| anyhow::anyhow!("BFS parent tree is wrong: {e}"))?;
    let reached = parent
        .iter()
        .filter(|&&p| p != scalescope_workloads::graph::bfs::NONE)
        .count();
    let teps = edges as f64 / secs;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "graph": args.graph, "source": source, "threads": threads, "seconds": secs, "teps": teps,
                "reached_vertices": reached, "traversed_edges": edges, "verified": true,
            }))?
        );
    } else {
        println!("BFS from {source} in {}: {reached} vertices reached, {edges} edges, {:.4} s on {threads} threads, {:.3e} TEPS; parent tree verified", args.graph, secs, teps);
    }
    Ok(ExitCode::SUCCESS)
}

fn pr_cmd(args: &GraphRunArgs) -> anyhow::Result<ExitCode> {
    use scalescope_workloads::graph::pagerank::{pagerank, verify, Sync};
    let sync: Sync = args
        .sync
        .parse()
        .map_err(|e: String| anyhow::anyhow!("--sync: {e}"))?;
    if !args.tolerance.is_finite() || args.tolerance <= 0.0 || args.batch == 0 {
        bail!("--tolerance must be positive and --batch at least 1");
    }
    let (pool, g) = setup(&args.graph, args.force, args.threads, &args.placement)?;
    let threads = pool.threads();
    let t = Instant::now();
    let ranks = pagerank(&g, &sync, args.batch, args.tolerance, &pool)
        .map_err(|e| anyhow::anyhow!("--sync htm: {e}"))?;
    let secs = t.elapsed().as_secs_f64();
    verify(&g, &ranks).map_err(|e| anyhow::anyhow!("PageRank scores are wrong: {e}"))?;
    let per_iter = secs / ranks.iterations as f64;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "graph": args.graph, "sync": args.sync, "batch": args.batch, "threads": threads, "iterations": ranks.iterations,
                "seconds": secs, "seconds_per_iteration": per_iter, "transactions": ranks.transactions, "aborts": ranks.aborts.total(), "aborts_by_cause": ranks.aborts, "verified": true,
            }))?
        );
    } else {
        println!(
            "PageRank ({}, batch {}) in {}: {} iterations, {:.4} s ({:.4} s per iteration) on {threads} threads; scores verified",
            args.sync, args.batch, args.graph, ranks.iterations, secs, per_iter
        );
        if ranks.transactions > 0 {
            let a = ranks.aborts;
            println!(
                "  RTM: {} transactions, {} aborted ({:.1}%): {} conflict, {} capacity, {} explicit, {} other (aborted batches ran under the elided lock)",
                ranks.transactions, a.total(), 100.0 * a.total() as f64 / ranks.transactions as f64, a.conflict, a.capacity, a.explicit, a.other
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The graph a `--graph` value names: a checked binary cache (`.csr`) loads as it
/// is; anything else is generated or read with its memory estimated first
/// (`workloads::graph::source`), then built.
fn graph_of(src: &str, force: bool, pool: &Pool) -> anyhow::Result<Graph> {
    if src.ends_with(".csr") {
        return Ok(scalescope_workloads::graph::cache::load(Path::new(src))?);
    }
    let (n, edges) = scalescope_workloads::graph::source::edges(src, force, pool)?;
    Ok(Graph::from_edges(n, &edges, pool))
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
    let pool = super::pinned_pool(&strategy, args.threads)?;
    let threads = pool.threads();
    let t0 = Instant::now();
    let g = graph_of(&args.graph, args.force, &pool)?;
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

/// `scalescope sync`: the mechanisms against the batch size, with their linear fits.
pub fn sync_cmd(args: &SyncArgs) -> anyhow::Result<ExitCode> {
    use scalescope_workloads::graph::pagerank::{rtm_available, Sync};
    use scalescope_workloads::graph::syncbench::{sweep, Op};
    let batches: Vec<usize> = args
        .batches
        .split(',')
        .map(|b| {
            b.trim()
                .parse::<usize>()
                .ok()
                .filter(|b| *b > 0)
                .with_context(|| {
                    format!(
                        "--batches `{}`: `{b}` is not a positive integer",
                        args.batches
                    )
                })
        })
        .collect::<anyhow::Result<_>>()?;
    if args.table == 0 || args.updates == 0 || args.stripes == 0 {
        bail!("--table, --updates and --stripes must be positive");
    }
    let pool = super::pinned_pool(&Strategy::CoresFirst, args.threads)?;
    let threads = pool.threads();
    let mechs = [
        Sync::CoarseLock,
        Sync::StripedLocks(args.stripes),
        Sync::Atomic,
        Sync::Htm,
    ];
    let htm_note = (!rtm_available()).then_some("htm: unavailable here: this CPU does not offer Intel RTM (TSX absent or disabled); not measured");
    let mut all = Vec::new();
    for op in [Op::MarkVisited, Op::Increment] {
        all.extend(
            sweep(&mechs, op, &batches, args.table, args.updates, &pool)
                .map_err(|e| anyhow::anyhow!(e))?,
        );
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"threads": threads, "table": args.table, "curves": all, "note": htm_note})
            )?
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("{threads} threads, {} slots (contention), {} updates per thread per point; T(N) = A*N + B per critical section", args.table, args.updates);
    for c in &all {
        let pts: Vec<String> = c
            .points
            .iter()
            .map(|p| format!("N={}: {:.1} ns/update", p.batch, p.ns_per_update))
            .collect();
        println!(
            "  {:?} {:<18} A = {:8.2} ns/update  B = {:8.2} ns  R² = {:.3}  best batch {}",
            c.op, c.sync, c.a_ns, c.b_ns, c.r_squared, c.best_batch
        );
        println!("      {}", pts.join("  "));
    }
    if let Some(n) = htm_note {
        println!("{n}");
    }
    Ok(ExitCode::SUCCESS)
}

fn export_cmd(args: &GraphExportArgs) -> anyhow::Result<ExitCode> {
    use std::io::Write;
    let (_pool, g) = setup(&args.graph, args.force, None, "cores-first")?;
    if args.out.extension().is_some_and(|e| e == "csr") {
        scalescope_workloads::graph::cache::save(&g, &args.out)?;
        println!(
            "{}: {} vertices, {} edges (binary CSR cache, format {})",
            args.out.display(),
            g.vertices(),
            g.edges(),
            scalescope_workloads::graph::cache::VERSION
        );
        return Ok(ExitCode::SUCCESS);
    }
    let file = std::fs::File::create(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let mut w = std::io::BufWriter::new(file);
    for u in 0..g.vertices() as u32 {
        for &v in g.neighbors(u).iter().filter(|&&v| u < v) {
            writeln!(w, "{u} {v}").with_context(|| format!("writing {}", args.out.display()))?;
        }
    }
    w.flush()
        .with_context(|| format!("writing {}", args.out.display()))?;
    println!(
        "{}: {} vertices, {} edges",
        args.out.display(),
        g.vertices(),
        g.edges()
    );
    Ok(ExitCode::SUCCESS)
}
