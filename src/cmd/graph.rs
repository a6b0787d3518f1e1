//! `scalescope graph count|bfs|pr|export`: a graph kernel built as the `graph`
//! workload and run through the shared trial loop (the sweep runs the same), then
//! printed; `export` writes the graph as an edge list or a `.csr` cache.

use std::process::ExitCode;

use anyhow::Context;
use scalescope_workloads::graph::workload::{build_graph, GraphCount, GraphKernel};
use scalescope_workloads::{execute_with, Inputs, Report};
use serde_json::{json, Value};

use crate::cli::{GraphCommand, GraphCountArgs, GraphExportArgs, PlacementArgs};
use crate::shared::{pinned_pool, verdict_exit, verdict_line};

pub fn run(cmd: &GraphCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        GraphCommand::Count(a) => count(a),
        GraphCommand::Bfs(a) => kernel(
            &Run {
                graph: &a.graph,
                place: &a.place,
                threads: a.threads,
                force: a.force,
                json: a.json,
                pr: None,
                inputs: a.inputs.inputs(),
            },
            GraphKernel::Bfs { source: a.source },
        ),
        GraphCommand::Pr(a) => kernel(
            &Run {
                graph: &a.graph,
                place: &a.place,
                threads: a.threads,
                force: a.force,
                json: a.json,
                pr: Some((a.sync.to_string(), a.batch)),
                inputs: a.inputs.inputs(),
            },
            GraphKernel::PageRank {
                sync: a.sync.clone(),
                batch: a.batch,
                tolerance: a.tolerance,
            },
        ),
        GraphCommand::Export(a) => export(a),
    }
}

/// What the kernels share: the graph, where the threads go, the output, the input
/// cache and verification policy, and PageRank's synchronisation and batch for its
/// text line.
struct Run<'a> {
    graph: &'a str,
    place: &'a PlacementArgs,
    threads: Option<usize>,
    force: bool,
    json: bool,
    pr: Option<(String, usize)>,
    inputs: Inputs,
}

/// Builds, runs and verifies the kernel; the report and the pool's thread count.
fn execute_on(r: &Run, kernel: GraphKernel) -> anyhow::Result<Report> {
    let working = crate::progress::working(&format!("graph kernel on {}", r.graph));
    let mut workload = GraphCount::new(r.graph, kernel)?.forced(r.force);
    let pool = pinned_pool(r.place, r.threads)?;
    let report = execute_with(&mut workload, &pool, &r.inputs)?;
    drop(working);
    Ok(report)
}

/// The JSON document: the workload's detail, the threads and the verdict.
fn document(report: &Report, extra: Value) -> Value {
    let mut doc = report.detail.clone();
    if let (Some(d), Some(extra)) = (doc.as_object_mut(), extra.as_object()) {
        d.extend(extra.clone());
        let kernel = d.get("kernel").and_then(|k| k.as_str()).unwrap_or("count");
        d.insert("kind".into(), json!(format!("scalescope.graph-{kernel}")));
        d.insert(
            "schema_version".into(),
            json!(crate::shared::JSON_SCHEMA_VERSION),
        );
        d.insert("threads".into(), json!(report.threads));
        d.insert("verified".into(), json!(report.verification.passed()));
        d.insert("verdict".into(), json!(report.verification.verdict()));
        d.insert("verification".into(), json!(report.verification.why()));
        d.insert("setup".into(), json!(report.setup));
    }
    doc
}

fn count(args: &GraphCountArgs) -> anyhow::Result<ExitCode> {
    let kernel = GraphKernel::Count {
        pattern: args.pattern,
        induced: args.induced,
    };
    let run = Run {
        graph: &args.graph,
        place: &args.place,
        threads: args.threads,
        force: args.force,
        json: args.json,
        pr: None,
        inputs: args.inputs.inputs(),
    };
    let r = execute_on(&run, kernel)?;
    let d = &r.detail;
    if args.json {
        let graph = json!({"source": args.graph, "vertices": d["vertices"], "edges": d["edges"], "bytes_per_edge": d["bytes_per_edge"]});
        println!(
            "{}",
            serde_json::to_string_pretty(&document(&r, json!({ "graph": graph })))?
        );
    } else {
        let kind = ["non-induced", "induced"][usize::from(args.induced)];
        println!(
            "{} ({kind}) in {}: {}\n  {} vertices, {} edges, {:.1} bytes/edge; counted in {:.4} s on {} threads (graph built in {:.4} s)",
            d["pattern"].as_str().unwrap_or("?"), args.graph, d["count"], d["vertices"], d["edges"],
            d["bytes_per_edge"].as_f64().unwrap_or(f64::NAN), r.seconds, r.threads,
            d["build_seconds"].as_f64().unwrap_or(f64::NAN)
        );
        crate::shared::print_verdict(&r, "  ");
    }
    Ok(verdict_exit(&r.verification))
}

fn kernel(args: &Run, kernel: GraphKernel) -> anyhow::Result<ExitCode> {
    let r = execute_on(args, kernel)?;
    if args.json {
        let extra = match r.detail["kernel"].as_str() {
            Some("pr") => {
                json!({"seconds_per_iteration": r.seconds / r.detail["iterations"].as_f64().unwrap_or(f64::NAN)})
            }
            _ => json!({}),
        };
        println!("{}", serde_json::to_string_pretty(&document(&r, extra))?);
    } else {
        print_kernel(args, &r);
    }
    Ok(verdict_exit(&r.verification))
}

fn print_kernel(args: &Run, r: &Report) {
    let d = &r.detail;
    if d["kernel"] == "bfs" {
        println!(
            "BFS from {} in {}: {} vertices reached, {} edges, {:.4} s on {} threads, {:.3e} TEPS",
            d["source"],
            args.graph,
            d["reached_vertices"],
            d["traversed_edges"],
            r.seconds,
            r.threads,
            d["teps"].as_f64().unwrap_or(f64::NAN)
        );
    } else if !d["iterations"].is_null() {
        let iterations = d["iterations"].as_f64().unwrap_or(f64::NAN);
        println!(
            "PageRank ({}, batch {}) in {}: {} iterations, {:.4} s ({:.4} s per iteration) on {} threads",
            args.pr.as_ref().map(|p| p.0.as_str()).unwrap_or("?"), args.pr.as_ref().map(|p| p.1).unwrap_or(0), args.graph, d["iterations"], r.seconds, r.seconds / iterations, r.threads
        );
        let (tx, a) = (
            d["transactions"].as_u64().unwrap_or(0),
            &d["aborts_by_cause"],
        );
        if tx > 0 {
            let total = d["aborts"].as_u64().unwrap_or(0);
            println!(
                "  RTM: {tx} transactions, {total} aborted ({:.1}%): {} conflict, {} capacity, {} explicit, {} other (aborted batches ran under the elided lock)",
                100.0 * total as f64 / tx as f64, a["conflict"], a["capacity"], a["explicit"], a["other"]
            );
        }
    }
    println!("  {}", verdict_line(&r.verification));
}

fn export(args: &GraphExportArgs) -> anyhow::Result<ExitCode> {
    use std::io::Write;
    let pool = pinned_pool(&PlacementArgs::default(), None)?;
    let g = build_graph(&args.graph, args.force, &pool)?;
    if args.out.extension().is_some_and(|e| e == "csr") {
        scalescope_workloads::graph::cache::save(&g, &args.out, &args.graph)?;
        println!(
            "{}: {} vertices, {} edges (binary CSR cache, format {})",
            args.out.display(),
            g.vertices(),
            g.edges(),
            scalescope_workloads::graph::cache::VERSION
        );
        return Ok(ExitCode::SUCCESS);
    }
    let writing = || format!("writing {}", args.out.display());
    let file = std::fs::File::create(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let mut w = std::io::BufWriter::new(file);
    for u in 0..g.vertices() as u32 {
        for &v in g.neighbors(u).iter().filter(|&&v| u < v) {
            writeln!(w, "{u} {v}").with_context(writing)?;
        }
    }
    w.flush().with_context(writing)?;
    println!(
        "{}: {} vertices, {} edges",
        args.out.display(),
        g.vertices(),
        g.edges()
    );
    Ok(ExitCode::SUCCESS)
}
